// Glob-style pattern matching with Redis 7.0's exact rules (stringmatchlen in util.c), for KEYS,
// SCAN MATCH, PSUBSCRIBE, PUBSUB CHANNELS, CONFIG GET, COMMAND LIST and FUNCTION LIST.
//
// Syntax: `*` any run of bytes, `?` one byte, `[abc]` `[^abc]` `[a-z]` one byte of (or not of)
// a set, `\x` the byte x. Redis' quirks are kept: an empty string matches only the empty
// pattern (so `*` does not match ""); a `[` left open runs to the end of the pattern; a range's
// ends compare as signed chars; inside brackets `\x` compares case-sensitively even with
// `nocase`; and a pattern with more than 1000 star groups before its end never matches (Redis'
// recursion limit, which no path can pass).
//
// Cost: at most O(len(pattern) * len(str)) steps, whatever the pattern (CVE-2022-36021 and
// CVE-2024-31228 are patterns whose cost grows exponentially with their stars in a backtracking
// matcher). No recursion, no allocation. Pure and thread-safe.
#pragma once

#include <string_view>

namespace kv {

bool GlobMatch(std::string_view pattern, std::string_view str, bool nocase = false);

}  // namespace kv
