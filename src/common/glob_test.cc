#include "common/glob.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "common/glob_reference.h"

namespace kv {
namespace {

std::string Repeat(const std::string& s, size_t n) {
  std::string out;
  for (size_t i = 0; i < n; i++) out += s;
  return out;
}

// Redis' own quirks, each checked against redis-server 7.0 (KEYS, tests/e2e/hardening_test.cc
// compares many more patterns there).
TEST(Glob, RedisQuirks) {
  EXPECT_FALSE(GlobMatch("*", ""));  // an empty string matches only the empty pattern
  EXPECT_TRUE(GlobMatch("", ""));
  EXPECT_FALSE(GlobMatch("", "a"));
  EXPECT_TRUE(GlobMatch("a*", "a"));
  EXPECT_TRUE(GlobMatch("a***", "a"));
  EXPECT_FALSE(GlobMatch("[", "["));     // an open set with nothing in it matches nothing
  EXPECT_TRUE(GlobMatch("[^", "x"));     // ... and its negation everything
  EXPECT_TRUE(GlobMatch("[abc", "c"));   // an open set runs to the pattern's end
  EXPECT_TRUE(GlobMatch("[a-]", "_"));   // "a-]" is the range ']'..'a', left open
  EXPECT_TRUE(GlobMatch("[z-a]", "m"));  // reversed ranges are swapped
  EXPECT_TRUE(GlobMatch("\\", "\\"));    // a trailing backslash is itself
  EXPECT_TRUE(GlobMatch("[\\]]", "]"));
  EXPECT_TRUE(GlobMatch("[A-Z]", "q", true));
  EXPECT_FALSE(GlobMatch("[\\A]", "a", true));  // escapes in a set ignore nocase
  EXPECT_TRUE(GlobMatch("\\A", "a", true));     // outside one they do not
  // Range ends are signed chars: 0xff is -1, so [a-\xff] is -1..'a'.
  EXPECT_FALSE(GlobMatch("[a-\xff]", "z"));
  EXPECT_TRUE(GlobMatch("[a-\xff]", "\xff"));
  EXPECT_TRUE(GlobMatch("[a-\xff]", "A"));
}

TEST(Glob, MoreThanAThousandStarGroupsNeverMatch) {
  std::string s(2000, 'a');
  EXPECT_TRUE(GlobMatch(Repeat("a*", 1000), s));
  EXPECT_TRUE(GlobMatch(Repeat("*a", 1000), s));
  EXPECT_FALSE(GlobMatch(Repeat("*a", 1001), s));
  EXPECT_TRUE(GlobMatch(Repeat("a*", 1001), s));  // the 1001st group is the trailing one
  EXPECT_FALSE(GlobMatch(Repeat("a*", 1002), s));
}

TEST(Glob, AgreesWithTheReferenceOnEverySmallInput) {
  // Every pattern of up to 4 bytes over these 8 against every string of up to 3 bytes over 3.
  const std::string pa = "a*?[]^-\\", sa = "aA]";
  std::vector<std::string> patterns = {""}, strs = {""};
  for (size_t len = 0, from = 0; len < 4; len++) {
    size_t to = patterns.size();
    for (size_t i = from; i < to; i++)
      for (char c : pa) patterns.push_back(patterns[i] + c);
    from = to;
  }
  for (size_t len = 0, from = 0; len < 3; len++) {
    size_t to = strs.size();
    for (size_t i = from; i < to; i++)
      for (char c : sa) strs.push_back(strs[i] + c);
    from = to;
  }
  int checked = 0;
  for (const std::string& p : patterns) {
    for (const std::string& s : strs) {
      for (bool nocase : {false, true}) {
        ASSERT_EQ(GlobMatch(p, s, nocase), glob_ref::Match(p, s, nocase))
            << "pattern \"" << p << "\" string \"" << s << "\" nocase " << nocase;
        checked++;
      }
    }
  }
  EXPECT_GT(checked, 100000);
}

// The patterns of CVE-2022-36021 and CVE-2024-31228 finish: a backtracking matcher's time
// grows exponentially with their stars (48 stars against 75 bytes is beyond any lifetime).
TEST(Glob, AdversarialPatternsFinish) {
  std::string s(75, 'a');
  for (const std::string& p :
       {Repeat("a*", 48) + "b", Repeat("[a]*", 48) + "b", Repeat("\\a*", 48) + "b",
        Repeat("?*", 48) + "b", Repeat("a*", 500000) + "b"}) {
    auto start = std::chrono::steady_clock::now();
    EXPECT_FALSE(GlobMatch(p, s));
    EXPECT_TRUE(GlobMatch(p.substr(0, p.size() - 1), s) || p.size() > 2000);
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2)) << p.size();
  }
}

}  // namespace
}  // namespace kv
