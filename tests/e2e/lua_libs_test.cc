// The bit library (kvstore's own, src/script/lua_bit.cc) and the limits of struct, cmsgpack and
// cjson, differentially against Debian's redis-server (7.0.15): the bit operations on edge numbers,
// and the two crashes Debian's libraries have (CVE-2024-31449's bit.tohex and CVE-2022-24834's
// cjson.encode of a 360 MiB string), answered as Redis answers them. Then what kvstore does where
// Redis 7.0 has no answer: the encoded text's size limit, and SCRIPT KILL ending a long cjson or
// cmsgpack call (Redis serves no one then). cjson's own cases: lua_cjson_test.cc.
//
// Each group begins with FLUSHALL and SCRIPT FLUSH (a fresh interpreter, so cjson's settings
// start from their defaults); within a group the settings carry over, on both servers alike.
#include <gtest/gtest.h>

#include <cstdint>
#include <iterator>
#include <string>
#include <vector>

#include "tests/e2e/scripting_util.h"
#include "tests/support/process.h"
#include "tests/support/resp_client.h"
#include "tests/support/script_diff.h"
#include "tests/support/wait.h"

namespace kv::test {
namespace {

using namespace lua_diff;

// ---------------------------------------------------------------------------------------------
// bit: conversions of edge numbers, every operation, argument errors.
const std::vector<Cmd> kBit = {
    Eval(R"(local t = {} for k in pairs(bit) do t[#t+1] = k end return t)"),
    Eval(R"(local vals = {0, -0, 1, -1, 0.5, 1.5, 2.5, -0.5, -1.5, 2^31, -2^31, 2^31-1, 2^32,
        2^32+1, -2^32, 2^51, 2^51+1, 2^52, 2^52+0.5, 2^53, 2^53+2, -2^53, 2^63, 2^64, 1e300,
        -1e300, 1/0, -1/0, 0/0, 1e-300, 0.49999999999999994, 4294967295.5, 12345.678,
        -98765.4321, "10", "0x10", " 7 ", "1e3", "-3.5", "0xffffffff", "1e10"}
        local out = {}
        for _, v in ipairs(vals) do
          out[#out+1] = table.concat({tostring(bit.tobit(v)), tostring(bit.bnot(v)),
              bit.tohex(v), tostring(bit.bswap(v))}, ',')
        end
        return out)"),
    Eval(R"(local out = {}
        for _, n in ipairs({0, 1, -1, 31, 32, 33, 63, -31, -32, 2^32+3, 0.5, 1.5, 100, -100}) do
          for _, x in ipairs({1, -1, 0x80000000, 0x12345678, -0x12345678, 0xdeadbeef}) do
            out[#out+1] = table.concat({bit.lshift(x, n), bit.rshift(x, n), bit.arshift(x, n),
                bit.rol(x, n), bit.ror(x, n)}, ',')
          end
        end
        return out)"),
    Eval(R"(return {bit.band(0xff, 0x0f, 0x3), bit.bor(1, 2, 4, 8, 16), bit.bxor(5, 3, 1),
        bit.band(-1), bit.bor(2^32 + 7, 8), bit.bxor(0xffffffff, 1)})"),
    Eval(R"(return {tostring(bit.tobit(-0)), tostring(bit.bnot(-1)), bit.tobit(1, 2, 3)})"),
    // tohex's widths, case and clamps.
    Eval(R"(local out = {}
        for _, n in ipairs({0, 1, 2, 7, 8, 9, 100, -1, -2, -8, -9, -100, 2^31-1, -2^31+1, 2^32,
                            2^32-8, 0.5, -0.5, -1.5, 0/0, 1/0}) do
          out[#out+1] = bit.tohex(0x1234abcd, n) .. '|' .. bit.tohex(-1, n)
        end
        return out)"),
    // Errors: missing, nil and non-numeric arguments; band and friends check from the last.
    Eval(R"(return bit.band())"),
    Eval(R"(return bit.bor())"),
    Eval(R"(return bit.bxor())"),
    Eval(R"(return bit.tobit())"),
    Eval(R"(return bit.bnot())"),
    Eval(R"(return bit.bswap())"),
    Eval(R"(return bit.tohex())"),
    Eval(R"(return bit.lshift(1))"),
    Eval(R"(return bit.rshift())"),
    Eval(R"(return bit.arshift(1, nil))"),
    Eval(R"(return bit.rol(nil, 1))"),
    Eval(R"(return bit.ror({}, 1))"),
    Eval(R"(return bit.tohex(1, nil))"),
    Eval(R"(return bit.tohex(1, 'x'))"),
    Eval(R"(return bit.tohex('x'))"),
    Eval(R"(return bit.tobit('abc'))"),
    Eval(R"(return bit.tobit(true))"),
    Eval(R"(return bit.tobit(cjson.null))"),
    Eval(R"(return bit.band(1, 2, 'x', 4))"),
    Eval(R"(return bit.band(1, 2, 'x', {}))"),
    Eval(R"(return bit.bor(1, nil, 3))"),
};

