// The command-level security advisories of Redis (2021-2025), end to end: each class of input
// that crashed, hung, overflowed or corrupted Redis is sent to kvstore and, where redis-server
// answers it, to Debian's redis-server 7.0.15 too, with a default configuration and with
// proto-max-bulk-len at 2^63-1 (a misconfiguration Redis accepts, CONFIG SET included). kvstore
// answers with redis-server's bytes, or with a clear error where redis-server crashes, aborts or
// sets out to build an endless reply; after each class it is alive, answers PING, and its
// resident memory has not grown by more than a few hundred megabytes.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/process.h"
#include "tests/support/resp_client.h"

namespace kv::test {
namespace {

using Cmd = std::vector<std::string>;
using Kind = ServerProcess::Kind;

const std::string kI64Max = "9223372036854775807";
const std::string kI64Min = "-9223372036854775808";
const std::string kBitOffsetError = "-ERR bit offset is not an integer or out of range\r\n";
const std::string kOverValueMax = "-ERR string exceeds maximum allowed size (4294967295 bytes)\r\n";
const std::string kOverBulkMax =
    "-ERR string exceeds maximum allowed size (proto-max-bulk-len)\r\n";
const std::string kInvalidHll = "-INVALIDOBJ Corrupted HLL object detected\r\n";
const std::string kLcsTooBig =
    "-ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len\r\n";

// Resident memory of a process in KiB.
int64_t RssKb(pid_t pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stoll(line.substr(6));
  }
  return -1;
}

std::string Describe(const Cmd& cmd) {
  std::string out;
  for (const std::string& a : cmd) out += (out.empty() ? "" : " ") + a.substr(0, 40);
  return out.substr(0, 200);
}

std::string Repeat(const std::string& s, int n) {
  std::string out;
  for (int i = 0; i < n; i++) out += s;
  return out;
}

// One configuration: a kvstore and a redis-server, both with the default proto-max-bulk-len or
// both with 2^63-1, each with one connection.
struct Config {
  explicit Config(bool huge_bulk)
      : huge(huge_bulk),
        kv(Kind::kKvstore, Args()),
        redis(Kind::kRedis, Args()),
        k(kv.port()),
        r(redis.port()) {}
  std::vector<std::string> Args() const {
    if (!huge) return {};
    return {"--proto-max-bulk-len", kI64Max};
  }
  const char* name() const { return huge ? "proto-max-bulk-len 2^63-1" : "default config"; }

  bool huge;
  ServerProcess kv, redis;
  RespClient k, r;
};

// Both configurations, shared by the suite; each test starts from empty databases.
class HardeningCmds : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!HaveRedisServer()) return;
    configs_ = new std::vector<std::unique_ptr<Config>>;
    configs_->push_back(std::make_unique<Config>(false));
    configs_->push_back(std::make_unique<Config>(true));
  }
  static void TearDownTestSuite() {
    delete configs_;
    configs_ = nullptr;
  }
  void SetUp() override {
    if (!configs_) GTEST_SKIP() << "redis-server is not installed";
    for (auto& c : *configs_) {
      ASSERT_EQ(c->k.Raw({"FLUSHALL"}), "+OK\r\n");
      ASSERT_EQ(c->r.Raw({"FLUSHALL"}), "+OK\r\n");
      rss_before_.push_back(RssKb(c->kv.pid()));
    }
  }
  // After each class: alive, answering, and no gigabytes of memory kept or leaked.
  void TearDown() override {
    if (!configs_) return;
    for (size_t i = 0; i < configs_->size(); i++) {
      Config& c = *(*configs_)[i];
      SCOPED_TRACE(c.name());
      ASSERT_TRUE(c.kv.Alive()) << c.kv.LogText();
      EXPECT_EQ(c.k.Raw({"PING"}), "+PONG\r\n");
      EXPECT_EQ(RespClient(c.kv.port()).Raw({"PING"}), "+PONG\r\n");
      EXPECT_LT(RssKb(c.kv.pid()) - rss_before_[i], 256 * 1024) << "RSS grew by gigabytes";
    }
  }

  // Runs `cmds` on both servers of `c` in order, expecting kvstore to answer redis-server's
  // bytes, and kvstore to be alive after each.
  static void Same(Config& c, const std::vector<Cmd>& cmds) {
    SCOPED_TRACE(c.name());
    for (const Cmd& cmd : cmds) {
      SCOPED_TRACE(Describe(cmd));
      Reply want = c.r.Call(cmd);
      ASSERT_NE(want.type, 0) << "redis-server did not answer";
      Reply got = c.k.Call(cmd);
      ASSERT_NE(got.type, 0) << "kvstore did not answer; alive: " << c.kv.Alive();
      EXPECT_EQ(got.raw, want.raw);
    }
    ASSERT_EQ(c.k.Raw({"PING"}), "+PONG\r\n");
  }
  // kvstore alone (redis-server would crash, abort or never finish): the exact reply, then PING.
  static void Expect(Config& c, const Cmd& cmd, const std::string& reply) {
    SCOPED_TRACE(std::string(c.name()) + ": " + Describe(cmd));
    EXPECT_EQ(c.k.Raw(cmd), reply);
    ASSERT_TRUE(c.kv.Alive()) << c.kv.LogText();
    ASSERT_EQ(c.k.Raw({"PING"}), "+PONG\r\n");
  }
  static std::vector<std::unique_ptr<Config>>& configs() { return *configs_; }
  static Config& huge() { return *(*configs_)[1]; }

  inline static std::vector<std::unique_ptr<Config>>* configs_ = nullptr;
  std::vector<int64_t> rss_before_;
};

