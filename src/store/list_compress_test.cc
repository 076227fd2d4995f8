// ListValue under list-compress-depth: which nodes are compressed (the depth
// rule), that every operation gives the same elements as an uncompressed list
// fed the same operations, and that compression saves memory.
#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <random>
#include <string>
#include <tuple>

#include "store/list_type.h"

namespace kv::store {
namespace {

using Model = std::deque<std::string>;

Model Contents(const ListValue &l) {
  Model m;
  l.ForEach([&](std::string_view e, std::string_view) { m.emplace_back(e); });
  return m;
}

Model Reversed(const ListValue &l) {
  Model m;
  l.Scan(true, [&](std::string_view e) {
    m.emplace_front(e);
    return true;
  });
  return m;
}

// Compressible elements: a counter and a long run (every node, even of one
// element, is over the 48 bytes worth compressing and shrinks by more than 8).
std::string Elem(size_t i) { return "element:" + std::to_string(i) + std::string(60, 'x'); }

// The depth rule: the `depth` nodes at each end plain; every node between them
// compressed (all nodes here are compressible).
void ExpectDepthRule(const ListValue &l, size_t depth, const char *where) {
  size_t n = l.node_count();
  for (size_t i = 0; i < n; i++) {
    bool inner = depth > 0 && i >= depth && i + depth < n;
    ASSERT_EQ(l.node_compressed(i), inner) << where << ": node " << i << " of " << n;
  }
}

TEST(ListCompress, DepthZeroCompressesNothing) {
  ListValue l(8, 0);
  for (size_t i = 0; i < 200; i++) l.PushBack(Elem(i));
  EXPECT_GT(l.node_count(), 10u);
  EXPECT_EQ(l.compressed_node_count(), 0u);
}

TEST(ListCompress, InnerNodesCompressedEndsNot) {
  for (size_t depth : {1, 2, 3}) {
    ListValue l(8, static_cast<int64_t>(depth));
    for (size_t i = 0; i < 200; i++) i % 2 ? l.PushBack(Elem(i)) : l.PushFront(Elem(i));
    EXPECT_EQ(l.compressed_node_count(), l.node_count() - 2 * depth) << depth;
    ExpectDepthRule(l, depth, "pushes");
    while (l.Size() > 10) l.PopFront();  // inner nodes become ends and are decompressed
    ExpectDepthRule(l, depth, "pops");
  }
}

TEST(ListCompress, FewNodesStayPlain) {
  ListValue l(8, 2);
  for (size_t i = 0; i < 8 * 4; i++) l.PushBack(Elem(i));  // 4 nodes = 2 * depth
  EXPECT_EQ(l.node_count(), 4u);
  EXPECT_EQ(l.compressed_node_count(), 0u);
  l.PushBack(Elem(99));  // a fifth node makes node 2 inner
  EXPECT_EQ(l.node_count(), 5u);
  ExpectDepthRule(l, 2, "five nodes");
}

TEST(ListCompress, SmallOrIncompressibleNodesStayPlain) {
  ListValue l(1, 1);                                 // one element per node
  for (int i = 0; i < 10; i++) l.PushBack("short");  // 7 bytes: under the 48 worth compressing
  EXPECT_EQ(l.compressed_node_count(), 0u);
  std::mt19937 rng(7);
  ListValue r(1, 1);
  for (int i = 0; i < 10; i++) {
    std::string noise(200, '\0');
    for (auto &ch : noise) ch = static_cast<char>(rng());
    r.PushBack(noise);
  }
  EXPECT_EQ(r.compressed_node_count(), 0u);
}

TEST(ListCompress, ReadsLeaveNodesCompressed) {
  ListValue l(8, 1);
  for (size_t i = 0; i < 100; i++) l.PushBack(Elem(i));
  size_t compressed = l.compressed_node_count();
  ASSERT_GT(compressed, 5u);
  EXPECT_EQ(l.At(50), Elem(50));
  std::string got;
  l.VisitRange(40, 3, true, [&](std::string_view e) { got += std::string(e) + ","; });
  EXPECT_EQ(got, Elem(42) + "," + Elem(41) + "," + Elem(40) + ",");
  EXPECT_EQ(l.compressed_node_count(), compressed);
  ListValue plain(8, 0);
  for (size_t i = 0; i < 100; i++) plain.PushBack(Elem(i));
  EXPECT_EQ(l.uncompressed_bytes(), plain.uncompressed_bytes());
  EXPECT_LT(l.MemoryUsage(), plain.MemoryUsage());
}

TEST(ListCompress, MemoryUsageShrinks) {
  ListValue plain(-2, 0), packed(-2, 1);
  for (size_t i = 0; i < 10000; i++) {
    plain.PushBack(Elem(i));
    packed.PushBack(Elem(i));
  }
  EXPECT_EQ(Contents(plain), Contents(packed));
  EXPECT_LT(packed.MemoryUsage() * 2, plain.MemoryUsage());
}

TEST(ListCompress, CloneKeepsCompression) {
  ListValue l(8, 1);
  for (size_t i = 0; i < 100; i++) l.PushBack(Elem(i));
  auto c = l.Clone();
  auto *cl = static_cast<ListValue *>(c.get());
  EXPECT_EQ(cl->compressed_node_count(), l.compressed_node_count());
  EXPECT_EQ(cl->compress_depth(), 1u);
  EXPECT_EQ(Contents(*cl), Contents(l));
  cl->Set(50, "changed");
  EXPECT_EQ(cl->At(50), "changed");
  EXPECT_EQ(l.At(50), Elem(50));
}

// Every operation on compressed lists against an uncompressed reference list
// and a model.
class ListCompressFuzz : public ::testing::TestWithParam<std::tuple<int64_t, int64_t>> {};

void RandomOp(std::mt19937 &rng, ListValue &a, ListValue &b, Model &m, size_t *next) {
  std::string v = Elem((*next)++ % 40);  // repeats, so pivots and LREM find matches
  std::string pivot = Elem(rng() % 40);
  size_t op = rng() % 12;
  auto both = [&](auto &&f) { f(a), f(b); };
  if (op < 3) {
    both([&](ListValue &l) { l.PushBack(v); });
    m.push_back(v);
  } else if (op < 6) {
    both([&](ListValue &l) { l.PushFront(v); });
    m.push_front(v);
  } else if (op == 6 && !m.empty()) {
    bool front = rng() % 2;
    std::string want = front ? m.front() : m.back();
    front ? m.pop_front() : m.pop_back();
    both([&](ListValue &l) { EXPECT_EQ(front ? l.PopFront() : l.PopBack(), want); });
  } else if (op == 7 && !m.empty()) {  // LSET, LINDEX
    size_t i = rng() % m.size();
    both([&](ListValue &l) {
      EXPECT_EQ(l.At(i), m[i]);
      l.Set(i, v);
    });
    m[i] = v;
  } else if (op == 8) {  // LINSERT
    bool after = rng() % 2;
    auto it = std::find(m.begin(), m.end(), pivot);
    both([&](ListValue &l) { EXPECT_EQ(l.InsertAtPivot(pivot, v, after), it != m.end()); });
    if (it != m.end()) m.insert(after ? it + 1 : it, v);
  } else if (op == 9) {  // LREM
    size_t limit = rng() % 3;
    bool tail = rng() % 2;
    size_t removed = 0;
    for (size_t j = 0; j < m.size() && (limit == 0 || removed < limit);) {
      size_t idx = tail ? m.size() - 1 - j : j;
      if (m[idx] != pivot) {
        j++;
      } else {
        m.erase(m.begin() + static_cast<ptrdiff_t>(idx));
        removed++;
      }
    }
    both([&](ListValue &l) { EXPECT_EQ(l.Remove(pivot, limit, tail), removed); });
  } else if (op == 10) {  // LTRIM
    size_t k = rng() % 5;
    bool front = rng() % 2;
    both([&](ListValue &l) { front ? l.EraseFront(k) : l.EraseBack(k); });
    for (size_t j = 0; j < k && !m.empty(); j++) front ? m.pop_front() : m.pop_back();
  } else if (!m.empty()) {  // LRANGE both ways, LPOS-style scans
    size_t start = rng() % m.size(), n = 1 + rng() % (m.size() - start);
    bool reverse = rng() % 2;
    Model got_a, got_b;
    a.VisitRange(start, n, reverse, [&](std::string_view e) { got_a.emplace_back(e); });
    b.VisitRange(start, n, reverse, [&](std::string_view e) { got_b.emplace_back(e); });
    EXPECT_EQ(got_a, got_b);
    Model want(m.begin() + static_cast<ptrdiff_t>(start),
               m.begin() + static_cast<ptrdiff_t>(start + n));
    if (reverse) std::reverse(want.begin(), want.end());
    EXPECT_EQ(got_a, want);
  }
}

TEST_P(ListCompressFuzz, MatchesUncompressedList) {
  auto [fill, depth] = GetParam();
  std::mt19937 rng(static_cast<uint32_t>(fill * 31 + depth));
  ListValue packed(fill, depth), plain(fill, 0);
  Model m;
  size_t next = 0, max_compressed = 0;
  for (int step = 0; step < 6000; step++) {
    RandomOp(rng, packed, plain, m, &next);
    ASSERT_EQ(packed.Size(), m.size()) << "step " << step;
    ASSERT_NO_FATAL_FAILURE(ExpectDepthRule(packed, static_cast<size_t>(depth), "fuzz"))
        << "step " << step;
    max_compressed = std::max(max_compressed, packed.compressed_node_count());
    if (step % 100 == 0) {
      ASSERT_EQ(Contents(packed), m) << "step " << step;
      ASSERT_EQ(Reversed(packed), m) << "step " << step;
      ASSERT_EQ(packed.uncompressed_bytes(), plain.uncompressed_bytes()) << "step " << step;
    }
  }
  EXPECT_GT(max_compressed, 2u);  // the walk did reach compressed inner nodes
  EXPECT_EQ(Contents(packed), Contents(plain));
}

INSTANTIATE_TEST_SUITE_P(FillsAndDepths, ListCompressFuzz,
                         ::testing::Combine(::testing::Values(-1, 1, 4, 16),
                                            ::testing::Values(1, 2, 3)));

}  // namespace
}  // namespace kv::store
