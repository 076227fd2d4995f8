#include <algorithm>

#include "tests/e2e/diff/gen.h"

namespace kv::test {

std::string Gen::Value() {
  static const char* kValues[] = {"", "0", "1", "-1", "42", "3.14", "abc", "hello world",
                                  "9223372036854775807", "-9223372036854775808", "1e3", " 1",
                                  "0x10", "007", "-0", "inf", "nan", "\xff\x00\x01"};
  if (Chance(10)) return std::string(20 + Pick(100), static_cast<char>('a' + Pick(26)));
  std::string v = kValues[Pick(std::size(kValues))];
  if (v.empty() && Chance(50)) v = std::string("\0b", 2);
  return v;
}

std::string Gen::Int() {
  static const char* kInts[] = {"0",  "1",   "-1",  "10",  "100", "-100", "9223372036854775807",
                                "-9223372036854775808", "abc", "1.5", "", "3", "2", "-3", "20"};
  return kInts[Pick(std::size(kInts))];
}

std::string Gen::Float() {
  static const char* kFloats[] = {"0", "1.5", "-2.25", "1e10", "abc", "", "3", "0.1", "-0.1",
                                  "5.0e3", "inf", "1e308", "-1e308"};
  return kFloats[Pick(std::size(kFloats))];
}

std::string Gen::BadTtl() {
  static const char* kBad[] = {"0", "-1", "abc", "1.5", "", "-100", "9223372036854775807",
                               "-9223372036854775808", "9223372036854775"};
  return kBad[Pick(std::size(kBad))];
}

namespace {
std::vector<std::string> Texts(const Reply& r) {
  std::vector<std::string> v;
  for (const auto& e : r.elems) v.push_back(e.raw);
  return v;
}
}  // namespace

std::string SortedElements(const Args&, const Reply& r) {
  if (r.elems.empty()) return r.raw;
  auto v = Texts(r);
  std::sort(v.begin(), v.end());
  std::string s = std::string(1, r.type) + "sorted:";
  for (const auto& e : v) s += e;
  return s;
}

std::string SortedPairs(const Args&, const Reply& r) {
  if (r.elems.empty() || r.elems.size() % 2) return r.raw;
  std::vector<std::string> pairs;
  for (size_t i = 0; i + 1 < r.elems.size(); i += 2) {
    pairs.push_back(r.elems[i].raw + r.elems[i + 1].raw);
  }
  std::sort(pairs.begin(), pairs.end());
  std::string s = std::string(1, r.type) + "pairs:";
  for (const auto& p : pairs) s += p;
  return s;
}

std::string TypeOnly(const Args&, const Reply& r) {
  if (r.type == '-') return r.raw;  // errors must still match exactly
  return std::string(1, r.type) + (r.is_null ? "null" : "") + ":" +
         std::to_string(r.elems.size());
}

}  // namespace kv::test
