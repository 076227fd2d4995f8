// In-process tests of the connection and STRING command families: raw RESP replies, keyspace
// state, TTLs, keyspace events and replication rewrites, against Redis 7.0's behaviour.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cmd/command_test_util.h"
#include "cmd/strings_test_util.h"

namespace kv::cmd {
namespace {

using namespace strings_test_util;

TEST(ConnectionCommands, PingEchoSelect) {
  CommandRunner r;
  EXPECT_EQ(r.Run({"ping"}), "+PONG\r\n");
  EXPECT_EQ(r.Run({"PING", "hi"}), "$2\r\nhi\r\n");
  EXPECT_EQ(r.Run({"ping", "a", "b"}), "-ERR wrong number of arguments for 'ping' command\r\n");
  EXPECT_EQ(r.Run({"echo"}), "-ERR wrong number of arguments for 'echo' command\r\n");
  EXPECT_EQ(r.Run({"select", "15"}), "+OK\r\n");
  EXPECT_EQ(r.session.db, 15);
  EXPECT_EQ(r.Run({"select", "16"}), "-ERR DB index is out of range\r\n");
  EXPECT_EQ(r.Run({"select", "x"}), "-ERR value is not an integer or out of range\r\n");
  EXPECT_EQ(r.Run({"nosuch", "a", "b"}),
            "-ERR unknown command 'nosuch', with args beginning with: 'a' 'b' \r\n");
}

// ---- GET / SET ---------------------------------------------------------------------------------

TEST_F(StringsTest, GetAndSetBasics) {
  EXPECT_EQ(r.Run({"get", "k"}), kNull);
  EXPECT_EQ(r.stats.keyspace_misses, 1u);
  EXPECT_EQ(r.Run({"set", "k", "hello"}), kOk);
  EXPECT_EQ(r.last_propagated(), (Argv{"set", "k", "hello"}));
  EXPECT_EQ(r.Run({"GET", "k"}), Bulk("hello"));
  EXPECT_EQ(r.stats.keyspace_hits, 1u);
  EXPECT_TRUE(r.last_propagated().empty());  // reads are never propagated
  EXPECT_EQ(Encoding("k"), "embstr");

  EXPECT_EQ(r.Run({"set", "n", "12345"}), kOk);
  EXPECT_EQ(Encoding("n"), "int");
  EXPECT_EQ(r.Run({"get", "n"}), Bulk("12345"));
  EXPECT_EQ(r.Run({"set", "z", "0123"}), kOk);  // not canonical: stays a string
  EXPECT_EQ(Encoding("z"), "embstr");
  EXPECT_EQ(r.Run({"get", "z"}), Bulk("0123"));

  const std::string binary("a\0b\r\nc", 6);
  EXPECT_EQ(r.Run({"set", "b", binary}), kOk);
  EXPECT_EQ(r.Run({"get", "b"}), Bulk(binary));
  EXPECT_EQ(r.Run({"set", "e", ""}), kOk);
  EXPECT_EQ(r.Run({"get", "e"}), kEmpty);

  EXPECT_EQ(r.Run({"get"}), Arity("get"));
  EXPECT_EQ(r.Run({"get", "a", "b"}), Arity("get"));
  EXPECT_EQ(r.Run({"set", "k"}), Arity("set"));
  EXPECT_EQ(r.hooks.modified, (std::vector<std::pair<int, std::string>>{
                                  {0, "k"}, {0, "n"}, {0, "z"}, {0, "b"}, {0, "e"}}));
}

TEST_F(StringsTest, GetWrongTypeAndSetOverwritesAnyType) {
  PutList("l");
  EXPECT_EQ(r.Run({"get", "l"}), kWrongType);
  EXPECT_EQ(r.Run({"set", "l", "v"}), kOk);
  EXPECT_EQ(r.Run({"get", "l"}), Bulk("v"));
}

TEST_F(StringsTest, SetUsesSelectedDb) {
  EXPECT_EQ(r.Run({"select", "3"}), kOk);
  EXPECT_EQ(r.Run({"set", "k", "v"}), kOk);
  EXPECT_NE(r.ks.db(3).Find("k"), nullptr);
  EXPECT_EQ(r.ks.db(0).Find("k"), nullptr);
  EXPECT_EQ(r.hooks.modified, (std::vector<std::pair<int, std::string>>{{3, "k"}}));
}

TEST_F(StringsTest, SetNxXx) {
  EXPECT_EQ(r.Run({"set", "k", "v", "NX"}), kOk);
  EXPECT_EQ(r.Run({"set", "k", "w", "nx"}), kNull);
  EXPECT_TRUE(r.last_propagated().empty());
  EXPECT_EQ(r.Run({"get", "k"}), Bulk("v"));
  EXPECT_EQ(r.Run({"set", "k", "w", "Xx"}), kOk);
  EXPECT_EQ(r.Run({"get", "k"}), Bulk("w"));
  EXPECT_EQ(r.Run({"set", "m", "v", "XX"}), kNull);
  EXPECT_EQ(ExpireOf("m"), -2);
  EXPECT_EQ(r.Run({"set", "k2", "v", "NX", "NX"}), kOk);  // repeating an option is allowed
  EXPECT_EQ(r.Run({"set", "k", "v", "NX", "XX"}), kSyntax);
  EXPECT_EQ(r.Run({"set", "k", "v", "XX", "NX"}), kSyntax);
  r.session.resp = 3;
  EXPECT_EQ(r.Run({"set", "k", "v", "NX"}), kNull3);
}

TEST_F(StringsTest, SetRelativeAndAbsoluteExpire) {
  TakeEvents();
  EXPECT_EQ(r.Run({"set", "k", "v", "EX", "10"}), kOk);
  EXPECT_EQ(ExpireOf("k"), kNow + 10000);
  EXPECT_EQ(r.last_propagated(), (Argv{"SET", "k", "v", "PXAT", Ms(kNow + 10000)}));
  EXPECT_EQ(TakeEvents(), (Events{{"new", "k"}, {"set", "k"}, {"expire", "k"}}));

  EXPECT_EQ(r.Run({"set", "k", "v", "px", "1500"}), kOk);
  EXPECT_EQ(ExpireOf("k"), kNow + 1500);
  EXPECT_EQ(r.last_propagated(), (Argv{"SET", "k", "v", "PXAT", Ms(kNow + 1500)}));

  std::string exat = std::to_string(kNow / 1000 + 100);
  EXPECT_EQ(r.Run({"set", "k", "v", "exat", exat}), kOk);
  EXPECT_EQ(ExpireOf("k"), kNow + 100000);
  EXPECT_EQ(r.last_propagated(), (Argv{"SET", "k", "v", "PXAT", Ms(kNow + 100000)}));

  EXPECT_EQ(r.Run({"set", "k", "v", "PXAT", Ms(kNow + 1234)}), kOk);
  EXPECT_EQ(ExpireOf("k"), kNow + 1234);
  EXPECT_EQ(r.last_propagated(), (Argv{"SET", "k", "v", "PXAT", Ms(kNow + 1234)}));

  EXPECT_EQ(r.Run({"set", "k", "v", "EX", "10", "EX", "20"}), kOk);  // the last one wins
  EXPECT_EQ(ExpireOf("k"), kNow + 20000);

  // The largest EXAT that fits in ms is accepted.
  EXPECT_EQ(r.Run({"set", "far", "v", "EXAT", "9223372036854775"}), kOk);
  EXPECT_EQ(ExpireOf("far"), 9223372036854775000);
}

TEST_F(StringsTest, SetKeepTtlAndPlainSetDropsTtl) {
  EXPECT_EQ(r.Run({"set", "k", "v", "EX", "100"}), kOk);
  EXPECT_EQ(r.Run({"set", "k", "w", "KEEPTTL"}), kOk);
  EXPECT_EQ(ExpireOf("k"), kNow + 100000);
  EXPECT_EQ(r.last_propagated(), (Argv{"set", "k", "w", "KEEPTTL"}));
  EXPECT_EQ(r.Run({"get", "k"}), Bulk("w"));
  EXPECT_EQ(r.Run({"set", "k", "x"}), kOk);
  EXPECT_EQ(ExpireOf("k"), -1);
  EXPECT_EQ(r.Run({"set", "new", "v", "keepttl"}), kOk);
  EXPECT_EQ(ExpireOf("new"), -1);
}

TEST_F(StringsTest, SetKeyExpiresWhenTimeMoves) {
  EXPECT_EQ(r.Run({"set", "k", "v", "PX", "100"}), kOk);
  r.set_now_ms(kNow + 99);
  EXPECT_EQ(r.Run({"get", "k"}), Bulk("v"));
  r.set_now_ms(kNow + 100);
  EXPECT_EQ(r.Run({"get", "k"}), kNull);
  EXPECT_EQ(ExpireOf("k"), -2);  // lazily deleted
}

// Redis 7.0 stores a SET with an absolute time already past and lets lazy expiry remove it.
TEST_F(StringsTest, SetWithPastAbsoluteTime) {
  EXPECT_EQ(r.Run({"set", "k", "v", "PXAT", "1000"}), kOk);
  EXPECT_EQ(r.last_propagated(), (Argv{"SET", "k", "v", "PXAT", "1000"}));
  EXPECT_EQ(ExpireOf("k"), 1000);
  EXPECT_EQ(r.Run({"get", "k"}), kNull);
  EXPECT_EQ(ExpireOf("k"), -2);
  EXPECT_EQ(r.Run({"set", "k", "v", "EXAT", std::to_string(kNow / 1000)}), kOk);  // == now
  EXPECT_EQ(r.Run({"get", "k"}), kNull);
}

TEST_F(StringsTest, SetSyntaxErrors) {
  const std::vector<Argv> bad = {
      {"set", "k", "v", "EX"},
      {"set", "k", "v", "PX"},
      {"set", "k", "v", "EX", "10", "PX", "10"},
      {"set", "k", "v", "PX", "10", "EX", "10"},
      {"set", "k", "v", "EX", "10", "EXAT", "10"},
      {"set", "k", "v", "PXAT", "10", "PX", "10"},
      {"set", "k", "v", "EXAT", "10", "PXAT", "10"},
      {"set", "k", "v", "KEEPTTL", "EX", "10"},
      {"set", "k", "v", "PX", "10", "KEEPTTL"},
      {"set", "k", "v", "PERSIST"},
      {"set", "k", "v", "foo"},
      {"set", "k", "v", "EXX", "1"},
      {"set", "k", "v", "EX", "0", "foo"},  // syntax is checked before the time
  };
  for (const Argv& args : bad) {
    EXPECT_EQ(r.Run(args), kSyntax) << args[3];
    EXPECT_EQ(ExpireOf("k"), -2);
  }
}

TEST_F(StringsTest, SetInvalidExpireTimes) {
  const std::string invalid = Err("invalid expire time in 'set' command");
  EXPECT_EQ(r.Run({"set", "k", "v", "EX", "0"}), invalid);
  EXPECT_EQ(r.Run({"set", "k", "v", "EX", "-1"}), invalid);
  EXPECT_EQ(r.Run({"set", "k", "v", "PX", "0"}), invalid);
  EXPECT_EQ(r.Run({"set", "k", "v", "EXAT", "0"}), invalid);
  EXPECT_EQ(r.Run({"set", "k", "v", "PXAT", "-5"}), invalid);
  // Seconds that overflow when turned into ms, and relative times that overflow with now.
  EXPECT_EQ(r.Run({"set", "k", "v", "EX", "9223372036854776"}), invalid);
  EXPECT_EQ(r.Run({"set", "k", "v", "EX", "9223372036854775"}), invalid);
  EXPECT_EQ(r.Run({"set", "k", "v", "PX", "9223372036854775807"}), invalid);
  EXPECT_EQ(r.Run({"set", "k", "v", "EX", "abc"}), kNotInt);
  EXPECT_EQ(r.Run({"set", "k", "v", "EX", "1.5"}), kNotInt);
  EXPECT_EQ(r.Run({"set", "k", "v", "PX", "9223372036854775808"}), kNotInt);
  EXPECT_EQ(ExpireOf("k"), -2);
  EXPECT_TRUE(r.last_propagated().empty());
}

TEST_F(StringsTest, SetGetOption) {
  TakeEvents();
  EXPECT_EQ(r.Run({"set", "k", "v", "GET"}), kNull);
  EXPECT_EQ(TakeEvents(), (Events{{"keymiss", "k"}, {"new", "k"}, {"set", "k"}}));
  EXPECT_EQ(r.last_propagated(), (Argv{"set", "k", "v"}));
  EXPECT_EQ(r.Run({"set", "k", "w", "get"}), Bulk("v"));
  EXPECT_EQ(r.Run({"get", "k"}), Bulk("w"));

  // NX/XX with GET: the old value is the reply whether or not the set happens.
  EXPECT_EQ(r.Run({"set", "k", "x", "NX", "GET"}), Bulk("w"));
  EXPECT_TRUE(r.last_propagated().empty());
  EXPECT_EQ(r.Run({"get", "k"}), Bulk("w"));
  EXPECT_EQ(r.Run({"set", "m", "x", "XX", "GET"}), kNull);
  EXPECT_EQ(ExpireOf("m"), -2);
  EXPECT_EQ(r.Run({"set", "k", "x", "XX", "GET"}), Bulk("w"));
  EXPECT_EQ(r.Run({"get", "k"}), Bulk("x"));

  // Every GET after the value is dropped from the propagated command; the value stays.
  EXPECT_EQ(r.Run({"set", "k", "get", "GET", "get"}), Bulk("x"));
  EXPECT_EQ(r.last_propagated(), (Argv{"set", "k", "get"}));
  EXPECT_EQ(r.Run({"set", "k", "v", "GET", "EX", "10"}), Bulk("get"));
  EXPECT_EQ(r.last_propagated(), (Argv{"SET", "k", "v", "PXAT", Ms(kNow + 10000)}));
  EXPECT_EQ(ExpireOf("k"), kNow + 10000);

  PutList("l");
  EXPECT_EQ(r.Run({"set", "l", "v", "GET"}), kWrongType);
  EXPECT_TRUE(IsList("l"));
  EXPECT_TRUE(r.last_propagated().empty());
  // The expire time is validated before the GET's type check.
  EXPECT_EQ(r.Run({"set", "l", "v", "GET", "EX", "0"}),
            Err("invalid expire time in 'set' command"));

  r.session.resp = 3;
  EXPECT_EQ(r.Run({"set", "n", "v", "GET"}), kNull3);
}

TEST_F(StringsTest, SetNx) {
  EXPECT_EQ(r.Run({"setnx", "k", "v"}), Int(1));
  EXPECT_EQ(r.last_propagated(), (Argv{"setnx", "k", "v"}));
  EXPECT_EQ(r.Run({"setnx", "k", "w"}), Int(0));
  EXPECT_TRUE(r.last_propagated().empty());
  EXPECT_EQ(r.Run({"get", "k"}), Bulk("v"));
  PutList("l");
  EXPECT_EQ(r.Run({"setnx", "l", "v"}), Int(0));
  EXPECT_TRUE(IsList("l"));
  EXPECT_EQ(r.Run({"setnx", "k"}), Arity("setnx"));
}

TEST_F(StringsTest, SetExAndPSetEx) {
  TakeEvents();
  EXPECT_EQ(r.Run({"setex", "k", "10", "v"}), kOk);
  EXPECT_EQ(ExpireOf("k"), kNow + 10000);
  EXPECT_EQ(TakeEvents(), (Events{{"new", "k"}, {"set", "k"}, {"expire", "k"}}));
  EXPECT_EQ(r.Run({"get", "k"}), Bulk("v"));
  EXPECT_EQ(r.Run({"psetex", "k", "1500", "w"}), kOk);
  EXPECT_EQ(ExpireOf("k"), kNow + 1500);
  EXPECT_EQ(r.last_propagated(), (Argv{"SET", "k", "w", "PXAT", Ms(kNow + 1500)}));
  EXPECT_EQ(r.Run({"get", "k"}), Bulk("w"));
  EXPECT_EQ(r.Run({"setex", "n", "5", "42"}), kOk);
  EXPECT_EQ(Encoding("n"), "int");

  EXPECT_EQ(r.Run({"setex", "x", "0", "v"}), Err("invalid expire time in 'setex' command"));
  EXPECT_EQ(r.Run({"setex", "x", "9223372036854776", "v"}),
            Err("invalid expire time in 'setex' command"));
  EXPECT_EQ(r.Run({"psetex", "x", "-1", "v"}), Err("invalid expire time in 'psetex' command"));
  EXPECT_EQ(r.Run({"setex", "x", "ten", "v"}), kNotInt);
  EXPECT_EQ(ExpireOf("x"), -2);

  PutList("l");
  EXPECT_EQ(r.Run({"setex", "l", "10", "v"}), kOk);
  EXPECT_EQ(r.Run({"get", "l"}), Bulk("v"));
  EXPECT_EQ(r.Run({"setex", "k", "10"}), Arity("setex"));
  EXPECT_EQ(r.Run({"psetex", "k", "10", "v", "x"}), Arity("psetex"));
}

// ---- Multi-key ---------------------------------------------------------------------------------

TEST_F(StringsTest, MGet) {
  EXPECT_EQ(r.Run({"set", "a", "1"}), kOk);
  EXPECT_EQ(r.Run({"set", "b", "x"}), kOk);
  PutList("l");
  EXPECT_EQ(r.Run({"mget", "a", "b", "missing", "l"}),
            "*4\r\n$1\r\n1\r\n$1\r\nx\r\n$-1\r\n$-1\r\n");
  EXPECT_EQ(r.stats.keyspace_hits, 3u);
  EXPECT_EQ(r.stats.keyspace_misses, 1u);
  r.session.resp = 3;
  EXPECT_EQ(r.Run({"mget", "a", "missing", "l"}), "*3\r\n$1\r\n1\r\n_\r\n_\r\n");
  EXPECT_EQ(r.Run({"mget"}), Arity("mget"));
}

TEST_F(StringsTest, MSet) {
  TakeEvents();
  EXPECT_EQ(r.Run({"mset", "a", "1", "b", "2"}), kOk);
  EXPECT_EQ(TakeEvents(), (Events{{"new", "a"}, {"set", "a"}, {"new", "b"}, {"set", "b"}}));
  EXPECT_EQ(r.last_propagated(), (Argv{"mset", "a", "1", "b", "2"}));
  EXPECT_EQ(r.Run({"mget", "a", "b"}), "*2\r\n$1\r\n1\r\n$1\r\n2\r\n");
  EXPECT_EQ(r.Run({"mset", "a", "x", "a", "y"}), kOk);  // the last value wins
  EXPECT_EQ(r.Run({"get", "a"}), Bulk("y"));

  EXPECT_EQ(r.Run({"setex", "t", "100", "v"}), kOk);
  PutList("l");
  EXPECT_EQ(r.Run({"mset", "t", "w", "l", "z"}), kOk);
  EXPECT_EQ(ExpireOf("t"), -1);
  EXPECT_EQ(r.Run({"get", "l"}), Bulk("z"));

  EXPECT_EQ(r.Run({"mset", "a", "1", "b"}), Arity("mset"));
  EXPECT_EQ(r.Run({"mset", "a"}), Arity("mset"));
  EXPECT_EQ(r.Run({"get", "b"}), Bulk("2"));
}

TEST_F(StringsTest, MSetNx) {
  EXPECT_EQ(r.Run({"msetnx", "c", "1", "d", "2"}), Int(1));
  EXPECT_EQ(r.last_propagated(), (Argv{"msetnx", "c", "1", "d", "2"}));
  EXPECT_EQ(r.Run({"msetnx", "e", "3", "d", "4"}), Int(0));
  EXPECT_TRUE(r.last_propagated().empty());
  EXPECT_EQ(ExpireOf("e"), -2);
  EXPECT_EQ(r.Run({"get", "d"}), Bulk("2"));
  PutList("l");
  EXPECT_EQ(r.Run({"msetnx", "l", "x"}), Int(0));  // any type counts as existing
  // An expired key no longer exists.
  EXPECT_EQ(r.Run({"set", "old", "v", "PX", "10"}), kOk);
  r.set_now_ms(kNow + 10);
  EXPECT_EQ(r.Run({"msetnx", "old", "new"}), Int(1));
  EXPECT_EQ(r.Run({"get", "old"}), Bulk("new"));
  EXPECT_EQ(r.Run({"msetnx", "a", "1", "b"}), Arity("msetnx"));
}

// ---- GETSET / GETDEL / GETEX --------------------------------------------------------------------

TEST_F(StringsTest, GetSet) {
  TakeEvents();
  EXPECT_EQ(r.Run({"getset", "k", "v"}), kNull);
  EXPECT_EQ(r.last_propagated(), (Argv{"SET", "k", "v"}));
  EXPECT_EQ(TakeEvents(), (Events{{"keymiss", "k"}, {"new", "k"}, {"set", "k"}}));
  EXPECT_EQ(r.Run({"getset", "k", "42"}), Bulk("v"));
  EXPECT_EQ(TakeEvents(), (Events{{"set", "k"}}));
  EXPECT_EQ(Encoding("k"), "int");
  EXPECT_EQ(r.Run({"setex", "t", "100", "x"}), kOk);
  EXPECT_EQ(r.Run({"getset", "t", "y"}), Bulk("x"));
  EXPECT_EQ(ExpireOf("t"), -1);
  PutList("l");
  EXPECT_EQ(r.Run({"getset", "l", "v"}), kWrongType);
  EXPECT_TRUE(IsList("l"));
  EXPECT_TRUE(r.last_propagated().empty());
  r.session.resp = 3;
  EXPECT_EQ(r.Run({"getset", "m", "v"}), kNull3);
}

TEST_F(StringsTest, GetDel) {
  EXPECT_EQ(r.Run({"set", "k", "7"}), kOk);
  TakeEvents();
  EXPECT_EQ(r.Run({"getdel", "k"}), Bulk("7"));
  EXPECT_EQ(ExpireOf("k"), -2);
  EXPECT_EQ(r.last_propagated(), (Argv{"DEL", "k"}));
  EXPECT_EQ(TakeEvents(), (Events{{"del", "k"}}));
  EXPECT_EQ(r.Run({"getdel", "k"}), kNull);
  EXPECT_TRUE(r.last_propagated().empty());
  PutList("l");
  EXPECT_EQ(r.Run({"getdel", "l"}), kWrongType);
  EXPECT_TRUE(IsList("l"));
  r.session.resp = 3;
  EXPECT_EQ(r.Run({"getdel", "k"}), kNull3);
}

TEST_F(StringsTest, GetExSetsExpire) {
  EXPECT_EQ(r.Run({"set", "k", "v", "EX", "100"}), kOk);
  TakeEvents();
  EXPECT_EQ(r.Run({"getex", "k"}), Bulk("v"));  // no option: a plain GET
  EXPECT_EQ(ExpireOf("k"), kNow + 100000);
  EXPECT_TRUE(r.last_propagated().empty());
  EXPECT_EQ(TakeEvents(), Events{});

  EXPECT_EQ(r.Run({"getex", "k", "EX", "50"}), Bulk("v"));
  EXPECT_EQ(ExpireOf("k"), kNow + 50000);
  EXPECT_EQ(r.last_propagated(), (Argv{"PEXPIREAT", "k", Ms(kNow + 50000)}));
  EXPECT_EQ(TakeEvents(), (Events{{"expire", "k"}}));
  EXPECT_EQ(r.Run({"getex", "k", "px", "2500"}), Bulk("v"));
  EXPECT_EQ(ExpireOf("k"), kNow + 2500);
  EXPECT_EQ(r.Run({"getex", "k", "exat", std::to_string(kNow / 1000 + 7)}), Bulk("v"));
  EXPECT_EQ(ExpireOf("k"), kNow + 7000);
  EXPECT_EQ(r.last_propagated(), (Argv{"PEXPIREAT", "k", Ms(kNow + 7000)}));
  EXPECT_EQ(r.Run({"getex", "k", "PXAT", Ms(kNow + 9)}), Bulk("v"));
  EXPECT_EQ(ExpireOf("k"), kNow + 9);
  EXPECT_EQ(r.Run({"getex", "k", "EX", "1", "EX", "2"}), Bulk("v"));
  EXPECT_EQ(ExpireOf("k"), kNow + 2000);
}

TEST_F(StringsTest, GetExPersist) {
  EXPECT_EQ(r.Run({"set", "k", "v", "EX", "100"}), kOk);
  TakeEvents();
  EXPECT_EQ(r.Run({"getex", "k", "PERSIST"}), Bulk("v"));
  EXPECT_EQ(ExpireOf("k"), -1);
  EXPECT_EQ(r.last_propagated(), (Argv{"PERSIST", "k"}));
  EXPECT_EQ(TakeEvents(), (Events{{"persist", "k"}}));
  EXPECT_EQ(r.Run({"getex", "k", "persist"}), Bulk("v"));  // nothing to remove
  EXPECT_TRUE(r.last_propagated().empty());
  EXPECT_EQ(TakeEvents(), Events{});
}

// An absolute time already past deletes the key (after replying its value) and propagates DEL.
TEST_F(StringsTest, GetExPastAbsoluteTimeDeletes) {
  EXPECT_EQ(r.Run({"set", "k", "v"}), kOk);
  TakeEvents();
  EXPECT_EQ(r.Run({"getex", "k", "PXAT", Ms(kNow - 1)}), Bulk("v"));
  EXPECT_EQ(ExpireOf("k"), -2);
  EXPECT_EQ(r.last_propagated(), (Argv{"DEL", "k"}));
  EXPECT_EQ(TakeEvents(), (Events{{"del", "k"}}));
  EXPECT_EQ(r.Run({"set", "k", "v"}), kOk);
  EXPECT_EQ(r.Run({"getex", "k", "PXAT", Ms(kNow)}), Bulk("v"));  // now counts as past
  EXPECT_EQ(ExpireOf("k"), -2);
  EXPECT_EQ(r.Run({"set", "k", "v"}), kOk);
  EXPECT_EQ(r.Run({"getex", "k", "EXAT", "1"}), Bulk("v"));
  EXPECT_EQ(ExpireOf("k"), -2);
  EXPECT_EQ(r.last_propagated(), (Argv{"DEL", "k"}));
}

TEST_F(StringsTest, GetExErrors) {
  EXPECT_EQ(r.Run({"set", "k", "v"}), kOk);
  for (const Argv& args : std::vector<Argv>{{"getex", "k", "EX", "10", "PX", "10"},
                                            {"getex", "k", "PERSIST", "EX", "10"},
                                            {"getex", "k", "EX", "10", "PERSIST"},
                                            {"getex", "k", "KEEPTTL"},
                                            {"getex", "k", "NX"},
                                            {"getex", "k", "XX"},
                                            {"getex", "k", "GET"},
                                            {"getex", "k", "EX"},
                                            {"getex", "k", "foo"},
                                            {"getex", "missing", "foo"}}) {
    EXPECT_EQ(r.Run(args), kSyntax) << args[2];
  }
  EXPECT_EQ(r.Run({"getex", "k", "EX", "0"}), Err("invalid expire time in 'getex' command"));
  EXPECT_EQ(r.Run({"getex", "k", "PXAT", "-1"}), Err("invalid expire time in 'getex' command"));
  EXPECT_EQ(r.Run({"getex", "k", "EX", "abc"}), kNotInt);
  EXPECT_EQ(ExpireOf("k"), -1);
  // The key is looked up before the time is validated, as in Redis 7.0.
  EXPECT_EQ(r.Run({"getex", "missing", "EX", "0"}), kNull);
  PutList("l");
  EXPECT_EQ(r.Run({"getex", "l", "EX", "0"}), kWrongType);
  EXPECT_EQ(r.Run({"getex", "l"}), kWrongType);
  EXPECT_EQ(r.Run({"getex"}), Arity("getex"));
  r.session.resp = 3;
  EXPECT_EQ(r.Run({"getex", "missing"}), kNull3);
}

// ---- Expiry interplay and the command table ----------------------------------------------------

TEST_F(StringsTest, ExpiredKeysBehaveAsMissing) {
  EXPECT_EQ(r.Run({"mset", "a", "5", "b", "x"}), kOk);
  EXPECT_EQ(r.Run({"getex", "a", "PX", "10"}), Bulk("5"));
  EXPECT_EQ(r.Run({"getex", "b", "PX", "10"}), Bulk("x"));
  r.set_now_ms(kNow + 10);
  EXPECT_EQ(r.Run({"incr", "a"}), Int(1));
  EXPECT_EQ(ExpireOf("a"), -1);
  EXPECT_EQ(r.Run({"strlen", "b"}), Int(0));
  EXPECT_EQ(r.Run({"set", "b", "y", "XX"}), kNull);
}

// Redis 7.0 fires "new" only when a key is created, including over a key whose TTL passed.
TEST_F(StringsTest, NewEventOnlyForCreatedKeys) {
  EXPECT_EQ(r.Run({"set", "k", "v"}), kOk);
  EXPECT_EQ(r.Run({"set", "k", "w"}), kOk);
  EXPECT_EQ(r.Run({"setrange", "p", "0", "x"}), Int(1));
  EXPECT_EQ(r.Run({"incrbyfloat", "q", "1"}), Bulk("1"));
  EXPECT_EQ(r.Run({"incrbyfloat", "q", "1"}), Bulk("2"));
  EXPECT_EQ(TakeEvents(), (Events{{"new", "k"}, {"set", "k"}, {"set", "k"}, {"new", "p"},
                                  {"setrange", "p"}, {"new", "q"}, {"incrbyfloat", "q"},
                                  {"incrbyfloat", "q"}}));
  EXPECT_EQ(r.Run({"psetex", "k", "5", "v"}), kOk);
  r.set_now_ms(kNow + 5);
  TakeEvents();
  EXPECT_EQ(r.Run({"mset", "k", "1", "p", "2"}), kOk);
  EXPECT_EQ(TakeEvents(), (Events{{"new", "k"}, {"set", "k"}, {"set", "p"}}));
  EXPECT_EQ(ExpireOf("k"), -1);
}

TEST_F(StringsTest, CommandTableMetadata) {
  struct Want {
    const char* name;
    int arity;
    std::vector<std::string_view> flags;
    int first, last, step;
  };
  const std::vector<Want> wants = {
      {"get", 2, {"readonly", "fast"}, 1, 1, 1},
      {"set", -3, {"write", "denyoom"}, 1, 1, 1},
      {"setnx", 3, {"write", "denyoom", "fast"}, 1, 1, 1},
      {"setex", 4, {"write", "denyoom"}, 1, 1, 1},
      {"psetex", 4, {"write", "denyoom"}, 1, 1, 1},
      {"mget", -2, {"readonly", "fast"}, 1, -1, 1},
      {"mset", -3, {"write", "denyoom"}, 1, -1, 2},
      {"msetnx", -3, {"write", "denyoom"}, 1, -1, 2},
      {"getset", 3, {"write", "denyoom", "fast"}, 1, 1, 1},
      {"getdel", 2, {"write", "fast"}, 1, 1, 1},
      {"getex", -2, {"write", "fast"}, 1, 1, 1},
      {"append", 3, {"write", "denyoom", "fast"}, 1, 1, 1},
      {"strlen", 2, {"readonly", "fast"}, 1, 1, 1},
      {"getrange", 4, {"readonly"}, 1, 1, 1},
      {"substr", 4, {"readonly"}, 1, 1, 1},
      {"setrange", 4, {"write", "denyoom"}, 1, 1, 1},
      {"incr", 2, {"write", "denyoom", "fast"}, 1, 1, 1},
      {"decr", 2, {"write", "denyoom", "fast"}, 1, 1, 1},
      {"incrby", 3, {"write", "denyoom", "fast"}, 1, 1, 1},
      {"decrby", 3, {"write", "denyoom", "fast"}, 1, 1, 1},
      {"incrbyfloat", 3, {"write", "denyoom", "fast"}, 1, 1, 1},
      {"lcs", -3, {"readonly"}, 1, 2, 1},
  };
  for (const Want& w : wants) {
    const CommandSpec* s = r.table.Find(w.name);
    ASSERT_NE(s, nullptr) << w.name;
    EXPECT_EQ(s->arity, w.arity) << w.name;
    EXPECT_EQ(FlagNames(s->flags), w.flags) << w.name;
    EXPECT_EQ(s->first_key, w.first) << w.name;
    EXPECT_EQ(s->last_key, w.last) << w.name;
    EXPECT_EQ(s->key_step, w.step) << w.name;
    EXPECT_EQ(s->group, "string") << w.name;
    EXPECT_FALSE(s->summary.empty()) << w.name;
    EXPECT_FALSE(s->since.empty()) << w.name;
  }
  EXPECT_EQ(r.table.Find("mset")->KeyIndexes(5), (std::vector<int>{1, 3}));
  EXPECT_EQ(r.table.Find("lcs")->KeyIndexes(5), (std::vector<int>{1, 2}));
}

}  // namespace
}  // namespace kv::cmd
