#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <unistd.h>

#include "persist/crc64.h"
#include "persist/dump.h"
#include "persist/rdb_writer.h"
#include "persist/snapshot.h"
#include "store/digest.h"
#include "store/hash_type.h"
#include "store/list_type.h"
#include "store/set_type.h"
#include "store/zset_type.h"

namespace kv::persist {
namespace {

using store::Keyspace;
using store::ObjType;
using store::Value;

constexpr int64_t kFarFuture = 4102444800000;  // 2100-01-01

// A dataset touching every type in its compact and its general encoding, integers, binary
// values, expiries and several databases.
void Fill(Keyspace& ks, std::mt19937_64& rng) {
  auto& lim = ks.limits();
  ks.Set(0, "str", Value::String("hello"));
  ks.Set(0, "int", Value::String("-123456"));
  ks.Set(0, "bigint", Value::String("9223372036854775807"));
  std::string bin(300, '\0');
  for (auto& c : bin) c = static_cast<char>(rng());
  ks.Set(0, "binary", Value::String(bin));
  ks.Set(0, "compressible", Value::String(std::string(5000, 'a') + "tail"));
  store::Entry* e = ks.Set(0, "volatile", Value::String("soon"));
  ks.db(0).SetExpire(e, kFarFuture);

  for (int size : {3, 2000}) {
    auto list = std::make_unique<store::ListValue>(lim.list_max_listpack_size);
    for (int i = 0; i < size; i++) list->PushBack(i % 3 ? std::to_string(i) : "item" + std::to_string(i));
    ks.Set(1, "list" + std::to_string(size), Value::Object(ObjType::kList, std::move(list)));

    auto iset = store::SetValue::CreateIntSet();
    for (int i = 0; i < size; i++) iset->Add(std::to_string(i * 7 - 100), lim.set_max_intset_entries);
    ks.Set(1, "iset" + std::to_string(size), Value::Object(ObjType::kSet, std::move(iset)));
    auto sset = store::SetValue::CreateFor("m");
    for (int i = 0; i < size; i++) sset->Add("m" + std::to_string(i), lim.set_max_intset_entries);
    ks.Set(1, "sset" + std::to_string(size), Value::Object(ObjType::kSet, std::move(sset)));

    auto z = std::make_unique<store::ZSetValue>();
    for (int i = 0; i < size; i++) z->Insert("z" + std::to_string(i), i * 0.5 - 3, lim);
    ks.Set(2, "zset" + std::to_string(size), Value::Object(ObjType::kZSet, std::move(z)));

    auto h = std::make_unique<store::HashValue>();
    for (int i = 0; i < size; i++) h->Set("f" + std::to_string(i), std::to_string(i * 3), lim);
    ks.Set(2, "hash" + std::to_string(size), Value::Object(ObjType::kHash, std::move(h)));
  }
  auto bigval = std::make_unique<store::HashValue>();
  bigval->Set("f", std::string(100, 'x'), lim);  // too long for the listpack
  ks.Set(3, "hash-longvalue", Value::Object(ObjType::kHash, std::move(bigval)));
  for (int i = 0; i < 1000; i++) ks.Set(15, "k" + std::to_string(i), Value::String(std::to_string(rng())));
}

std::string Encodings(Keyspace& ks) {
  std::string out;
  for (int d = 0; d < ks.num_dbs(); d++) {
    std::vector<std::string> lines;
    ks.db(d).table().ForEach([&](store::Entry* e) {
      lines.push_back(std::to_string(d) + ":" + std::string(e->key()) + "=" +
                      e->value.EncodingName() + "/" + std::to_string(ks.db(d).GetExpire(e)));
    });
    std::sort(lines.begin(), lines.end());
    for (auto& l : lines) out += l + "\n";
  }
  return out;
}

std::string Save(Keyspace& ks, bool compression) {
  StringSink sink;
  RdbWriteOptions opts;
  opts.compression = compression;
  EXPECT_TRUE(WriteRdb(ks, sink, opts, StandardAux({"7.0.15"}), nullptr).ok());
  return sink.str();
}

TEST(Rdb, RoundTripKeepsEveryValueAndEncoding) {
  std::mt19937_64 rng(1);
  Keyspace a(16);
  Fill(a, rng);
  for (bool compression : {false, true}) {
    std::string rdb = Save(a, compression);
    Keyspace b(16);
    MemorySource src(rdb);
    RdbLoadResult res;
    Status st = LoadRdb(src, b, {}, &res);
    ASSERT_TRUE(st.ok()) << st.ToString();
    EXPECT_EQ(res.version, 10);
    EXPECT_EQ(res.aux["redis-ver"], "7.0.15");
    EXPECT_EQ(res.keys_loaded, a.TotalKeys());
    EXPECT_EQ(store::DatasetDigest(b), store::DatasetDigest(a));
    EXPECT_EQ(Encodings(b), Encodings(a));
  }
  EXPECT_LT(Save(a, true).size(), Save(a, false).size());
}

// Function libraries go out after the AUX fields and come back in order; FUNCTION DUMP's payload
// holds the same records and nothing else may be in it.
TEST(Rdb, FunctionLibrariesRoundTrip) {
  std::vector<std::string> codes = {
      "#!lua name=a\nredis.register_function('f', function() return 1 end)",
      "#!lua name=b\n" + std::string(3000, '-') + "\nredis.register_function('g', function() end)"};
  Keyspace a(16);
  a.Set(0, "k", Value::String("v"));
  for (bool compression : {false, true}) {
    StringSink sink;
    RdbWriteOptions opts;
    opts.compression = compression;
    opts.functions = codes;
    ASSERT_TRUE(WriteRdb(a, sink, opts, StandardAux({"7.0.15"}), nullptr).ok());
    Keyspace b(16);
    MemorySource src(sink.str());
    RdbLoadResult res;
    ASSERT_TRUE(LoadRdb(src, b, {}, &res).ok());
    EXPECT_EQ(res.functions, codes);
    EXPECT_EQ(res.keys_loaded, 1u);
  }
  std::string payload = DumpFunctions(codes);
  ASSERT_TRUE(VerifyDumpPayload(payload).ok());
  auto back = FunctionCodes(payload);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, codes);
  EXPECT_TRUE(FunctionCodes(DumpFunctions({}))->empty());
  // A key's payload is not a function's.
  std::string value = DumpValue(Value::String("x"), store::EncodingLimits{}, false);
  EXPECT_EQ(FunctionCodes(value).status().message(), "given type is not a function");
  // A record cut short.
  std::string cut = payload.substr(0, 20) + payload.substr(payload.size() - 10);
  EXPECT_EQ(FunctionCodes(cut).status().message(), "Failed loading library payload");
}

// A sink written in place: windows of varying sizes (down to one byte) into its string, some
// committed only in part.
class WindowSink : public Sink {
 public:
  Status Write(const void* data, size_t len) override {
    writes_++;
    out_.append(static_cast<const char*>(data), len);
    return Status::Ok();
  }
  Result<std::span<uint8_t>> Window(size_t max) override {
    if (open_) return Status::Invalid("a second window before the first was committed");
    // Every seventh window is as large as asked (the writer commits parts of it); the others
    // are small and uneven.
    size_t n = std::min(max, ++windows_ % 7 == 0 ? max : next_);
    next_ = next_ * 31 % 4099 + 1;
    window_.assign(n, '\xee');
    open_ = true;
    return std::span<uint8_t>(reinterpret_cast<uint8_t*>(window_.data()), n);
  }
  Status Commit(size_t n) override {
    if (!open_ || n > window_.size()) return Status::Invalid("commit outside the window");
    out_.append(window_, 0, n);
    open_ = false;
    return Status::Ok();
  }
  const std::string& str() const { return out_; }
  int windows() const { return windows_; }
  int writes() const { return writes_; }

