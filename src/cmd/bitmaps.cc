// Strings as bit arrays (Redis 7.0 bitops.c): SETBIT GETBIT BITCOUNT BITPOS BITOP here, BITFIELD
// and BITFIELD_RO in bitfield.cc. Bit 0 is the most significant bit of the first byte. Writing
// past the end grows the string with zero bytes (raw encoding, TTL kept); offsets are limited
// by proto-max-bulk-len, as in Redis.
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cmd/bitmap_cmds.h"
#include "cmd/command.h"
#include "cmd/context.h"
#include "cmd/registry.h"
#include "cmd/string_ops.h"
#include "common/strutil.h"

namespace kv::cmd {
namespace bitmap {

using store::Entry;
using store::Value;

namespace {

constexpr std::string_view kBitOffsetError = "bit offset is not an integer or out of range";

}  // namespace

// Redis' getBitOffsetFromArgument: a bit offset, or with `hash` and a field width "#N" (the Nth
// field of `bits` bits).
bool ParseBitOffset(Context& c, std::string_view s, uint64_t* offset, bool hash, int bits) {
  bool use_hash = hash && bits > 0 && !s.empty() && s[0] == '#';
  auto v = ParseInt64(use_hash ? s.substr(1) : s);
  if (!v) {
    c.Error(kBitOffsetError);
    return false;
  }
  int64_t off = *v;
  if (use_hash)
    off = static_cast<int64_t>(static_cast<uint64_t>(off) * static_cast<uint64_t>(bits));
  if (off < 0 || (off >> 3) >= c.hooks.MaxBulkLen()) {
    c.Error(kBitOffsetError);
    return false;
  }
  *offset = static_cast<uint64_t>(off);
  return true;
}

// Redis' lookupStringForBitCommand: the string at `key`, created or zero-grown so that bit
// `maxbit` exists, made raw. Sets *grew when it was created or lengthened. proto-max-bulk-len may
// allow offsets past what a value holds: those are out of range here (Redis would try the
// allocation and abort).
Entry* StringForBits(Context& c, std::string_view key, uint64_t maxbit, bool* grew) {
  uint64_t need = (maxbit >> 3) + 1;
  bool wrongtype;
  Entry* e = LookupWriteString(c, key, &wrongtype);
  if (wrongtype) return nullptr;
  if (need > Value::kMaxStrLen) {
    c.Error(kBitOffsetError);
    return nullptr;
  }
  if (!e) {
    std::optional<Value> zeroed = Value::ZeroedRaw(need);
    if (!zeroed) {
      c.Error(OpStatus::kNoMemory);
      return nullptr;
    }
    *grew = true;
    return StoreKeepTtl(c, nullptr, key, std::move(*zeroed));
  }
  size_t len = e->value.StrLen();
  if (e->value.GrowRaw(std::max<size_t>(need, len)) == nullptr) {
    c.Error(OpStatus::kNoMemory);
    return nullptr;
  }
  *grew = need > len;
  return e;
}

uint8_t* Bytes(Entry* e) { return reinterpret_cast<uint8_t*>(e->value.GrowRaw(e->value.StrLen())); }

}  // namespace bitmap

namespace {

using bitmap::BitField;
using bitmap::BitFieldRo;
using bitmap::Bytes;
using bitmap::ParseBitOffset;
using bitmap::StringForBits;
using store::Entry;
using store::ObjType;
using store::Value;

// Set bits in p[0, n): with the CPU's popcnt instruction where it has one (x86-64 has it since
// 2008, but the portable build may not assume it), four words at a time.
template <bool kHw>
uint64_t PopcountImpl(const uint8_t* p, size_t n) {
  auto count64 = [](uint64_t w) -> uint64_t {
    if constexpr (kHw) {
      return static_cast<uint64_t>(__builtin_popcountll(w));
    } else {
      w = w - ((w >> 1) & 0x5555555555555555ULL);
      w = (w & 0x3333333333333333ULL) + ((w >> 2) & 0x3333333333333333ULL);
      w = (w + (w >> 4)) & 0x0f0f0f0f0f0f0f0fULL;
      return (w * 0x0101010101010101ULL) >> 56;
    }
  };
  uint64_t c0 = 0, c1 = 0, c2 = 0, c3 = 0;
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    uint64_t w[4];
    memcpy(w, p + i, 32);
    c0 += count64(w[0]);
    c1 += count64(w[1]);
    c2 += count64(w[2]);
    c3 += count64(w[3]);
  }
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    memcpy(&w, p + i, 8);
    c0 += count64(w);
  }
  for (; i < n; i++) c0 += count64(p[i]);
  return c0 + c1 + c2 + c3;
}

