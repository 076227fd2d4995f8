#include "persist/rdb_loader.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <future>
#include <thread>

#include "persist/crc64.h"
#include "persist/rdb_format.h"
#include "persist/value_reader.h"

namespace kv::persist {
namespace {

// A replica's keepalive newlines to its primary come from the progress callback, called as the
// load starts, then every RdbLoadOptions::progress_bytes (loading-process-events-interval-bytes)
// or 128 records, whichever comes first: slow keys, as under key-load-delay, must not starve
// the newlines.
constexpr int kProgressRecords = 128;
constexpr int kMaxVersion = 11;

// Reads a stream with a ValueReader, keeping the checksum of what it consumed when the source
// cannot be checksummed in one piece.
class Loader {
 public:
  // `crc_src` (optional) is `src` itself when it is a CrcSource.
  Loader(Source& src, CrcSource* crc_src, store::Keyspace& ks, const RdbLoadOptions& opts,
         RdbLoadResult* res)
      : src_(src), crc_src_(crc_src), ks_(ks), opts_(opts), res_(res),
        reader_(src, ks.limits()) {}

  Status Run();

 private:
  Status ReadHeader();
  Status ReadBody();
  Status ReadKey(uint8_t type, int64_t expire_ms, int64_t idle, int freq);
  Status ReadChecksum();
  // Inserts the oldest pending key into the keyspace; all of them, in order.
  Status InsertOldest();
  Status InsertPending();
  Status Fail(const Status& st, uint64_t at) const;