 private:
  std::string out_, window_;
  size_t next_ = 1;
  bool open_ = false;
  int windows_ = 0, writes_ = 0;
};

TEST(Rdb, WritingInPlaceGivesTheSameBytes) {
  std::mt19937_64 rng(2);
  Keyspace a(16);
  Fill(a, rng);
  a.Set(4, "huge", Value::String(std::string(3 << 20, 'h')));  // more than the buffer
  for (bool compression : {false, true}) {
    WindowSink sink;
    RdbWriteOptions opts;
    opts.compression = compression;
    ASSERT_TRUE(WriteRdb(a, sink, opts, StandardAux({"7.0.15"}), nullptr).ok());
    EXPECT_GT(sink.windows(), 5);
    EXPECT_EQ(sink.writes(), 1);  // the checksum trailer only
    EXPECT_TRUE(sink.str() == Save(a, compression));
  }
}

// A sink whose windows fail (the snapshot ring abandoned): the writer stops at once instead of
// walking the rest of the dataset into nothing.
TEST(Rdb, AFailingWindowStopsTheWrite) {
  class FailingWindows : public Sink {
   public:
    Status Write(const void*, size_t) override { return Status::Ok(); }
    Result<std::span<uint8_t>> Window(size_t max) override {
      if (++windows > 3) return Status::Closed("abandoned");
      buf.resize(std::min<size_t>(max, 4096));
      return std::span<uint8_t>(reinterpret_cast<uint8_t*>(buf.data()), buf.size());
    }
    Status Commit(size_t) override { return Status::Ok(); }
    int windows = 0;
    std::string buf;
  } sink;
  Keyspace ks(16);
  for (int i = 0; i < 20000; i++) {
    ks.Set(0, "key:" + std::to_string(i), Value::String(std::string(100, 'v')));
  }
  RdbWriter w(sink, {});
  ASSERT_TRUE(w.WriteHeader({}).ok());
  Status st = w.WriteDb(0, ks.db(0), ks);
  EXPECT_EQ(st.code(), Code::kClosed) << st.ToString();
  EXPECT_EQ(sink.windows, 4);
  EXPECT_LT(w.keys_written(), 1000u);  // 3 windows of 4 KiB hold about 100 keys
}

TEST(Rdb, ExpiredKeysAreDroppedOnlyWhenAsked) {
  Keyspace a(16);
  store::Entry* e = a.Set(0, "old", Value::String("v"));
  a.db(0).SetExpire(e, 1000);
  a.Set(0, "keep", Value::String("v"));
  std::string rdb = Save(a, true);
  for (bool drop : {true, false}) {
    Keyspace b(16);
    MemorySource src(rdb);
    RdbLoadOptions opts;
    opts.drop_expired = drop;
    opts.now_ms = 5000;
    RdbLoadResult res;
    ASSERT_TRUE(LoadRdb(src, b, opts, &res).ok());
    EXPECT_EQ(b.TotalKeys(), drop ? 1u : 2u);
    EXPECT_EQ(res.expired_skipped, drop ? 1u : 0u);
  }
}

TEST(Rdb, ChecksumMismatchIsReported) {
  Keyspace a(16);
  a.Set(0, "k", Value::String("value"));
  std::string rdb = Save(a, false);
  rdb[rdb.size() - 1] ^= 1;
  Keyspace b(16);
  MemorySource src(rdb);
  RdbLoadResult res;
  Status st = LoadRdb(src, b, {}, &res);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("checksum"), std::string::npos) << st.message();
}

