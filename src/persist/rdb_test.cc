#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <random>
#include <string>
#include <unistd.h>

#include "persist/dump.h"
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

}  // namespace
}  // namespace kv::persist
