#include "store/set_type.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

namespace kv::store {
namespace {

constexpr size_t kLimit = 512;

std::vector<std::string> Members(const SetValue& s) {
  std::vector<std::string> out;
  s.ForEachMember([&](std::string_view m) { out.emplace_back(m); });
  return out;
}

std::vector<std::string> Sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

std::unique_ptr<SetValue> Make(const std::vector<std::string>& members, size_t limit = kLimit) {
  auto s = SetValue::CreateFor(members.at(0));
  for (const auto& m : members) s->Add(m, limit);
  return s;
}

// ---- IntSet -------------------------------------------------------------------------------

TEST(IntSet, KeepsDistinctMembersSorted) {
  IntSet is;
  for (int64_t v : {5, -3, 9, 5, 0, -3}) is.Add(v);
  ASSERT_EQ(is.size(), 4u);
  EXPECT_EQ(is.At(0), -3);
  EXPECT_EQ(is.At(1), 0);
  EXPECT_EQ(is.At(2), 5);
  EXPECT_EQ(is.At(3), 9);
  EXPECT_FALSE(is.Add(9));
  EXPECT_TRUE(is.Contains(0));
  EXPECT_FALSE(is.Contains(1));
  EXPECT_TRUE(is.Remove(0));
  EXPECT_FALSE(is.Remove(0));
  EXPECT_EQ(is.size(), 3u);
  EXPECT_EQ(is.At(1), 5);
}

TEST(IntSet, WidensForLargerValuesAndNeverNarrows) {
  IntSet is;
  is.Add(1);
  is.Add(-2);
  EXPECT_EQ(is.width(), 2u);
  EXPECT_EQ(is.BlobBytes(), 8u + 2 * 2);
  is.Add(70000);  // needs int32
  EXPECT_EQ(is.width(), 4u);
  is.Add(INT64_MIN);  // needs int64, goes first
  EXPECT_EQ(is.width(), 8u);
  EXPECT_EQ(is.BlobBytes(), 8u + 4 * 8);
  EXPECT_EQ(is.At(0), INT64_MIN);
  EXPECT_EQ(is.At(1), -2);
  EXPECT_EQ(is.At(2), 1);
  EXPECT_EQ(is.At(3), 70000);
  is.Add(INT64_MAX);
  EXPECT_EQ(is.At(4), INT64_MAX);
  EXPECT_TRUE(is.Remove(INT64_MIN));
  EXPECT_TRUE(is.Remove(INT64_MAX));
  EXPECT_EQ(is.width(), 8u);  // removing never narrows, as in Redis
  EXPECT_TRUE(is.Contains(70000));
  // Values wider than the set's width are absent without a search.
  IntSet small;
  small.Add(3);
  EXPECT_FALSE(small.Contains(int64_t{1} << 40));
  EXPECT_FALSE(small.Remove(int64_t{1} << 40));
}

TEST(IntSet, WidensWithPositiveValueAppended) {
  IntSet is;
  for (int64_t v : {-5, 7, 100}) is.Add(v);
  is.Add(int64_t{1} << 33);
  ASSERT_EQ(is.size(), 4u);
  EXPECT_EQ(is.At(3), int64_t{1} << 33);
  EXPECT_EQ(is.At(0), -5);
}

// ---- Encodings ------------------------------------------------------------------------------

TEST(SetValue, EncodingFollowsFirstMemberAndConvertsOneWay) {
  auto s = Make({"1", "2", "3"});
  EXPECT_STREQ(s->EncodingName(), "intset");
  EXPECT_TRUE(s->Add("abc", kLimit));
  EXPECT_STREQ(s->EncodingName(), "hashtable");
  EXPECT_TRUE(s->Remove("abc"));
  EXPECT_STREQ(s->EncodingName(), "hashtable");  // never converts back
  EXPECT_EQ(Sorted(Members(*s)), (std::vector<std::string>{"1", "2", "3"}));
  EXPECT_STREQ(SetValue::CreateFor("x")->EncodingName(), "hashtable");
}

TEST(SetValue, NonCanonicalIntegersAreStrings) {
  for (const char* m : {"007", " 1", "-0", "+1", "1.0", "9223372036854775808", ""}) {
    auto s = Make({"5"});
    s->Add(m, kLimit);
    EXPECT_STREQ(s->EncodingName(), "hashtable") << m;
    EXPECT_TRUE(s->Contains(m)) << m;
  }
  auto s = Make({"-9223372036854775808", "9223372036854775807"});
  EXPECT_STREQ(s->EncodingName(), "intset");
  EXPECT_FALSE(s->Contains("007"));
  EXPECT_FALSE(s->Remove("x"));
}

TEST(SetValue, ConvertsWhenOverTheEntryLimit) {
  auto s = Make({"1", "2", "3"}, 3);
  EXPECT_STREQ(s->EncodingName(), "intset");
  EXPECT_FALSE(s->Add("3", 3));  // a duplicate does not count
  EXPECT_STREQ(s->EncodingName(), "intset");
  EXPECT_TRUE(s->Add("4", 3));
  EXPECT_STREQ(s->EncodingName(), "hashtable");
  EXPECT_EQ(s->Size(), 4u);
  for (const char* m : {"1", "2", "3", "4"}) EXPECT_TRUE(s->Contains(m));
  // A limit of zero converts on the first member, as Redis does.
  auto z = Make({"1"}, 0);
  EXPECT_STREQ(z->EncodingName(), "hashtable");
}

TEST(SetValue, IntsetVisitsDecimalTextInOrder) {
  auto s = Make({"10", "-7", "300000", "0"});
  std::vector<std::string> seen;
  s->ForEach([&](std::string_view a, std::string_view b) {
    seen.emplace_back(a);
    EXPECT_TRUE(b.empty());
  });
  EXPECT_EQ(seen, (std::vector<std::string>{"-7", "0", "10", "300000"}));
}

TEST(SetValue, CloneKeepsEncodingAndMembers) {
  auto a = Make({"1", "2"});
  auto b = Make({"x", "1", std::string("\0y", 2)});
  auto ca = a->Clone();
  auto cb = b->Clone();
  EXPECT_STREQ(ca->EncodingName(), "intset");
  EXPECT_STREQ(cb->EncodingName(), "hashtable");
  EXPECT_EQ(ca->Size(), 2u);
  auto* sb = static_cast<SetValue*>(cb.get());
  EXPECT_EQ(Sorted(Members(*sb)), Sorted(Members(*b)));
  b->Remove("x");
  EXPECT_TRUE(sb->Contains("x"));  // independent copy
}

TEST(SetValue, MemoryUsageGrowsWithMembers) {
  auto is = Make({"1"});
  size_t before = is->MemoryUsage();
  for (int i = 0; i < 100; i++) is->Add(std::to_string(i * 100000), kLimit);
  EXPECT_GT(is->MemoryUsage(), before);
  auto ht = Make({"a"});
  before = ht->MemoryUsage();
  for (int i = 0; i < 100; i++) ht->Add("member-" + std::to_string(i), kLimit);
  size_t full = ht->MemoryUsage();
  EXPECT_GT(full, before + 100 * 8);
  for (int i = 0; i < 100; i++) ht->Remove("member-" + std::to_string(i));
  EXPECT_LT(ht->MemoryUsage(), full);  // nodes freed and the table shrinks
}

// ---- Random members -------------------------------------------------------------------------

std::vector<std::string> Numbers(int n, bool strings) {
  std::vector<std::string> v;
  for (int i = 0; i < n; i++) v.push_back((strings ? "s" : "") + std::to_string(i));
  return v;
}

TEST(SetValue, RandomMemberComesFromTheSet) {
  for (bool strings : {false, true}) {
    auto s = Make(Numbers(20, strings));
    std::set<std::string> seen;
    for (int i = 0; i < 2000; i++) {
      std::string m = s->RandomMember();
      EXPECT_TRUE(s->Contains(m));
      seen.insert(m);
    }
    EXPECT_EQ(seen.size(), 20u);  // 2000 draws miss a member with negligible probability
  }
}

TEST(SetValue, RandomDistinctCoversEveryStrategy) {
  for (bool strings : {false, true}) {
    auto s = Make(Numbers(30, strings));
    // count >= size: the whole set; count*3 > size: subtract from a copy; else: sample.
    for (uint64_t count : {100u, 30u, 29u, 11u, 10u, 3u, 1u}) {
      auto got = s->RandomDistinct(count);
      EXPECT_EQ(got.size(), std::min<uint64_t>(count, 30)) << count;
      std::set<std::string> distinct(got.begin(), got.end());
      EXPECT_EQ(distinct.size(), got.size()) << count;
      for (const auto& m : got) EXPECT_TRUE(s->Contains(m)) << m;
    }
    EXPECT_EQ(s->Size(), 30u);
  }
}

void CheckPop(bool strings, uint64_t count) {
  auto s = Make(Numbers(20, strings));
  auto all = Sorted(Members(*s));
  auto popped = s->PopRandom(count, kLimit);
  ASSERT_EQ(popped.size(), count);
  EXPECT_EQ(s->Size(), 20 - count);
  std::vector<std::string> both = Members(*s);
  both.insert(both.end(), popped.begin(), popped.end());
  EXPECT_EQ(Sorted(both), all) << "count " << count;
  for (const auto& m : popped) EXPECT_FALSE(s->Contains(m));
}

TEST(SetValue, PopRandomBothStrategiesPartitionTheSet) {
  for (bool strings : {false, true}) {
    CheckPop(strings, 1);   // remainder * 5 > count: pop one by one
    CheckPop(strings, 16);  // 4 * 5 > 16
    CheckPop(strings, 17);  // 3 * 5 <= 17: rebuild the remainder
    CheckPop(strings, 19);
  }
}

TEST(SetValue, PopRandomRebuildCanReturnToIntset) {
  // A hashtable of integers (it held a string once): rebuilding the remainder makes a new set
  // from integers, which is an intset again, as in Redis.
  auto s = Make({"a", "1", "2", "3", "4", "5", "6"});
  s->Remove("a");
  ASSERT_STREQ(s->EncodingName(), "hashtable");
  s->PopRandom(5, kLimit);
  EXPECT_STREQ(s->EncodingName(), "intset");
  EXPECT_EQ(s->Size(), 1u);
}

// ---- Scan -----------------------------------------------------------------------------------

TEST(SetValue, IntsetScanReturnsEverythingAtOnce) {
  auto s = Make({"3", "1", "2"});
  std::vector<std::string> seen;
  EXPECT_EQ(s->Scan(12345, [&](std::string_view m) { seen.emplace_back(m); }), 0u);
  EXPECT_EQ(seen, (std::vector<std::string>{"1", "2", "3"}));
}

TEST(SetValue, HashtableScanVisitsEveryMember) {
  auto s = Make(Numbers(200, true));
  std::set<std::string> seen;
  uint64_t cursor = 0;
  int calls = 0;
  do {
    cursor = s->Scan(cursor, [&](std::string_view m) { seen.emplace(m); });
    calls++;
  } while (cursor != 0);
  EXPECT_EQ(seen.size(), 200u);
  EXPECT_GT(calls, 1);
}

}  // namespace
}  // namespace kv::store