TEST(Rdb, CorruptFilesGiveErrorsNamingTheOffset) {
  std::mt19937_64 rng(2);
  Keyspace a(16);
  Fill(a, rng);
  std::string good = Save(a, true);
  int failures = 0;
  for (int i = 0; i < 2000; i++) {
    std::string bad = good;
    if (i % 3 == 0) {
      bad.resize(rng() % bad.size());
    } else {
      for (int f = 0; f < 1 + static_cast<int>(rng() % 4); f++) {
        bad[rng() % bad.size()] ^= static_cast<char>(1 + rng() % 255);
      }
    }
    Keyspace b(16);
    MemorySource src(bad);
    RdbLoadResult res;
    Status st = LoadRdb(src, b, {}, &res);
    if (!st.ok()) {
      failures++;
      EXPECT_NE(st.message().find("offset"), std::string::npos) << st.message();
    }
  }
  // Every truncation and nearly every flip fails (a flip can only pass if the checksum does).
  EXPECT_GT(failures, 1900);
}

TEST(Rdb, SaveFileIsAtomicAndLoadsByMapping) {
  char dir[] = "/tmp/kvstore-rdb-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  std::string path = std::string(dir) + "/dump.rdb";
  std::mt19937_64 rng(3);
  Keyspace a(16);
  Fill(a, rng);
  SaveStats stats;
  ASSERT_TRUE(SaveRdbFile(a, path, {}, StandardAux({"7.0.15"}), &stats).ok());
  EXPECT_EQ(stats.keys, a.TotalKeys());
  Keyspace b(16);
  RdbLoadResult res;
  Status st = LoadRdbFile(path, b, {}, &res);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(store::DatasetDigest(b), store::DatasetDigest(a));
  // Saving into a directory that vanished fails and leaves nothing behind.
  Keyspace c(16);
  EXPECT_FALSE(SaveRdbFile(a, std::string(dir) + "/nodir/dump.rdb", {}, {}, nullptr).ok());
  EXPECT_EQ(LoadRdbFile(std::string(dir) + "/missing.rdb", c, {}, &res).code(), Code::kNotFound);
  unlink(path.c_str());
  rmdir(dir);
}

