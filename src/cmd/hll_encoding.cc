// The HyperLogLog value format's arithmetic (Redis 7.0 hyperloglog.c): hashing an element to its
// register, new values, sparse to dense conversion, sparse register updates, the cardinality
// estimate and register merges. The format itself is described in hll_encoding.h.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "cmd/hll_encoding.h"
#include "common/hash.h"

namespace kv::cmd::hll {

// The register an element goes to, and the length of its hash's 000...1 pattern.
int PatternLength(std::string_view ele, long* reg) {
  uint64_t hash = Hash64(ele, 0xadc83b19ULL);  // MurmurHash64A, Redis' seed
  *reg = static_cast<long>(hash & (kRegisters - 1));
  hash >>= kP;
  hash |= uint64_t{1} << kQ;  // the loop ends, with a count of at most Q + 1
  int count = 1;
  for (uint64_t bit = 1; (hash & bit) == 0; bit <<= 1) count++;
  return count;
}

// ---- New values and sparse updates ------------------------------------------------------------

// An empty HLL: sparse, all registers in XZERO runs.
std::string NewHll() {
  int runs = (kRegisters + kSparseXZeroMaxLen - 1) / kSparseXZeroMaxLen;
  std::string s(kHeader + static_cast<size_t>(runs) * 2, '\0');
  memcpy(s.data(), "HYLL", 4);
  s[4] = static_cast<char>(kSparse);
  uint8_t* p = Bytes(s) + kHeader;
  for (long left = kRegisters; left > 0; p += 2) {
    int n = static_cast<int>(std::min<long>(left, kSparseXZeroMaxLen));
    XZero(p, n);
    left -= n;
  }
  return s;
}

void InvalidateCache(std::string& s) { s[15] = static_cast<char>(s[15] | 0x80); }
void InvalidateCache(uint8_t* hdr) { hdr[15] |= 0x80; }

SparseOp DecodeOp(const uint8_t* p, const uint8_t* end) {
  if (IsZero(*p)) return {ZeroLen(*p), 0, 1, false};
  if (IsVal(*p)) return {ValLen(*p), ValValue(*p), 1, false};
  bool truncated = p + 1 >= end;
  long len = (((p[0] & 0x3f) << 8) | (truncated ? 0 : p[1])) + 1;
  return {len, 0, 2, truncated};
}

// Converts a sparse HLL to dense in place; false, and `s` unchanged, when the runs do not cover
// exactly the registers (corrupt).
bool SparseToDense(std::string& s) {
  if (static_cast<uint8_t>(s[4]) == kDense) return true;
  std::string dense(kDenseSize, '\0');
  memcpy(dense.data(), s.data(), kHeader);  // the magic and the cached cardinality
  dense[4] = static_cast<char>(kDense);
  uint8_t* regs = Bytes(dense) + kHeader;
  const uint8_t* p = Bytes(s);
  bool ok = ForEachSparseRun(p + kHeader, p + s.size(), [&](long first, long len, int value) {
    if (value == 0) return;  // the dense registers start at zero
    for (long i = first; i < first + len; i++) DenseSet(regs, i, static_cast<uint8_t>(value));
  });
  if (!ok) return false;
  s.swap(dense);
  return true;
}

// Redis' hllSparseSet: sets register `index` to `count` if larger, splitting the run that
// covers it and merging equal neighbours; promotes to dense where sparse cannot hold it.
// Returns 1 if changed, 0 if not, -1 if the HLL is corrupt.
int SparseSet(std::string& s, long index, uint8_t count, int64_t sparse_max_bytes) {
  auto promote = [&] {
    if (!SparseToDense(s)) return -1;
    DenseMax(Bytes(s) + kHeader, index, count);
    return 1;
  };
  if (count > kSparseValMax) return promote();
  size_t pos = kHeader, prev = std::string::npos;
  size_t end = s.size();
  long first = 0;
  auto at = [&](size_t i) { return static_cast<uint8_t>(s[i]); };
  SparseOp run{0, 0, 0, false};
  while (pos < end) {
    run = DecodeOp(Bytes(s) + pos, Bytes(s) + end);
    if (index <= first + run.len - 1) break;
    prev = pos;
    pos += run.oplen;
    first += run.len;
  }
  if (pos >= end) return -1;  // the runs end before the register
  uint8_t op = at(pos);
  bool is_zero = IsZero(op), is_xzero = IsXZero(op), is_val = !is_zero && !is_xzero;
  long runlen = run.len, span = run.len;
  bool done = false;
  if (is_val) {
    if (ValValue(op) >= count) return 0;
    if (runlen == 1) {
      s[pos] = static_cast<char>(Val(count, 1));
      done = true;
    }
  }
  if (!done && is_zero && runlen == 1) {
    s[pos] = static_cast<char>(Val(count, 1));
    done = true;
  }
  if (!done) {
    // Split the run into (before) VAL (after): at most XZERO VAL XZERO, 5 bytes.
    uint8_t seq[5];
    size_t n = 0;
    long last = first + span - 1;
    auto zeros = [&](long len) {
      if (len > kSparseZeroMaxLen) {
        XZero(seq + n, static_cast<int>(len));
        n += 2;
      } else {
        seq[n++] = Zero(static_cast<int>(len));
      }
    };
    if (is_zero || is_xzero) {
      if (index != first) zeros(index - first);
      seq[n++] = Val(count, 1);
      if (index != last) zeros(last - index);
    } else {
      int cur = ValValue(op);
      if (index != first) seq[n++] = Val(cur, static_cast<int>(index - first));
      seq[n++] = Val(count, 1);
      if (index != last) seq[n++] = Val(cur, static_cast<int>(last - index));
    }
    size_t oldlen = is_xzero ? 2 : 1;
    if (n > oldlen && static_cast<int64_t>(s.size() + (n - oldlen)) > sparse_max_bytes) {
      return promote();
    }
    s.replace(pos, oldlen, reinterpret_cast<const char*>(seq), n);
    // An XZERO cut short took its second byte from the terminator: Redis counts that byte in
    // the old length, so the value ends one byte short of the new sequence.
    if (run.truncated) s.pop_back();
    end = s.size();
  }
  // Merge adjacent VAL opcodes of the same value, scanning up to 5 opcodes from `prev`.
  size_t p = prev != std::string::npos ? prev : kHeader;
  for (int scan = 5; p < end && scan-- > 0;) {
    if (IsXZero(at(p))) {
      p += 2;
      continue;
    }
    if (IsZero(at(p))) {
      p++;
      continue;
    }
    if (p + 1 < end && IsVal(at(p + 1))) {
      int v1 = ValValue(at(p)), v2 = ValValue(at(p + 1));
      if (v1 == v2) {
        int len = ValLen(at(p)) + ValLen(at(p + 1));
        if (len <= kSparseValMaxLen) {
          s[p + 1] = static_cast<char>(Val(v1, len));
          s.erase(p, 1);
          end--;
          continue;  // the merged run may merge with the next one too
        }
      }
    }
    p++;
  }
  InvalidateCache(s);
  return 1;
}

// ---- Counting ---------------------------------------------------------------------------------

namespace {

constexpr double kAlphaInf = 0.721347520444481703680;  // 0.5 / ln(2)

// Register histograms of each representation (raw: one byte per register, for merges).
void DenseHisto(const uint8_t* r, int* histo) {
  for (long i = 0; i < kRegisters; i++) histo[DenseGet(r, i)]++;
}

bool SparseHisto(const uint8_t* p, size_t len, int* histo) {
  return ForEachSparseRun(p, p + len, [&](long, long n, int value) { histo[value] += n; });
}

double Sigma(double x) {
  if (x == 1.) return INFINITY;
  double z_prime, y = 1, z = x;
  do {
    x *= x;
    z_prime = z;
    z += x * y;
    y += y;
  } while (z_prime != z);
  return z;
}

double Tau(double x) {
  if (x == 0. || x == 1.) return 0.;
  double z_prime, y = 1.0, z = 1 - x;
  do {
    x = std::sqrt(x);
    z_prime = z;
    y *= 0.5;
    z -= std::pow(1 - x, 2) * y;
  } while (z_prime != z);
  return z / 3;
}

}  // namespace

// Otmar Ertl's estimate from the register histogram (Redis' hllCount).
uint64_t Estimate(const int* histo) {
  double m = kRegisters;
  double z = m * Tau((m - histo[kQ + 1]) / m);
  for (int j = kQ; j >= 1; --j) {
    z += histo[j];
    z *= 0.5;
  }
  z += m * Sigma(histo[0] / m);
  return static_cast<uint64_t>(llroundl(kAlphaInf * m * m / z));
}

// The cardinality of a valid HLL value; false when a sparse one is corrupt.
bool Count(std::string_view s, uint64_t* card) {
  int histo[64] = {};
  const auto* regs = reinterpret_cast<const uint8_t*>(s.data()) + kHeader;
  if (static_cast<uint8_t>(s[4]) == kDense) {
    DenseHisto(regs, histo);
  } else if (!SparseHisto(regs, s.size() - kHeader, histo)) {
    return false;
  }
  *card = Estimate(histo);
  return true;
}

// max[i] = MAX(max[i], register i of the HLL `s`); false when a sparse one is corrupt.
bool Merge(uint8_t* max, std::string_view s) {
  const auto* p = reinterpret_cast<const uint8_t*>(s.data());
  if (static_cast<uint8_t>(s[4]) == kDense) {
    for (long i = 0; i < kRegisters; i++) max[i] = std::max(max[i], DenseGet(p + kHeader, i));
    return true;
  }
  return ForEachSparseRun(p + kHeader, p + s.size(), [&](long first, long len, int value) {
    auto v = static_cast<uint8_t>(value);
    for (long i = first; i < first + len; i++) max[i] = std::max(max[i], v);
  });
}

}  // namespace kv::cmd::hll
