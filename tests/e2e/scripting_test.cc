// Lua scripting end to end, differentially: every case runs on Debian's redis-server (7.0.15)
// and on kvstore, and the exact reply bytes must match. EVAL, EVALSHA, EVAL_RO, EVALSHA_RO and
// SCRIPT LOAD/EXISTS/FLUSH/HELP; Lua values turned into replies (RESP2 and RESP3 clients, with
// and without redis.setresp(3)), replies turned into Lua values, and error messages byte for
// byte (compile errors, runtime errors, errors raised through redis.call, the script's sha and
// line). The sandbox, the libraries, the script cache and the data a script writes are in
// scripting_sandbox_test.cc.
//
// Every case was tried against a live redis-server first and is deterministic there: nothing
// depends on hash order (maps and sets have one member), the time, or addresses. Each TEST
// starts one server of each kind; each group begins with FLUSHALL and SCRIPT FLUSH.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/support/process.h"
#include "tests/support/resp_client.h"
#include "tests/e2e/scripting_util.h"
#include "tests/support/script_diff.h"

namespace kv::test {
namespace {

using namespace lua_diff;

Cmd EvalRo(const std::string& body) { return {"EVAL_RO", body, "0"}; }

// Each body as it is, then again after redis.setresp(3).
std::vector<Cmd> PlainAndResp3(const std::vector<Cmd>& setup,
                               const std::vector<std::string>& bodies) {
  std::vector<Cmd> out = setup;
  for (const char* prefix : {"", "redis.setresp(3) "}) {
    for (const std::string& b : bodies) out.push_back(Eval(prefix + b));
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Lua values returned to the client.
const std::vector<Cmd> kReplies = {
    // Numbers: integers, floats truncated toward zero, beyond 2^53.
    Eval(R"(return 1)"),
    Eval(R"(return -7)"),
    Eval(R"(return 3.99)"),
    Eval(R"(return -3.99)"),
    Eval(R"(return 1.0)"),
    Eval(R"(return -0)"),
    Eval(R"(return 2^53)"),
    Eval(R"(return 2^62)"),
    Eval(R"(return 9007199254740993)"),
    Eval(R"(return {1.5, 2.7})"),
    // Strings.
    Eval(R"(return 'hello')"),
    Eval(R"(return '')"),
    Eval(R"(return 'a\0b')"),
    Eval(R"(return '1.5')"),
    Eval(R"(return 'x', 'y')"),
    // Booleans and nil (true is 1, false is a null: the script's protocol is RESP2).
    Eval(R"(return true)"),
    Eval(R"(return false)"),
    Eval(R"(return nil)"),
    // Tables: nested, empty, the array part ends at the first nil, other keys are ignored.
    Eval(R"(return {1,2,{3,'x',{4}},'y'})"),
    Eval(R"(return {})"),
    Eval(R"(return {1,2,nil,4})"),
    Eval(R"(return {1,2,3,nil,5,6})"),
    Eval(R"(local t = {} t[1]=1 t[3]=3 return t)"),
    Eval(R"(return {1,'a',x=1})"),
    Eval(R"(return {x=1})"),
    Eval(R"(return {1, {ok='x'}, {err='y'}, true, false})"),
    // Status and error tables.
    Eval(R"(return {ok='x'})"),
    Eval(R"(return {err='x'})"),
    Eval(R"(return {err='MYCODE x'})"),
    Eval(R"(return {ok=''})"),
    Eval(R"(return {err=''})"),
    Eval(R"(return {ok=1})"),
    Eval(R"(return {err=1})"),
    Eval(R"(return {ok={1}})"),
    Eval(R"(return {err=false})"),
    Eval(R"(return {err='e', ok='x'})"),
    Eval(R"(return {map={a=1}, ok='x'})"),
    Eval(R"(return redis.status_reply('FINE'))"),
    Eval(R"(return redis.error_reply('bad thing'))"),
    Eval(R"(return redis.error_reply('-bad thing'))"),
    Eval(R"(return redis.error_reply('MYERR bad thing'))"),
    Eval(R"(return redis.error_reply('x y'))"),
    Eval(R"(return redis.error_reply('ERR'))"),
    Eval(R"(return redis.error_reply(''))"),
    Eval(R"(return redis.error_reply('-'))"),
    // Without a string argument they return an error table rather than raising.
    Eval(R"(return redis.status_reply())"),
    Eval(R"(return redis.status_reply(5))"),
    Eval(R"(return redis.error_reply())"),
    // \r and \n in statuses and errors become spaces.
    Eval(R"(return redis.status_reply('a\r\nb'))"),
    Eval(R"(return {ok='a\r\nb'})"),
    Eval(R"(return {err='a\r\nb'})"),
    Eval(R"(return {err='a\nb'})"),
    // RESP3 types (RESP2 clients get their RESP2 forms).
    Eval(R"(return {double=1.5})"),
    Eval(R"(return {double=3})"),
    Eval(R"(return {double=0.1})"),
    Eval(R"(return {double=1e20})"),
    Eval(R"(return {double=1/0})"),
    Eval(R"(return {double=-1/0})"),
    Eval(R"(return {double='1.5'})"),
    Eval(R"(return {map={a=1}})"),
    Eval(R"(return {map={}})"),
    Eval(R"(return {map={a=nil}})"),
    Eval(R"(return {{map={a={1,2}}}})"),
    Eval(R"(return {set={a=true}})"),
    Eval(R"(return {set={}})"),
    Eval(R"(return {set={a=false}})"),
    Eval(R"(return {big_number='123'})"),
    Eval(R"(return {big_number='12\r\n3'})"),
    Eval(R"(return {verbatim_string={format='txt', string='hi'}})"),
    Eval(R"(return {verbatim_string={format='markdown', string='hi'}})"),
    Eval(R"(return {verbatim_string={format='mkd', string='h\r\ni'}})"),
    // The script's own protocol: booleans and nil under redis.setresp(3).
    Eval(R"(redis.setresp(3) return true)"),
    Eval(R"(redis.setresp(3) return false)"),
    Eval(R"(redis.setresp(3) return nil)"),
    Eval(R"(redis.setresp(3) return {true,false,1})"),
    Eval(R"(redis.setresp(3) return {double=1.5})"),
    Eval(R"(redis.setresp(3) return {map={a=1}})"),
    Eval(R"(redis.setresp(2) return true)"),
    Eval(R"(redis.setresp('3') return 1)"),
};

TEST(ScriptingDiff, RepliesToClients) {
  if (!HaveRedisServer()) GTEST_SKIP() << "redis-server is not installed";
  Servers s;
  Compare(s, kReplies, false);
  Compare(s, kReplies, true);
}

// ---------------------------------------------------------------------------------------------
// Replies of redis.call / redis.pcall as Lua values, in the script's RESP2 and after
// redis.setresp(3).
const std::vector<Cmd> kInLuaSetup = {
    {"SET", "s", "hello"},
    {"RPUSH", "l", "a", "b", "c"},
    {"ZADD", "z", "1.5", "m1", "2", "m2"},
    {"HSET", "h", "f", "v"},
    {"SADD", "st", "one"},
    {"XADD", "x", "1-1", "a", "1", "b", "2"},
    {"XADD", "x", "2-1", "c", "3"},
};
const std::vector<std::string> kInLuaBodies = {
    R"(local v = redis.call('GET','missing') return {type(v), tostring(v)})",
    R"(return redis.call('GET','missing'))",
    R"(return redis.call('HGET','h','nof'))",
    R"(local v = redis.call('INCR','cnt') return {type(v), v})",
    R"(local v = redis.call('GET','s') return {type(v), v})",
    R"(local v = redis.call('LRANGE','l',0,-1) return {type(v), #v, v[1], v[3]})",
    R"(return redis.call('LRANGE','nol',0,-1))",
    R"(local v = redis.call('LPOP','nol', 2) return {type(v), tostring(v)})",
    R"(return redis.call('LPOP','nol', 2))",
    R"(local v = redis.call('SET','k','v') return {type(v), type(v.ok), v.ok})",
    R"(return redis.call('SET','k','v'))",
    R"(return redis.call('PING'))",
    R"(return redis.call('TYPE','s'))",
    R"(return redis.call('ZRANGE','z',0,-1,'WITHSCORES'))",
    R"(return redis.call('ZRANGE','z',0,0,'WITHSCORES'))",
    R"(return redis.call('ZPOPMIN','nz'))",
    R"(return redis.call('ZMSCORE','z','m1','nope'))",
    R"(return redis.call('XRANGE','x','-','+'))",
    R"(local v = redis.pcall('INCR','s') return {type(v), v.err})",
    R"(return redis.pcall('INCR','s'))",
    R"(return redis.pcall('LPUSH','s','x'))",
    R"(local v = redis.pcall('LPUSH','s','x') return v.err)",
    R"(return redis.call('HGETALL','h'))",
    R"(local v = redis.call('HGETALL','h') return {type(v), type(v.map), v.map and v.map.f or v[1]})",
    R"(return redis.call('HRANDFIELD','h',1,'WITHVALUES'))",
    R"(return redis.call('SMEMBERS','st'))",
    R"(local v = redis.call('SMEMBERS','st') return {type(v), type(v.set), v.set and tostring(v.set.one) or v[1]})",
    R"(return redis.call('ZSCORE','z','m1'))",
    R"(local v = redis.call('ZSCORE','z','m1') return {type(v), type(v.double), tostring(v.double or v)})",
    R"(return redis.call('SISMEMBER','st','one'))",
    R"(local v = redis.call('SISMEMBER','st','one') return {type(v), tostring(v)})",
    R"(return redis.call('SISMEMBER','st','one') == 1)",
};

TEST(ScriptingDiff, RedisRepliesInLua) {
  if (!HaveRedisServer()) GTEST_SKIP() << "redis-server is not installed";
  Servers s;
  std::vector<Cmd> cmds = PlainAndResp3(kInLuaSetup, kInLuaBodies);
  Compare(s, cmds, false);
  Compare(s, cmds, true);
}

// ---------------------------------------------------------------------------------------------
// Errors, byte for byte.
const std::vector<Cmd> kErrors = {
    {"SET", "s", "str"},
    // Compile errors (no sha, no "script:" suffix).
    Eval(R"(return +)"),
    Eval(R"(return 'abc)"),
    Eval(R"(local x = = 1)"),
    Eval(" #!lua\nreturn 1"),
    // Runtime errors: the chunk position, the sha and the line.
    Eval(R"(error('boom'))"),
    Eval(R"(error('boom', 0))"),
    Eval(R"(error())"),
    Eval(R"(error(nil))"),
    Eval(R"(error(42))"),
    Eval(R"(error('a\nb'))"),
    Eval(R"(error('a\r\nb', 0))"),
    Eval("\nerror('line2')\n"),
    Eval("local x = 1\n\nerror('boom')"),
    Eval("local function f() error('deep') end\nlocal function g() f() end\ng()"),
    Eval(R"(local a = nil; return a.b)"),
    Eval(R"(return 1 + {})"),
    Eval(R"(return #nil)"),
    Eval(R"(return ('x')())"),
    Eval(R"(return nil .. 'x')"),
    Eval(R"(return string.format('%s', {}))"),
    // Error tables raised with error().
    Eval(R"(error({err='MY thing'}))"),
    Eval(R"(error({err='-MY thing'}))"),
    Eval(R"(error({err='ERR'}))"),
    Eval(R"(error({err=''}))"),
    Eval(R"(error({err='x'}) return 1)"),
    Eval(R"(error(redis.error_reply('CUSTOM failure')))"),
    // redis.call failures (raised, with the sha) and redis.pcall (returned, without).
    Eval(R"(return redis.call('nosuchcmd'))"),
    Eval(R"(return redis.pcall('nosuchcmd'))"),
    Eval(R"(return redis.call(1))"),
    Eval(R"(return redis.call('get'))"),
    Eval(R"(return redis.pcall('get'))"),
    Eval(R"(return redis.call('get','a','b'))"),
    Eval(R"(return redis.call('EXPIRE'))"),
    Eval(R"(return redis.call('lpush','s','x'))"),
    Eval(R"(return redis.pcall('lpush','s','x'))"),
    Eval("local x = 1\nredis.call('lpush','s','x')"),
    Eval("local x = 1\nlocal y = redis.call('nosuch')"),
    Eval(R"(return redis.call('SET','a','b','EX','x'))"),
    Eval(R"(return redis.pcall('SET','a','b','EX','x'))"),
    Eval(R"(return redis.call('SET','a','b','FOO'))"),
    Eval(R"(return redis.call())"),
    Eval(R"(return redis.pcall())"),
    Eval(R"(return redis.call('get', {}))"),
    Eval(R"(return redis.pcall('get', {}))"),
    Eval(R"(return redis.call('GET', 'a', {}))"),
    Eval(R"(return redis.call({'get'}))"),
    Eval(R"(return redis.call('set','a', true))"),
    Eval(R"(return redis.call('set','a', nil))"),
    Eval(R"(return redis.pcall('set','x', {}))"),
    // Commands scripts may not run.
    Eval(R"(return redis.call('multi'))"),
    Eval(R"(return redis.call('exec'))"),
    Eval(R"(return redis.call('watch','x'))"),
    Eval(R"(return redis.call('subscribe','ch'))"),
    Eval(R"(return redis.call('eval','return 1','0'))"),
    Eval(R"(return redis.call('EVAL_RO','return 1', 0))"),
    Eval(R"(return redis.call('script','load','return 1'))"),
    Eval(R"(return redis.call('blpop','nol', 0))"),
    Eval(R"(return redis.call('client','info'))"),
    Eval(R"(return redis.call('auth','x'))"),
    Eval(R"(return redis.call('hello'))"),
    Eval(R"(return redis.call('save'))"),
    Eval(R"(return redis.call('monitor'))"),
    Eval(R"(return redis.call('DEBUG','sleep','0'))"),
    // Writes from read-only scripts.
    EvalRo(R"(return redis.call('set','w','1'))"),
    EvalRo(R"(return redis.pcall('set','w','1'))"),
    EvalRo(R"(return redis.call('get','w'))"),
    EvalRo(R"(return redis.call('GET'))"),
    {"EVAL_RO", "return 1", "1", "s"},
    Eval("#!lua flags=no-writes\nreturn redis.call('set','w','1')"),
    Eval("#!lua flags=no-writes\nreturn redis.pcall('set','w','1')"),
    Eval("#!lua flags=no-writes\nlocal ok, e = pcall(redis.call, 'del', 's') return e"),
    Eval("#!lua flags=no-writes\nreturn redis.call('get','s')"),
    Eval("#!lua flags=no-writes\nreturn 1"),
    EvalRo("#!lua flags=no-writes\nreturn 1"),
    EvalRo("#!lua flags=allow-stale\nreturn redis.call('set','w','1')"),
    // Shebangs.
    Eval("#!lua flags=bogus\nreturn 1"),
    Eval("#!lua flags=no-writes,bogus\nreturn 1"),
    Eval("#!lua flags=no-writes,\nreturn 1"),
    Eval("#!python\nreturn 1"),
    Eval("#!luax\nreturn 1"),
    Eval("#!\nreturn 1"),
    Eval("#! lua\nreturn 1"),
    Eval("#!lua foo=bar\nreturn 1"),
    Eval("#!lua name=x\nreturn 1"),
    Eval("#!lua"),
    Eval("#!lua\nreturn 1"),
    Eval("#!lua\nreturn +"),
    Eval("#!lua\nerror('x')"),
    Eval("#!lua flags=\nreturn 1"),
    Eval("#!lua  flags=no-writes\nreturn 1"),
    Eval("#!lua flags=no-writes,allow-stale\nreturn 1"),
    Eval("#!lua flags=no-cluster\nreturn 1"),
    Eval("#!lua flags=allow-oom,allow-cross-slot-keys\nreturn 1"),
    Eval("#!lua flags=no-writes flags=allow-oom\nreturn 1"),
    // numkeys and arity.
    {"EVAL", "return 1", "-1"},
    {"EVAL", "return 1", "1"},
    {"EVAL", "return 1", "2", "a"},
    {"EVAL", "return 1", "x"},
    {"EVAL", "return 1", "1.5"},
    {"EVAL", "return 1", ""},
    {"EVAL", "return 1", "99999999999999999999"},
    {"EVAL", "return 1"},
    {"EVAL"},
    {"EVALSHA", "0000000000000000000000000000000000000000"},
    // EVALSHA of unknown scripts (any length), numkeys checked first.
    {"EVALSHA", "0000000000000000000000000000000000000000", "0"},
    {"EVALSHA", "abc", "0"},
    {"EVALSHA", "00000000000000000000000000000000000000000", "0"},
    {"EVALSHA_RO", "0000000000000000000000000000000000000000", "0"},
    {"EVALSHA", "0000000000000000000000000000000000000000", "-1"},
    {"EVALSHA", "0000000000000000000000000000000000000000", "x"},
    // SCRIPT errors.
    {"SCRIPT"},
    {"SCRIPT", "FOO"},
    {"SCRIPT", "FLUSH", "BAD"},
    {"SCRIPT", "FLUSH", "ASYNC", "SYNC"},
    {"SCRIPT", "EXISTS"},
    {"SCRIPT", "LOAD"},
    {"SCRIPT", "LOAD", "a", "b"},
    {"SCRIPT", "LOAD", "return +"},
    {"SCRIPT", "LOAD", "#!lua flags=bogus\nreturn 1"},
    {"SCRIPT", "HELP", "x"},
    {"SCRIPT", "KILL"},
    // The server still works.
    {"GET", "s"},
};

TEST(ScriptingDiff, Errors) {
  if (!HaveRedisServer()) GTEST_SKIP() << "redis-server is not installed";
  Servers s;
  Compare(s, kErrors, false);
  Compare(s, kErrors, true);
}

}  // namespace
}  // namespace kv::test