// ---- CVE-2025-32023: sparse HyperLogLogs whose runs do not cover the 16384 registers -----------

std::string Sparse(const std::string& ops) {
  return std::string("HYLL\x01\0\0\0\0\0\0\0\0\0\0\x80", 16) + ops;  // cached count stale
}
std::string XZero(int n) {
  return {static_cast<char>(0x40 | ((n - 1) >> 8)), static_cast<char>((n - 1) & 0xff)};
}
std::string Zero(int n) { return std::string(1, static_cast<char>(n - 1)); }
std::string Val(int v, int n) {
  return std::string(1, static_cast<char>(0x80 | (v - 1) << 2 | (n - 1)));
}

TEST_F(HardeningCmds, CorruptHyperLogLogIsRefused) {
  const std::string dense_header("HYLL\0\0\0\0\0\0\0\0\0\0\0\x80", 16);
  const std::vector<std::string> values = {
      Sparse(Repeat(XZero(16384), 3) + Val(5, 4)),  // XZERO runs past the last register
      Sparse(Repeat(XZero(16384), 2000)),           // ... by far
      Sparse(Repeat(Val(32, 4), 4097)),             // VAL runs past it
      Sparse(XZero(16383) + Val(7, 4)),             // a VAL run crossing it
      Sparse(XZero(16383) + Zero(2) + Val(7, 2)),   // a ZERO run crossing it
      Sparse(XZero(16000)),                         // short of it
      Sparse(""),                                   // no runs
      Sparse(XZero(16000) + Val(3, 4) + Repeat(Zero(64), 5) + Zero(60)),  // exactly: valid
      Sparse(Repeat(Val(32, 4), 4096)),                                   // exactly: valid
      Sparse(XZero(16383) + "\x40"),              // a cut XZERO reads the terminator: valid
      Sparse(Val(3, 1) + XZero(16382) + "\x40"),  // the same after a VAL
      dense_header + std::string(100, '\0'),      // dense of the wrong length
      dense_header + std::string(12289, '\0'),
      std::string("HYLL\x02\0\0\0\0\0\0\0\0\0\0\x80", 16) + XZero(16384),  // unknown encoding
  };
  for (auto& cp : configs()) {
    Config& c = *cp;
    for (const char* max_bytes : {"3000", "0"}) {  // 0: every change turns the HLL dense
      Same(c, {{"CONFIG", "SET", "hll-sparse-max-bytes", max_bytes}, {"PFADD", "ok", "x", "y"}});
      for (const std::string& v : values) {
        Cmd set = {"SET", "h", v};
        Same(c, {set,
                 {"PFCOUNT", "h"},
                 {"GET", "h"},
                 set,
                 {"PFCOUNT", "h", "ok"},
                 set,
                 {"PFCOUNT", "ok", "h", "nokey"},
                 set,
                 {"PFMERGE", "dst", "h"},
                 {"GET", "dst"},
                 {"DEL", "dst"},
                 set,
                 {"PFMERGE", "h", "ok"},
                 {"GET", "h"},
                 set,
                 {"PFADD", "h", "a", "b", "c"},
                 {"GET", "h"},
                 {"PFCOUNT", "h"},
                 set,
                 {"PFADD", "h", "e1674"},
                 {"GET", "h"},  // e1674 hashes to register 16383
                 set,
                 {"PFADD", "h"},
                 set,
                 {"PFDEBUG", "GETREG", "h"},
                 {"GET", "h"},
                 set,
                 {"PFDEBUG", "DECODE", "h"},
                 {"PFDEBUG", "ENCODING", "h"},
                 set,
                 {"PFDEBUG", "TODENSE", "h"},
                 {"GET", "h"},
                 {"PFCOUNT", "h"}});
      }
    }
    Same(c, {{"CONFIG", "SET", "hll-sparse-max-bytes", "3000"}});
    // The reproduction: VAL runs 4 registers past the end were counted, 50760319129350.
    Same(c, {{"SET", "h", values[2]}});
    Expect(c, {"PFCOUNT", "h", "ok"}, kInvalidHll);
    Expect(c, {"PFMERGE", "h", "ok"}, kInvalidHll);
    Expect(c, {"PFDEBUG", "TODENSE", "h"}, kInvalidHll);
    Expect(c, {"STRLEN", "h"}, ":4113\r\n");  // left as it was
  }
}

