// The glob matcher's fuzz target. The input is [flags][pattern length][pattern][string]; bit 0
// of flags is nocase. Short inputs must match the dynamic-programming reference
// (glob_reference.h); every input must finish, which libFuzzer's -timeout checks on long ones.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "common/glob.h"
#include "common/glob_reference.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  bool nocase = data[0] & 1;
  size_t plen = data[1];
  data += 2;
  size -= 2;
  if (plen > size) plen = size;
  std::string_view pattern(reinterpret_cast<const char*>(data), plen);
  std::string_view str(reinterpret_cast<const char*>(data + plen), size - plen);
  bool got = kv::GlobMatch(pattern, str, nocase);
  if (pattern.size() <= 64 && str.size() <= 64) {
    bool want = kv::glob_ref::Match(pattern, str, nocase);
    if (got != want) {
      fprintf(stderr, "GlobMatch(\"%.*s\", \"%.*s\", nocase=%d) = %d, the reference says %d\n",
              static_cast<int>(pattern.size()), pattern.data(), static_cast<int>(str.size()),
              str.data(), nocase, got, want);
      abort();
    }
  }
  return 0;
}
