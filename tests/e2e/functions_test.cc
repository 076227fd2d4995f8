// Functions end to end: FUNCTION LOAD / DELETE / LIST / DUMP / RESTORE / FLUSH / STATS / KILL /
// HELP and FCALL, FCALL_RO, differentially against Debian's redis-server (7.0.15): the same
// commands on both, the exact reply bytes compared (library metadata, redis.register_function's
// argument errors, what a library sees while it loads and what its functions see, errors from
// functions with their name and line, flags, numkeys, the shared math.random sequence). Every
// compared case is deterministic on redis-server: a FUNCTION LIST that shows more than one
// function names one library of one function (Redis lists in hash order). Then the libraries
// as data: DUMP payloads restored across the two servers, RDB files (a restart, DEBUG RELOAD,
// and each server loading the other's file), the AOF in both base formats, full syncs and the
// replication stream in both directions, FCALL's effects on replicas, and MONITOR's lines.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "tests/support/process.h"
#include "tests/support/resp_client.h"
#include "tests/support/script_diff.h"
#include "tests/support/wait.h"

namespace kv::test {
namespace {

using Kind = ServerProcess::Kind;

Cmd Load(const std::string& code) { return {"FUNCTION", "LOAD", code}; }
Cmd LoadReplace(const std::string& code) { return {"FUNCTION", "LOAD", "REPLACE", code}; }

// FLUSHALL and FUNCTION FLUSH, then `cmds`, on both servers (script_diff.h).
using Servers = DiffServers;
void Compare(Servers& s, const std::vector<Cmd>& cmds, bool resp3 = false) {
  std::vector<Cmd> all = {{"FLUSHALL"}, {"FUNCTION", "FLUSH"}};
  all.insert(all.end(), cmds.begin(), cmds.end());
  CompareReplies(s, all, resp3);
}

// A library of one function `fn` whose body is `body`.
std::string Lib(const std::string& lib, const std::string& fn, const std::string& body) {
  return "#!lua name=" + lib + "\nredis.register_function('" + fn + "', function(keys, args) " +
         body + " end)";
}

// ---------------------------------------------------------------------------------------------
// FUNCTION LOAD: the shebang, the library name, the engine, what the code may do while it loads.
const std::vector<Cmd> kLoading = {
    Load("return 1"),
    Load("#!lua"),
    Load("#!lua\n"),
    Load("#!lua name=a name=b\n"),
    Load("#!lua name=a x=1\n"),
    Load("#!lua name=a-b\n"),
    Load("#!lua name=\"a b\"\n"),
    Load("#!lua name=\n"),
    Load("#!foo name=a\n"),
    Load("#!lua name=a\n"),
    Load("#!lua name=a\nlocal x = 1"),
    Load("#!lua name=a\nlocal x = "),
    Load("#!lua name=a\nerror('at load')"),
    Load("#!lua name=a\nerror({err='MY at load'})"),
    Load("#!lua name=a\nlocal x = string.len('ab')"),
    Load("#!lua name=a\nredis.call('set', 'x', '1')"),
    Load("#!lua name=a\nreturn redis.setresp"),
    Load("#!lua name=a\nfoo = 1"),
    Load("#!lua name=a\nredis.foo = 1"),
    Load("#!lua name=a\nlocal t = {} t.x = 1 redis.log(redis.LOG_DEBUG, 'loading', "
         "redis.REDIS_VERSION, redis.REDIS_VERSION_NUM) "
         "redis.register_function('f', function() return t.x end)"),
    {"FCALL", "f", "0"},
    Load("#!LUA name=upper\nredis.register_function('g', function() return 2 end)"),
    {"FCALL", "g", "0"},
    {"FCALL", "G", "0"},
    // Library and function names are taken.
    Load("#!lua name=a\nredis.register_function('h', function() return 3 end)"),
    Load("#!lua name=b\nredis.register_function('f', function() return 3 end)"),
    Load("#!lua name=b\nredis.register_function('F', function() return 3 end)"),
    {"FUNCTION", "LOAD", "REPLACE", "REPLACE",
     "#!lua name=a\nredis.register_function('h', function() return 3 end)"},
    {"FCALL", "f", "0"},
    {"FCALL", "h", "0"},
    LoadReplace("#!lua name=a\nredis.register_function('g', function() return 3 end)"),
    {"FCALL", "h", "0"},
    {"FUNCTION", "LOAD", "REPLACED", "#!lua name=c\n"},
    {"FUNCTION", "LOAD", "x", "y", "#!lua name=c\n"},
    // The time limit: 500 ms.
    Load("#!lua name=slow\nwhile true do end"),
    Load("#!lua name=slow\nlocal n = 0 while n < 1e5 do n = n + 1 end "
         "redis.register_function('slow', function() return n end)"),
    {"FCALL", "slow", "0"},
    {"FUNCTION", "STATS"},
};

// redis.register_function's forms and its argument errors.
const std::vector<Cmd> kRegister = {
    Load("#!lua name=r\nredis.register_function()"),
    Load("#!lua name=r\nredis.register_function('a', function() end, 1)"),
    Load("#!lua name=r\nredis.register_function('x', 1)"),
    Load("#!lua name=r\nredis.register_function({}, 1)"),
    Load("#!lua name=r\nredis.register_function(1)"),
    Load("#!lua name=r\nredis.register_function('a-b', function() end)"),
    Load("#!lua name=r\nredis.register_function('', function() end)"),
    Load("#!lua name=r\nredis.register_function{function_name=1}"),
    Load("#!lua name=r\nredis.register_function{callback=function() end}"),
    Load("#!lua name=r\nredis.register_function{function_name='x', callback=1}"),
    Load("#!lua name=r\nredis.register_function{function_name='x', callback=function() end, "
         "flags='no-writes'}"),
    Load("#!lua name=r\nredis.register_function{function_name='x', callback=function() end, "
         "flags={'bad'}}"),
    Load("#!lua name=r\nredis.register_function{function_name='x', callback=function() end, "
         "flags={1}}"),
    Load("#!lua name=r\nredis.register_function{function_name='x', callback=function() end, "
         "foo=1}"),
    Load("#!lua name=r\nredis.register_function{function_name='x', callback=function() end, "
         "description={}}"),
    Load("#!lua name=r\nredis.register_function{[1]='x'}"),
    Load("#!lua name=r\nredis.register_function('x', function() end) "
         "redis.register_function('x', function() end)"),
    Load("#!lua name=r\nredis.register_function{function_name='x', callback=function() return "
         "1 end, flags={'NO-WRITES', 'allow-oom', 'allow-stale', 'no-cluster', "
         "'allow-cross-slot-keys'}, description='all the flags'}"),
    {"FUNCTION", "LIST"},
    {"FUNCTION", "LIST", "WITHCODE"},
    {"FCALL", "x", "0"},
    // A function that registers again at run time finds no register_function.
    Load("#!lua name=r2\nredis.register_function('y', function() "
         "return redis.register_function('z', function() end) end)"),
    {"FCALL", "y", "0"},
};

// What functions return and raise, and the arguments they get.
const std::vector<Cmd> kCalls = {
    Load("#!lua name=m\n"
         "redis.register_function('args', function(keys, args) return {#keys, #args, keys[1], "
         "args[1], args[2]} end)\n"
         "redis.register_function('boom', function() error('boom') end)\n"
         "redis.register_function('boomt', function() error({err='MINE custom'}) end)\n"
         "redis.register_function('nosuch', function() return redis.call('nosuch') end)\n"
         "redis.register_function('global', function() return x.y end)\n"
         "redis.register_function('setglobal', function() z = 1 end)\n"
         "redis.register_function('keys', function() return KEYS end)\n"
         "redis.register_function('types', function() local r = {} for _, n in "
         "ipairs({'replicate_commands', 'breakpoint', 'debug', 'set_repl', 'setresp', 'sha1hex', "
         "'acl_check_cmd', 'error_reply', 'status_reply', 'log', 'call', 'pcall', "
         "'register_function', 'REDIS_VERSION', 'REPL_ALL'}) do table.insert(r, n .. '=' .. "
         "type(redis[n])) end return r end)\n"
         "redis.register_function('globals', function() local r = {} for k in pairs(_G) do "
         "table.insert(r, k) end table.sort(r) return r end)\n"
         "redis.register_function('rand', function() return {math.random(1000), "
         "math.random(1000)} end)\n"
         "redis.register_function('write', function(keys, args) redis.call('set', keys[1], "
         "args[1]) return redis.call('get', keys[1]) end)\n"
         "redis.register_function('pwrong', function() redis.call('set', 'w', 'x') return "
         "redis.pcall('lpush', 'w', 'y') end)\n"
         "redis.register_function('wrong', function() redis.call('set', 'w', 'x') return "
         "redis.call('lpush', 'w', 'y') end)\n"
         "redis.register_function('resp3', function() redis.setresp(3) return "
         "redis.call('hgetall', 'h') end)\n"
         "redis.register_function{function_name='ro', callback=function(keys) return "
         "redis.call('get', keys[1]) end, flags={'no-writes'}}\n"
         "redis.register_function{function_name='rowrite', callback=function(keys) return "
         "redis.call('set', keys[1], 1) end, flags={'no-writes'}}"),
    {"FCALL", "args", "2", "k1", "k2", "a1", "a2"},
    {"FCALL", "args", "0"},
    {"FCALL", "args", "0", "a"},
    {"FCALL", "args", "x"},
    {"FCALL", "args", "3", "a"},
    {"FCALL", "args", "-1"},
    {"FCALL", "missing", "0"},
    {"FCALL", "missing", "x"},
    {"FCALL", "boom", "0"},
    {"FCALL", "boomt", "0"},
    {"FCALL", "nosuch", "0"},
    {"FCALL", "global", "0"},
    {"FCALL", "setglobal", "0"},
    {"FCALL", "keys", "0"},
    {"FCALL", "types", "0"},
    {"FCALL", "globals", "0"},
    // math.random: one sequence for the whole server, EVAL's included.
    {"FCALL", "rand", "0"},
    {"FCALL", "rand", "0"},
    {"EVAL", "return math.random(1000)", "0"},
    {"FCALL", "rand", "0"},
    {"FCALL", "write", "1", "k", "v"},
    {"GET", "k"},
    {"FCALL", "pwrong", "0"},
    {"FCALL", "wrong", "0"},
    {"HSET", "h", "f", "v"},
    {"FCALL", "resp3", "0"},
    {"FCALL", "ro", "1", "k"},
    {"FCALL_RO", "ro", "1", "k"},
    {"FCALL_RO", "write", "1", "k", "v"},
    {"FCALL", "rowrite", "1", "k"},
    {"FCALL_RO", "rowrite", "1", "k"},
    // Functions cannot be managed from scripts.
    {"EVAL", "return redis.call('function', 'list')", "0"},
    {"EVAL", "return redis.call('fcall', 'args', '0')", "0"},
    {"FCALL", "args", "0"},
};

// FUNCTION LIST, DELETE, FLUSH, STATS, KILL, RESTORE's checks, HELP.
const std::vector<Cmd> kManage = {
    {"FUNCTION", "LIST"},
    {"FUNCTION", "STATS"},
    Load(Lib("alpha", "fa", "return 1")),
    Load(Lib("beta", "fb", "return 2")),
    Load(Lib("Alphabet", "fab", "return 3")),
    {"FUNCTION", "LIST", "LIBRARYNAME", "beta"},
    {"FUNCTION", "LIST", "LIBRARYNAME", "ALPHA"},
    {"FUNCTION", "LIST", "LIBRARYNAME", "alpha", "WITHCODE"},
    {"FUNCTION", "LIST", "WITHCODE", "LIBRARYNAME", "b*"},
    {"FUNCTION", "LIST", "LIBRARYNAME", "nothing*"},
    {"FUNCTION", "LIST", "LIBRARYNAME"},
    {"FUNCTION", "LIST", "WITHCODE", "WITHCODE"},
    {"FUNCTION", "LIST", "LIBRARYNAME", "a", "LIBRARYNAME", "b"},
    {"FUNCTION", "LIST", "x"},
    {"FUNCTION", "STATS"},
    {"FUNCTION", "STATS", "x"},
    {"FUNCTION", "DELETE", "ALPHA"},
    {"FUNCTION", "DELETE", "alpha"},
    {"FUNCTION", "DELETE", "alpha"},
    {"FCALL", "fa", "0"},
    {"FUNCTION", "DELETE"},
    {"FUNCTION", "STATS"},
    {"FUNCTION", "KILL"},
    {"FUNCTION", "KILL", "x"},
    {"FUNCTION", "FLUSH", "x"},
    {"FUNCTION", "FLUSH", "sync", "x"},
    {"FUNCTION", "FLUSH", "ASYNC"},
    {"FUNCTION", "STATS"},
    {"FCALL", "fb", "0"},
    Load(Lib("beta", "fb", "return 2")),
    {"FUNCTION", "FLUSH", "sync"},
    {"FUNCTION", "LIST"},
    // FLUSHALL and SCRIPT FLUSH leave the libraries alone.
    Load(Lib("gamma", "fg", "return 4")),
    {"FLUSHALL"},
    {"SCRIPT", "FLUSH"},
    {"FCALL", "fg", "0"},
    {"FUNCTION", "RESTORE", "x"},
    {"FUNCTION", "RESTORE", "x", "y"},
    {"FUNCTION", "RESTORE", "x", "flush", "z"},
    {"FUNCTION", "DUMP", "x"},
    {"FUNCTION", "HELP"},
    {"FUNCTION", "NOSUCH"},
    {"FUNCTION"},
    {"FCALL"},
    {"FCALL", "fg"},
};

TEST(FunctionsDiff, LoadingALibrary) {
  if (!HaveRedisServer()) GTEST_SKIP() << "redis-server is not installed";
  Servers s;
  Compare(s, kLoading);
}

TEST(FunctionsDiff, RegisterFunction) {
  if (!HaveRedisServer()) GTEST_SKIP() << "redis-server is not installed";
  Servers s;
  Compare(s, kRegister);
  Compare(s, kRegister, true);
}

TEST(FunctionsDiff, CallingFunctions) {
  if (!HaveRedisServer()) GTEST_SKIP() << "redis-server is not installed";
  Servers s;
  Compare(s, kCalls);
  Compare(s, kCalls, true);
}

TEST(FunctionsDiff, ManagingLibraries) {
  if (!HaveRedisServer()) GTEST_SKIP() << "redis-server is not installed";
  Servers s;
  Compare(s, kManage);
  Compare(s, kManage, true);
}

// ---------------------------------------------------------------------------------------------
// The libraries as data.

const std::vector<std::string> kLibraries = {
    "#!lua name=counter\n"
    "local function bump(keys, args) return redis.call('incrby', keys[1], args[1] or 1) end\n"
    "redis.register_function('bump', bump)\n"
    "redis.register_function{function_name='peek', callback=function(keys) return "
    "redis.call('get', keys[1]) end, flags={'no-writes'}, description='reads a counter'}",
    "#!lua name=queue\n"
    "redis.register_function('push', function(keys, args) for _, v in ipairs(args) do "
    "redis.call('rpush', keys[1], v) end redis.call('hincrby', 'stats', keys[1], #args) "
    "return redis.call('llen', keys[1]) end)",
    // A library big enough that an RDB compresses its code.
    "#!lua name=big\n-- " + std::string(4000, 'x') +
        "\nredis.register_function('noop', function() return 'noop' end)",
};

// Every library's name, code and functions (with their descriptions and flags), sorted.
std::vector<std::string> Libraries(RespClient& c) {
  Reply list = c.Call({"FUNCTION", "LIST", "WITHCODE"});
  std::vector<std::string> out;
  for (const Reply& lib : list.elems) {
    std::string row;
    for (size_t i = 0; i + 1 < lib.elems.size(); i += 2) {
      const std::string& key = lib.elems[i].str;
      const Reply& v = lib.elems[i + 1];
      if (key != "functions") {
        row += key + "=" + v.str + ";";
        continue;
      }
      std::vector<std::string> fns;
      for (const Reply& f : v.elems) fns.push_back(f.Debug());
      std::sort(fns.begin(), fns.end());
      for (const std::string& f : fns) row += f + ";";
    }
    out.push_back(row);
  }
  std::sort(out.begin(), out.end());
  return out;
}

void LoadAll(RespClient& c) {
  for (const std::string& code : kLibraries) {
    Reply r = c.Call({"FUNCTION", "LOAD", code});
    ASSERT_EQ(r.type, '$') << r.Debug();
  }
}

// FCALLs that write through every library: the same digest wherever they ran.
void CallAll(RespClient& c) {
  for (int i = 0; i < 20; i++) {
    ASSERT_EQ(c.Call({"FCALL", "bump", "1", "n" + std::to_string(i % 3), std::to_string(i)}).type,
              ':');
    ASSERT_EQ(c.Call({"FCALL", "push", "1", "q", "a" + std::to_string(i), "b"}).type, ':');
  }
  ASSERT_EQ(c.Call({"FCALL_RO", "peek", "1", "n1"}).type, '$');
}

TEST(FunctionsData, DumpPayloadsMoveBetweenServers) {
  if (!HaveRedisServer()) GTEST_SKIP() << "redis-server is not installed";
  Servers s;
  RespClient r(s.redis.port()), k(s.ours.port());
  ASSERT_NO_FATAL_FAILURE(LoadAll(k));
  std::vector<std::string> want = Libraries(k);
  ASSERT_EQ(want.size(), kLibraries.size());
  std::string ours = k.Call({"FUNCTION", "DUMP"}).str;
  EXPECT_EQ(r.Call({"FUNCTION", "RESTORE", ours}).str, "OK");
  EXPECT_EQ(Libraries(r), want);
  std::string theirs = r.Call({"FUNCTION", "DUMP"}).str;
  // APPEND (the default) refuses a library that is there; REPLACE and FLUSH take it.
  EXPECT_EQ(k.Call({"FUNCTION", "RESTORE", theirs}).str.substr(0, 12), "ERR Library ");
  EXPECT_EQ(k.Call({"FUNCTION", "RESTORE", theirs, "REPLACE"}).str, "OK");
  EXPECT_EQ(Libraries(k), want);
  EXPECT_EQ(k.Call({"FUNCTION", "FLUSH"}).str, "OK");
  EXPECT_EQ(k.Call({"FUNCTION", "RESTORE", theirs, "FLUSH"}).str, "OK");
  EXPECT_EQ(Libraries(k), want);
  // A function name another library has fails the whole restore, which changes nothing.
  ASSERT_EQ(k.Call({"FUNCTION", "DELETE", "queue"}).str, "OK");
  ASSERT_EQ(k.Call(Load(Lib("other", "push", "return 0"))).str, "other");
  std::vector<std::string> before = Libraries(k);
  Reply clash = k.Call({"FUNCTION", "RESTORE", theirs, "REPLACE"});
  EXPECT_EQ(clash.str, "ERR Function push already exists");
  EXPECT_EQ(Libraries(k), before);
  // A key's DUMP is not a function payload; a corrupt payload is refused.
  k.Call({"SET", "key", "value"});
  std::string key_dump = k.Call({"DUMP", "key"}).str;
  Reply wrong_type = k.Call({"FUNCTION", "RESTORE", key_dump});
  EXPECT_EQ(wrong_type.str, r.Call({"FUNCTION", "RESTORE", key_dump}).str);
  std::string corrupt = theirs;
  corrupt[5] ^= 1;
  EXPECT_EQ(k.Call({"FUNCTION", "RESTORE", corrupt}).str,
            "ERR DUMP payload version or checksum are wrong");
  EXPECT_EQ(Libraries(k), before);
}

TEST(FunctionsData, LibrariesSurviveRestartsAndMoveInRdbFiles) {
  if (!HaveRedisServer()) GTEST_SKIP() << "redis-server is not installed";
  std::vector<std::string> want;
  // The first server's directory (removed with it) holds every file.
  ServerProcess k(Kind::kKvstore);
  std::string dir = k.dir();
  {
    RespClient c(k.port());
    ASSERT_NO_FATAL_FAILURE(LoadAll(c));
    ASSERT_NO_FATAL_FAILURE(CallAll(c));
    want = Libraries(c);
    std::string digest = c.Call({"DEBUG", "DIGEST"}).str;
    ASSERT_EQ(c.Call({"DEBUG", "RELOAD"}).str, "OK");
    EXPECT_EQ(Libraries(c), want);
    EXPECT_EQ(c.Call({"DEBUG", "DIGEST"}).str, digest);
    ASSERT_EQ(c.Call({"SAVE"}).str, "OK");
    ASSERT_EQ(k.Stop(), 0);
  }
  {
    ServerProcess again(Kind::kKvstore, {"--dir", dir});
    RespClient c(again.port());
    EXPECT_EQ(Libraries(c), want);
    EXPECT_EQ(c.Call({"FCALL", "bump", "1", "n0"}).type, ':');
    ASSERT_EQ(c.Call({"SAVE"}).str, "OK");
    ASSERT_EQ(again.Stop(), 0);
  }
  // redis-server loads kvstore's file, and kvstore loads the one redis-server writes.
  {
    ServerProcess redis(Kind::kRedis, {"--dir", dir});
    RespClient r(redis.port());
    EXPECT_EQ(Libraries(r), want);
    ASSERT_EQ(r.Call({"FUNCTION", "LOAD", Lib("fromredis", "fr", "return 'r'")}).str, "fromredis");
    ASSERT_EQ(r.Call({"SAVE"}).str, "OK");
    want = Libraries(r);
    ASSERT_EQ(redis.Stop(), 0);
  }
  ServerProcess back(Kind::kKvstore, {"--dir", dir});
  RespClient c(back.port());
  EXPECT_EQ(Libraries(c), want);
  EXPECT_EQ(c.Call({"FCALL", "fr", "0"}).str, "r");
}

// DEBUG RELOAD without a flush keeps the live libraries: the file's clash with them (an error,
// as in Redis) unless MERGE lets them replace those of the same names.
TEST(FunctionsData, ReloadWithoutAFlushClashesUnlessMerged) {
  if (!HaveRedisServer()) GTEST_SKIP() << "redis-server is not installed";
  for (Kind kind : {Kind::kKvstore, Kind::kRedis}) {
    ServerProcess server(kind);
    RespClient c(server.port());
    ASSERT_EQ(c.Call({"FUNCTION", "LOAD", Lib("test", "test", "return 'hello'")}).str, "test");
    EXPECT_EQ(c.Raw({"DEBUG", "RELOAD", "NOFLUSH"}), "-ERR Error trying to load the RDB dump\r\n");
    EXPECT_EQ(c.Raw({"DEBUG", "RELOAD", "NOFLUSH", "MERGE"}), "+OK\r\n");
    EXPECT_EQ(c.Call({"FCALL", "test", "0"}).str, "hello");
    EXPECT_EQ(c.Raw({"DEBUG", "RELOAD"}), "+OK\r\n");
    EXPECT_EQ(c.Call({"FCALL", "test", "0"}).str, "hello");
  }
}

// The AOF keeps FUNCTION LOAD / DELETE as they came, and its rewrite writes the libraries in
// both base formats (RDB preamble, commands); redis-server replays kvstore's AOF too.
TEST(FunctionsData, TheAofKeepsTheLibraries) {
  for (const char* preamble : {"yes", "no"}) {
    SCOPED_TRACE(std::string("aof-use-rdb-preamble ") + preamble);
    ServerProcess s(Kind::kKvstore, {"--appendonly", "yes", "--appendfsync", "always",
                                     "--aof-use-rdb-preamble", preamble});
    RespClient c(s.port());
    ASSERT_NO_FATAL_FAILURE(LoadAll(c));
    ASSERT_EQ(c.Call(Load(Lib("gone", "g", "return 1"))).str, "gone");
    ASSERT_EQ(c.Call({"FUNCTION", "DELETE", "gone"}).str, "OK");
    ASSERT_NO_FATAL_FAILURE(CallAll(c));
    std::vector<std::string> want = Libraries(c);
    std::string digest = c.Call({"DEBUG", "DIGEST"}).str;
    ASSERT_EQ(s.Stop(), 0);
    {
      ServerProcess again(Kind::kKvstore, {"--dir", s.dir(), "--appendonly", "yes",
                                           "--aof-use-rdb-preamble", preamble});
      RespClient a(again.port());
      EXPECT_EQ(Libraries(a), want);
      EXPECT_EQ(a.Call({"DEBUG", "DIGEST"}).str, digest);
      // A rewrite: the new base holds the libraries.
      ASSERT_EQ(a.Call({"BGREWRITEAOF"}).type, '+');
      ASSERT_TRUE(WaitFor([&] {
        return InfoField(a, "persistence", "aof_rewrite_in_progress") == "0" &&
               InfoField(a, "persistence", "aof_rewrite_scheduled") == "0";
      }));
      ASSERT_EQ(again.Stop(), 0);
    }
    ServerProcess rewritten(Kind::kKvstore, {"--dir", s.dir(), "--appendonly", "yes"});
    RespClient a(rewritten.port());
    EXPECT_EQ(Libraries(a), want);
    EXPECT_EQ(a.Call({"DEBUG", "DIGEST"}).str, digest);
    if (!HaveRedisServer()) continue;
    ASSERT_EQ(rewritten.Stop(), 0);
    ServerProcess redis(Kind::kRedis, {"--dir", s.dir(), "--appendonly", "yes"});
    RespClient r(redis.port());
    EXPECT_EQ(Libraries(r), want);
    EXPECT_EQ(r.Call({"DEBUG", "DIGEST"}).str, digest);
  }
}

// A kvstore primary's libraries reach a kvstore and a redis-server replica in the full sync
// (replacing what the replica had) and then through the stream (LOAD, DELETE, RESTORE, FLUSH),
// and FCALL's effects replicate; the same from a redis-server primary to a kvstore replica.
void CheckReplication(Kind primary_kind, bool disk) {
  std::vector<std::string> args = {"--repl-diskless-sync-delay", "0"};
  if (disk) args.insert(args.end(), {"--repl-diskless-sync", "no"});
  ServerProcess primary(primary_kind, args);
  RespClient p(primary.port());
  ASSERT_NO_FATAL_FAILURE(LoadAll(p));
  ASSERT_NO_FATAL_FAILURE(CallAll(p));
  std::string of = "127.0.0.1 " + std::to_string(primary.port());
  std::vector<std::unique_ptr<ServerProcess>> replicas;
  std::vector<std::string> replica_args = {"--replicaof", of};
  if (disk) replica_args.insert(replica_args.end(), {"--repl-diskless-load", "disabled"});
  replicas.push_back(std::make_unique<ServerProcess>(Kind::kKvstore, replica_args));
  if (primary_kind == Kind::kKvstore) {
    replicas.push_back(std::make_unique<ServerProcess>(Kind::kRedis, replica_args));
  }
  std::vector<std::unique_ptr<RespClient>> rs;
  for (auto& r : replicas) rs.push_back(std::make_unique<RespClient>(r->port()));
  for (auto& r : rs) ASSERT_TRUE(InSync(p, *r));
  std::vector<std::string> want = Libraries(p);
  for (auto& r : rs) EXPECT_EQ(Libraries(*r), want);
  // The stream: libraries change, functions write.
  ASSERT_EQ(p.Call(Load(Lib("streamed", "st", "return redis.call('incr', 'st')"))).str, "streamed");
  ASSERT_EQ(p.Call({"FUNCTION", "DELETE", "big"}).str, "OK");
  ASSERT_NO_FATAL_FAILURE(CallAll(p));
  ASSERT_EQ(p.Call({"FCALL", "st", "0"}).integer, 1);
  std::string dump = p.Call({"FUNCTION", "DUMP"}).str;
  ASSERT_EQ(p.Call({"FUNCTION", "FLUSH"}).str, "OK");
  ASSERT_EQ(p.Call({"FUNCTION", "RESTORE", dump}).str, "OK");
  ASSERT_EQ(p.Call({"WAIT", std::to_string(rs.size()), "5000"}).integer,
            static_cast<int64_t>(rs.size()));
  want = Libraries(p);
  std::string digest = p.Call({"DEBUG", "DIGEST"}).str;
  for (auto& r : rs) {
    EXPECT_EQ(Libraries(*r), want);
    EXPECT_EQ(r->Call({"DEBUG", "DIGEST"}).str, digest);
    // A replica's functions read; writing ones are refused there.
    EXPECT_EQ(r->Call({"FCALL_RO", "peek", "1", "n1"}).str, p.Call({"GET", "n1"}).str);
    EXPECT_EQ(r->Call({"FCALL", "st", "0"}).str,
              "READONLY You can't write against a read only replica.");
  }
  // A read-only replica refuses a script that declares writes as it refuses a write command,
  // and runs one that declares none (the same replies from both kinds of replica).
  const std::vector<Cmd> on_replica = {
      {"EVAL", "#!lua\nreturn redis.call('get', 'n1')", "0"},
      {"EVAL", "#!lua flags=no-writes\nreturn redis.call('get', 'n1')", "0"},
      {"EVAL", "return redis.call('get', 'n1')", "0"},
      {"EVAL", "return redis.call('set', 'n1', 1)", "0"},
      {"FCALL", "bump", "1", "n1"},
      {"FCALL", "nosuch", "0"},
  };
  for (const Cmd& cmd : on_replica) {
    SCOPED_TRACE(Describe(cmd));
    std::string first_reply = rs[0]->Call(cmd).raw;
    for (auto& r : rs) EXPECT_EQ(r->Call(cmd).raw, first_reply);
  }
  EXPECT_EQ(rs[0]->Call(on_replica[0]).str,
            "READONLY You can't write against a read only replica.");
  // A full sync replaces the replica's own libraries with the primary's.
  RespClient& first = *rs[0];
  ASSERT_EQ(first.Call({"REPLICAOF", "NO", "ONE"}).str, "OK");
  ASSERT_EQ(first.Call({"FUNCTION", "FLUSH"}).str, "OK");
  ASSERT_EQ(first.Call(Load(Lib("local", "mine", "return 1"))).str, "local");
  ASSERT_EQ(first.Call({"REPLICAOF", "127.0.0.1", std::to_string(primary.port())}).str, "OK");
  ASSERT_TRUE(WaitFor([&] {
    return InfoField(first, "replication", "master_link_status") == "up" &&
           Libraries(first) == want;
  }));
  EXPECT_EQ(first.Call({"FCALL", "mine", "0"}).str, "ERR Function not found");
}

TEST(FunctionsReplication, KvstorePrimaryDiskless) {
  if (!HaveRedisServer()) GTEST_SKIP() << "redis-server is not installed";
  CheckReplication(Kind::kKvstore, false);
}

TEST(FunctionsReplication, KvstorePrimaryDiskBased) {
  if (!HaveRedisServer()) GTEST_SKIP() << "redis-server is not installed";
  CheckReplication(Kind::kKvstore, true);
}

TEST(FunctionsReplication, RedisPrimary) {
  if (!HaveRedisServer()) GTEST_SKIP() << "redis-server is not installed";
  CheckReplication(Kind::kRedis, false);
}

// MONITOR shows EVAL and FCALL when they start, then what they ran as the "lua" client, as
// redis-server does (timestamps and addresses aside).
TEST(FunctionsMonitor, ScriptsAndWhatTheyRun) {
  if (!HaveRedisServer()) GTEST_SKIP() << "redis-server is not installed";
  Servers s;
  auto lines = [](ServerProcess& server) {
    RespClient c(server.port()), m(server.port());
    c.Call({"FUNCTION", "LOAD",
            Lib("mon", "mon",
                "redis.call('set', keys[1], args[1]) "
                "return redis.call('get', keys[1])")});
    EXPECT_EQ(m.Call({"MONITOR"}).str, "OK");
    c.Call({"EVAL", "redis.call('select', 2) return redis.call('incr', 'e')", "0"});
    c.Call({"FCALL", "mon", "1", "k", "v"});
    c.Call({"FCALL", "nosuch", "0"});
    c.Call({"PING"});
    std::vector<std::string> out;
    for (;;) {
      Reply r = m.Read();
      if (r.type == 0) break;
      // "+1700000000.123456 [0 127.0.0.1:5000] "set" ..." -> "[0 client] "set" ..."
      std::string line = r.str.substr(r.str.find(' ') + 1);
      if (line.rfind("[0 lua]", 0) != 0 && line.find(" lua]") == std::string::npos) {
        line = line.substr(0, line.find(' ') + 1) + "client]" + line.substr(line.find(']') + 1);
      }
      out.push_back(line);
      if (line.find("\"PING\"") != std::string::npos) break;
    }
    return out;
  };
  std::vector<std::string> want = lines(s.redis);
  EXPECT_EQ(want.size(), 8u);
  EXPECT_EQ(lines(s.ours), want);
}

}  // namespace
}  // namespace kv::test
