// Internal to the bitmap command files (bitmaps.cc, bitfield.cc): the offset parsing and the
// string lookup they share, and the BITFIELD handlers bitmaps.cc registers. Defined in
// bitmaps.cc, except the handlers (bitfield.cc). Nothing outside cmd/ includes it.
#pragma once

#include <cstdint>
#include <string_view>

#include "cmd/context.h"

namespace kv::cmd::bitmap {

// Redis' getBitOffsetFromArgument: a bit offset, or with `hash` and a field width "#N" (the Nth
// field of `bits` bits). Answers the error when it is not one or out of range.
bool ParseBitOffset(Context& c, std::string_view s, uint64_t* offset, bool hash, int bits);
// Redis' lookupStringForBitCommand: the string at `key`, created or zero-grown so that bit
// `maxbit` exists, made raw. Null after answering an error: WRONGTYPE, the bit offset error when
// the string would outgrow store::Value::kMaxStrLen, or OOM when the memory cannot be had. Sets
// *grew when it was created or lengthened.
store::Entry* StringForBits(Context& c, std::string_view key, uint64_t maxbit, bool* grew);
// The bytes of e's string, writable in place (the value made raw).
uint8_t* Bytes(store::Entry* e);

// bitfield.cc.
void BitField(Context& c);
void BitFieldRo(Context& c);

}  // namespace kv::cmd::bitmap