#if defined(__x86_64__)
__attribute__((target("popcnt"))) uint64_t PopcountHw(const uint8_t* p, size_t n) {
  return PopcountImpl<true>(p, n);
}
#endif

uint64_t Popcount(const uint8_t* p, size_t n) {
#if defined(__x86_64__)
  static const bool hw = __builtin_cpu_supports("popcnt");
  if (hw) return PopcountHw(p, n);
  return PopcountImpl<false>(p, n);
#else
  return PopcountImpl<true>(p, n);
#endif
}

// Redis' redisBitpos: the first bit equal to `bit` in p[0, n), counted from the first byte's
// most significant bit; looking for 0 in all-ones bytes gives n * 8 (the string is taken as
// zero-padded on the right), looking for 1 in all-zero bytes gives -1.
int64_t FirstBit(const uint8_t* p, size_t n, int bit) {
  uint8_t skip = bit ? 0 : 0xff;
  size_t i = 0;
  while (i < n && p[i] == skip) i++;
  if (i == n) return bit ? -1 : static_cast<int64_t>(n) * 8;
  uint8_t b = p[i];
  for (int j = 0; j < 8; j++) {
    if (((b >> (7 - j)) & 1) == bit) return static_cast<int64_t>(i) * 8 + j;
  }
  return -1;  // not reached
}

// ---- SETBIT GETBIT ---------------------------------------------------------------------------

void SetBit(Context& c) {
  uint64_t offset;
  if (!ParseBitOffset(c, c.arg(2), &offset, false, 0)) return;
  constexpr std::string_view kBitError = "bit is not an integer or out of range";
  auto on = ParseInt64(c.arg(3));
  if (!on || (*on & ~1) != 0) {
    c.Error(kBitError);
    return;
  }
  std::string_view key = c.arg(1);
  bool grew = false;
  Entry* e = StringForBits(c, key, offset, &grew);
  if (!e) return;
  uint8_t* p = Bytes(e);
  size_t byte = offset >> 3;
  int bit = 7 - static_cast<int>(offset & 7);
  int old = (p[byte] >> bit) & 1;
  if (grew || old != *on) {
    p[byte] = static_cast<uint8_t>((p[byte] & ~(1 << bit)) | (*on << bit));
    c.Changed(key, kNotifyString, "setbit");
  }
  c.out.Int(old);
}

void GetBit(Context& c) {
  uint64_t offset;
  if (!ParseBitOffset(c, c.arg(2), &offset, false, 0)) return;
  bool wrongtype;
  Entry* e = c.LookupReadOfType(c.arg(1), ObjType::kString, &wrongtype);
  if (wrongtype) return;
  int bit = 0;
  if (e) {
    char scratch[24];
    std::string_view s = e->value.Str(scratch);
    size_t byte = offset >> 3;
    if (byte < s.size()) bit = (static_cast<uint8_t>(s[byte]) >> (7 - (offset & 7))) & 1;
  }
  c.out.Int(bit);
}

// ---- BITCOUNT BITPOS -------------------------------------------------------------------------

// Start and end of BITCOUNT/BITPOS resolved as Redis does: negative from the end, clamped, and
// with BIT converted to bytes plus masks of the edge bits outside the range.
struct Range {
  int64_t start, end;
  uint8_t first_mask = 0, last_mask = 0;
};

void Resolve(Range* r, int64_t totlen, bool isbit) {
  if (isbit) totlen <<= 3;
  if (r->start < 0) r->start += totlen;
  if (r->end < 0) r->end += totlen;
  if (r->start < 0) r->start = 0;
  if (r->end < 0) r->end = 0;
  if (r->end >= totlen) r->end = totlen - 1;
  if (isbit && r->start <= r->end) {
    r->first_mask = static_cast<uint8_t>(~((1 << (8 - (r->start & 7))) - 1) & 0xff);
    r->last_mask = static_cast<uint8_t>((1 << (7 - (r->end & 7))) - 1);
    r->start >>= 3;
    r->end >>= 3;
  }
}

