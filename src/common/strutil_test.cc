#include "common/strutil.h"

#include <gtest/gtest.h>

#include <cmath>

namespace kv {
namespace {

TEST(ParseInt64, AcceptsWhatRedisAccepts) {
  EXPECT_EQ(ParseInt64("0"), 0);
  EXPECT_EQ(ParseInt64("-1"), -1);
  EXPECT_EQ(ParseInt64("9223372036854775807"), INT64_MAX);
  EXPECT_EQ(ParseInt64("-9223372036854775808"), INT64_MIN);
}

TEST(ParseInt64, RejectsWhatRedisRejects) {
  for (const char* s : {"", "-", "+1", " 1", "1 ", "01", "-0", "1a", "9223372036854775808",
                        "-9223372036854775809", "1.0", "0x10"}) {
    EXPECT_FALSE(ParseInt64(s).has_value()) << s;
  }
}

TEST(ParseDouble, Basics) {
  EXPECT_EQ(ParseDouble("1.5"), 1.5);
  EXPECT_EQ(ParseDouble("-inf"), -HUGE_VAL);
  EXPECT_FALSE(ParseDouble("nan").has_value());
  EXPECT_FALSE(ParseDouble(" 1").has_value());
  EXPECT_FALSE(ParseDouble("1x").has_value());
  EXPECT_FALSE(ParseDouble("").has_value());
}

TEST(LongDoubleToString, TrimsLikeIncrByFloat) {
  EXPECT_EQ(LongDoubleToString(10.5L), "10.5");
  EXPECT_EQ(LongDoubleToString(3.0L), "3");
  EXPECT_EQ(LongDoubleToString(-0.0L), "0");
  EXPECT_EQ(LongDoubleToString(5.0e3L), "5000");
}

TEST(DoubleToString, IntegersAndFractions) {
  EXPECT_EQ(DoubleToString(1.0), "1");
  EXPECT_EQ(DoubleToString(1.5), "1.5");
  EXPECT_EQ(DoubleToString(HUGE_VAL), "inf");
  EXPECT_EQ(DoubleToString(0.1), "0.10000000000000001");
}

TEST(GlobMatch, Patterns) {
  EXPECT_TRUE(GlobMatch("*", "anything"));
  EXPECT_TRUE(GlobMatch("h?llo", "hello"));
  EXPECT_TRUE(GlobMatch("h[ae]llo", "hallo"));
  EXPECT_FALSE(GlobMatch("h[ae]llo", "hillo"));
  EXPECT_TRUE(GlobMatch("h[^e]llo", "hallo"));
  EXPECT_FALSE(GlobMatch("h[^e]llo", "hello"));
  EXPECT_TRUE(GlobMatch("h[a-b]llo", "hbllo"));
  EXPECT_TRUE(GlobMatch("h\\*llo", "h*llo"));
  EXPECT_FALSE(GlobMatch("h\\*llo", "hello"));
  EXPECT_TRUE(GlobMatch("*ello*", "hello world"));
  EXPECT_FALSE(GlobMatch("a*b", "acd"));
  EXPECT_TRUE(GlobMatch("HELLO", "hello", /*nocase=*/true));
  EXPECT_TRUE(GlobMatch("", ""));
  EXPECT_FALSE(GlobMatch("", "a"));
}

TEST(GlobMatch, AdversarialPatternTerminates) {
  std::string pat(60, '*');
  pat += "b";
  EXPECT_FALSE(GlobMatch(pat, std::string(4000, 'a')));
}

TEST(SplitArgs, QuotesAndEscapes) {
  auto a = SplitArgs("set \"a b\" 'c d' \"\\x41\\n\"");
  ASSERT_TRUE(a.has_value());
  ASSERT_EQ(a->size(), 4u);
  EXPECT_EQ((*a)[1], "a b");
  EXPECT_EQ((*a)[2], "c d");
  EXPECT_EQ((*a)[3], "A\n");
  EXPECT_FALSE(SplitArgs("\"unterminated").has_value());
  EXPECT_FALSE(SplitArgs("\"a\"b").has_value());
  auto empty = SplitArgs("save \"\"");
  ASSERT_TRUE(empty.has_value());
  ASSERT_EQ(empty->size(), 2u);
  EXPECT_EQ((*empty)[1], "");
}

TEST(ParseMemory, Units) {
  EXPECT_EQ(ParseMemory("1gb"), 1073741824);
  EXPECT_EQ(ParseMemory("512mb"), 536870912);
  EXPECT_EQ(ParseMemory("1k"), 1000);
  EXPECT_EQ(ParseMemory("42"), 42);
  EXPECT_FALSE(ParseMemory("lots").has_value());
}

}  // namespace
}  // namespace kv

namespace kv {
namespace {

TEST(ParseScanCursor, StrtoulRules) {
  uint64_t c = 0;
  EXPECT_TRUE(ParseScanCursor("0", &c));
  EXPECT_EQ(c, 0u);
  EXPECT_TRUE(ParseScanCursor("007", &c));
  EXPECT_EQ(c, 7u);
  EXPECT_TRUE(ParseScanCursor("-1", &c));
  EXPECT_EQ(c, UINT64_MAX);
  EXPECT_FALSE(ParseScanCursor(" 1", &c));
  EXPECT_FALSE(ParseScanCursor("1x", &c));
  EXPECT_FALSE(ParseScanCursor("99999999999999999999999", &c));
}

}  // namespace
}  // namespace kv
