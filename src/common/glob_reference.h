// A reference for GlobMatch (common/glob.h), written from Redis' rules rather than from
// glob.cc: the pattern is first cut into tokens (each bracket set resolved into the 256 bytes it
// accepts), then matched by dynamic programming over (token, string position), which cannot
// backtrack. O(tokens * len(str)) memory: for short inputs only (the fuzz target and the unit
// test). Test-only: nothing in the server includes it.
#pragma once

#include <bitset>
#include <cstddef>
#include <string_view>
#include <vector>

namespace kv::glob_ref {

struct Token {
  bool star = false;
  std::bitset<256> accepts;  // the bytes a non-star token matches
};

inline int FoldRef(int c) { return c >= 'A' && c <= 'Z' ? c + 32 : c; }

// Redis compares range ends and the byte as (signed) chars.
inline int AsChar(int byte) { return static_cast<signed char>(static_cast<unsigned char>(byte)); }

inline std::vector<Token> Tokenize(std::string_view p, bool nocase) {
  std::vector<Token> out;
  size_t i = 0;
  auto literal = [&](char ch, bool fold) {
    Token t;
    for (int b = 0; b < 256; b++) {
      int x = AsChar(b), y = static_cast<signed char>(ch);
      if (fold ? FoldRef(x) == FoldRef(y) : x == y) t.accepts.set(b);
    }
    return t;
  };
  while (i < p.size()) {
    char ch = p[i];
    if (ch == '*') {
      Token t;
      t.star = true;
      out.push_back(t);
      i++;
    } else if (ch == '?') {
      Token t;
      t.accepts.set();
      out.push_back(t);
      i++;
    } else if (ch == '\\') {
      // An escape takes the next byte; a backslash at the very end is a literal backslash.
      out.push_back(literal(i + 1 < p.size() ? p[i + 1] : '\\', nocase));
      i += i + 1 < p.size() ? 2 : 1;
    } else if (ch == '[') {
      i++;
      bool negate = i < p.size() && p[i] == '^';
      if (negate) i++;
      Token t;
      while (i < p.size() && p[i] != ']') {
        if (p[i] == '\\' && i + 1 < p.size()) {
          t.accepts |= literal(p[i + 1], false).accepts;  // escapes ignore nocase
          i += 2;
        } else if (i + 2 < p.size() && p[i + 1] == '-') {
          int lo = static_cast<signed char>(p[i]), hi = static_cast<signed char>(p[i + 2]);
          if (lo > hi) std::swap(lo, hi);
          if (nocase) {
            lo = FoldRef(lo);
            hi = FoldRef(hi);
          }
          for (int b = 0; b < 256; b++) {
            int c = nocase ? FoldRef(AsChar(b)) : AsChar(b);
            if (c >= lo && c <= hi) t.accepts.set(b);
          }
          i += 3;
        } else {
          t.accepts |= literal(p[i], nocase).accepts;
          i++;
        }
      }
      if (i < p.size()) i++;  // the closing ']'; an open set runs to the pattern's end
      if (negate) t.accepts.flip();
      out.push_back(t);
    } else {
      out.push_back(literal(ch, nocase));
      i++;
    }
  }
  return out;
}

inline bool Match(std::string_view pattern, std::string_view str, bool nocase) {
  if (str.empty()) return pattern.empty();
  std::vector<Token> t = Tokenize(pattern, nocase);
  // Star groups followed by something: past 1000 of them, Redis' matcher cannot go on.
  int groups = 0;
  for (size_t k = 0; k + 1 < t.size(); k++) {
    if (t[k].star && !t[k + 1].star) groups++;
  }
  if (groups > 1000) return false;
  const size_t n = str.size(), m = t.size();
  // ok[k][j]: tokens k.. match str[j..]. Filled from the end.
  std::vector<std::vector<char>> ok(m + 1, std::vector<char>(n + 1, 0));
  ok[m][n] = 1;
  for (size_t k = m; k-- > 0;) {
    for (size_t j = n + 1; j-- > 0;) {
      if (t[k].star) {
        ok[k][j] = ok[k + 1][j] || (j < n && ok[k][j + 1]);
      } else {
        ok[k][j] =
            j < n && t[k].accepts.test(static_cast<unsigned char>(str[j])) && ok[k + 1][j + 1];
      }
    }
  }
  return ok[0][0];
}

}  // namespace kv::glob_ref
