// A busy script on a server whose clients are spread over several poll groups (io-threads 4),
// on kvstore and on redis-server, replies compared byte for byte:
// - clients of every group whose commands came while the script ran, before it became busy and
//   after, are answered -BUSY; a client that closes its connection meanwhile does not stall its
//   group; SCRIPT KILL, sent from any of them, ends the script, and all are served again after.
// - a replica that leaves while a script waits for INFO's connected_slaves to change is seen
//   gone by the script, which then writes and returns (Redis' "not enough good replicas state
//   change during long script").
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

std::vector<std::string> RunBusyAcrossGroups(Kind kind) {
  std::vector<std::string> out;
  ServerProcess s(kind, {"--io-threads", "4", "--busy-reply-threshold", "200"});
  RespClient runner(s.port());
  std::vector<std::unique_ptr<RespClient>> clients;
  for (int i = 0; i < 8; i++) clients.push_back(std::make_unique<RespClient>(s.port()));
  EXPECT_EQ(runner.Call({"SET", "k", "v"}).str, "OK");
  RespClient sub(s.port());
  EXPECT_EQ(sub.Call({"SUBSCRIBE", "started"}).elems.size(), 3u);
  // The script tells it started (PUBLISH does not make it unkillable): commands sent then come
  // while it holds the lock, on kvstore before the threshold (its subscribers get the message
  // at once), on Redis once the script is busy.
  runner.Send({"EVAL", "redis.call('publish', 'started', 'go') while true do end", "0"});
  Reply started = sub.Read();
  EXPECT_EQ(started.elems.size() == 3 ? started.elems[2].str : started.Debug(), "go");
  for (auto& c : clients) c->Send({"GET", "k"});
  for (auto& c : clients) out.push_back(c->Read().raw);
  // One leaves while the script is busy; its group's other clients are answered still.
  clients[1].reset();
  for (auto& c : clients) {
    if (c) out.push_back(c->Call({"PING"}).raw);
  }
  RespClient late(s.port());
  out.push_back(late.Call({"PING"}).raw);
  out.push_back(clients[6]->Call({"SCRIPT", "KILL"}).raw);
  Reply killed = runner.Read();
  EXPECT_TRUE(killed.is_error()) << killed.Debug();
  out.push_back(killed.str.substr(0, killed.str.find("...")));
  for (auto& c : clients) {
    if (c) out.push_back(c->Call({"GET", "k"}).raw);
  }
  out.push_back(late.Call({"SCRIPT", "KILL"}).raw);  // none running
  return out;
}

TEST(ScriptBusyGroups, EveryGroupAnswersAndAnyClientKillsTheScript) {
  if (!HaveRedisServer()) GTEST_SKIP() << "redis-server is not installed";
  std::vector<std::string> want = RunBusyAcrossGroups(Kind::kRedis);
  std::vector<std::string> got = RunBusyAcrossGroups(Kind::kKvstore);
  EXPECT_EQ(got, want);
  ASSERT_EQ(want.size(), 26u);
  const std::string busy =
      "-BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN "
      "NOSAVE.\r\n";
  for (int i = 0; i < 16; i++) EXPECT_EQ(want[i], busy) << i;
  EXPECT_EQ(want[16], "+OK\r\n");
  EXPECT_EQ(want[17], "ERR Script killed by user with SCRIPT KILL");
  EXPECT_EQ(want[18], "$1\r\nv\r\n");
}

std::vector<std::string> RunReplicaLeavesDuringScript(Kind kind) {
  std::vector<std::string> out;
  ServerProcess primary(kind, {"--busy-reply-threshold", "100", "--repl-diskless-sync-delay", "0"});
  ServerProcess replica(kind);
  RespClient p(primary.port()), r(replica.port()), runner(primary.port());
  EXPECT_EQ(p.Call({"SET", "x", "some value"}).str, "OK");
  EXPECT_EQ(r.Call({"REPLICAOF", "127.0.0.1", std::to_string(primary.port())}).str, "OK");
  EXPECT_TRUE(InSync(p, r));
  EXPECT_EQ(p.Call({"CONFIG", "SET", "min-replicas-to-write", "1"}).str, "OK");
  // The replica counts as good once the primary has its first acknowledgement (a replica can
  // be in sync, by its own offsets, a moment before).
  EXPECT_TRUE(WaitFor([&] { return InfoField(p, "replication", "min_slaves_good_slaves") == "1"; }))
      << p.Call({"INFO", "replication"}).str;
  runner.Send({"EVAL",
               "redis.call('set', 'x', 'script value')\n"
               "while true do\n"
               "  local info = redis.call('info', 'replication')\n"
               "  if string.match(info, 'connected_slaves:0') then\n"
               "    redis.call('set', 'x', 'replica gone')\n"
               "    break\n"
               "  end\n"
               "end\n"
               "return 1",
               "1", "x"});
  Reply busy;
  EXPECT_TRUE(WaitFor([&] {
    busy = p.Call({"PING"});
    return busy.is_error();
  }));
  out.push_back(busy.raw);
  out.push_back(r.Call({"REPLICAOF", "NO", "ONE"}).raw);
  out.push_back(runner.Read().raw);
  out.push_back(p.Call({"GET", "x"}).raw);
  // With no good replica left, writes are refused.
  out.push_back(p.Call({"SET", "y", "1"}).raw);
  return out;
}

TEST(ScriptBusyGroups, AReplicaLeavingIsSeenByABusyScript) {
  if (!HaveRedisServer()) GTEST_SKIP() << "redis-server is not installed";
  std::vector<std::string> want = RunReplicaLeavesDuringScript(Kind::kRedis);
  std::vector<std::string> got = RunReplicaLeavesDuringScript(Kind::kKvstore);
  EXPECT_EQ(got, want);
  ASSERT_EQ(want.size(), 5u);
  EXPECT_EQ(want[2], ":1\r\n");
  EXPECT_EQ(want[3], "$12\r\nreplica gone\r\n");
}

}  // namespace
}  // namespace kv::test