// Raw RDB bytes, for the encodings kvstore never writes (files from older Redis versions).
class RdbBuilder {
 public:
  explicit RdbBuilder(int version = 9) {
    char magic[10];
    snprintf(magic, sizeof(magic), "REDIS%04d", version);
    out_.append(magic, 9);
  }
  RdbBuilder& Byte(uint8_t b) {
    out_.push_back(static_cast<char>(b));
    return *this;
  }
  RdbBuilder& Len(uint64_t n) {
    if (n < 64) return Byte(static_cast<uint8_t>(n));
    Byte(0x80);
    for (int i = 3; i >= 0; i--) Byte(static_cast<uint8_t>(n >> (8 * i)));
    return *this;
  }
  RdbBuilder& Str(std::string_view s) {
    Len(s.size());
    out_.append(s);
    return *this;
  }
  RdbBuilder& Raw(std::string_view s) {
    out_.append(s);
    return *this;
  }
  std::string Finish() {
    Byte(255);
    uint64_t crc = 0;  // "saved without checksum": not verified
    out_.append(reinterpret_cast<const char*>(&crc), 8);
    return out_;
  }

 private:
  std::string out_;
};

// A ziplist holding `elems` (strings only; prevlen fields are not checked by readers).
std::string Ziplist(const std::vector<std::string>& elems) {
  std::string body;
  for (const auto& e : elems) {
    body.push_back('\0');
    body.push_back(static_cast<char>(e.size()));  // 6-bit string length
    body += e;
  }
  std::string zl(10, '\0');
  zl += body;
  zl.push_back('\xff');
  uint32_t bytes = static_cast<uint32_t>(zl.size());
  memcpy(zl.data(), &bytes, 4);
  uint16_t n = static_cast<uint16_t>(elems.size());
  memcpy(zl.data() + 8, &n, 2);
  return zl;
}

