#include "persist/crc64.h"

#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace kv::persist {
namespace {

constexpr uint64_t kPoly = 0xad93d23594c935a9ULL;  // x^64 implied, bit i = coefficient of x^i
constexpr uint64_t kPolyReflected = 0x95ac9329ac4bc9b5ULL;

struct Tables {
  uint64_t t[8][256];
  Tables() {
    for (int i = 0; i < 256; i++) {
      uint64_t c = i;
      for (int k = 0; k < 8; k++) c = (c & 1) ? (c >> 1) ^ kPolyReflected : c >> 1;
      t[0][i] = c;
    }
    for (int i = 0; i < 256; i++) {
      for (int k = 1; k < 8; k++) t[k][i] = (t[k - 1][i] >> 8) ^ t[0][t[k - 1][i] & 0xff];
    }
  }
};

const Tables& GetTables() {
  static const Tables tables;
  return tables;
}

uint64_t Load64(const uint8_t* p) {
  uint64_t v;
  memcpy(&v, p, 8);
  return v;  // little-endian hosts only (x86-64, aarch64)
}

#if defined(__x86_64__)
// x^n mod P, as a polynomial with bit i = coefficient of x^i.
uint64_t XPowMod(int n) {
  uint64_t r = 1;
  for (int i = 0; i < n; i++) r = (r & (1ULL << 63)) ? (r << 1) ^ kPoly : r << 1;
  return r;
}

uint64_t Reverse64(uint64_t v) {
  uint64_t r = 0;
  for (int i = 0; i < 64; i++) r |= ((v >> i) & 1) << (63 - i);
  return r;
}

// Folding constants for a shift of `bits`: a 16-byte lane X stands for the polynomial
// Xfirst·x^64 + Xsecond (the first eight bytes have the higher degrees, bit-reflected). Moving it
// `bits` further left is Xfirst·x^(bits+64) + Xsecond·x^bits (mod P). A carry-less product of
// bit-reflected operands comes out one degree short, so each constant is x^(k-1) mod P.
__m128i ShiftConstant(int bits) {
  return _mm_set_epi64x(static_cast<int64_t>(Reverse64(XPowMod(bits - 1))),
                        static_cast<int64_t>(Reverse64(XPowMod(bits + 64 - 1))));
}

struct FoldConstants {
  __m128i by256 = ShiftConstant(2048);  // 256 bytes: four 64-byte registers ahead
  __m128i by64 = ShiftConstant(512);
  __m128i by48 = ShiftConstant(384);
  __m128i by32 = ShiftConstant(256);
  __m128i by16 = ShiftConstant(128);
};

const FoldConstants& GetFoldConstants() {
  static const FoldConstants k;
  return k;
}

__attribute__((target("pclmul,sse4.1"))) inline __m128i Fold(__m128i x, __m128i k) {
  return _mm_xor_si128(_mm_clmulepi64_si128(x, k, 0x00), _mm_clmulepi64_si128(x, k, 0x11));
}

// Folds the whole 16-byte blocks of `p` (at least 64 bytes) into one lane, then finishes with the
// table code: the CRC of a message is its polynomial times x^64 mod P, which is exactly what the
// table code computes for the 16 folded bytes with a zero initial value.
__attribute__((target("pclmul,sse4.1"))) uint64_t Crc64Fold(uint64_t crc, const uint8_t* p,
                                                           size_t len) {
  const FoldConstants& k = GetFoldConstants();
  size_t blocks = len / 16;
  __m128i x0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  __m128i x1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16));
  __m128i x2 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 32));
  __m128i x3 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 48));
  x0 = _mm_xor_si128(x0, _mm_set_epi64x(0, static_cast<int64_t>(crc)));
  size_t i = 4;
  for (; i + 4 <= blocks; i += 4) {
    const __m128i* q = reinterpret_cast<const __m128i*>(p + i * 16);
    x0 = _mm_xor_si128(Fold(x0, k.by64), _mm_loadu_si128(q));
    x1 = _mm_xor_si128(Fold(x1, k.by64), _mm_loadu_si128(q + 1));
    x2 = _mm_xor_si128(Fold(x2, k.by64), _mm_loadu_si128(q + 2));
    x3 = _mm_xor_si128(Fold(x3, k.by64), _mm_loadu_si128(q + 3));
  }
  __m128i x = _mm_xor_si128(Fold(x0, k.by16), x1);
  x = _mm_xor_si128(Fold(x, k.by16), x2);
  x = _mm_xor_si128(Fold(x, k.by16), x3);
  for (; i < blocks; i++) {
    x = _mm_xor_si128(Fold(x, k.by16),
                      _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i * 16)));
  }
  uint8_t lane[16];
  _mm_storeu_si128(reinterpret_cast<__m128i*>(lane), x);
  uint64_t r = Crc64Table(0, lane, 16);
  return Crc64Table(r, p + blocks * 16, len - blocks * 16);
}

// The same folding over 64-byte registers (VPCLMULQDQ): four registers of four lanes each take
// 256 bytes per round, then fold into one register, and its four lanes into one. Needs len >= 256.
__attribute__((target("avx512f,avx512vl,vpclmulqdq,pclmul,sse4.1"))) inline __m512i Fold512(
    __m512i x, __m512i k, __m512i next) {
  return _mm512_ternarylogic_epi64(_mm512_clmulepi64_epi128(x, k, 0x00),
                                   _mm512_clmulepi64_epi128(x, k, 0x11), next, 0x96);
}

