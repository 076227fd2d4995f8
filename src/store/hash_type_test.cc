#include "store/hash_type.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "store/digest.h"

namespace kv::store {
namespace {

using Pairs = std::vector<std::pair<std::string, std::string>>;

Pairs Ordered(const HashValue& h) {
  Pairs out;
  h.ForEach([&](std::string_view f, std::string_view v) { out.emplace_back(f, v); });
  return out;
}

std::map<std::string, std::string> AsMap(const HashValue& h) {
  std::map<std::string, std::string> out;
  h.ForEach([&](std::string_view f, std::string_view v) {
    EXPECT_TRUE(out.emplace(f, v).second) << "field visited twice: " << f;
  });
  return out;
}

EncodingLimits Limits(size_t entries, size_t value) {
  EncodingLimits l;
  l.hash_max_listpack_entries = entries;
  l.hash_max_listpack_value = value;
  return l;
}

std::string F(int i) { return "field:" + std::to_string(i); }

TEST(HashValue, EmptyIsListpack) {
  HashValue h;
  EXPECT_EQ(h.Size(), 0u);
  EXPECT_TRUE(h.is_listpack());
  EXPECT_STREQ(h.EncodingName(), "listpack");
  EXPECT_FALSE(h.Get("a").has_value());
  EXPECT_FALSE(h.Delete("a"));
  EXPECT_EQ(h.MemoryUsage(), sizeof(HashValue));
  EXPECT_TRUE(Ordered(h).empty());
}

TEST(HashValue, ListpackKeepsInsertionOrderAcrossUpdatesAndDeletes) {
  HashValue h;
  EncodingLimits l;
  EXPECT_TRUE(h.Set("a", "1", l));
  EXPECT_TRUE(h.Set("b", "2", l));
  EXPECT_TRUE(h.Set("c", "3", l));
  EXPECT_FALSE(h.Set("b", "a longer value", l));  // grows in the middle
  EXPECT_EQ(Ordered(h), (Pairs{{"a", "1"}, {"b", "a longer value"}, {"c", "3"}}));
  EXPECT_FALSE(h.Set("b", "", l));  // shrinks in the middle
  EXPECT_EQ(Ordered(h), (Pairs{{"a", "1"}, {"b", ""}, {"c", "3"}}));
  EXPECT_TRUE(h.Delete("a"));
  EXPECT_FALSE(h.Delete("a"));
  EXPECT_EQ(Ordered(h), (Pairs{{"b", ""}, {"c", "3"}}));
  EXPECT_TRUE(h.Set("a", "4", l));  // re-added at the end
  EXPECT_EQ(Ordered(h), (Pairs{{"b", ""}, {"c", "3"}, {"a", "4"}}));
  EXPECT_EQ(h.Size(), 3u);
  EXPECT_EQ(h.Get("c"), "3");
  EXPECT_EQ(h.Get("b"), "");
  EXPECT_TRUE(h.Exists("b"));
  EXPECT_FALSE(h.Exists("d"));
  EXPECT_TRUE(h.is_listpack());
}

TEST(HashValue, ListpackIsCompact) {
  HashValue h;
  EncodingLimits l;
  for (int i = 0; i < 10; i++) h.Set("f" + std::to_string(i), "v" + std::to_string(i), l);
  // Ten pairs of 2-byte strings: 4 bytes each with their length prefixes, one allocation.
  EXPECT_LE(h.MemoryUsage(), sizeof(HashValue) + 10 * 6 + 24);
}

TEST(HashValue, BinaryAndEmptyStringsAndLongLengths) {
  HashValue h;
  EncodingLimits l = Limits(512, 100000);
  std::string nul("a\0b", 3);
  std::string long1(200, 'x');    // two-byte length prefix
  std::string long2(20000, 'y');  // three-byte length prefix
  h.Set("", "", l);
  h.Set(nul, nul, l);
  h.Set(long1, long2, l);
  h.Set("after", "z", l);
  EXPECT_TRUE(h.is_listpack());
  EXPECT_EQ(Ordered(h), (Pairs{{"", ""}, {nul, nul}, {long1, long2}, {"after", "z"}}));
  h.Set(long1, "short", l);
  EXPECT_EQ(h.Get(long1), "short");
  EXPECT_EQ(h.Get("after"), "z");
}

TEST(HashValue, ConvertsWhenFieldCountPassesTheLimit) {
  HashValue h;
  EncodingLimits l = Limits(4, 64);
  for (int i = 0; i < 4; i++) h.Set(F(i), "v", l);
  EXPECT_TRUE(h.is_listpack());
  h.Set(F(0), "updated", l);  // an update does not add a field
  EXPECT_TRUE(h.is_listpack());
  h.Set(F(4), "v", l);
  EXPECT_FALSE(h.is_listpack());
  EXPECT_STREQ(h.EncodingName(), "hashtable");
  EXPECT_EQ(h.Size(), 5u);
  EXPECT_EQ(h.Get(F(0)), "updated");
  // One way only: deleting back below the limit keeps the hashtable.
  for (int i = 0; i < 4; i++) h.Delete(F(i));
  EXPECT_FALSE(h.is_listpack());
  EXPECT_EQ(AsMap(h), (std::map<std::string, std::string>{{F(4), "v"}}));
}

TEST(HashValue, ZeroEntriesLimitConvertsOnFirstField) {
  HashValue h;
  h.Set("a", "b", Limits(0, 64));
  EXPECT_FALSE(h.is_listpack());
}

TEST(HashValue, ConvertsWhenAStringIsTooLong) {
  EncodingLimits l = Limits(512, 8);
  HashValue value_ok, long_value, long_field, long_update;
  value_ok.Set("12345678", "12345678", l);  // exactly the limit
  EXPECT_TRUE(value_ok.is_listpack());
  long_value.Set("f", "123456789", l);
  EXPECT_FALSE(long_value.is_listpack());
  long_field.Set("123456789", "v", l);
  EXPECT_FALSE(long_field.is_listpack());
  long_update.Set("f", "v", l);
  long_update.Set("f", "123456789", l);  // updating an existing field converts too
  EXPECT_FALSE(long_update.is_listpack());
  EXPECT_EQ(long_update.Get("f"), "123456789");
}

TEST(HashValue, PrepareForInsertConvertsOnAnyLongString) {
  EncodingLimits l = Limits(512, 4);
  HashValue h;
  std::vector<std::string_view> short_args = {"a", "bcd", "efgh"};
  h.PrepareForInsert(short_args, l);
  EXPECT_TRUE(h.is_listpack());
  h.Set("a", "1", l);
  std::vector<std::string_view> long_args = {"a", "1", "b", "12345"};
  h.PrepareForInsert(long_args, l);
  EXPECT_FALSE(h.is_listpack());
  EXPECT_EQ(h.Get("a"), "1");
}

TEST(HashValue, HashtableSetGetUpdateDelete) {
  HashValue h;
  EncodingLimits l = Limits(16, 64);
  for (int i = 0; i < 1000; i++) h.Set(F(i), std::to_string(i), l);
  ASSERT_FALSE(h.is_listpack());
  EXPECT_EQ(h.Size(), 1000u);
  for (int i = 0; i < 1000; i++) ASSERT_EQ(h.Get(F(i)), std::to_string(i));
  // In place (same size), grown (reallocated node) and shrunk values.
  EXPECT_FALSE(h.Set(F(1), "x", l));
  EXPECT_FALSE(h.Set(F(2), std::string(500, 'g'), l));
  EXPECT_FALSE(h.Set(F(2), "s", l));
  EXPECT_EQ(h.Get(F(1)), "x");
  EXPECT_EQ(h.Get(F(2)), "s");
  EXPECT_EQ(h.Size(), 1000u);
  size_t big = h.MemoryUsage();
  for (int i = 10; i < 1000; i++) ASSERT_TRUE(h.Delete(F(i)));
  EXPECT_FALSE(h.Delete(F(10)));
  for (int i = 0; i < 100; i++) h.Get(F(0));  // let the shrink's rehash finish
  EXPECT_EQ(h.Size(), 10u);
  EXPECT_LT(h.MemoryUsage(), big / 10);
  std::map<std::string, std::string> want;
  for (int i = 0; i < 10; i++) want[F(i)] = h.Get(F(i)).value();
  EXPECT_EQ(AsMap(h), want);
  EXPECT_EQ(h.Entries().size(), 10u);
}

TEST(HashValue, CloneKeepsEncodingAndIsIndependent) {
  EncodingLimits l = Limits(8, 64);
  HashValue small, big;
  for (int i = 0; i < 3; i++) small.Set(F(i), "v" + std::to_string(i), l);
  for (int i = 0; i < 20; i++) big.Set(F(i), "v" + std::to_string(i), l);
  ASSERT_FALSE(big.is_listpack());
  auto small_copy = small.Clone();
  auto big_copy = big.Clone();
  auto* sc = static_cast<HashValue*>(small_copy.get());
  auto* bc = static_cast<HashValue*>(big_copy.get());
  EXPECT_TRUE(sc->is_listpack());
  EXPECT_FALSE(bc->is_listpack());
  EXPECT_EQ(Ordered(*sc), Ordered(small));
  EXPECT_EQ(AsMap(*bc), AsMap(big));
  sc->Set(F(0), "changed", l);
  bc->Delete(F(0));
  EXPECT_EQ(small.Get(F(0)), "v0");
  EXPECT_EQ(big.Get(F(0)), "v0");
  HashValue empty;
  EXPECT_EQ(empty.Clone()->Size(), 0u);
}

TEST(HashValue, ListpackScanReturnsEverythingAtOnce) {
  HashValue h;
  EncodingLimits l;
  h.Set("a", "1", l);
  h.Set("b", "2", l);
  Pairs seen;
  EXPECT_EQ(h.Scan(12345, [&](std::string_view f, std::string_view v) { seen.emplace_back(f, v); }),
            0u);
  EXPECT_EQ(seen, (Pairs{{"a", "1"}, {"b", "2"}}));
}

// Redis' SCAN guarantee: a field present for the whole scan is returned at least once, even when
// the table grows or shrinks between calls.
TEST(HashValue, HashtableScanSurvivesResizes) {
  EncodingLimits l = Limits(0, 64);
  for (bool grow : {true, false}) {
    HashValue h;
    for (int i = 0; i < 1000; i++) h.Set(F(i), "v", l);
    std::set<std::string> seen;
    uint64_t cursor = 0;
    int step = 0;
    do {
      cursor = h.Scan(cursor, [&](std::string_view f, std::string_view) { seen.emplace(f); });
      // Fields 0..99 stay throughout; the others churn to force resizes.
      if (step >= 4) {
        // Churn only at the start, so that the scan ends.
      } else if (grow) {
        for (int i = 0; i < 300; i++) h.Set("extra:" + std::to_string(step * 300 + i), "v", l);
      } else {
        for (int i = 100 + step * 300; i < 400 + step * 300 && i < 1000; i++) h.Delete(F(i));
      }
      step++;
    } while (cursor != 0);
    for (int i = 0; i < 100; i++) EXPECT_TRUE(seen.count(F(i))) << F(i) << " grow=" << grow;
  }
}

TEST(HashValue, RandomEntryReturnsRealPairsAndCoversTheHash) {
  for (size_t entries : {512, 0}) {
    HashValue h;
    EncodingLimits l = Limits(entries, 64);
    for (int i = 0; i < 3; i++) h.Set(F(i), "v" + std::to_string(i), l);
    std::set<std::string> seen;
    for (int i = 0; i < 300; i++) {
      auto [f, v] = h.RandomEntry();
      EXPECT_EQ(h.Get(f), v);
      seen.emplace(f);
    }
    EXPECT_EQ(seen.size(), 3u) << "entries limit " << entries;
  }
}

// DEBUG DIGEST-VALUE of HSET h f1 v1 f2 v2, from redis-server 7.0.15, in both encodings.
TEST(HashValue, DigestMatchesRedis) {
  for (size_t entries : {512, 0}) {
    Keyspace ks(1);
    auto h = std::make_unique<HashValue>();
    EncodingLimits l = Limits(entries, 64);
    h->Set("f1", "v1", l);
    h->Set("f2", "v2", l);
    Entry* e = ks.Set(0, "h", Value::Object(ObjType::kHash, std::move(h)));
    EXPECT_EQ(ValueDigest(ks.db(0), e), "047cc60ea73a34cde6d08a2721a4a26d19ee6570");
  }
}

}  // namespace
}  // namespace kv::store