// BYTE or BIT (case-insensitive); a syntax error otherwise.
bool ParseUnit(Context& c, std::string_view s, bool* isbit) {
  if (EqualsIgnoreCase(s, "bit")) {
    *isbit = true;
  } else if (EqualsIgnoreCase(s, "byte")) {
    *isbit = false;
  } else {
    c.Error(OpStatus::kSyntax);
    return false;
  }
  return true;
}

void BitCount(Context& c) {
  bool wrongtype;
  Entry* e = c.LookupReadOfType(c.arg(1), ObjType::kString, &wrongtype);
  if (wrongtype) return;
  if (!e) {
    c.out.Int(0);
    return;
  }
  char scratch[24];
  std::string_view s = e->value.Str(scratch);
  const auto* p = reinterpret_cast<const uint8_t*>(s.data());
  Range r{0, static_cast<int64_t>(s.size()) - 1};
  if (c.argc() == 4 || c.argc() == 5) {
    if (!c.ParseInt(c.arg(2), &r.start) || !c.ParseInt(c.arg(3), &r.end)) return;
    if (r.start < 0 && r.end < 0 && r.start > r.end) {
      c.out.Int(0);
      return;
    }
    bool isbit = false;
    if (c.argc() == 5 && !ParseUnit(c, c.arg(4), &isbit)) return;
    Resolve(&r, static_cast<int64_t>(s.size()), isbit);
  } else if (c.argc() != 2) {
    c.Error(OpStatus::kSyntax);
    return;
  }
  if (r.start > r.end) {
    c.out.Int(0);
    return;
  }
  uint64_t count = Popcount(p + r.start, static_cast<size_t>(r.end - r.start + 1));
  // The edge bits outside a BIT range were counted with their bytes: take them out.
  uint8_t edges[2] = {static_cast<uint8_t>(p[r.start] & r.first_mask),
                      static_cast<uint8_t>(p[r.end] & r.last_mask)};
  count -= Popcount(edges, 2);
  c.out.Int(static_cast<int64_t>(count));
}

void BitPos(Context& c) {
  int64_t bit;
  if (!c.ParseInt(c.arg(2), &bit)) return;
  if (bit != 0 && bit != 1) {
    c.Error("The bit argument must be 1 or 0.");
    return;
  }
  bool wrongtype;
  Entry* e = c.LookupReadOfType(c.arg(1), ObjType::kString, &wrongtype);
  if (wrongtype) return;
  // A missing key is an endless run of zeros.
  if (!e) {
    c.out.Int(bit ? -1 : 0);
    return;
  }
  char scratch[24];
  std::string_view s = e->value.Str(scratch);
  const auto* p = reinterpret_cast<const uint8_t*>(s.data());
  int64_t totlen = static_cast<int64_t>(s.size());
  Range r{0, totlen - 1};
  bool end_given = false;
  if (c.argc() >= 4 && c.argc() <= 6) {
    if (!c.ParseInt(c.arg(3), &r.start)) return;
    bool isbit = false;
    if (c.argc() == 6 && !ParseUnit(c, c.arg(5), &isbit)) return;
    if (c.argc() >= 5) {
      if (!c.ParseInt(c.arg(4), &r.end)) return;
      end_given = true;
    } else {
      r.end = isbit ? (totlen << 3) + 7 : totlen - 1;
    }
    Resolve(&r, totlen, isbit);
  } else if (c.argc() != 3) {
    c.Error(OpStatus::kSyntax);
    return;
  }
  // An empty range holds neither a 0 nor a 1.
  if (r.start > r.end) {
    c.out.Int(-1);
    return;
  }
  int b = static_cast<int>(bit);
  int64_t start = r.start;
  int64_t bytes = r.end - r.start + 1;
  int64_t pos = -1;
  // The edge bytes of a BIT range are searched with the bits outside it set to what is not
  // looked for, as Redis does.
  auto masked = [&](uint8_t v, uint8_t mask) {
    return b ? static_cast<uint8_t>(v & ~mask) : static_cast<uint8_t>(v | mask);
  };
  for (;;) {
    if (r.first_mask) {
      uint8_t t = masked(p[start], r.first_mask);
      if (r.last_mask && bytes == 1) t = masked(t, r.last_mask);
      pos = FirstBit(&t, 1, b);
      if (bytes == 1 || (pos != -1 && pos != 8)) break;
      start++;
      bytes--;
    }
    int64_t middle = bytes - (r.last_mask ? 1 : 0);
    if (middle > 0) {
      pos = FirstBit(p + start, static_cast<size_t>(middle), b);
      if (bytes == middle || (pos != -1 && pos != middle << 3)) break;
      start += middle;
      bytes -= middle;
    }
    uint8_t t = masked(p[r.end], r.last_mask);
    pos = FirstBit(&t, 1, b);
    break;
  }
  // With an explicit end, the range's right is not zero-padded: no clear bit found is -1.
  if (end_given && b == 0 && pos == bytes << 3) {
    c.out.Int(-1);
    return;
  }
  if (pos != -1) pos += start << 3;
  c.out.Int(pos);
}