__attribute__((target("avx512f"))) inline __m512i Load512(const uint8_t* p) {
  return _mm512_loadu_si512(p);
}

// The 16-byte constant in each of a register's four lanes.
__attribute__((target("avx512f"))) inline __m512i Broadcast(__m128i c) {
  int64_t v[2];
  _mm_storeu_si128(reinterpret_cast<__m128i*>(v), c);
  return _mm512_set_epi64(v[1], v[0], v[1], v[0], v[1], v[0], v[1], v[0]);
}

__attribute__((target("avx512f,avx512vl,vpclmulqdq,pclmul,sse4.1"))) uint64_t Crc64Fold512(
    uint64_t crc, const uint8_t* p, size_t len) {
  const FoldConstants& k = GetFoldConstants();
  __m512i x0 = _mm512_xor_si512(Load512(p + 0), _mm512_set_epi64(0, 0, 0, 0, 0, 0, 0,
                                                           static_cast<int64_t>(crc)));
  __m512i x1 = Load512(p + 64), x2 = Load512(p + 128), x3 = Load512(p + 192);
  const __m512i by256 = Broadcast(k.by256);
  size_t i = 256;
  for (; i + 256 <= len; i += 256) {
    x0 = Fold512(x0, by256, Load512(p + i));
    x1 = Fold512(x1, by256, Load512(p + i + 64));
    x2 = Fold512(x2, by256, Load512(p + i + 128));
    x3 = Fold512(x3, by256, Load512(p + i + 192));
  }
  const __m512i by64 = Broadcast(k.by64);
  __m512i x = Fold512(x0, by64, x1);
  x = Fold512(x, by64, x2);
  x = Fold512(x, by64, x3);
  for (; i + 64 <= len; i += 64) x = Fold512(x, by64, Load512(p + i));
  // The register's lanes, lowest address (highest degree) first, moved 48, 32 and 16 bytes.
  __m128i lanes[4];
  _mm512_storeu_si512(lanes, x);
  __m128i r = _mm_xor_si128(Fold(lanes[0], k.by48), Fold(lanes[1], k.by32));
  r = _mm_xor_si128(r, Fold(lanes[2], k.by16));
  r = _mm_xor_si128(r, lanes[3]);
  for (; i + 16 <= len; i += 16) {
    r = _mm_xor_si128(Fold(r, k.by16), _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i)));
  }
  uint8_t lane[16];
  _mm_storeu_si128(reinterpret_cast<__m128i*>(lane), r);
  return Crc64Table(Crc64Table(0, lane, 16), p + i, len - i);
}

bool DetectWideFolding() {
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
         __builtin_cpu_supports("vpclmulqdq") && __builtin_cpu_supports("pclmul");
}
bool DetectFolding() { return __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1"); }
#endif

}  // namespace

uint64_t Crc64Table(uint64_t crc, const void* data, size_t len) {
  const Tables& tb = GetTables();
  const uint8_t* p = static_cast<const uint8_t*>(data);
  while (len >= 8) {
    crc ^= Load64(p);
    crc = tb.t[7][crc & 0xff] ^ tb.t[6][(crc >> 8) & 0xff] ^ tb.t[5][(crc >> 16) & 0xff] ^
          tb.t[4][(crc >> 24) & 0xff] ^ tb.t[3][(crc >> 32) & 0xff] ^
          tb.t[2][(crc >> 40) & 0xff] ^ tb.t[1][(crc >> 48) & 0xff] ^ tb.t[0][crc >> 56];
    p += 8;
    len -= 8;
  }
  while (len--) crc = tb.t[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
  return crc;
}

bool Crc64Supports(Crc64Impl impl) {
#if defined(__x86_64__)
  static const bool fold16 = DetectFolding();
  static const bool fold64 = fold16 && DetectWideFolding();
  return impl == Crc64Impl::kTable || (impl == Crc64Impl::kFold16 && fold16) ||
         (impl == Crc64Impl::kFold64 && fold64);
#else
  return impl == Crc64Impl::kTable;
#endif
}

uint64_t Crc64Using(Crc64Impl impl, uint64_t crc, const void* data, size_t len) {
#if defined(__x86_64__)
  const auto* p = static_cast<const uint8_t*>(data);
  if (impl == Crc64Impl::kFold64 && len >= 256) return Crc64Fold512(crc, p, len);
  if (impl != Crc64Impl::kTable && len >= 128) return Crc64Fold(crc, p, len);
#endif
  return Crc64Table(crc, data, len);
}

uint64_t Crc64(uint64_t crc, const void* data, size_t len) {
  static const Crc64Impl best = Crc64Supports(Crc64Impl::kFold64)   ? Crc64Impl::kFold64
                                : Crc64Supports(Crc64Impl::kFold16) ? Crc64Impl::kFold16
                                                                     : Crc64Impl::kTable;
  return Crc64Using(best, crc, data, len);
}

}  // namespace kv::persist
