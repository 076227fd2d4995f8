// In-process tests of the SET command family: raw RESP replies in both protocols, encodings,
// keyspace events and replication rewrites, against Redis 7.0's behaviour (checked on
// redis-server 7.0.15).
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cmd/command_test_util.h"
#include "store/set_type.h"

namespace kv::cmd {
namespace {

using Argv = std::vector<std::string>;
using Events = std::vector<std::pair<std::string, std::string>>;  // (event, key)

std::string Bulk(std::string_view s) {
  return "$" + std::to_string(s.size()) + "\r\n" + std::string(s) + "\r\n";
}
std::string Int(int64_t v) { return ":" + std::to_string(v) + "\r\n"; }
std::string Err(std::string_view msg) { return "-ERR " + std::string(msg) + "\r\n"; }
// An aggregate of bulk strings: '*' (array) or '~' (RESP3 set).
std::string Bulks(char type, const std::vector<std::string>& v) {
  std::string s = type + std::to_string(v.size()) + "\r\n";
  for (const auto& m : v) s += Bulk(m);
  return s;
}

const std::string kWrongType =
    "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n";
const std::string kSyntax = Err("syntax error");
const std::string kNotInt = Err("value is not an integer or out of range");
const std::string kPositive = Err("value is out of range, must be positive");

// The bulk strings of a flat aggregate reply, sorted (for hashtable member order).
std::vector<std::string> SortedElems(const std::string& raw) {
  std::vector<std::string> out;
  size_t pos = raw.find("\r\n") + 2;
  while (pos < raw.size()) {
    EXPECT_EQ(raw[pos], '$') << raw;
    size_t eol = raw.find("\r\n", pos);
    size_t len = std::stoul(raw.substr(pos + 1, eol - pos - 1));
    out.push_back(raw.substr(eol + 2, len));
    pos = eol + 2 + len + 2;
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string Encoding(CommandRunner& r, const std::string& key) {
  return r.Run({"object", "encoding", key});
}

class SetsTest : public ::testing::Test {
 protected:
  CommandRunner r;
  void Use(int proto) { r.session.resp = proto; }
  Events TakeEvents() {
    Events e = std::move(r.hooks.events);
    r.hooks.events.clear();
    return e;
  }
};

// ---- SADD SREM SCARD SISMEMBER SMISMEMBER ---------------------------------------------------

TEST_F(SetsTest, AddCountsNewMembersAndFiresEvents) {
  EXPECT_EQ(r.Run({"sadd", "s", "b", "a", "b"}), Int(2));
  EXPECT_EQ(r.last_propagated(), (Argv{"sadd", "s", "b", "a", "b"}));
  EXPECT_EQ(TakeEvents(), (Events{{"new", "s"}, {"sadd", "s"}}));
  EXPECT_EQ(r.Run({"sadd", "s", "a"}), Int(0));
  EXPECT_TRUE(r.last_propagated().empty());  // nothing changed: not propagated
  EXPECT_TRUE(TakeEvents().empty());
  EXPECT_EQ(r.Run({"scard", "s"}), Int(2));
  EXPECT_EQ(r.Run({"scard", "nope"}), Int(0));
  EXPECT_EQ(r.Run({"sismember", "s", "a"}), Int(1));
  EXPECT_EQ(r.Run({"sismember", "s", "z"}), Int(0));
  EXPECT_EQ(r.Run({"sismember", "nope", "a"}), Int(0));
  EXPECT_EQ(r.Run({"smismember", "s", "a", "z", "b"}), "*3\r\n:1\r\n:0\r\n:1\r\n");
  EXPECT_EQ(r.Run({"smismember", "nope", "a", "b"}), "*2\r\n:0\r\n:0\r\n");
  EXPECT_EQ(r.Run({"sadd", "s"}), Err("wrong number of arguments for 'sadd' command"));
}

TEST_F(SetsTest, WrongTypeEverywhere) {
  r.Run({"set", "str", "x"});
  for (Argv cmd : std::vector<Argv>{
           {"sadd", "str", "a"}, {"srem", "str", "a"}, {"scard", "str"},
           {"sismember", "str", "a"}, {"smismember", "str", "a"}, {"smembers", "str"},
           {"spop", "str"}, {"spop", "str", "2"}, {"srandmember", "str"},
           {"srandmember", "str", "2"}, {"sinter", "nope", "str"}, {"sunion", "str"},
           {"sdiff", "nope", "str"}, {"sintercard", "2", "nope", "str"},
           {"sinterstore", "d", "nope", "str"}, {"sunionstore", "d", "str"},
           {"sdiffstore", "d", "str"}, {"sscan", "str", "0"}, {"smove", "str", "d", "a"}}) {
    EXPECT_EQ(r.Run(cmd), kWrongType) << cmd[0];
  }
  EXPECT_EQ(r.Run({"get", "str"}), Bulk("x"));
}

TEST_F(SetsTest, RemoveDeletesTheKeyWhenEmptied) {
  r.Run({"sadd", "s", "1", "2", "3"});
  TakeEvents();
  EXPECT_EQ(r.Run({"srem", "s", "1", "9"}), Int(1));
  EXPECT_EQ(TakeEvents(), (Events{{"srem", "s"}}));
  EXPECT_EQ(r.Run({"srem", "s", "9"}), Int(0));
  EXPECT_TRUE(r.last_propagated().empty());
  EXPECT_EQ(r.Run({"srem", "s", "2", "3", "2"}), Int(2));
  EXPECT_EQ(TakeEvents(), (Events{{"srem", "s"}, {"del", "s"}}));
  EXPECT_EQ(r.Run({"exists", "s"}), Int(0));
  EXPECT_EQ(r.Run({"srem", "nope", "a"}), Int(0));
}

// ---- Encodings ------------------------------------------------------------------------------

TEST_F(SetsTest, EncodingConvertsOneWay) {
  r.ks.limits().set_max_intset_entries = 3;
  r.Run({"sadd", "i", "3", "1", "2"});
  EXPECT_EQ(Encoding(r, "i"), Bulk("intset"));
  r.Run({"sadd", "i", "4"});
  EXPECT_EQ(Encoding(r, "i"), Bulk("hashtable"));
  r.Run({"srem", "i", "4"});
  EXPECT_EQ(Encoding(r, "i"), Bulk("hashtable"));
  r.Run({"sadd", "s", "1", "x"});
  EXPECT_EQ(Encoding(r, "s"), Bulk("hashtable"));
  r.Run({"sadd", "t", "007"});  // not a canonical integer
  EXPECT_EQ(Encoding(r, "t"), Bulk("hashtable"));
}

TEST_F(SetsTest, MembersBothProtocols) {
  r.Run({"sadd", "i", "10", "-3", "7"});
  EXPECT_EQ(r.Run({"smembers", "i"}), Bulks('*', {"-3", "7", "10"}));  // intsets are sorted
  EXPECT_EQ(r.Run({"smembers", "nope"}), "*0\r\n");
  Use(3);
  EXPECT_EQ(r.Run({"smembers", "i"}), Bulks('~', {"-3", "7", "10"}));
  EXPECT_EQ(r.Run({"smembers", "nope"}), "~0\r\n");
  r.Run({"sadd", "h", "b", "a", "c"});
  std::string got = r.Run({"smembers", "h"});
  EXPECT_EQ(got.substr(0, 4), "~3\r\n");
  EXPECT_EQ(SortedElems(got), (std::vector<std::string>{"a", "b", "c"}));
}

// ---- SMOVE --------------------------------------------------------------------------------

TEST_F(SetsTest, MoveCreatesDestinationAndDeletesEmptiedSource) {
  r.Run({"sadd", "src", "a"});
  TakeEvents();
  EXPECT_EQ(r.Run({"smove", "src", "dst", "a"}), Int(1));
  EXPECT_EQ(r.last_propagated(), (Argv{"smove", "src", "dst", "a"}));
  EXPECT_EQ(TakeEvents(),
            (Events{{"srem", "src"}, {"del", "src"}, {"new", "dst"}, {"sadd", "dst"}}));
  EXPECT_EQ(r.Run({"exists", "src"}), Int(0));
  EXPECT_EQ(r.Run({"smembers", "dst"}), Bulks('*', {"a"}));
  EXPECT_EQ(Encoding(r, "dst"), Bulk("hashtable"));
  r.Run({"sadd", "src", "5", "a"});
  TakeEvents();
  EXPECT_EQ(r.Run({"smove", "src", "dst", "a"}), Int(1));  // already in dst: only removed
  EXPECT_EQ(TakeEvents(), (Events{{"srem", "src"}}));
  EXPECT_EQ(r.Run({"smove", "src", "fresh", "5"}), Int(1));
  EXPECT_EQ(Encoding(r, "fresh"), Bulk("intset"));
}

TEST_F(SetsTest, MoveEdgeCases) {
  r.Run({"set", "str", "x"});
  r.Run({"sadd", "s", "a", "b"});
  EXPECT_EQ(r.Run({"smove", "nope", "str", "a"}), Int(0));  // missing source wins
  EXPECT_EQ(r.Run({"smove", "s", "str", "a"}), kWrongType);
  EXPECT_EQ(r.Run({"smove", "s", "s", "a"}), Int(1));  // same key: membership only
  EXPECT_EQ(r.Run({"smove", "s", "s", "z"}), Int(0));
  EXPECT_TRUE(r.last_propagated().empty());
  EXPECT_EQ(r.Run({"smove", "s", "d", "z"}), Int(0));
  EXPECT_EQ(r.Run({"exists", "d"}), Int(0));
  EXPECT_EQ(r.Run({"scard", "s"}), Int(2));
}

// ---- SPOP --------------------------------------------------------------------------------

TEST_F(SetsTest, PopOnePropagatesAsSrem) {
  r.Run({"sadd", "s", "only"});
  TakeEvents();
  EXPECT_EQ(r.Run({"spop", "s"}), Bulk("only"));
  EXPECT_EQ(r.last_propagated(), (Argv{"SREM", "s", "only"}));
  EXPECT_EQ(TakeEvents(), (Events{{"spop", "s"}, {"del", "s"}}));
  EXPECT_EQ(r.Run({"spop", "s"}), "$-1\r\n");
  Use(3);
  EXPECT_EQ(r.Run({"spop", "s"}), "_\r\n");
  EXPECT_EQ(r.Run({"spop", "s", "1", "2"}), kSyntax);
}

TEST_F(SetsTest, PopCountValidatesBeforeLookup) {
  r.Run({"set", "str", "x"});
  EXPECT_EQ(r.Run({"spop", "str", "-1"}), kPositive);
  EXPECT_EQ(r.Run({"spop", "str", "abc"}), kPositive);  // Redis 7.0 says this for both
  EXPECT_EQ(r.Run({"spop", "nope", "3"}), "*0\r\n");
  Use(3);
  EXPECT_EQ(r.Run({"spop", "nope", "3"}), "~0\r\n");
  r.Run({"sadd", "s", "a"});
  EXPECT_EQ(r.Run({"spop", "s", "0"}), "~0\r\n");
  EXPECT_TRUE(r.last_propagated().empty());
}

TEST_F(SetsTest, PopWholeSetPropagatesAsDel) {
  r.Run({"sadd", "s", "3", "1", "2"});
  TakeEvents();
  Use(3);
  EXPECT_EQ(r.Run({"spop", "s", "3"}), Bulks('~', {"1", "2", "3"}));
  EXPECT_EQ(r.last_propagated(), (Argv{"DEL", "s"}));
  EXPECT_EQ(TakeEvents(), (Events{{"spop", "s"}, {"del", "s"}}));
  EXPECT_EQ(r.Run({"exists", "s"}), Int(0));
  r.Run({"sadd", "s", "x", "y"});
  EXPECT_EQ(SortedElems(r.Run({"spop", "s", "9223372036854775807"})),
            (std::vector<std::string>{"x", "y"}));
}

TEST_F(SetsTest, PopSomePropagatesOneSremPerPoppedMember) {
  for (int n : {2, 9}) {  // 18*5 > 2 pops one by one; 1*5 <= 9 rebuilds the remainder
    for (const char* prefix : {"", "m"}) {
      CommandRunner fresh;
      Argv add{"sadd", "s"};
      for (int i = 0; i < 10; i++) add.push_back(prefix + std::to_string(i));
      fresh.Run(add);
      std::vector<std::string> popped = SortedElems(fresh.Run({"spop", "s", std::to_string(n)}));
      ASSERT_EQ(popped.size(), static_cast<size_t>(n));
      std::vector<std::string> removed;
      for (const Argv& prop : fresh.last_propagated_all()) {
        ASSERT_EQ(prop.size(), 3u);
        EXPECT_EQ(prop[0], "SREM");
        EXPECT_EQ(prop[1], "s");
        removed.push_back(prop[2]);
      }
      std::sort(removed.begin(), removed.end());
      EXPECT_EQ(removed, popped);
      std::vector<std::string> rest = SortedElems(fresh.Run({"smembers", "s"}));
      EXPECT_EQ(rest.size(), 10u - n);
      for (const auto& m : rest) EXPECT_FALSE(std::binary_search(popped.begin(), popped.end(), m));
    }
  }
}

// ---- SRANDMEMBER -------------------------------------------------------------------------

TEST_F(SetsTest, RandMemberCounts) {
  r.Run({"sadd", "s", "1", "2", "3"});
  EXPECT_EQ(r.Run({"srandmember", "nope"}), "$-1\r\n");
  EXPECT_EQ(r.Run({"srandmember", "nope", "5"}), "*0\r\n");
  EXPECT_EQ(r.Run({"srandmember", "s", "0"}), "*0\r\n");
  EXPECT_EQ(r.Run({"srandmember", "s", "3", "x"}), kSyntax);
  EXPECT_EQ(r.Run({"srandmember", "nope", "x"}), kNotInt);
  EXPECT_EQ(r.Run({"srandmember", "s", "-9223372036854775808"}),
            Err("value is out of range, value must between -9223372036854775807 and "
                "9223372036854775807"));
  EXPECT_EQ(r.Run({"srandmember", "s", "-9223372036854775807"}).substr(0, 4), "-ERR");
  Use(3);  // arrays in RESP3 too
  EXPECT_EQ(r.Run({"srandmember", "s", "5"}), Bulks('*', {"1", "2", "3"}));
  std::string rep = r.Run({"srandmember", "s", "-7"});
  EXPECT_EQ(rep.substr(0, 4), "*7\r\n");
  for (const auto& m : SortedElems(rep)) EXPECT_TRUE(m == "1" || m == "2" || m == "3") << m;
  std::vector<std::string> two = SortedElems(r.Run({"srandmember", "s", "2"}));
  ASSERT_EQ(two.size(), 2u);
  EXPECT_NE(two[0], two[1]);
  EXPECT_EQ(r.Run({"srandmember", "s", "1"}).substr(0, 4), "*1\r\n");
  EXPECT_EQ(r.Run({"srandmember", "s"}).substr(0, 2), "$1");
}

// ---- Set algebra ---------------------------------------------------------------------------

TEST_F(SetsTest, InterUnionDiff) {
  r.Run({"sadd", "a", "1", "2", "3", "x"});
  r.Run({"sadd", "b", "2", "3", "4"});
  r.Run({"sadd", "c", "3", "9"});
  EXPECT_EQ(r.Run({"sinter", "a", "b", "c"}), Bulks('*', {"3"}));
  EXPECT_EQ(SortedElems(r.Run({"sinter", "a", "b"})), (std::vector<std::string>{"2", "3"}));
  EXPECT_EQ(r.Run({"sinter", "a", "nope"}), "*0\r\n");
  EXPECT_EQ(r.Run({"sunion", "b", "c", "nope"}), Bulks('*', {"2", "3", "4", "9"}));
  EXPECT_EQ(SortedElems(r.Run({"sdiff", "a", "b", "nope"})), (std::vector<std::string>{"1", "x"}));
  EXPECT_EQ(r.Run({"sdiff", "nope", "a"}), "*0\r\n");
  EXPECT_EQ(r.Run({"sdiff", "a", "a"}), "*0\r\n");
  EXPECT_EQ(r.Run({"sintercard", "2", "a", "b"}), Int(2));
  EXPECT_EQ(r.Run({"sintercard", "2", "a", "b", "LIMIT", "1"}), Int(1));
  EXPECT_EQ(r.Run({"sintercard", "2", "a", "b", "limit", "0"}), Int(2));
  EXPECT_EQ(r.Run({"sintercard", "2", "a", "nope"}), Int(0));
  Use(3);
  EXPECT_EQ(r.Run({"sunion", "c"}), Bulks('~', {"3", "9"}));
  EXPECT_EQ(r.Run({"sinter", "nope", "a"}), "~0\r\n");
  EXPECT_EQ(r.Run({"sdiff", "nope"}), "~0\r\n");
}

TEST_F(SetsTest, InterCardErrors) {
  EXPECT_EQ(r.Run({"sintercard", "0", "a"}), Err("numkeys should be greater than 0"));
  EXPECT_EQ(r.Run({"sintercard", "abc", "a"}), Err("numkeys should be greater than 0"));
  EXPECT_EQ(r.Run({"sintercard", "3", "a"}),
            Err("Number of keys can't be greater than number of args"));
  EXPECT_EQ(r.Run({"sintercard", "1", "a", "limit", "-1"}), Err("LIMIT can't be negative"));
  EXPECT_EQ(r.Run({"sintercard", "1", "a", "limit", "x"}), Err("LIMIT can't be negative"));
  EXPECT_EQ(r.Run({"sintercard", "1", "a", "limit"}), kSyntax);
  EXPECT_EQ(r.Run({"sintercard", "1", "a", "foo"}), kSyntax);
}

TEST_F(SetsTest, StoreReplacesDestination) {
  r.Run({"sadd", "a", "1", "2", "x"});
  r.Run({"sadd", "b", "2", "x", "y"});
  r.Run({"set", "d", "str", "EX", "100"});
  TakeEvents();
  EXPECT_EQ(r.Run({"sinterstore", "d", "a", "b"}), Int(2));
  EXPECT_EQ(TakeEvents(), (Events{{"sinterstore", "d"}}));
  EXPECT_EQ(r.last_propagated(), (Argv{"sinterstore", "d", "a", "b"}));
  EXPECT_EQ(r.Run({"ttl", "d"}), Int(-1));  // the TTL went with the old value
  EXPECT_EQ(SortedElems(r.Run({"smembers", "d"})), (std::vector<std::string>{"2", "x"}));
  EXPECT_EQ(r.Run({"sunionstore", "u", "a", "b"}), Int(4));
  EXPECT_EQ(TakeEvents(), (Events{{"new", "u"}, {"sunionstore", "u"}}));
  EXPECT_EQ(r.Run({"sdiffstore", "d", "a", "b"}), Int(1));
  EXPECT_EQ(r.Run({"smembers", "d"}), Bulks('*', {"1"}));
  EXPECT_EQ(Encoding(r, "d"), Bulk("intset"));  // results start as intsets, like Redis'
  TakeEvents();
  EXPECT_EQ(r.Run({"sinterstore", "d", "a", "nope"}), Int(0));
  EXPECT_EQ(TakeEvents(), (Events{{"keymiss", "nope"}, {"del", "d"}}));
  EXPECT_EQ(r.Run({"exists", "d"}), Int(0));
  EXPECT_EQ(r.Run({"sdiffstore", "d", "a", "a"}), Int(0));
  EXPECT_TRUE(r.last_propagated().empty());  // nothing to delete: no change
}

TEST_F(SetsTest, DiffStoreEncodingFollowsRedisAlgorithm) {
  // a = {x, 1, 2, 3}: with several sets of which the others are small, Redis' second algorithm
  // copies a (a hashtable) and removes the rest, so the result stays a hashtable even though
  // only integers remain; the first algorithm adds just the survivors, making an intset.
  r.Run({"sadd", "a", "x", "1", "2", "3"});
  r.Run({"sadd", "b", "x"});
  r.Run({"sdiffstore", "d1", "a", "b", "b", "b"});  // 4*4/2 = 8 > 4+1+1+1: algorithm 2
  EXPECT_EQ(Encoding(r, "d1"), Bulk("hashtable"));
  r.Run({"sadd", "c", "x", "7", "8"});
  r.Run({"sdiffstore", "d2", "a", "c"});  // 2*4/2 = 4 <= 4+3: algorithm 1
  EXPECT_EQ(Encoding(r, "d2"), Bulk("intset"));
  r.Run({"sdiffstore", "d3", "a", "b", "nope"});  // missing keys count for neither: 4 <= 5
  EXPECT_EQ(Encoding(r, "d3"), Bulk("intset"));
  EXPECT_EQ(SortedElems(r.Run({"smembers", "d1"})), SortedElems(r.Run({"smembers", "d2"})));
}

// ---- SSCAN -------------------------------------------------------------------------------

TEST_F(SetsTest, ScanIntsetWholeAndOptions) {
  r.Run({"sadd", "s", "3", "1", "12"});
  EXPECT_EQ(r.Run({"sscan", "s", "7", "count", "1"}),
            "*2\r\n" + Bulk("0") + Bulks('*', {"1", "3", "12"}));
  EXPECT_EQ(r.Run({"sscan", "s", "0", "match", "1*"}),
            "*2\r\n" + Bulk("0") + Bulks('*', {"1", "12"}));
  EXPECT_EQ(r.Run({"sscan", "s", "0", "count", "0"}), kSyntax);
  EXPECT_EQ(r.Run({"sscan", "s", "0", "count", "x"}), kNotInt);
  EXPECT_EQ(r.Run({"sscan", "s", "0", "type", "set"}), kSyntax);
  EXPECT_EQ(r.Run({"sscan", "s", "0", "match"}), kSyntax);
  EXPECT_EQ(r.Run({"sscan", "s", "x"}), Err("invalid cursor"));
  EXPECT_EQ(r.Run({"sscan", "nope", "x"}), Err("invalid cursor"));
  // A missing key answers the empty scan before the options are read.
  EXPECT_EQ(r.Run({"sscan", "nope", "5", "count", "0"}), "*2\r\n" + Bulk("0") + "*0\r\n");
  Use(3);
  EXPECT_EQ(r.Run({"sscan", "s", "0"}), "*2\r\n" + Bulk("0") + Bulks('*', {"1", "3", "12"}));
}

TEST_F(SetsTest, ScanHashtableWithCursor) {
  Argv add{"sadd", "h"};
  for (int i = 0; i < 100; i++) add.push_back("m" + std::to_string(i));
  r.Run(add);
  std::set<std::string> seen;
  std::string cursor = "0";
  int calls = 0;
  do {
    std::string rep = r.Run({"sscan", "h", cursor, "count", "5", "match", "m1*"});
    size_t eol = rep.find("\r\n", 5);
    cursor = rep.substr(eol + 2, rep.find("\r\n", eol + 2) - eol - 2);
    std::string rest = rep.substr(rep.find("\r\n", eol + 2) + 2);
    for (const auto& m : SortedElems(rest)) seen.insert(m);
    calls++;
  } while (cursor != "0" && calls < 1000);
  EXPECT_EQ(cursor, "0");
  EXPECT_GT(calls, 2);
  EXPECT_EQ(seen.size(), 11u);  // m1, m10..m19
  for (const auto& m : seen) EXPECT_EQ(m.substr(0, 2), "m1");
}

// ---- Registration --------------------------------------------------------------------------

TEST(SetCommands, RegisteredLikeRedis) {
  CommandRunner r;
  struct Want {
    const char* name;
    int arity;
    std::vector<std::string_view> flags;
    int first, last, step;
  };
  const std::vector<Want> wants = {
      {"sadd", -3, {"write", "denyoom", "fast"}, 1, 1, 1},
      {"srem", -3, {"write", "fast"}, 1, 1, 1},
      {"sismember", 3, {"readonly", "fast"}, 1, 1, 1},
      {"smismember", -3, {"readonly", "fast"}, 1, 1, 1},
      {"smembers", 2, {"readonly"}, 1, 1, 1},
      {"scard", 2, {"readonly", "fast"}, 1, 1, 1},
      {"spop", -2, {"write", "fast"}, 1, 1, 1},
      {"srandmember", -2, {"readonly"}, 1, 1, 1},
      {"smove", 4, {"write", "fast"}, 1, 2, 1},
      {"sinter", -2, {"readonly"}, 1, -1, 1},
      {"sintercard", -3, {"readonly", "movablekeys"}, 0, 0, 0},
      {"sunion", -2, {"readonly"}, 1, -1, 1},
      {"sdiff", -2, {"readonly"}, 1, -1, 1},
      {"sinterstore", -3, {"write", "denyoom"}, 1, -1, 1},
      {"sunionstore", -3, {"write", "denyoom"}, 1, -1, 1},
      {"sdiffstore", -3, {"write", "denyoom"}, 1, -1, 1},
      {"sscan", -3, {"readonly"}, 1, 1, 1},
  };
  for (const Want& w : wants) {
    const CommandSpec* s = r.table.Find(w.name);
    ASSERT_NE(s, nullptr) << w.name;
    EXPECT_EQ(s->arity, w.arity) << w.name;
    EXPECT_EQ(FlagNames(s->flags), w.flags) << w.name;
    EXPECT_EQ(s->first_key, w.first) << w.name;
    EXPECT_EQ(s->last_key, w.last) << w.name;
    EXPECT_EQ(s->key_step, w.step) << w.name;
    EXPECT_EQ(s->group, "set") << w.name;
    EXPECT_FALSE(s->summary.empty()) << w.name;
    EXPECT_FALSE(s->since.empty()) << w.name;
  }
  EXPECT_EQ(r.table.Find("smove")->KeyIndexes(4), (std::vector<int>{1, 2}));
}

}  // namespace
}  // namespace kv::cmd