  Source& src_;
  CrcSource* crc_src_;
  store::Keyspace& ks_;
  const RdbLoadOptions& opts_;
  RdbLoadResult* res_;
  ValueReader reader_;
  int db_ = 0;
  std::string key_;       // key being read, for error messages
  uint64_t key_at_ = 0;   // its offset
  uint64_t next_progress_ = 0;
  int records_since_progress_ = 0;
  std::string scratch_;
  // Keys go in kDepth behind: a key read waits here, with its value built, while the next
  // kDepth keys are read. Its bucket is prefetched when its key is read, the bucket's first entry
  // kDepth / 2 keys later, and by the insert both are in the cache: the two dependent cache
  // misses of an insert into a large table overlap reading and building the values of others.
  static constexpr size_t kDepth = 8;
  struct Pending {
    int db = 0;
    uint64_t at = 0;  // where the key starts, for errors
    std::string key;
    store::Value value;
    int64_t expire_ms = -1, idle = -1;
    int freq = -1;
  };
  std::array<Pending, kDepth> pending_;  // a ring: the oldest at pending_head_
  size_t pending_head_ = 0, pending_count_ = 0;
  Pending& PendingAt(size_t i) { return pending_[(pending_head_ + i) % kDepth]; }
};

Status Loader::Fail(const Status& st, uint64_t at) const {
  // Redis' words for it, which scripts and tools look for in the log.
  std::string msg = "Internal error in RDB reading offset " + std::to_string(src_.offset());
  if (!key_.empty()) {
    msg += " (reading key '" + key_.substr(0, 64) + "' of db " + std::to_string(db_) +
           ", which starts at offset " + std::to_string(at) + ")";
  }
  return Status(st.code() == Code::kOk ? Code::kCorruption : st.code(),
                msg + " -> " + st.message());
}

Status Loader::ReadHeader() {
  KV_TRY_ASSIGN(magic, src_.Read(9));
  if (magic.substr(0, 5) != "REDIS") return Status::Corruption("wrong signature (not an RDB file)");
  int version = 0;
  for (char c : magic.substr(5)) {
    if (c < '0' || c > '9') return Status::Corruption("malformed RDB version");
    version = version * 10 + (c - '0');
  }
  if (version < 1 || version > kMaxVersion) {
    return Status::Corruption("can't handle RDB format version " + std::to_string(version));
  }
  res_->version = version;
  return Status::Ok();
}

Status Loader::ReadKey(uint8_t type, int64_t expire_ms, int64_t idle, int freq) {
  key_at_ = src_.offset() - 1;
  KV_TRY_ASSIGN(k, reader_.ReadString(scratch_));
  key_.assign(k);
  if (opts_.skim) {
    KV_TRY(reader_.SkipObject(type));
    res_->keys_loaded++;
    return Status::Ok();
  }
  ks_.db(db_).table().PrefetchBucket(key_);
  if (pending_count_ >= kDepth / 2) {
    const Pending& p = PendingAt(pending_count_ - kDepth / 2);
    ks_.db(p.db).table().PrefetchChain(p.key);
  }
  bool skipped = false;
  std::string why;
  KV_TRY_ASSIGN(value, reader_.ReadObject(type, &skipped, &why));
  if (skipped) {
    res_->module_values_skipped++;
    if (opts_.warn) opts_.warn("skipping key '" + key_ + "': " + why);
    return Status::Ok();
  }
  // Redis skips empty collections but keeps an empty stream (XDEL can leave one, with its
  // groups and counters).
  if (!value.is_string() && value.type() != store::ObjType::kStream &&
      value.object()->Size() == 0) {
    res_->empty_skipped++;
    if (opts_.warn) opts_.warn("skipping empty key: " + key_);
    return Status::Ok();
  }
  if (opts_.drop_expired && expire_ms >= 0 && expire_ms <= opts_.now_ms) {
    res_->expired_skipped++;
    if (opts_.on_expired) opts_.on_expired(db_, key_);
    return Status::Ok();
  }
  if (pending_count_ == kDepth) {
    // The error names the key it is about (an earlier one), not the one being read.
    if (Status st = InsertOldest(); !st.ok()) {
      key_.clear();
      return st;
    }
  }
  Pending& p = PendingAt(pending_count_++);
  p.db = db_;
  p.at = key_at_;
  p.key.assign(key_);
  p.value = std::move(value);
  p.expire_ms = expire_ms;
  p.idle = idle;
  p.freq = freq;
  return Status::Ok();
}

Status Loader::InsertOldest() {
  Pending& p = PendingAt(0);
  pending_head_ = (pending_head_ + 1) % kDepth;
  pending_count_--;
  store::Db& db = ks_.db(p.db);
  if (opts_.replace_existing) db.Delete(p.key);
  store::Entry* e = db.AddIfAbsent(p.key, std::move(p.value));
  if (!e) {
    return Status::Corruption("duplicated key '" + p.key + "' in db " + std::to_string(p.db) +
                              " (the key at offset " + std::to_string(p.at) + ")");
  }
  ks_.InitAccess(e);
  if (p.expire_ms >= 0) db.SetExpire(e, p.expire_ms);
  if (p.idle >= 0) ks_.SetIdleSeconds(e, p.idle);
  if (p.freq >= 0) ks_.SetLfuFrequency(e, p.freq);
  res_->keys_loaded++;
  return Status::Ok();
}

Status Loader::InsertPending() {
  while (pending_count_ > 0) KV_TRY(InsertOldest());
  return Status::Ok();
}

Status Loader::ReadBody() {
  int64_t expire_ms = -1, idle = -1;
  int freq = -1;
  while (true) {
    if (opts_.progress &&
        (src_.offset() >= next_progress_ || ++records_since_progress_ >= kProgressRecords)) {
      opts_.progress(src_.offset());
      next_progress_ = src_.offset() + opts_.progress_bytes;
      records_since_progress_ = 0;
      if (opts_.stop && opts_.stop()) return Status(Code::kClosed, "loading stopped");
    }
    key_.clear();
    uint64_t at = src_.offset();
    auto op_r = reader_.ReadByte();
    if (!op_r.ok()) return Fail(op_r.status(), at);
    uint8_t op = *op_r;
    Status st;
    switch (op) {
      case kOpEof:
        st = InsertPending();
        return st.ok() ? st : Fail(st, at);
      case kOpExpireTime: {
        auto v = src_.Read(4);
        if (!v.ok()) return Fail(v.status(), at);
        int32_t s;
        memcpy(&s, v->data(), 4);
        expire_ms = static_cast<int64_t>(s) * 1000;
        continue;
      }
      case kOpExpireTimeMs: {
        auto v = src_.Read(8);
        if (!v.ok()) return Fail(v.status(), at);
        memcpy(&expire_ms, v->data(), 8);
        continue;
      }
      case kOpIdle: {
        auto v = reader_.ReadLen();
        if (!v.ok()) return Fail(v.status(), at);
        idle = static_cast<int64_t>(std::min<uint64_t>(*v, INT64_MAX));
        continue;
      }
      case kOpFreq: {
        auto v = reader_.ReadByte();
        if (!v.ok()) return Fail(v.status(), at);
        freq = *v;
        continue;
      }
      case kOpSelectDb: {
        auto v = reader_.ReadLen();
        if (!v.ok()) return Fail(v.status(), at);
        if (*v >= static_cast<uint64_t>(ks_.num_dbs())) {
          return Fail(Status::Corruption("the file has a db " + std::to_string(*v) +
                                         " but kvstore is configured with " +
                                         std::to_string(ks_.num_dbs()) + " databases"),
                      at);
        }
        db_ = static_cast<int>(*v);
        continue;
      }
      case kOpResizeDb: {
        auto a = reader_.ReadLen();
        if (!a.ok()) return Fail(a.status(), at);
        auto b = reader_.ReadLen();
        if (!b.ok()) return Fail(b.status(), at);
        // Size the tables up front (no rehashing during the load), within what the data can
        // hold: a key takes at least 3 bytes, so a corrupt count cannot allocate much.
        uint64_t cap = std::min<uint64_t>(src_.remaining() / 3, uint64_t{1} << 28);
        if (!opts_.skim) ks_.db(db_).Reserve(std::min(*a, cap), std::min(*b, cap));
        continue;
      }
      case kOpAux: {
        std::string name;
        auto n = reader_.ReadString(scratch_);
        if (!n.ok()) return Fail(n.status(), at);
        name.assign(*n);
        auto v = reader_.ReadString(scratch_);
        if (!v.ok()) return Fail(v.status(), at);
        res_->aux[name] = std::string(*v);
        continue;
      }
      case kOpModuleAux: {
        auto id = reader_.ReadLen();
        if (!id.ok()) return Fail(id.status(), at);
        auto when_op = reader_.ReadLen();
        if (!when_op.ok()) return Fail(when_op.status(), at);
        auto when = reader_.ReadLen();
        if (!when.ok()) return Fail(when.status(), at);
        st = reader_.SkipModuleData();
        if (!st.ok()) return Fail(st, at);
        if (opts_.warn) opts_.warn("skipping module auxiliary data (no modules in kvstore)");
        continue;
      }
      case kOpFunction2: {
        auto code = reader_.ReadString(scratch_);
        if (!code.ok()) return Fail(code.status(), at);
        res_->functions.emplace_back(*code);
        continue;
      }
      case kOpFunctionPreGa:
        return Fail(Status::Corruption("pre-release function format not supported"), at);
      default:
        st = ReadKey(op, expire_ms, idle, freq);
        if (!st.ok()) return Fail(st, key_at_);
        if (opts_.key_load_delay_us != 0) DebugKeyDelay(opts_.key_load_delay_us);
        expire_ms = idle = -1;
        freq = -1;
    }
  }
}

Status Loader::Run() {
  Status st = ReadHeader();
  if (!st.ok()) return Fail(st, 0);
  // A source in memory is checksummed in parallel with parsing; the trailer is the last 8
  // bytes of the data when the file is well formed (checked once EOF is reached).
  std::string_view whole = src_.whole();
  bool parallel = opts_.verify_checksum && res_->version >= 5 && whole.size() >= 9 + 8;
  std::future<uint64_t> crc;
  if (parallel) {
    crc = std::async(std::launch::async,
                     [whole] { return Crc64(0, whole.data(), whole.size() - 8); });
  }
  st = ReadBody();
  std::optional<uint64_t> from_src = parallel || crc_src_ ? std::nullopt : src_.CrcSoFar();
  uint64_t computed = parallel ? crc.get() : crc_src_ ? crc_src_->crc() : from_src.value_or(0);
  if (!st.ok()) return st;
  bool verify = opts_.verify_checksum && (parallel || crc_src_ || from_src);
  if (res_->version >= 5) {
    uint64_t at = src_.offset();
    auto t = src_.Read(8);
    if (!t.ok()) return Fail(t.status(), at);
    uint64_t expected;
    memcpy(&expected, t->data(), 8);
    if (parallel && src_.offset() != whole.size()) {
      if (!opts_.trailing_data) {
        return Fail(Status::Corruption("trailing bytes after the checksum"), at);
      }
      // The parallel checksum ran to the end of the data, past the RDB: again, over the RDB.
      computed = Crc64(0, whole.data(), at);
    }
    if (verify && expected != 0 && expected != computed) {
      char msg[128];
      snprintf(msg, sizeof(msg),
               "RDB CRC error: wrong RDB checksum expected: (%016llx) but got (%016llx)",
               static_cast<unsigned long long>(computed),
               static_cast<unsigned long long>(expected));
      return Fail(Status::Corruption(msg), at);
    }
  }
  res_->bytes = src_.offset();
  return Status::Ok();
}

}  // namespace

Status LoadRdb(Source& src, store::Keyspace& ks, const RdbLoadOptions& opts,
               RdbLoadResult* result) {
  if (!src.whole().empty() || !opts.verify_checksum || src.CrcSoFar()) {
    Loader loader(src, nullptr, ks, opts, result);
    return loader.Run();
  }
  CrcSource crc_src(src);
  Loader loader(crc_src, &crc_src, ks, opts, result);
  return loader.Run();
}

}  // namespace kv::persist
