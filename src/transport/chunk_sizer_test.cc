#include "transport/chunk_sizer.h"

#include <gtest/gtest.h>

namespace kv::transport {
namespace {

// A fake clock: tests advance time explicitly.
struct FakeClock {
  int64_t now_us = 1000000;
  int64_t Advance(int64_t us) { return now_us += us; }
};

ChunkSizer::Config Cfg() {
  ChunkSizer::Config c;
  c.min = 128 * 1024;
  c.max = 1024 * 1024;
  c.window = 4;
  c.fast_latency_us = 2000;
  c.slow_latency_us = 20000;
  c.grow_bytes_per_s = 1ull << 30;  // 1 GiB/s
  return c;
}

// Feeds one window of completions of the current chunk size, each taking `latency_us`, back to
// back (so throughput = chunk / latency).
void Window(ChunkSizer& s, FakeClock& clk, int64_t latency_us) {
  for (int i = 0; i < 4; ++i) s.OnCompletion(s.chunk(), latency_us, clk.Advance(latency_us));
}

TEST(TransportChunkSizer, GrowsToMaxWhileFastThenHolds) {
  ChunkSizer s(Cfg());
  FakeClock clk;
  EXPECT_EQ(s.chunk(), 128u * 1024);
  Window(s, clk, 50);  // 128 KiB / 50 us = 2.6 GB/s, fast
  EXPECT_EQ(s.chunk(), 256u * 1024);
  Window(s, clk, 100);
  EXPECT_EQ(s.chunk(), 512u * 1024);
  Window(s, clk, 200);
  EXPECT_EQ(s.chunk(), 1024u * 1024);
  Window(s, clk, 400);
  EXPECT_EQ(s.chunk(), 1024u * 1024);  // capped
}

TEST(TransportChunkSizer, DoesNotGrowWhenThroughputIsLow) {
  ChunkSizer s(Cfg());
  FakeClock clk;
  // Fast completions, but with long gaps between them: low throughput.
  for (int i = 0; i < 4; ++i) {
    clk.Advance(100000);
    s.OnCompletion(s.chunk(), 100, clk.Advance(100));
  }
  EXPECT_EQ(s.chunk(), 128u * 1024);
}

TEST(TransportChunkSizer, ShrinksOnSlowCompletionsAndErrors) {
  ChunkSizer s(Cfg());
  FakeClock clk;
  Window(s, clk, 50);
  Window(s, clk, 100);
  Window(s, clk, 200);
  ASSERT_EQ(s.chunk(), 1024u * 1024);
  Window(s, clk, 30000);  // slow
  EXPECT_EQ(s.chunk(), 512u * 1024);
  s.OnError(clk.Advance(10));
  EXPECT_EQ(s.chunk(), 256u * 1024);
  s.OnError(clk.Advance(10));
  s.OnError(clk.Advance(10));
  EXPECT_EQ(s.chunk(), 128u * 1024);  // floored
  // Medium latency: neither fast nor slow, holds.
  Window(s, clk, 5000);
  EXPECT_EQ(s.chunk(), 128u * 1024);
}

TEST(TransportChunkSizer, FixedWhenBoundsAreEqual) {
  ChunkSizer::Config c = Cfg();
  c.min = c.max = 1 << 20;
  ChunkSizer s(c);
  FakeClock clk;
  Window(s, clk, 30000);
  s.OnError(clk.Advance(1));
  EXPECT_EQ(s.chunk(), 1u << 20);
}

}  // namespace
}  // namespace kv::transport