// ---- proto-max-bulk-len at 2^63-1: strings grown past what a value holds ----------------------

TEST_F(HardeningCmds, StringGrowthPastWhatAValueHoldsIsRefused) {
  // What both servers answer alike in both configurations (errors, reads, empty patches).
  const std::vector<Cmd> both = {
      {"SET", "ex", "hello"},
      {"SETBIT", "nk", "-1", "1"},
      {"SETBIT", "nk", "9223372036854775808", "1"},
      {"SETRANGE", "nk", kI64Max, "x"},
      {"SETRANGE", "nk", "9223372036854775806", "xy"},
      {"SETRANGE", "nk", "-1", "x"},
      {"SETRANGE", "nk", kI64Max, ""},
      {"SETRANGE", "ex", kI64Max, ""},
      {"SETRANGE", "ex", kI64Max, "x"},
      {"GETBIT", "ex", kI64Max},
      {"GETBIT", "nk", kI64Max},
      {"BITFIELD", "nk", "SET", "u8", "#1152921504606846976", "1"},  // # * 8 wraps negative
      {"BITFIELD", "ex", "GET", "u8", kI64Max},
      {"BITFIELD_RO", "ex", "GET", "i64", "9223372036854775744"},
      {"APPEND", "ex", "!"},
      {"GET", "ex"},
      {"EXISTS", "nk"},
  };
  for (auto& cp : configs()) Same(*cp, both);
  // The default configuration refuses past 512 MB; redis-server answers alike.
  Config& d = *configs()[0];
  Same(d, {{"SETBIT", "nk", kI64Max, "1"},
           {"SETBIT", "nk", "4294967296", "1"},
           {"SETBIT", "ex", kI64Max, "1"},
           {"SETRANGE", "nk", "4294967295", "x"},
           {"SETRANGE", "ex", "536870912", "x"},
           {"BITFIELD", "nk", "SET", "u8", kI64Max, "1"},
           {"BITFIELD", "nk", "INCRBY", "i64", "34359738368", "1"},
           {"BITFIELD", "ex", "OVERFLOW", "FAIL", "INCRBY", "u8", "34359738368", "1"},
           {"GET", "ex"},
           {"EXISTS", "nk"}});
  // 2^63-1: redis-server aborts (SIGSEGV in kvstore before) or allocates gigabytes; kvstore
  // refuses anything past 4294967295 bytes, on a new key and on an existing one alike.
  for (Config* c : {&huge(), &d}) {
    if (c == &d) {  // the same limits once CONFIG SET raises proto-max-bulk-len at run time
      Same(d, {{"CONFIG", "SET", "proto-max-bulk-len", kI64Max},
               {"CONFIG", "GET", "proto-max-bulk-len"}});
    }
    for (const std::string key : {"nk", "ex"}) {
      Expect(*c, {"SETBIT", key, kI64Max, "1"}, kBitOffsetError);
      Expect(*c, {"SETBIT", key, "34359738360", "1"}, kBitOffsetError);  // byte 2^32 - 1
      Expect(*c, {"SETBIT", key, "9223372036854775800", "0"}, kBitOffsetError);
      Expect(*c, {"SETRANGE", key, "4294967295", "x"}, kOverValueMax);
      Expect(*c, {"SETRANGE", key, "4294967294", "xy"}, kOverValueMax);
      Expect(*c, {"SETRANGE", key, "9223372036854775000", "x"}, kOverValueMax);
      Expect(*c, {"SETRANGE", key, "9223372036854775806", "xy"}, kOverBulkMax);
      Expect(*c, {"BITFIELD", key, "SET", "u8", kI64Max, "1"}, kBitOffsetError);
      Expect(*c, {"BITFIELD", key, "SET", "u8", "9223372036854775800", "1"}, kBitOffsetError);
      Expect(*c, {"BITFIELD", key, "INCRBY", "u8", kI64Max, "1"}, kBitOffsetError);
      Expect(*c, {"BITFIELD", key, "INCRBY", "i64", "34359738368", "1"}, kBitOffsetError);
      Expect(*c, {"BITFIELD", key, "SET", "i64", "#536870912", "1"}, kBitOffsetError);
      Expect(*c, {"BITFIELD", key, "GET", "u8", "0", "SET", "u8", kI64Max, "1"}, kBitOffsetError);
      Expect(*c, {"BITFIELD", key, "OVERFLOW", "FAIL", "INCRBY", "u8", "34359738368", "1"},
             kBitOffsetError);
    }
    Expect(*c, {"GETBIT", "ex", kI64Max}, ":0\r\n");
    Expect(*c, {"EXISTS", "nk"}, ":0\r\n");
    Expect(*c, {"GET", "ex"}, "$6\r\nhello!\r\n");  // untouched
    // Up to the limit is still served: one bit past 4 GiB is not, the last bit before it is
    // (a zeroed allocation of 512 MB, never touched but for its last page).
    Expect(*c, {"SETBIT", "small", "4294967295", "1"}, ":0\r\n");
    Expect(*c, {"STRLEN", "small"}, ":536870912\r\n");
    Expect(*c, {"DEL", "small"}, ":1\r\n");
  }
  Same(d, {{"CONFIG", "SET", "proto-max-bulk-len", "536870912"}});
}