TEST(LuaLibs, BitAsRedis) {
  if (!HaveRedisServer()) GTEST_SKIP() << "redis-server is not installed";
  Servers s;
  Compare(s, kBit, false);
}

// CVE-2024-31449: tohex negated INT32_MIN and wrote past its buffer (Debian's lua-bitop still
// does, and crashed kvstore). Redis' fix counts it as INT32_MIN + 1: eight upper-case digits.
TEST(LuaLibs, BitTohexOfMinimumWidthAsRedis) {
  if (!HaveRedisServer()) GTEST_SKIP() << "redis-server is not installed";
  Servers s;
  Compare(s,
          {Eval("return bit.tohex(65535, -2147483648)"),
           Eval("return {bit.tohex(65535, 2147483648), bit.tohex(1, -4294967296), "
                "bit.tohex(-1, -2^31 - 2^32), bit.tohex(0xabc, 2^31 + 2^32)}"),
           Eval("return bit.tohex(65535, -2147483648)")},
          false);
  EXPECT_TRUE(s.ours.Alive());
  RespClient k(s.ours.port());
  EXPECT_EQ(k.Call(Eval("return bit.tohex(65535, -2147483648)")).raw, "$8\r\n0000FFFF\r\n");
}

// CVE-2022-24834: the encode buffer's size (6 bytes a byte of the string) overflowed, and
// Debian's lua-cjson crashed kvstore encoding a 360 MiB string; Redis' fix encodes it. The
// string is built by doubling rather than string.rep (which spends seconds on Redis' side
// merging its buffer); the case is the same. The only large case of the suite.
TEST(LuaLibs, CjsonEncodeHugeStringAsRedis) {
  if (!HaveRedisServer()) GTEST_SKIP() << "redis-server is not installed";
  Servers s;
  const Cmd huge = Eval(
      "local s = string.rep('x', 45 * 1024 * 1024) s = s .. s s = s .. s s = s .. s "
      "return {string.len(s), string.len(cjson.encode(s)), cjson.encode(s):sub(-3)}");
  RespClient r(s.redis.port(), 120000), k(s.ours.port(), 120000);
  Reply want = r.Call(huge);
  ASSERT_EQ(want.raw, "*3\r\n:377487360\r\n:377487362\r\n$3\r\nxx\"\r\n");
  Reply got = k.Call(huge);
  EXPECT_EQ(got.raw, want.raw) << "alive: " << s.ours.Alive();
  ASSERT_TRUE(s.ours.Alive());
  // The encoder is fine afterwards.
  Compare(s, {Eval("return cjson.encode({'a', {b = 1}})"), Eval("return cjson.encode('x')")},
          false);
}

