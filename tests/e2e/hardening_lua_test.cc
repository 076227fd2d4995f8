// Lua hardened as a whole (docs/security.md, src/script/README.md): the reproductions of Redis'
// Lua advisories, through EVAL and through FUNCTION/FCALL. Where redis-server answers, kvstore
// answers the same bytes; where it crashes or never answers, kvstore answers with an error. After
// each, the server is alive and serves another client.
#include <gtest/gtest.h>
#include <poll.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "net/socket.h"
#include "tests/e2e/scripting_util.h"

namespace kv::test {
namespace {

using lua_diff::Eval;

void ExpectAlive(ServerProcess& s) {
  ASSERT_TRUE(s.Alive()) << s.LogText();
  RespClient other(s.port());
  EXPECT_EQ(other.Raw({"PING"}), "+PONG\r\n");
}

// CVE-2025-46817: unpack's count of results overflowed, and stock Lua then wrote past the stack.
TEST(HardeningLua, UnpackRangesMatchRedis) {
  lua_diff::Servers s;
  lua_diff::Compare(
      s,
      {Eval("return {unpack({1,2,3}, -2, 2147483647)}"),
       Eval("return {unpack({1,2,3}, -2147483648, 2147483647)}"),
       Eval("return {unpack({1,2,3}, 0, 9000)}"),
       Eval("return {unpack({1,2,3}, 2147483640, 2147483647)}"),
       Eval("return {unpack({1,2,3}, 2147483647, -2147483648)}"), Eval("return {unpack({1,2,3})}"),
       Eval("return {unpack({1,2,3}, 2)}"), Eval("return {unpack({1,2,3}, 2, 3)}"),
       Eval("return select('#', unpack({}, 1, 7990))"), Eval("return {pcall(unpack, {}, 1, 1e10)}"),
       Eval("return unpack('x')")},
      false);
  ExpectAlive(s.ours);
}

// Binary chunks (string.dump's output) are compiled as text, so they fail as in Redis, whose
// loader never undumps: Lua 5.1 runs bytecode unverified.
TEST(HardeningLua, BinaryChunksAreRefusedAsRedisRefusesThem) {
  lua_diff::Servers s;
  const std::string dump = "string.dump(function() return 1 end)";
  lua_diff::Compare(
      s,
      {Eval("local f, e = loadstring(" + dump + ") return {tostring(f), e}"),
       Eval("local f, e = loadstring(" + dump + ", 'name') return {tostring(f), e}"),
       Eval("local f, e = loadstring(" + dump + ", '=name') return {tostring(f), e}"),
       Eval("local f, e = loadstring('\\027') return {tostring(f), e}"),
       Eval("local d, n = " + dump +
            ", 0 local f, e = load(function() n = n + 1 if n == 1 then return d end end) "
            "return {tostring(f), e}"),
       Eval("local f, e = load(function() return nil end) return {type(f), e}"),
       Eval("local f, e = load(function() return {} end) return {tostring(f), e}"),
       Eval("local p = {'return ', '4', '2'} local i = 0 "
            "return load(function() i = i + 1 return p[i] end, '=chunk')()"),
       Eval("return loadstring('return 1 +', 'x')"), Eval("return {loadstring('return 6 * 7')()}"),
       Eval("local f, e = loadstring('return +') return e")},
      false);
  ExpectAlive(s.ours);
}

// CVE-2022-24736: converting a returned table ran its metatable, and an __index that raised
// panicked the interpreter ("PANIC: unprotected error in call to Lua API"). Tables are read raw.
TEST(HardeningLua, ReturnedTablesAreReadRaw) {
  lua_diff::Servers s;
  const std::string raising = "setmetatable({}, {__index = function() error('boom') end})";
  lua_diff::Compare(
      s,
      {Eval("return _G"), Eval("return " + raising), Eval("return {1, 2, " + raising + "}"),
       Eval("return {err = " + raising + "}"), Eval("return {ok = " + raising + "}"),
       Eval("return setmetatable({1}, {__index = function(t, k) return k end})"),
       Eval("return setmetatable({}, {__index = {1, 2, 3}})"), Eval("return {_G, string}")},
      false);
  // RESP3 forms read their fields raw too.
  lua_diff::Compare(
      s,
      {Eval("redis.setresp(3) return {map = " + raising + "}"),
       Eval("return {double = " + raising + "}"),
       Eval("return {verbatim_string = " + raising + "}"), Eval("return {set = {a = true}}")},
      true);
  ExpectAlive(s.ours);
}

// A table that contains itself: nested arrays down to the Lua stack's limit, then the error,
// as in Redis (whose stack holds a slot or two more by then, so its nesting ends a level or
// two sooner).
TEST(HardeningLua, SelfContainingTablesStopAtTheStackLimit) {
  lua_diff::Servers s;
  auto depth = [](const std::string& raw) {
    size_t n = 0;
    while (raw.compare(n * 4, 4, "*1\r\n") == 0) n++;
    EXPECT_EQ(raw.substr(n * 4), "-ERR reached lua stack limit\r\n");
    return n;
  };
  // The reply's bytes as they come (the test client's parser recurses once per level).
  auto raw = [](int port) {
    const std::string end = "-ERR reached lua stack limit\r\n";
    auto fd = net::ConnectTcp("127.0.0.1", port, 5000);
    EXPECT_TRUE(fd.ok());
    if (!fd.ok()) return std::string();
    std::string req = RespClient::Encode(Eval("local t = {} t[1] = t return t"));
    EXPECT_EQ(write(fd->get(), req.data(), req.size()), static_cast<ssize_t>(req.size()));
    std::string got;
    char buf[65536];
    while (got.size() < end.size() || got.compare(got.size() - end.size(), end.size(), end)) {
      pollfd p{fd->get(), POLLIN, 0};
      if (poll(&p, 1, 10000) <= 0) break;
      ssize_t n = read(fd->get(), buf, sizeof(buf));
      if (n <= 0) break;
      got.append(buf, static_cast<size_t>(n));
    }
    return got;
  };
  size_t want = depth(raw(s.redis.port())), got = depth(raw(s.ours.port()));
  EXPECT_GT(want, 7000u);
  EXPECT_NEAR(static_cast<double>(got), static_cast<double>(want), 3);
  ExpectAlive(s.ours);
}

// CVE-2022-24735 and CVE-2025-46818: a script that changes what the next script (another user's)
// sees, through the globals, a library or the metatable every string shares. All of them are
// read-only, as in Redis; the next script sees the real string library.
TEST(HardeningLua, SharedTablesAreReadOnly) {
  lua_diff::Servers s;
  lua_diff::Compare(
      s,
      {Eval("getmetatable('').__index.upper = function() return 'x' end return 1"),
       Eval("getmetatable('').__index = {} return 1"),
       Eval("local m = getmetatable('') m.__index = {} return 1"),
       Eval("rawset(getmetatable(''), '__index', {}) return 1"),
       Eval("setmetatable(getmetatable(''), {}) return 1"), Eval("string.upper = nil return 1"),
       Eval("rawset(string, 'upper', print) return 1"), Eval("table.insert(string, 1) return 1"),
       Eval("_G.redis = {} return 1"), Eval("rawset(_G, 'KEYS', {}) return 1"),
       Eval("redis.call = function() return 'x' end return 1"),
       Eval("local mt = getmetatable('') return tostring(rawequal(mt.__index, string))"),
       Eval("return type(getmetatable(getmetatable('')))"), Eval("return ('a'):upper()")},
      false);
  ExpectAlive(s.ours);
}

// An error raised with a table whose metatable raises: the error's fields are read raw, so the
// engine reports the script's failure instead of panicking.
TEST(HardeningLua, ErrorTablesWithRaisingMetatables) {
  ServerProcess s(ServerProcess::Kind::kKvstore);
  RespClient c(s.port());
  Reply r = c.Call(Eval("error(setmetatable({}, {__index = function() error('x') end}))"));
  EXPECT_TRUE(r.is_error()) << r.Debug();
  r = c.Call(Eval("error(setmetatable({}, {__newindex = function() error('x') end}))"));
  EXPECT_TRUE(r.is_error()) << r.Debug();
  ExpectAlive(s);
}

// Tables that hold each other many times over: 2^64 elements if written out. The reply stops at
// its budget with an error; the server stays small and serves everyone.
TEST(HardeningLua, RepliesThatExplodeStopAtTheirBudget) {
  ServerProcess s(ServerProcess::Kind::kKvstore);
  RespClient c(s.port());
  Reply r = c.Call(Eval("local t = {'x'} for i = 1, 64 do t = {t, t} end return t"));
  ASSERT_TRUE(r.is_error()) << r.Debug().substr(0, 200);
  EXPECT_NE(r.str.find("more elements than its values hold"), std::string::npos) << r.str;
  r =
      c.Call(Eval("redis.setresp(3) local t = {'x'} for i = 1, 64 do t = {map = {a = t, b = t}} "
                  "end return t"));
  ASSERT_TRUE(r.is_error());
  // One long string in many slots: 100 slots of 16 MiB would be a reply of 1.6 GiB.
  r =
      c.Call(Eval("local s = string.rep('x', 16 * 1024 * 1024) local t = {} "
                  "for i = 1, 100 do t[i] = s end return t"));
  ASSERT_TRUE(r.is_error()) << r.Debug().substr(0, 200);
  EXPECT_NE(r.str.find("more bytes than its values hold"), std::string::npos) << r.str;
  ExpectAlive(s);
  // A large tree is not refused: its elements are all in the interpreter's memory.
  r = c.Call(Eval("local t = {} for i = 1, 200000 do t[i] = {i, tostring(i)} end return t"));
  ASSERT_EQ(r.type, '*');
  EXPECT_EQ(r.elems.size(), 200000u);
}

// A C function asked to build a value past proto-max-bulk-len fails with Lua's memory error,
// where it would otherwise grow the server (beyond SCRIPT KILL's reach: no Lua instruction runs
// meanwhile) until it ran out of memory.
TEST(HardeningLua, SingleAllocationsAreBoundedByProtoMaxBulkLen) {
  ServerProcess s(ServerProcess::Kind::kKvstore);
  // The 10^12-byte request builds strings up to the limit before it is refused: about 12 s on
  // a 2-core machine, so the client waits far longer than that.
  RespClient c(s.port(), 180000);
  ASSERT_EQ(c.Raw({"CONFIG", "SET", "proto-max-bulk-len", "2mb"}), "+OK\r\n");
  Reply r = c.Call(Eval("return #string.rep('x', 3 * 1024 * 1024)"));
  ASSERT_TRUE(r.is_error()) << r.Debug();
  EXPECT_NE(r.str.find("not enough memory"), std::string::npos) << r.str;
  EXPECT_EQ(c.Call(Eval("return #string.rep('x', 1024 * 1024)")).integer, 1024 * 1024);
  ASSERT_EQ(c.Raw({"CONFIG", "SET", "proto-max-bulk-len", "512mb"}), "+OK\r\n");
  EXPECT_EQ(c.Call(Eval("return #string.rep('x', 3 * 1024 * 1024)")).integer, 3 * 1024 * 1024);
  // 10^12 bytes asked of the default limit.
  r = c.Call(Eval("return #string.rep(string.rep('x', 1000000), 1000000)"));
  ASSERT_TRUE(r.is_error()) << r.Debug();
  EXPECT_NE(r.str.find("not enough memory"), std::string::npos) << r.str;
  ExpectAlive(s);
}

// The same reproductions through FUNCTION LOAD and FCALL, the second interpreter.
TEST(HardeningLua, FunctionsAreHardenedAlike) {
  lua_diff::Servers s;
  const std::string lib =
      "#!lua name=hard\n"
      "redis.register_function('g', function() return _G end)\n"
      "redis.register_function('unpack', function() return {unpack({1}, -2, 2147483647)} end)\n"
      "redis.register_function('dump', function()\n"
      "  local f, e = loadstring(string.dump(function() return 1 end))\n"
      "  return {tostring(f), e}\n"
      "end)\n"
      "redis.register_function('tohex', function() return bit.tohex(65535, -2147483648) end)\n"
      "redis.register_function('json', function()\n"
      "  return cjson.encode({cjson.decode('[1,\\\"\\\\u00e9\\\",{}]'), string.rep('x', 3)})\n"
      "end)\n"
      "redis.register_function('meta', function()\n"
      "  return setmetatable({}, {__index = function() error('boom') end})\n"
      "end)\n";
  CompareReplies(s,
                 {{"FUNCTION", "FLUSH"},
                  {"FUNCTION", "LOAD", lib},
                  {"FCALL", "g", "0"},
                  {"FCALL", "unpack", "0"},
                  {"FCALL", "dump", "0"},
                  {"FCALL", "meta", "0"},
                  {"FCALL", "tohex", "0"},
                  {"FCALL", "json", "0"},
                  {"FUNCTION", "LOAD",
                   "#!lua name=bad\nerror(setmetatable({}, {__index = function() error('x') "
                   "end}))"},
                  {"FUNCTION", "LOAD", "#!lua name=bin\nreturn loadstring(string.dump(print))"}},
                 false);
  ExpectAlive(s.ours);
}

// CVE-2025-49844: a collection while the parser works must not free the chunk's name. Stress
// the collector around loads of large sources under every name the engine and scripts use.
TEST(HardeningLua, CollectionsDuringLoadsAreSafe) {
  ServerProcess s(ServerProcess::Kind::kKvstore);
  RespClient c(s.port());
  const std::string script =
      "local src = 'local a = {' .. string.rep('\"' .. string.rep('s', 40) .. '\",', 20000) .. "
      "'} return #a'\n"
      "local n = 0\n"
      "for i = 1, 5 do\n"
      "  local junk = {} for j = 1, 2000 do junk[j] = string.rep('j', 100) .. j end\n"
      "  collectgarbage('collect')\n"
      "  n = n + loadstring(src)() + loadstring(src, 'chunk' .. i)()\n"
      "  n = n + load(function() local s = src src = nil return s end)()\n"
      "  src = src or ('local a = {' .. string.rep('1,', 20000) .. '} return #a')\n"
      "end\n"
      "return n";
  Reply r = c.Call(Eval(script));
  EXPECT_EQ(r.type, ':') << r.Debug();
  EXPECT_EQ(r.integer, 5 * 3 * 20000);
  for (int i = 0; i < 20; i++) {
    ASSERT_EQ(c.Raw({"SCRIPT", "FLUSH"}), "+OK\r\n");
    ASSERT_EQ(c.Call(Eval("collectgarbage('collect') return " + std::to_string(i))).integer, i);
  }
  ExpectAlive(s);
}

}  // namespace
}  // namespace kv::test
