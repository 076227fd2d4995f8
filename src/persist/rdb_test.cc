// RDB and DUMP round trips: every type and encoding saved and loaded back, writing in place,
// expired keys, checksums, corrupt files and saving to a file. Loading hand-built and streamed
// RDB bytes is in rdb_load_test.cc.
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
#include "persist/rdb_test_util.h"
#include "persist/snapshot.h"
#include "store/digest.h"
#include "store/hash_type.h"
#include "store/list_type.h"
#include "store/set_type.h"
#include "store/zset_type.h"

namespace kv::persist {
namespace {

using namespace rdb_test_util;

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
  // One set of aux fields for both writes: their ctime would differ across a second's end.
  const AuxFields aux = StandardAux({"7.0.15"});
  for (bool compression : {false, true}) {
    WindowSink sink;
    RdbWriteOptions opts;
    opts.compression = compression;
    ASSERT_TRUE(WriteRdb(a, sink, opts, aux, nullptr).ok());
    EXPECT_GT(sink.windows(), 5);
    EXPECT_EQ(sink.writes(), 1);  // the checksum trailer only
    StringSink whole;
    ASSERT_TRUE(WriteRdb(a, whole, opts, aux, nullptr).ok());
    EXPECT_TRUE(sink.str() == whole.str());
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