// ---- Extreme ranges of strings and bits (GETRANGE, BITCOUNT, BITPOS) --------------------------

TEST_F(HardeningCmds, ExtremeStringAndBitRangesMatchRedis) {
  std::vector<Cmd> cmds = {{"SET", "s", "hello"}, {"SET", "ff", "\xff\xff"}, {"SET", "i", "12"}};
  const std::vector<std::pair<std::string, std::string>> ranges = {
      {kI64Min, kI64Max}, {kI64Max, kI64Min}, {"0", kI64Max},
      {kI64Min, kI64Min}, {kI64Max, kI64Max}, {"-1", kI64Min},
      {"-100", "-99"},    {kI64Min, "-1"},    {"-9223372036854775807", "-2"},
  };
  for (const char* key : {"s", "ff", "i", "nokey"}) {
    for (const auto& [a, b] : ranges) {
      cmds.push_back({"GETRANGE", key, a, b});
      cmds.push_back({"SUBSTR", key, a, b});
      cmds.push_back({"BITCOUNT", key, a, b});
      cmds.push_back({"BITCOUNT", key, a, b, "BIT"});
      for (const char* bit : {"0", "1"}) {
        cmds.push_back({"BITPOS", key, bit, a});
        cmds.push_back({"BITPOS", key, bit, a, b});
        cmds.push_back({"BITPOS", key, bit, a, b, "BIT"});
        cmds.push_back({"BITPOS", key, bit, a, b, "BYTE"});
      }
    }
  }
  for (auto& cp : configs()) Same(*cp, cmds);
}

// ---- Lists: indexes and counts at the edges of int64 (LSET LINDEX LRANGE LTRIM LPOS ...) -------

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

TEST_F(HardeningCmds, MsetnxWithTheSameKeyTwice) {
  for (auto& cp : configs()) {
    Same(*cp, {{"MSETNX", "dup", "1", "dup", "2"},
               {"GET", "dup"},
               {"MSETNX", "d3", "1", "d3", "2", "d3", "3"},
               {"GET", "d3"},
               {"MSETNX", "dup", "x", "fresh", "y"},
               {"EXISTS", "fresh"},
               {"SET", "gone", "v", "PX", "1"}});
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    Same(*cp, {{"MSETNX", "gone", "1", "gone", "2"},  // expired, not yet deleted
               {"GET", "gone"},
               {"MSET", "m", "1", "m", "2"},
               {"GET", "m"}});
  }
}

