// Lua scripting end to end, differentially, as in scripting_test.cc: the sandbox (globals,
// read-only tables, what is left of the standard library, math.random's redisLrand48 sequence),
// cjson and bit, struct and cmsgpack, the script cache, and the data a script writes, each
// case's reply bytes on kvstore expected to be those of Debian's redis-server (7.0.15).
//
// Every case was tried against a live redis-server first and is deterministic there: nothing
// depends on hash order (maps and sets have one member), the time, or addresses. Each TEST
// starts one server of each kind; each group begins with FLUSHALL and SCRIPT FLUSH.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/e2e/scripting_util.h"
#include "tests/support/process.h"
#include "tests/support/script_diff.h"

namespace kv::test {
namespace {

using namespace lua_diff;

// ---------------------------------------------------------------------------------------------
// The sandbox.
const std::vector<Cmd> kSandbox = {
    // math.random is Redis' redisLrand48: the first calls of a fresh server, then seeded. The
    // state carries over from one script to the next (SCRIPT FLUSH does not reset it).
    Eval(R"(return {math.random(1000), math.random(1000)})"),
    Eval(R"(return tostring(math.random()))"),
    Eval(R"(math.randomseed(42) return {math.random(1000), math.random(1000), math.random(1000)})"),
    Eval(R"(math.randomseed(42) return math.random(1000))"),
    Eval(R"(return math.random(1000))"),
    Eval(R"(math.randomseed(7) return {math.random(), math.random(10), math.random(5,20)})"),
    Eval(R"(math.randomseed(7) return tostring(math.random()))"),
    {"SET", "s", "str"},
    // Globals: no new ones, reading an undefined one is an error.
    Eval(R"(x = 1)"),
    Eval(R"(_G.x = 1)"),
    Eval(R"(_G['y'] = 2)"),
    Eval(R"(return y)"),
    Eval(R"(return undefinedvar)"),
    Eval(R"(local t = {} return t.x)"),
    Eval(R"(rawset(_G, 'x', 1) return x)"),
    Eval(R"(setmetatable(_G, nil) x = 1 return x)"),
    Eval(R"(setmetatable(_G, {}) return 1)"),
    Eval(R"(return getmetatable(_G) ~= nil)"),
    Eval(R"(return rawget(_G,'zz'))"),
    Eval(R"(local t = setmetatable({}, {__index = function() return 1 end}) return t.x)"),
    // What is not there.
    Eval(R"(return type(os))"),
    Eval(R"(return type(io))"),
    Eval(R"(return type(loadfile))"),
    Eval(R"(return type(dofile))"),
    Eval(R"(return type(print))"),
    Eval(R"(return type(require))"),
    Eval(R"(return type(module))"),
    Eval(R"(return type(debug))"),
    Eval(R"(return type(package))"),
    Eval(R"(return type(newproxy))"),
    Eval(R"(return type(getfenv))"),
    Eval(R"(return type(setfenv))"),
    Eval(R"(return os.time())"),
    Eval(R"(return io.open('/etc/passwd'))"),
    Eval(R"(print('x'))"),
    Eval(R"(return dofile('/etc/passwd'))"),
    Eval(R"(require('x'))"),
    // What is.
    Eval(
        R"(return {type(gcinfo), type(load), type(loadstring), type(coroutine), type(collectgarbage), type(rawset), type(rawget), type(rawequal), type(setmetatable), type(getmetatable), type(pcall), type(xpcall), type(unpack), type(select), type(next), type(pairs), type(ipairs), type(tonumber), type(tostring), type(assert), type(error), type(_G), type(_VERSION), type(string), type(math), type(table), type(redis), type(KEYS), type(ARGV)})"),
    Eval(R"(return type(cjson))"),
    Eval(R"(return type(bit))"),
    Eval(R"(return type(struct))"),
    Eval(R"(return type(cmsgpack))"),
    Eval(R"(return _VERSION)"),
    Eval(R"(local t = {} for k in pairs(redis) do t[#t+1] = k end table.sort(t) return t)"),
    Eval(R"(local t = {} for k in pairs(_G) do t[#t+1] = k end table.sort(t) return t)"),
    Eval(R"(local t = {} for k in pairs(string) do t[#t+1] = k end table.sort(t) return t)"),
    Eval(R"(local t = {} for k in pairs(math) do t[#t+1] = k end table.sort(t) return t)"),
    Eval(R"(local t = {} for k in pairs(table) do t[#t+1] = k end table.sort(t) return t)"),
    Eval(R"(local t = {} for k in pairs(coroutine) do t[#t+1] = k end table.sort(t) return t)"),
    Eval(R"(local t = {} for k in pairs(cjson) do t[#t+1] = k end table.sort(t) return t)"),
    Eval(R"(local t = {} for k in pairs(bit) do t[#t+1] = k end table.sort(t) return t)"),
    // Library tables are read-only.
    Eval(R"(string.x = 1 return 1)"),
    Eval(R"(string.len = nil return 1)"),
    Eval(R"(math.pi = 3 return 1)"),
    Eval(R"(table.insert = 1)"),
    Eval(R"(redis.call = 1)"),
    Eval(R"(redis.x = 1)"),
    Eval(R"(cjson.encode = nil)"),
    Eval(R"(bit.band = nil)"),
    // loadstring works (in the same sandbox).
    Eval(R"(local f = loadstring('return 1+1') return f())"),
    Eval(R"(return loadstring('return +'))"),
    Eval(R"(local f, e = loadstring('return +') return e)"),
    Eval(R"(local f = loadstring('x = 5') f() return 1)"),
    // KEYS and ARGV.
    {"EVAL", R"(return {KEYS[1], KEYS[2], ARGV[1], ARGV[2], #KEYS, #ARGV})", "2", "k1", "k2", "a1",
     "a2"},
    {"EVAL", R"(return {#KEYS, #ARGV})", "0", "a", "b"},
    {"EVAL", R"(return KEYS)", "2", "x", "y"},
    {"EVAL", R"(return ARGV)", "0", "x", "y"},
    Eval(R"(return #KEYS)"),
    // Numbers as strings.
    Eval(
        R"(return {tostring(1), tostring(1.5), tostring(1e100), tostring(2^53), tostring(1/3), tostring(100), tostring(1e15), tostring(123456789012), tostring(1e14), tostring(1e16), tostring(0.1), tostring(-5), tostring(math.huge), tostring(-math.huge), tostring(math.sqrt(2)), 1 .. ''})"),
    Eval(R"(return {tostring(nil), tostring(true), tostring(false)})"),
    // The rest of the standard library.
    Eval(R"(return string.format('%5.2f|%d|%s|%x', 3.14159, 42, 'hi', 255))"),
    Eval(R"(return {string.rep('ab', 3), string.upper('abc'), ('x'):rep(3), #'abc'})"),
    Eval(R"(return {string.byte('A'), string.char(72,105)})"),
    Eval(R"(return {string.find('hello world', 'o w')})"),
    Eval(R"(return string.gsub('hello', 'l', 'L'))"),
    Eval(R"(return table.concat({1,2,3}, ','))"),
    Eval(R"(return {math.floor(3.7), math.max(1,5,3)})"),
    Eval(
        R"(return {tonumber('0x10'), tonumber('  12  '), tonumber('1e2'), type(tonumber('abc'))})"),
    Eval(R"(return {select('#', 1, 2, 3), unpack({1,2,3})})"),
    // pcall: errors from redis.call (and error tables) come back as their message.
    Eval(R"(local ok, e = pcall(error, 'x') return {tostring(ok), e})"),
    Eval(R"(local ok, e = pcall(function() error('x') end) return {tostring(ok), e})"),
    Eval(R"(local ok, e = pcall(function() local a = nil; return a.b end) return e)"),
    Eval(R"(local ok, e = pcall(redis.call, 'lpush', 's', 'x') return {tostring(ok), type(e), e})"),
    Eval(R"(local ok, e = pcall(redis.call, 'lpush', 's', 'x') return e)"),
    Eval(R"(local ok, e = pcall(redis.call, 'nosuch') return {tostring(ok), e})"),
    Eval(R"(local ok, e = pcall(redis.call) return {tostring(ok), e})"),
    Eval(R"(local ok, e = pcall(error, {err='MY x'}) return {tostring(ok), type(e), e})"),
    Eval(R"(local ok, e = pcall(error, {foo='MY x'}) return {tostring(ok), type(e), e.foo})"),
    Eval(R"(return {pcall(redis.call, 'get', 'nokey')})"),
    Eval(R"(local ok, v = pcall(redis.call, 'set', 'pk', 'v') return {tostring(ok), v.ok})"),
    // The rest of the redis table.
    Eval(R"(return redis.log(redis.LOG_WARNING, 'hello from the scripting test'))"),
    Eval(R"(return redis.log(99, 'x'))"),
    Eval(R"(return redis.log())"),
    Eval(R"(return redis.replicate_commands())"),
    Eval(R"(return redis.set_repl(redis.REPL_ALL))"),
    Eval(R"(return redis.set_repl(99))"),
    Eval(
        R"(return {redis.LOG_DEBUG, redis.LOG_VERBOSE, redis.LOG_NOTICE, redis.LOG_WARNING, redis.REPL_NONE, redis.REPL_AOF, redis.REPL_REPLICA, redis.REPL_SLAVE, redis.REPL_ALL})"),
    Eval(R"(return {redis.REDIS_VERSION, redis.REDIS_VERSION_NUM})"),
    Eval(R"(return redis.breakpoint())"),
    Eval(R"(return redis.debug('x'))"),
    Eval(R"(return redis.acl_check_cmd('get','x'))"),
    Eval(R"(return redis.acl_check_cmd('nosuch'))"),
    Eval(R"(return redis.acl_check_cmd())"),
    Eval(R"(redis.setresp(4))"),
    Eval(R"(redis.setresp())"),
    Eval(R"(redis.setresp('x') return 1)"),
};

TEST(ScriptingDiff, Sandbox) {
  if (!HaveRedisServer()) GTEST_SKIP() << "redis-server is not installed";
  Servers s;
  Compare(s, kSandbox, false);
}

// ---------------------------------------------------------------------------------------------
// cjson, bit and redis.sha1hex.
const std::vector<Cmd> kLibraries = {
    Eval(R"(return cjson.encode({a=1}))"),
    Eval(R"(return cjson.encode({1,2,3}))"),
    Eval(R"(return cjson.encode({1.5, 10, -3, 1e20, 0.1, 1/3}))"),
    Eval(R"(return cjson.encode({a={b={1,'x',true,false}}}))"),
    Eval(R"(return cjson.encode(cjson.null))"),
    Eval(R"(return cjson.encode({a=cjson.null}))"),
    Eval(R"(return cjson.encode({}))"),
    Eval(R"(return cjson.encode('a"b\\c\n/'))"),
    Eval(R"(return cjson.encode('\1\127\200'))"),
    Eval(R"(return cjson.encode({1, nil, 3}))"),
    Eval(R"(return cjson.encode({[1]=1,[5]=3}))"),
    Eval(R"(return cjson.encode(function() end))"),
    Eval(R"(return cjson.encode({[true]=1}))"),
    Eval(R"(return cjson.encode(1/0))"),
    Eval(R"(local t = {} t[1] = t return cjson.encode(t))"),
    Eval(R"(return cjson.encode())"),
    Eval(R"(return {cjson._NAME, cjson._VERSION})"),
    Eval(R"(return cjson.decode('[1,2,3]'))"),
    Eval(R"(return cjson.decode('[1.5,10,"x",true,false]'))"),
    Eval(R"(return cjson.decode('{"a":1}').a)"),
    Eval(
        R"(local t = cjson.decode('{"a":[1,2,{"b":null}]}') return {type(t.a), #t.a, t.a[3].b == cjson.null, tostring(t.a[1])})"),
    Eval(R"(return cjson.encode(cjson.decode('{"k":[1,2.5,"s",null,true]}')))"),
    Eval(R"(return cjson.encode(cjson.decode('[1e2, -0, 12345678901234]')))"),
    Eval(R"(return tostring(cjson.decode('123456789012345678')))"),
    Eval(R"(return {type(cjson.decode('null')), tostring(cjson.decode('null') == cjson.null)})"),
    Eval(R"(return cjson.decode('"\\u0041"'))"),
    Eval(R"(return cjson.decode('["\\ud83d\\ude00"]')[1])"),
    Eval(R"(return cjson.decode(1))"),
    Eval(R"(return cjson.decode('{bad'))"),
    Eval(R"(return cjson.decode(''))"),
    Eval(R"(return cjson.decode('[1,2'))"),
    Eval(R"(return cjson.decode('nul'))"),
    Eval(R"(return cjson.decode('1 2'))"),
    Eval(R"(return cjson.decode())"),
    Eval(
        R"(return {bit.band(0xff, 0x0f), bit.bor(1, 2, 4), bit.bxor(5, 3), bit.lshift(1, 10), bit.rshift(1024, 3), bit.arshift(-256, 4), bit.bnot(0)})"),
    Eval(R"(return {bit.tohex(255), bit.tohex(255, 2), bit.tohex(-1), bit.tohex(255, -4)})"),
    Eval(
        R"(return {bit.tobit(2^32 + 5), bit.tobit(0xffffffff), bit.rol(1, 33), bit.ror(1, 1), bit.bswap(0x12345678), bit.lshift(1, 31)})"),
    Eval(R"(return bit.band())"),
    Eval(R"(return bit.tohex('x'))"),
    Eval(R"(return redis.sha1hex(''))"),
    Eval(R"(return redis.sha1hex('return 1'))"),
    Eval(R"(return redis.sha1hex(123))"),
    Eval(R"(return redis.sha1hex())"),
};

TEST(ScriptingDiff, Libraries) {
  if (!HaveRedisServer()) GTEST_SKIP() << "redis-server is not installed";
  Servers s;
  Compare(s, kLibraries, false);
}

// ---------------------------------------------------------------------------------------------
// struct and cmsgpack (separate, so that their absence fails only here).
const std::vector<Cmd> kStructCmsgpack = {
    Eval(R"(local t = {} for k in pairs(struct) do t[#t+1] = k end table.sort(t) return t)"),
    Eval(R"(local t = {} for k in pairs(cmsgpack) do t[#t+1] = k end table.sort(t) return t)"),
    Eval(R"(return struct.pack('>I2', 258))"),
    Eval(R"(return {struct.unpack('>I2', '\1\2')})"),
    Eval(R"(return {struct.unpack('<i4', struct.pack('<i4', -5))})"),
    Eval(R"(return struct.size('>iHb'))"),
    Eval(R"(return {struct.unpack('s', struct.pack('s', 'hi'))})"),
    Eval(R"(return struct.pack('bBhH', 1, 2, 3, 4))"),
    Eval(R"(return {struct.unpack('>d', struct.pack('>d', 1.5))})"),
    Eval(R"(return tostring(struct.unpack('>d', struct.pack('>d', 1.5))))"),
    Eval(R"(return struct.pack('c0', 'abc'))"),
    Eval(R"(return {struct.unpack('i2i2', struct.pack('i2i2', 1, 2))})"),
    Eval(R"(return struct.pack('x'))"),
    Eval(R"(return struct.pack('>I2'))"),
    Eval(R"(return struct.pack('q'))"),
    Eval(R"(return cmsgpack.pack(1, 'a', {1,2}, {a=1}, true, 1.5, -1, 300))"),
    Eval(R"(return {cmsgpack.unpack(cmsgpack.pack(1, 'a', {1,2}, true))})"),
    Eval(R"(local t = cmsgpack.unpack(cmsgpack.pack({a=1})) return t.a)"),
    Eval(R"(return tostring(cmsgpack.unpack(cmsgpack.pack(1.5))))"),
    Eval(R"(return cmsgpack.pack({}))"),
    Eval(R"(return cmsgpack.pack(nil))"),
    Eval(R"(return cmsgpack.pack(string.rep('x', 40)))"),
    Eval(R"(return cmsgpack.pack(2^40, -2^40, 65536, -129))"),
    Eval(R"(return cmsgpack.unpack(''))"),
    Eval(R"(return cmsgpack.unpack('\193'))"),
    Eval(R"(return cmsgpack.pack())"),
    Eval(R"(return {cmsgpack.unpack_one(cmsgpack.pack(1,2))})"),
    Eval(R"(return {cmsgpack.unpack_limit(cmsgpack.pack(1,2,3), 2)})"),
};

TEST(ScriptingDiff, StructAndCmsgpack) {
  if (!HaveRedisServer()) GTEST_SKIP() << "redis-server is not installed";
  Servers s;
  Compare(s, kStructCmsgpack, false);
}

// ---------------------------------------------------------------------------------------------
// The script cache.
const std::vector<Cmd> kScriptCache = {
    {"SCRIPT", "LOAD", "return 'loaded'"},
    {"EVALSHA", "b534286061d4b9e4026607613b95c06c06015ae8", "0"},
    {"EVALSHA", "B534286061D4B9E4026607613B95C06C06015AE8", "0"},
    {"EVALSHA_RO", "b534286061d4b9e4026607613b95c06c06015ae8", "0"},
    {"SCRIPT", "EXISTS", "b534286061d4b9e4026607613b95c06c06015ae8",
     "0000000000000000000000000000000000000000", "B534286061D4B9E4026607613B95C06C06015AE8", "abc"},
    {"SCRIPT", "FLUSH"},
    {"SCRIPT", "EXISTS", "b534286061d4b9e4026607613b95c06c06015ae8"},
    {"EVALSHA", "b534286061d4b9e4026607613b95c06c06015ae8", "0"},
    // EVAL caches what it runs.
    {"EVAL", "return KEYS[1]..ARGV[1]", "1", "k", "v"},
    {"EVALSHA", "3783a90bf1f43b15a1e06c4e7664da956ed959d9", "1", "a", "b"},
    {"SCRIPT", "EXISTS", "3783a90bf1f43b15a1e06c4e7664da956ed959d9"},
    // ...but not what does not compile, nor a bad shebang.
    {"EVAL", "return +", "0"},
    {"SCRIPT", "EXISTS", "1fd5091818ea327c4e55ed84125fdc6179ae44cf"},
    {"EVAL", "#!lua flags=bogus\nreturn 1", "0"},
    {"SCRIPT", "EXISTS", "2c629bb5a96608e69af706765b522dcf69f1375e"},
    // A loaded script keeps its shebang flags.
    {"SCRIPT", "LOAD", "#!lua flags=no-writes\nreturn redis.call('set','x','1')"},
    {"EVALSHA", "6496c2741353a8e9e5fd8f1f4205c2149edef733", "0"},
    {"EVALSHA_RO", "6496c2741353a8e9e5fd8f1f4205c2149edef733", "0"},
    // redis.sha1hex agrees; loading twice is fine.
    {"SCRIPT", "EXISTS", "e0e1f9fabfc9d4800c877a703b823ac0578ff8db"},
    Eval(R"(return redis.sha1hex('return 1') == 'e0e1f9fabfc9d4800c877a703b823ac0578ff8db')"),
    {"SCRIPT", "LOAD", "return 1"},
    {"SCRIPT", "LOAD", "return 1"},
    {"SCRIPT", "EXISTS", "e0e1f9fabfc9d4800c877a703b823ac0578ff8db",
     "3783a90bf1f43b15a1e06c4e7664da956ed959d9"},
    {"EVALSHA", "e0e1f9fabfc9d4800c877a703b823ac0578ff8db", "0"},
    {"EVALSHA", "e0e1f9fabfc9d4800c877a703b823ac0578ff8db", "2", "a", "b", "c"},
    // FLUSH's modes.
    {"SCRIPT", "FLUSH", "SYNC"},
    {"SCRIPT", "EXISTS", "e0e1f9fabfc9d4800c877a703b823ac0578ff8db"},
    {"SCRIPT", "LOAD", "return 1"},
    {"SCRIPT", "FLUSH", "ASYNC"},
    {"SCRIPT", "FLUSH", "async"},
    {"SCRIPT", "EXISTS", "e0e1f9fabfc9d4800c877a703b823ac0578ff8db"},
    {"SCRIPT", "HELP"},
    {"SCRIPT", "help"},
    {"script", "load", "return 1"},
    {"script", "exists", "E0E1F9FABFC9D4800C877A703B823AC0578FF8DB"},
};

TEST(ScriptingDiff, ScriptCache) {
  if (!HaveRedisServer()) GTEST_SKIP() << "redis-server is not installed";
  Servers s;
  Compare(s, kScriptCache, false);
}

// ---------------------------------------------------------------------------------------------
// What scripts do to the data.
const std::vector<Cmd> kDataEffects = {
    {"EVAL",
     R"(redis.call('SET', KEYS[1], ARGV[1]) redis.call('INCR', KEYS[2]) redis.call('INCRBY', KEYS[2], 10) redis.call('LPUSH', KEYS[3], 'a', 'b') redis.call('HSET', KEYS[4], 'f', 'v') return redis.call('DBSIZE'))",
     "4", "str", "cnt", "lst", "hsh", "hello"},
    {"GET", "str"},
    {"GET", "cnt"},
    {"LRANGE", "lst", "0", "-1"},
    {"HGETALL", "hsh"},
    {"TYPE", "hsh"},
    {"EVAL", R"(return redis.call('get', KEYS[1]))", "1", "str"},
    {"EVALSHA", "4e6d8fc8bb01276962cce5371fa795a7763657ae", "1", "cnt"},
    // SELECT inside a script stays inside it.
    Eval(
        R"(redis.call('select', 1) redis.call('set', 'indb1', 'yes') return redis.call('get', 'indb1'))"),
    {"GET", "indb1"},
    {"SELECT", "1"},
    {"GET", "indb1"},
    {"SELECT", "0"},
    Eval(R"(redis.call('select', 1) return 1)"),
    {"SET", "after", "0"},
    {"DBSIZE"},
    Eval(R"(return redis.call('select', 'x'))"),
    Eval(R"(return redis.call('select', 99))"),
    Eval(R"(return redis.pcall('select', 99))"),
    // KEYS inside a script.
    Eval(R"(local k = redis.call('KEYS', '*') table.sort(k) return k)"),
    Eval(R"(return redis.call('KEYS', 'str'))"),
    Eval(R"(return redis.call('EXISTS', 'str', 'nokey'))"),
    Eval(R"(return redis.call('DEL', 'str'))"),
    {"GET", "str"},
    // Writes before an error stay.
    Eval(R"(redis.call('SET','x','1') error('after write'))"),
    {"GET", "x"},
    Eval(R"(redis.call('SET','y','1') return redis.call('INCR','y') + 0.5)"),
    {"GET", "y"},
    Eval(R"(redis.call('SET', 'big', string.rep('x', 100)) return redis.call('STRLEN','big'))"),
    Eval(R"(return {redis.call('EXPIRE','cnt', 100), redis.call('PERSIST','cnt')})"),
    // Numbers as command arguments (%.17g).
    Eval(R"(return redis.call('RPUSH', 'l2', 1, 2.5, -3))"),
    {"LRANGE", "l2", "0", "-1"},
    Eval(R"(return redis.call('set', 'n', 2^53) and redis.call('get', 'n'))"),
    Eval(R"(return redis.call('set', 'n', 0.1) and redis.call('get', 'n'))"),
    Eval(R"(return redis.call('set', 'n', 1/3) and redis.call('get', 'n'))"),
    Eval(R"(return redis.call('set', 'n', -0) and redis.call('get', 'n'))"),
    Eval(R"(return redis.call('set', 'n', 1e20) and redis.call('get', 'n'))"),
    Eval(R"(return redis.call('set', 'n', -0.5) and redis.call('get', 'n'))"),
    Eval(R"(return redis.call('set', 'n', 123456789012345) and redis.call('get', 'n'))"),
    Eval(R"(return redis.call('GET', 1))"),
    Eval(R"(return {redis.call('ping'), redis.call('echo', 'x')})"),
    {"DBSIZE"},
};

TEST(ScriptingDiff, DataEffects) {
  if (!HaveRedisServer()) GTEST_SKIP() << "redis-server is not installed";
  Servers s;
  Compare(s, kDataEffects, false);
  Compare(s, kDataEffects, true);
}

}  // namespace
}  // namespace kv::test
