// String and number conversions with Redis' exact acceptance rules, and small helpers (glob
// matching is in glob.h). Every function is pure and thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/glob.h"  // GlobMatch, for the callers that knew it from here

namespace kv {

// Redis string2ll: strict decimal, no spaces, no '+', no leading zeros, fits int64.
std::optional<int64_t> ParseInt64(std::string_view s);
// Like ParseInt64 but for unsigned 64-bit values (SCAN cursors).
std::optional<uint64_t> ParseUint64(std::string_view s);
// Redis parseScanCursorOrReply (SCAN, HSCAN, SSCAN, ZSCAN cursors): strtoul semantics, so a
// leading '+' or '-' and leading zeros are accepted ("-1" wraps), but no leading space, no
// trailing garbage, no overflow.
bool ParseScanCursor(std::string_view s, uint64_t* cursor);
// Redis string2d / getDoubleFromObject: strtod on the whole string, no spaces, no NaN.
std::optional<double> ParseDouble(std::string_view s);
// Redis string2ld (INCRBYFLOAT): long double, no spaces, no NaN, bounded length.
std::optional<long double> ParseLongDouble(std::string_view s);

std::string Int64ToString(int64_t v);
// Redis d2string: "inf", "-inf", "nan", integers without a fraction when exact, else %.17g.
std::string DoubleToString(double d);
// Redis ld2string in human-friendly mode (INCRBYFLOAT replies): %.17Lf, trailing zeros trimmed.
std::string LongDoubleToString(long double v);

bool EqualsIgnoreCase(std::string_view a, std::string_view b);
std::string ToLower(std::string_view s);
std::string ToUpper(std::string_view s);

// Redis sdssplitargs: splits a config line or inline command into arguments, honouring
// "double quotes" (with \n \r \t \b \a \\ \" \xHH escapes) and 'single quotes'.
// Returns nullopt on unbalanced quotes.
std::optional<std::vector<std::string>> SplitArgs(std::string_view line);

// Quotes a string the way redis-cli/MONITOR do ("..." with \n, \xHH escapes).
std::string QuoteString(std::string_view s);

// Parses memory sizes as redis.conf does: "1gb", "512mb", "100k", "42".
std::optional<int64_t> ParseMemory(std::string_view s);

// Lowercase hex of `len` bytes (2 * len characters), and its inverse: false (and *out
// unspecified) for an odd length or a character outside [0-9a-f].
std::string HexEncode(const uint8_t* data, size_t len);
inline std::string HexEncode(std::string_view bytes) {
  return HexEncode(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
}
bool HexDecode(std::string_view hex, std::string* out);

}  // namespace kv
