// Loading RDB bytes the writer does not produce: the encodings of older Redis files, stream
// sources that keep their own checksum, skimming to the end of an RDB, duplicate keys, unknown
// types, and keys waiting for their insert.
#include <gtest/gtest.h>

#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "persist/crc64.h"
#include "persist/rdb_loader.h"
#include "persist/rdb_test_util.h"
#include "persist/rdb_writer.h"
#include "persist/snapshot.h"
#include "store/digest.h"
#include "store/hash_type.h"
#include "store/list_type.h"
#include "store/set_type.h"
#include "store/zset_type.h"

namespace kv::persist {
namespace {

using namespace rdb_test_util;

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

// A ziplist holding `elems` (strings of under 64 bytes), with the prevlen and tail fields the
// reader checks.
std::string Ziplist(const std::vector<std::string>& elems) {
  std::string body;
  size_t prev = 0;
  uint32_t tail = 10;
  for (const auto& e : elems) {
    tail = static_cast<uint32_t>(10 + body.size());
    body.push_back(static_cast<char>(prev));
    body.push_back(static_cast<char>(e.size()));  // 6-bit string length
    body += e;
    prev = 2 + e.size();
  }
  std::string zl(10, '\0');
  zl += body;
  zl.push_back('\xff');
  uint32_t bytes = static_cast<uint32_t>(zl.size());
  memcpy(zl.data(), &bytes, 4);
  memcpy(zl.data() + 4, &tail, 4);
  uint16_t n = static_cast<uint16_t>(elems.size());
  memcpy(zl.data() + 8, &n, 2);
  return zl;
}

// An RDB with the encodings of older files (version 9): 10 keys, module aux data, a function.
std::string OlderEncodingsRdb() {
  std::string zipmap = std::string(
                           "\x01\x01"
                           "f"
                           "\x01\x00"
                           "v",
                           6) +
                       "\xff";
  RdbBuilder b;
  b.Byte(250).Str("redis-ver").Str("5.0.0");
  b.Byte(254).Len(0);
  b.Byte(253).Raw(std::string("\x00\x00\x00\x7f", 4));  // EXPIRETIME (s), year 2037
  b.Byte(0).Str("old-expire").Str("v");
  b.Byte(1).Str("linked-list").Len(2).Str("a").Str("b");
  b.Byte(3)
      .Str("zset-strscores")
      .Len(2)
      .Str("m1")
      .Raw(
          "\x03"
          "1.5")
      .Str("m2")
      .Raw("\xfe");
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
      EXPECT_NE(st.message().find("RDB CRC error"), std::string::npos) << st.message();
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

}  // namespace
}  // namespace kv::persist
