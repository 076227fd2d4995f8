#include "store/key_table.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace kv::store {
namespace {

std::string K(int i) { return "key:" + std::to_string(i); }

TEST(KeyTable, InsertFindUnlinkAcrossGrowth) {
  KeyTable t;
  bool saw_rehash = false;
  for (int i = 0; i < 10000; i++) {
    t.Insert(Entry::Create(K(i), Value::Int(i)));
    saw_rehash |= t.rehashing();
    // Every key inserted so far stays findable while the table is mid-rehash.
    if (i % 97 == 0) {
      for (int j = 0; j <= i; j += 13) ASSERT_NE(t.Find(K(j)), nullptr) << j;
    }
  }
  EXPECT_TRUE(saw_rehash);
  EXPECT_EQ(t.size(), 10000u);
  for (int i = 0; i < 10000; i += 2) {
    Entry* e = t.Unlink(K(i));
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(e->value.IntValue(), i);
    Entry::Destroy(e);
  }
  EXPECT_EQ(t.size(), 5000u);
  for (int i = 0; i < 10000; i++) EXPECT_EQ(t.Find(K(i)) != nullptr, i % 2 == 1);
  EXPECT_EQ(t.Unlink("missing"), nullptr);
}

// DEBUG HTSTATS' figures: every entry counted once across both arrays while rehashing, and
// each array's chains add up to its buckets and its entries.
TEST(KeyTable, StatsCountEveryBucketAndEntry) {
  KeyTable t;
  EXPECT_EQ(t.Stats().size(), 1u);
  EXPECT_EQ(t.Stats()[0].used, 0u);
  bool saw_rehash = false;
  for (int i = 0; i < 3000; i++) {
    t.Insert(Entry::Create(K(i), Value::Int(i)));
    std::vector<TableStats> st = t.Stats();
    ASSERT_EQ(st.size(), t.rehashing() ? 2u : 1u);
    saw_rehash |= st.size() == 2;
    size_t used = 0;
    for (const TableStats& s : st) {
      size_t buckets = 0, entries = 0, slots = 0;
      for (size_t len = 0; len < s.chains.size(); len++) {
        buckets += s.chains[len];
        entries += len * s.chains[len];
        if (len > 0) slots += s.chains[len];
      }
      EXPECT_EQ(buckets, s.size);
      EXPECT_EQ(entries, s.used);
      EXPECT_EQ(entries, s.total_chain);
      EXPECT_EQ(slots, s.slots);
      EXPECT_GE(s.max_chain, s.used > 0 ? 1u : 0u);
      used += s.used;
    }
    ASSERT_EQ(used, t.size());
  }
  EXPECT_TRUE(saw_rehash);
}

TEST(KeyTable, NoStopTheWorldResize) {
  // Each insert moves at most a bounded number of buckets: after the table starts growing
  // from N to 2N buckets, it is still rehashing a few inserts later.
  KeyTable t;
  for (int i = 0; i < 4096; i++) t.Insert(Entry::Create(K(i), Value::Int(i)));
  while (t.rehashing()) t.RehashSteps(1000);
  t.Insert(Entry::Create(K(4096), Value::Int(0)));  // triggers growth to 8192 buckets
  ASSERT_TRUE(t.rehashing());
  for (int i = 4097; i < 4110; i++) t.Insert(Entry::Create(K(i), Value::Int(0)));
  EXPECT_TRUE(t.rehashing());
}

TEST(KeyTable, ShrinksFromCron) {
  KeyTable t;
  for (int i = 0; i < 5000; i++) t.Insert(Entry::Create(K(i), Value::Int(i)));
  for (int i = 0; i < 4990; i++) Entry::Destroy(t.Unlink(K(i)));
  while (t.rehashing()) t.RehashSteps(100);
  size_t before = t.bucket_count();
  t.Cron(100000);
  while (t.rehashing()) t.Cron(100000);
  EXPECT_LT(t.bucket_count(), before);
  for (int i = 4990; i < 5000; i++) EXPECT_NE(t.Find(K(i)), nullptr);
}

std::multiset<std::string> ScanAll(KeyTable& t, const std::function<void()>& between) {
  std::multiset<std::string> seen;
  uint64_t cursor = 0;
  do {
    cursor = t.Scan(cursor, [&](Entry* e) { seen.insert(std::string(e->key())); });
    between();
  } while (cursor != 0);
  return seen;
}

TEST(KeyTable, ScanReturnsEveryKeyOnce) {
  KeyTable t;
  for (int i = 0; i < 1000; i++) t.Insert(Entry::Create(K(i), Value::Int(i)));
  while (t.rehashing()) t.RehashSteps(100);
  auto seen = ScanAll(t, [] {});
  EXPECT_EQ(seen.size(), 1000u);
  EXPECT_EQ(std::set<std::string>(seen.begin(), seen.end()).size(), 1000u);
}

TEST(KeyTable, ScanGuaranteeWhileGrowing) {
  // Keys present for the whole scan are returned at least once while the table grows
  // (and is rehashed) between cursor calls.
  KeyTable t;
  for (int i = 0; i < 500; i++) t.Insert(Entry::Create(K(i), Value::Int(i)));
  int next = 500;
  // Grow to 8x while the scan runs (bounded, or the scan would chase the growth forever).
  auto seen = ScanAll(t, [&] {
    for (int j = 0; j < 40 && next < 4000; j++, next++) {
      t.Insert(Entry::Create(K(next), Value::Int(0)));
    }
  });
  for (int i = 0; i < 500; i++) EXPECT_TRUE(seen.count(K(i))) << i;
}

TEST(KeyTable, ScanGuaranteeWhileShrinking) {
  KeyTable t;
  for (int i = 0; i < 4000; i++) t.Insert(Entry::Create(K(i), Value::Int(i)));
  while (t.rehashing()) t.RehashSteps(100);
  int del = 100;  // keys 0..99 stay for the whole scan
  auto seen = ScanAll(t, [&] {
    for (int j = 0; j < 200 && del < 4000; j++, del++) Entry::Destroy(t.Unlink(K(del)));
    t.Cron(50);
  });
  for (int i = 0; i < 100; i++) EXPECT_TRUE(seen.count(K(i))) << i;
}

TEST(KeyTable, PrefetchIsHarmlessInEveryState) {
  KeyTable t;
  std::vector<std::string> owned = {"a", "b", "key:1"};
  std::vector<std::string_view> keys(owned.begin(), owned.end());
  t.Prefetch(keys);  // empty table
  for (int i = 0; i < 5000; i++) {
    t.Insert(Entry::Create(K(i), Value::Int(i)));
    if (t.rehashing()) t.Prefetch(keys);
  }
  std::vector<std::string_view> many(100, "x");
  t.Prefetch(many);  // over the batch bound: ignored
  EXPECT_NE(t.Find(K(1)), nullptr);
}

TEST(KeyTable, RandomCoversTheTable) {
  KeyTable t;
  for (int i = 0; i < 50; i++) t.Insert(Entry::Create(K(i), Value::Int(i)));
  std::set<std::string> seen;
  for (int i = 0; i < 5000; i++) seen.insert(std::string(t.Random()->key()));
  EXPECT_EQ(seen.size(), 50u);
  KeyTable empty;
  EXPECT_EQ(empty.Random(), nullptr);
}

// Pearson's statistic of how often Random() picked each key against equal frequencies; keys
// never picked count too (`keys` of them in all).
double ChiSquare(const std::map<std::string, int>& picked, size_t keys) {
  double draws = 0;
  for (const auto& [k, n] : picked) draws += n;
  const double expected = draws / keys;
  double chi = (keys - picked.size()) * expected;
  for (const auto& [k, n] : picked) chi += (n - expected) * (n - expected) / expected;
  return chi;
}

// The statistic's bound: ten standard deviations above its mean for `keys` - 1 degrees of
// freedom, which a uniform pick never reaches while one that favours some chains does.
double Bound(size_t keys) { return (keys - 1) + 10 * std::sqrt(2.0 * (keys - 1)); }

// The expand guard is asked before a growth with the new array's bytes and the load factor;
// refused, the table keeps its buckets (and asks again at the next insert).
TEST(KeyTable, ExpandGuardCanHoldGrowthBack) {
  static size_t asked_bytes = 0;
  static double asked_load = 0;
  static bool allow = false;
  KeyTable::expand_guard = [](size_t more, double load) {
    asked_bytes = more;
    asked_load = load;
    return allow;
  };
  KeyTable t;
  for (int i = 0; i < 6; i++) t.Insert(Entry::Create(K(i), Value::Int(i)));
  EXPECT_EQ(t.bucket_count(), 4u);
  EXPECT_EQ(asked_bytes, 8 * sizeof(Entry*));
  EXPECT_DOUBLE_EQ(asked_load, 5.0 / 4.0);
  allow = true;
  t.Insert(Entry::Create(K(6), Value::Int(6)));
  EXPECT_EQ(t.bucket_count(), 4u + 8u);  // growing: both arrays
  KeyTable::expand_guard = nullptr;
  for (int i = 0; i < 7; i++) EXPECT_NE(t.Find(K(i)), nullptr) << i;
}

// Chains far longer than Random()'s least bound (a table that may not grow: 20 keys in 4
// buckets) do not favour the keys of the shorter ones.
TEST(KeyTable, RandomIsUniformOverLongChains) {
  KeyTable t;
  t.set_resize_allowed(false);
  for (int i = 0; i < 20; i++) t.Insert(Entry::Create(K(i), Value::Int(i)));
  ASSERT_EQ(t.bucket_count(), 4u);
  std::map<std::string, int> picked;
  for (int i = 0; i < 100000; i++) picked[std::string(t.Random()->key())]++;
  EXPECT_EQ(picked.size(), 20u);
  EXPECT_LT(ChiSquare(picked, 20), Bound(20));
}

// Mid-rehash, keys still in the old array and keys already moved come up equally often: each
// table has just started growing from 1024 to 2048 buckets, and each Random() moves one bucket.
TEST(KeyTable, RandomIsUniformWhileRehashing) {
  std::map<std::string, int> picked;
  for (int round = 0; round < 250; round++) {
    KeyTable t;
    for (int i = 0; i < 1025; i++) t.Insert(Entry::Create(K(i), Value::Int(i)));
    ASSERT_TRUE(t.rehashing());
    for (int i = 0; i < 400; i++) picked[std::string(t.Random()->key())]++;
    ASSERT_TRUE(t.rehashing());
  }
  EXPECT_EQ(picked.size(), 1025u);
  EXPECT_LT(ChiSquare(picked, 1025), Bound(1025));
}

// A sparse table (most keys deleted, not shrunk yet) still picks each key equally often.
TEST(KeyTable, RandomIsUniformOnASparseTable) {
  KeyTable t;
  for (int i = 0; i < 3000; i++) t.Insert(Entry::Create(K(i), Value::Int(i)));
  while (t.rehashing()) t.RehashSteps(100);
  for (int i = 0; i < 3000; i++) {
    if (i % 100 != 0) Entry::Destroy(t.Unlink(K(i)));
  }
  ASSERT_EQ(t.bucket_count(), 4096u);
  std::map<std::string, int> picked;
  for (int i = 0; i < 15000; i++) picked[std::string(t.Random()->key())]++;
  EXPECT_EQ(picked.size(), 30u);
  EXPECT_LT(ChiSquare(picked, 30), Bound(30));
}

// Eviction's sampling: between one and n distinct entries of the table, in every state (sparse,
// growing mid-rehash), and over many calls every key comes up.
TEST(KeyTable, SomeEntriesSamplesDistinctEntriesAndCoversTheTable) {
  KeyTable t;
  Entry* out[16];
  EXPECT_EQ(t.SomeEntries(5, out), 0u);
  std::set<std::string> seen;
  bool saw_rehash = false;
  for (int i = 0; i < 3000; i++) {
    t.Insert(Entry::Create(K(i), Value::Int(i)));
    saw_rehash |= t.rehashing();
    size_t n = t.SomeEntries(5, out);
    // Up to five (as Redis' dictGetSomeKeys, the walk may come short), never none.
    ASSERT_GE(n, 1u) << i;
    ASSERT_LE(n, std::min<size_t>(5, t.size())) << i;
    std::set<Entry*> distinct(out, out + n);
    ASSERT_EQ(distinct.size(), n);
    for (size_t j = 0; j < n; j++) ASSERT_EQ(t.Find(out[j]->key()), out[j]);
  }
  EXPECT_TRUE(saw_rehash);
  // Sparse: most keys gone, the table not shrunk yet.
  for (int i = 0; i < 3000; i++) {
    if (i % 100 != 0) Entry::Destroy(t.Unlink(K(i)));
  }
  for (int i = 0; i < 2000; i++) {
    size_t n = t.SomeEntries(5, out);
    ASSERT_GE(n, 1u);
    for (size_t j = 0; j < n; j++) seen.insert(std::string(out[j]->key()));
  }
  EXPECT_EQ(seen.size(), 30u);
}

}  // namespace
}  // namespace kv::store
