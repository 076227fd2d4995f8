// Runs the ACL rules' fuzz target without libFuzzer: random rule lists built from the pieces
// rules are made of (prefixes, patterns, parentheses, command and category names, flags, and
// odd bytes), so that each kind of rule meets every other often. Prints what it ran; the target
// aborts on a broken invariant.
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);
extern size_t acl_rules_fuzz_accepted;

int main() {
  // Inputs libFuzzer found once (nested selectors with control bytes in key patterns), run as
  // they are before the random ones.
  const std::vector<std::string> found = {
      std::string("\x02(\x0b~\x02(\x0b~))", 10),
  };
  for (const std::string& in : found) {
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(in.data()), in.size());
  }
  const std::vector<std::string> pieces = {
      "~", "%", "%R", "%W", "%RW", "%WR", "%RR", "R", "W", "~*", "*", "&", "&*", "+", "-", "@",
      "|", "(", ")", "()", " ", "on", "off", "nopass", "resetpass", "reset", ">", "<", "#", "!",
      "allkeys", "resetkeys", "allchannels", "resetchannels", "allcommands", "nocommands",
      "clearselectors", "sanitize-payload", "skip-sanitize-payload", "get", "set", "config",
      "config|get", "select", "client|kill", "|0", "|x", "all", "read", "write", "hash",
      "dangerous", "pubsub", "keyspace", "a", "b", "?", "[", "]", "\\", "\t", std::string(1, '\0'),
      "\xff", std::string(64, 'a'), std::string(64, 'G'),
  };
  std::mt19937 rng(20241007);
  const int kLists = 200000;
  for (int i = 0; i < kLists; i++) {
    std::string in;
    in.push_back(static_cast<char>(rng() & 3));  // acl-pubsub-default, a user with rules
    size_t rules = rng() % 6;
    for (size_t r = 0; r < rules; r++) {
      if (r) in.push_back('\n');
      size_t parts = 1 + rng() % 4;
      for (size_t p = 0; p < parts; p++) in += pieces[rng() % pieces.size()];
    }
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(in.data()), in.size());
  }
  printf("acl rules: %d random rule lists (%zu accepted), every invariant held\n", kLists,
         acl_rules_fuzz_accepted);
  return 0;
}
