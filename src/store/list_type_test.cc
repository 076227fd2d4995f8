// ListValue against a std::deque<std::string> model: every operation, across node-size settings
// from one element per node to 64 KiB nodes, with short, empty, binary and multi-node elements.
#include "store/list_type.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <random>
#include <string>
#include <vector>

namespace kv::store {
namespace {

using Model = std::deque<std::string>;

Model Contents(const ListValue& l) {
  Model m;
  l.ForEach([&](std::string_view e, std::string_view second) {
    EXPECT_TRUE(second.empty());
    m.emplace_back(e);
  });
  return m;
}

Model Reversed(const ListValue& l) {
  Model m;
  l.Scan(true, [&](std::string_view e) {
    m.emplace_front(e);
    return true;
  });
  return m;
}

TEST(ListValue, EmptyList) {
  ListValue l;
  EXPECT_EQ(l.Size(), 0u);
  EXPECT_EQ(l.node_count(), 0u);
  EXPECT_STREQ(l.EncodingName(), "quicklist");
  EXPECT_TRUE(Contents(l).empty());
  EXPECT_FALSE(l.InsertAtPivot("x", "y", true));
  EXPECT_EQ(l.Remove("x", 0, false), 0u);
  l.EraseFront(5);
  l.EraseBack(5);
  EXPECT_EQ(l.Size(), 0u);
}

TEST(ListValue, PushPopBothEnds) {
  ListValue l;
  l.PushBack("b");
  l.PushFront("a");
  l.PushBack("");
  l.PushBack(std::string("\0\xff", 2));
  EXPECT_EQ(Contents(l), (Model{"a", "b", "", std::string("\0\xff", 2)}));
  EXPECT_EQ(l.At(1), "b");
  EXPECT_EQ(l.At(2), "");
  EXPECT_EQ(l.PopBack(), std::string("\0\xff", 2));
  EXPECT_EQ(l.PopFront(), "a");
  EXPECT_EQ(l.PopFront(), "b");
  EXPECT_EQ(l.PopFront(), "");
  EXPECT_EQ(l.Size(), 0u);
  EXPECT_EQ(l.node_count(), 0u);  // emptied nodes are freed
}

TEST(ListValue, LongElementsKeepTheirFraming) {
  ListValue l;
  std::string big(100000, 'x'), mid(200, 'y'), small = "z";
  l.PushBack(small);
  l.PushBack(big);  // larger than a node: a node of its own
  l.PushBack(mid);
  l.PushFront(big);
  EXPECT_EQ(Contents(l), (Model{big, small, big, mid}));
  EXPECT_EQ(Reversed(l), Contents(l));
  EXPECT_GE(l.node_count(), 3u);
  EXPECT_GT(l.MemoryUsage(), 2 * big.size());
  l.Set(2, "tiny");
  EXPECT_EQ(Contents(l), (Model{big, small, "tiny", mid}));
  EXPECT_EQ(l.PopBack(), mid);
  EXPECT_EQ(l.PopFront(), big);
}

TEST(ListValue, NodesFollowTheFillSetting) {
  ListValue bytes(-1);  // 4 KiB nodes
  for (int i = 0; i < 1000; i++) bytes.PushBack(std::string(40, 'a'));
  // 42-byte framed elements, 97 per 4 KiB node.
  EXPECT_EQ(bytes.node_count(), 11u);
  ListValue counted(3);
  for (int i = 0; i < 10; i++) counted.PushFront(std::to_string(i));
  EXPECT_EQ(counted.node_count(), 4u);
  ListValue one(0);  // 0 behaves as one element per node
  for (int i = 0; i < 5; i++) one.PushBack("v");
  EXPECT_EQ(one.node_count(), 5u);
}

TEST(ListValue, ShortElementsAreCompact) {
  ListValue l;
  for (int i = 0; i < 10000; i++) l.PushBack(std::to_string(i));
  // Under 4 bytes of framing per element plus node slack: far below a std::string each.
  EXPECT_LT(l.MemoryUsage(), 10000u * 12);
}

TEST(ListValue, SmallListsAreSmall) {
  ListValue l;
  l.PushBack("x");
  EXPECT_LT(l.MemoryUsage(), 256u);
  ListValue many(1);  // a node per element: the node ring grows, wraps and shrinks back
  for (int i = 0; i < 300; i++) {
    if (i % 2)
      many.PushFront(std::to_string(i));
    else
      many.PushBack(std::to_string(i));
  }
  size_t big = many.MemoryUsage();
  EXPECT_EQ(many.node_count(), 300u);
  many.EraseFront(150);
  many.EraseBack(149);
  EXPECT_EQ(many.Size(), 1u);
  EXPECT_LT(many.MemoryUsage() * 10, big);
}

TEST(ListValue, CloneIsDeep) {
  ListValue l(2);
  for (int i = 0; i < 7; i++) l.PushBack("e" + std::to_string(i));
  auto c = l.Clone();
  l.PopFront();
  l.Set(0, "changed");
  auto* copy = static_cast<ListValue*>(c.get());
  EXPECT_EQ(copy->Size(), 7u);
  EXPECT_EQ(copy->At(0), "e0");
  EXPECT_EQ(copy->At(1), "e1");
  copy->PushBack("more");
  EXPECT_EQ(Contents(*copy).back(), "more");
  EXPECT_EQ(l.Size(), 6u);
}

TEST(ListValue, InsertAndRemoveByValue) {
  ListValue l(2);
  for (const char* e : {"a", "b", "a", "c", "a"}) l.PushBack(e);
  EXPECT_TRUE(l.InsertAtPivot("a", "x", false));
  EXPECT_TRUE(l.InsertAtPivot("c", "y", true));
  EXPECT_FALSE(l.InsertAtPivot("zz", "q", true));
  EXPECT_EQ(Contents(l), (Model{"x", "a", "b", "a", "c", "y", "a"}));
  EXPECT_EQ(l.Remove("a", 1, true), 1u);
  EXPECT_EQ(Contents(l), (Model{"x", "a", "b", "a", "c", "y"}));
  EXPECT_EQ(l.Remove("a", 1, false), 1u);
  EXPECT_EQ(Contents(l), (Model{"x", "b", "a", "c", "y"}));
  EXPECT_EQ(l.Remove("nope", 0, false), 0u);
  for (const char* e : {"x", "b", "a", "c", "y"}) EXPECT_EQ(l.Remove(e, 0, false), 1u);
  EXPECT_EQ(l.Size(), 0u);
  EXPECT_EQ(l.node_count(), 0u);
}

TEST(ListValue, VisitRangeBothDirections) {
  ListValue l(3);
  for (int i = 0; i < 20; i++) l.PushBack(std::to_string(i));
  std::vector<std::string> got;
  auto keep = [&](std::string_view e) { got.emplace_back(e); };
  l.VisitRange(4, 5, false, keep);
  EXPECT_EQ(got, (std::vector<std::string>{"4", "5", "6", "7", "8"}));
  got.clear();
  l.VisitRange(14, 6, true, keep);
  EXPECT_EQ(got, (std::vector<std::string>{"19", "18", "17", "16", "15", "14"}));
  got.clear();
  l.VisitRange(0, 0, true, keep);
  EXPECT_TRUE(got.empty());
}

// Random operations against the model, checking contents, sizes and both walk directions.
class ListValueFuzz : public ::testing::TestWithParam<int64_t> {};

std::string RandomElement(std::mt19937& rng) {
  switch (rng() % 6) {
    case 0:
      return "";
    case 1:
      return std::string(rng() % 300, static_cast<char>('a' + rng() % 3));
    case 2:
      return std::string(5000 + rng() % 5000, 'L');
    default:
      return std::string(1, static_cast<char>('a' + rng() % 4));
  }
}

// LREM on the model: at most `limit` (0: all) elements equal to `target`, from either end.
size_t ModelRemove(Model& m, const std::string& target, size_t limit, bool tail) {
  size_t removed = 0;
  for (size_t j = 0; j < m.size() && (limit == 0 || removed < limit);) {
    size_t idx = tail ? m.size() - 1 - j : j;
    if (m[idx] != target) {
      j++;
      continue;
    }
    m.erase(m.begin() + static_cast<ptrdiff_t>(idx));  // the next candidate takes step j
    removed++;
  }
  return removed;
}

void EndOp(std::mt19937& rng, ListValue& l, Model& m, const std::string& v) {
  switch (rng() % 6) {  // two pushes for each pop
    case 0:
    case 1:
      l.PushFront(v);
      m.push_front(v);
      break;
    case 2:
    case 3:
      l.PushBack(v);
      m.push_back(v);
      break;
    case 4:
      if (m.empty()) break;
      EXPECT_EQ(l.PopFront(), m.front());
      m.pop_front();
      break;
    default:
      if (m.empty()) break;
      EXPECT_EQ(l.PopBack(), m.back());
      m.pop_back();
  }
}

void MiddleOp(std::mt19937& rng, ListValue& l, Model& m, const std::string& v) {
  std::string small(1, static_cast<char>('a' + rng() % 4));  // pivots and LREM targets
  switch (rng() % 4) {
    case 0: {
      bool after = rng() % 2;
      auto it = std::find(m.begin(), m.end(), small);
      EXPECT_EQ(l.InsertAtPivot(small, v, after), it != m.end());
      if (it != m.end()) m.insert(after ? it + 1 : it, v);
      break;
    }
    case 1: {
      size_t limit = rng() % 8 == 0 ? 0 : 1 + rng() % 2;  // 0 (all) is rare: lists stay long
      bool tail = rng() % 2;
      size_t want = ModelRemove(m, small, limit, tail);
      EXPECT_EQ(l.Remove(small, limit, tail), want);
      break;
    }
    case 2: {
      size_t k = rng() % 4;
      bool front = rng() % 2;
      front ? l.EraseFront(k) : l.EraseBack(k);
      for (size_t j = 0; j < k && !m.empty(); j++) front ? m.pop_front() : m.pop_back();
      break;
    }
    default:
      if (m.empty()) break;
      size_t i = rng() % m.size();
      EXPECT_EQ(l.At(i), m[i]);
      l.Set(i, v);
      m[i] = v;
  }
}

// Pushes and pops two times out of three.
void ApplyRandomOp(std::mt19937& rng, ListValue& l, Model& m) {
  std::string v = RandomElement(rng);
  if (rng() % 3 != 0) EndOp(rng, l, m, v);
  else MiddleOp(rng, l, m, v);
}

TEST_P(ListValueFuzz, MatchesModel) {
  std::mt19937 rng(static_cast<uint32_t>(GetParam() + 100));
  ListValue l(GetParam());
  Model m;
  size_t max_nodes = 0, max_size = 0;
  for (int step = 0; step < 8000; step++) {
    ApplyRandomOp(rng, l, m);
    ASSERT_EQ(l.Size(), m.size()) << "step " << step;
    max_nodes = std::max(max_nodes, l.node_count());
    max_size = std::max(max_size, m.size());
    if (step % 50 == 0) {
      ASSERT_EQ(Contents(l), m) << "step " << step;
      ASSERT_EQ(Reversed(l), m) << "step " << step;
    }
  }
  EXPECT_GT(max_size, 150u);  // the walk reached long, multi-node lists
  EXPECT_GT(max_nodes, 10u);
  EXPECT_EQ(Contents(l), m);
  EXPECT_EQ(Contents(*static_cast<ListValue*>(l.Clone().get())), m);
}

INSTANTIATE_TEST_SUITE_P(Fills, ListValueFuzz, ::testing::Values(-5, -2, -1, 0, 1, 2, 5, 128));

// ---- Plain nodes (the packed threshold) ----

// The threshold is process-wide: each test sets its own and restores the default.
class ListPlain : public ::testing::Test {
 protected:
  void TearDown() override { SetListPackedThreshold(0); }
};

// The nodes' forms from the head: "P" a plain node, "p" a packed one.
std::string Shape(const ListValue& l) {
  std::string s;
  for (size_t i = 0; i < l.node_count(); i++) {
    if (!s.empty()) s += ' ';
    s += l.node_plain(i) ? "P" : "p";
  }
  return s;
}

TEST_F(ListPlain, ThresholdFollowsRedisRules) {
  EXPECT_EQ(ListPackedThreshold(), kDefaultListPackedThreshold);
  EXPECT_EQ(kDefaultListPackedThreshold, uint64_t{1} << 30);
  EXPECT_TRUE(SetListPackedThreshold(1));
  EXPECT_EQ(ListPackedThreshold(), 1u);
  EXPECT_TRUE(SetListPackedThreshold((uint64_t{1} << 32) - (1 << 20)));
  EXPECT_FALSE(SetListPackedThreshold((uint64_t{1} << 32) - (1 << 20) + 1));
  EXPECT_FALSE(SetListPackedThreshold(UINT64_MAX));
  EXPECT_EQ(ListPackedThreshold(), (uint64_t{1} << 32) - (1 << 20));  // refused: unchanged
  EXPECT_TRUE(SetListPackedThreshold(0));
  EXPECT_EQ(ListPackedThreshold(), kDefaultListPackedThreshold);
}

TEST_F(ListPlain, LargeElementsGetNodesOfTheirOwn) {
  SetListPackedThreshold(10);
  ListValue l;
  l.PushBack("a");
  l.PushBack("b");
  l.PushBack(std::string(10, 'L'));  // >= threshold: plain
  l.PushBack("c");                   // a plain tail takes nothing: a new packed node
  l.PushBack("d");
  l.PushFront(std::string(20, 'H'));
  l.PushFront(std::string(9, 's'));  // just under: packed
  EXPECT_EQ(Shape(l), "p P p P p");
  EXPECT_EQ(l.node_count(), 5u);
  EXPECT_EQ(Contents(l), (Model{std::string(9, 's'), std::string(20, 'H'), "a", "b",
                                std::string(10, 'L'), "c", "d"}));
  EXPECT_EQ(Reversed(l), Contents(l));
  // Popping a plain node drops it; the packed neighbours do not merge.
  EXPECT_EQ(l.PopFront(), std::string(9, 's'));
  EXPECT_EQ(l.PopFront(), std::string(20, 'H'));
  EXPECT_EQ(Shape(l), "p P p");
  // ql_uncompressed_size: a plain node counts its element alone.
  ListValue one;
  one.PushBack(std::string(1000, 'z'));
  EXPECT_EQ(one.uncompressed_bytes(), 1000u);
  // A plain node is sized exactly: no growth slack.
  EXPECT_LT(one.MemoryUsage(), 1000u + 200);
}

TEST_F(ListPlain, SetSplitsPackedNodesAroundLargeElements) {
  SetListPackedThreshold(5);
  ListValue l;
  for (const char* e : {"aa", "bb", "cc", "dd", "ee"}) l.PushBack(e);
  ASSERT_EQ(l.node_count(), 1u);
  l.Set(2, std::string(10, 'e'));  // the middle: [aa bb] [P] [dd ee]
  EXPECT_EQ(Shape(l), "p P p");
  EXPECT_EQ(Contents(l), (Model{"aa", "bb", std::string(10, 'e'), "dd", "ee"}));
  l.Set(0, std::string(6, 'f'));  // a node's head: [P] [bb] [P] [dd ee]
  EXPECT_EQ(Shape(l), "P p P p");
  l.Set(4, std::string(6, 'g'));  // a node's tail: ... [dd] [P]
  EXPECT_EQ(Shape(l), "P p P p P");
  l.Set(1, std::string(7, 'h'));  // a node's only element: the node becomes plain
  EXPECT_EQ(Shape(l), "P P P p P");
  l.Set(1, std::string(8, 'i'));  // plain to large: stays plain
  EXPECT_EQ(Shape(l), "P P P p P");
  EXPECT_EQ(Contents(l), (Model{std::string(6, 'f'), std::string(8, 'i'), std::string(10, 'e'),
                                "dd", std::string(6, 'g')}));
  // Plain to small: into the head of a packed next node with room...
  l.Set(2, "x");
  EXPECT_EQ(Shape(l), "P P p P");
  // ...else into a packed node of its own (the next node is plain).
  l.Set(0, "y");
  EXPECT_EQ(Shape(l), "p P p P");
  EXPECT_EQ(Contents(l), (Model{"y", std::string(8, 'i'), "x", "dd", std::string(6, 'g')}));
  EXPECT_EQ(Reversed(l), Contents(l));
}

TEST_F(ListPlain, InsertPlacesLargeElementsAsRedisDoes) {
  SetListPackedThreshold(5);
  ListValue l;
  for (const char* e : {"a", "b", "c", "d"}) l.PushBack(e);
  EXPECT_TRUE(l.InsertAtPivot("b", "LLLLL", true));  // inside: split [a b] [P] [c d]
  EXPECT_EQ(Shape(l), "p P p");
  EXPECT_TRUE(l.InsertAtPivot("d", "MMMMM", true));   // after a node's tail: no split
  EXPECT_TRUE(l.InsertAtPivot("c", "NNNNN", false));  // before a node's head: no split
  EXPECT_EQ(Shape(l), "p P P p P");
  EXPECT_TRUE(l.InsertAtPivot("NNNNN", "OOOOO", true));  // beside a plain node
  EXPECT_EQ(Shape(l), "p P P P p P");
  EXPECT_EQ(Contents(l), (Model{"a", "b", "LLLLL", "NNNNN", "OOOOO", "c", "d", "MMMMM"}));
  // A small element beside a plain node joins the packed neighbour on its side...
  EXPECT_TRUE(l.InsertAtPivot("LLLLL", "x", false));  // the tail of [a b]
  EXPECT_TRUE(l.InsertAtPivot("OOOOO", "y", true));   // the head of [c d]
  EXPECT_EQ(Shape(l), "p P P P p P");
  // ...or gets a packed node of its own when that neighbour is plain.
  EXPECT_TRUE(l.InsertAtPivot("NNNNN", "z", false));
  EXPECT_EQ(Shape(l), "p P p P P p P");
  EXPECT_EQ(Contents(l),
            (Model{"a", "b", "x", "LLLLL", "z", "NNNNN", "OOOOO", "y", "c", "d", "MMMMM"}));
  EXPECT_EQ(Reversed(l), Contents(l));
}

TEST_F(ListPlain, PlainNodesNeverMerge) {
  SetListPackedThreshold(3);
  ListValue l;
  for (const char* e : {"a", "BBB", "CCC", "d", "a", "EEE", "f"}) l.PushBack(e);
  EXPECT_EQ(Shape(l), "p P P p P p");
  EXPECT_EQ(l.Remove("a", 0, false), 2u);  // emptied nodes go; plain ones do not merge
  EXPECT_EQ(Shape(l), "P P p P p");
  EXPECT_EQ(l.Remove("CCC", 0, true), 1u);  // packed nodes around a removed one may merge
  EXPECT_EQ(Contents(l), (Model{"BBB", "d", "EEE", "f"}));
  EXPECT_EQ(Shape(l), "P p P p");
  l.EraseFront(2);
  l.EraseBack(1);
  EXPECT_EQ(Contents(l), (Model{"EEE"}));
  EXPECT_EQ(Shape(l), "P");
}

TEST_F(ListPlain, FormsSurviveThresholdChangesCloneAndLoad) {
  SetListPackedThreshold(4);
  ListValue l;
  l.PushBack("abcd");
  l.PushBack("ab");
  SetListPackedThreshold(0);
  l.PushBack("efgh");  // now small: joins the packed tail
  EXPECT_EQ(Shape(l), "P p");
  auto c = l.Clone();
  EXPECT_EQ(Shape(*static_cast<ListValue*>(c.get())), "P p");
  // The loader keeps each saved node's form whatever the threshold says.
  ListValue loaded;
  loaded.AppendLoaded("x", true);
  loaded.AppendLoaded(std::string(100, 'y'), false);
  loaded.AppendLoaded("z", false);
  loaded.AppendLoaded("w", true);
  EXPECT_EQ(Shape(loaded), "P p P");
  std::vector<std::pair<std::string, bool>> forms;
  loaded.ForEachWithForm([&](std::string_view e, bool plain) { forms.emplace_back(e, plain); });
  EXPECT_EQ(forms, (std::vector<std::pair<std::string, bool>>{
                       {"x", true}, {std::string(100, 'y'), false}, {"z", false}, {"w", true}}));
}

TEST_F(ListPlain, PlainNodesCompressLikeOthers) {
  SetListPackedThreshold(100);
  ListValue l(-2, 1);
  for (int i = 0; i < 5; i++) l.PushBack(std::string(500, static_cast<char>('a' + i)));
  EXPECT_EQ(Shape(l), "P P P P P");
  for (size_t i = 0; i < 5; i++) EXPECT_EQ(l.node_compressed(i), i > 0 && i < 4) << i;
  EXPECT_EQ(l.uncompressed_bytes(), 2500u);
  EXPECT_EQ(l.At(2), std::string(500, 'c'));
  l.Set(2, "small");  // the next node is plain: a packed node, too small to compress
  EXPECT_EQ(Shape(l), "P P p P P");
  l.Set(2, std::string(300, 'q'));
  EXPECT_TRUE(l.node_compressed(2));
  EXPECT_EQ(l.At(2), std::string(300, 'q'));
}

// Random operations with a low threshold, against the model and an uncompressed twin: every
// element of at least the threshold, and only those, sits in a plain node of its own; the
// compressed list has the twin's nodes; plain inner nodes are compressed (their elements are
// runs of one byte).
class ListPlainFuzz : public ListPlain, public ::testing::WithParamInterface<int64_t> {};

TEST_P(ListPlainFuzz, MatchesModelAndRedisRules) {
  constexpr size_t kThreshold = 200;
  SetListPackedThreshold(kThreshold);
  std::mt19937 rng(static_cast<uint32_t>(GetParam() + 7));
  std::mt19937 twin_rng = rng;
  ListValue l(GetParam(), 1), twin(GetParam(), 0);
  Model m, twin_m;
  size_t max_plain = 0;
  for (int step = 0; step < 6000; step++) {
    ApplyRandomOp(rng, l, m);
    ApplyRandomOp(twin_rng, twin, twin_m);
    ASSERT_EQ(l.Size(), m.size()) << "step " << step;
    ASSERT_EQ(Shape(l), Shape(twin)) << "step " << step;
    size_t plain_nodes = 0, plain_elems = 0;
    for (size_t i = 0; i < l.node_count(); i++) {
      plain_nodes += l.node_plain(i);
      bool inner = i > 0 && i + 1 < l.node_count();
      if (!inner) {
        ASSERT_FALSE(l.node_compressed(i)) << "step " << step;
      } else if (l.node_plain(i)) {
        ASSERT_TRUE(l.node_compressed(i)) << "step " << step;
      }
    }
    max_plain = std::max(max_plain, plain_nodes);
    if (step % 10 == 0) {  // walking every element inflates every node: not every step
      l.ForEachWithForm([&](std::string_view e, bool plain) {
        EXPECT_EQ(plain, e.size() >= kThreshold) << "step " << step << " size " << e.size();
        plain_elems += plain;
      });
      ASSERT_EQ(plain_nodes, plain_elems) << "step " << step;  // one element a plain node
    }
    if (step % 50 == 0) {
      ASSERT_EQ(Contents(l), m) << "step " << step;
      ASSERT_EQ(Reversed(l), m) << "step " << step;
    }
  }
  EXPECT_GT(max_plain, 10u);
  EXPECT_EQ(Contents(l), m);
  EXPECT_EQ(Shape(*static_cast<ListValue*>(l.Clone().get())), Shape(l));
}

INSTANTIATE_TEST_SUITE_P(Fills, ListPlainFuzz, ::testing::Values(-2, -1, 1, 3, 128));

}  // namespace
}  // namespace kv::store
