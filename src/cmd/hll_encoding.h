// The HyperLogLog value format (Redis 7.0 hyperloglog.c), shared by hyperloglog.cc (the commands)
// and hll_encoding.cc (hashing, conversions, sparse updates and counting, defined there); the
// constants and the register and opcode accessors are inline here. Nothing outside cmd/
// includes it.
//
// The value: a 16-byte header ("HYLL", the encoding, three unused bytes, the cached cardinality
// as 8 little-endian bytes whose top bit marks it stale), then 16384 registers of 6 bits each,
// either dense (12288 bytes, packed from each byte's least significant bit) or sparse (runs:
// ZERO 00xxxxxx for 1-64 zero registers, XZERO 01xxxxxx yyyyyyyy for up to 16384, VAL 1vvvvvxx
// for 1-4 registers of value 1-32). A sparse HLL turns dense when a register needs a value over
// 32 or the value would outgrow hll-sparse-max-bytes. Elements are hashed with MurmurHash64A
// (seed 0xadc83b19); the count is Otmar Ertl's estimator, as in Redis 7.0.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace kv::cmd::hll {

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

// The register an element goes to, and the length of its hash's 000...1 pattern.
int PatternLength(std::string_view ele, long* reg);

// ---- Dense registers: r points at the 12288 register bytes -----------------------------------

inline uint8_t DenseGet(const uint8_t* r, long i) {
  size_t byte = static_cast<size_t>(i) * kBits / 8;
  unsigned fb = static_cast<unsigned>(i * kBits) & 7;
  unsigned b0 = r[byte];
  unsigned b1 = byte + 1 < kDenseRegBytes ? r[byte + 1] : 0;  // Redis reads sds' terminator
  return static_cast<uint8_t>(((b0 >> fb) | (b1 << (8 - fb))) & kRegisterMax);
}

inline void DenseSet(uint8_t* r, long i, uint8_t v) {
  size_t byte = static_cast<size_t>(i) * kBits / 8;
  unsigned fb = static_cast<unsigned>(i * kBits) & 7;
  unsigned fb8 = 8 - fb;
  r[byte] = static_cast<uint8_t>((r[byte] & ~(kRegisterMax << fb)) | (v << fb));
  if (byte + 1 < kDenseRegBytes) {  // the last register ends in its own byte
    r[byte + 1] = static_cast<uint8_t>((r[byte + 1] & ~(kRegisterMax >> fb8)) | (v >> fb8));
  }
}

// Sets register i to `count` if that is larger; true if it changed.
inline bool DenseMax(uint8_t* r, long i, uint8_t count) {
  if (count <= DenseGet(r, i)) return false;
  DenseSet(r, i, count);
  return true;
}

// ---- Sparse opcodes --------------------------------------------------------------------------

inline bool IsZero(uint8_t b) { return (b & 0xc0) == 0; }
inline bool IsXZero(uint8_t b) { return (b & 0xc0) == 0x40; }
inline bool IsVal(uint8_t b) { return (b & 0x80) != 0; }
inline int ZeroLen(uint8_t b) { return (b & 0x3f) + 1; }
inline int XZeroLen(const uint8_t* p) { return (((p[0] & 0x3f) << 8) | p[1]) + 1; }
inline int ValValue(uint8_t b) { return ((b >> 2) & 0x1f) + 1; }
inline int ValLen(uint8_t b) { return (b & 0x3) + 1; }
inline uint8_t Val(int value, int len) {
  return static_cast<uint8_t>(((value - 1) << 2 | (len - 1)) | 0x80);
}
inline uint8_t Zero(int len) { return static_cast<uint8_t>(len - 1); }
inline void XZero(uint8_t* p, int len) {
  int l = len - 1;
  p[0] = static_cast<uint8_t>((l >> 8) | 0x40);
  p[1] = static_cast<uint8_t>(l & 0xff);
}

inline uint8_t* Bytes(std::string& s) { return reinterpret_cast<uint8_t*>(s.data()); }

// One opcode decoded: `len` registers of `value` (0 for ZERO and XZERO), `oplen` bytes long. An
// XZERO cut short by the end of the value reads its missing second byte as 0, as Redis reads the
// string's terminator there; `truncated` says so.
struct SparseOp {
  long len;
  int value;
  size_t oplen;
  bool truncated;
};
SparseOp DecodeOp(const uint8_t* p, const uint8_t* end);

// Calls f(first, len, value) for each run of the sparse registers at [p, end) in order. False
// (corrupt) when the runs do not cover exactly the 16384 registers; a run that would reach past
// the last register stops the walk before f sees it, so f never gets an index out of range.
template <typename F>
bool ForEachSparseRun(const uint8_t* p, const uint8_t* end, F&& f) {
  long idx = 0;
  while (p < end) {
    SparseOp op = DecodeOp(p, end);
    if (op.len > kRegisters - idx) return false;
    f(idx, op.len, op.value);
    idx += op.len;
    p += op.oplen;
  }
  return idx == kRegisters;
}

// An empty HLL: sparse, all registers in XZERO runs.
std::string NewHll();
// Marks the cached cardinality stale (the top bit of the header's last byte), in the value or
// in its header bytes.
void InvalidateCache(std::string& s);
void InvalidateCache(uint8_t* hdr);
// Converts a sparse HLL to dense in place; false, and `s` unchanged, when the runs do not cover
// exactly the registers (corrupt).
bool SparseToDense(std::string& s);
// Redis' hllSparseSet: sets register `index` to `count` if larger, splitting the run that
// covers it and merging equal neighbours; promotes to dense where sparse cannot hold it.
// Returns 1 if changed, 0 if not, -1 if the HLL is corrupt.
int SparseSet(std::string& s, long index, uint8_t count, int64_t sparse_max_bytes);

// ---- Counting ---------------------------------------------------------------------------------

// Otmar Ertl's estimate from the register histogram (Redis' hllCount).
uint64_t Estimate(const int* histo);
// The cardinality of a valid HLL value; false when a sparse one is corrupt.
bool Count(std::string_view s, uint64_t* card);
// max[i] = MAX(max[i], register i of the HLL `s`); false when a sparse one is corrupt.
bool Merge(uint8_t* max, std::string_view s);

}  // namespace kv::cmd::hll
