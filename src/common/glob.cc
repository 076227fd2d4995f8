// Glob matching without backtracking into earlier stars. Every token but `*` consumes exactly
// one byte of the string, so when the pattern after the latest star fails to match at some
// position, no choice made by an earlier star can help: that star only has to swallow one more
// byte and the rest is tried again. Each retry advances the latest star's start, which bounds
// the work by len(pattern) * len(str).
#include "common/glob.h"

#include <cstddef>

namespace kv {
namespace {

// Redis' limit on nested stars: a star group past the 1000th (with pattern after it) cannot be
// passed, so such a pattern never matches.
constexpr int kMaxStarGroups = 1000;

// ASCII case folding, as tolower in the C locale (bytes past 0x7f unchanged).
inline int Fold(int c) { return c >= 'A' && c <= 'Z' ? c + 32 : c; }

inline bool SameByte(char a, char b, bool nocase) {
  return nocase ? Fold(static_cast<signed char>(a)) == Fold(static_cast<signed char>(b)) : a == b;
}

// Matches the bracket token at p[0] == '[' against byte c. Sets *len to the token's length in
// the pattern: through the closing ']', or to the pattern's end when it is left open.
bool MatchBracket(const char* p, size_t plen, char c, bool nocase, size_t* len) {
  size_t i = 1;
  bool negate = i < plen && p[i] == '^';
  if (negate) i++;
  bool match = false;
  while (true) {
    if (i == plen) {  // left open: the token is the rest of the pattern
      *len = plen;
      break;
    }
    if (p[i] == '\\' && plen - i >= 2) {
      i++;
      if (p[i] == c) match = true;  // case-sensitive even with nocase, as Redis
    } else if (p[i] == ']') {
      *len = i + 1;
      break;
    } else if (plen - i >= 3 && p[i + 1] == '-') {
      int start = static_cast<signed char>(p[i]);
      int end = static_cast<signed char>(p[i + 2]);
      int ch = static_cast<signed char>(c);
      if (start > end) {
        int t = start;
        start = end;
        end = t;
      }
      if (nocase) {
        start = Fold(start);
        end = Fold(end);
        ch = Fold(ch);
      }
      i += 2;
      if (ch >= start && ch <= end) match = true;
    } else if (SameByte(p[i], c, nocase)) {
      match = true;
    }
    i++;
  }
  return negate ? !match : match;
}

// Matches the non-star token at the start of the pattern against byte c; *len is its length.
bool MatchToken(const char* p, size_t plen, char c, bool nocase, size_t* len) {
  switch (p[0]) {
    case '?':
      *len = 1;
      return true;
    case '[':
      return MatchBracket(p, plen, c, nocase, len);
    case '\\':
      if (plen >= 2) {
        *len = 2;
        return SameByte(p[1], c, nocase);
      }
      [[fallthrough]];  // a trailing backslash is itself
    default:
      *len = 1;
      return SameByte(p[0], c, nocase);
  }
}

}  // namespace

bool GlobMatch(std::string_view pattern, std::string_view str, bool nocase) {
  const char* p = pattern.data();
  const char* s = str.data();
  const size_t plen = pattern.size(), slen = str.size();
  if (slen == 0) return plen == 0;  // Redis never looks at the pattern of an empty string
  size_t pi = 0, si = 0;
  // The pattern after the latest star, where the string resumes for it, and the star groups
  // passed up to it.
  size_t star_pi = 0, star_si = 0;
  bool have_star = false;
  int stars = 0, stars_at_star = 0;
  while (si < slen) {
    if (pi < plen && p[pi] == '*') {
      while (pi + 1 < plen && p[pi + 1] == '*') pi++;
      if (pi + 1 == plen) return true;  // a trailing star takes the rest
      if (++stars > kMaxStarGroups) return false;
      pi++;
      have_star = true;
      star_pi = pi;
      star_si = si;
      stars_at_star = stars;
      continue;
    }
    size_t len;
    if (pi < plen && MatchToken(p + pi, plen - pi, s[si], nocase, &len)) {
      pi += len;
      si++;
      continue;
    }
    if (!have_star) return false;
    // The latest star takes one more byte; the pattern after it starts over there.
    si = ++star_si;
    pi = star_pi;
    stars = stars_at_star;
  }
  while (pi < plen && p[pi] == '*') pi++;
  return pi == plen;
}

}  // namespace kv
