#include "common/strutil.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>

namespace kv {

std::optional<uint64_t> ParseUint64(std::string_view s) {
  if (s.empty() || s.size() > 20) return std::nullopt;
  if (s.size() == 1 && s[0] == '0') return 0;
  if (s[0] < '1' || s[0] > '9') return std::nullopt;
  uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    uint64_t d = static_cast<uint64_t>(c - '0');
    if (v > (std::numeric_limits<uint64_t>::max() - d) / 10) return std::nullopt;
    v = v * 10 + d;
  }
  return v;
}

std::optional<int64_t> ParseInt64(std::string_view s) {
  if (s.empty() || s.size() > 20) return std::nullopt;
  bool neg = false;
  if (s[0] == '-') {
    neg = true;
    s.remove_prefix(1);
    if (s.empty() || s[0] == '0') return std::nullopt;
  }
  auto u = ParseUint64(s);
  if (!u) return std::nullopt;
  if (neg) {
    if (*u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) + 1) return std::nullopt;
    return static_cast<int64_t>(0 - *u);
  }
  if (*u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return std::nullopt;
  return static_cast<int64_t>(*u);
}

bool ParseScanCursor(std::string_view s, uint64_t* cursor) {
  std::string buf(s);
  if (!buf.empty() && isspace(static_cast<unsigned char>(buf[0]))) return false;
  errno = 0;
  char* end = nullptr;
  unsigned long long v = strtoull(buf.c_str(), &end, 10);
  if (*end != '\0' || errno == ERANGE) return false;
  *cursor = v;
  return true;
}

std::optional<double> ParseDouble(std::string_view s) {
  if (s.empty() || s.size() > 5 * 1024) return std::nullopt;
  if (isspace(static_cast<unsigned char>(s[0]))) return std::nullopt;
  std::string tmp(s);
  char* end = nullptr;
  errno = 0;
  double v = strtod(tmp.c_str(), &end);
  if (static_cast<size_t>(end - tmp.c_str()) != tmp.size()) return std::nullopt;
  if (errno == ERANGE && (v == HUGE_VAL || v == -HUGE_VAL || std::fpclassify(v) == FP_ZERO))
    return std::nullopt;
  if (std::isnan(v)) return std::nullopt;
  return v;
}

std::optional<long double> ParseLongDouble(std::string_view s) {
  if (s.empty() || s.size() > 5 * 1024) return std::nullopt;
  if (isspace(static_cast<unsigned char>(s[0]))) return std::nullopt;
  std::string tmp(s);
  char* end = nullptr;
  errno = 0;
  long double v = strtold(tmp.c_str(), &end);
  if (static_cast<size_t>(end - tmp.c_str()) != tmp.size()) return std::nullopt;
  if (isspace(static_cast<unsigned char>(tmp.back()))) return std::nullopt;
  if (errno == ERANGE && (v == HUGE_VALL || v == -HUGE_VALL || std::fpclassify(v) == FP_ZERO))
    return std::nullopt;
  if (std::isnan(v)) return std::nullopt;
  return v;
}

std::string Int64ToString(int64_t v) {
  char buf[24];
  int n = snprintf(buf, sizeof(buf), "%lld", static_cast<long long>(v));
  return std::string(buf, n);
}

std::string DoubleToString(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  if (d == 0) return std::signbit(d) ? "-0" : "0";
  char buf[64];
  // Exact integers within 2^52 print without a fraction, as Redis does.
  constexpr double kMin = -4503599627370495.0, kMax = 4503599627370496.0;
  if (d > kMin && d < kMax && d == static_cast<double>(static_cast<long long>(d))) {
    int n = snprintf(buf, sizeof(buf), "%lld", static_cast<long long>(d));
    return std::string(buf, n);
  }
  int n = snprintf(buf, sizeof(buf), "%.17g", d);
  return std::string(buf, n);
}

std::string LongDoubleToString(long double v) {
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  if (std::isnan(v)) return "nan";
  char buf[5 * 1024 + 64];
  int n = snprintf(buf, sizeof(buf), "%.17Lf", v);
  if (n <= 0 || static_cast<size_t>(n) >= sizeof(buf)) return "0";
  std::string s(buf, n);
  if (s.find('.') != std::string::npos) {
    while (!s.empty() && s.back() == '0') s.pop_back();
    if (!s.empty() && s.back() == '.') s.pop_back();
  }
  if (s == "-0") s = "0";
  return s;
}

namespace {
// ASCII case folding, as Redis' strcasecmp in the C locale (and without a libc call per byte:
// option and command names are compared on every request).
inline char FoldAscii(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c; }
}  // namespace

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); i++) {
    if (FoldAscii(a[i]) != FoldAscii(b[i])) return false;
  }
  return true;
}

