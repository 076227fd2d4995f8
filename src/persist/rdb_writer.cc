#include "persist/rdb_writer.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "common/lzf.h"
#include "common/strutil.h"
#include "persist/blob_encodings.h"
#include "persist/crc64.h"
#include "persist/listpack.h"
#include "persist/rdb_format.h"
#include "store/hash_type.h"
#include "store/list_type.h"
#include "store/set_type.h"
#include "store/stream_type.h"
#include "store/zset_type.h"

namespace kv::persist {
namespace {

constexpr size_t kBufferSize = 1 << 20;
// In place, the sink gets the bytes in steps of this size (its reader starts on them sooner).
constexpr size_t kCommitEvery = 256 << 10;
constexpr uint64_t kProgressEvery = 8 << 20;
constexpr uint32_t kMaxSkipStretch = 256;

// Bytes a quicklist node may hold for list-max-listpack-size `fill` (Redis' optimization_level
// for negative values, its 8 KiB safety limit for element counts).
size_t NodeByteLimit(int64_t fill) {
  if (fill < 0) {
    int64_t level = -fill - 1;
    if (level > 4) level = 4;
    return size_t{4096} << level;
  }
  return 8192;
}

}  // namespace

RdbWriter::RdbWriter(Sink& sink, RdbWriteOptions opts) : sink_(sink), opts_(std::move(opts)) {
  next_progress_ = kProgressEvery;
}

Status RdbWriter::Flush() {
  if (used_ == 0 || !status_.ok()) return status_;
  if (opts_.checksum) crc_ = Crc64(crc_, win_, used_);
  status_ = in_place_ ? sink_.Commit(used_) : sink_.Write(win_, used_);
  bytes_ += used_;
  used_ = 0;
  if (in_place_) {
    win_ = nullptr;  // committed: the window is the sink's again
    win_size_ = 0;
  }
  if (opts_.progress && bytes_ >= next_progress_) {
    opts_.progress(bytes_, keys_);
    next_progress_ = bytes_ + kProgressEvery;
  }
  return status_;
}

Status RdbWriter::FlushIfFull() {
  // A failed sink stops the walk at once (no window is open to fill any more).
  if (!status_.ok()) return status_;
  return used_ >= (in_place_ ? kCommitEvery : kBufferSize) ? Flush() : Status::Ok();
}

bool RdbWriter::NextWindow() {
  if (!Flush().ok()) return false;
  if (in_place_) {
    auto w = sink_.Window(kBufferSize);
    if (!w.ok()) {
      status_ = w.status();
      return false;
    }
    if (!w->empty()) {
      win_ = w->data();
      win_size_ = w->size();
      return true;
    }
    in_place_ = false;  // the sink has no windows: buffer for it
  }
  if (!own_) own_.reset(new uint8_t[kBufferSize]);  // uninitialized: it is written before use
  win_ = own_.get();
  win_size_ = kBufferSize;
  return true;
}

void RdbWriter::Put(const void* p, size_t n) {
  const auto* b = static_cast<const uint8_t*>(p);
  if (n == 0) return;  // (no window may be open yet)
  if (n <= win_size_ - used_) {
    memcpy(win_ + used_, b, n);
    used_ += n;
    return;
  }
  // Large strings bypass the buffer: flush what is there, then write them through.
  if (!in_place_ && n >= kBufferSize) {
    // A failure is kept in status_ and reported by the next Flush.
    if (!Flush().ok()) return;
    if (opts_.checksum) crc_ = Crc64(crc_, b, n);
    status_ = sink_.Write(b, n);
    bytes_ += n;
    return;
  }
  while (n > 0) {
    if (used_ == win_size_ && !NextWindow()) return;
    size_t k = std::min(n, win_size_ - used_);
    memcpy(win_ + used_, b, k);
    used_ += k;
    b += k;
    n -= k;
  }
}

void RdbWriter::PutLen(uint64_t len) {
  uint8_t b[9];
  if (len < (1 << 6)) {
    b[0] = static_cast<uint8_t>(len);
    Put(b, 1);
  } else if (len < (1 << 14)) {
    b[0] = static_cast<uint8_t>((len >> 8) | (kLen14Bit << 6));
    b[1] = static_cast<uint8_t>(len & 0xff);
    Put(b, 2);
  } else if (len <= UINT32_MAX) {
    b[0] = kLen32Bit;
    for (int i = 0; i < 4; i++) b[1 + i] = static_cast<uint8_t>(len >> (24 - 8 * i));
    Put(b, 5);
  } else {
    b[0] = kLen64Bit;
    for (int i = 0; i < 8; i++) b[1 + i] = static_cast<uint8_t>(len >> (56 - 8 * i));
    Put(b, 9);
  }
}

void RdbWriter::PutInt(int64_t v) {
  uint8_t b[5];
  if (v >= INT8_MIN && v <= INT8_MAX) {
    b[0] = (kLenEncoded << 6) | kEncInt8;
    b[1] = static_cast<uint8_t>(v);
    Put(b, 2);
  } else if (v >= INT16_MIN && v <= INT16_MAX) {
    b[0] = (kLenEncoded << 6) | kEncInt16;
    for (int i = 0; i < 2; i++) b[1 + i] = static_cast<uint8_t>(v >> (8 * i));
    Put(b, 3);
  } else if (v >= INT32_MIN && v <= INT32_MAX) {
    b[0] = (kLenEncoded << 6) | kEncInt32;
    for (int i = 0; i < 4; i++) b[1 + i] = static_cast<uint8_t>(v >> (8 * i));
    Put(b, 5);
  } else {
    char num[24];
    int n = snprintf(num, sizeof(num), "%lld", static_cast<long long>(v));
    PutLen(static_cast<uint64_t>(n));
    Put(num, static_cast<size_t>(n));
  }
}

bool RdbWriter::TryCompress(std::string_view s) {
  if (skip_compress_ > 0) {
    skip_compress_--;
    return false;
  }
  scratch_.resize(s.size());
  size_t clen = LzfCompress(s.data(), s.size(), scratch_.data(), s.size() - 4);
  if (clen == 0) {
    skip_stretch_ = skip_stretch_ == 0 ? 1 : std::min(skip_stretch_ * 2, kMaxSkipStretch);
    skip_compress_ = skip_stretch_;
    return false;
  }
  skip_stretch_ = 0;
  PutByte((kLenEncoded << 6) | kEncLzf);
  PutLen(clen);
  PutLen(s.size());
  Put(scratch_.data(), clen);
  return true;
}

void RdbWriter::PutString(std::string_view s) {
  // Short canonical integers take the integer encodings, as Redis' rdbSaveRawString does.
  if (s.size() <= 11 && !s.empty()) {
    if (auto v = ParseInt64(s); v && *v >= INT32_MIN && *v <= INT32_MAX) return PutInt(*v);
  }
  if (opts_.compression && s.size() > 20 && TryCompress(s)) return;
  PutLen(s.size());
  Put(s.data(), s.size());
}

void RdbWriter::PutList(const store::Collection& c) {
  // One listpack per run of packed elements, cut at the node limits list-max-listpack-size
  // gives; each element of a plain node (a large one, see store::ListPackedThreshold) as a
  // PLAIN node holding its raw bytes, as Redis saves it.
  const auto& list = static_cast<const store::ListValue&>(c);
  int64_t fill = opts_.limits.list_max_listpack_size;
  size_t max_bytes = NodeByteLimit(fill);
  size_t max_count = fill > 0 ? static_cast<size_t>(fill) : SIZE_MAX;
  struct Node {
    bool plain;
    std::string bytes;  // the listpack, or the plain node's element
  };
  std::vector<Node> nodes;
  ListpackBuilder lp;
  auto cut = [&] {
    if (lp.count() == 0) return;
    nodes.push_back({false, std::string(lp.Finish())});
    lp.Clear();
  };
  list.ForEachWithForm([&](std::string_view elem, bool plain) {
    if (plain) {
      cut();
      nodes.push_back({true, std::string(elem)});
      return;
    }
    if (lp.count() >= max_count || lp.bytes() + elem.size() + 11 > max_bytes) cut();
    lp.Add(elem);
  });
  cut();
  // A list made under list-compress-depth keeps its inner nodes compressed, and Redis saves
  // such a node as the node's own LZF blob (rdbSaveLzfBlob), whatever rdbcompression says.
  size_t depth = list.compress_depth();
  PutLen(nodes.size());
  for (size_t i = 0; i < nodes.size(); i++) {
    PutLen(nodes[i].plain ? kQuicklistPlain : kQuicklistPacked);
    bool inner = depth > 0 && i >= depth && i + depth < nodes.size();
    if (!inner || !PutCompressedNode(nodes[i].bytes)) PutString(nodes[i].bytes);
  }
}

bool RdbWriter::PutCompressedNode(std::string_view lp) {
  // Redis' quicklist thresholds (MIN_COMPRESS_BYTES, MIN_COMPRESS_IMPROVE): a node it would not
  // have kept compressed is saved as a plain string.
  constexpr size_t kMinBytes = 48, kMinImprove = 8;
  if (lp.size() < kMinBytes) return false;
  scratch_.resize(lp.size());
  size_t clen = LzfCompress(lp.data(), lp.size(), scratch_.data(), lp.size());
  if (clen == 0 || clen + kMinImprove >= lp.size()) return false;
  PutByte((kLenEncoded << 6) | kEncLzf);
  PutLen(clen);
  PutLen(lp.size());
  Put(scratch_.data(), clen);
  return true;
}

void RdbWriter::PutSet(const store::Collection& c) {
  const auto& set = static_cast<const store::SetValue&>(c);
  if (set.is_intset()) {
    std::vector<int64_t> members;
    members.reserve(set.Size());
    set.ForEach([&](std::string_view m, std::string_view) { members.push_back(*ParseInt64(m)); });
    PutString(BuildIntset(members.size(), [&](size_t i) { return members[i]; }));
    return;
  }
  PutLen(set.Size());
  set.ForEach([&](std::string_view m, std::string_view) { PutString(m); });
}

void RdbWriter::PutZSet(const store::Collection& c) {
  const auto& z = static_cast<const store::ZSetValue&>(c);
  if (z.is_listpack()) {
    ListpackBuilder lp;
    z.Visit(0, false, [&](std::string_view m, double score) {
      lp.Add(m);
      lp.Add(DoubleToString(score));
      return true;
    });
    PutString(lp.Finish());
    return;
  }
  // Tail to head, as Redis writes it (its loader then inserts at the head in O(1)).
  PutLen(z.Size());
  if (z.Size() == 0) return;
  z.Visit(z.Size() - 1, true, [&](std::string_view m, double score) {
    PutString(m);
    Put(&score, 8);  // little-endian hosts
    return true;
  });
}

void RdbWriter::PutHash(const store::Collection& c) {
  const auto& h = static_cast<const store::HashValue&>(c);
  if (h.is_listpack()) {
    ListpackBuilder lp;
    h.ForEach([&](std::string_view f, std::string_view v) {
      lp.Add(f);
      lp.Add(v);
    });
    PutString(lp.Finish());
    return;
  }
  PutLen(h.Size());
  h.ForEach([&](std::string_view f, std::string_view v) {
    PutString(f);
    PutString(v);
  });
}

// Redis 7.0's rdbSaveObject for streams (RDB_TYPE_STREAM_LISTPACKS_2): the nodes as they are,
// the counters, and each group with its global PEL (ID, delivery time, count) and its consumers
// (name, seen time, the IDs they own).
void RdbWriter::PutStream(const store::Collection& c) {
  const auto& s = static_cast<const store::StreamValue&>(c);
  auto put_raw_id = [&](store::StreamID id) {
    char b[16];
    for (int i = 0; i < 8; i++) {
      b[i] = static_cast<char>(id.ms >> (56 - 8 * i));
      b[8 + i] = static_cast<char>(id.seq >> (56 - 8 * i));
    }
    Put(b, 16);
  };
  auto put_id = [&](store::StreamID id) {
    PutLen(id.ms);
    PutLen(id.seq);
  };
  auto put_millis = [&](int64_t t) { Put(&t, 8); };  // little-endian hosts
  PutLen(s.nodes().size());
  for (const auto& [master, lp] : s.nodes()) {
    char key[16];
    for (int i = 0; i < 8; i++) {
      key[i] = static_cast<char>(master.ms >> (56 - 8 * i));
      key[8 + i] = static_cast<char>(master.seq >> (56 - 8 * i));
    }
    PutString(std::string_view(key, 16));
    PutString(lp.view());
  }
  PutLen(s.length());
  put_id(s.last_id());
  put_id(s.first_id());
  put_id(s.max_deleted_id());
  PutLen(s.entries_added());
  PutLen(s.groups().size());
  for (const auto& [name, g] : s.groups()) {
    PutString(name);
    put_id(g->last_id);
    PutLen(static_cast<uint64_t>(g->entries_read));
    PutLen(g->pel.size());
    for (const auto& [id, nack] : g->pel) {
      put_raw_id(id);
      put_millis(nack->delivery_time);
      PutLen(nack->delivery_count);
    }
    PutLen(g->consumers.size());
    for (const auto& [cname, consumer] : g->consumers) {
      PutString(cname);
      put_millis(consumer->seen_time);
      PutLen(consumer->pel.size());
      for (const auto& [id, nack] : consumer->pel) put_raw_id(id);
    }
  }
}

uint8_t RdbWriter::TypeOf(const store::Value& v) {
  using store::ObjType;
  switch (v.type()) {
    case ObjType::kString:
      return kRdbString;
    case ObjType::kList:
      return kRdbListQuicklist2;
    case ObjType::kSet:
      return v.As<store::SetValue>()->is_intset() ? kRdbSetIntset : kRdbSet;
    case ObjType::kZSet:
      return v.As<store::ZSetValue>()->is_listpack() ? kRdbZSetListpack : kRdbZSet2;
    case ObjType::kHash:
      return v.As<store::HashValue>()->is_listpack() ? kRdbHashListpack : kRdbHash;
    case ObjType::kStream:
      return kRdbStreamListpacks2;
  }
  return kRdbString;
}

void RdbWriter::PutValue(const store::Value& v) {
  using store::ObjType;
  switch (v.type()) {
    case ObjType::kString:
      if (v.is_int()) {
        PutInt(v.IntValue());
      } else {
        char scratch[24];
        PutString(v.Str(scratch));
      }
      break;
    case ObjType::kList:
      PutList(*v.object());
      break;
    case ObjType::kSet:
      PutSet(*v.object());
      break;
    case ObjType::kZSet:
      PutZSet(*v.object());
      break;
    case ObjType::kHash:
      PutHash(*v.object());
      break;
    case ObjType::kStream:
      PutStream(*v.object());
      break;
  }
}

Status RdbWriter::WriteObject(const store::Value& v) {
  PutByte(TypeOf(v));
  PutValue(v);
  return FlushIfFull();
}

Status RdbWriter::WriteHeader(const std::vector<std::pair<std::string, std::string>>& aux) {
  char magic[10];
  snprintf(magic, sizeof(magic), "REDIS%04d", kRdbVersion);
  Put(magic, 9);
  for (const auto& [name, value] : aux) {
    PutByte(kOpAux);
    PutString(name);
    PutString(value);
  }
  return WriteFunctions(opts_.functions);
}

Status RdbWriter::WriteFunctions(const std::vector<std::string>& codes) {
  for (const std::string& code : codes) {
    PutByte(kOpFunction2);
    PutString(code);
  }
  return FlushIfFull();
}

Status RdbWriter::WriteDb(int index, store::Db& db, const store::Keyspace& ks) {
  if (db.size() == 0) return Status::Ok();
  PutByte(kOpSelectDb);
  PutLen(static_cast<uint64_t>(index));
  PutByte(kOpResizeDb);
  PutLen(db.size());
  PutLen(db.expires_size());
  Status st;
  db.table().ForEach([&](store::Entry* e) {
    if (!st.ok()) return;
    int64_t when = db.GetExpire(e);
    if (when >= 0) {
      PutByte(kOpExpireTimeMs);
      Put(&when, 8);  // little-endian hosts
    }
    if (opts_.access == RdbWriteOptions::Access::kIdle) {
      PutByte(kOpIdle);
      PutLen(static_cast<uint64_t>(ks.IdleSeconds(e)));
    } else if (opts_.access == RdbWriteOptions::Access::kFreq) {
      PutByte(kOpFreq);
      PutByte(static_cast<uint8_t>(ks.LfuFrequency(e)));
    }
    PutByte(TypeOf(e->value));
    PutString(e->key());
    PutValue(e->value);
    keys_++;
    st = FlushIfFull();
    if (opts_.key_save_delay_us != 0) DebugKeyDelay(opts_.key_save_delay_us);
    if (opts_.tick && keys_ % 64 == 0) opts_.tick();
    if (opts_.progress && keys_ % 1024 == 0) opts_.progress(bytes_ + used_, keys_);
  });
  return st.ok() ? FlushIfFull() : st;
}

Status RdbWriter::WriteEnd() {
  PutByte(kOpEof);
  // The checksum covers everything before it.
  Status st = Flush();
  if (!st.ok()) return st;
  uint64_t crc = opts_.checksum ? crc_ : 0;
  st = sink_.Write(&crc, 8);
  bytes_ += 8;
  return st;
}

}  // namespace kv::persist
