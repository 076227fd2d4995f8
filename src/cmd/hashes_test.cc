// In-process tests of the HASH command family: raw RESP replies in both protocols, error texts
// and the order of checks, encodings and their conversion (OBJECT ENCODING), keyspace events
// and replication rewrites, against Redis 7.0's behaviour.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cmd/command_test_util.h"

namespace kv::cmd {
namespace {

using Argv = std::vector<std::string>;
using Events = std::vector<std::pair<std::string, std::string>>;  // (event, key)

std::string Bulk(std::string_view s) {
  return "$" + std::to_string(s.size()) + "\r\n" + std::string(s) + "\r\n";
}
std::string Int(int64_t v) { return ":" + std::to_string(v) + "\r\n"; }
std::string Err(std::string_view msg) { return "-ERR " + std::string(msg) + "\r\n"; }
std::string Arity(std::string_view cmd) {
  return Err("wrong number of arguments for '" + std::string(cmd) + "' command");
}
// A flat array of bulk strings.
std::string Bulks(const std::vector<std::string>& items) {
  std::string s = "*" + std::to_string(items.size()) + "\r\n";
  for (const auto& i : items) s += Bulk(i);
  return s;
}
std::string Scan(std::string_view cursor, const std::vector<std::string>& items) {
  return "*2\r\n" + Bulk(cursor) + Bulks(items);
}

const std::string kOk = "+OK\r\n";
const std::string kNull = "$-1\r\n";
const std::string kNull3 = "_\r\n";
const std::string kEmptyArray = "*0\r\n";
const std::string kWrongType =
    "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n";
const std::string kSyntax = Err("syntax error");
const std::string kNotInt = Err("value is not an integer or out of range");
const std::string kNotFloat = Err("value is not a valid float");

// The parts of a reply: every aggregate header ("*3", "%2") and every bulk string, in order.
struct Parsed {
  std::vector<std::string> headers;
  std::vector<std::string> bulks;
};

Parsed Parse(const std::string& raw) {
  Parsed p;
  size_t i = 0;
  while (i < raw.size()) {
    size_t eol = raw.find("\r\n", i);
    std::string line = raw.substr(i, eol - i);
    i = eol + 2;
    if (line[0] == '$') {
      size_t n = std::stoul(line.substr(1));
      p.bulks.push_back(raw.substr(i, n));
      i += n + 2;
    } else {
      p.headers.push_back(line);
    }
  }
  return p;
}

class HashesTest : public ::testing::Test {
 protected:
  std::string Encoding(const std::string& key) {
    std::string reply = r.Run({"object", "encoding", key});
    return reply == kNull ? "absent" : Parse(reply).bulks.at(0);
  }
  Events TakeEvents() {
    Events out = std::move(r.hooks.events);
    r.hooks.events.clear();
    return out;
  }
  // HSET key f0 v0 ... f<n-1> v<n-1>.
  void Fill(const std::string& key, int n) {
    Argv a{"hset", key};
    for (int i = 0; i < n; i++) {
      a.push_back("f" + std::to_string(i));
      a.push_back("v" + std::to_string(i));
    }
    ASSERT_EQ(r.Run(a), Int(n));
  }
  std::map<std::string, std::string> Fields(const std::string& key) {
    std::vector<std::string> b = Parse(r.Run({"hgetall", key})).bulks;
    std::map<std::string, std::string> m;
    for (size_t i = 0; i + 1 < b.size(); i += 2) m[b[i]] = b[i + 1];
    return m;
  }

