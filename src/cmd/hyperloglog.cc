// HyperLogLog (Redis 7.0 hyperloglog.c): PFADD PFCOUNT PFMERGE PFDEBUG PFSELFTEST, on string
// values in Redis' exact bytes, so an HLL written by either server is read, counted and merged
// identically by the other.
// The value format and its arithmetic are in hll_encoding.h and hll_encoding.cc.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "cmd/command.h"
#include "cmd/context.h"
#include "cmd/hll_encoding.h"
#include "cmd/registry.h"
#include "cmd/string_ops.h"
#include "common/strutil.h"

namespace kv::cmd {

using namespace hll;  // NOLINT(build/namespaces): the value format (hll_encoding.h)

namespace {

using store::Entry;
using store::ObjType;
using store::Value;

constexpr std::string_view kInvalidHll = "-INVALIDOBJ Corrupted HLL object detected";
constexpr std::string_view kNotHll = "-WRONGTYPE Key is not a valid HyperLogLog string value.";

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
    // Every opcode as it is, whether or not the runs add up.
    for (; p < end; p += DecodeOp(p, end).oplen) {
      SparseOp op = DecodeOp(p, end);
      if (IsVal(*p)) {
        out += "v:" + std::to_string(op.value) + "," + std::to_string(op.len) + " ";
      } else {
        out += (IsZero(*p) ? "z:" : "Z:") + std::to_string(op.len) + " ";
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