// An RDB with the encodings of older files (version 9): 10 keys, module aux data, a function.
std::string OlderEncodingsRdb() {
  std::string zipmap = std::string("\x01\x01" "f" "\x01\x00" "v", 6) + "\xff";
  RdbBuilder b;
  b.Byte(250).Str("redis-ver").Str("5.0.0");
  b.Byte(254).Len(0);
  b.Byte(253).Raw(std::string("\x00\x00\x00\x7f", 4));  // EXPIRETIME (s), year 2037
  b.Byte(0).Str("old-expire").Str("v");
  b.Byte(1).Str("linked-list").Len(2).Str("a").Str("b");
  b.Byte(3).Str("zset-strscores").Len(2).Str("m1").Raw("\x03" "1.5").Str("m2").Raw("\xfe");
  b.Byte(9).Str("zipmap-hash").Str(zipmap);
  b.Byte(10).Str("ziplist-list").Str(Ziplist({"x", "y", "z"}));
  b.Byte(12).Str("ziplist-zset").Str(Ziplist({"b", "2", "a", "1"}));
  b.Byte(13).Str("ziplist-hash").Str(Ziplist({"k1", "v1", "k2", "v2"}));
  b.Byte(14).Str("quicklist").Len(2).Str(Ziplist({"1", "2"})).Str(Ziplist({"3"}));
  b.Byte(248).Len(100);  // IDLE
  b.Byte(0).Str("idle").Str("v");
  b.Byte(249).Byte(7);  // FREQ
  b.Byte(0).Str("freq").Str("v");
  b.Byte(247).Len(12345).Len(2).Len(0).Len(5).Str("blob").Len(2).Len(99).Len(0);  // MODULE_AUX
  b.Byte(245).Str("#!lua name=lib\nredis.register_function('f', function() end)");
  return b.Finish();
}

TEST(Rdb, LoadsTheEncodingsOfOlderFiles) {
  std::string rdb = OlderEncodingsRdb();
  Keyspace ks(16);
  MemorySource src(rdb);
  RdbLoadResult res;
  std::vector<std::string> warnings;
  RdbLoadOptions opts;
  opts.warn = [&](const std::string& w) { warnings.push_back(w); };
  Status st = LoadRdb(src, ks, opts, &res);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(res.version, 9);
  EXPECT_EQ(res.keys_loaded, 10u);
  EXPECT_EQ(warnings.size(), 1u);  // module aux data
  ASSERT_EQ(res.functions.size(), 1u);
  EXPECT_EQ(res.functions[0], "#!lua name=lib\nredis.register_function('f', function() end)");
  store::Db& db = ks.db(0);
  EXPECT_EQ(db.GetExpire(db.Find("old-expire")), int64_t{0x7f000000} * 1000);
  EXPECT_EQ(db.Find("linked-list")->value.object()->Size(), 2u);
  auto* z = db.Find("zset-strscores")->value.As<store::ZSetValue>();
  EXPECT_EQ(z->Score("m1"), 1.5);
  EXPECT_EQ(z->Score("m2"), HUGE_VAL);
  EXPECT_EQ(*db.Find("zipmap-hash")->value.As<store::HashValue>()->Get("f"), "v");
  EXPECT_EQ(db.Find("ziplist-list")->value.As<store::ListValue>()->At(2), "z");
  EXPECT_EQ(db.Find("ziplist-zset")->value.As<store::ZSetValue>()->At(0).member, "a");
  EXPECT_EQ(*db.Find("ziplist-hash")->value.As<store::HashValue>()->Get("k2"), "v2");
  EXPECT_EQ(db.Find("quicklist")->value.As<store::ListValue>()->Size(), 3u);
}

// A stream source, as a network link is: no whole(), no remaining(), and each view a copy
// that the next Read overwrites.
class StreamSource : public Source {
 public:
  explicit StreamSource(std::string data) : data_(std::move(data)) {}
  Result<std::string_view> Read(size_t n) override {
    if (data_.size() - pos_ < n) return Status::Corruption("unexpected end of data");
    view_.assign(data_, pos_, n);
    pos_ += n;
    return std::string_view(view_);
  }
  uint64_t offset() const override { return pos_; }

