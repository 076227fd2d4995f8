// In-process tests of the LIST command family: raw RESP2/RESP3 replies (checked against Redis
// 7.0.15), errors and their order, keyspace events, dirty counts and replication rewrites, and
// the list_ops.h cores the blocking commands will reuse.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cmd/command_test_util.h"
#include "cmd/list_ops.h"
#include "store/list_type.h"

namespace kv::cmd {
namespace {

using store::Entry;
using store::ObjType;
using Argv = std::vector<std::string>;
using Events = std::vector<std::pair<std::string, std::string>>;  // (event, key)

std::string Bulk(std::string_view s) {
  return "$" + std::to_string(s.size()) + "\r\n" + std::string(s) + "\r\n";
}
std::string Int(int64_t v) { return ":" + std::to_string(v) + "\r\n"; }
std::string Err(std::string_view msg) { return "-ERR " + std::string(msg) + "\r\n"; }
// An array of bulk strings.
std::string Arr(const std::vector<std::string>& elems) {
  std::string s = "*" + std::to_string(elems.size()) + "\r\n";
  for (const auto& e : elems) s += Bulk(e);
  return s;
}
std::string Ints(const std::vector<int64_t>& v) {
  std::string s = "*" + std::to_string(v.size()) + "\r\n";
  for (int64_t i : v) s += Int(i);
  return s;
}

const std::string kOk = "+OK\r\n";
const std::string kNull = "$-1\r\n";
const std::string kNullArr = "*-1\r\n";
const std::string kNull3 = "_\r\n";
const std::string kEmptyArr = "*0\r\n";
const std::string kWrongType =
    "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n";
const std::string kSyntax = Err("syntax error");
const std::string kNotInt = Err("value is not an integer or out of range");
const std::string kPositive = Err("value is out of range, must be positive");
const std::string kMin = "-9223372036854775808";
const std::string kMax = "9223372036854775807";

class ListsTest : public ::testing::Test {
 protected:
  std::string Run(Argv a) { return r.Run(std::move(a)); }
  bool Exists(const std::string& key) { return r.ks.db(0).Find(key) != nullptr; }
  std::string Range(const std::string& key) { return Run({"lrange", key, "0", "-1"}); }
  Events TakeEvents() {
    Events out = std::move(r.hooks.events);
    r.hooks.events.clear();
    return out;
  }
  // Runs with the keyspace's node size set, for multi-node lists.
  void SetFill(int64_t fill) { r.ks.limits().list_max_listpack_size = fill; }