// ---- BITOP -----------------------------------------------------------------------------------

void BitOp(Context& c) {
  std::string_view op = c.arg(1);
  enum { kAnd, kOr, kXor, kNot } kind;
  if (EqualsIgnoreCase(op, "and")) {
    kind = kAnd;
  } else if (EqualsIgnoreCase(op, "or")) {
    kind = kOr;
  } else if (EqualsIgnoreCase(op, "xor")) {
    kind = kXor;
  } else if (EqualsIgnoreCase(op, "not")) {
    kind = kNot;
  } else {
    c.Error(OpStatus::kSyntax);
    return;
  }
  if (kind == kNot && c.argc() != 4) {
    c.Error("BITOP NOT must be called with a single source key.");
    return;
  }
  // The sources, copied: the destination may be one of them.
  std::vector<std::string> src;
  size_t maxlen = 0;
  for (size_t j = 3; j < c.argc(); j++) {
    bool wrongtype;
    Entry* e = c.LookupReadOfType(c.arg(j), ObjType::kString, &wrongtype);
    if (wrongtype) return;
    char scratch[24];
    src.emplace_back(e ? e->value.Str(scratch) : std::string_view());
    maxlen = std::max(maxlen, src.back().size());
  }
  std::string_view dest = c.arg(2);
  if (maxlen == 0) {
    // Every source empty or missing: the destination goes.
    if (c.ks.ServerDelete(c.session.db, dest)) c.Changed(dest, kNotifyGeneric, "del");
    c.out.Int(0);
    return;
  }
  std::string res(maxlen, '\0');
  auto byte = [&](size_t k, size_t i) -> uint8_t {
    return i < src[k].size() ? static_cast<uint8_t>(src[k][i]) : 0;
  };
  for (size_t i = 0; i < maxlen; i++) {
    uint8_t v = byte(0, i);
    if (kind == kNot) v = static_cast<uint8_t>(~v);
    for (size_t k = 1; k < src.size(); k++) {
      uint8_t b = byte(k, i);
      v = kind == kAnd ? (v & b) : kind == kOr ? (v | b) : (v ^ b);
    }
    res[i] = static_cast<char>(v);
  }
  bool exists = c.LookupWrite(dest) != nullptr;
  SetKey(c, dest, Value::String(res, /*raw=*/true), /*keep_ttl=*/false, exists);
  c.Changed(dest, kNotifyString, "set");
  c.out.Int(static_cast<int64_t>(maxlen));
}

}  // namespace

void RegisterBitmapCommands(CommandTable& t) {
  const uint32_t kW = kWrite | kDenyOom;
  static const CommandRow kRows[] = {
      {"setbit", 4, kW, 1, 1, 1, SetBit,
       "Sets or clears the bit at offset in the string value stored at key", "2.2.0"},
      {"getbit", 3, kReadOnly | kFast, 1, 1, 1, GetBit,
       "Returns the bit value at offset in the string value stored at key", "2.2.0"},
      {"bitcount", -2, kReadOnly, 1, 1, 1, BitCount, "Count set bits in a string", "2.6.0"},
      {"bitpos", -3, kReadOnly, 1, 1, 1, BitPos, "Find first bit set or clear in a string",
       "2.8.7"},
      {"bitop", -4, kW, 2, -1, 1, BitOp, "Perform bitwise operations between strings", "2.6.0"},
      {"bitfield", -2, kW, 1, 1, 1, BitField,
       "Perform arbitrary bitfield integer operations on strings", "3.2.0"},
      {"bitfield_ro", -2, kReadOnly | kFast, 1, 1, 1, BitFieldRo,
       "Perform arbitrary bitfield integer operations on strings. Read-only variant of BITFIELD",
       "6.0.0"},
  };
  AddRows(t, kRows, "bitmap");
}

}  // namespace kv::cmd
