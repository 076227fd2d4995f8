// In-process tests of the connection and STRING command families: raw RESP replies, keyspace
// state, TTLs, keyspace events and replication rewrites, against Redis 7.0's behaviour.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cmd/command_test_util.h"

namespace kv::cmd {
namespace {

using store::Entry;
using store::ObjType;
using store::Value;
using Argv = std::vector<std::string>;
using Events = std::vector<std::pair<std::string, std::string>>;  // (event, key)

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

// ---- Reply builders ----------------------------------------------------------------------------

std::string Bulk(std::string_view s) {
  return "$" + std::to_string(s.size()) + "\r\n" + std::string(s) + "\r\n";
}
std::string Int(int64_t v) { return ":" + std::to_string(v) + "\r\n"; }
std::string Err(std::string_view msg) { return "-ERR " + std::string(msg) + "\r\n"; }
std::string Arity(std::string_view cmd) {
  return Err("wrong number of arguments for '" + std::string(cmd) + "' command");
}

const std::string kOk = "+OK\r\n";
const std::string kNull = "$-1\r\n";
const std::string kNull3 = "_\r\n";
const std::string kEmpty = "$0\r\n\r\n";
const std::string kWrongType =
    "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n";
const std::string kSyntax = Err("syntax error");
const std::string kNotInt = Err("value is not an integer or out of range");
const std::string kNotFloat = Err("value is not a valid float");
const std::string kTooLong = Err("string exceeds maximum allowed size (proto-max-bulk-len)");

// A non-string value for WRONGTYPE tests (no collection family is linked into cmd_test).
class FakeList : public store::Collection {
 public:
  std::unique_ptr<Collection> Clone() const override { return std::make_unique<FakeList>(); }
  size_t MemoryUsage() const override { return 0; }
  const char* EncodingName() const override { return "quicklist"; }
  size_t Size() const override { return 0; }
  void ForEach(const Visitor&) const override {}
};

class StringsTest : public ::testing::Test {
 protected:
  static constexpr int64_t kNow = 1'700'000'000'000;  // whole seconds, so EXAT maths is exact

  void SetUp() override { r.set_now_ms(kNow); }

  void PutList(const std::string& key) {
    r.ks.Set(0, key, Value::Object(ObjType::kList, std::make_unique<FakeList>()));
  }
  bool IsList(const std::string& key) {
    Entry* e = r.ks.db(0).Find(key);
    return e && e->value.type() == ObjType::kList;
  }
  // Absolute expire time in ms of a stored key, -1 without TTL, -2 when not stored (raw view:
  // no lazy expiry).
  int64_t ExpireOf(const std::string& key) {
    Entry* e = r.ks.db(0).Find(key);
    return e ? r.ks.db(0).GetExpire(e) : -2;
  }
  std::string Encoding(const std::string& key) {
    Entry* e = r.ks.db(0).Find(key);
    return e ? e->value.EncodingName() : "absent";
  }
  Events TakeEvents() {
    Events out = std::move(r.hooks.events);
    r.hooks.events.clear();
    return out;
  }
  std::string Ms(int64_t v) { return std::to_string(v); }

  CommandRunner r;
};

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
  EXPECT_EQ(TakeEvents(), (Events{{"new", "c"}, {"incrby", "c"}, {"incrby", "c"}, {"incrby", "c"},
                                  {"incrby", "c"}, {"incrby", "c"}, {"incrby", "c"}}));
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