  CommandRunner r;
};

// ---- Push and pop -------------------------------------------------------------------------------

TEST_F(ListsTest, PushOrderLengthAndEvents) {
  EXPECT_EQ(Run({"lpush", "l", "a", "b", "c"}), Int(3));
  EXPECT_EQ(TakeEvents(), (Events{{"new", "l"}, {"lpush", "l"}}));
  EXPECT_EQ(Run({"rpush", "l", "x", "y"}), Int(5));
  EXPECT_EQ(TakeEvents(), (Events{{"rpush", "l"}}));
  EXPECT_EQ(Range("l"), Arr({"c", "b", "a", "x", "y"}));
  EXPECT_EQ(Run({"llen", "l"}), Int(5));
  EXPECT_EQ(Run({"llen", "none"}), Int(0));
  EXPECT_EQ(r.ks.db(0).Find("l")->value.EncodingName(), std::string("quicklist"));
  EXPECT_EQ(r.Run({"rpush", "l", "z"}), Int(6));
  EXPECT_EQ(r.last_propagated(), (Argv{"rpush", "l", "z"}));
  EXPECT_EQ(Run({"lpush", "l"}), Err("wrong number of arguments for 'lpush' command"));
}

TEST_F(ListsTest, PushXOnlyOnExistingLists) {
  EXPECT_EQ(Run({"lpushx", "l", "a"}), Int(0));
  EXPECT_EQ(Run({"rpushx", "l", "a", "b"}), Int(0));
  EXPECT_FALSE(Exists("l"));
  EXPECT_TRUE(TakeEvents().empty());
  EXPECT_TRUE(r.last_propagated().empty());
  Run({"rpush", "l", "m"});
  EXPECT_EQ(Run({"lpushx", "l", "a", "b"}), Int(3));
  EXPECT_EQ(Run({"rpushx", "l", "z"}), Int(4));
  EXPECT_EQ(Range("l"), Arr({"b", "a", "m", "z"}));
}

TEST_F(ListsTest, PopWithoutCount) {
  EXPECT_EQ(Run({"lpop", "l"}), kNull);
  Run({"rpush", "l", "a", "b", "c"});
  TakeEvents();
  EXPECT_EQ(Run({"lpop", "l"}), Bulk("a"));
  EXPECT_EQ(Run({"rpop", "l"}), Bulk("c"));
  EXPECT_EQ(TakeEvents(), (Events{{"lpop", "l"}, {"rpop", "l"}}));
  EXPECT_EQ(Run({"rpop", "l"}), Bulk("b"));
  EXPECT_EQ(TakeEvents(), (Events{{"rpop", "l"}, {"del", "l"}}));
  EXPECT_FALSE(Exists("l"));
  EXPECT_EQ(r.last_propagated(), (Argv{"rpop", "l"}));
}

TEST_F(ListsTest, PopWithCount) {
  EXPECT_EQ(Run({"lpop", "l", "1"}), kNullArr);
  EXPECT_EQ(Run({"lpop", "l", "0"}), kNullArr);  // the key is checked before the count
  Run({"rpush", "l", "a", "b", "c", "d"});
  EXPECT_EQ(Run({"lpop", "l", "0"}), kEmptyArr);
  EXPECT_EQ(Run({"rpop", "l", "2"}), Arr({"d", "c"}));
  EXPECT_EQ(Run({"lpop", "l", kMax}), Arr({"a", "b"}));
  EXPECT_FALSE(Exists("l"));
  EXPECT_EQ(Run({"lpop", "l", "-1"}), kPositive);
  EXPECT_EQ(Run({"lpop", "l", "abc"}), kPositive);
  EXPECT_EQ(Run({"lpop", "l", "1", "2"}), Err("wrong number of arguments for 'lpop' command"));
}

TEST_F(ListsTest, PopCountsDirtyPerElement) {
  Run({"rpush", "l", "a", "b", "c"});
  std::string out;
  resp::ReplyWriter w(&out);
  std::vector<std::string_view> args{"rpop", "l", "5"};
  Context ctx(args, w, r.ks, r.session, r.hooks, r.stats, 0);
  ListPop(ctx, "l", false, 5, PopReply::kElements);
  EXPECT_EQ(out, Arr({"c", "b", "a"}));
  EXPECT_EQ(ctx.dirty, 3u);
  EXPECT_FALSE(ctx.rewrite.has_value());  // LPOP/RPOP propagate as they are
}

TEST_F(ListsTest, Resp3Nulls) {
  r.session.resp = 3;
  EXPECT_EQ(Run({"lpop", "l"}), kNull3);
  EXPECT_EQ(Run({"rpop", "l", "3"}), kNull3);
  EXPECT_EQ(Run({"lindex", "l", "0"}), kNull3);
  EXPECT_EQ(Run({"lpos", "l", "a"}), kNull3);
  EXPECT_EQ(Run({"lpos", "l", "a", "count", "0"}), kEmptyArr);
  EXPECT_EQ(Run({"lmpop", "1", "l", "left"}), kNull3);
  EXPECT_EQ(Run({"lmove", "l", "d", "left", "left"}), kNull3);
  EXPECT_EQ(Run({"rpoplpush", "l", "d"}), kNull3);
  Run({"rpush", "l", "a"});
  EXPECT_EQ(Run({"lpop", "l", "0"}), kEmptyArr);
  EXPECT_EQ(Run({"lindex", "l", "5"}), kNull3);
  EXPECT_EQ(Run({"lmpop", "1", "l", "left"}), "*2\r\n" + Bulk("l") + Arr({"a"}));
}

// ---- Reads by index -----------------------------------------------------------------------------

TEST_F(ListsTest, RangeClampsLikeRedis) {
  Run({"rpush", "l", "a", "b", "c", "d", "e"});
  EXPECT_EQ(Run({"lrange", "l", "1", "2"}), Arr({"b", "c"}));
  EXPECT_EQ(Run({"lrange", "l", "-2", "-1"}), Arr({"d", "e"}));
  EXPECT_EQ(Run({"lrange", "l", "-100", "100"}), Arr({"a", "b", "c", "d", "e"}));
  EXPECT_EQ(Run({"lrange", "l", kMin, kMax}), Arr({"a", "b", "c", "d", "e"}));
  EXPECT_EQ(Run({"lrange", "l", "3", "1"}), kEmptyArr);
  EXPECT_EQ(Run({"lrange", "l", "5", "10"}), kEmptyArr);
  EXPECT_EQ(Run({"lrange", "l", "0", kMin}), kEmptyArr);
  EXPECT_EQ(Run({"lrange", "none", "0", "-1"}), kEmptyArr);
  EXPECT_EQ(Run({"lrange", "none", "a", "1"}), kNotInt);  // parsed before the lookup
  EXPECT_EQ(Run({"lrange", "l", "0", "1.5"}), kNotInt);
}

TEST_F(ListsTest, IndexLooksUpBeforeParsing) {
  EXPECT_EQ(Run({"lindex", "none", "abc"}), kNull);
  Run({"rpush", "l", "a", "b", "c"});
  EXPECT_EQ(Run({"lindex", "l", "abc"}), kNotInt);
  EXPECT_EQ(Run({"lindex", "l", "0"}), Bulk("a"));
  EXPECT_EQ(Run({"lindex", "l", "-1"}), Bulk("c"));
  EXPECT_EQ(Run({"lindex", "l", "-3"}), Bulk("a"));
  EXPECT_EQ(Run({"lindex", "l", "-4"}), kNull);
  EXPECT_EQ(Run({"lindex", "l", "3"}), kNull);
  EXPECT_EQ(Run({"lindex", "l", kMin}), kNull);
}

TEST_F(ListsTest, SetErrorsAndEvents) {
  EXPECT_EQ(Run({"lset", "none", "abc", "x"}), Err("no such key"));
  Run({"rpush", "l", "a", "b", "c"});
  TakeEvents();
  EXPECT_EQ(Run({"lset", "l", "abc", "x"}), kNotInt);
  EXPECT_EQ(Run({"lset", "l", "3", "x"}), Err("index out of range"));
  EXPECT_EQ(Run({"lset", "l", "-4", "x"}), Err("index out of range"));
  EXPECT_TRUE(TakeEvents().empty());
  EXPECT_EQ(Run({"lset", "l", "-3", "x"}), kOk);
  EXPECT_EQ(Run({"lset", "l", "1", std::string(5000, 'y')}), kOk);
  EXPECT_EQ(TakeEvents(), (Events{{"lset", "l"}, {"lset", "l"}}));
  EXPECT_EQ(Range("l"), Arr({"x", std::string(5000, 'y'), "c"}));
}

// ---- Removal and insertion ----------------------------------------------------------------------

TEST_F(ListsTest, RemByCountAndDirection) {
  Run({"rpush", "l", "a", "b", "a", "c", "a", "b"});
  TakeEvents();
  EXPECT_EQ(Run({"lrem", "l", "-1", "a"}), Int(1));
  EXPECT_EQ(Range("l"), Arr({"a", "b", "a", "c", "b"}));
  EXPECT_EQ(Run({"lrem", "l", "1", "b"}), Int(1));
  EXPECT_EQ(Range("l"), Arr({"a", "a", "c", "b"}));
  EXPECT_EQ(Run({"lrem", "l", "0", "zz"}), Int(0));
  EXPECT_TRUE(r.last_propagated().empty());          // nothing removed: not propagated
  EXPECT_EQ(Run({"lrem", "l", kMin, "a"}), Int(2));  // INT64_MIN: all, as in Redis 7.0
  EXPECT_EQ(TakeEvents(), (Events{{"lrem", "l"}, {"lrem", "l"}, {"lrem", "l"}}));
  EXPECT_EQ(Run({"lrem", "l", "0", "c"}), Int(1));
  EXPECT_EQ(Run({"lrem", "l", "5", "b"}), Int(1));
  EXPECT_EQ(TakeEvents(), (Events{{"lrem", "l"}, {"lrem", "l"}, {"del", "l"}}));
  EXPECT_FALSE(Exists("l"));
  EXPECT_EQ(Run({"lrem", "l", "0", "a"}), Int(0));
  EXPECT_EQ(Run({"lrem", "l", "x", "a"}), kNotInt);
}

TEST_F(ListsTest, TrimKeepsTheRangeAndDeletesWhenEmpty) {
  EXPECT_EQ(Run({"ltrim", "none", "0", "1"}), kOk);
  EXPECT_EQ(Run({"ltrim", "none", "a", "1"}), kNotInt);
  Run({"rpush", "l", "a", "b", "c", "d", "e"});
  TakeEvents();
  EXPECT_EQ(r.Run({"ltrim", "l", "0", "-1"}), kOk);
  EXPECT_TRUE(r.last_propagated().empty());  // nothing removed
  EXPECT_EQ(TakeEvents(), (Events{{"ltrim", "l"}}));
  EXPECT_EQ(Run({"ltrim", "l", "1", "-2"}), kOk);
  EXPECT_EQ(Range("l"), Arr({"b", "c", "d"}));
  EXPECT_EQ(Run({"ltrim", "l", "-100", "1"}), kOk);
  EXPECT_EQ(Range("l"), Arr({"b", "c"}));
  TakeEvents();
  EXPECT_EQ(Run({"ltrim", "l", "5", "1"}), kOk);
  EXPECT_EQ(TakeEvents(), (Events{{"ltrim", "l"}, {"del", "l"}}));
  EXPECT_FALSE(Exists("l"));
}

TEST_F(ListsTest, InsertAtPivot) {
  EXPECT_EQ(Run({"linsert", "none", "middle", "a", "x"}), kSyntax);  // checked before the key
  EXPECT_EQ(Run({"linsert", "none", "before", "a", "x"}), Int(0));
  Run({"rpush", "l", "a", "b", "a"});
  TakeEvents();
  EXPECT_EQ(Run({"linsert", "l", "BEFORE", "a", "x"}), Int(4));
  EXPECT_EQ(Run({"linsert", "l", "After", "a", "y"}), Int(5));
  EXPECT_EQ(Run({"linsert", "l", "after", "zz", "q"}), Int(-1));
  EXPECT_EQ(Range("l"), Arr({"x", "a", "y", "b", "a"}));
  EXPECT_EQ(TakeEvents(), (Events{{"linsert", "l"}, {"linsert", "l"}}));
}

// ---- LPOS ---------------------------------------------------------------------------------------

TEST_F(ListsTest, PosOptions) {
  Run({"rpush", "l", "a", "b", "a", "c", "a"});
  EXPECT_EQ(Run({"lpos", "l", "a"}), Int(0));
  EXPECT_EQ(Run({"lpos", "l", "a", "rank", "2"}), Int(2));
  EXPECT_EQ(Run({"lpos", "l", "a", "rank", "-1"}), Int(4));
  EXPECT_EQ(Run({"lpos", "l", "a", "rank", "4"}), kNull);
  EXPECT_EQ(Run({"lpos", "l", "a", "rank", kMax}), kNull);
  EXPECT_EQ(Run({"lpos", "l", "zz"}), kNull);
  EXPECT_EQ(Run({"lpos", "l", "a", "count", "2"}), Ints({0, 2}));
  EXPECT_EQ(Run({"lpos", "l", "a", "count", "0"}), Ints({0, 2, 4}));
  EXPECT_EQ(Run({"lpos", "l", "a", "rank", "-2", "count", "0"}), Ints({2, 0}));
  EXPECT_EQ(Run({"lpos", "l", "a", "rank", "2", "count", "5", "maxlen", "3"}), Ints({2}));
  EXPECT_EQ(Run({"lpos", "l", "a", "maxlen", "1", "rank", "-1"}), Int(4));
  EXPECT_EQ(Run({"lpos", "l", "a", "maxlen", "2", "rank", "-2"}), kNull);
  EXPECT_EQ(Run({"lpos", "l", "a", "maxlen", "3", "rank", "-2"}), Int(2));
  EXPECT_EQ(Run({"lpos", "l", "b", "maxlen", "1"}), kNull);
  EXPECT_EQ(Run({"lpos", "l", "zz", "count", "1"}), kEmptyArr);
  // Redis 7.0 negates RANK INT64_MIN to itself: first match from the tail, COUNT ignored.
  EXPECT_EQ(Run({"lpos", "l", "a", "rank", kMin}), Int(4));
  EXPECT_EQ(Run({"lpos", "l", "a", "rank", kMin, "count", "1"}), Ints({4, 2, 0}));
  EXPECT_EQ(Run({"lpos", "l", "a", "rank", kMin, "count", "0", "maxlen", "2"}), Ints({4}));
  EXPECT_EQ(Run({"lpos", "none", "a"}), kNull);
  EXPECT_EQ(Run({"lpos", "none", "a", "count", "1"}), kEmptyArr);
}

TEST_F(ListsTest, PosErrorsComeBeforeTheLookup) {
  Run({"set", "s", "v"});
  EXPECT_EQ(Run({"lpos", "s", "a", "rank", "0"}),
            Err("RANK can't be zero: use 1 to start from the first match, 2 from the second ... "
                "or use negative to start from the end of the list"));
  EXPECT_EQ(Run({"lpos", "s", "a", "rank", "x"}), kNotInt);
  EXPECT_EQ(Run({"lpos", "s", "a", "count", "-1"}), Err("COUNT can't be negative"));
  EXPECT_EQ(Run({"lpos", "s", "a", "count", "x"}), Err("COUNT can't be negative"));
  EXPECT_EQ(Run({"lpos", "s", "a", "maxlen", "-1"}), Err("MAXLEN can't be negative"));
  EXPECT_EQ(Run({"lpos", "s", "a", "rank"}), kSyntax);
  EXPECT_EQ(Run({"lpos", "s", "a", "foo", "1"}), kSyntax);
  EXPECT_EQ(Run({"lpos", "s", "a", "count", "1"}), kWrongType);
}

// ---- LMOVE RPOPLPUSH LMPOP ----------------------------------------------------------------------

TEST_F(ListsTest, MoveBetweenListsWithEvents) {
  Run({"rpush", "src", "a", "b"});
  TakeEvents();
  EXPECT_EQ(Run({"lmove", "src", "dst", "left", "right"}), Bulk("a"));
  EXPECT_EQ(TakeEvents(), (Events{{"new", "dst"}, {"rpush", "dst"}, {"lpop", "src"}}));
  EXPECT_EQ(r.last_propagated(), (Argv{"lmove", "src", "dst", "left", "right"}));
  EXPECT_EQ(Run({"rpoplpush", "src", "dst"}), Bulk("b"));
  EXPECT_EQ(TakeEvents(), (Events{{"lpush", "dst"}, {"rpop", "src"}, {"del", "src"}}));
  EXPECT_EQ(r.last_propagated(), (Argv{"rpoplpush", "src", "dst"}));
  EXPECT_FALSE(Exists("src"));
  EXPECT_EQ(Range("dst"), Arr({"b", "a"}));
  EXPECT_EQ(Run({"lmove", "src", "dst", "left", "left"}), kNull);
  EXPECT_EQ(Run({"rpoplpush", "src", "dst"}), kNull);
  EXPECT_EQ(Run({"lmove", "src", "dst", "up", "left"}), kSyntax);
  EXPECT_EQ(Run({"lmove", "src", "dst", "LEFT", "down"}), kSyntax);
}

TEST_F(ListsTest, MoveRotatesOneList) {
  Run({"rpush", "l", "only"});
  EXPECT_EQ(Run({"lmove", "l", "l", "left", "right"}), Bulk("only"));
  EXPECT_EQ(Range("l"), Arr({"only"}));  // never deleted in between
  Run({"rpush", "l", "x", "y"});
  EXPECT_EQ(Run({"rpoplpush", "l", "l"}), Bulk("y"));
  EXPECT_EQ(Range("l"), Arr({"y", "only", "x"}));
}

TEST_F(ListsTest, MoveChecksBothTypesBeforeChanging) {
  Run({"rpush", "l", "a"});
  Run({"set", "s", "v"});
  EXPECT_EQ(Run({"lmove", "l", "s", "left", "left"}), kWrongType);
  EXPECT_EQ(Run({"rpoplpush", "s", "l"}), kWrongType);
  EXPECT_EQ(Range("l"), Arr({"a"}));
  EXPECT_EQ(Run({"rpoplpush", "none", "s"}), kNull);  // a missing source answers first
}

TEST_F(ListsTest, MPopArgumentErrors) {
  const std::string kNumkeys = Err("numkeys should be greater than 0");
  const std::string kCount = Err("count should be greater than 0");
  EXPECT_EQ(Run({"lmpop", "0", "l", "left"}), kNumkeys);
  EXPECT_EQ(Run({"lmpop", "-1", "l", "left"}), kNumkeys);
  EXPECT_EQ(Run({"lmpop", "abc", "l", "left"}), kNumkeys);
  EXPECT_EQ(Run({"lmpop", "2", "l", "left"}), kSyntax);
  EXPECT_EQ(Run({"lmpop", kMax, "l", "left"}), kSyntax);
  EXPECT_EQ(Run({"lmpop", "1", "l", "middle"}), kSyntax);
  EXPECT_EQ(Run({"lmpop", "1", "l", "left", "count", "0"}), kCount);
  EXPECT_EQ(Run({"lmpop", "1", "l", "left", "count", "abc"}), kCount);
  EXPECT_EQ(Run({"lmpop", "1", "l", "left", "count", "1", "count", "2"}), kSyntax);
  EXPECT_EQ(Run({"lmpop", "1", "l", "left", "count"}), kSyntax);
  EXPECT_EQ(Run({"lmpop", "1", "l"}), Err("wrong number of arguments for 'lmpop' command"));
}

TEST_F(ListsTest, MPopTakesTheFirstNonEmptyList) {
  EXPECT_EQ(Run({"lmpop", "2", "a", "b", "left"}), kNullArr);
  Run({"rpush", "b", "1", "2", "3"});
  Run({"rpush", "c", "x"});
  TakeEvents();
  EXPECT_EQ(r.Run({"lmpop", "3", "a", "b", "c", "right", "count", "2"}),
            "*2\r\n" + Bulk("b") + Arr({"3", "2"}));
  EXPECT_EQ(r.last_propagated(), (Argv{"RPOP", "b", "2"}));
  EXPECT_EQ(TakeEvents(), (Events{{"rpop", "b"}}));
  EXPECT_EQ(r.Run({"lmpop", "2", "b", "c", "LEFT", "COUNT", kMax}),
            "*2\r\n" + Bulk("b") + Arr({"1"}));
  EXPECT_EQ(r.last_propagated(), (Argv{"LPOP", "b", "1"}));
  EXPECT_EQ(TakeEvents(), (Events{{"lpop", "b"}, {"del", "b"}}));
  EXPECT_EQ(Run({"lmpop", "1", "c", "left"}), "*2\r\n" + Bulk("c") + Arr({"x"}));
  Run({"set", "s", "v"});
  Run({"rpush", "l", "z"});
  EXPECT_EQ(Run({"lmpop", "2", "s", "l", "left"}), kWrongType);  // met before the list
  EXPECT_EQ(Run({"lmpop", "2", "l", "s", "left"}), "*2\r\n" + Bulk("l") + Arr({"z"}));
}

// ---- Types, registration, long lists, cores -----------------------------------------------------

TEST_F(ListsTest, WrongTypeEverywhere) {
  Run({"set", "s", "v"});
  const std::vector<Argv> cmds = {
      {"lpush", "s", "a"},
      {"rpush", "s", "a"},
      {"lpushx", "s", "a"},
      {"rpushx", "s", "a"},
      {"lpop", "s"},
      {"rpop", "s", "2"},
      {"llen", "s"},
      {"lrange", "s", "0", "1"},
      {"lindex", "s", "0"},
      {"lset", "s", "0", "a"},
      {"lrem", "s", "0", "a"},
      {"ltrim", "s", "0", "1"},
      {"linsert", "s", "before", "a", "b"},
      {"lpos", "s", "a"},
      {"lmove", "s", "d", "left", "left"},
      {"rpoplpush", "s", "d"},
      {"lmpop", "1", "s", "left"},
  };
  for (const Argv& c : cmds) EXPECT_EQ(Run(c), kWrongType) << c[0];
  EXPECT_EQ(Run({"get", "s"}), Bulk("v"));
  EXPECT_FALSE(Exists("d"));
}

TEST_F(ListsTest, RegistrationMatchesRedis) {
  struct Want {
    const char* name;
    int arity;
    std::vector<std::string_view> flags;
    int first, last, step;
  };
  const std::vector<Want> wants = {
      {"lpush", -3, {"write", "denyoom", "fast"}, 1, 1, 1},
      {"rpush", -3, {"write", "denyoom", "fast"}, 1, 1, 1},
      {"lpushx", -3, {"write", "denyoom", "fast"}, 1, 1, 1},
      {"rpushx", -3, {"write", "denyoom", "fast"}, 1, 1, 1},
      {"lpop", -2, {"write", "fast"}, 1, 1, 1},
      {"rpop", -2, {"write", "fast"}, 1, 1, 1},
      {"llen", 2, {"readonly", "fast"}, 1, 1, 1},
      {"lrange", 4, {"readonly"}, 1, 1, 1},
      {"lindex", 3, {"readonly"}, 1, 1, 1},
      {"lset", 4, {"write", "denyoom"}, 1, 1, 1},
      {"lrem", 4, {"write"}, 1, 1, 1},
      {"ltrim", 4, {"write"}, 1, 1, 1},
      {"linsert", 5, {"write", "denyoom"}, 1, 1, 1},
      {"lpos", -3, {"readonly"}, 1, 1, 1},
      {"lmove", 5, {"write", "denyoom"}, 1, 2, 1},
      {"rpoplpush", 3, {"write", "denyoom"}, 1, 2, 1},
      {"lmpop", -4, {"write", "movablekeys"}, 0, 0, 0},
  };
  for (const Want& w : wants) {
    const CommandSpec* s = r.table.Find(w.name);
    ASSERT_NE(s, nullptr) << w.name;
    EXPECT_EQ(s->arity, w.arity) << w.name;
    EXPECT_EQ(FlagNames(s->flags), w.flags) << w.name;
    EXPECT_EQ(s->first_key, w.first) << w.name;
    EXPECT_EQ(s->last_key, w.last) << w.name;
    EXPECT_EQ(s->key_step, w.step) << w.name;
    EXPECT_EQ(s->group, "list") << w.name;
    EXPECT_FALSE(s->summary.empty()) << w.name;
    EXPECT_FALSE(s->since.empty()) << w.name;
  }
  EXPECT_EQ(r.table.Find("lmove")->KeyIndexes(5), (std::vector<int>{1, 2}));
}

TEST_F(ListsTest, LongMultiNodeLists) {
  SetFill(4);  // four elements per node
  Argv push{"rpush", "l"};
  for (int i = 0; i < 1000; i++) push.push_back(std::to_string(i));
  EXPECT_EQ(Run(push), Int(1000));
  EXPECT_GE(r.ks.db(0).Find("l")->value.As<store::ListValue>()->node_count(), 250u);
  EXPECT_EQ(Run({"lindex", "l", "517"}), Bulk("517"));
  EXPECT_EQ(Run({"lrange", "l", "-3", "-1"}), Arr({"997", "998", "999"}));
  EXPECT_EQ(Run({"lset", "l", "500", "x"}), kOk);
  EXPECT_EQ(Run({"linsert", "l", "after", "x", "y"}), Int(1001));
  EXPECT_EQ(Run({"lrange", "l", "499", "502"}), Arr({"499", "x", "y", "501"}));
  EXPECT_EQ(Run({"lpos", "l", "y"}), Int(501));
  EXPECT_EQ(Run({"rpop", "l", "3"}), Arr({"999", "998", "997"}));
  EXPECT_EQ(Run({"ltrim", "l", "10", "-10"}), kOk);
  EXPECT_EQ(Run({"llen", "l"}), Int(979));
  EXPECT_EQ(Run({"lindex", "l", "0"}), Bulk("10"));
  EXPECT_EQ(Run({"lindex", "l", "-1"}), Bulk("987"));
}

TEST_F(ListsTest, CopyAndDigestSeeTheElements) {
  Run({"rpush", "l", "a", "", "c"});
  EXPECT_EQ(Run({"copy", "l", "l2"}), Int(1));
  Run({"lpop", "l"});
  EXPECT_EQ(Range("l2"), Arr({"a", "", "c"}));
  EXPECT_EQ(Run({"type", "l2"}), "+list\r\n");
}

// The cores the blocking commands reuse: reply shapes and the propagated pops.
TEST_F(ListsTest, CoresForBlockingCommands) {
  Run({"rpush", "l", "a", "b", "c"});
  Run({"set", "s", "v"});
  std::string out;
  resp::ReplyWriter w(&out);
  std::vector<std::string_view> args{"blpop", "none", "l", "0"};
  auto ctx = std::make_unique<Context>(args, w, r.ks, r.session, r.hooks, r.stats, 0);
  std::vector<std::string_view> keys{"none", "l"};
  EXPECT_EQ(ListPopFirst(*ctx, keys, true, 1, PopReply::kKeyElement), ListOpResult::kDone);
  EXPECT_EQ(out, "*2\r\n" + Bulk("l") + Bulk("a"));
  EXPECT_EQ(*ctx->rewrite, (Argv{"LPOP", "l"}));

  out.clear();
  ctx = std::make_unique<Context>(args, w, r.ks, r.session, r.hooks, r.stats, 0);
  EXPECT_EQ(ListPop(*ctx, "none", true, 1, PopReply::kKeyElement), ListOpResult::kNoData);
  std::vector<std::string_view> bad{"s", "l"};
  EXPECT_EQ(ListPopFirst(*ctx, bad, true, 1, PopReply::kKeyElement), ListOpResult::kWrongType);
  EXPECT_EQ(out, kWrongType);
  EXPECT_EQ(ctx->dirty, 0u);

  out.clear();
  ctx = std::make_unique<Context>(args, w, r.ks, r.session, r.hooks, r.stats, 0);
  EXPECT_EQ(ListMove(*ctx, "l", "d", false, true, MovePropagation::kLmove), ListOpResult::kDone);
  EXPECT_EQ(out, Bulk("c"));
  EXPECT_EQ(*ctx->rewrite, (Argv{"LMOVE", "l", "d", "RIGHT", "LEFT"}));
  ctx = std::make_unique<Context>(args, w, r.ks, r.session, r.hooks, r.stats, 0);
  EXPECT_EQ(ListMove(*ctx, "l", "d", false, true, MovePropagation::kRpoplpush),
            ListOpResult::kDone);
  EXPECT_EQ(*ctx->rewrite, (Argv{"RPOPLPUSH", "l", "d"}));
  EXPECT_FALSE(Exists("l"));
  EXPECT_EQ(ListMove(*ctx, "l", "d", false, true), ListOpResult::kNoData);
  EXPECT_EQ(Range("d"), Arr({"b", "c"}));
}

}  // namespace
}  // namespace kv::cmd
