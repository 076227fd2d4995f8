// BITFIELD and BITFIELD_RO (Redis 7.0 bitops.c's bitfieldGeneric): GET, SET and INCRBY of signed
// and unsigned integer fields at any bit offset of a string, with WRAP, SAT or FAIL on overflow.
// bitmaps.cc registers them.
#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "cmd/bitmap_cmds.h"
#include "cmd/context.h"
#include "common/strutil.h"

namespace kv::cmd::bitmap {

using store::Entry;
using store::ObjType;

namespace {

// ---- BITFIELD BITFIELD_RO --------------------------------------------------------------------

// Redis' getBitfieldTypeFromArgument: i1..i64 or u1..u63.
bool ParseBitfieldType(Context& c, std::string_view s, bool* sign, int* bits) {
  auto fail = [&] {
    c.Error(
        "Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported "
        "but i64 is.");
    return false;
  };
  if (s.empty() || (s[0] != 'i' && s[0] != 'u')) return fail();
  *sign = s[0] == 'i';
  auto v = ParseInt64(s.substr(1));
  if (!v || *v < 1 || (*sign && *v > 64) || (!*sign && *v > 63)) return fail();
  *bits = static_cast<int>(*v);
  return true;
}

enum class Overflow { kWrap, kSat, kFail };

uint64_t GetUnsigned(const uint8_t* p, uint64_t offset, int bits) {
  uint64_t v = 0;
  for (int j = 0; j < bits; j++, offset++) {
    v = (v << 1) | ((p[offset >> 3] >> (7 - (offset & 7))) & 1);
  }
  return v;
}

void SetUnsigned(uint8_t* p, uint64_t offset, int bits, uint64_t v) {
  for (int j = 0; j < bits; j++, offset++) {
    uint64_t bitval = (v >> (bits - 1 - j)) & 1;
    uint8_t& byte = p[offset >> 3];
    int bit = 7 - static_cast<int>(offset & 7);
    byte = static_cast<uint8_t>((byte & ~(1 << bit)) | (bitval << bit));
  }
}

int64_t GetSigned(const uint8_t* p, uint64_t offset, int bits) {
  uint64_t u = GetUnsigned(p, offset, bits);
  if (bits < 64 && (u & (uint64_t{1} << (bits - 1)))) u |= ~uint64_t{0} << bits;
  return static_cast<int64_t>(u);
}

// Redis' checkUnsignedBitfieldOverflow: whether value + incr leaves [0, 2^bits); *limit gets
// the wrapped or saturated result.
bool UnsignedOverflow(uint64_t value, int64_t incr, int bits, Overflow ow, uint64_t* limit) {
  uint64_t max = bits == 64 ? UINT64_MAX : (uint64_t{1} << bits) - 1;
  auto maxincr = static_cast<int64_t>(max - value);
  auto minincr = static_cast<int64_t>(-value);
  auto wrap = [&] { *limit = (value + static_cast<uint64_t>(incr)) & ~(~uint64_t{0} << bits); };
  if (value > max || (incr > 0 && incr > maxincr)) {
    if (ow == Overflow::kWrap) wrap();
    if (ow == Overflow::kSat) *limit = max;
    return true;
  }
  if (incr < 0 && incr < minincr) {
    if (ow == Overflow::kWrap) wrap();
    if (ow == Overflow::kSat) *limit = 0;
    return true;
  }
  return false;
}

// Redis' checkSignedBitfieldOverflow, for [-2^(bits-1), 2^(bits-1)).
bool SignedOverflow(int64_t value, int64_t incr, int bits, Overflow ow, int64_t* limit) {
  int64_t max = bits == 64 ? INT64_MAX : (int64_t{1} << (bits - 1)) - 1;
  int64_t min = -max - 1;
  auto maxincr = static_cast<int64_t>(static_cast<uint64_t>(max) - static_cast<uint64_t>(value));
  auto minincr = static_cast<int64_t>(static_cast<uint64_t>(min) - static_cast<uint64_t>(value));
  auto wrap = [&] {
    uint64_t sum = static_cast<uint64_t>(value) + static_cast<uint64_t>(incr);
    if (bits < 64) {
      uint64_t mask = ~uint64_t{0} << bits;
      sum = (sum & (uint64_t{1} << (bits - 1))) ? (sum | mask) : (sum & ~mask);
    }
    *limit = static_cast<int64_t>(sum);
  };
  if (value > max || (bits != 64 && incr > maxincr) || (value >= 0 && incr > 0 && incr > maxincr)) {
    if (ow == Overflow::kWrap) wrap();
    if (ow == Overflow::kSat) *limit = max;
    return true;
  }
  if (value < min || (bits != 64 && incr < minincr) || (value < 0 && incr < 0 && incr < minincr)) {
    if (ow == Overflow::kWrap) wrap();
    if (ow == Overflow::kSat) *limit = min;
    return true;
  }
  return false;
}

struct FieldOp {
  enum Kind { kGet, kSet, kIncrBy } kind;
  uint64_t offset;
  int64_t value;
  Overflow ow;
  int bits;
  bool sign;
};

void BitFieldGeneric(Context& c, bool read_only_command) {
  std::vector<FieldOp> ops;
  Overflow ow = Overflow::kWrap;
  bool readonly = true;
  uint64_t highest_write = 0;
  for (size_t j = 2; j < c.argc(); j++) {
    size_t remaining = c.argc() - j - 1;
    std::string_view sub = c.arg(j);
    FieldOp op{};
    if (EqualsIgnoreCase(sub, "get") && remaining >= 2) {
      op.kind = FieldOp::kGet;
    } else if (EqualsIgnoreCase(sub, "set") && remaining >= 3) {
      op.kind = FieldOp::kSet;
    } else if (EqualsIgnoreCase(sub, "incrby") && remaining >= 3) {
      op.kind = FieldOp::kIncrBy;
    } else if (EqualsIgnoreCase(sub, "overflow") && remaining >= 1) {
      std::string_view type = c.arg(++j);
      if (EqualsIgnoreCase(type, "wrap")) {
        ow = Overflow::kWrap;
      } else if (EqualsIgnoreCase(type, "sat")) {
        ow = Overflow::kSat;
      } else if (EqualsIgnoreCase(type, "fail")) {
        ow = Overflow::kFail;
      } else {
        c.Error("Invalid OVERFLOW type specified");
        return;
      }
      continue;
    } else {
      c.Error(OpStatus::kSyntax);
      return;
    }
    if (!ParseBitfieldType(c, c.arg(j + 1), &op.sign, &op.bits)) return;
    if (!ParseBitOffset(c, c.arg(j + 2), &op.offset, true, op.bits)) return;
    if (op.kind != FieldOp::kGet) {
      readonly = false;
      highest_write = std::max(highest_write, op.offset + static_cast<uint64_t>(op.bits) - 1);
      if (!c.ParseInt(c.arg(j + 3), &op.value)) return;
    }
    op.ow = ow;
    ops.push_back(op);
    j += op.kind == FieldOp::kGet ? 2 : 3;
  }
  std::string_view key = c.arg(1);
  Entry* e = nullptr;
  bool grew = false;
  if (readonly) {
    bool wrongtype;
    e = c.LookupReadOfType(key, ObjType::kString, &wrongtype);
    if (wrongtype) return;
  } else {
    if (read_only_command) {
      c.Error("BITFIELD_RO only supports the GET subcommand");
      return;
    }
    e = StringForBits(c, key, highest_write, &grew);
    if (!e) return;
  }
  c.out.Array(ops.size());
  uint64_t changes = 0;
  for (const FieldOp& op : ops) {
    if (op.kind == FieldOp::kGet) {
      // Up to 9 bytes copied zero-padded, so a field may run past the string's end.
      uint8_t buf[9] = {};
      uint64_t byte = op.offset >> 3;
      if (e) {
        char scratch[24];
        std::string_view s = e->value.Str(scratch);
        for (uint64_t i = 0; i < 9 && byte + i < s.size(); i++) {
          buf[i] = static_cast<uint8_t>(s[byte + i]);
        }
      }
      uint64_t rel = op.offset - byte * 8;
      if (op.sign) {
        c.out.Int(GetSigned(buf, rel, op.bits));
      } else {
        c.out.Int(static_cast<int64_t>(GetUnsigned(buf, rel, op.bits)));
      }
      continue;
    }
    uint8_t* p = Bytes(e);
    bool overflow;
    if (op.sign) {
      int64_t old = GetSigned(p, op.offset, op.bits), next, wrapped = 0, reply;
      if (op.kind == FieldOp::kIncrBy) {
        overflow = SignedOverflow(old, op.value, op.bits, op.ow, &wrapped);
        next = overflow ? wrapped
                        : static_cast<int64_t>(static_cast<uint64_t>(old) +
                                               static_cast<uint64_t>(op.value));
        reply = next;
      } else {
        next = op.value;
        overflow = SignedOverflow(next, 0, op.bits, op.ow, &wrapped);
        if (overflow) next = wrapped;
        reply = old;
      }
      if (overflow && op.ow == Overflow::kFail) {
        c.out.Null();
      } else {
        c.out.Int(reply);
        SetUnsigned(p, op.offset, op.bits, static_cast<uint64_t>(next));
        if (grew || old != next) changes++;
      }
    } else {
      uint64_t old = GetUnsigned(p, op.offset, op.bits), next, wrapped = 0, reply;
      if (op.kind == FieldOp::kIncrBy) {
        next = old + static_cast<uint64_t>(op.value);
        overflow = UnsignedOverflow(old, op.value, op.bits, op.ow, &wrapped);
        if (overflow) next = wrapped;
        reply = next;
      } else {
        next = static_cast<uint64_t>(op.value);
        overflow = UnsignedOverflow(next, 0, op.bits, op.ow, &wrapped);
        if (overflow) next = wrapped;
        reply = old;
      }
      if (overflow && op.ow == Overflow::kFail) {
        c.out.Null();
      } else {
        c.out.Int(static_cast<int64_t>(reply));
        SetUnsigned(p, op.offset, op.bits, next);
        if (grew || old != next) changes++;
      }
    }
  }
  // One event; a SET or INCRBY counts as a change when it wrote a new value or the string was
  // created or grown (a FAIL writes nothing), as in Redis 7.0.
  if (changes > 0) {
    c.Changed(key, kNotifyString, "setbit");
    c.dirty += changes - 1;
  }
}

}  // namespace

void BitField(Context& c) { BitFieldGeneric(c, false); }
void BitFieldRo(Context& c) { BitFieldGeneric(c, true); }

}  // namespace kv::cmd::bitmap
