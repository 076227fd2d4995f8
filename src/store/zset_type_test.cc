#include "store/zset_type.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace kv::store {
namespace {

using Pairs = std::vector<std::pair<std::string, double>>;

Pairs All(const ZSetValue& z, bool reverse = false) {
  Pairs out;
  if (z.Size() == 0) return out;
  z.Visit(reverse ? z.Size() - 1 : 0, reverse, [&](std::string_view m, double s) {
    out.emplace_back(std::string(m), s);
    return true;
  });
  return out;
}

std::unique_ptr<ZSetValue> Make(const Pairs& pairs, const EncodingLimits& l = {}) {
  auto z = std::make_unique<ZSetValue>();
  for (const auto& [m, s] : pairs) z->Insert(m, s, l);
  return z;
}

// The ordered index: ranks, rank lookups and score changes stay consistent through random
// inserts and removals, checked against a std::map model ordered the same way.
TEST(ZSkipListTest, RanksMatchAModel) {
  ZSkipList list;
  std::map<std::pair<double, std::string>, ZNode*> model;
  std::mt19937 rng(7);
  for (int i = 0; i < 2000; i++) {
    double score = static_cast<double>(rng() % 50);
    std::string member = "m" + std::to_string(rng() % 300);
    auto it = std::find_if(model.begin(), model.end(),
                           [&](const auto& kv) { return kv.first.second == member; });
    if (it != model.end()) {
      ZNode* n = it->second;
      model.erase(it);
      if (rng() % 2) {
        list.UpdateScore(n, score);
        model[{score, member}] = n;
      } else {
        list.Unlink(n);
        ZNode::Destroy(n);
      }
    } else {
      model[{score, member}] = list.Insert(member, score);
    }
  }
  ASSERT_EQ(list.size(), model.size());
  size_t rank = 1;
  ZNode* prev = nullptr;
  for (const auto& [key, node] : model) {
    EXPECT_EQ(list.Rank(key.first, key.second), rank);
    EXPECT_EQ(list.ByRank(rank), node);
    EXPECT_EQ(node->backward, prev);
    prev = node;
    rank++;
  }
  EXPECT_EQ(list.last(), prev);
  EXPECT_EQ(list.ByRank(rank), nullptr);
  EXPECT_EQ(list.Rank(1000, "absent"), 0u);
  EXPECT_TRUE(list.CheckLinks());
  for (const auto& [key, node] : model) ZNode::Destroy(node);
}

// A move finds its unlink and link paths in one walk, the second one stepping over the moving
// node: every move (forwards, backwards, onto ties, past nodes of every height, in lists of two
// nodes up; a single node never moves) must leave the links, spans, score copies and level
// count as a fresh insert would.
TEST(ZSkipListTest, MovesKeepLinksSpansAndRanks) {
  std::mt19937 rng(11);
  for (int size : {2, 3, 5, 40, 3000}) {
    ZSkipList list;
    std::map<std::string, ZNode*> nodes;
    for (int i = 0; i < size; i++) {
      std::string m = "m" + std::to_string(i);
      nodes[m] = list.Insert(m, static_cast<double>(rng() % 20));
    }
    for (int round = 0; round < 4000; round++) {
      auto it = std::next(nodes.begin(), static_cast<long>(rng() % nodes.size()));
      // Few distinct scores: many moves land on ties, ordered by member.
      list.UpdateScore(it->second, static_cast<double>(rng() % 20) - 5);
      if (size < 100 || round % 500 == 0) ASSERT_TRUE(list.CheckLinks()) << size << " " << round;
    }
    ASSERT_TRUE(list.CheckLinks());
    std::vector<std::pair<double, std::string>> order;
    for (const auto& [m, n] : nodes) order.push_back({n->score, m});
    std::sort(order.begin(), order.end());
    for (size_t r = 0; r < order.size(); r++) {
      ASSERT_EQ(list.ByRank(r + 1), nodes[order[r].second]);
      ASSERT_EQ(list.Rank(order[r].first, order[r].second), r + 1);
    }
    for (const auto& [m, n] : nodes) {
      list.Unlink(n);
      ZNode::Destroy(n);
    }
    EXPECT_EQ(list.size(), 0u);
    EXPECT_TRUE(list.CheckLinks());
  }
}

// Links keep a copy of the next node's score: in-place score changes (of nodes of every height)
// must refresh the copies, or later descents go astray.
TEST(ZSkipListTest, ScoreCopiesFollowInPlaceUpdates) {
  ZSkipList list;
  std::vector<ZNode*> nodes;
  for (int i = 0; i < 3000; i++) nodes.push_back(list.Insert("m" + std::to_string(i), i * 10.0));
  ASSERT_TRUE(list.CheckLinks());
  std::mt19937 rng(3);
  for (int round = 0; round < 3; round++) {
    for (int i = 0; i < 3000; i++) {
      // Stays strictly between its neighbours: the in-place path.
      list.UpdateScore(nodes[i], i * 10.0 + 1 + static_cast<double>(rng() % 8));
    }
    ASSERT_TRUE(list.CheckLinks());
    for (int i = 0; i < 3000; i++) {
      ZNode* n = nodes[i];
      EXPECT_EQ(list.Rank(n->score, n->key()), static_cast<size_t>(i + 1));
    }
  }
  // Moves, removals and re-inserts keep them right too.
  for (int i = 0; i < 3000; i += 3) list.UpdateScore(nodes[i], -static_cast<double>(i));
  for (int i = 1; i < 3000; i += 3) {
    list.Unlink(nodes[i]);
    ZNode::Destroy(nodes[i]);
    nodes[i] = list.Insert("n" + std::to_string(i), static_cast<double>(rng() % 100));
  }
  EXPECT_TRUE(list.CheckLinks());
  while (ZNode* x = list.first()) {
    list.Unlink(x);
    ZNode::Destroy(x);
  }
  EXPECT_TRUE(list.CheckLinks());
}

TEST(ZSkipListTest, DeleteRangeByRankHandsNodesBack) {
  ZSkipList list;
  for (int i = 0; i < 10; i++) list.Insert("m" + std::to_string(i), i);
  std::vector<std::string> gone;
  size_t n = list.DeleteRangeByRank(3, 5, [&](ZNode* x) {
    gone.emplace_back(x->key());
    ZNode::Destroy(x);
  });
  EXPECT_EQ(n, 3u);
  EXPECT_EQ(gone, (std::vector<std::string>{"m2", "m3", "m4"}));
  EXPECT_EQ(list.size(), 7u);
  EXPECT_EQ(list.ByRank(3)->key(), "m5");
  EXPECT_EQ(list.ByRank(3)->backward->key(), "m1");
  while (ZNode* x = list.first()) {
    list.Unlink(x);
    ZNode::Destroy(x);
  }
  EXPECT_EQ(list.last(), nullptr);
}

TEST(ZSetValueTest, OrdersByScoreThenMemberInBothEncodings) {
  Pairs in = {{"b", 1}, {"a", 1}, {"c", -2.5}, {"\xff", 1}, {"", 1}, {"z", INFINITY}};
  Pairs want = {{"c", -2.5}, {"", 1}, {"a", 1}, {"b", 1}, {"\xff", 1}, {"z", INFINITY}};
  auto lp = Make(in);
  EXPECT_STREQ(lp->EncodingName(), "listpack");
  EXPECT_EQ(All(*lp), want);
  EncodingLimits tiny;
  tiny.zset_max_listpack_entries = 2;
  auto sl = Make(in, tiny);
  EXPECT_STREQ(sl->EncodingName(), "skiplist");
  EXPECT_EQ(All(*sl), want);
  std::reverse(want.begin(), want.end());
  EXPECT_EQ(All(*lp, true), want);
  EXPECT_EQ(All(*sl, true), want);
}

TEST(ZSetValueTest, ListpackKeepsExactScores) {
  Pairs in = {{"a", 0.1},     {"b", -7},        {"c", 4503599627370496.0}, {"d", 1e300},
              {"e", -1e-300}, {"f", -INFINITY}, {"g", 123456789012.0},     {"h", -0.0}};
  auto z = Make(in);
  ASSERT_STREQ(z->EncodingName(), "listpack");
  for (const auto& [m, s] : in) EXPECT_EQ(*z->Score(m), s) << m;
  // Redis' listpack stores -0 as "0".
  EXPECT_FALSE(std::signbit(*z->Score("h")));
  EXPECT_FALSE(z->Score("zz").has_value());
}

TEST(ZSetValueTest, ConvertsWhenRedisDoes) {
  EncodingLimits l;
  l.zset_max_listpack_entries = 3;
  l.zset_max_listpack_value = 5;
  auto z = Make({{"a", 1}, {"b", 2}, {"c", 3}}, l);
  EXPECT_STREQ(z->EncodingName(), "listpack");
  z->Insert("d", 4, l);  // a fourth entry
  EXPECT_STREQ(z->EncodingName(), "skiplist");
  EXPECT_EQ(All(*z), (Pairs{{"a", 1}, {"b", 2}, {"c", 3}, {"d", 4}}));
  z->Remove("d");
  z->Remove("c");
  EXPECT_STREQ(z->EncodingName(), "skiplist");  // never back on removal

  auto longer = Make({{"a", 1}}, l);
  longer->Insert("abcdef", 2, l);  // a member over zset_max_listpack_value
  EXPECT_STREQ(longer->EncodingName(), "skiplist");

  auto sorted = Make({{"b", 2}, {"a", 1}}, l);
  sorted->ConvertToSkiplist();  // what SORT does to a sorted set it reads
  EXPECT_STREQ(sorted->EncodingName(), "skiplist");
  EXPECT_EQ(All(*sorted), (Pairs{{"a", 1}, {"b", 2}}));

  EXPECT_STREQ(ZSetValue::ForFirstMember(5, l)->EncodingName(), "listpack");
  EXPECT_STREQ(ZSetValue::ForFirstMember(6, l)->EncodingName(), "skiplist");
  l.zset_max_listpack_entries = 0;
  EXPECT_STREQ(ZSetValue::ForFirstMember(1, l)->EncodingName(), "skiplist");
}

TEST(ZSetValueTest, FromSortedPicksTheEncoding) {
  EncodingLimits l;
  l.zset_max_listpack_entries = 2;
  std::vector<ZEntry> two = {{"a", 1}, {"b", 2}};
  std::vector<ZEntry> three = {{"a", 1}, {"b", 2}, {"c", 3}};
  auto lp = ZSetValue::FromSorted(two, l);
  auto sl = ZSetValue::FromSorted(three, l);
  EXPECT_STREQ(lp->EncodingName(), "listpack");
  EXPECT_STREQ(sl->EncodingName(), "skiplist");
  EXPECT_EQ(All(*sl), (Pairs{{"a", 1}, {"b", 2}, {"c", 3}}));
  EXPECT_EQ(*sl->Rank("c"), 2u);
}

class BothEncodings : public ::testing::TestWithParam<bool> {
 protected:
  std::unique_ptr<ZSetValue> Build(const Pairs& p) {
    if (GetParam()) limits_.zset_max_listpack_entries = 0;
    auto z = Make(p, limits_);
    EXPECT_STREQ(z->EncodingName(), GetParam() ? "skiplist" : "listpack");
    return z;
  }
  EncodingLimits limits_;
};

TEST_P(BothEncodings, RankUpdateRemove) {
  auto z = Build({{"a", 1}, {"b", 2}, {"c", 3}, {"d", 4}});
  EXPECT_EQ(*z->Rank("a"), 0u);
  EXPECT_EQ(*z->Rank("d"), 3u);
  EXPECT_FALSE(z->Rank("x").has_value());
  z->UpdateScore("a", 10);
  EXPECT_EQ(*z->Rank("a"), 3u);
  EXPECT_EQ(z->At(0).member, "b");
  EXPECT_EQ(z->At(3).score, 10);
  EXPECT_TRUE(z->Remove("c"));
  EXPECT_FALSE(z->Remove("c"));
  EXPECT_EQ(All(*z), (Pairs{{"b", 2}, {"d", 4}, {"a", 10}}));
  EXPECT_EQ(z->Size(), 3u);
}

TEST_P(BothEncodings, ScoreRangeSearches) {
  auto z = Build({{"a", 1}, {"b", 2}, {"c", 2}, {"d", 3}, {"e", 5}});
  ScoreRange r{2, 3, false, false};
  auto before = [&](std::string_view, double s) { return !r.GteMin(s); };
  auto within = [&](std::string_view, double s) { return r.LteMax(s); };
  EXPECT_EQ(z->FirstNotBefore(before), 1u);
  EXPECT_EQ(z->LastWithin(within), 3u);
  r = {2, 3, true, true};
  EXPECT_EQ(z->FirstNotBefore(before), 3u);
  EXPECT_EQ(z->LastWithin(within), 2u);
  r = {6, 7, false, false};
  EXPECT_EQ(z->FirstNotBefore(before), 5u);  // none
  r = {-5, 0, false, false};
  EXPECT_EQ(z->LastWithin(within), ZSetValue::kNone);
  EXPECT_TRUE((ScoreRange{3, 2, false, false}).AlwaysEmpty());
  EXPECT_TRUE((ScoreRange{2, 2, true, false}).AlwaysEmpty());
  EXPECT_FALSE((ScoreRange{2, 2, false, false}).AlwaysEmpty());
}

TEST_P(BothEncodings, LexRangeSearches) {
  auto z = Build({{"a", 0}, {"b", 0}, {"bb", 0}, {"c", 0}, {"d", 0}});
  LexRange r;
  r.min = {LexBound::Kind::kValue, "b", false};
  r.max = {LexBound::Kind::kValue, "c", true};
  auto before = [&](std::string_view m, double) { return !r.GteMin(m); };
  auto within = [&](std::string_view m, double) { return r.LteMax(m); };
  EXPECT_EQ(z->FirstNotBefore(before), 1u);
  EXPECT_EQ(z->LastWithin(within), 2u);
  r.min = {LexBound::Kind::kMinusInf, "", true};
  r.max = {LexBound::Kind::kPlusInf, "", true};
  EXPECT_EQ(z->FirstNotBefore(before), 0u);
  EXPECT_EQ(z->LastWithin(within), 4u);
  EXPECT_FALSE(r.AlwaysEmpty());
  std::swap(r.min, r.max);
  EXPECT_TRUE(r.AlwaysEmpty());
  r.min = {LexBound::Kind::kValue, "b", false};
  r.max = {LexBound::Kind::kValue, "b", false};
  EXPECT_FALSE(r.AlwaysEmpty());
  r.max.ex = true;
  EXPECT_TRUE(r.AlwaysEmpty());
}

TEST_P(BothEncodings, RemoveRangeAndVisitFromRank) {
  Pairs in;
  for (int i = 0; i < 20; i++) in.emplace_back("m" + std::to_string(100 + i), i);
  auto z = Build(in);
  z->RemoveRange(5, 15);
  EXPECT_EQ(z->Size(), 10u);
  EXPECT_EQ(z->At(5).member, "m115");
  Pairs got;
  z->Visit(6, true, [&](std::string_view m, double s) {
    got.emplace_back(std::string(m), s);
    return got.size() < 3;
  });
  EXPECT_EQ(got, (Pairs{{"m116", 16}, {"m115", 15}, {"m104", 4}}));
  z->RemoveRange(0, 100);
  EXPECT_EQ(z->Size(), 0u);
}

TEST_P(BothEncodings, CloneForEachScanAndMemory) {
  auto z = Build({{"x", 0.1}, {"y", 2}, {"w", -0.5}});
  auto copy = z->Clone();
  std::vector<std::string> seen;
  copy->ForEach([&](std::string_view m, std::string_view s) {
    seen.push_back(std::string(m) + "=" + std::string(s));
  });
  EXPECT_EQ(seen, (std::vector<std::string>{"w=-0.5", "x=0.10000000000000001", "y=2"}));
  EXPECT_STREQ(copy->EncodingName(), z->EncodingName());
  std::vector<std::string> scanned;
  uint64_t cursor = 0;
  do {
    cursor = z->Scan(cursor, [&](std::string_view m, double) { scanned.emplace_back(m); });
  } while (cursor != 0);
  std::sort(scanned.begin(), scanned.end());
  EXPECT_EQ(scanned, (std::vector<std::string>{"w", "x", "y"}));
  EXPECT_GT(z->MemoryUsage(), sizeof(ZSetValue));
  std::string r(z->Random().member);
  EXPECT_TRUE(r == "w" || r == "x" || r == "y");
}

INSTANTIATE_TEST_SUITE_P(Encodings, BothEncodings, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "Skiplist" : "Listpack"; });

// A listpack small set costs little more than its member bytes.
TEST(ZSetValueTest, ListpackIsCompact) {
  auto z = Make({{"member:1", 1}, {"member:2", 2}, {"member:3", 3}});
  EXPECT_LE(z->MemoryUsage(), sizeof(ZSetValue) + 3 * 10 + 16);
}

}  // namespace
}  // namespace kv::store
