// Runs the glob fuzz target without libFuzzer: hundreds of thousands of random short inputs
// drawn from the bytes that matter to globs (compared with the reference), then the
// adversarial long ones of CVE-2022-36021 and CVE-2024-31228, each of which must finish (a
// backtracking matcher takes longer than the age of the universe on them). Prints what it ran;
// exits non-zero if an input disagrees with the reference (the target aborts) or a long one
// takes over 2 s (healthy: well under 10 ms).
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "common/glob.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

int Run(bool nocase, const std::string& pattern, const std::string& str) {
  std::string in;
  in.push_back(nocase ? 1 : 0);
  in.push_back(static_cast<char>(pattern.size() > 255 ? 255 : pattern.size()));
  in += pattern.substr(0, 255);
  in += str;
  return LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(in.data()), in.size());
}

std::string Repeat(const std::string& s, size_t n) {
  std::string out;
  out.reserve(s.size() * n);
  for (size_t i = 0; i < n; i++) out += s;
  return out;
}

}  // namespace

int main() {
  // Random short inputs over a small alphabet, so stars, sets, ranges and escapes meet often.
  const char alphabet[] = {'a', 'b', 'A',  'B', '*',    '?',    '[', ']',
                           '^', '-', '\\', 'z', '\x80', '\xff', '\0'};
  std::mt19937 rng(20221201);
  const int kRandom = 300000;
  for (int i = 0; i < kRandom; i++) {
    std::string p, s;
    size_t plen = rng() % 12, slen = rng() % 10;
    for (size_t j = 0; j < plen; j++) p.push_back(alphabet[rng() % sizeof(alphabet)]);
    for (size_t j = 0; j < slen; j++) s.push_back(alphabet[rng() % 5]);  // letters, '*', '?'
    Run(rng() & 1, p, s);
  }
  printf("glob: %d random inputs agree with the reference\n", kRandom);

  // Long adversarial inputs (the pattern travels whole here, not through the 255-byte field).
  std::vector<std::pair<std::string, std::string>> hard = {
      {Repeat("a*", 48) + "b", std::string(75, 'a')},
      {Repeat("a*", 500000) + "b", std::string(75, 'a')},
      {Repeat("*a", 1000) + "b", std::string(10000, 'a')},
      {Repeat("[a-z]*", 48) + "b", std::string(75, 'a')},
      {Repeat("\\a*", 48) + "b", std::string(75, 'a')},
      {Repeat("?*", 2000) + "b", std::string(100000, 'a')},
      {"*" + std::string(1024, 'a') + "b", std::string(20000, 'a')},
  };
  int failed = 0;
  for (const auto& [pattern, str] : hard) {
    auto start = std::chrono::steady_clock::now();
    bool got = kv::GlobMatch(pattern, str);
    double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    printf("glob: pattern of %zu bytes, string of %zu: %s in %.2f ms\n", pattern.size(), str.size(),
           got ? "match" : "no match", ms);
    if (got || ms > 2000) failed++;
  }
  return failed ? 1 : 0;
}
