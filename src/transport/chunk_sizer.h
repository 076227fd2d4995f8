// Adaptive chunk size: a pure function of the completions it is shown and of the time it is
// given (no clock of its own, so tests drive it with a fake one).
//
// Policy: start at `min`; every `window` completions look at the window's average completion
// latency and throughput. Double (up to `max`) while latency is below `fast_latency_us` and
// throughput at least `grow_bytes_per_s`; halve (down to `min`) when latency exceeds
// `slow_latency_us`; halve at once on an error. Sizes stay powers of two times `min`.
#pragma once

#include <cstdint>

namespace kv::transport {

class ChunkSizer {
 public:
  struct Config {
    uint32_t min = 128 * 1024;
    uint32_t max = 1024 * 1024;
    uint32_t window = 8;                       // completions per decision
    int64_t fast_latency_us = 4000;            // grow only below this average latency
    int64_t slow_latency_us = 50000;           // shrink above this average latency
    uint64_t grow_bytes_per_s = 200ull << 20;  // and only at or above this throughput
  };

  explicit ChunkSizer(const Config& cfg);

  uint32_t chunk() const { return chunk_; }
  // One completed chunk: its size, its latency (post to completion) and the time it completed.
  void OnCompletion(uint32_t bytes, int64_t latency_us, int64_t now_us);
  // A failed operation: shrink now and start a new window.
  void OnError(int64_t now_us);

 private:
  void StartWindow(int64_t now_us);

  Config cfg_;
  uint32_t chunk_;
  uint32_t count_ = 0;
  uint64_t bytes_ = 0;
  int64_t latency_sum_us_ = 0;
  int64_t window_start_us_ = -1;
};

}  // namespace kv::transport
