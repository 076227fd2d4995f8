// Fast seeded 64-bit hashing for hash tables. The seed is random per process so that
// adversarial key sets cannot be prepared in advance.
#pragma once

#include <cstdint>
#include <string_view>

namespace kv {

uint64_t Hash64(std::string_view data, uint64_t seed);
// The process-wide seed, chosen at startup.
uint64_t HashSeed();
inline uint64_t HashKey(std::string_view data) { return Hash64(data, HashSeed()); }

// xoshiro256** pseudo-random numbers; one generator per thread.
uint64_t RandomU64();
// Uniform in [0, n); n > 0.
inline uint64_t RandomBelow(uint64_t n) { return RandomU64() % n; }

}  // namespace kv
