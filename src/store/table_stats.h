// What DEBUG HTSTATS reports of one bucket array of a chained hash table: Redis' dictGetStats
// figures (IntrusiveTable::Stats computes them; the server formats them).
#pragma once

#include <cstddef>
#include <vector>

namespace kv::store {

struct TableStats {
  size_t size = 0;       // buckets
  size_t used = 0;       // entries
  size_t slots = 0;      // non-empty buckets
  size_t max_chain = 0;  // the longest chain
  size_t total_chain = 0;
  // chains[i]: buckets whose chain holds i entries (i capped at kChainsTracked - 1).
  static constexpr size_t kChainsTracked = 50;
  std::vector<size_t> chains;
};

}  // namespace kv::store