std::string ToLower(std::string_view s) {
  std::string r(s);
  for (auto& c : r) c = FoldAscii(c);
  return r;
}

std::string ToUpper(std::string_view s) {
  std::string r(s);
  for (auto& c : r) c = static_cast<char>(toupper(static_cast<unsigned char>(c)));
  return r;
}

namespace {
int HexVal(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}
}  // namespace

std::optional<std::vector<std::string>> SplitArgs(std::string_view line) {
  std::vector<std::string> out;
  size_t i = 0, n = line.size();
  while (true) {
    while (i < n && isspace(static_cast<unsigned char>(line[i]))) i++;
    if (i >= n) return out;
    bool inq = false, insq = false, done = false;
    std::string cur;
    while (!done) {
      if (inq) {
        if (i >= n) return std::nullopt;
        if (line[i] == '\\' && i + 3 < n && line[i + 1] == 'x' && HexVal(line[i + 2]) >= 0 &&
            HexVal(line[i + 3]) >= 0) {
          cur.push_back(static_cast<char>(HexVal(line[i + 2]) * 16 + HexVal(line[i + 3])));
          i += 3;
        } else if (line[i] == '\\' && i + 1 < n) {
          i++;
          char c = line[i];
          switch (c) {
            case 'n': c = '\n'; break;
            case 'r': c = '\r'; break;
            case 't': c = '\t'; break;
            case 'b': c = '\b'; break;
            case 'a': c = '\a'; break;
            default: break;
          }
          cur.push_back(c);
        } else if (line[i] == '"') {
          // A closing quote must be followed by a space or the end.
          if (i + 1 < n && !isspace(static_cast<unsigned char>(line[i + 1]))) return std::nullopt;
          done = true;
        } else {
          cur.push_back(line[i]);
        }
      } else if (insq) {
        if (i >= n) return std::nullopt;
        if (line[i] == '\\' && i + 1 < n && line[i + 1] == '\'') {
          i++;
          cur.push_back('\'');
        } else if (line[i] == '\'') {
          if (i + 1 < n && !isspace(static_cast<unsigned char>(line[i + 1]))) return std::nullopt;
          done = true;
        } else {
          cur.push_back(line[i]);
        }
      } else {
        if (i >= n) {
          done = true;
          break;
        }
        char c = line[i];
        if (c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\0') {
          done = true;
        } else if (c == '"') {
          inq = true;
        } else if (c == '\'') {
          insq = true;
        } else {
          cur.push_back(c);
        }
      }
      if (i < n) i++;
    }
    out.push_back(std::move(cur));
  }
}

std::string QuoteString(std::string_view s) {
  std::string r = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '\\': r += "\\\\"; break;
      case '"': r += "\\\""; break;
      case '\n': r += "\\n"; break;
      case '\r': r += "\\r"; break;
      case '\t': r += "\\t"; break;
      case '\a': r += "\\a"; break;
      case '\b': r += "\\b"; break;
      default:
        if (isprint(c)) {
          r.push_back(static_cast<char>(c));
        } else {
          char buf[8];
          snprintf(buf, sizeof(buf), "\\x%02x", c);
          r += buf;
        }
    }
  }
  r.push_back('"');
  return r;
}

std::optional<int64_t> ParseMemory(std::string_view s) {
  std::string l = ToLower(s);
  int64_t mul = 1;
  auto ends = [&](std::string_view suf) {
    return l.size() > suf.size() && l.compare(l.size() - suf.size(), suf.size(), suf) == 0;
  };
  struct Unit { const char* suf; int64_t mul; };
  static const Unit kUnits[] = {{"gb", 1024LL * 1024 * 1024}, {"mb", 1024 * 1024}, {"kb", 1024},
                                {"g", 1000000000LL},         {"m", 1000000},      {"k", 1000},
                                {"b", 1}};
  for (const auto& u : kUnits) {
    if (ends(u.suf)) {
      mul = u.mul;
      l.resize(l.size() - strlen(u.suf));
      break;
    }
  }
  auto v = ParseInt64(l);
  if (!v) return std::nullopt;
  return *v * mul;
}

std::string HexEncode(const uint8_t* data, size_t len) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string r(2 * len, '0');
  for (size_t i = 0; i < len; i++) {
    r[2 * i] = kHex[data[i] >> 4];
    r[2 * i + 1] = kHex[data[i] & 0xf];
  }
  return r;
}

bool HexDecode(std::string_view hex, std::string* out) {
  if (hex.size() % 2) return false;
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  out->clear();
  out->reserve(hex.size() / 2);
  for (size_t i = 0; i < hex.size(); i += 2) {
    int hi = nibble(hex[i]), lo = nibble(hex[i + 1]);
    if (hi < 0 || lo < 0) return false;
    out->push_back(static_cast<char>(hi << 4 | lo));
  }
  return true;
}

}  // namespace kv
