#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "store/keyspace.h"

namespace kv::store {
namespace {

class Recorder : public KeyspaceObserver {
 public:
  void OnKeyExpired(int db, std::string_view key) override { expired.emplace_back(key); }
  std::vector<std::string> expired;
};

TEST(Keyspace, LazyExpiryRemovesOnLookup) {
  Keyspace ks(16);
  Recorder rec;
  ks.set_observer(&rec);
  Entry* e = ks.Set(0, "k", Value::String("v"));
  ks.db(0).SetExpire(e, 1000);
  EXPECT_NE(ks.Lookup(0, "k", 999), nullptr);
  EXPECT_EQ(ks.Lookup(0, "k", 1000), nullptr);
  EXPECT_EQ(ks.db(0).size(), 0u);
  EXPECT_EQ(rec.expired, std::vector<std::string>{"k"});
  EXPECT_EQ(ks.expired_keys(), 1u);
}

TEST(Keyspace, ReplicaHidesButKeeps) {
  Keyspace ks(1);
  ks.set_expire_deletes(false);
  Entry* e = ks.Set(0, "k", Value::String("v"));
  ks.db(0).SetExpire(e, 10);
  EXPECT_EQ(ks.Lookup(0, "k", 20), nullptr);
  EXPECT_EQ(ks.db(0).size(), 1u);
}

TEST(Keyspace, SetDropsTtlUnlessKept) {
  Keyspace ks(1);
  Entry* e = ks.Set(0, "k", Value::String("v"));
  ks.db(0).SetExpire(e, 5000);
  e = ks.Set(0, "k", Value::String("w"), /*keep_ttl=*/true);
  EXPECT_EQ(ks.db(0).GetExpire(e), 5000);
  e = ks.Set(0, "k", Value::String("x"));
  EXPECT_EQ(ks.db(0).GetExpire(e), -1);
  EXPECT_EQ(ks.db(0).expires_size(), 0u);
}

TEST(Keyspace, TtlIndexStaysConsistent) {
  Keyspace ks(1);
  Db& d = ks.db(0);
  for (int i = 0; i < 100; i++) {
    Entry* e = ks.Set(0, "k" + std::to_string(i), Value::Int(i));
    d.SetExpire(e, 1000 + i);
  }
  for (int i = 0; i < 100; i += 3) d.Delete("k" + std::to_string(i));
  for (int i = 1; i < 100; i += 3) d.RemoveExpire(d.Find("k" + std::to_string(i)));
  for (int i = 0; i < 100; i++) {
    Entry* e = d.Find("k" + std::to_string(i));
    if (i % 3 == 0) EXPECT_EQ(e, nullptr);
    else if (i % 3 == 1) EXPECT_EQ(d.GetExpire(e), -1);
    else EXPECT_EQ(d.GetExpire(e), 1000 + i);
  }
  EXPECT_EQ(d.expires_size(), 33u);
}

TEST(Keyspace, ActiveExpiryReclaimsMostExpiredKeys) {
  Keyspace ks(2);
  Recorder rec;
  ks.set_observer(&rec);
  for (int i = 0; i < 10000; i++) {
    Entry* e = ks.Set(i % 2, "k" + std::to_string(i), Value::Int(i));
    // 9000 keys expired at t=100, 1000 keys live until t=1e9.
    ks.db(i % 2).SetExpire(e, i < 9000 ? 100 : 1000000000);
  }
  for (int round = 0; round < 50; round++) ks.ActiveExpireCycle(100000, 200);
  // Cycles stop once at most 10% of a sample is stale, so most, not all, are gone.
  EXPECT_GT(ks.expired_keys(), 8000u);
  EXPECT_EQ(rec.expired.size(), ks.expired_keys());
  EXPECT_EQ(ks.TotalKeys(), 10000u - ks.expired_keys());
  for (int i = 9000; i < 10000; i++) {
    EXPECT_NE(ks.db(i % 2).Find("k" + std::to_string(i)), nullptr);
  }
}

// active-expire-effort: each sample takes 20 + 5 * (effort - 1) keys, and a db is sampled again
// while more than 10 - (effort - 1) percent of its sample was stale (Redis 7.0's figures).
TEST(Keyspace, ExpireEffortSetsTheSampleSizeAndTheStaleShare) {
  EXPECT_EQ(Keyspace::ExpireSamplesPerLoop(1), 20u);
  EXPECT_EQ(Keyspace::ExpireSamplesPerLoop(10), 65u);
  EXPECT_EQ(Keyspace::ExpireCyclePercent(1), 25);
  EXPECT_EQ(Keyspace::ExpireCyclePercent(10), 43);
  auto fill = [](Keyspace& ks, int stale) {
    for (int i = 0; i < 10000; i++) {
      Entry* e = ks.Set(0, "k" + std::to_string(i), Value::Int(i));
      ks.db(0).SetExpire(e, i < stale ? 100 : 1000000000);
    }
  };
  for (int effort : {1, 10}) {
    Keyspace ks(1);
    fill(ks, 0);
    ExpireCycleStats st = ks.ActiveExpireCycle(1000000, 200, effort);
    EXPECT_EQ(st.sampled, Keyspace::ExpireSamplesPerLoop(effort)) << "one sample, none stale";
    EXPECT_EQ(st.expired, 0u);
  }
  // 10% stale: at effort 1 a sample goes on with 3 stale keys of 20 (about 150 expire in 50
  // cycles), at effort 10 with 2 of 65 (about 780).
  Keyspace low(1), high(1);
  fill(low, 1000);
  fill(high, 1000);
  for (int round = 0; round < 50; round++) {
    low.ActiveExpireCycle(1000000, 200, 1);
    high.ActiveExpireCycle(1000000, 200, 10);
  }
  EXPECT_LT(low.expired_keys(), 400u);
  EXPECT_GT(high.expired_keys(), 600u);
}

TEST(Keyspace, SwapAndFlush) {
  Keyspace ks(2);
  ks.Set(0, "a", Value::Int(1));
  ks.SwapDb(0, 1);
  EXPECT_EQ(ks.db(0).size(), 0u);
  EXPECT_NE(ks.db(1).Find("a"), nullptr);
  ks.FlushAll();
  EXPECT_EQ(ks.TotalKeys(), 0u);
}

TEST(Value, StringEncodings) {
  EXPECT_EQ(std::string(Value::String("123").EncodingName()), "int");
  EXPECT_EQ(std::string(Value::String("0123").EncodingName()), "embstr");
  EXPECT_EQ(std::string(Value::String(std::string(45, 'x')).EncodingName()), "raw");
  EXPECT_EQ(std::string(Value::String("ab", /*raw=*/true).EncodingName()), "raw");
  Value v = Value::String(std::string(100, 'y'));
  Value w = v.Clone();
  EXPECT_EQ(w.ToString(), std::string(100, 'y'));
  Value m = std::move(v);
  EXPECT_EQ(m.StrLen(), 100u);
  EXPECT_EQ(Value::Int(-42).ToString(), "-42");
}

}  // namespace
}  // namespace kv::store
