// A script running past busy-reply-threshold, on kvstore and on redis-server, replies compared
// byte for byte: other clients (connected before, and connecting during) get -BUSY; SCRIPT KILL
// ends a script that has not written, whose caller gets the kill error; a script that wrote is
// UNKILLABLE, and SHUTDOWN NOSAVE then ends the server at once without its writes (the AOF
// brought back by a restart does not have them). Given as lua-time-limit, the old name. A busy
// function is killed by FUNCTION KILL (SCRIPT KILL refuses it, as FUNCTION KILL refuses an EVAL),
// and FUNCTION STATS names it while it runs.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "tests/support/process.h"
#include "tests/support/resp_client.h"
#include "tests/support/wait.h"

namespace kv::test {
namespace {

using Kind = ServerProcess::Kind;

struct Outcome {
  std::vector<std::string> replies;
  bool written_after_restart = true;
};

Outcome RunBusyScripts(Kind kind) {
  Outcome o;
  ServerProcess s(kind, {"--lua-time-limit", "100", "--appendonly", "yes"});
  RespClient runner(s.port()), other(s.port());
  EXPECT_EQ(other.Call({"SET", "before", "1"}).str, "OK");
  runner.Send({"EVAL", "local i = 0 while true do i = i + 1 end", "0"});
  // Busy once the threshold passes: PING answers BUSY.
  Reply r;
  EXPECT_TRUE(WaitFor([&] {
    r = other.Call({"PING"});
    return r.is_error();
  }));
  o.replies.push_back(r.raw);
  RespClient late(s.port());  // connects while the script is busy
  o.replies.push_back(late.Call({"GET", "before"}).raw);
  o.replies.push_back(other.Call({"SCRIPT", "KILL"}).raw);
  o.replies.push_back(runner.Read().raw);
  o.replies.push_back(late.Call({"GET", "before"}).raw);    // served again
  o.replies.push_back(other.Call({"SCRIPT", "KILL"}).raw);  // none running

  // A script that wrote cannot be killed; SHUTDOWN NOSAVE ends the server.
  runner.Send({"EVAL", "redis.call('set', 'partial', 1) while true do end", "0"});
  EXPECT_TRUE(WaitFor([&] { return other.Call({"PING"}).is_error(); }));
  o.replies.push_back(other.Call({"SCRIPT", "KILL"}).raw);
  other.Send({"SHUTDOWN", "NOSAVE"});
  EXPECT_TRUE(other.WaitClosed(5000));
  EXPECT_TRUE(runner.WaitClosed(5000));
  EXPECT_TRUE(WaitFor([&] { return !s.Alive(); }));
  ServerProcess again(kind, {"--dir", s.dir(), "--appendonly", "yes"});
  RespClient a(again.port());
  EXPECT_EQ(a.Call({"GET", "before"}).str, "1");
  o.written_after_restart = a.Call({"EXISTS", "partial"}).integer == 1;
  return o;
}

TEST(ScriptingBusy, BusyKillAndShutdownNosaveAsRedis) {
  if (!HaveRedisServer()) GTEST_SKIP() << "redis-server is not installed";
  Outcome want = RunBusyScripts(Kind::kRedis);
  Outcome got = RunBusyScripts(Kind::kKvstore);
  EXPECT_EQ(got.replies, want.replies);
  ASSERT_EQ(want.replies.size(), 7u);
  EXPECT_EQ(want.replies[0],
            "-BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN "
            "NOSAVE.\r\n");
  EXPECT_EQ(want.replies[2], "+OK\r\n");
  EXPECT_FALSE(want.written_after_restart);
  EXPECT_FALSE(got.written_after_restart);
}

// FUNCTION STATS while `name` runs: the reply with its duration checked and then left out.
std::string RunningStats(RespClient& c, const std::string& name) {
  Reply r = c.Call({"FUNCTION", "STATS"});
  if (r.elems.size() != 4 || r.elems[1].elems.size() != 6) return r.Debug();
  Reply& running = r.elems[1];
  EXPECT_EQ(running.elems[1].str, name);
  EXPECT_EQ(running.elems[4].str, "duration_ms");
  EXPECT_GE(running.elems[5].integer, 100);
  running.elems[5].integer = 0;
  return r.Debug();
}

std::vector<std::string> RunBusyFunctions(Kind kind) {
  std::vector<std::string> out;
  ServerProcess s(kind, {"--busy-reply-threshold", "100"});
  RespClient runner(s.port()), other(s.port()), quitter(s.port());
  EXPECT_EQ(other
                .Call({"FUNCTION", "LOAD",
                       "#!lua name=busy\n"
                       "redis.register_function('spin', function() while true do end end)\n"
                       "redis.register_function('spinw', function() redis.call('set', 'w', 1) "
                       "while true do end end)"})
                .str,
            "busy");
  runner.Send({"FCALL", "spin", "0", "extra"});
  EXPECT_TRUE(WaitFor([&] { return other.Call({"PING"}).is_error(); }));
  out.push_back(other.Call({"PING"}).raw);
  out.push_back(other.Call({"SCRIPT", "KILL"}).raw);
  out.push_back(RunningStats(other, "spin"));
  // QUIT is answered, and the connection closed, whether it came before the script or during.
  quitter.Send({"QUIT"});
  quitter.Send({"PING"});
  std::string rest;
  EXPECT_TRUE(quitter.WaitClosed(5000, &rest));
  out.push_back(rest);
  RespClient late(s.port());
  late.Send({"QUIT"});
  rest.clear();
  EXPECT_TRUE(late.WaitClosed(5000, &rest));
  out.push_back(rest);
  out.push_back(other.Call({"FUNCTION", "KILL"}).raw);
  out.push_back(runner.Read().raw);
  out.push_back(other.Call({"FUNCTION", "KILL"}).raw);  // none running
  out.push_back(other.Call({"FUNCTION", "STATS"}).raw);
  // A busy EVAL is not FUNCTION KILL's, nor FUNCTION STATS'.
  runner.Send({"EVAL", "while true do end", "0"});
  EXPECT_TRUE(WaitFor([&] { return other.Call({"PING"}).is_error(); }));
  out.push_back(other.Call({"FUNCTION", "KILL"}).raw);
  out.push_back(other.Call({"FUNCTION", "STATS"}).raw);
  out.push_back(other.Call({"SCRIPT", "KILL"}).raw);
  out.push_back(runner.Read().raw);
  // A function that wrote cannot be killed by either.
  runner.Send({"FCALL", "spinw", "0"});
  EXPECT_TRUE(WaitFor([&] { return other.Call({"PING"}).is_error(); }));
  out.push_back(other.Call({"FUNCTION", "KILL"}).raw);
  out.push_back(other.Call({"SCRIPT", "KILL"}).raw);
  other.Send({"SHUTDOWN", "NOSAVE"});
  EXPECT_TRUE(other.WaitClosed(5000));
  EXPECT_TRUE(WaitFor([&] { return !s.Alive(); }));
  return out;
}

TEST(ScriptingBusy, BusyFunctionsAsRedis) {
  if (!HaveRedisServer()) GTEST_SKIP() << "redis-server is not installed";
  std::vector<std::string> want = RunBusyFunctions(Kind::kRedis);
  std::vector<std::string> got = RunBusyFunctions(Kind::kKvstore);
  EXPECT_EQ(got, want);
  ASSERT_EQ(want.size(), 15u);
  EXPECT_EQ(want[0],
            "-BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN "
            "NOSAVE.\r\n");
  EXPECT_EQ(want[3], "+OK\r\n");  // QUIT, and nothing for the PING after it
  EXPECT_EQ(want[4], "+OK\r\n");
  EXPECT_EQ(want[5], "+OK\r\n");
}

}  // namespace
}  // namespace kv::test
