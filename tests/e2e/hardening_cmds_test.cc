// The command-level security advisories of Redis (2021-2025), end to end: each class of input
// that crashed, hung, overflowed or corrupted Redis is sent to kvstore and, where redis-server
// answers it, to Debian's redis-server 7.0.15 too, with a default configuration and with
// proto-max-bulk-len at 2^63-1 (a misconfiguration Redis accepts, CONFIG SET included). kvstore
// answers with redis-server's bytes, or with a clear error where redis-server crashes, aborts or
// sets out to build an endless reply; after each class it is alive, answers PING, and its
// resident memory has not grown by more than a few hundred megabytes.
// This file: HyperLogLog, string growth, string and bit ranges, MSETNX, HINCRBYFLOAT and LCS;
// hardening_counts_test.cc has the counts, limits and key finders. Shared: hardening_cmds_util.h.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/e2e/hardening_cmds_util.h"

namespace kv::test::hardening {
namespace {

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

}  // namespace
}  // namespace kv::test::hardening
