// HyperLogLog (Redis 7.0 hyperloglog.c): PFADD PFCOUNT PFMERGE PFDEBUG PFSELFTEST, on string
// values in Redis' exact bytes, so an HLL written by either server is read, counted and merged
// identically by the other.
//
// The value: a 16-byte header ("HYLL", the encoding, three unused bytes, the cached cardinality
// as 8 little-endian bytes whose top bit marks it stale), then 16384 registers of 6 bits each,
// either dense (12288 bytes, packed from each byte's least significant bit) or sparse (runs:
// ZERO 00xxxxxx for 1-64 zero registers, XZERO 01xxxxxx yyyyyyyy for up to 16384, VAL 1vvvvvxx
// for 1-4 registers of value 1-32). A sparse HLL turns dense when a register needs a value over
// 32 or the value would outgrow hll-sparse-max-bytes. Elements are hashed with MurmurHash64A
// (seed 0xadc83b19); the count is Otmar Ertl's estimator, as in Redis 7.0.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <string_view>

#include "cmd/command.h"
#include "cmd/context.h"
#include "cmd/registry.h"
#include "cmd/string_ops.h"
#include "common/hash.h"
#include "common/strutil.h"

namespace kv::cmd {
namespace {

using store::Entry;
using store::ObjType;
using store::Value;

constexpr int kP = 14;
constexpr int kQ = 64 - kP;
constexpr long kRegisters = 1 << kP;
constexpr int kBits = 6;
constexpr int kRegisterMax = (1 << kBits) - 1;
constexpr size_t kHeader = 16;
constexpr size_t kDenseRegBytes = (kRegisters * kBits + 7) / 8;
constexpr size_t kDenseSize = kHeader + kDenseRegBytes;
constexpr uint8_t kDense = 0, kSparse = 1;
constexpr int kSparseValMax = 32, kSparseValMaxLen = 4, kSparseZeroMaxLen = 64;
constexpr int kSparseXZeroMaxLen = 16384;
constexpr double kAlphaInf = 0.721347520444481703680;  // 0.5 / ln(2)

constexpr std::string_view kInvalidHll = "-INVALIDOBJ Corrupted HLL object detected";
constexpr std::string_view kNotHll = "-WRONGTYPE Key is not a valid HyperLogLog string value.";

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

// ---- Dense registers: r points at the 12288 register bytes -----------------------------------

uint8_t DenseGet(const uint8_t* r, long i) {
  size_t byte = static_cast<size_t>(i) * kBits / 8;
  unsigned fb = static_cast<unsigned>(i * kBits) & 7;
  unsigned b0 = r[byte];
  unsigned b1 = byte + 1 < kDenseRegBytes ? r[byte + 1] : 0;  // Redis reads sds' terminator
  return static_cast<uint8_t>(((b0 >> fb) | (b1 << (8 - fb))) & kRegisterMax);
}

void DenseSet(uint8_t* r, long i, uint8_t v) {
  size_t byte = static_cast<size_t>(i) * kBits / 8;
  unsigned fb = static_cast<unsigned>(i * kBits) & 7;
  unsigned fb8 = 8 - fb;
  r[byte] = static_cast<uint8_t>((r[byte] & ~(kRegisterMax << fb)) | (v << fb));
  if (byte + 1 < kDenseRegBytes) {  // the last register ends in its own byte
    r[byte + 1] = static_cast<uint8_t>((r[byte + 1] & ~(kRegisterMax >> fb8)) | (v >> fb8));
  }
}

// Sets register i to `count` if that is larger; true if it changed.
bool DenseMax(uint8_t* r, long i, uint8_t count) {
  if (count <= DenseGet(r, i)) return false;
  DenseSet(r, i, count);
  return true;
}

// ---- Sparse opcodes --------------------------------------------------------------------------

bool IsZero(uint8_t b) { return (b & 0xc0) == 0; }
bool IsXZero(uint8_t b) { return (b & 0xc0) == 0x40; }
bool IsVal(uint8_t b) { return (b & 0x80) != 0; }
int ZeroLen(uint8_t b) { return (b & 0x3f) + 1; }
int XZeroLen(const uint8_t* p) { return (((p[0] & 0x3f) << 8) | p[1]) + 1; }
int ValValue(uint8_t b) { return ((b >> 2) & 0x1f) + 1; }
int ValLen(uint8_t b) { return (b & 0x3) + 1; }
uint8_t Val(int value, int len) {
  return static_cast<uint8_t>(((value - 1) << 2 | (len - 1)) | 0x80);
}
uint8_t Zero(int len) { return static_cast<uint8_t>(len - 1); }
void XZero(uint8_t* p, int len) {
  int l = len - 1;
  p[0] = static_cast<uint8_t>((l >> 8) | 0x40);
  p[1] = static_cast<uint8_t>(l & 0xff);
}

uint8_t* Bytes(std::string& s) { return reinterpret_cast<uint8_t*>(s.data()); }

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

// Converts a sparse HLL to dense in place; false when the runs do not cover exactly the
// registers (corrupt).
bool SparseToDense(std::string& s) {
  if (static_cast<uint8_t>(s[4]) == kDense) return true;
  std::string dense(kDenseSize, '\0');
  memcpy(dense.data(), s.data(), kHeader);  // the magic and the cached cardinality
  dense[4] = static_cast<char>(kDense);
  uint8_t* regs = Bytes(dense) + kHeader;
  const uint8_t* p = reinterpret_cast<const uint8_t*>(s.data()) + kHeader;
  const uint8_t* end = reinterpret_cast<const uint8_t*>(s.data()) + s.size();
  long idx = 0;
  while (p < end) {
    if (IsZero(*p)) {
      idx += ZeroLen(*p);
      p++;
    } else if (IsXZero(*p)) {
      idx += XZeroLen(p);
      p += 2;
    } else {
      int runlen = ValLen(*p), value = ValValue(*p);
      if (runlen + idx > kRegisters) break;
      while (runlen--) DenseSet(regs, idx++, static_cast<uint8_t>(value));
      p++;
    }
  }
  if (idx != kRegisters) return false;
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
  long first = 0, span = 0;
  auto at = [&](size_t i) { return static_cast<uint8_t>(s[i]); };
  while (pos < end) {
    size_t oplen = 1;
    if (IsZero(at(pos))) {
      span = ZeroLen(at(pos));
    } else if (IsVal(at(pos))) {
      span = ValLen(at(pos));
    } else {
      if (pos + 1 >= end) return -1;
      span = XZeroLen(Bytes(s) + pos);
      oplen = 2;
    }
    if (index <= first + span - 1) break;
    prev = pos;
    pos += oplen;
    first += span;
  }
  if (span == 0 || pos >= end) return -1;
  uint8_t op = at(pos);
  bool is_zero = IsZero(op), is_xzero = IsXZero(op), is_val = !is_zero && !is_xzero;
  long runlen = is_zero ? ZeroLen(op) : is_xzero ? XZeroLen(Bytes(s) + pos) : ValLen(op);
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

// Register histograms of each representation (raw: one byte per register, for merges).
void DenseHisto(const uint8_t* r, int* histo) {
  for (long i = 0; i < kRegisters; i++) histo[DenseGet(r, i)]++;
}

bool SparseHisto(const uint8_t* p, size_t len, int* histo) {
  const uint8_t* end = p + len;
  long idx = 0;
  while (p < end) {
    if (IsZero(*p)) {
      int n = ZeroLen(*p);
      idx += n;
      histo[0] += n;
      p++;
    } else if (IsXZero(*p)) {
      if (p + 1 >= end) return false;
      int n = XZeroLen(p);
      idx += n;
      histo[0] += n;
      p += 2;
    } else {
      int n = ValLen(*p);
      idx += n;
      histo[ValValue(*p)] += n;
      p++;
    }
  }
  return idx == kRegisters;
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
  const auto* p = reinterpret_cast<const uint8_t*>(s.data()) + kHeader;
  if (static_cast<uint8_t>(s[4]) == kDense) {
    for (long i = 0; i < kRegisters; i++) max[i] = std::max(max[i], DenseGet(p, i));
    return true;
  }
  const auto* end = reinterpret_cast<const uint8_t*>(s.data()) + s.size();
  long i = 0;
  while (p < end) {
    if (IsZero(*p)) {
      i += ZeroLen(*p);
      p++;
    } else if (IsXZero(*p)) {
      if (p + 1 >= end) return false;
      i += XZeroLen(p);
      p += 2;
    } else {
      int runlen = ValLen(*p), value = ValValue(*p);
      if (runlen + i > kRegisters) break;
      while (runlen--) {
        max[i] = std::max(max[i], static_cast<uint8_t>(value));
        i++;
      }
      p++;
    }
  }
  return i == kRegisters;
}

// ---- Values -----------------------------------------------------------------------------------

// Redis' isHLLObjectOrReply: a string with the magic, a known encoding, and a dense one of the
// exact size. Answers the error otherwise.
bool IsHll(Context& c, const Entry* e) {
  if (!e->value.is_string()) {
    c.Error(OpStatus::kWrongType);
    return false;
  }
  char scratch[24];
  std::string_view s = e->value.Str(scratch);
  if (e->value.is_int() || s.size() < kHeader || s.substr(0, 4) != "HYLL" ||
      static_cast<uint8_t>(s[4]) > kSparse ||
      (static_cast<uint8_t>(s[4]) == kDense && s.size() != kDenseSize)) {
    c.Error(kNotHll);
    return false;
  }
  return true;
}

std::string_view View(const Entry* e) {
  char scratch[24];  // never used: an HLL is never integer-encoded
  return e->value.Str(scratch);
}

// The value's bytes, made raw (Redis' dbUnshareStringValue) and writable in place.
uint8_t* Writable(Entry* e) {
  return reinterpret_cast<uint8_t*>(e->value.GrowRaw(e->value.StrLen()));
}

// ---- Commands ---------------------------------------------------------------------------------

void PfAdd(Context& c) {
  std::string_view key = c.arg(1);
  Entry* e = c.LookupWrite(key);
  uint64_t updated = 0;
  if (e && !IsHll(c, e)) return;
  if (!e) {
    e = StoreKeepTtl(c, nullptr, key, Value::String(NewHll(), /*raw=*/true));
    updated++;
  }
  uint8_t* hdr = Writable(e);
  if (hdr[4] == kDense) {
    for (size_t j = 2; j < c.argc(); j++) {
      long reg;
      int count = PatternLength(c.arg(j), &reg);
      if (DenseMax(hdr + kHeader, reg, static_cast<uint8_t>(count))) updated++;
    }
  } else {
    std::string s(View(e));
    int64_t max_bytes = c.hooks.HllSparseMaxBytes();
    bool failed = false;
    for (size_t j = 2; j < c.argc() && !failed; j++) {
      long reg;
      int count = PatternLength(c.arg(j), &reg);
      int r = static_cast<uint8_t>(s[4]) == kDense
                  ? DenseMax(Bytes(s) + kHeader, reg, static_cast<uint8_t>(count))
                  : SparseSet(s, reg, static_cast<uint8_t>(count), max_bytes);
      if (r < 0) failed = true;
      if (r > 0) updated++;
    }
    if (updated > 0 || failed) e->value = Value::String(s, /*raw=*/true);
    if (failed) {
      c.Error(kInvalidHll);
      return;
    }
    hdr = Writable(e);
  }
  if (updated > 0) {
    InvalidateCache(hdr);
    c.Changed(key, kNotifyString, "pfadd");
    c.dirty += updated - 1;
  }
  c.out.Int(updated > 0 ? 1 : 0);
}

void PfCount(Context& c) {
  if (c.argc() > 2) {
    // The cardinality of the union, on registers of one byte each.
    std::vector<uint8_t> max(kRegisters, 0);
    for (size_t j = 1; j < c.argc(); j++) {
      Entry* e = c.LookupRead(c.arg(j));
      if (!e) continue;
      if (!IsHll(c, e)) return;
      if (!Merge(max.data(), View(e))) {
        c.Error(kInvalidHll);
        return;
      }
    }
    int histo[64] = {};
    for (uint8_t v : max) histo[v]++;
    c.out.Int(static_cast<int64_t>(Estimate(histo)));
    return;
  }
  std::string_view key = c.arg(1);
  Entry* e = c.LookupRead(key);
  if (!e) {
    c.out.Int(0);
    return;
  }
  if (!IsHll(c, e)) return;
  uint8_t* hdr = Writable(e);
  uint64_t card = 0;
  if ((hdr[15] & 0x80) == 0) {
    for (int i = 7; i >= 0; i--) card = (card << 8) | hdr[8 + i];
  } else {
    if (!Count(View(e), &card)) {
      c.Error(kInvalidHll);
      return;
    }
    for (int i = 0; i < 8; i++) hdr[8 + i] = static_cast<uint8_t>((card >> (8 * i)) & 0xff);
    // The cached value changed the string: propagated like a write, as Redis does.
    c.Changed(key, 0, "");
  }
  c.out.Int(static_cast<int64_t>(card));
}

void PfMerge(Context& c) {
  std::vector<uint8_t> max(kRegisters, 0);
  bool use_dense = false;
  for (size_t j = 1; j < c.argc(); j++) {
    Entry* e = c.LookupRead(c.arg(j));
    if (!e) continue;
    if (!IsHll(c, e)) return;
    std::string_view s = View(e);
    if (static_cast<uint8_t>(s[4]) == kDense) use_dense = true;
    if (!Merge(max.data(), s)) {
      c.Error(kInvalidHll);
      return;
    }
  }
  std::string_view key = c.arg(1);
  Entry* e = c.LookupWrite(key);
  std::string s = e ? std::string(View(e)) : NewHll();
  if (use_dense && !SparseToDense(s)) {
    c.Error(kInvalidHll);
    return;
  }
  int64_t max_bytes = c.hooks.HllSparseMaxBytes();
  for (long j = 0; j < kRegisters; j++) {
    if (max[j] == 0) continue;
    if (static_cast<uint8_t>(s[4]) == kDense) {
      DenseMax(Bytes(s) + kHeader, j, max[j]);
    } else {
      SparseSet(s, j, max[j], max_bytes);
    }
  }
  InvalidateCache(s);
  StoreKeepTtl(c, e, key, Value::String(s, /*raw=*/true));
  c.Changed(key, kNotifyString, "pfadd");  // a mass add, as Redis calls it
  c.out.Ok();
}

void PfDebug(Context& c) {
  std::string_view sub = c.arg(1);
  Entry* e = c.LookupWrite(c.arg(2));
  if (!e) {
    c.Error("The specified key does not exist");
    return;
  }
  if (!IsHll(c, e)) return;
  auto arity = [&] {
    c.Error("Wrong number of arguments for the '" + std::string(sub) + "' subcommand");
  };
  auto to_dense = [&](bool* converted) {
    *converted = false;
    if (static_cast<uint8_t>(View(e)[4]) == kDense) return true;
    std::string s(View(e));
    if (!SparseToDense(s)) return false;
    e->value = Value::String(s, /*raw=*/true);
    *converted = true;
    c.dirty++;  // the encoding change is propagated
    return true;
  };
  Writable(e);
  if (EqualsIgnoreCase(sub, "getreg")) {
    if (c.argc() != 3) return arity();
    bool converted;
    if (!to_dense(&converted)) {
      c.Error(kInvalidHll);
      return;
    }
    const auto* regs = reinterpret_cast<const uint8_t*>(View(e).data()) + kHeader;
    c.out.Array(kRegisters);
    for (long j = 0; j < kRegisters; j++) c.out.Int(DenseGet(regs, j));
  } else if (EqualsIgnoreCase(sub, "decode")) {
    if (c.argc() != 3) return arity();
    std::string_view s = View(e);
    if (static_cast<uint8_t>(s[4]) != kSparse) {
      c.Error("HLL encoding is not sparse");
      return;
    }
    std::string out;
    const auto* p = reinterpret_cast<const uint8_t*>(s.data()) + kHeader;
    const auto* end = reinterpret_cast<const uint8_t*>(s.data()) + s.size();
    while (p < end) {
      if (IsZero(*p)) {
        out += "z:" + std::to_string(ZeroLen(*p)) + " ";
        p++;
      } else if (IsXZero(*p)) {
        out += "Z:" + std::to_string(p + 1 < end ? XZeroLen(p) : (((p[0] & 0x3f) << 8) + 1)) + " ";
        p += 2;
      } else {
        out += "v:" + std::to_string(ValValue(*p)) + "," + std::to_string(ValLen(*p)) + " ";
        p++;
      }
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    c.out.Bulk(out);
  } else if (EqualsIgnoreCase(sub, "encoding")) {
    if (c.argc() != 3) return arity();
    c.out.Simple(static_cast<uint8_t>(View(e)[4]) == kDense ? "dense" : "sparse");
  } else if (EqualsIgnoreCase(sub, "todense")) {
    if (c.argc() != 3) return arity();
    bool converted;
    if (!to_dense(&converted)) {
      c.Error(kInvalidHll);
      return;
    }
    c.out.Int(converted ? 1 : 0);
  } else {
    c.Error("Unknown PFDEBUG subcommand '" + std::string(sub) + "'");
  }
}

// Redis' PFSELFTEST: the dense registers keep what is set in them, and counts stay within six
// standard errors (and agree between dense and sparse) up to 10 million elements.
void PfSelfTest(Context& c) {
  std::mt19937 rng(std::random_device{}());
  std::string dense(kDenseSize, '\0');
  uint8_t* regs = Bytes(dense) + kHeader;
  std::vector<uint8_t> bytes(kRegisters);
  for (int cycle = 0; cycle < 1000; cycle++) {
    for (long i = 0; i < kRegisters; i++) {
      auto r = static_cast<uint8_t>(rng() & kRegisterMax);
      bytes[i] = r;
      DenseSet(regs, i, r);
    }
    for (long i = 0; i < kRegisters; i++) {
      uint8_t v = DenseGet(regs, i);
      if (v != bytes[i]) {
        c.Error("TESTFAILED Register " + std::to_string(i) + " should be " +
                std::to_string(bytes[i]) + " but is " + std::to_string(v));
        return;
      }
    }
  }
  memset(regs, 0, kDenseRegBytes);
  dense[4] = static_cast<char>(kDense);
  std::string sparse = NewHll();
  double relerr = 1.04 / std::sqrt(static_cast<double>(kRegisters));
  int64_t checkpoint = 1;
  int64_t max_bytes = c.hooks.HllSparseMaxBytes();
  uint64_t seed = (static_cast<uint64_t>(rng()) << 32) | rng();
  for (int64_t j = 1; j <= 10000000; j++) {
    uint64_t ele = static_cast<uint64_t>(j) ^ seed;
    std::string_view ev(reinterpret_cast<const char*>(&ele), sizeof(ele));
    long reg;
    auto count = static_cast<uint8_t>(PatternLength(ev, &reg));
    DenseMax(regs, reg, count);
    if (static_cast<uint8_t>(sparse[4]) == kDense) {
      DenseMax(Bytes(sparse) + kHeader, reg, count);
    } else {
      SparseSet(sparse, reg, count, max_bytes);
    }
    if (j != checkpoint) continue;
    if (j < max_bytes / 2 && static_cast<uint8_t>(sparse[4]) != kSparse) {
      c.Error("TESTFAILED sparse encoding not used");
      return;
    }
    uint64_t a = 0, b = 0;
    Count(dense, &a);
    Count(sparse, &b);
    if (a != b) {
      c.Error("TESTFAILED dense/sparse disagree");
      return;
    }
    int64_t abserr = std::llabs(checkpoint - static_cast<int64_t>(a));
    auto maxerr = static_cast<int64_t>(std::ceil(relerr * 6 * static_cast<double>(checkpoint)));
    if (j == 10) maxerr = 1;
    if (abserr > maxerr) {
      c.Error("TESTFAILED Too big error. card:" + std::to_string(checkpoint) +
              " abserr:" + std::to_string(abserr));
      return;
    }
    checkpoint *= 10;
  }
  c.out.Ok();
}

}  // namespace

void RegisterHyperLogLogCommands(CommandTable& t) {
  const uint32_t kW = kWrite | kDenyOom;
  static const CommandRow kRows[] = {
      {"pfadd", -2, kW | kFast, 1, 1, 1, PfAdd,
       "Adds the specified elements to the specified HyperLogLog.", "2.8.9"},
      {"pfcount", -2, kReadOnly, 1, -1, 1, PfCount,
       "Return the approximated cardinality of the set(s) observed by the HyperLogLog at "
       "key(s).",
       "2.8.9"},
      {"pfmerge", -2, kW, 1, -1, 1, PfMerge, "Merge N different HyperLogLogs into a single one.",
       "2.8.9"},
      {"pfdebug", 3, kWrite | kDenyOom | kAdmin, 2, 2, 1, PfDebug,
       "Internal commands for debugging HyperLogLog values", "2.8.9"},
      {"pfselftest", 1, kAdmin, 0, 0, 0, PfSelfTest,
       "An internal command for testing HyperLogLog values", "2.8.9"},
  };
  AddRows(t, kRows, "hyperloglog");
}

}  // namespace kv::cmd
