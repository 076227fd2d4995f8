// In-process tests of the SORTED SET command family: raw RESP2/RESP3 replies, error texts,
// encodings, keyspace events and replication rewrites, as Redis 7.0 answers them (the expected
// replies were checked against redis-server 7.0).
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cmd/command_test_util.h"
#include "cmd/zset_ops.h"
#include "store/zset_type.h"

namespace kv::cmd {
namespace {

using Argv = std::vector<std::string>;
using Events = std::vector<std::pair<std::string, std::string>>;  // (event, key)

std::string Bulk(std::string_view s) {
  return "$" + std::to_string(s.size()) + "\r\n" + std::string(s) + "\r\n";
}
std::string Int(int64_t v) { return ":" + std::to_string(v) + "\r\n"; }
std::string Dbl(std::string_view s) { return "," + std::string(s) + "\r\n"; }  // RESP3 double
std::string Arr(size_t n) { return "*" + std::to_string(n) + "\r\n"; }
std::string Err(std::string_view msg) { return "-ERR " + std::string(msg) + "\r\n"; }
// Bulk strings in an array.
std::string Bulks(std::initializer_list<std::string_view> items) {
  std::string s = Arr(items.size());
  for (std::string_view i : items) s += Bulk(i);
  return s;
}

const std::string kNull = "$-1\r\n";
const std::string kNull3 = "_\r\n";
const std::string kNullArray = "*-1\r\n";
const std::string kEmptyArray = "*0\r\n";
const std::string kWrongType =
    "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n";
const std::string kSyntax = Err("syntax error");
const std::string kNotInt = Err("value is not an integer or out of range");
const std::string kNotFloat = Err("value is not a valid float");
const std::string kNotFloatRange = Err("min or max is not a float");
const std::string kBadLex = Err("min or max not valid string range item");

// A plain set value, so set inputs can be tested whatever the set family provides.
class FakeSet : public store::Collection {
 public:
  explicit FakeSet(std::vector<std::string> m) : members_(std::move(m)) {}
  std::unique_ptr<Collection> Clone() const override { return std::make_unique<FakeSet>(members_); }
  size_t Size() const override { return members_.size(); }
  void ForEach(const Visitor& fn) const override {
    for (const auto& m : members_) fn(m, {});
  }
  size_t MemoryUsage() const override { return 0; }
  const char* EncodingName() const override { return "hashtable"; }

 private:
  std::vector<std::string> members_;
};

class ZsetTest : public ::testing::Test {
 protected:
  std::string Run(Argv a) { return r.Run(std::move(a)); }
  Events TakeEvents() {
    Events out = std::move(r.hooks.events);
    r.hooks.events.clear();
    return out;
  }
  void AddSet(const std::string& key, std::vector<std::string> members) {
    r.ks.Set(
        0, key,
        store::Value::Object(store::ObjType::kSet, std::make_unique<FakeSet>(std::move(members))));
  }
  std::string Encoding(const std::string& key) { return Run({"object", "encoding", key}); }