 private:
  std::string data_, view_;
  size_t pos_ = 0;
};

// A stream source that keeps the CRC of what it delivered itself (as the replica's data-link
// source does, on its receive thread).
class CrcTrackingSource : public StreamSource {
 public:
  explicit CrcTrackingSource(std::string data) : StreamSource(data), copy_(std::move(data)) {}
  std::optional<uint64_t> CrcSoFar() const override {
    return Crc64(0, copy_.data(), static_cast<size_t>(offset()));
  }

 private:
  std::string copy_;
};

// The loader takes the checksum from a source that keeps it, and still rejects a wrong one.
TEST(Rdb, ChecksumFromTheSourceIsVerified) {
  std::mt19937_64 rng(4);
  Keyspace a(16);
  Fill(a, rng);
  std::string good = Save(a, true);
  for (bool corrupt : {false, true}) {
    std::string rdb = good;
    if (corrupt) rdb[rdb.size() - 1] ^= 1;
    CrcTrackingSource src(rdb);
    Keyspace b(16);
    RdbLoadResult res;
    Status st = LoadRdb(src, b, {}, &res);
    if (corrupt) {
      ASSERT_FALSE(st.ok());
      EXPECT_NE(st.message().find("wrong RDB checksum"), std::string::npos) << st.message();
    } else {
      ASSERT_TRUE(st.ok()) << st.ToString();
      EXPECT_EQ(store::DatasetDigest(b), store::DatasetDigest(a));
    }
  }
}

// Skimming walks every encoding to the end of the RDB without building values: it stops at the
// checksum even when more bytes follow (a replication stream), counts the keys, and still
// catches a truncated stream and a wrong checksum.
TEST(Rdb, SkimFindsTheEndOfEveryEncoding) {
  std::mt19937_64 rng(3);
  Keyspace a(16);
  Fill(a, rng);
  std::vector<std::pair<std::string, uint64_t>> files;
  for (bool compression : {false, true}) files.emplace_back(Save(a, compression), a.TotalKeys());
  files.emplace_back(OlderEncodingsRdb(), 10);
  // Skims `bytes` as a stream; the keyspace must stay empty.
  auto skim = [](const std::string& bytes, RdbLoadResult* res) {
    StreamSource src(bytes);
    Keyspace empty(16);
    RdbLoadOptions opts;
    opts.skim = true;
    Status st = LoadRdb(src, empty, opts, res);
    EXPECT_EQ(empty.TotalKeys(), 0u);
    return st;
  };
  for (const auto& [rdb, keys] : files) {
    RdbLoadResult res;
    Status st = skim(rdb + "*1\r\n$4\r\nPING\r\n", &res);
    ASSERT_TRUE(st.ok()) << st.ToString();
    EXPECT_EQ(res.bytes, rdb.size());
    EXPECT_EQ(res.keys_loaded, keys);
  }
  const std::string& good = files[1].first;
  for (std::string bad : {good.substr(0, good.size() / 2), good}) {
    if (bad.size() == good.size()) bad[bad.size() - 1] ^= 1;
    RdbLoadResult res;
    Status st = skim(bad, &res);
    ASSERT_FALSE(st.ok());
    EXPECT_NE(st.message().find("offset"), std::string::npos) << st.message();
  }
}

