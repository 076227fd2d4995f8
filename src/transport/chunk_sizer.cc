#include "transport/chunk_sizer.h"

#include <algorithm>

namespace kv::transport {

ChunkSizer::ChunkSizer(const Config& cfg) : cfg_(cfg) {
  cfg_.min = std::max<uint32_t>(cfg_.min, 1);
  cfg_.max = std::max(cfg_.max, cfg_.min);
  cfg_.window = std::max<uint32_t>(cfg_.window, 1);
  chunk_ = cfg_.min;
}

void ChunkSizer::StartWindow(int64_t now_us) {
  count_ = 0;
  bytes_ = 0;
  latency_sum_us_ = 0;
  window_start_us_ = now_us;
}

void ChunkSizer::OnCompletion(uint32_t bytes, int64_t latency_us, int64_t now_us) {
  if (window_start_us_ < 0) {
    // The first window starts when the first chunk was posted.
    StartWindow(now_us - std::max<int64_t>(latency_us, 0));
  }
  ++count_;
  bytes_ += bytes;
  latency_sum_us_ += std::max<int64_t>(latency_us, 0);
  if (count_ < cfg_.window) return;

  int64_t avg_latency = latency_sum_us_ / count_;
  int64_t elapsed = std::max<int64_t>(now_us - window_start_us_, 1);
  uint64_t bytes_per_s = bytes_ * 1000000ull / static_cast<uint64_t>(elapsed);
  if (avg_latency > cfg_.slow_latency_us) {
    chunk_ = std::max(cfg_.min, chunk_ / 2);
  } else if (avg_latency < cfg_.fast_latency_us && bytes_per_s >= cfg_.grow_bytes_per_s) {
    chunk_ = static_cast<uint32_t>(std::min<uint64_t>(cfg_.max, uint64_t{chunk_} * 2));
  }
  StartWindow(now_us);
}

void ChunkSizer::OnError(int64_t now_us) {
  chunk_ = std::max(cfg_.min, chunk_ / 2);
  StartWindow(now_us);
}

}  // namespace kv::transport
