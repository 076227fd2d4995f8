#include "common/sharded_counter.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace kv {
namespace {

TEST(ShardedCounter, SumsAddsFromManyThreads) {
  ShardedCounter c;
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < 8; t++) {
    threads.emplace_back([&c, t] {
          SetCounterShard(t);
      for (int i = 0; i < 10000; i++) c.Add(3);
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(c.Load(), 8u * 10000u * 3u);
  c.Reset();
  EXPECT_EQ(c.Load(), 0u);
  SetCounterShard(ShardedCounter::kShards + 5);  // wraps around
  c.Add(7);
  EXPECT_EQ(c.Load(), 7u);
}

}  // namespace
}  // namespace kv