TEST(Rdb, RejectsDuplicatesAndUnknownTypes) {
  struct Case {
    std::string name, rdb, expect;
  };
  std::vector<Case> cases = {
      {"duplicate key", RdbBuilder().Byte(0).Str("k").Str("a").Byte(0).Str("k").Str("b").Finish(),
       "duplicated"},
      {"duplicate set member", RdbBuilder().Byte(2).Str("s").Len(2).Str("x").Str("x").Finish(),
       "duplicate"},
      {"duplicate hash field",
       RdbBuilder().Byte(4).Str("h").Len(2).Str("f").Str("1").Str("f").Str("2").Finish(),
       "duplicate"},
      {"unknown type", RdbBuilder().Byte(42).Str("k").Str("v").Finish(), "unknown value type"},
      {"stream node key", RdbBuilder().Byte(19).Str("k").Len(1).Str("short").Finish(),
       "Stream node key entry is not the size of a stream ID"},
      {"stream listpack",
       RdbBuilder()
           .Byte(19)
           .Str("k")
           .Len(1)
           .Str(std::string(16, '\0'))
           .Str("not a listpack")
           .Finish(),
       "Stream listpack integrity check failed"},
      {"db out of range", RdbBuilder().Byte(254).Len(99).Finish(), "databases"},
      {"absurd list length", RdbBuilder().Byte(1).Str("l").Len(0xFFFFFFFF).Finish(), "count"},
  };
  for (const auto& c : cases) {
    Keyspace ks(16);
    MemorySource src(c.rdb);
    RdbLoadResult res;
    Status st = LoadRdb(src, ks, {}, &res);
    ASSERT_FALSE(st.ok()) << c.name;
    EXPECT_NE(st.message().find(c.expect), std::string::npos) << c.name << ": " << st.message();
    EXPECT_NE(st.message().find("offset"), std::string::npos) << c.name;
  }
}

// The loader inserts keys a few behind the read position (8 deep). Across that window: SELECTs
// and expire times stay with their own keys, a duplicate further apart than the window is still
// an error naming that key (not the one being read), and with replace_existing the later copy
// wins whether it is inside the window or beyond.
TEST(Rdb, KeysWaitingForTheirInsertKeepTheirDbOrderAndErrors) {
  RdbBuilder b;
  for (int i = 0; i < 5; i++) b.Byte(0).Str("a" + std::to_string(i)).Str("v" + std::to_string(i));
  b.Byte(254).Len(1);
  b.Byte(0).Str("b0").Str("in-db1");
  b.Byte(252).Raw(std::string("\x00\x10\xa5\xd4\xe8\x00\x00\x00", 8));  // 1e12 ms
  b.Byte(0).Str("b1").Str("expires");
  b.Byte(254).Len(0);
  for (int i = 5; i < 20; i++) b.Byte(0).Str("a" + std::to_string(i)).Str("v" + std::to_string(i));
  {
    Keyspace ks(16);
    std::string rdb = RdbBuilder(b).Finish();
    MemorySource src(rdb);
    RdbLoadResult res;
    Status st = LoadRdb(src, ks, {}, &res);
    ASSERT_TRUE(st.ok()) << st.ToString();
    EXPECT_EQ(res.keys_loaded, 22u);
    EXPECT_EQ(ks.db(0).size(), 20u);
    EXPECT_EQ(ks.db(1).size(), 2u);
    for (int i = 0; i < 20; i++) {
      store::Entry* e = ks.db(0).Find("a" + std::to_string(i));
      ASSERT_NE(e, nullptr) << i;
      EXPECT_EQ(e->value.ToString(), "v" + std::to_string(i));
      EXPECT_EQ(ks.db(0).GetExpire(e), -1);
    }
    EXPECT_EQ(ks.db(1).Find("b0")->value.ToString(), "in-db1");
    EXPECT_EQ(ks.db(1).GetExpire(ks.db(1).Find("b0")), -1);
    EXPECT_EQ(ks.db(1).GetExpire(ks.db(1).Find("b1")), int64_t{1000000000000});
  }
  for (int apart : {1, 3, 12}) {
    SCOPED_TRACE(apart);
    RdbBuilder d;
    d.Byte(0).Str("dup").Str("first");
    for (int i = 0; i < apart; i++) d.Byte(0).Str("k" + std::to_string(i)).Str("x");
    d.Byte(0).Str("dup").Str("second");
    for (int i = 0; i < 10; i++) d.Byte(0).Str("after" + std::to_string(i)).Str("x");
    std::string rdb = d.Finish();
    {
      Keyspace ks(16);
      MemorySource src(rdb);
      RdbLoadResult res;
      Status st = LoadRdb(src, ks, {}, &res);
      ASSERT_FALSE(st.ok());
      EXPECT_NE(st.message().find("duplicated key 'dup' in db 0"), std::string::npos)
          << st.message();
      EXPECT_EQ(st.message().find("reading key"), std::string::npos) << st.message();
    }
    {
      Keyspace ks(16);
      MemorySource src(rdb);
      RdbLoadResult res;
      RdbLoadOptions opts;
      opts.replace_existing = true;
      Status st = LoadRdb(src, ks, opts, &res);
      ASSERT_TRUE(st.ok()) << st.ToString();
      EXPECT_EQ(ks.db(0).Find("dup")->value.ToString(), "second");
      EXPECT_EQ(ks.db(0).size(), static_cast<size_t>(apart + 11));
    }
  }
}

