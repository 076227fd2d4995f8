// A counter that many threads add to without sharing a cache line: each thread adds to its own
// slot (chosen by SetCounterShard, e.g. a poll group's index) and readers sum the slots.
#pragma once

#include <atomic>
#include <cstdint>

namespace kv {

// The calling thread's slot; threads that never set one share slot 0.
void SetCounterShard(unsigned shard);
unsigned CounterShard();

class ShardedCounter {
 public:
  static constexpr unsigned kShards = 64;

  void Add(uint64_t n) {
    slots_[CounterShard() % kShards].v.fetch_add(n, std::memory_order_relaxed);
  }
  uint64_t Load() const {
    uint64_t sum = 0;
    for (const auto& s : slots_) sum += s.v.load(std::memory_order_relaxed);
    return sum;
  }
  void Reset() {
    for (auto& s : slots_) s.v.store(0, std::memory_order_relaxed);
  }

 private:
  struct alignas(64) Slot {
    std::atomic<uint64_t> v{0};
  };
  Slot slots_[kShards];
};

}  // namespace kv