// ---- CVE-2023-28856: HINCRBYFLOAT that would store inf or nan ----------------------------------

TEST_F(HardeningCmds, HincrbyfloatNeverStoresInfOrNan) {
  for (auto& cp : configs()) {
    Same(*cp, {{"HINCRBYFLOAT", "hf", "f", "+inf"},
               {"EXISTS", "hf"},
               {"HINCRBYFLOAT", "hf", "f", "nan"},
               {"HINCRBYFLOAT", "hf", "f", "-inf"},
               {"EXISTS", "hf"},
               {"HINCRBYFLOAT", "hf", "f", "1.7976931348623157e308"},
               {"HINCRBYFLOAT", "hf", "f", "1.7976931348623157e308"},
               {"HSET", "hf", "i", "inf", "n", "nan", "e", "1e400"},
               {"HINCRBYFLOAT", "hf", "i", "1"},
               {"HINCRBYFLOAT", "hf", "n", "1"},
               {"HINCRBYFLOAT", "hf", "e", "0"},
               {"HINCRBYFLOAT", "hf", "x", "1e400"},
               {"HINCRBY", "hf", "a", kI64Max},
               {"HINCRBY", "hf", "a", "1"},
               {"HINCRBY", "hf", "b", kI64Min},
               {"HINCRBY", "hf", "b", "-1"},
               {"HLEN", "hf"},  // field by field: long values make the order a hash table's
               {"HMGET", "hf", "f", "i", "n", "e", "x", "a", "b"},
               {"SET", "n", "1"},
               {"INCRBYFLOAT", "n", "inf"},
               {"INCRBYFLOAT", "n", "1.7976931348623157e308"},
               {"INCRBYFLOAT", "n", "1.7976931348623157e308"},
               {"GET", "n"}});
  }
}

// ---- CVE-2021-32625, CVE-2021-29477: the LCS table ----------------------------------------------

TEST_F(HardeningCmds, LcsTableIsBounded) {
  const std::string a(12000, 'a'), b(12000, 'b');  // 12001^2 * 4 bytes > 512 MB
  for (auto& cp : configs()) {
    Same(*cp, {{"SET", "a", "ohmytext"},
               {"SET", "b", "mynewtext"},
               {"LCS", "a", "b"},
               {"LCS", "a", "b", "IDX", "MINMATCHLEN", kI64Max, "WITHMATCHLEN"},
               {"LCS", "a", "b", "IDX", "MINMATCHLEN", kI64Min}});
  }
  Same(*configs()[0], {{"SET", "big1", a},
                       {"SET", "big2", b},
                       {"LCS", "big1", "big2"},
                       {"LCS", "big1", "big2", "LEN"},
                       {"LCS", "big1", "big2", "IDX"}});
  // 2^63-1 lets the table be as large as it likes, but not wrap: two strings of 2^31 - 1 bytes
  // make (2^31)^2 cells of 4 bytes, 2^64 bytes, which Redis checks for and refuses too. The
  // strings are zeroed allocations kvstore never touches, so this costs no memory.
  Config& c = huge();
  Reply r1 = c.k.Call({"SETRANGE", "w1", "2147483646", "x"});
  if (r1.is_error()) GTEST_SKIP() << "this machine cannot allocate 2 GB: " << r1.str;
  ASSERT_EQ(r1.raw, ":2147483647\r\n");
  Expect(c, {"SETRANGE", "w2", "2147483646", "y"}, ":2147483647\r\n");
  Expect(c, {"LCS", "w1", "w2"}, kLcsTooBig);
  Expect(c, {"LCS", "w1", "w2", "LEN"}, kLcsTooBig);
  Expect(c, {"LCS", "w1", "w2", "IDX", "WITHMATCHLEN"}, kLcsTooBig);
  Expect(c, {"DEL", "w1", "w2"}, ":2\r\n");
}

// ---- Counts of ranges, scans and searches; OBJECT FREQ -----------------------------------------

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
}  // namespace kv::test