  CommandRunner r;
};

// ---- ZADD / ZINCRBY ---------------------------------------------------------------------------

TEST_F(ZsetTest, ZaddAddsUpdatesAndCounts) {
  EXPECT_EQ(Run({"zadd", "z", "1", "a", "2", "b"}), Int(2));
  EXPECT_EQ(TakeEvents(), (Events{{"new", "z"}, {"zadd", "z"}}));
  EXPECT_EQ(r.last_propagated(), (Argv{"zadd", "z", "1", "a", "2", "b"}));
  EXPECT_EQ(Run({"zadd", "z", "1", "a", "3", "b", "4", "c"}), Int(1));
  EXPECT_EQ(Run({"zadd", "z", "CH", "5", "a", "3", "b", "6", "d"}), Int(2));
  EXPECT_EQ(Run({"zadd", "z", "NX", "9", "a", "1", "e"}), Int(1));
  EXPECT_EQ(Run({"zadd", "z", "XX", "CH", "9", "a", "1", "f"}), Int(1));
  EXPECT_EQ(Run({"zadd", "z", "GT", "CH", "1", "a", "10", "b"}), Int(1));
  EXPECT_EQ(Run({"zadd", "z", "LT", "CH", "20", "a", "0", "b"}), Int(1));
  EXPECT_EQ(Run({"zrange", "z", "0", "-1", "withscores"}),
            Bulks({"b", "0", "e", "1", "c", "4", "d", "6", "a", "9"}));
  // Re-adding the same scores changes nothing: no event, nothing to propagate.
  TakeEvents();
  EXPECT_EQ(Run({"zadd", "z", "9", "a"}), Int(0));
  EXPECT_TRUE(TakeEvents().empty());
  EXPECT_TRUE(r.last_propagated().empty());
  // XX on a missing key creates nothing.
  EXPECT_EQ(Run({"zadd", "none", "XX", "1", "a"}), Int(0));
  EXPECT_EQ(Run({"zadd", "none", "XX", "INCR", "1", "a"}), kNull);
  EXPECT_EQ(Run({"exists", "none"}), Int(0));
}

TEST_F(ZsetTest, ZaddErrors) {
  EXPECT_EQ(Run({"zadd", "z", "1"}), Err("wrong number of arguments for 'zadd' command"));
  EXPECT_EQ(Run({"zadd", "z", "nx", "1"}), kSyntax);
  EXPECT_EQ(Run({"zadd", "z", "1", "a", "2"}), kSyntax);
  EXPECT_EQ(Run({"zadd", "z", "nx", "xx", "1", "a"}),
            Err("XX and NX options at the same time are not compatible"));
  for (const char* opts : {"nx gt", "nx lt", "gt lt"}) {
    Argv a{"zadd", "z"};
    a.push_back(std::string(opts).substr(0, 2));
    a.push_back(std::string(opts).substr(3));
    a.insert(a.end(), {"1", "a"});
    EXPECT_EQ(Run(a), Err("GT, LT, and/or NX options at the same time are not compatible"));
  }
  EXPECT_EQ(Run({"zadd", "z", "incr", "1", "a", "2", "b"}),
            Err("INCR option supports a single increment-element pair"));
  // Every score is checked before anything is added.
  EXPECT_EQ(Run({"zadd", "z", "1", "a", "x", "b"}), kNotFloat);
  for (const char* bad : {"nan", "", " 1", "1e400", "1 "}) {
    EXPECT_EQ(Run({"zadd", "z", bad, "a"}), kNotFloat) << bad;
  }
  EXPECT_EQ(Run({"exists", "z"}), Int(0));
  EXPECT_EQ(Run({"zadd", "z", "0x10", "hex", "+inf", "i", "-inf", "j"}), Int(3));
  EXPECT_EQ(Run({"zscore", "z", "hex"}), Bulk("16"));
  r.Run({"set", "s", "v"});
  EXPECT_EQ(Run({"zadd", "s", "1", "a"}), kWrongType);
}

TEST_F(ZsetTest, IncrAndNaN) {
  EXPECT_EQ(Run({"zincrby", "z", "1.5", "a"}), Bulk("1.5"));
  EXPECT_EQ(TakeEvents(), (Events{{"new", "z"}, {"zincr", "z"}}));
  EXPECT_EQ(Run({"zadd", "z", "incr", "0.1", "a"}), Bulk("1.6000000000000001"));
  EXPECT_EQ(Run({"zadd", "z", "incr", "gt", "-1", "a"}), kNull);
  EXPECT_EQ(Run({"zadd", "z", "incr", "nx", "1", "a"}), kNull);
  EXPECT_EQ(Run({"zincrby", "z", "nx", "a"}), kSyntax);  // parsed as ZADD options
  EXPECT_EQ(Run({"zincrby", "z", "inf", "a"}), Bulk("inf"));
  EXPECT_EQ(Run({"zincrby", "z", "-inf", "a"}), Err("resulting score is not a number (NaN)"));
  EXPECT_EQ(Run({"zscore", "z", "a"}), Bulk("inf"));
  r.session.resp = 3;
  EXPECT_EQ(Run({"zincrby", "z", "1", "b"}), Dbl("1"));
  EXPECT_EQ(Run({"zadd", "z", "xx", "incr", "1", "c"}), kNull3);
}

// ---- Point reads ----------------------------------------------------------------------------

TEST_F(ZsetTest, PointReadsBothProtocols) {
  Run({"zadd", "z", "1", "a", "2.5", "b", "-3", "c"});
  EXPECT_EQ(Run({"zscore", "z", "b"}), Bulk("2.5"));
  EXPECT_EQ(Run({"zscore", "z", "x"}), kNull);
  EXPECT_EQ(Run({"zscore", "none", "x"}), kNull);
  EXPECT_EQ(Run({"zmscore", "z", "a", "x", "c"}), Arr(3) + Bulk("1") + kNull + Bulk("-3"));
  EXPECT_EQ(Run({"zmscore", "none", "a"}), Arr(1) + kNull);
  EXPECT_EQ(Run({"zcard", "z"}), Int(3));
  EXPECT_EQ(Run({"zcard", "none"}), Int(0));
  EXPECT_EQ(Run({"zrank", "z", "a"}), Int(1));
  EXPECT_EQ(Run({"zrevrank", "z", "a"}), Int(1));
  EXPECT_EQ(Run({"zrevrank", "z", "c"}), Int(2));
  EXPECT_EQ(Run({"zrank", "z", "x"}), kNull);
  r.session.resp = 3;
  EXPECT_EQ(Run({"zscore", "z", "b"}), Dbl("2.5"));
  EXPECT_EQ(Run({"zmscore", "z", "x", "c"}), Arr(2) + kNull3 + Dbl("-3"));
  EXPECT_EQ(Run({"zrank", "none", "x"}), kNull3);
  r.Run({"set", "s", "v"});
  for (const char* cmd : {"zscore", "zmscore", "zrank", "zrevrank"}) {
    EXPECT_EQ(Run({cmd, "s", "a"}), kWrongType) << cmd;
  }
  EXPECT_EQ(Run({"zcard", "s"}), kWrongType);
}

// ---- ZRANGE family ----------------------------------------------------------------------------

TEST_F(ZsetTest, RangeByRankAndScore) {
  Run({"zadd", "z", "1", "a", "2", "b", "3", "c", "4", "d"});
  EXPECT_EQ(Run({"zrange", "z", "1", "-2"}), Bulks({"b", "c"}));
  EXPECT_EQ(Run({"zrange", "z", "0", "0", "rev", "withscores"}), Bulks({"d", "4"}));
  EXPECT_EQ(Run({"zrevrange", "z", "-100", "100"}), Bulks({"d", "c", "b", "a"}));
  EXPECT_EQ(Run({"zrange", "z", "3", "1"}), kEmptyArray);
  EXPECT_EQ(Run({"zrange", "none", "0", "-1"}), kEmptyArray);
  EXPECT_EQ(Run({"zrange", "z", "(1", "3", "byscore"}), Bulks({"b", "c"}));
  EXPECT_EQ(Run({"zrange", "z", "3", "(1", "byscore", "rev"}), Bulks({"c", "b"}));
  EXPECT_EQ(Run({"zrangebyscore", "z", "-inf", "+inf", "limit", "1", "2"}), Bulks({"b", "c"}));
  EXPECT_EQ(Run({"zrangebyscore", "z", "-inf", "+inf", "limit", "1", "-1"}),
            Bulks({"b", "c", "d"}));
  EXPECT_EQ(Run({"zrangebyscore", "z", "-inf", "+inf", "limit", "-1", "2"}), kEmptyArray);
  EXPECT_EQ(Run({"zrevrangebyscore", "z", "+inf", "2", "withscores", "limit", "0", "1"}),
            Bulks({"d", "4"}));
  // strtod rules: "" and "(" are 0, leading spaces pass, 1e400 is inf.
  EXPECT_EQ(Run({"zrangebyscore", "z", " 1", "1e400"}), Bulks({"a", "b", "c", "d"}));
  EXPECT_EQ(Run({"zrangebyscore", "z", "", "("}), kEmptyArray);
  EXPECT_EQ(Run({"zrangebyscore", "z", "1 ", "2"}), kNotFloatRange);
  EXPECT_EQ(Run({"zrangebyscore", "z", "nan", "2"}), kNotFloatRange);
  EXPECT_EQ(Run({"zrangebyscore", "z", "[1", "2"}), kNotFloatRange);
}

TEST_F(ZsetTest, RangeWithScoresShapes) {
  Run({"zadd", "z", "1", "a", "2.5", "b"});
  EXPECT_EQ(Run({"zrange", "z", "0", "-1", "withscores"}), Bulks({"a", "1", "b", "2.5"}));
  r.session.resp = 3;
  EXPECT_EQ(Run({"zrange", "z", "0", "-1", "withscores"}),
            Arr(2) + Arr(2) + Bulk("a") + Dbl("1") + Arr(2) + Bulk("b") + Dbl("2.5"));
  EXPECT_EQ(Run({"zrange", "z", "0", "-1"}), Bulks({"a", "b"}));
  EXPECT_EQ(Run({"zrange", "none", "0", "-1", "withscores"}), kEmptyArray);
}

TEST_F(ZsetTest, RangeOptionErrors) {
  Run({"zadd", "z", "1", "a"});
  EXPECT_EQ(Run({"zrange", "z", "0", "1", "limit", "0", "1"}),
            Err("syntax error, LIMIT is only supported in combination with either BYSCORE or "
                "BYLEX"));
  EXPECT_EQ(Run({"zrange", "z", "-", "+", "bylex", "withscores"}),
            Err("syntax error, WITHSCORES not supported in combination with BYLEX"));
  EXPECT_EQ(Run({"zrange", "z", "0", "1", "byscore", "bylex"}), kSyntax);
  EXPECT_EQ(Run({"zrangebyscore", "z", "0", "1", "byscore"}), kSyntax);
  EXPECT_EQ(Run({"zrevrange", "z", "0", "1", "rev"}), kSyntax);
  EXPECT_EQ(Run({"zrange", "z", "0", "1", "limit", "0"}), kSyntax);
  EXPECT_EQ(Run({"zrange", "z", "0", "x"}), kNotInt);
  EXPECT_EQ(Run({"zrangebyscore", "z", "0", "1", "limit", "x", "1"}), kNotInt);
  // Options are checked before the key's type.
  r.Run({"set", "s", "v"});
  EXPECT_EQ(Run({"zrange", "s", "0", "x"}), kNotInt);
  EXPECT_EQ(Run({"zrange", "s", "0", "1"}), kWrongType);
}

TEST_F(ZsetTest, LexRanges) {
  Run({"zadd", "z", "0", "a", "0", "b", "0", "bb", "0", "c"});
  EXPECT_EQ(Run({"zrangebylex", "z", "-", "+"}), Bulks({"a", "b", "bb", "c"}));
  EXPECT_EQ(Run({"zrangebylex", "z", "[b", "(c"}), Bulks({"b", "bb"}));
  EXPECT_EQ(Run({"zrevrangebylex", "z", "+", "(b", "limit", "1", "5"}), Bulks({"bb"}));
  EXPECT_EQ(Run({"zrange", "z", "+", "-", "bylex"}), kEmptyArray);
  EXPECT_EQ(Run({"zlexcount", "z", "[b", "+"}), Int(3));
  EXPECT_EQ(Run({"zlexcount", "z", "+", "-"}), Int(0));
  for (const char* bad : {"b", "", "+x", "-x"}) {
    EXPECT_EQ(Run({"zrangebylex", "z", bad, "+"}), kBadLex) << bad;
  }
  EXPECT_EQ(Run({"zlexcount", "z", "[a", "c"}), kBadLex);
  EXPECT_EQ(Run({"zrangebylex", "z", std::string("+\0x", 3), "+"}), kEmptyArray);
}

// Over members of different scores a listpack answers as Redis' linear walks do.
TEST_F(ZsetTest, LexRangesOverMixedScoresInAListpack) {
  Run({"zadd", "mx", "1", "b", "2", "a", "3", "c"});
  EXPECT_EQ(Run({"zrangebylex", "mx", "[a", "[b"}), Bulks({"b", "a"}));
  EXPECT_EQ(Run({"zlexcount", "mx", "[a", "[b"}), Int(2));
  EXPECT_EQ(Run({"zrevrangebylex", "mx", "[b", "[a"}), Bulks({"a", "b"}));
  EXPECT_EQ(Run({"zremrangebylex", "mx", "[a", "[b"}), Int(2));
  EXPECT_EQ(Run({"zrange", "mx", "0", "-1"}), Bulks({"c"}));
}

TEST_F(ZsetTest, Zcount) {
  Run({"zadd", "z", "1", "a", "2", "b", "2", "c", "3", "d"});
  EXPECT_EQ(Run({"zcount", "z", "-inf", "+inf"}), Int(4));
  EXPECT_EQ(Run({"zcount", "z", "(1", "2"}), Int(2));
  EXPECT_EQ(Run({"zcount", "z", "3", "1"}), Int(0));
  EXPECT_EQ(Run({"zcount", "none", "0", "1"}), Int(0));
  EXPECT_EQ(Run({"zcount", "z", "a", "1"}), kNotFloatRange);
}

// ---- Removals ---------------------------------------------------------------------------------

TEST_F(ZsetTest, ZremDeletesEmptiedKeys) {
  Run({"zadd", "z", "1", "a", "2", "b"});
  TakeEvents();
  EXPECT_EQ(Run({"zrem", "z", "a", "x"}), Int(1));
  EXPECT_EQ(TakeEvents(), (Events{{"zrem", "z"}}));
  EXPECT_EQ(Run({"zrem", "z", "x"}), Int(0));
  EXPECT_TRUE(TakeEvents().empty());
  EXPECT_EQ(Run({"zrem", "z", "b", "b"}), Int(1));
  EXPECT_EQ(TakeEvents(), (Events{{"zrem", "z"}, {"del", "z"}}));
  EXPECT_EQ(Run({"exists", "z"}), Int(0));
  EXPECT_EQ(Run({"zrem", "z", "b"}), Int(0));
}

TEST_F(ZsetTest, RemoveRanges) {
  Run({"zadd", "z", "1", "a", "2", "b", "3", "c", "4", "d", "5", "e"});
  TakeEvents();
  EXPECT_EQ(Run({"zremrangebyrank", "z", "-1", "-1"}), Int(1));
  EXPECT_EQ(TakeEvents(), (Events{{"zremrangebyrank", "z"}}));
  EXPECT_EQ(Run({"zremrangebyrank", "z", "5", "10"}), Int(0));
  EXPECT_EQ(Run({"zremrangebyscore", "z", "(1", "2"}), Int(1));
  EXPECT_EQ(Run({"zremrangebylex", "z", "[c", "[c"}), Int(1));
  EXPECT_EQ(Run({"zrange", "z", "0", "-1"}), Bulks({"a", "d"}));
  TakeEvents();
  EXPECT_EQ(Run({"zremrangebyscore", "z", "-inf", "inf"}), Int(2));
  EXPECT_EQ(TakeEvents(), (Events{{"zremrangebyscore", "z"}, {"del", "z"}}));
  EXPECT_EQ(Run({"zremrangebyrank", "z", "x", "1"}), kNotInt);
  EXPECT_EQ(Run({"zremrangebyscore", "z", "x", "1"}), kNotFloatRange);
  EXPECT_EQ(Run({"zremrangebylex", "z", "x", "1"}), kBadLex);
  EXPECT_EQ(Run({"zremrangebyrank", "z", "0", "1"}), Int(0));
}

// ---- Pops ----------------------------------------------------------------------------------

TEST_F(ZsetTest, PopShapes) {
  Run({"zadd", "z", "1", "a", "2", "b", "3", "c", "4", "d"});
  TakeEvents();
  EXPECT_EQ(Run({"zpopmin", "z"}), Bulks({"a", "1"}));
  EXPECT_EQ(TakeEvents(), (Events{{"zpopmin", "z"}}));
  EXPECT_EQ(Run({"zpopmax", "z", "2"}), Bulks({"d", "4", "c", "3"}));
  EXPECT_EQ(Run({"zpopmin", "z", "0"}), kEmptyArray);
  r.session.resp = 3;
  Run({"zadd", "z", "5", "e"});
  EXPECT_EQ(Run({"zpopmax", "z"}), Arr(2) + Bulk("e") + Dbl("5"));  // flat without COUNT
  TakeEvents();
  EXPECT_EQ(Run({"zpopmin", "z", "5"}), Arr(1) + Arr(2) + Bulk("b") + Dbl("2"));
  EXPECT_EQ(TakeEvents(), (Events{{"zpopmin", "z"}, {"del", "z"}}));
  EXPECT_EQ(Run({"zpopmin", "z"}), kEmptyArray);
  EXPECT_EQ(Run({"zpopmin", "z", "-1"}), Err("value is out of range, must be positive"));
  EXPECT_EQ(Run({"zpopmin", "z", "x"}), Err("value is out of range, must be positive"));
  EXPECT_EQ(Run({"zpopmin", "z", "1", "2"}), kSyntax);
}

TEST_F(ZsetTest, ZmpopAndItsPropagation) {
  Run({"zadd", "z", "1", "a", "2", "b", "3", "c"});
  EXPECT_EQ(Run({"zmpop", "2", "none", "z", "max", "count", "5"}),
            Arr(2) + Bulk("z") + Arr(3) + Arr(2) + Bulk("c") + Bulk("3") + Arr(2) + Bulk("b") +
                Bulk("2") + Arr(2) + Bulk("a") + Bulk("1"));
  EXPECT_EQ(r.last_propagated(), (Argv{"ZPOPMAX", "z", "3"}));
  EXPECT_EQ(Run({"zmpop", "1", "z", "min"}), kNullArray);
  EXPECT_TRUE(r.last_propagated().empty());
  r.session.resp = 3;
  EXPECT_EQ(Run({"zmpop", "1", "z", "min"}), kNull3);
  Run({"zadd", "z", "1", "a"});
  EXPECT_EQ(Run({"zmpop", "1", "z", "min"}),
            Arr(2) + Bulk("z") + Arr(1) + Arr(2) + Bulk("a") + Dbl("1"));
  EXPECT_EQ(r.last_propagated(), (Argv{"ZPOPMIN", "z", "1"}));
  const std::string numkeys = Err("numkeys should be greater than 0");
  EXPECT_EQ(Run({"zmpop", "0", "z", "min"}), numkeys);
  EXPECT_EQ(Run({"zmpop", "x", "z", "min"}), numkeys);
  EXPECT_EQ(Run({"zmpop", "2", "z", "min"}), kSyntax);
  EXPECT_EQ(Run({"zmpop", "9223372036854775807", "z", "min"}), kSyntax);
  EXPECT_EQ(Run({"zmpop", "1", "z", "mid"}), kSyntax);
  EXPECT_EQ(Run({"zmpop", "1", "z", "min", "count", "0"}), Err("count should be greater than 0"));
  EXPECT_EQ(Run({"zmpop", "1", "z", "min", "count", "1", "count", "1"}), kSyntax);
  r.Run({"set", "s", "v"});
  EXPECT_EQ(Run({"zmpop", "2", "none", "s", "min"}), kWrongType);
}

// The blocking pops are built on ZsetPop; its BZPOPMIN shape has the key first, pairs flat.
TEST_F(ZsetTest, ZsetPopForBlockingCallers) {
  Run({"zadd", "z", "1", "a", "2", "b"});
  std::string out;
  resp::ReplyWriter w(&out, 2);
  std::vector<std::string_view> keys = {"none", "z"};
  Context ctx(std::span<const std::string_view>(), w, r.ks, r.session, r.hooks, r.stats, 0);
  ZPopResult res = ZsetPop(ctx, keys, false, -1, ZPopShape{.emit_key = true});
  EXPECT_EQ(out, Bulks({"z", "b", "2"}));
  EXPECT_EQ(res.key_index, 1);
  EXPECT_EQ(res.popped, 1);
  EXPECT_FALSE(res.deleted);
  out.clear();
  res = ZsetPop(ctx, keys, true, 10, ZPopShape{.emit_key = true});
  EXPECT_EQ(out, Bulks({"z", "a", "1"}));
  EXPECT_TRUE(res.deleted);
  out.clear();
  res = ZsetPop(ctx, keys, true, 1, ZPopShape{.emit_key = true, .nil_when_empty = true});
  EXPECT_EQ(out, kNullArray);
  EXPECT_EQ(res.key_index, -1);
}

// ---- ZUNION ZINTER ZDIFF ----------------------------------------------------------------------

TEST_F(ZsetTest, SetOperations) {
  Run({"zadd", "z1", "1", "a", "2", "b", "3", "c"});
  Run({"zadd", "z2", "10", "b", "20", "c", "30", "d"});
  AddSet("s", {"c", "d", "e"});
  EXPECT_EQ(Run({"zunion", "2", "z1", "z2", "withscores"}),
            Bulks({"a", "1", "b", "12", "c", "23", "d", "30"}));
  EXPECT_EQ(Run({"zinter", "3", "z1", "z2", "s", "withscores"}), Bulks({"c", "24"}));
  EXPECT_EQ(
      Run({"zinter", "2", "z1", "z2", "weights", "2", "0.5", "aggregate", "max", "withscores"}),
      Bulks({"b", "5", "c", "10"}));
  EXPECT_EQ(Run({"zunion", "2", "z1", "s", "aggregate", "min", "withscores"}),
            Bulks({"a", "1", "c", "1", "d", "1", "e", "1", "b", "2"}));
  EXPECT_EQ(Run({"zdiff", "3", "z1", "z2", "none", "withscores"}), Bulks({"a", "1"}));
  EXPECT_EQ(Run({"zdiff", "2", "s", "z1"}), Bulks({"d", "e"}));
  EXPECT_EQ(Run({"zdiff", "2", "z1", "z1"}), kEmptyArray);
  EXPECT_EQ(Run({"zinter", "2", "z1", "none"}), kEmptyArray);
  EXPECT_EQ(Run({"zintercard", "2", "z1", "z2"}), Int(2));
  EXPECT_EQ(Run({"zintercard", "2", "z1", "z2", "limit", "1"}), Int(1));
  EXPECT_EQ(Run({"zintercard", "2", "z1", "z2", "limit", "0"}), Int(2));
  r.session.resp = 3;
  EXPECT_EQ(Run({"zinter", "2", "z1", "z2", "withscores"}),
            Arr(2) + Arr(2) + Bulk("b") + Dbl("12") + Arr(2) + Bulk("c") + Dbl("23"));
}

// inf + -inf and 0 * inf are 0 in Redis' aggregation, never NaN.
TEST_F(ZsetTest, SetOperationsAvoidNaN) {
  Run({"zadd", "p", "inf", "a"});
  Run({"zadd", "n", "-inf", "a"});
  EXPECT_EQ(Run({"zunion", "2", "p", "n", "withscores"}), Bulks({"a", "0"}));
  EXPECT_EQ(Run({"zunion", "1", "p", "weights", "0", "withscores"}), Bulks({"a", "0"}));
  EXPECT_EQ(Run({"zinter", "2", "p", "p", "weights", "1", "-1", "withscores"}), Bulks({"a", "0"}));
}

TEST_F(ZsetTest, SetOperationErrors) {
  Run({"zadd", "z", "1", "a"});
  EXPECT_EQ(Run({"zunion", "0", "z"}), Err("at least 1 input key is needed for 'zunion' command"));
  EXPECT_EQ(Run({"zunionstore", "d", "-1", "z"}),
            Err("at least 1 input key is needed for 'zunionstore' command"));
  EXPECT_EQ(Run({"zintercard", "0", "z"}),
            Err("at least 1 input key is needed for 'zintercard' command"));
  EXPECT_EQ(Run({"zunion", "x", "z"}), kNotInt);
  EXPECT_EQ(Run({"zunion", "3", "z", "z"}), kSyntax);
  EXPECT_EQ(Run({"zunion", "2", "z", "z", "weights", "1", "x"}),
            Err("weight value is not a float"));
  EXPECT_EQ(Run({"zunion", "2", "z", "z", "weights", "1"}), kSyntax);
  EXPECT_EQ(Run({"zunion", "1", "z", "aggregate", "avg"}), kSyntax);
  EXPECT_EQ(Run({"zdiff", "1", "z", "weights", "1"}), kSyntax);
  EXPECT_EQ(Run({"zunionstore", "d", "1", "z", "withscores"}), kSyntax);
  EXPECT_EQ(Run({"zintercard", "1", "z", "withscores"}), kSyntax);
  EXPECT_EQ(Run({"zintercard", "1", "z", "limit", "-1"}), Err("LIMIT can't be negative"));
  r.Run({"set", "s", "v"});
  EXPECT_EQ(Run({"zunion", "2", "z", "s"}), kWrongType);
  EXPECT_EQ(Run({"zunion", "2", "s", "z", "weights", "x", "y"}), kWrongType);  // keys first
}

TEST_F(ZsetTest, StoreFormsReplaceOrDeleteTheDestination) {
  Run({"zadd", "z1", "1", "a", "2", "b"});
  Run({"zadd", "z2", "5", "b"});
  r.Run({"set", "d", "old", "ex", "100"});
  TakeEvents();
  EXPECT_EQ(Run({"zunionstore", "d", "2", "z1", "z2"}), Int(2));
  EXPECT_EQ(TakeEvents(), (Events{{"zunionstore", "d"}}));
  EXPECT_EQ(Run({"ttl", "d"}), Int(-1));
  EXPECT_EQ(Run({"zrange", "d", "0", "-1", "withscores"}), Bulks({"a", "1", "b", "7"}));
  EXPECT_EQ(Run({"zinterstore", "d", "2", "z1", "z2", "aggregate", "min"}), Int(1));
  EXPECT_EQ(Run({"zrange", "d", "0", "-1", "withscores"}), Bulks({"b", "2"}));
  TakeEvents();
  EXPECT_EQ(Run({"zdiffstore", "d", "2", "z1", "z1"}), Int(0));
  EXPECT_EQ(TakeEvents(), (Events{{"del", "d"}}));
  EXPECT_EQ(r.last_propagated(), (Argv{"zdiffstore", "d", "2", "z1", "z1"}));
  EXPECT_EQ(Run({"zdiffstore", "d", "2", "z1", "z1"}), Int(0));
  EXPECT_TRUE(r.last_propagated().empty());  // nothing changed
  // A destination that is also a source is read before it is replaced.
  EXPECT_EQ(Run({"zunionstore", "z1", "2", "z1", "z2", "weights", "2", "1"}), Int(2));
  EXPECT_EQ(Run({"zrange", "z1", "0", "-1", "withscores"}), Bulks({"a", "2", "b", "9"}));
}

TEST_F(ZsetTest, StoredResultsTakeTheEncodingTheyFit) {
  r.ks.limits().zset_max_listpack_entries = 2;
  Run({"zadd", "big", "1", "a", "2", "b", "3", "c"});
  EXPECT_EQ(Encoding("big"), Bulk("skiplist"));
  EXPECT_EQ(Run({"zunionstore", "d", "1", "big"}), Int(3));
  EXPECT_EQ(Encoding("d"), Bulk("skiplist"));
  EXPECT_EQ(Run({"zinterstore", "d", "1", "big", "weights", "1"}), Int(3));
  EXPECT_EQ(Run({"zremrangebyrank", "big", "0", "0"}), Int(1));
  EXPECT_EQ(Encoding("big"), Bulk("skiplist"));  // removals never convert back
  EXPECT_EQ(Run({"zdiffstore", "d", "1", "big"}), Int(2));
  EXPECT_EQ(Encoding("d"), Bulk("listpack"));  // a result that fits is a listpack
  EXPECT_EQ(Run({"zrangestore", "d", "big", "0", "-1"}), Int(2));
  EXPECT_EQ(Encoding("d"), Bulk("listpack"));
}

// ---- ZRANGESTORE ----------------------------------------------------------------------------

TEST_F(ZsetTest, Zrangestore) {
  Run({"zadd", "z", "1", "a", "2", "b", "3", "c"});
  TakeEvents();
  // REV takes the range as <max> <min>.
  EXPECT_EQ(Run({"zrangestore", "d", "z", "(1", "+inf", "byscore", "rev"}), Int(0));
  EXPECT_EQ(Run({"zrangestore", "d", "z", "+inf", "(1", "byscore", "rev", "limit", "0", "1"}),
            Int(1));
  EXPECT_EQ(TakeEvents(), (Events{{"new", "d"}, {"zrangestore", "d"}}));
  EXPECT_EQ(Run({"zrange", "d", "0", "-1", "withscores"}), Bulks({"c", "3"}));
  EXPECT_EQ(Run({"zrangestore", "d", "z", "[a", "[b", "bylex"}), Int(2));
  EXPECT_EQ(Run({"zrange", "d", "0", "-1", "withscores"}), Bulks({"a", "1", "b", "2"}));
  EXPECT_EQ(Run({"zrangestore", "d", "z", "0", "-1", "withscores"}), kSyntax);
  TakeEvents();
  EXPECT_EQ(Run({"zrangestore", "d", "none", "0", "-1"}), Int(0));
  EXPECT_EQ(TakeEvents(), (Events{{"keymiss", "none"}, {"del", "d"}}));
  EXPECT_EQ(Run({"exists", "d"}), Int(0));
}

// ---- ZRANDMEMBER ZSCAN ----------------------------------------------------------------------

TEST_F(ZsetTest, Zrandmember) {
  Run({"zadd", "z", "1", "a", "2", "b", "3", "c"});
  std::string one = Run({"zrandmember", "z"});
  EXPECT_TRUE(one == Bulk("a") || one == Bulk("b") || one == Bulk("c")) << one;
  EXPECT_EQ(Run({"zrandmember", "none"}), kNull);
  EXPECT_EQ(Run({"zrandmember", "none", "3"}), kEmptyArray);
  EXPECT_EQ(Run({"zrandmember", "z", "0"}), kEmptyArray);
  // A count covering the set answers all of it, from the highest rank down.
  EXPECT_EQ(Run({"zrandmember", "z", "10", "withscores"}), Bulks({"c", "3", "b", "2", "a", "1"}));
  std::string dup = Run({"zrandmember", "z", "-5"});
  EXPECT_EQ(dup.substr(0, 4), Arr(5));
  std::string two = Run({"zrandmember", "z", "2"});
  EXPECT_EQ(two.substr(0, 4), Arr(2));
  EXPECT_EQ(std::count(two.begin(), two.end(), '$'), 2);
  r.session.resp = 3;
  std::string pairs = Run({"zrandmember", "z", "-2", "withscores"});
  EXPECT_EQ(pairs.substr(0, 8), Arr(2) + Arr(2));
  EXPECT_EQ(std::count(pairs.begin(), pairs.end(), ','), 2);
  EXPECT_EQ(Run({"zrandmember", "z", "-9223372036854775808"}),
            Err("value is out of range, value must between -9223372036854775807 and "
                "9223372036854775807"));
  EXPECT_EQ(Run({"zrandmember", "z", "-4611686018427387904", "withscores"}),
            Err("value is out of range"));
  EXPECT_EQ(Run({"zrandmember", "z", "1", "foo"}), kSyntax);
  EXPECT_EQ(Run({"zrandmember", "z", "x"}), kNotInt);
}

TEST_F(ZsetTest, ZscanListpackAnswersAtOnce) {
  Run({"zadd", "z", "1", "a", "2.5", "b", "-0", "c", "3", "ab"});
  EXPECT_EQ(Run({"zscan", "z", "0"}),
            Arr(2) + Bulk("0") + Bulks({"c", "0", "a", "1", "b", "2.5", "ab", "3"}));
  EXPECT_EQ(Run({"zscan", "z", "0", "match", "a*", "count", "1"}),
            Arr(2) + Bulk("0") + Bulks({"a", "1", "ab", "3"}));
  EXPECT_EQ(Run({"zscan", "z", "0", "match", ""}), Arr(2) + Bulk("0") + kEmptyArray);
  EXPECT_EQ(Run({"zscan", "z", ""}), Run({"zscan", "z", "0"}));
  EXPECT_EQ(Run({"zscan", "z", "0", "count", "0"}), kSyntax);
  EXPECT_EQ(Run({"zscan", "z", "0", "type", "string"}), kSyntax);
  EXPECT_EQ(Run({"zscan", "z", "x"}), Err("invalid cursor"));
  // A missing key answers before the options are looked at.
  EXPECT_EQ(Run({"zscan", "none", "0", "count", "0"}), Arr(2) + Bulk("0") + kEmptyArray);
}

TEST_F(ZsetTest, ZscanSkiplistVisitsEveryMember) {
  Argv add{"zadd", "z"};
  for (int i = 0; i < 300; i++) {
    add.insert(add.end(), {std::to_string(i), "m" + std::to_string(i)});
  }
  Run(add);
  EXPECT_EQ(Encoding("z"), Bulk("skiplist"));
  std::set<std::string> seen;
  std::string cursor = "0";
  int calls = 0;
  do {
    std::string out = Run({"zscan", "z", cursor, "count", "20"});
    // *2 $<n> cursor *<2k> then member/score bulks.
    size_t p = out.find("\r\n", 4);
    cursor = out.substr(p + 2, out.find("\r\n", p + 2) - p - 2);
    for (size_t at = out.find("$", p + 2); at != std::string::npos; at = out.find("$", at)) {
      size_t len_end = out.find("\r\n", at);
      size_t len = std::stoul(out.substr(at + 1, len_end - at - 1));
      std::string item = out.substr(len_end + 2, len);
      if (item[0] == 'm') seen.insert(item);
      at = len_end + 2 + len;
    }
    calls++;
  } while (cursor != "0" && calls < 1000);
  EXPECT_EQ(seen.size(), 300u);
  EXPECT_GT(calls, 2);
}

// ---- Encodings --------------------------------------------------------------------------------

TEST_F(ZsetTest, EncodingFollowsRedis) {
  Run({"zadd", "z", "1", "a"});
  EXPECT_EQ(Encoding("z"), Bulk("listpack"));
  Run({"zadd", "z", "1", std::string(65, 'x')});
  EXPECT_EQ(Encoding("z"), Bulk("skiplist"));
  // A new key's encoding depends on its first member only.
  Run({"zadd", "long", "1", std::string(65, 'x')});
  EXPECT_EQ(Encoding("long"), Bulk("skiplist"));
  Run({"zadd", "short", "1", "a", "2", std::string(65, 'x')});
  EXPECT_EQ(Encoding("short"), Bulk("skiplist"));
  r.ks.limits().zset_max_listpack_entries = 0;
  Run({"zadd", "zero", "1", "a"});
  EXPECT_EQ(Encoding("zero"), Bulk("skiplist"));
}

// A listpack stores -0 as 0; a skiplist keeps it.
TEST_F(ZsetTest, NegativeZero) {
  Run({"zadd", "lp", "-0", "m"});
  EXPECT_EQ(Run({"zscore", "lp", "m"}), Bulk("0"));
  Run({"zadd", "sl", "-0", std::string(65, 'x')});
  EXPECT_EQ(Run({"zscore", "sl", std::string(65, 'x')}), Bulk("-0"));
}

TEST_F(ZsetTest, SkiplistCommandsMatchListpackOnes) {
  Argv add{"zadd", "z"};
  for (int i = 0; i < 200; i++) {
    add.insert(add.end(), {std::to_string(i % 50), "m" + std::to_string(i)});
  }
  Run(add);
  EXPECT_EQ(Encoding("z"), Bulk("skiplist"));
  EXPECT_EQ(Run({"zcount", "z", "(10", "20"}), Int(40));
  EXPECT_EQ(Run({"zrank", "z", "m0"}), Int(0));
  EXPECT_EQ(Run({"zrank", "z", "m100"}), Int(1));  // score 0: m0, m100, m150, m50
  EXPECT_EQ(Run({"zrangebyscore", "z", "49", "+inf", "limit", "1", "2"}), Bulks({"m199", "m49"}));
  EXPECT_EQ(Run({"zremrangebyscore", "z", "-inf", "(49"}), Int(196));
  EXPECT_EQ(Run({"zrange", "z", "0", "-1"}), Bulks({"m149", "m199", "m49", "m99"}));
  EXPECT_EQ(Run({"zpopmax", "z", "3"}), Bulks({"m99", "49", "m49", "49", "m199", "49"}));
  EXPECT_EQ(Encoding("z"), Bulk("skiplist"));
}

}  // namespace
}  // namespace kv::cmd
