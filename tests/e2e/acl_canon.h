// Comparing ACL replies of kvstore and redis-server: what Redis orders by a per-process hash
// is compared as a set.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "tests/support/resp_client.h"

namespace kv::test {

// Redis lists a selector's single commands ("+get +set", after its categories) in its command
// table's hash order, which changes from one redis-server process to the next: each run of them
// is compared as a set. Everything else in a reply is compared as it is.
inline std::string CanonText(const std::string& s) {
  std::vector<std::string> tokens;
  for (size_t i = 0; i <= s.size();) {
    size_t end = s.find(' ', i);
    if (end == std::string::npos) end = s.size();
    tokens.push_back(s.substr(i, end - i));
    i = end + 1;
  }
  auto single = [](const std::string& t) {
    return t.size() > 1 && (t[0] == '+' || t[0] == '-') && t[1] != '@' && t.back() != ')';
  };
  for (size_t i = 0; i < tokens.size();) {
    size_t j = i;
    while (j < tokens.size() && single(tokens[j])) j++;
    std::sort(tokens.begin() + i, tokens.begin() + j);
    i = j == i ? i + 1 : j;
  }
  std::string out;
  for (const std::string& t : tokens) out += t + " ";
  return out;
}

inline std::string Canon(const Reply& r) {
  std::string out = std::string(1, r.type) + (r.is_null ? "null" : "") + std::to_string(r.integer) +
                    ":" + CanonText(r.str) + "[";
  for (const Reply& e : r.elems) out += Canon(e) + ",";
  return out + "]";
}

}  // namespace kv::test
