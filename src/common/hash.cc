#include "common/hash.h"

#include <cstring>
#include <random>

namespace kv {

uint64_t Hash64(std::string_view data, uint64_t seed) {
  // MurmurHash64A.
  constexpr uint64_t m = 0xc6a4a7935bd1e995ULL;
  constexpr int r = 47;
  const size_t len = data.size();
  const unsigned char* p = reinterpret_cast<const unsigned char*>(data.data());
  uint64_t h = seed ^ (len * m);
  const unsigned char* end = p + (len & ~size_t{7});
  for (; p != end; p += 8) {
    uint64_t k;
    memcpy(&k, p, 8);
    k *= m;
    k ^= k >> r;
    k *= m;
    h ^= k;
    h *= m;
  }
  switch (len & 7) {
    case 7: h ^= uint64_t(p[6]) << 48; [[fallthrough]];
    case 6: h ^= uint64_t(p[5]) << 40; [[fallthrough]];
    case 5: h ^= uint64_t(p[4]) << 32; [[fallthrough]];
    case 4: h ^= uint64_t(p[3]) << 24; [[fallthrough]];
    case 3: h ^= uint64_t(p[2]) << 16; [[fallthrough]];
    case 2: h ^= uint64_t(p[1]) << 8; [[fallthrough]];
    case 1: h ^= uint64_t(p[0]); h *= m;
  }
  h ^= h >> r;
  h *= m;
  h ^= h >> r;
  return h;
}

uint64_t HashSeed() {
  static const uint64_t seed = std::random_device{}() * 0x9E3779B97F4A7C15ULL ^ std::random_device{}();
  return seed;
}

namespace {
struct Xoshiro {
  uint64_t s[4];
  Xoshiro() {
    std::random_device rd;
    for (auto& x : s) x = (uint64_t(rd()) << 32) ^ rd() ^ 0x9E3779B97F4A7C15ULL;
  }
  static uint64_t Rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t Next() {
    uint64_t result = Rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = Rotl(s[3], 45);
    return result;
  }
};
}  // namespace

uint64_t RandomU64() {
  thread_local Xoshiro gen;
  return gen.Next();
}

}  // namespace kv
