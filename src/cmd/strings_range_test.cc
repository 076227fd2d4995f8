// In-process tests of the STRING commands that work on part of a value or on its number:
// APPEND, STRLEN, GETRANGE, SETRANGE, the INCR/DECR family, INCRBYFLOAT and LCS.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cmd/command_test_util.h"
#include "cmd/strings_test_util.h"

namespace kv::cmd {
namespace {

using namespace strings_test_util;

// ---- APPEND / STRLEN / GETRANGE / SETRANGE ------------------------------------------------------

TEST_F(StringsTest, Append) {
  TakeEvents();
  EXPECT_EQ(r.Run({"append", "k", "Hello"}), Int(5));
  EXPECT_EQ(Encoding("k"), "embstr");
  EXPECT_EQ(r.Run({"append", "k", " World"}), Int(11));
  EXPECT_EQ(r.last_propagated(), (Argv{"append", "k", " World"}));
  EXPECT_EQ(TakeEvents(), (Events{{"new", "k"}, {"append", "k"}, {"append", "k"}}));
  EXPECT_EQ(r.Run({"get", "k"}), Bulk("Hello World"));
  EXPECT_EQ(Encoding("k"), "raw");

  EXPECT_EQ(r.Run({"append", "n", "12"}), Int(2));  // a new key is encoded as SET would
  EXPECT_EQ(Encoding("n"), "int");
  EXPECT_EQ(r.Run({"append", "n", "3"}), Int(3));
  EXPECT_EQ(r.Run({"get", "n"}), Bulk("123"));
  EXPECT_EQ(Encoding("n"), "raw");
  EXPECT_EQ(r.Run({"append", "n", ""}), Int(3));

  EXPECT_EQ(r.Run({"setex", "t", "100", "a"}), kOk);
  EXPECT_EQ(r.Run({"append", "t", "b"}), Int(2));
  EXPECT_EQ(ExpireOf("t"), kNow + 100000);

  PutList("l");
  EXPECT_EQ(r.Run({"append", "l", "x"}), kWrongType);
  EXPECT_EQ(r.Run({"append", "k"}), Arity("append"));
}

TEST_F(StringsTest, AppendRespectsProtoMaxBulkLen) {
  r.hooks.max_bulk_len = 10;
  EXPECT_EQ(r.Run({"set", "s", "12345678"}), kOk);
  EXPECT_EQ(r.Run({"append", "s", "90"}), Int(10));  // exactly the limit is fine
  EXPECT_EQ(r.Run({"append", "s", "x"}), kTooLong);
  EXPECT_EQ(r.Run({"get", "s"}), Bulk("1234567890"));
  EXPECT_TRUE(r.last_propagated().empty());
  // Creating a key is not checked (the argument already passed the protocol limit).
  EXPECT_EQ(r.Run({"append", "big", "0123456789ABC"}), Int(13));
}

TEST_F(StringsTest, StrLen) {
  EXPECT_EQ(r.Run({"strlen", "missing"}), Int(0));
  EXPECT_EQ(r.Run({"set", "s", "hello"}), kOk);
  EXPECT_EQ(r.Run({"strlen", "s"}), Int(5));
  EXPECT_EQ(r.Run({"set", "n", "-123"}), kOk);
  EXPECT_EQ(r.Run({"strlen", "n"}), Int(4));
  EXPECT_EQ(r.Run({"set", "e", ""}), kOk);
  EXPECT_EQ(r.Run({"strlen", "e"}), Int(0));
  PutList("l");
  EXPECT_EQ(r.Run({"strlen", "l"}), kWrongType);
  EXPECT_EQ(r.Run({"strlen"}), Arity("strlen"));
}

TEST_F(StringsTest, GetRange) {
  EXPECT_EQ(r.Run({"set", "s", "This is a string"}), kOk);
  EXPECT_EQ(r.Run({"getrange", "s", "0", "3"}), Bulk("This"));
  EXPECT_EQ(r.Run({"getrange", "s", "-3", "-1"}), Bulk("ing"));
  EXPECT_EQ(r.Run({"getrange", "s", "0", "-1"}), Bulk("This is a string"));
  EXPECT_EQ(r.Run({"getrange", "s", "10", "100"}), Bulk("string"));
  EXPECT_EQ(r.Run({"getrange", "s", "0", "0"}), Bulk("T"));
  EXPECT_EQ(r.Run({"getrange", "s", "-1", "-1"}), Bulk("g"));
  EXPECT_EQ(r.Run({"getrange", "s", "-100", "2"}), Bulk("Thi"));
  EXPECT_EQ(r.Run({"getrange", "s", "5", "3"}), kEmpty);
  EXPECT_EQ(r.Run({"getrange", "s", "-1", "-5"}), kEmpty);
  EXPECT_EQ(r.Run({"getrange", "s", "3", "-100"}), kEmpty);
  EXPECT_EQ(r.Run({"getrange", "s", "20", "30"}), kEmpty);
  EXPECT_EQ(r.Run({"getrange", "s", "-9223372036854775808", "9223372036854775807"}),
            Bulk("This is a string"));
  EXPECT_EQ(r.Run({"substr", "s", "0", "3"}), Bulk("This"));

  EXPECT_EQ(r.Run({"set", "n", "12345"}), kOk);
  EXPECT_EQ(r.Run({"getrange", "n", "1", "2"}), Bulk("23"));
  EXPECT_EQ(r.Run({"getrange", "missing", "0", "-1"}), kEmpty);
  EXPECT_EQ(r.Run({"set", "e", ""}), kOk);
  EXPECT_EQ(r.Run({"getrange", "e", "0", "-1"}), kEmpty);

  PutList("l");
  EXPECT_EQ(r.Run({"getrange", "s", "a", "1"}), kNotInt);
  EXPECT_EQ(r.Run({"getrange", "s", "0", "1.5"}), kNotInt);
  EXPECT_EQ(r.Run({"getrange", "l", "x", "1"}), kNotInt);  // arguments before the type
  EXPECT_EQ(r.Run({"getrange", "l", "0", "1"}), kWrongType);
  EXPECT_EQ(r.Run({"getrange", "s", "0"}), Arity("getrange"));
}

TEST_F(StringsTest, SetRange) {
  EXPECT_EQ(r.Run({"set", "k", "Hello World"}), kOk);
  TakeEvents();
  EXPECT_EQ(r.Run({"setrange", "k", "6", "Redis"}), Int(11));
  EXPECT_EQ(r.last_propagated(), (Argv{"setrange", "k", "6", "Redis"}));
  EXPECT_EQ(TakeEvents(), (Events{{"setrange", "k"}}));
  EXPECT_EQ(r.Run({"get", "k"}), Bulk("Hello Redis"));
  EXPECT_EQ(Encoding("k"), "raw");
  EXPECT_EQ(r.Run({"setrange", "k", "11", "!!"}), Int(13));
  EXPECT_EQ(r.Run({"setrange", "k", "15", "x"}), Int(16));
  EXPECT_EQ(r.Run({"get", "k"}), Bulk(std::string("Hello Redis!!\0\0x", 16)));

  EXPECT_EQ(r.Run({"setrange", "p", "6", "Redis"}), Int(11));  // zero-padded new key
  EXPECT_EQ(r.Run({"get", "p"}), Bulk(std::string("\0\0\0\0\0\0Redis", 11)));

  EXPECT_EQ(r.Run({"set", "n", "12345"}), kOk);
  EXPECT_EQ(r.Run({"setrange", "n", "0", "9"}), Int(5));
  EXPECT_EQ(r.Run({"get", "n"}), Bulk("92345"));
  EXPECT_EQ(Encoding("n"), "raw");

  EXPECT_EQ(r.Run({"setex", "t", "100", "abc"}), kOk);
  EXPECT_EQ(r.Run({"setrange", "t", "1", "X"}), Int(3));
  EXPECT_EQ(ExpireOf("t"), kNow + 100000);
}

TEST_F(StringsTest, SetRangeEmptyValueAndErrors) {
  TakeEvents();
  EXPECT_EQ(r.Run({"setrange", "missing", "5", ""}), Int(0));
  EXPECT_EQ(ExpireOf("missing"), -2);
  EXPECT_TRUE(r.last_propagated().empty());
  EXPECT_EQ(r.Run({"set", "k", "abc"}), kOk);
  TakeEvents();
  EXPECT_EQ(r.Run({"setrange", "k", "10", ""}), Int(3));
  EXPECT_TRUE(r.last_propagated().empty());
  EXPECT_EQ(TakeEvents(), Events{});

  EXPECT_EQ(r.Run({"setrange", "k", "-1", "x"}), Err("offset is out of range"));
  EXPECT_EQ(r.Run({"setrange", "k", "x", "x"}), kNotInt);
  PutList("l");
  EXPECT_EQ(r.Run({"setrange", "l", "0", "x"}), kWrongType);
  EXPECT_EQ(r.Run({"setrange", "l", "0", ""}), kWrongType);

  r.hooks.max_bulk_len = 10;
  EXPECT_EQ(r.Run({"setrange", "m", "5", "abcde"}), Int(10));
  EXPECT_EQ(r.Run({"setrange", "m", "6", "abcde"}), kTooLong);
  EXPECT_EQ(r.Run({"setrange", "h", "9223372036854775807", "x"}), kTooLong);
  EXPECT_EQ(ExpireOf("h"), -2);
  EXPECT_EQ(r.Run({"setrange", "k", "0"}), Arity("setrange"));
}

// ---- Counters -----------------------------------------------------------------------------------

TEST_F(StringsTest, IncrDecrFamily) {
  TakeEvents();
  EXPECT_EQ(r.Run({"incr", "c"}), Int(1));
  EXPECT_EQ(r.last_propagated(), (Argv{"incr", "c"}));
  EXPECT_EQ(r.Run({"INCR", "c"}), Int(2));
  EXPECT_EQ(r.Run({"decr", "c"}), Int(1));
  EXPECT_EQ(r.Run({"incrby", "c", "10"}), Int(11));
  EXPECT_EQ(r.Run({"decrby", "c", "20"}), Int(-9));
  EXPECT_EQ(r.Run({"incrby", "c", "-1"}), Int(-10));
  EXPECT_EQ(TakeEvents(), (Events{{"new", "c"},
                                  {"incrby", "c"},
                                  {"incrby", "c"},
                                  {"incrby", "c"},
                                  {"incrby", "c"},
                                  {"incrby", "c"},
                                  {"incrby", "c"}}));
  EXPECT_EQ(Encoding("c"), "int");
  EXPECT_EQ(r.Run({"get", "c"}), Bulk("-10"));
  EXPECT_EQ(r.Run({"decr", "d"}), Int(-1));

  EXPECT_EQ(r.Run({"append", "raw", "1"}), Int(1));
  EXPECT_EQ(r.Run({"append", "raw", "2"}), Int(2));
  EXPECT_EQ(r.Run({"incr", "raw"}), Int(13));
  EXPECT_EQ(Encoding("raw"), "int");

  EXPECT_EQ(r.Run({"setex", "t", "100", "5"}), kOk);
  EXPECT_EQ(r.Run({"incr", "t"}), Int(6));
  EXPECT_EQ(ExpireOf("t"), kNow + 100000);
}

TEST_F(StringsTest, IncrDecrErrors) {
  for (const char* v : {" 1", "1.5", "abc", "01", "", "9223372036854775808"}) {
    EXPECT_EQ(r.Run({"set", "s", v}), kOk);
    EXPECT_EQ(r.Run({"incr", "s"}), kNotInt) << v;
  }
  EXPECT_TRUE(r.last_propagated().empty());
  const std::string overflow = Err("increment or decrement would overflow");
  EXPECT_EQ(r.Run({"set", "m", "9223372036854775807"}), kOk);
  EXPECT_EQ(r.Run({"incr", "m"}), overflow);
  EXPECT_EQ(r.Run({"incrby", "m", "1"}), overflow);
  EXPECT_EQ(r.Run({"decrby", "m", "-1"}), overflow);
  EXPECT_EQ(r.Run({"get", "m"}), Bulk("9223372036854775807"));
  EXPECT_EQ(r.Run({"set", "m", "-9223372036854775808"}), kOk);
  EXPECT_EQ(r.Run({"decr", "m"}), overflow);
  EXPECT_EQ(r.Run({"incrby", "m", "-1"}), overflow);
  EXPECT_EQ(r.Run({"incrby", "m", "9223372036854775807"}), Int(-1));

  EXPECT_EQ(r.Run({"incrby", "c", "abc"}), kNotInt);
  EXPECT_EQ(r.Run({"incrby", "c", "9223372036854775808"}), kNotInt);
  EXPECT_EQ(r.Run({"decrby", "c", "-9223372036854775808"}), Err("decrement would overflow"));
  EXPECT_EQ(ExpireOf("c"), -2);
  PutList("l");
  EXPECT_EQ(r.Run({"incr", "l"}), kWrongType);
  EXPECT_EQ(r.Run({"incrby", "l", "abc"}), kNotInt);  // the increment is parsed first
  EXPECT_EQ(r.Run({"incr"}), Arity("incr"));
  EXPECT_EQ(r.Run({"incrby", "c"}), Arity("incrby"));
}

TEST_F(StringsTest, IncrByFloat) {
  EXPECT_EQ(r.Run({"set", "f", "10.50"}), kOk);
  TakeEvents();
  EXPECT_EQ(r.Run({"incrbyfloat", "f", "0.1"}), Bulk("10.6"));
  EXPECT_EQ(r.last_propagated(), (Argv{"SET", "f", "10.6", "KEEPTTL"}));
  EXPECT_EQ(TakeEvents(), (Events{{"incrbyfloat", "f"}}));
  EXPECT_EQ(r.Run({"get", "f"}), Bulk("10.6"));
  EXPECT_EQ(r.Run({"incrbyfloat", "f", "-5"}), Bulk("5.6"));
  EXPECT_EQ(r.Run({"set", "g", "5.0e3"}), kOk);
  EXPECT_EQ(r.Run({"incrbyfloat", "g", "2.0e2"}), Bulk("5200"));
  EXPECT_EQ(r.Run({"incrbyfloat", "h", "3.5"}), Bulk("3.5"));
  EXPECT_EQ(r.Run({"incrbyfloat", "h", "-3.5"}), Bulk("0"));
  EXPECT_EQ(r.Run({"set", "i", "3"}), kOk);
  EXPECT_EQ(r.Run({"incrbyfloat", "i", "1.25"}), Bulk("4.25"));
  EXPECT_EQ(r.Run({"setex", "t", "100", "1"}), kOk);
  EXPECT_EQ(r.Run({"incrbyfloat", "t", "1"}), Bulk("2"));
  EXPECT_EQ(ExpireOf("t"), kNow + 100000);
  EXPECT_EQ(r.last_propagated(), (Argv{"SET", "t", "2", "KEEPTTL"}));
}

TEST_F(StringsTest, IncrByFloatErrors) {
  EXPECT_EQ(r.Run({"set", "f", "1.5"}), kOk);
  EXPECT_EQ(r.Run({"incrbyfloat", "f", "abc"}), kNotFloat);
  EXPECT_EQ(r.Run({"incrbyfloat", "f", "nan"}), kNotFloat);
  EXPECT_EQ(r.Run({"incrbyfloat", "f", " 1"}), kNotFloat);
  EXPECT_EQ(r.Run({"incrbyfloat", "f", "1 "}), kNotFloat);
  EXPECT_EQ(r.Run({"incrbyfloat", "f", ""}), kNotFloat);
  const std::string naninf = Err("increment would produce NaN or Infinity");
  EXPECT_EQ(r.Run({"incrbyfloat", "f", "inf"}), naninf);
  EXPECT_EQ(r.Run({"set", "x", "inf"}), kOk);
  EXPECT_EQ(r.Run({"incrbyfloat", "x", "-inf"}), naninf);
  EXPECT_EQ(r.Run({"incrbyfloat", "x", "1"}), naninf);
  EXPECT_EQ(r.Run({"set", "s", "hello"}), kOk);
  EXPECT_EQ(r.Run({"incrbyfloat", "s", "1"}), kNotFloat);
  EXPECT_EQ(r.Run({"get", "f"}), Bulk("1.5"));
  EXPECT_TRUE(r.last_propagated().empty());
  PutList("l");
  EXPECT_EQ(r.Run({"incrbyfloat", "l", "1"}), kWrongType);
  EXPECT_EQ(r.Run({"incrbyfloat", "f"}), Arity("incrbyfloat"));
}

// ---- LCS ----------------------------------------------------------------------------------------

// "ohmytext" / "mynewtext": LCS "mytext", matches "text" (a 4..7, b 5..8) then "my" (a 2..3,
// b 0..1), as in Redis' documentation.
const std::string kTextMatch = "*2\r\n*2\r\n:4\r\n:7\r\n*2\r\n:5\r\n:8\r\n";
const std::string kMyMatch = "*2\r\n*2\r\n:2\r\n:3\r\n*2\r\n:0\r\n:1\r\n";

TEST_F(StringsTest, LcsStringAndLen) {
  EXPECT_EQ(r.Run({"mset", "key1", "ohmytext", "key2", "mynewtext"}), kOk);
  EXPECT_EQ(r.Run({"lcs", "key1", "key2"}), Bulk("mytext"));
  EXPECT_EQ(r.Run({"LCS", "key1", "key2", "len"}), Int(6));
  EXPECT_EQ(r.Run({"lcs", "key1", "key2", "WITHMATCHLEN"}), Bulk("mytext"));
  EXPECT_TRUE(r.last_propagated().empty());
  EXPECT_EQ(r.Run({"lcs", "key1", "none"}), kEmpty);
  EXPECT_EQ(r.Run({"lcs", "none", "none2", "LEN"}), Int(0));
  EXPECT_EQ(r.Run({"mset", "n1", "12345", "n2", "2345x"}), kOk);
  EXPECT_EQ(r.Run({"lcs", "n1", "n2"}), Bulk("2345"));
}

TEST_F(StringsTest, LcsIdx) {
  EXPECT_EQ(r.Run({"mset", "key1", "ohmytext", "key2", "mynewtext"}), kOk);
  EXPECT_EQ(r.Run({"lcs", "key1", "key2", "IDX"}),
            "*4\r\n$7\r\nmatches\r\n*2\r\n" + kTextMatch + kMyMatch + "$3\r\nlen\r\n:6\r\n");
  EXPECT_EQ(r.Run({"lcs", "key1", "key2", "idx", "minmatchlen", "4", "withmatchlen"}),
            "*4\r\n$7\r\nmatches\r\n*1\r\n*3\r\n*2\r\n:4\r\n:7\r\n*2\r\n:5\r\n:8\r\n:4\r\n"
            "$3\r\nlen\r\n:6\r\n");
  EXPECT_EQ(r.Run({"lcs", "key1", "key2", "IDX", "MINMATCHLEN", "-5"}),
            "*4\r\n$7\r\nmatches\r\n*2\r\n" + kTextMatch + kMyMatch + "$3\r\nlen\r\n:6\r\n");
  EXPECT_EQ(r.Run({"lcs", "none", "none2", "IDX"}),
            "*4\r\n$7\r\nmatches\r\n*0\r\n$3\r\nlen\r\n:0\r\n");
  EXPECT_EQ(r.Run({"set", "same", "abc"}), kOk);
  EXPECT_EQ(r.Run({"lcs", "same", "same", "IDX", "WITHMATCHLEN"}),
            "*4\r\n$7\r\nmatches\r\n*1\r\n*3\r\n*2\r\n:0\r\n:2\r\n*2\r\n:0\r\n:2\r\n:3\r\n"
            "$3\r\nlen\r\n:3\r\n");
  r.session.resp = 3;
  EXPECT_EQ(r.Run({"lcs", "key1", "key2", "IDX"}),
            "%2\r\n$7\r\nmatches\r\n*2\r\n" + kTextMatch + kMyMatch + "$3\r\nlen\r\n:6\r\n");
}

TEST_F(StringsTest, LcsErrors) {
  EXPECT_EQ(r.Run({"mset", "key1", "ohmytext", "key2", "mynewtext"}), kOk);
  PutList("l");
  const std::string not_strings = Err("The specified keys must contain string values");
  EXPECT_EQ(r.Run({"lcs", "l", "key1"}), not_strings);
  EXPECT_EQ(r.Run({"lcs", "key1", "l", "foo"}), not_strings);  // types before options
  EXPECT_EQ(r.Run({"lcs", "key1", "key2", "LEN", "IDX"}),
            Err("If you want both the length and indexes, please just use IDX."));
  EXPECT_EQ(r.Run({"lcs", "key1", "key2", "foo"}), kSyntax);
  EXPECT_EQ(r.Run({"lcs", "key1", "key2", "MINMATCHLEN"}), kSyntax);
  EXPECT_EQ(r.Run({"lcs", "key1", "key2", "MINMATCHLEN", "x"}), kNotInt);
  EXPECT_EQ(r.Run({"lcs", "key1"}), Arity("lcs"));
  r.hooks.max_bulk_len = 100;  // (8 + 1) * (9 + 1) cells of 4 bytes is 360
  EXPECT_EQ(r.Run({"lcs", "key1", "key2"}),
            Err("Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len"));
}

}  // namespace
}  // namespace kv::cmd