// ---------------------------------------------------------------------------------------------
// struct and cmsgpack at their limits: sizes past an int, huge counts and offsets, nesting,
// stack exhaustion.
const std::vector<Cmd> kLimits = {
    Eval(R"(return {struct.pack('i17', 5)})"),
    Eval(R"(return {struct.pack('i33', 5)})"),
    Eval(R"(return {struct.pack('c4294967295', 'x')})"),
    Eval(R"(return {struct.pack('c2147483648', 'x')})"),
    Eval(R"(return {struct.pack('c2147483647', 'x')})"),
    Eval(R"(return {struct.pack('c99999999999999999999', 'x')})"),
    Eval(R"(return {struct.size('c2147483647c2147483647c2147483647')})"),
    Eval(R"(return {struct.size('i99999999999')})"),
    Eval(R"(return {struct.unpack('c2147483647', 'x')})"),
    Eval(R"(return {struct.unpack('i17', string.rep('\255', 17))})"),
    Eval(R"(return {struct.unpack('>i32', string.rep('\1', 32))})"),
    Eval(R"(return {struct.pack('!2147483648i', 1)})"),
    Eval(R"(return {struct.pack('!1073741824i', 1)})"),
    Eval(R"(return {struct.size('!1073741824di')})"),
    Eval(R"(return {struct.unpack('b', 'x', -1)})"),
    Eval(R"(return {struct.unpack('b', 'x', 2^53)})"),
    Eval(R"(return {struct.unpack('b', 'x', 2^63)})"),
    Eval(R"(return {struct.unpack('b', 'x', 0)})"),
    Eval(R"(return {struct.unpack('bc0', '\255xyz')})"),
    Eval(R"(return {struct.unpack('dc0', struct.pack('d', 2^64) .. 'xyz')})"),
    Eval(R"(return {struct.unpack('dc0', struct.pack('d', -1) .. 'xyz')})"),
    Eval(R"(return {struct.unpack('dc0', struct.pack('d', 1/0) .. 'xyz')})"),
    Eval(R"(return {struct.unpack('s', 'abc')})"),
    Pcall("struct.unpack, string.rep('b', 10000), string.rep('x', 10000)"),
    Eval(R"(return {cmsgpack.unpack_one(cmsgpack.pack(1,2,3), 2^32)})"),
    Eval(R"(return {cmsgpack.unpack_one(cmsgpack.pack(1,2,3), 2^32+1)})"),
    Eval(R"(return {cmsgpack.unpack_one(cmsgpack.pack(1,2,3), 2^31)})"),
    Eval(R"(return {cmsgpack.unpack_one(cmsgpack.pack(1,2,3), -1)})"),
    Eval(R"(return {cmsgpack.unpack_one(cmsgpack.pack(1,2,3), 3)})"),
    Eval(R"(return {cmsgpack.unpack_limit(cmsgpack.pack(1,2,3), 2^32)})"),
    Eval(R"(return {cmsgpack.unpack_limit(cmsgpack.pack(1,2,3), 2^31)})"),
    Eval(R"(return {cmsgpack.unpack_limit(cmsgpack.pack(1,2,3), 2^40, 1)})"),
    Eval(R"(return {cmsgpack.unpack_limit(cmsgpack.pack(1,2,3), 1, 2^32+1)})"),
    Eval(R"(return {cmsgpack.unpack_limit(cmsgpack.pack(1,2,3), 1e300)})"),
    Eval(R"(return {cmsgpack.unpack_limit(cmsgpack.pack(1,2,3), 0/0)})"),
    Eval(R"(return {cmsgpack.unpack_limit(cmsgpack.pack(1,2,3), -2^32+2)})"),
    // Counts far beyond the data.
    Eval(R"(return {cmsgpack.unpack_limit('\221\255\255\255\255', 1)})"),
    Eval(R"(return {cmsgpack.unpack('\221\255\255\255\255')})"),
    Eval(R"(return {cmsgpack.unpack('\223\255\255\255\255')})"),
    Eval(R"(return {cmsgpack.unpack('\219\255\255\255\255abc')})"),
    Pcall("cmsgpack.unpack, string.rep('\\145', 100000)"),
    Pcall("cmsgpack.unpack, string.rep('\\129\\1', 100000)"),
    Pcall("cmsgpack.unpack, string.rep('\\1', 100000)"),
    // Packing stops 16 tables down (and so ends cycles).
    Eval(R"(local t = {} for i = 1, 20 do t = {t} end return cmsgpack.pack(t))"),
    Eval(R"(local t = {} for i = 1, 20 do t = {a = t} end return cmsgpack.pack(t))"),
    Eval(R"(local t = {} t[1] = t return cmsgpack.pack(t))"),
    Eval(R"(local t = {} t[1] = t t[2] = t return string.len(cmsgpack.pack(t)))"),
    Eval(R"(return cmsgpack.pack(string.rep('x', 70000)):sub(1, 5))"),
};

TEST(LuaLibs, StructAndCmsgpackLimitsAsRedis) {
  if (!HaveRedisServer()) GTEST_SKIP() << "redis-server is not installed";
  Servers s;
  Compare(s, kLimits, false);
}