TEST(Dump, RoundTripsEveryTypeAndRejectsBadPayloads) {
  std::mt19937_64 rng(4);
  Keyspace a(16);
  Fill(a, rng);
  for (int d = 0; d < 16; d++) {
    a.db(d).table().ForEach([&](store::Entry* e) {
      std::string payload = DumpValue(e->value, a.limits(), true);
      ASSERT_TRUE(VerifyDumpPayload(payload).ok());
      auto v = RestoreValue(payload, a.limits());
      ASSERT_TRUE(v.ok()) << v.status().ToString();
      Keyspace b(16);
      store::Entry* ne = b.Set(0, e->key(), std::move(*v));
      if (int64_t when = a.db(d).GetExpire(e); when >= 0) b.db(0).SetExpire(ne, when);
      EXPECT_EQ(store::ValueDigest(b.db(0), ne), store::ValueDigest(a.db(d), e));
      std::string bad = payload;
      bad[0] ^= 0x40;
      EXPECT_FALSE(VerifyDumpPayload(bad).ok());
    });
  }
  EXPECT_FALSE(VerifyDumpPayload("short").ok());
}

// APPEND and SETRANGE leave spare room after a string's bytes (Value::GrowRaw); DUMP, the RDB
// writer and DEBUG DIGEST must see the bytes only, exactly as for the same string made at once.
TEST(Dump, GrownStringsSerializeTheirBytesNotTheirSpareRoom) {
  for (size_t len : {size_t{9}, size_t{45}, size_t{5000}, (size_t{1} << 20) + 10}) {
    Value grown = Value::String("ab");
    grown.GrowRaw(len - 1);  // grown in steps, so spare room follows the bytes
    char* p = grown.GrowRaw(len);
    for (size_t i = 0; i < len; i += 7) p[i] = static_cast<char>('a' + i % 26);
    ASSERT_GT(grown.StrCapacity(), grown.StrLen());
    Value fresh = Value::String(grown.ToString(), /*raw=*/true);
    for (bool compression : {false, true}) {
      std::string payload = DumpValue(grown, {}, compression);
      EXPECT_EQ(payload, DumpValue(fresh, {}, compression)) << len;
      auto back = RestoreValue(payload, {});
      ASSERT_TRUE(back.ok());
      EXPECT_EQ(back->ToString(), fresh.ToString());
    }
    Keyspace ks(1);
    store::Entry* a = ks.Set(0, "a", std::move(grown));
    store::Entry* b = ks.Set(0, "b", std::move(fresh));
    EXPECT_EQ(store::ValueDigest(ks.db(0), a), store::ValueDigest(ks.db(0), b));
    EXPECT_STREQ(a->value.EncodingName(), "raw");
  }
}

}  // namespace
}  // namespace kv::persist