  CommandRunner r;
};

// ---- Setting and reading -----------------------------------------------------------------------

TEST_F(HashesTest, SetGetAndFriends) {
  EXPECT_EQ(r.Run({"hset", "h", "a", "1", "b", "2"}), Int(2));
  EXPECT_EQ(r.Run({"HSET", "h", "a", "10", "c", "3"}), Int(1));  // only c is new
  EXPECT_EQ(r.last_propagated(), (Argv{"HSET", "h", "a", "10", "c", "3"}));
  EXPECT_EQ(r.Run({"hmset", "h", "d", "4"}), kOk);
  EXPECT_EQ(r.Run({"hget", "h", "a"}), Bulk("10"));
  EXPECT_EQ(r.Run({"hget", "h", "zz"}), kNull);
  EXPECT_EQ(r.Run({"hget", "nokey", "a"}), kNull);
  EXPECT_EQ(r.Run({"hmget", "h", "a", "zz", "d"}), "*3\r\n" + Bulk("10") + kNull + Bulk("4"));
  EXPECT_EQ(r.Run({"hmget", "nokey", "a", "b"}), "*2\r\n" + kNull + kNull);
  EXPECT_EQ(r.Run({"hlen", "h"}), Int(4));
  EXPECT_EQ(r.Run({"hlen", "nokey"}), Int(0));
  EXPECT_EQ(r.Run({"hexists", "h", "b"}), Int(1));
  EXPECT_EQ(r.Run({"hexists", "h", "zz"}), Int(0));
  EXPECT_EQ(r.Run({"hexists", "nokey", "b"}), Int(0));
  EXPECT_EQ(r.Run({"hstrlen", "h", "a"}), Int(2));
  EXPECT_EQ(r.Run({"hstrlen", "h", "zz"}), Int(0));
  EXPECT_EQ(r.Run({"hstrlen", "nokey", "a"}), Int(0));
  EXPECT_EQ(r.Run({"type", "h"}), "+hash\r\n");
  const std::string binary("x\0y\r\n", 5);
  EXPECT_EQ(r.Run({"hset", "h", binary, ""}), Int(1));
  EXPECT_EQ(r.Run({"hget", "h", binary}), Bulk(""));
  EXPECT_EQ(r.Run({"hstrlen", "h", binary}), Int(0));

  r.session.resp = 3;
  EXPECT_EQ(r.Run({"hget", "h", "zz"}), kNull3);
  EXPECT_EQ(r.Run({"hmget", "nokey", "a"}), "*1\r\n" + kNull3);
}

TEST_F(HashesTest, HSetNx) {
  EXPECT_EQ(r.Run({"hsetnx", "h", "a", "1"}), Int(1));
  EXPECT_EQ(TakeEvents(), (Events{{"new", "h"}, {"hset", "h"}}));
  EXPECT_EQ(r.Run({"hsetnx", "h", "a", "2"}), Int(0));
  EXPECT_TRUE(TakeEvents().empty());
  EXPECT_TRUE(r.last_propagated().empty());
  EXPECT_EQ(r.Run({"hget", "h", "a"}), Bulk("1"));
}

TEST_F(HashesTest, ArityAndWrongType) {
  EXPECT_EQ(r.Run({"hset", "h", "a"}), Arity("hset"));
  EXPECT_EQ(r.Run({"hset", "h", "a", "1", "b"}), Arity("hset"));
  EXPECT_EQ(r.Run({"hmset", "h", "a", "1", "b"}), Arity("hmset"));
  EXPECT_EQ(r.Run({"hget", "h"}), Arity("hget"));
  EXPECT_EQ(r.Run({"hdel", "h"}), Arity("hdel"));
  EXPECT_EQ(r.Run({"hrandfield"}), Arity("hrandfield"));
  EXPECT_EQ(r.Run({"hscan", "h"}), Arity("hscan"));
  EXPECT_EQ(r.Run({"exists", "h"}), Int(0));  // failed commands created nothing

  ASSERT_EQ(r.Run({"set", "s", "x"}), kOk);
  EXPECT_EQ(r.Run({"hset", "s", "a", "1", "b"}), Arity("hset"));  // arity before type
  for (const Argv& cmd : std::vector<Argv>{
           {"hset", "s", "a", "1"}, {"hmset", "s", "a", "1"}, {"hsetnx", "s", "a", "1"},
           {"hget", "s", "a"}, {"hmget", "s", "a"}, {"hdel", "s", "a"}, {"hlen", "s"},
           {"hexists", "s", "a"}, {"hstrlen", "s", "a"}, {"hgetall", "s"}, {"hkeys", "s"},
           {"hvals", "s"}, {"hincrby", "s", "a", "1"}, {"hincrbyfloat", "s", "a", "1"},
           {"hscan", "s", "0"}, {"hscan", "s", "0", "count", "0"}, {"hrandfield", "s"},
           {"hrandfield", "s", "0"}, {"hrandfield", "s", "-3", "withvalues"}}) {
    EXPECT_EQ(r.Run(cmd), kWrongType) << cmd[0];
  }
  // Arguments checked before the key.
  EXPECT_EQ(r.Run({"hincrby", "s", "a", "x"}), kNotInt);
  EXPECT_EQ(r.Run({"hincrbyfloat", "s", "a", "x"}), kNotFloat);
  EXPECT_EQ(r.Run({"hincrbyfloat", "s", "a", "inf"}), Err("value is NaN or Infinity"));
  EXPECT_EQ(r.Run({"hscan", "s", "x"}), Err("invalid cursor"));
  EXPECT_EQ(r.Run({"hrandfield", "s", "x"}), kNotInt);
  EXPECT_EQ(r.Run({"hrandfield", "s", "1", "withvalues", "x"}), kSyntax);
  EXPECT_EQ(r.Run({"get", "s"}), Bulk("x"));
}

TEST_F(HashesTest, GetAllKeysValsInBothProtocols) {
  EXPECT_EQ(r.Run({"hgetall", "h"}), kEmptyArray);
  EXPECT_EQ(r.Run({"hkeys", "h"}), kEmptyArray);
  EXPECT_EQ(r.Run({"hvals", "h"}), kEmptyArray);
  r.Run({"hset", "h", "b", "2", "a", "1", "c", "3"});
  r.Run({"hset", "h", "b", "22"});  // an update keeps the listpack position
  EXPECT_EQ(r.Run({"hgetall", "h"}), Bulks({"b", "22", "a", "1", "c", "3"}));
  EXPECT_EQ(r.Run({"hkeys", "h"}), Bulks({"b", "a", "c"}));
  EXPECT_EQ(r.Run({"hvals", "h"}), Bulks({"22", "1", "3"}));
  r.session.resp = 3;
  EXPECT_EQ(r.Run({"hgetall", "h"}),
            "%3\r\n" + Bulk("b") + Bulk("22") + Bulk("a") + Bulk("1") + Bulk("c") + Bulk("3"));
  EXPECT_EQ(r.Run({"hkeys", "h"}), Bulks({"b", "a", "c"}));
  EXPECT_EQ(r.Run({"hgetall", "nokey"}), "%0\r\n");
  EXPECT_EQ(r.Run({"hkeys", "nokey"}), kEmptyArray);
}

TEST_F(HashesTest, HDelRemovesTheKeyWithItsLastField) {
  EXPECT_EQ(r.Run({"hdel", "h", "a"}), Int(0));
  r.Run({"hset", "h", "a", "1", "b", "2", "c", "3"});
  TakeEvents();
  EXPECT_EQ(r.Run({"hdel", "h", "a", "zz", "a"}), Int(1));
  EXPECT_EQ(TakeEvents(), (Events{{"hdel", "h"}}));
  EXPECT_EQ(r.Run({"hdel", "h", "zz"}), Int(0));
  EXPECT_TRUE(TakeEvents().empty());
  EXPECT_TRUE(r.last_propagated().empty());
  EXPECT_EQ(r.Run({"hdel", "h", "b", "c", "d"}), Int(2));
  EXPECT_EQ(TakeEvents(), (Events{{"hdel", "h"}, {"del", "h"}}));
  EXPECT_EQ(r.last_propagated(), (Argv{"hdel", "h", "b", "c", "d"}));
  EXPECT_EQ(r.Run({"exists", "h"}), Int(0));
}

// ---- Counters ----------------------------------------------------------------------------------

TEST_F(HashesTest, HIncrBy) {
  EXPECT_EQ(r.Run({"hincrby", "h", "n", "5"}), Int(5));
  EXPECT_EQ(TakeEvents(), (Events{{"new", "h"}, {"hincrby", "h"}}));
  EXPECT_EQ(r.Run({"hincrby", "h", "n", "-7"}), Int(-2));
  EXPECT_EQ(r.Run({"hget", "h", "n"}), Bulk("-2"));
  r.Run({"hset", "h", "s", "abc", "z", "007", "max", "9223372036854775807"});
  EXPECT_EQ(r.Run({"hincrby", "h", "s", "1"}), Err("hash value is not an integer"));
  EXPECT_EQ(r.Run({"hincrby", "h", "z", "1"}), Err("hash value is not an integer"));
  EXPECT_EQ(r.Run({"hincrby", "h", "max", "1"}), Err("increment or decrement would overflow"));
  EXPECT_EQ(r.Run({"hincrby", "h", "max", "-1"}), Int(9223372036854775806));
  EXPECT_EQ(r.Run({"hincrby", "h", "n", "1.5"}), kNotInt);
  EXPECT_EQ(r.Run({"hincrby", "nokey", "n", "x"}), kNotInt);
  EXPECT_EQ(r.Run({"exists", "nokey"}), Int(0));
}

TEST_F(HashesTest, HIncrByFloatIsPropagatedAsHSet) {
  EXPECT_EQ(r.Run({"hincrbyfloat", "h", "f", "1.5"}), Bulk("1.5"));
  EXPECT_EQ(r.last_propagated(), (Argv{"HSET", "h", "f", "1.5"}));
  EXPECT_EQ(TakeEvents(), (Events{{"new", "h"}, {"hincrbyfloat", "h"}}));
  EXPECT_EQ(r.Run({"hincrbyfloat", "h", "f", "-0.25"}), Bulk("1.25"));
  EXPECT_EQ(r.Run({"hincrbyfloat", "h", "f", "1e3"}), Bulk("1001.25"));
  r.Run({"hset", "h", "i", "9223372036854775807", "s", "abc"});
  EXPECT_EQ(r.Run({"hincrbyfloat", "h", "i", "1"}), Bulk("9223372036854775808"));
  EXPECT_EQ(r.Run({"hincrbyfloat", "h", "s", "1"}), Err("hash value is not a float"));
  EXPECT_EQ(r.Run({"hincrbyfloat", "h", "f", "nan"}), kNotFloat);
  EXPECT_EQ(r.Run({"hincrbyfloat", "h", "f", "-inf"}), Err("value is NaN or Infinity"));
  EXPECT_EQ(r.Run({"hincrbyfloat", "nokey", "f", "inf"}), Err("value is NaN or Infinity"));
  EXPECT_EQ(r.Run({"exists", "nokey"}), Int(0));
  // 1e4932 + 1e4932 overflows even a long double.
  r.Run({"hset", "h", "huge", "1e4932"});
  EXPECT_EQ(r.Run({"hincrbyfloat", "h", "huge", "1e4932"}),
            Err("increment would produce NaN or Infinity"));
  EXPECT_EQ(r.Run({"hget", "h", "huge"}), Bulk("1e4932"));
}

// ---- Encodings ---------------------------------------------------------------------------------

TEST_F(HashesTest, ConvertsAtTheEntriesLimit) {
  Fill("h", 512);
  EXPECT_EQ(Encoding("h"), "listpack");
  EXPECT_EQ(r.Run({"hset", "h", "f0", "updated"}), Int(0));
  EXPECT_EQ(Encoding("h"), "listpack");
  EXPECT_EQ(r.Run({"hset", "h", "one-more", "v"}), Int(1));
  EXPECT_EQ(Encoding("h"), "hashtable");
  EXPECT_EQ(r.Run({"hlen", "h"}), Int(513));
  EXPECT_EQ(r.Run({"hget", "h", "f0"}), Bulk("updated"));
  EXPECT_EQ(r.Run({"hdel", "h", "one-more", "f1", "f2"}), Int(3));
  EXPECT_EQ(Encoding("h"), "hashtable");  // never converts back

  r.ks.limits().hash_max_listpack_entries = 2;
  EXPECT_EQ(r.Run({"hset", "small", "a", "1", "b", "2"}), Int(2));
  EXPECT_EQ(Encoding("small"), "listpack");
  EXPECT_EQ(r.Run({"hsetnx", "small", "c", "3"}), Int(1));
  EXPECT_EQ(Encoding("small"), "hashtable");
  EXPECT_EQ(r.Run({"hincrby", "inc", "a", "1"}), Int(1));
  EXPECT_EQ(r.Run({"hincrby", "inc", "b", "1"}), Int(1));
  EXPECT_EQ(Encoding("inc"), "listpack");
  EXPECT_EQ(r.Run({"hincrby", "inc", "c", "1"}), Int(1));
  EXPECT_EQ(Encoding("inc"), "hashtable");
}

TEST_F(HashesTest, ConvertsOnALongFieldOrValue) {
  const std::string v64(64, 'v'), v65(65, 'v');
  r.Run({"hset", "a", "f", v64, v64, "x"});
  EXPECT_EQ(Encoding("a"), "listpack");
  r.Run({"hset", "b", "f", "1", "g", v65});
  EXPECT_EQ(Encoding("b"), "hashtable");
  EXPECT_EQ(Fields("b"), (std::map<std::string, std::string>{{"f", "1"}, {"g", v65}}));
  r.Run({"hset", "c", v65, "1"});
  EXPECT_EQ(Encoding("c"), "hashtable");
  // HSETNX of an existing field changes nothing, even with a long value.
  r.Run({"hset", "d", "f", "1"});
  EXPECT_EQ(r.Run({"hsetnx", "d", "f", v65}), Int(0));
  EXPECT_EQ(Encoding("d"), "listpack");
  EXPECT_EQ(r.Run({"hsetnx", "d", "g", v65}), Int(1));
  EXPECT_EQ(Encoding("d"), "hashtable");
  // HINCRBY with a long field; HINCRBYFLOAT whose result is long.
  r.Run({"hincrby", "e", v65, "1"});
  EXPECT_EQ(Encoding("e"), "hashtable");
  r.Run({"hincrbyfloat", "g", "f", "1e70"});
  EXPECT_EQ(Encoding("g"), "hashtable");
  // The value limit follows the configuration.
  r.ks.limits().hash_max_listpack_value = 100;
  r.Run({"hset", "k", "f", v65});
  EXPECT_EQ(Encoding("k"), "listpack");
}

TEST_F(HashesTest, CopyKeepsTheEncodingAndIsDeep) {
  Fill("lp", 3);
  Fill("ht", 600);
  EXPECT_EQ(r.Run({"copy", "lp", "lp2"}), Int(1));
  EXPECT_EQ(r.Run({"copy", "ht", "ht2"}), Int(1));
  EXPECT_EQ(Encoding("lp2"), "listpack");
  EXPECT_EQ(Encoding("ht2"), "hashtable");
  EXPECT_EQ(Fields("ht2"), Fields("ht"));
  r.Run({"hset", "lp2", "f0", "changed"});
  EXPECT_EQ(r.Run({"hget", "lp", "f0"}), Bulk("v0"));
  EXPECT_EQ(r.Run({"hkeys", "lp2"}), Bulks({"f0", "f1", "f2"}));
}

// ---- HSCAN -------------------------------------------------------------------------------------

TEST_F(HashesTest, HScanListpackAnswersEverythingWithCursorZero) {
  EXPECT_EQ(r.Run({"hscan", "h", "0"}), Scan("0", {}));
  EXPECT_EQ(r.Run({"hscan", "h", "0", "count", "0"}), Scan("0", {}));  // key before options
  EXPECT_EQ(r.Run({"hscan", "h", "x"}), Err("invalid cursor"));
  r.Run({"hset", "h", "a1", "1", "b1", "2", "a2", "3"});
  EXPECT_EQ(r.Run({"hscan", "h", "0"}), Scan("0", {"a1", "1", "b1", "2", "a2", "3"}));
  EXPECT_EQ(r.Run({"hscan", "h", "77", "COUNT", "1"}),
            Scan("0", {"a1", "1", "b1", "2", "a2", "3"}));
  EXPECT_EQ(r.Run({"hscan", "h", "0", "match", "a*"}), Scan("0", {"a1", "1", "a2", "3"}));
  EXPECT_EQ(r.Run({"hscan", "h", "0", "match", "1"}), Scan("0", {}));  // values never match
  EXPECT_EQ(r.Run({"hscan", "h", "-1"}), Scan("0", {"a1", "1", "b1", "2", "a2", "3"}));
  EXPECT_EQ(r.Run({"hscan", "h", " 1"}), Err("invalid cursor"));
  EXPECT_EQ(r.Run({"hscan", "h", "0", "count", "0"}), kSyntax);
  EXPECT_EQ(r.Run({"hscan", "h", "0", "count", "x"}), kNotInt);
  EXPECT_EQ(r.Run({"hscan", "h", "0", "type", "hash"}), kSyntax);
  EXPECT_EQ(r.Run({"hscan", "h", "0", "match"}), kSyntax);
  r.session.resp = 3;
  EXPECT_EQ(r.Run({"hscan", "h", "0", "match", "b*"}), Scan("0", {"b1", "2"}));
}

TEST_F(HashesTest, HScanHashtableVisitsEveryFieldWithItsValue) {
  Fill("h", 1000);
  ASSERT_EQ(Encoding("h"), "hashtable");
  std::map<std::string, std::string> seen;
  std::string cursor = "0";
  int calls = 0;
  do {
    std::vector<std::string> b = Parse(r.Run({"hscan", "h", cursor, "count", "20"})).bulks;
    cursor = b.at(0);
    EXPECT_EQ(b.size() % 2, 1u);
    for (size_t i = 1; i + 1 < b.size(); i += 2) seen[b[i]] = b[i + 1];
    calls++;
  } while (cursor != "0" && calls < 10000);
  EXPECT_GT(calls, 10);  // COUNT 20 over 1000 fields takes many calls
  EXPECT_EQ(seen, Fields("h"));
  EXPECT_EQ(seen.size(), 1000u);
  // MATCH filters after the walk: f70..f79 only, with their values.
  std::vector<std::string> b =
      Parse(r.Run({"hscan", "h", "0", "count", "5000", "match", "f7?"})).bulks;
  EXPECT_EQ(b.at(0), "0");
  ASSERT_EQ(b.size(), 1u + 2 * 10);
  for (size_t i = 1; i < b.size(); i += 2) EXPECT_EQ("v" + b[i].substr(1), b[i + 1]);
}

// ---- HRANDFIELD --------------------------------------------------------------------------------

TEST_F(HashesTest, HRandFieldErrorsAndEmpty) {
  EXPECT_EQ(r.Run({"hrandfield", "h"}), kNull);
  EXPECT_EQ(r.Run({"hrandfield", "h", "5"}), kEmptyArray);
  EXPECT_EQ(r.Run({"hrandfield", "h", "-5", "withvalues"}), kEmptyArray);
  EXPECT_EQ(r.Run({"hrandfield", "h", "-9223372036854775808"}),
            Err("value is out of range, value must between -9223372036854775807 and "
                "9223372036854775807"));
  EXPECT_EQ(r.Run({"hrandfield", "h", "4611686018427387904", "withvalues"}),
            Err("value is out of range"));
  EXPECT_EQ(r.Run({"hrandfield", "h", "1", "withvalue"}), kSyntax);
  EXPECT_EQ(r.Run({"hrandfield", "h", "1", "withvalues", "x"}), kSyntax);
  Fill("h", 3);
  EXPECT_EQ(r.Run({"hrandfield", "h", "0"}), kEmptyArray);
  EXPECT_EQ(r.Run({"hrandfield", "h", "0", "withvalues"}), kEmptyArray);
  r.session.resp = 3;
  EXPECT_EQ(r.Run({"hrandfield", "nokey"}), kNull3);
}

// Checks one HRANDFIELD reply: its shape for the protocol and that every field is in `h` with
// its value. Returns the fields.
std::vector<std::string> CheckRand(const std::string& raw, int proto, bool withvalues, size_t want,
                                   const std::map<std::string, std::string>& h) {
  Parsed p = Parse(raw);
  size_t per = withvalues ? 2 : 1;
  EXPECT_EQ(p.bulks.size(), want * per) << raw;
  if (withvalues && proto == 3) {
    EXPECT_EQ(p.headers.size(), want + 1) << raw;
    EXPECT_EQ(p.headers.at(0), "*" + std::to_string(want));
    for (size_t i = 1; i < p.headers.size(); i++) EXPECT_EQ(p.headers[i], "*2");
  } else {
    EXPECT_EQ(p.headers, std::vector<std::string>{"*" + std::to_string(want * per)}) << raw;
  }
  std::vector<std::string> fields;
  for (size_t i = 0; i + per <= p.bulks.size(); i += per) {
    auto it = h.find(p.bulks[i]);
    EXPECT_NE(it, h.end()) << p.bulks[i];
    if (withvalues && it != h.end()) {
      EXPECT_EQ(p.bulks[i + 1], it->second);
    }
    fields.push_back(p.bulks[i]);
  }
  return fields;
}

TEST_F(HashesTest, HRandFieldShapesAndUniqueness) {
  for (int size : {5, 40, 700}) {  // listpack, listpack, hashtable
    std::string key = "h" + std::to_string(size);
    Fill(key, size);
    auto all = Fields(key);
    for (int proto : {2, 3}) {
      r.session.resp = proto;
      for (bool wv : {false, true}) {
        auto run = [&](int count) {
          Argv a{"hrandfield", key, std::to_string(count)};
          if (wv) a.push_back("withvalues");
          return r.Run(a);
        };
        // Negative: exactly that many, repeats allowed.
        CheckRand(run(-size * 3), proto, wv, size * 3, all);
        // Positive: distinct, min(count, size); count 1, a few (sampling), most (dropping).
        for (int count : {1, 2, size / 2 + 1, size - 1, size, size + 10}) {
          size_t want = std::min(count, size);
          auto fields = CheckRand(run(count), proto, wv, want, all);
          EXPECT_EQ(std::set<std::string>(fields.begin(), fields.end()).size(), want)
              << "repeated field, count " << count;
        }
      }
    }
    r.session.resp = 2;
    std::string one = r.Run({"hrandfield", key});
    EXPECT_TRUE(all.count(Parse(one).bulks.at(0))) << one;
  }
}

TEST_F(HashesTest, HRandFieldWholeListpackIsInOrder) {
  Fill("h", 3);
  EXPECT_EQ(r.Run({"hrandfield", "h", "3"}), Bulks({"f0", "f1", "f2"}));
  EXPECT_EQ(r.Run({"hrandfield", "h", "10", "withvalues"}),
            Bulks({"f0", "v0", "f1", "v1", "f2", "v2"}));
  r.session.resp = 3;
  EXPECT_EQ(r.Run({"hrandfield", "h", "3", "withvalues"}),
            "*3\r\n*2\r\n" + Bulk("f0") + Bulk("v0") + "*2\r\n" + Bulk("f1") + Bulk("v1") +
                "*2\r\n" + Bulk("f2") + Bulk("v2"));
}

// ---- Events, stats and the command table -------------------------------------------------------

TEST_F(HashesTest, EventsAndStats) {
  EXPECT_EQ(r.Run({"hset", "h", "a", "1"}), Int(1));
  EXPECT_EQ(TakeEvents(), (Events{{"new", "h"}, {"hset", "h"}}));
  EXPECT_EQ(r.Run({"hmset", "h", "a", "2", "b", "3"}), kOk);
  EXPECT_EQ(TakeEvents(), (Events{{"hset", "h"}}));
  EXPECT_EQ(r.last_propagated(), (Argv{"hmset", "h", "a", "2", "b", "3"}));
  EXPECT_EQ(r.Run({"hget", "nokey", "a"}), kNull);
  EXPECT_EQ(TakeEvents(), (Events{{"keymiss", "nokey"}}));
  EXPECT_EQ(r.stats.keyspace_misses, 1u);
  r.Run({"hget", "h", "a"});
  EXPECT_EQ(r.stats.keyspace_hits, 1u);
  EXPECT_EQ(r.hooks.modified, (std::vector<std::pair<int, std::string>>{{0, "h"}, {0, "h"}}));
}

TEST_F(HashesTest, CommandTableRows) {
  const CommandSpec* hset = r.table.Find("hset");
  ASSERT_NE(hset, nullptr);
  EXPECT_EQ(hset->arity, -4);
  EXPECT_EQ(hset->flags, kWrite | kDenyOom | kFast);
  EXPECT_EQ(hset->group, "hash");
  EXPECT_EQ(hset->KeyIndexes(6), std::vector<int>{1});
  const CommandSpec* hgetall = r.table.Find("HGETALL");
  ASSERT_NE(hgetall, nullptr);
  EXPECT_EQ(hgetall->flags, kReadOnly);
  EXPECT_EQ(hgetall->since, "2.0.0");
  EXPECT_EQ(r.table.Find("hdel")->flags, kWrite | kFast);
  EXPECT_EQ(r.table.Find("hrandfield")->arity, -2);
  EXPECT_EQ(r.table.Find("hstrlen")->since, "3.2.0");
}

}  // namespace
}  // namespace kv::cmd
