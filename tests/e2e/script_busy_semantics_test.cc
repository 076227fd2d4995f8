// What a script may run and what the server runs while a script is busy, on kvstore and on
// redis-server, replies compared byte for byte: XREAD and XREADGROUP refuse BLOCK inside a
// script; SORT BY a constant sorts a set for a script; a read-only script refuses PUBLISH;
// EXEC is judged by the commands it queued (a writing script queued on a read-only replica
// aborts it); and while a script is busy, MULTI, DISCARD, WATCH, UNWATCH, HELLO and AUTH are
// served, a command sent inside MULTI is refused with -BUSY (aborting the transaction), and
// EXEC answers EXECABORT.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/support/process.h"
#include "tests/support/resp_client.h"
#include "tests/support/script_diff.h"
#include "tests/support/wait.h"

namespace kv::test {
namespace {

using Kind = ServerProcess::Kind;

TEST(ScriptBusySemantics, XreadBlockRefusedInScripts) {
  if (!HaveRedisServer()) GTEST_SKIP() << "redis-server is not installed";
  DiffServers s;
  const std::string lib =
      "#!lua name=xr\n"
      "redis.register_function('call', function(keys, args) return redis.pcall(unpack(args)) "
      "end)";
  CompareReplies(
      s,
      {{"FLUSHALL"},
       {"FUNCTION", "FLUSH"},
       {"XGROUP", "CREATE", "s", "g", "$", "MKSTREAM"},
       {"EVAL", "return redis.pcall('xread','STREAMS','s','$')", "1", "s"},
       {"EVAL", "return redis.pcall('xread','BLOCK',0,'STREAMS','s','$')", "1", "s"},
       {"EVAL", "return redis.pcall('XREAD','COUNT',1,'BLOCK',10,'STREAMS','s','$')", "1", "s"},
       {"EVAL", "return redis.pcall('xreadgroup','group','g','c','STREAMS','s','>')", "1", "s"},
       {"EVAL", "return redis.pcall('xreadgroup','group','g','c','BLOCK',0,'STREAMS','s','>')", "1",
        "s"},
       {"FUNCTION", "LOAD", lib},
       {"FCALL", "call", "1", "s", "xread", "BLOCK", "0", "STREAMS", "s", "$"},
       {"FCALL", "call", "1", "s", "xreadgroup", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "s",
        ">"},
       {"FCALL", "call", "1", "s", "xread", "STREAMS", "s", "0"}},
      false);
}

TEST(ScriptBusySemantics, SortByConstantIsOrderedForScripts) {
  if (!HaveRedisServer()) GTEST_SKIP() << "redis-server is not installed";
  DiffServers s;
  Cmd sadd = {"SADD", "myset"};
  for (const char* m : {"a", "b", "c", "d", "e", "f", "g", "h", "i", "l",  "m",   "n",
                        "o", "p", "q", "r", "s", "t", "u", "v", "z", "aa", "aaa", "azz"}) {
    sadd.push_back(m);
  }
  CompareReplies(
      s,
      {{"FLUSHALL"},
       sadd,
       {"EVAL", "return redis.call('sort',KEYS[1],'by','_')", "1", "myset"},
       {"EVAL", "return redis.call('sort',KEYS[1],'by','_','limit','2','5','desc')", "1", "myset"},
       {"SADD", "small", "c", "a", "b"},
       {"SET", "_:a", "x"},
       {"EVAL", "return redis.call('sort',KEYS[1],'by','_','get','#','get','_:*')", "1", "small"},
       {"SADD", "nums", "1", "2", "3", "4", "10"},
       {"EVAL", "return redis.call('sort',KEYS[1],'desc')", "1", "nums"},
       {"EVAL", "return redis.call('sort',KEYS[1],'by','nosort')", "1", "nums"},
       // A list keeps its own order.
       {"RPUSH", "list", "c", "a", "b"},
       {"EVAL", "return redis.call('sort',KEYS[1],'by','_')", "1", "list"}},
      false);
}

TEST(ScriptBusySemantics, ReadOnlyScriptsRefuseMayReplicateCommands) {
  if (!HaveRedisServer()) GTEST_SKIP() << "redis-server is not installed";
  DiffServers s;
  const std::string lib =
      "#!lua name=ro\n"
      "redis.register_function{function_name='pub', callback=function() "
      "return redis.call('publish','ch','msg') end, flags={'no-writes'}}\n"
      "redis.register_function('pubw', function() return redis.call('publish','ch','msg') end)";
  CompareReplies(s,
                 {{"FLUSHALL"},
                  {"FUNCTION", "FLUSH"},
                  {"EVAL_RO", "return redis.call('publish','ch','msg')", "0"},
                  {"EVAL", "#!lua flags=no-writes\nreturn redis.call('publish','ch','msg')", "0"},
                  {"EVAL_RO", "return redis.pcall('pfcount','h')", "0"},
                  {"EVAL", "return redis.call('publish','ch','msg')", "0"},
                  {"FUNCTION", "LOAD", lib},
                  {"FCALL_RO", "pub", "0"},
                  {"FCALL", "pub", "0"},
                  {"FCALL", "pubw", "0"}},
                 false);
}

// scripting.tcl's "no-writes shebang flag on replica", on a replica whose primary is not
// there (it serves stale data, as by default), and multi.tcl's "exec with write commands and
// state change".
std::vector<std::string> RunExecJudgedByQueued(Kind kind) {
  std::vector<std::string> out;
  ServerProcess s(kind);
  RespClient r(s.port()), rr(s.port()), rr2(s.port());
  auto add = [&](RespClient& c, const Cmd& cmd) { out.push_back(c.Call(cmd).raw); };
  const std::string replicaof_port = std::to_string(s.port() == 1 ? 2 : 1);
  add(r, {"SET", "x", "some value"});
  add(r, {"REPLICAOF", "127.0.0.1", replicaof_port});
  add(r, {"EVAL", "#!lua flags=no-writes\nreturn redis.call('get','x')", "1", "x"});
  add(r, {"EVAL", "#!lua\nreturn redis.call('get','x')", "1", "x"});
  add(r, {"MULTI"});
  add(r, {"EVAL", "#!lua flags=no-writes\nredis.call('get','x') return 1", "1", "x"});
  add(r, {"EXEC"});
  add(r, {"MULTI"});
  add(r, {"EVAL", "redis.call('get','x') return 1", "1", "x"});
  add(r, {"EXEC"});
  add(r, {"REPLICAOF", "NO", "ONE"});
  add(rr, {"MULTI"});
  add(rr2, {"MULTI"});
  add(rr, {"EVAL", "#!lua\nreturn 1", "0"});
  add(rr2, {"EVAL", "redis.call('set','x',1) return 1", "1", "x"});
  add(r, {"REPLICAOF", "127.0.0.1", replicaof_port});
  add(rr, {"EXEC"});
  add(rr2, {"EXEC"});
  add(rr, {"PING", "after"});  // no longer inside MULTI
  add(r, {"REPLICAOF", "NO", "ONE"});
  // A write queued, then too few replicas for writes: EXEC aborts.
  add(rr, {"SET", "xx", "1"});
  add(rr, {"MULTI"});
  add(rr, {"INCR", "xx"});
  add(r, {"CONFIG", "SET", "min-replicas-to-write", "2"});
  add(rr, {"EXEC"});
  add(rr, {"GET", "xx"});
  add(rr, {"MULTI"});
  add(rr, {"GET", "xx"});
  add(rr, {"EXEC"});  // reads only: runs
  add(r, {"CONFIG", "SET", "min-replicas-to-write", "0"});
  return out;
}

TEST(ScriptBusySemantics, ExecIsJudgedByWhatItQueued) {
  if (!HaveRedisServer()) GTEST_SKIP() << "redis-server is not installed";
  std::vector<std::string> want = RunExecJudgedByQueued(Kind::kRedis);
  std::vector<std::string> got = RunExecJudgedByQueued(Kind::kKvstore);
  EXPECT_EQ(got, want);
  ASSERT_EQ(want.size(), 30u);
  EXPECT_EQ(want[16],
            "-EXECABORT Transaction discarded because of: READONLY You can't write against a read "
            "only replica.\r\n");
}

// multi.tcl's "MULTI and script timeout", "EXEC and script timeout", "MULTI-EXEC body and
// script timeout" and "just EXEC and script timeout", with DISCARD, WATCH, UNWATCH and AUTH
// while busy besides. `fcall`: the busy script is a function (its kill is FUNCTION KILL).
std::vector<std::string> RunMultiWhileBusy(Kind kind, bool fcall) {
  std::vector<std::string> out;
  ServerProcess s(kind, {"--busy-reply-threshold", "100"});
  RespClient runner(s.port()), r(s.port()), r2(s.port());
  auto add = [&](RespClient& c, const Cmd& cmd) { out.push_back(c.Call(cmd).raw); };
  EXPECT_EQ(r.Call({"FUNCTION", "LOAD",
                    "#!lua name=busy\n"
                    "redis.register_function('spin', function() while true do end end)"})
                .str,
            "busy");
  const Cmd spin = fcall ? Cmd{"FCALL", "spin", "0"} : Cmd{"EVAL", "while true do end", "0"};
  const Cmd kill = fcall ? Cmd{"FUNCTION", "KILL"} : Cmd{"SCRIPT", "KILL"};
  auto start_busy = [&] {
    runner.Send(spin);
    EXPECT_TRUE(WaitFor([&] { return r.Call({"PING"}).is_error(); }));
  };
  auto end_busy = [&] {
    add(r, kill);
    out.push_back(runner.Read().raw);
  };
  add(r, {"SET", "xx", "1"});

  // MULTI while busy; a command queued while busy aborts the transaction.
  start_busy();
  add(r2, {"MULTI"});
  add(r2, {"INCR", "xx"});
  add(r2, {"MULTI"});           // nested
  add(r2, {"WATCH", "xx"});     // inside MULTI
  add(r2, {"AUTH", "nopass"});  // queued
  end_busy();
  add(r2, {"INCR", "xx"});
  add(r2, {"EXEC"});
  add(r, {"GET", "xx"});
  add(r2, {"PING", "asdf"});

  // EXEC while busy.
  add(r2, {"MULTI"});
  add(r2, {"INCR", "xx"});
  start_busy();
  add(r2, {"INCR", "xx"});
  add(r2, {"EXEC"});
  add(r2, {"PING", "asdf"});  // out of MULTI, so -BUSY
  end_busy();
  add(r, {"GET", "xx"});
  add(r2, {"PING", "asdf"});

  // Just EXEC while busy, with a watched key.
  add(r2, {"WATCH", "xx"});
  add(r2, {"MULTI"});
  add(r2, {"INCR", "xx"});
  start_busy();
  add(r2, {"EXEC"});
  end_busy();
  add(r, {"GET", "xx"});
  add(r2, {"PING", "asdf"});

  // DISCARD, WATCH, UNWATCH and AUTH while busy; MULTI then goes on after the script.
  start_busy();
  add(r2, {"WATCH", "xx"});
  add(r2, {"UNWATCH"});
  add(r2, {"WATCH", "xx"});
  add(r2, {"AUTH", "nopass"});
  add(r2, {"MULTI"});
  add(r2, {"DISCARD"});
  add(r2, {"DISCARD"});
  add(r2, {"MULTI"});
  end_busy();
  add(r2, {"INCR", "xx"});
  add(r2, {"EXEC"});
  add(r, {"GET", "xx"});
  return out;
}

TEST(ScriptBusySemantics, MultiWhileAScriptIsBusy) {
  if (!HaveRedisServer()) GTEST_SKIP() << "redis-server is not installed";
  for (bool fcall : {false, true}) {
    SCOPED_TRACE(fcall ? "FCALL" : "EVAL");
    std::vector<std::string> want = RunMultiWhileBusy(Kind::kRedis, fcall);
    std::vector<std::string> got = RunMultiWhileBusy(Kind::kKvstore, fcall);
    EXPECT_EQ(got, want);
    ASSERT_EQ(want.size(), 42u);
    EXPECT_EQ(want[1], "+OK\r\n");  // MULTI while busy
    EXPECT_EQ(want[15],
              fcall ? "-EXECABORT Transaction discarded because of: BUSY Redis is busy running a "
                      "script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE.\r\n"
                    : "-EXECABORT Transaction discarded because of: BUSY Redis is busy running a "
                      "script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.\r\n");
  }
}

// scripting.tcl's "Timedout scripts and unblocked command": HELLO while busy names the client
// (the script, let list clients, sees it and ends), and the client blocked on the key the
// script pushed to is served after the script, with the script's last push.
std::vector<std::string> RunHelloWhileBusy(Kind kind, bool fcall) {
  std::vector<std::string> out;
  ServerProcess s(kind, {"--busy-reply-threshold", "100", "--enable-debug-command", "yes"});
  RespClient r(s.port()), rd(s.port()), rd2(s.port()), r3(s.port());
  const std::string body =
      "local clients\n"
      "redis.call('lpush',KEYS[1],'y');\n"
      "while true do\n"
      "  clients = redis.call('client','list')\n"
      "  if string.find(clients, 'abortscript') ~= nil then break end\n"
      "end\n"
      "redis.call('lpush',KEYS[1],'z');\n"
      "return clients\n";
  EXPECT_EQ(r.Call({"FUNCTION", "LOAD",
                    "#!lua name=hello\nredis.register_function('wait', function(KEYS, ARGV)\n" +
                        body + "end)"})
                .str,
            "hello");
  rd2.Send({"BLPOP", "x", "0"});
  EXPECT_TRUE(WaitFor([&] {
    return r.Call({"INFO", "clients"}).str.find("blocked_clients:1") != std::string::npos;
  }));
  out.push_back(r.Call({"DEBUG", "set-disable-deny-scripts", "1"}).raw);
  rd.Send(fcall ? Cmd{"FCALL", "wait", "1", "x"} : Cmd{"EVAL", body, "1", "x"});
  EXPECT_TRUE(WaitFor([&] { return r.Call({"PING"}).is_error(); }));
  Reply hello = r3.Call({"HELLO", "2", "SETNAME", "abortscript"});
  if (hello.elems.size() == 14) hello.elems[7].integer = 0;  // the client's id
  out.push_back(hello.Debug());
  out.push_back(rd2.Read().raw);
  Reply clients = rd.Read();
  out.push_back(clients.is_error()
                    ? clients.raw
                    : std::to_string(clients.str.find("name=abortscript") != std::string::npos));
  out.push_back(r3.Call({"CLIENT", "GETNAME"}).raw);
  out.push_back(r.Call({"DEBUG", "set-disable-deny-scripts", "0"}).raw);
  return out;
}

TEST(ScriptBusySemantics, HelloWhileAScriptIsBusy) {
  if (!HaveRedisServer()) GTEST_SKIP() << "redis-server is not installed";
  for (bool fcall : {false, true}) {
    SCOPED_TRACE(fcall ? "FCALL" : "EVAL");
    std::vector<std::string> want = RunHelloWhileBusy(Kind::kRedis, fcall);
    std::vector<std::string> got = RunHelloWhileBusy(Kind::kKvstore, fcall);
    EXPECT_EQ(got, want);
    ASSERT_EQ(want.size(), 6u);
    EXPECT_EQ(want[2], "*2\r\n$1\r\nx\r\n$1\r\nz\r\n");
    EXPECT_EQ(want[3], "1");
  }
}

}  // namespace
}  // namespace kv::test