// ---------------------------------------------------------------------------------------------
// Where Redis 7.0 has no answer to compare with.

// An array whose text cannot fit kvstore's limit (1 GiB) fails before it is walked; Redis 7.0
// builds 2.5 GiB of "null,". The encoder works on afterwards.
TEST(LuaLibs, CjsonEncodeTextIsBounded) {
  ServerProcess kv(ServerProcess::Kind::kKvstore);
  RespClient k(kv.port());
  Reply r = k.Call(
      Eval("cjson.encode_sparse_array(false, 0) local t = {} t[2^29] = 1 return cjson.encode(t)"));
  EXPECT_EQ(r.raw.rfind("-ERR user_script:1: Cannot serialise, the JSON text would exceed "
                        "1073741824 bytes script: ",
                        0),
            0u)
      << r.raw;
  EXPECT_EQ(k.Call(Eval("return cjson.encode({1, 'a'})")).raw, "$7\r\n[1,\"a\"]\r\n");
  EXPECT_TRUE(kv.Alive());
}

// Runs `body` (which spends seconds or for ever in one C function) on `kv`, whose
// busy-reply-threshold is 100 ms: other clients get -BUSY while it runs, SCRIPT KILL ends it, and
// its caller gets the kill error naming the script's line `line`, as for a Lua loop.
void ExpectKilled(ServerProcess& kv, const std::string& body, int line) {
  SCOPED_TRACE(body);
  RespClient runner(kv.port(), 60000), other(kv.port());
  std::string sha = other.Call({"SCRIPT", "LOAD", body}).str;
  ASSERT_EQ(sha.size(), 40u);
  runner.Send({"EVALSHA", sha, "0"});
  Reply busy;
  EXPECT_TRUE(WaitFor([&] {
    busy = other.Call({"PING"});
    return busy.is_error();
  }));
  EXPECT_EQ(busy.raw,
            "-BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN "
            "NOSAVE.\r\n");
  EXPECT_EQ(other.Call({"SCRIPT", "KILL"}).raw, "+OK\r\n");
  EXPECT_EQ(runner.Read().raw, "-ERR Script killed by user with SCRIPT KILL... script: " + sha +
                                   ", on @user_script:" + std::to_string(line) + ".\r\n");
  EXPECT_EQ(other.Call({"PING"}).raw, "+PONG\r\n");
}

// A table holding the same subtable twice, 60 levels down, encodes 2^60 values; one holding
// itself ten times packs 10^16 before cmsgpack's nesting limit. Redis 7.0 serves no one until
// memory runs out; kvstore answers -BUSY and ends them on SCRIPT KILL. The kill error names the
// line of the call; a pcall around it catches it, as it catches a kill in Lua code, and the
// script ends on its next line.
TEST(LuaLibs, LongEncodesEndOnScriptKill) {
  ServerProcess kv(ServerProcess::Kind::kKvstore, {"--busy-reply-threshold", "100"});
  ExpectKilled(kv, "local t = 1 for k = 1, 60 do t = {t, t} end return cjson.encode(t)", 1);
  ExpectKilled(kv, "local t = {} for i = 1, 10 do t[i] = t end return cmsgpack.pack(t)", 1);
  ExpectKilled(kv,
               "local t = {} for i = 1, 10 do t[i] = t end\n"
               "local ok = pcall(cmsgpack.pack, t)\n"
               "return 'not killed'",
               3);
  ExpectKilled(kv,
               "local t = 1 for k = 1, 60 do t = {t, t} end\n"
               "local ok = pcall(function() return cjson.encode(t) end)\n"
               "while true do end",
               3);
  // Decoding is bounded by its input, but long too: a text of 50 MB, and its MessagePack.
  ExpectKilled(kv,
               "local s = '{' .. string.rep('\"a\":[1,2],', 5e6) .. '\"a\":1}'\n"
               "local t = cjson.decode(s)\n"
               "return 'not killed'",
               2);
  ExpectKilled(
      kv,
      "local s = '\\223' .. struct.pack('>I4', 5e6) .. string.rep('\\161a\\146\\1\\2', 5e6)\n"
      "local t = cmsgpack.unpack(s)\n"
      "return 'not killed'",
      2);
  EXPECT_TRUE(kv.Alive());
}

}  // namespace
}  // namespace kv::test
