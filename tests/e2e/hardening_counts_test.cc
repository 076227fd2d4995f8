// The command-level advisories of Redis (2021-2025) that are about counts and limits: list indexes,
// SORT LIMIT, random members, streams, range/scan/search counts and the key finders, each compared
// with redis-server as hardening_cmds_test.cc describes (shared: hardening_cmds_util.h).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/e2e/hardening_cmds_util.h"

namespace kv::test::hardening {
namespace {

TEST_F(HardeningCmds, ListIndexesAndCountsAtTheInt64Edges) {
  const std::string m1 = "-9223372036854775807";
  std::vector<Cmd> cmds = {
      {"RPUSH", "l", "a", "b", "c", "a", "b", "a"},
      {"LSET", "l", kI64Max, "x"},
      {"LSET", "l", kI64Min, "x"},
      {"LSET", "l", m1, "x"},
      {"LSET", "l", "-6", "z"},
      {"LINDEX", "l", kI64Max},
      {"LINDEX", "l", kI64Min},
      {"LINSERT", "l", "BEFORE", "zz", "q"},
      {"LREM", "l", kI64Min, "zz"},
      {"LREM", "l", kI64Max, "zz"},
  };
  for (const auto& [a, b] : std::vector<std::pair<std::string, std::string>>{{kI64Min, kI64Max},
                                                                             {kI64Max, kI64Min},
                                                                             {kI64Min, kI64Min},
                                                                             {kI64Max, kI64Max},
                                                                             {"-2", kI64Max},
                                                                             {m1, "-1"},
                                                                             {"1", kI64Max},
                                                                             {"-1", m1}}) {
    cmds.push_back({"LRANGE", "l", a, b});
    cmds.push_back({"RPUSH", "t", "1", "2", "3", "4", "5"});
    cmds.push_back({"LTRIM", "t", a, b});
    cmds.push_back({"LRANGE", "t", "0", "-1"});
    cmds.push_back({"DEL", "t"});
  }
  for (const Cmd& opts : std::vector<Cmd>{{"RANK", kI64Min},
                                          {"RANK", m1},
                                          {"RANK", kI64Max},
                                          {"RANK", "0"},
                                          {"RANK", "-1", "COUNT", kI64Max},
                                          {"COUNT", kI64Max},
                                          {"COUNT", kI64Min},
                                          {"COUNT", "-1"},
                                          {"MAXLEN", kI64Max},
                                          {"MAXLEN", kI64Min},
                                          {"COUNT", "0", "MAXLEN", kI64Max},
                                          {"RANK", m1, "COUNT", "0", "MAXLEN", "1"}}) {
    Cmd c = {"LPOS", "l", "a"};
    c.insert(c.end(), opts.begin(), opts.end());
    cmds.push_back(c);
  }
  for (const std::string& n : {kI64Max, kI64Min, std::string("-1"), std::string("0")}) {
    cmds.push_back({"RPUSH", "p", "1", "2", "3"});
    cmds.push_back({"LPOP", "p", n});
    cmds.push_back({"RPOP", "p", n});
    cmds.push_back({"LMPOP", "1", "p", "LEFT", "COUNT", n});
    cmds.push_back({"LMPOP", n, "p", "RIGHT"});
    cmds.push_back({"BLMPOP", "0.01", "1", "p", "LEFT", "COUNT", n});
    cmds.push_back({"RPOP", "nolist", n});
  }
  for (auto& cp : configs()) Same(*cp, cmds);
}

// ---- CVE-2022-35977: SORT LIMIT offset + count overflow ----------------------------------------

TEST_F(HardeningCmds, SortLimitNearInt64MaxMatchesRedis) {
  std::vector<Cmd> cmds = {{"RPUSH", "sl", "3", "1", "2"},
                           {"RPUSH", "sx", "b", "a", "c"},
                           {"ZADD", "sz", "1", "a", "2", "b", "3", "c"},
                           {"SADD", "ss", "5", "4", "6"}};
  const std::vector<std::pair<std::string, std::string>> limits = {{kI64Max, kI64Max},
                                                                   {kI64Min, kI64Min},
                                                                   {"0", kI64Max},
                                                                   {kI64Max, "1"},
                                                                   {"1", kI64Min},
                                                                   {"-1", "2"},
                                                                   {kI64Min, kI64Max},
                                                                   {"0", "-1"},
                                                                   {"9223372036854775806", "2"},
                                                                   {"1", "9223372036854775806"}};
  for (const auto& [off, count] : limits) {
    for (const char* key : {"sl", "sz", "ss"}) {
      cmds.push_back({"SORT", key, "LIMIT", off, count});
      cmds.push_back({"SORT", key, "BY", "nosort", "LIMIT", off, count});
      cmds.push_back({"SORT", key, "BY", "nosort", "DESC", "LIMIT", off, count});
      cmds.push_back({"SORT_RO", key, "LIMIT", off, count});
    }
    cmds.push_back({"SORT", "sx", "ALPHA", "LIMIT", off, count, "STORE", "dst"});
    cmds.push_back({"LRANGE", "dst", "0", "-1"});
  }
  for (auto& cp : configs()) Same(*cp, cmds);
}

// ---- CVE-2023-22458, CVE-2023-25155: SRANDMEMBER HRANDFIELD ZRANDMEMBER counts -------------

TEST_F(HardeningCmds, RandomMemberCountsAreBounded) {
  // One member each, so that every reply is deterministic.
  std::vector<Cmd> cmds = {
      {"SADD", "s", "a"}, {"HSET", "h", "a", "1"}, {"ZADD", "z", "1", "a"}, {"SET", "str", "x"}};
  const std::vector<std::string> counts = {kI64Min,
                                           "-9223372036854775807",
                                           "-4611686018427387904",
                                           "-4611686018427387903",
                                           "-100000",
                                           "-3",
                                           "0",
                                           "1",
                                           "4611686018427387903",
                                           "4611686018427387904",
                                           kI64Max};
  for (const std::string& n : counts) {
    for (const char* key : {"nokey", "str"}) {  // a missing key is empty whatever the count
      cmds.push_back({"SRANDMEMBER", key, n});
      cmds.push_back({"HRANDFIELD", key, n});
      cmds.push_back({"HRANDFIELD", key, n, "WITHVALUES"});
      cmds.push_back({"ZRANDMEMBER", key, n});
      cmds.push_back({"ZRANDMEMBER", key, n, "WITHSCORES"});
    }
  }
  // Counts redis-server answers: the range errors, the doubled counts that would overflow
  // (CVE-2023-25155), positive counts, and negative ones it can build.
  for (const std::string& n : {kI64Min, std::string("-100000"), std::string("-3"), std::string("0"),
                               std::string("4611686018427387903"), kI64Max}) {
    cmds.push_back({"SRANDMEMBER", "s", n});
    cmds.push_back({"HRANDFIELD", "h", n});
    cmds.push_back({"ZRANDMEMBER", "z", n});
  }
  for (const std::string& n :
       {kI64Min, std::string("-9223372036854775807"), std::string("-4611686018427387904"),
        std::string("-100000"), std::string("-3"), std::string("4611686018427387903"),
        std::string("4611686018427387904"), kI64Max}) {
    cmds.push_back({"HRANDFIELD", "h", n, "WITHVALUES"});
    cmds.push_back({"ZRANDMEMBER", "z", n, "WITHSCORES"});
  }
  cmds.push_back({"SPOP", "s", kI64Min});
  cmds.push_back({"SPOP", "s", kI64Max});
  for (auto& cp : configs()) Same(*cp, cmds);
  // Negative counts redis-server would answer with up to 2^63 members (it never finishes and
  // runs out of memory): kvstore answers at most 2^27 of them.
  const std::string below = "-ERR value is out of range, value must between -134217728 and ";
  for (auto& cp : configs()) {
    Config& c = *cp;
    Same(c, {{"SADD", "s", "a"}});
    for (const std::string& n :
         {std::string("-9223372036854775807"), std::string("-4611686018427387904"),
          std::string("-4611686018427387903"), std::string("-134217729")}) {
      Expect(c, {"SRANDMEMBER", "s", n}, below + "9223372036854775807\r\n");
      Expect(c, {"HRANDFIELD", "h", n}, below + "9223372036854775807\r\n");
      Expect(c, {"ZRANDMEMBER", "z", n}, below + "9223372036854775807\r\n");
    }
    for (const std::string& n : {std::string("-4611686018427387903"), std::string("-134217729")}) {
      Expect(c, {"HRANDFIELD", "h", n, "WITHVALUES"}, below + "4611686018427387903\r\n");
      Expect(c, {"ZRANDMEMBER", "z", n, "WITHSCORES"}, below + "4611686018427387903\r\n");
    }
  }
}

// ---- CVE-2022-35951: XAUTOCLAIM COUNT; stream counts, limits and IDs at their edges -------------

TEST_F(HardeningCmds, StreamCountsAndLimitsAtTheEdges) {
  const std::string u64 = "18446744073709551615";
  std::vector<Cmd> cmds = {
      {"XADD", "x", "1-1", "f", "v"},
      {"XADD", "x", "2-1", "f", "v"},
      {"XADD", "x", "3-1", "f", "v"},
      {"XGROUP", "CREATE", "x", "g", "0"},
      {"XREADGROUP", "GROUP", "g", "c", "STREAMS", "x", ">"},
  };
  // COUNT: above LONG_MAX / 16 a range error, below it redis-server allocates COUNT IDs first
  // and fails where that cannot be had (beyond the address space).
  for (const std::string& n :
       {kI64Max, std::string("576460752303423488"), std::string("576460752303423487"),
        std::string("0"), std::string("-1"), kI64Min, std::string("1"), std::string("100")}) {
    cmds.push_back({"XAUTOCLAIM", "x", "g", "c2", "0", "0", "COUNT", n});
    cmds.push_back({"XAUTOCLAIM", "x", "g", "c2", "0", "0", "COUNT", n, "JUSTID"});
    cmds.push_back({"XAUTOCLAIM", "nokey", "g", "c2", "0", "0", "COUNT", n});
  }
  for (const Cmd& c : std::vector<Cmd>{
           {"XAUTOCLAIM", "x", "g", "c2", kI64Max, "0"},
           {"XAUTOCLAIM", "x", "g", "c2", "-1", "0"},
           {"XAUTOCLAIM", "x", "g", "c2", "0", u64 + "-" + u64},
           {"XAUTOCLAIM", "x", "g", "c2", "0", "(" + u64 + "-" + u64},
           {"XCLAIM", "x", "g", "c2", kI64Max, "1-1"},
           {"XCLAIM", "x", "g", "c2", "0", "1-1", "IDLE", kI64Min, "JUSTID"},
           {"XCLAIM", "x", "g", "c2", "0", "1-1", "RETRYCOUNT", kI64Max, "JUSTID"},
           {"XCLAIM", "x", "g", "c2", "0", "1-1", "RETRYCOUNT", "-1"},
           {"XCLAIM", "x", "g", "c2", "0", "1-1", "TIME", kI64Min, "JUSTID"},
           {"XADD", "x", "MAXLEN", kI64Max, "4-1", "f", "v"},
           {"XADD", "x", "MAXLEN", "~", kI64Max, "5-1", "f", "v"},
           {"XADD", "x", "MAXLEN", "~", "0", "LIMIT", kI64Max, "6-1", "f", "v"},
           {"XADD", "x", "MAXLEN", "~", "0", "LIMIT", kI64Min, "7-1", "f", "v"},
           {"XADD", "x", "MAXLEN", "-1", "8-1", "f", "v"},
           {"XADD", "x", "MAXLEN", kI64Min, "8-1", "f", "v"},
           {"XADD", "x", "MAXLEN", "0", "LIMIT", "10", "8-1", "f", "v"},
           {"XADD", "x", "MAXLEN", "~", "1", "LIMIT", "1073741824", "9-1", "f", "v"},
           {"XADD", "x", u64 + "-" + u64, "f", "v"},
           {"XADD", "x", u64 + "-*", "f", "v"},
           {"XADD", "y", "18446744073709551614-*", "f", "v"},
           {"XTRIM", "x", "MAXLEN", kI64Max},
           {"XTRIM", "x", "MAXLEN", "~", "0", "LIMIT", kI64Max},
           {"XTRIM", "x", "MAXLEN", "-1"},
           {"XTRIM", "x", "MINID", "~", u64, "LIMIT", "0"},
           {"XRANGE", "x", "-", "+", "COUNT", kI64Max},
           {"XRANGE", "x", "-", "+", "COUNT", kI64Min},
           {"XREVRANGE", "x", "+", "-", "COUNT", kI64Max},
           {"XRANGE", "x", "(" + u64 + "-" + u64, "+"},
           {"XREAD", "COUNT", kI64Max, "STREAMS", "x", "0"},
           {"XREAD", "COUNT", kI64Min, "STREAMS", "x", "0"},
           {"XPENDING", "x", "g"},  // the summary: no idle times
           {"XPENDING", "x", "g", "-", "+", kI64Min},
           {"XPENDING", "x", "g", "IDLE", kI64Max, "-", "+", kI64Max},
           {"XSETID", "x", u64 + "-" + u64},
           {"XSETID", "x", "5-0", "ENTRIESADDED", kI64Max, "MAXDELETEDID", "0-0"},
           {"XSETID", "x", "5-0", "ENTRIESADDED", kI64Min},
           {"XGROUP", "SETID", "x", "g", "0", "ENTRIESREAD", kI64Max},
           {"XGROUP", "SETID", "x", "g", "0", "ENTRIESREAD", kI64Min},
           {"XTRIM", "x", "MAXLEN", "0"},
           {"XLEN", "x"},
       }) {
    cmds.push_back(c);
  }
  for (auto& cp : configs()) Same(*cp, cmds);
  // kvstore keeps only the IDs it deletes, but answers as redis-server does where its
  // allocation of COUNT IDs always fails (2^42 and more on x86-64 Linux).
  for (auto& cp : configs()) {
    Same(*cp, {{"XADD", "z", "1-1", "f", "v"}, {"XGROUP", "CREATE", "z", "g", "0"}});
    Expect(*cp, {"XAUTOCLAIM", "z", "g", "c", "0", "0", "COUNT", "4398046511104"},
           "-ERR Insufficient memory, failed allocating transient memory, COUNT too high.\r\n");
  }
}

// ---- CVE-2023-28425: MSETNX with the same key twice ---------------------------------------------

TEST_F(HardeningCmds, RangeScanAndSearchCountsMatchRedis) {
  std::vector<Cmd> cmds = {
      {"ZADD", "z", "1", "a", "2", "b", "3", "c"},
      {"GEOADD", "g", "13.361389", "38.115556", "Palermo", "15.087269", "37.502669", "Catania"},
      {"SET", "only", "v"},
      {"HSET", "hh", "a", "1", "b", "2"},
      {"SADD", "si", "1", "2", "3"},
  };
  for (const auto& [off, count] : std::vector<std::pair<std::string, std::string>>{
           {kI64Max, kI64Max},
           {kI64Min, kI64Min},
           {"0", kI64Min},
           {"1", kI64Max},
           {kI64Min, "1"},
           {"9223372036854775806", "9223372036854775806"}}) {
    cmds.push_back({"ZRANGE", "z", "-inf", "+inf", "BYSCORE", "LIMIT", off, count});
    cmds.push_back({"ZRANGE", "z", "+inf", "-inf", "BYSCORE", "REV", "LIMIT", off, count});
    cmds.push_back({"ZRANGE", "z", "[a", "+", "BYLEX", "LIMIT", off, count});
    cmds.push_back({"ZRANGESTORE", "zd", "z", "-inf", "+inf", "BYSCORE", "LIMIT", off, count});
    cmds.push_back({"ZRANGE", "zd", "0", "-1", "WITHSCORES"});
    cmds.push_back({"ZRANGEBYSCORE", "z", "-inf", "+inf", "LIMIT", off, count});
    cmds.push_back({"ZREVRANGEBYLEX", "z", "+", "-", "LIMIT", off, count});
  }
  for (const auto& [a, b] : std::vector<std::pair<std::string, std::string>>{
           {kI64Min, kI64Max}, {kI64Max, kI64Min}, {kI64Min, kI64Min}}) {
    cmds.push_back({"ZRANGE", "z", a, b});
    cmds.push_back({"ZRANGESTORE", "zd", "z", a, b});
    cmds.push_back({"ZREMRANGEBYRANK", "zcopy", a, b});
  }
  for (const std::string& n : {kI64Max, kI64Min, std::string("0"), std::string("-1")}) {
    cmds.push_back(
        {"GEOSEARCH", "g", "FROMLONLAT", "15", "37", "BYRADIUS", "200", "km", "ASC", "COUNT", n});
    cmds.push_back({"GEOSEARCH", "g", "FROMLONLAT", "15", "37", "BYRADIUS", "200", "km", "ASC",
                    "COUNT", n, "ANY"});
    cmds.push_back({"GEOSEARCHSTORE", "gd", "g", "FROMMEMBER", "Palermo", "BYBOX", "500", "500",
                    "km", "ASC", "COUNT", n});
    cmds.push_back({"GEORADIUS", "g", "15", "37", "200", "km", "ASC", "COUNT", n});
    cmds.push_back({"GEORADIUSBYMEMBER", "g", "Palermo", "200", "km", "ASC", "COUNT", n});
    // SCAN in a database of one key (the order of several is the hash table's own).
    cmds.push_back({"SELECT", "1"});
    cmds.push_back({"SET", "one", "v"});
    cmds.push_back({"SCAN", "0", "COUNT", n});
    cmds.push_back({"SCAN", "0", "TYPE", "string", "COUNT", n});
    cmds.push_back({"FLUSHDB"});
    cmds.push_back({"SELECT", "0"});
    cmds.push_back({"HSCAN", "hh", "0", "COUNT", n});
    cmds.push_back({"SSCAN", "si", "0", "COUNT", n});
    cmds.push_back({"ZSCAN", "z", "0", "COUNT", n});
    cmds.push_back({"HSCAN", "hh", "18446744073709551615", "COUNT", n});
  }
  for (const Cmd& c : std::vector<Cmd>{
           {"GEOSEARCH", "g", "FROMLONLAT", "15", "37", "BYRADIUS", "1e308", "km", "ASC"},
           {"GEOSEARCH", "g", "FROMLONLAT", "15", "37", "BYBOX", "1e308", "1e308", "km", "ASC"},
           {"GEOSEARCH", "g", "FROMLONLAT", "15", "37", "BYRADIUS", "inf", "km"},
           {"GEORADIUS", "g", "15", "37", "1e308", "m", "WITHDIST", "ASC"},
           {"GEORADIUS", "g", "1e308", "37", "200", "km"},
           {"GEOSEARCH", "g", "FROMLONLAT", "-1.7976931348623157e308", "-1e308", "BYRADIUS", "1",
            "km"},
           {"SCAN", "18446744073709551616"},
           {"OBJECT", "FREQ", "only"},
           {"OBJECT", "FREQ", "nokey"},
           {"CONFIG", "SET", "maxmemory-policy", "allkeys-lfu"},
           {"SET", "lfu", "v"},
           {"OBJECT", "FREQ", "lfu"},
           {"OBJECT", "IDLETIME", "lfu"},
           {"CONFIG", "SET", "maxmemory-policy", "noeviction"},
           {"SELECT", kI64Max},
           {"SELECT", "2147483648"},
           {"SELECT", "-2147483649"},
           {"SELECT", "2147483647"},
           {"MOVE", "only", kI64Max},
           {"SWAPDB", "0", kI64Max},
           {"COPY", "only", "o2", "DB", kI64Max},
       }) {
    cmds.push_back(c);
  }
  for (auto& cp : configs()) Same(*cp, cmds);
}

// ---- CVE-2023-36824: key positions from counts in the arguments (COMMAND GETKEYS) ---------------

TEST_F(HardeningCmds, KeyFindersNeverReadPastTheArguments) {
  const std::vector<Cmd> shapes = {{"EVAL", "return 1", "N", "a", "b"},
                                   {"EVALSHA", "abc", "N", "a"},
                                   {"EVAL_RO", "s", "N", "a", "b", "c"},
                                   {"FCALL", "f", "N", "a"},
                                   {"FCALL_RO", "f", "N"},
                                   {"ZUNIONSTORE", "d", "N", "a", "b"},
                                   {"ZINTERSTORE", "d", "N", "a"},
                                   {"ZDIFFSTORE", "d", "N", "a", "b", "c"},
                                   {"ZUNION", "N", "a", "b"},
                                   {"ZINTER", "N", "a"},
                                   {"ZDIFF", "N", "a", "b"},
                                   {"ZINTERCARD", "N", "a", "b"},
                                   {"SINTERCARD", "N", "a"},
                                   {"LMPOP", "N", "a", "LEFT"},
                                   {"LMPOP", "N", "a", "b", "LEFT"},
                                   {"BLMPOP", "0", "N", "a", "LEFT"},
                                   {"ZMPOP", "N", "a", "MIN"},
                                   {"BZMPOP", "0", "N", "a", "b", "MIN"}};
  auto with = [](Cmd shape, const std::string& n, const char* sub) {
    for (std::string& a : shape) {
      if (a == "N") a = n;
    }
    shape.insert(shape.begin(), {"COMMAND", sub});
    return shape;
  };
  std::vector<Cmd> cmds;
  for (const std::string n : {"-1",
                              "0",
                              "1",
                              "2",
                              "3",
                              "5",
                              "2147483648",
                              "2147483649",
                              "4294967295",
                              "4294967296",
                              "4294967297",
                              "4294967298",
                              "9223372036854775807",
                              "-9223372036854775808",
                              "-2147483648",
                              "-4294967295",
                              "18446744073709551617",
                              "x",
                              "1x",
                              " 1",
                              "+1",
                              "01",
                              ""}) {
    for (const Cmd& s : shapes) {
      cmds.push_back(with(s, n, "GETKEYS"));
      cmds.push_back(with(s, n, "GETKEYSANDFLAGS"));
    }
  }
  for (const Cmd& c :
       std::vector<Cmd>{{"XREAD", "STREAMS", "a"},
                        {"XREAD", "STREAMS", "a", "b", "c"},
                        {"XREAD", "STREAMS"},
                        {"XREAD", "COUNT", "STREAMS", "a", "0"},
                        {"XREAD", "COUNT", "1", "STREAMS", "streams", "a", "0", "1"},
                        {"XREADGROUP", "GROUP", "STREAMS", "c", "STREAMS", "a", "0"},
                        {"XREADGROUP", "GROUP", "g"},
                        {"XREAD", "a", "STREAMS", "b", "c"},
                        {"SORT", "a", "LIMIT"},
                        {"SORT", "a", "STORE"},
                        {"SORT", "a", "LIMIT", "0", "1", "STORE"},
                        {"SORT", "a", "STORE", "b", "STORE"},
                        {"SORT_RO", "a", "STORE", "b"},
                        {"GEORADIUS", "a", "0", "0", "1", "m", "STORE"},
                        {"GEORADIUS", "a", "0", "0", "1", "m", "STORE", "b", "STOREDIST"},
                        {"MSET", "a"},
                        {"MSET", "a", "1", "b"},
                        {"BITOP", "AND", "d"},
                        {"PFMERGE", "d"},
                        {"OBJECT", "FREQ"},
                        {"DEL"}}) {
    cmds.push_back(with(c, "", "GETKEYS"));
    cmds.push_back(with(c, "", "GETKEYSANDFLAGS"));
  }
  // The commands themselves with those counts.
  for (const std::string n : {"-1", "0", "2147483647", "2147483648", "4294967297",
                              "9223372036854775807", "-9223372036854775808"}) {
    for (const Cmd& c : std::vector<Cmd>{{"EVAL", "return 1", n, "a", "b"},
                                         {"ZUNIONSTORE", "d", n, "a", "b"},
                                         {"ZUNION", n, "a", "b"},
                                         {"ZINTERCARD", n, "a"},
                                         {"SINTERCARD", n, "a", "b"},
                                         {"LMPOP", n, "a", "LEFT"},
                                         {"BLMPOP", "0.01", n, "a", "LEFT"},
                                         {"ZMPOP", n, "a", "MIN"},
                                         {"BZMPOP", "0.01", n, "a", "MIN"},
                                         {"ZINTER", n, "a", "WEIGHTS", "1"}}) {
      cmds.push_back(c);
    }
  }
  Same(*configs()[0], cmds);
  // numkeys 2147483647: redis-server 7.0.15 crashes in its key-spec arithmetic (first key +
  // numkeys overflows int); kvstore answers as for any count past the arguments.
  Config& c = *configs()[0];
  for (const Cmd& s : shapes) {
    bool optional_keys = s[0].rfind("EVAL", 0) == 0 || s[0].rfind("FCALL", 0) == 0;
    for (const char* sub : {"GETKEYS", "GETKEYSANDFLAGS"}) {
      Expect(c, with(s, "2147483647", sub),
             optional_keys ? "*0\r\n" : "-ERR Invalid arguments specified for command\r\n");
    }
  }
}

}  // namespace
}  // namespace kv::test::hardening
