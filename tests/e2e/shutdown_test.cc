// End-to-end tests of a shutdown that waits for lagging replicas (shutdown-timeout, SHUTDOWN
// [NOW] [ABORT], SIGTERM with shutdown-on-sigterm), with real processes on loopback: a replica
// kept behind (SIGSTOP, DEBUG SLEEP) holds the shutdown up to the timeout, writes wait
// meanwhile, the log says so in Redis' words; each case on kvstore and on redis-server, whose
// replies must be the same bytes.
#include <gtest/gtest.h>
#include <signal.h>

#include <string>
#include <thread>
#include <vector>

#include "tests/support/process.h"
#include "tests/support/resp_client.h"
#include "tests/support/wait.h"

namespace kv::test {
namespace {

using Kind = ServerProcess::Kind;
using Cmd = std::vector<std::string>;

bool Has(const std::string& log, const std::string& what) {
  return log.find(what) != std::string::npos;
}

// Resumes a stopped process when the test ends, whatever happens.
struct Resume {
  pid_t pid;
  ~Resume() { kill(pid, SIGCONT); }
};

class ShutdownWait : public ::testing::TestWithParam<Kind> {
 protected:
  // A primary with `args` and a replica (of the same kind) that has its whole stream.
  void Start(Cmd args) {
    if (GetParam() == Kind::kRedis && !HaveRedisServer()) GTEST_SKIP();
    args.insert(args.end(), {"--repl-diskless-sync-delay", "0"});
    primary_ = std::make_unique<ServerProcess>(GetParam(), args);
    replica_ = std::make_unique<ServerProcess>(
        GetParam(), Cmd{"--replicaof", "127.0.0.1 " + std::to_string(primary_->port())});
    RespClient p(primary_->port()), r(replica_->port());
    ASSERT_TRUE(InSync(p, r));
    ASSERT_TRUE(WaitFor([&] {
      std::string line = InfoField(p, "replication", "slave0");
      return line.find("offset=" + InfoField(p, "replication", "master_repl_offset")) !=
             std::string::npos;
    }));
  }
  // The replica stops reading; the write that follows is never acknowledged.
  void StopReplica() {
    kill(replica_->pid(), SIGSTOP);
    resume_.reset(new Resume{replica_->pid()});  // in place: a temporary would resume it
    RespClient p(primary_->port());
    ASSERT_EQ(p.Call({"SET", "last", "write"}).str, "OK");
  }
  std::string ReplicaAddr() const { return "127.0.0.1:" + std::to_string(replica_->port()); }
  bool Exited() {
    return WaitFor([&] { return !primary_->Alive(); }, 60000);
  }

  std::unique_ptr<ServerProcess> primary_, replica_;
  std::unique_ptr<Resume> resume_;
};

// SHUTDOWN waits for the replica (writes wait too), then gives up after shutdown-timeout and
// exits, naming the lagging replica.
TEST_P(ShutdownWait, LaggingReplicaDelaysTheShutdownUpToTheTimeout) {
  Start({"--shutdown-timeout", "3"});
  StopReplica();
  RespClient c(primary_->port()), writer(primary_->port()), reader(primary_->port());
  c.Send({"SHUTDOWN"});
  ASSERT_TRUE(WaitFor([&] {
    return Has(primary_->LogText(), "Waiting for replicas before shutting down.");
  })) << primary_->LogText();
  EXPECT_TRUE(primary_->Alive());
  EXPECT_EQ(reader.Call({"GET", "last"}).str, "write");  // reads go on
  // INFO shows the time left while the shutdown waits (and only then).
  std::string left = InfoField(reader, "server", "shutdown_in_milliseconds");
  EXPECT_GT(std::atoll(left.c_str()), 0) << "'" << left << "'";
  EXPECT_LE(std::atoll(left.c_str()), 3000);
  writer.Send({"SET", "paused", "1"});
  ASSERT_TRUE(Exited()) << primary_->LogText();
  std::string log = primary_->LogText();
  EXPECT_TRUE(Has(log, "Lagging replica " + ReplicaAddr() + " reported offset ")) << log;
  EXPECT_TRUE(Has(log, "behind master, lag=")) << log;
  EXPECT_TRUE(Has(log, ", state=online.")) << log;
  EXPECT_TRUE(Has(log, "0 of 1 replicas are in sync when shutting down.")) << log;
  // The SHUTDOWN client got no reply; the paused write never ran.
  std::string got;
  EXPECT_TRUE(c.WaitClosed(5000, &got));
  EXPECT_EQ(got, "");
  got.clear();
  EXPECT_TRUE(writer.WaitClosed(5000, &got));
  EXPECT_EQ(got, "");
}

// A replica a moment behind (DEBUG SLEEP) catches up; the primary exits right after, with its
// last write on the replica.
TEST_P(ShutdownWait, CaughtUpReplicaHasTheLastWrite) {
  Start({"--shutdown-timeout", "60"});
  RespClient p(primary_->port()), r(replica_->port());
  r.Send({"DEBUG", "SLEEP", "1"});
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the replica is asleep
  EXPECT_EQ(p.Call({"SET", "last", "write"}).str, "OK");
  p.Send({"SHUTDOWN", "NOSAVE"});
  ASSERT_TRUE(Exited()) << primary_->LogText();
  std::string log = primary_->LogText();
  EXPECT_TRUE(Has(log, "Waiting for replicas before shutting down.")) << log;
  EXPECT_TRUE(Has(log, "1 of 1 replicas are in sync when shutting down.")) << log;
  EXPECT_FALSE(Has(log, "Lagging replica")) << log;
  EXPECT_EQ(r.Read().raw, "+OK\r\n");
  EXPECT_EQ(r.Call({"GET", "last"}).str, "write");
}

TEST_P(ShutdownWait, AbortCancelsTheShutdown) {
  Start({"--shutdown-timeout", "60"});
  RespClient c(primary_->port()), other(primary_->port()), writer(primary_->port());
  EXPECT_EQ(other.Raw({"SHUTDOWN", "ABORT"}), "-ERR No shutdown in progress.\r\n");
  EXPECT_EQ(other.Raw({"SHUTDOWN", "ABORT", "NOW"}), "-ERR syntax error\r\n");
  EXPECT_EQ(other.Raw({"SHUTDOWN", "SAVE", "NOSAVE"}), "-ERR syntax error\r\n");
  EXPECT_EQ(other.Raw({"SHUTDOWN", "LATER"}), "-ERR syntax error\r\n");
  StopReplica();
  c.Send({"SHUTDOWN"});
  ASSERT_TRUE(WaitFor(
      [&] { return Has(primary_->LogText(), "Waiting for replicas before shutting down."); }));
  writer.Send({"INCR", "n"});
  EXPECT_EQ(other.Raw({"SHUTDOWN", "ABORT"}), "+OK\r\n");
  EXPECT_EQ(c.Read().raw, "-ERR Errors trying to SHUTDOWN. Check logs.\r\n");
  EXPECT_EQ(writer.Read().raw, ":1\r\n");  // writes resume
  EXPECT_EQ(other.Raw({"SHUTDOWN", "ABORT"}), "-ERR No shutdown in progress.\r\n");
  EXPECT_EQ(other.Call({"INFO", "server"}).str.find("shutdown_in_milliseconds"), std::string::npos);
  EXPECT_TRUE(Has(primary_->LogText(), "Shutdown manually aborted.")) << primary_->LogText();
  EXPECT_TRUE(primary_->Alive());
  EXPECT_EQ(other.Raw({"PING"}), "+PONG\r\n");
  // The aborted SHUTDOWN's client goes on (redis-server 7.0.15 fails an assertion there).
  if (GetParam() == Kind::kKvstore) EXPECT_EQ(c.Raw({"PING"}), "+PONG\r\n");
}

// NOW does not wait, whatever the timeout.
TEST_P(ShutdownWait, NowSkipsTheWait) {
  Start({"--shutdown-timeout", "600"});
  StopReplica();
  RespClient c(primary_->port());
  c.Send({"SHUTDOWN", "NOW"});
  ASSERT_TRUE(Exited()) << primary_->LogText();
  std::string log = primary_->LogText();
  EXPECT_FALSE(Has(log, "Waiting for replicas before shutting down.")) << log;
  EXPECT_TRUE(Has(log, "Lagging replica " + ReplicaAddr())) << log;
}

// A timeout of 0 does not wait either.
TEST_P(ShutdownWait, ZeroTimeoutSkipsTheWait) {
  Start({"--shutdown-timeout", "0"});
  StopReplica();
  RespClient c(primary_->port());
  c.Send({"SHUTDOWN"});
  ASSERT_TRUE(Exited()) << primary_->LogText();
  EXPECT_FALSE(Has(primary_->LogText(), "Waiting for replicas before shutting down."));
}

// SIGTERM waits as SHUTDOWN does; with shutdown-on-sigterm now it does not.
TEST_P(ShutdownWait, SigtermWaitsUnlessTheFlagsSayNow) {
  Start({"--shutdown-timeout", "600"});
  StopReplica();
  kill(primary_->pid(), SIGTERM);
  ASSERT_TRUE(WaitFor([&] {
    return Has(primary_->LogText(), "Waiting for replicas before shutting down.");
  })) << primary_->LogText();
  RespClient c(primary_->port());
  EXPECT_EQ(c.Raw({"SHUTDOWN", "ABORT"}), "+OK\r\n");
  EXPECT_EQ(c.Raw({"CONFIG", "SET", "shutdown-on-sigterm", "now"}), "+OK\r\n");
  kill(primary_->pid(), SIGTERM);
  ASSERT_TRUE(Exited()) << primary_->LogText();
  std::string log = primary_->LogText();
  size_t second = log.rfind("Received SIGTERM");
  ASSERT_NE(second, std::string::npos);
  EXPECT_FALSE(Has(log.substr(second), "Waiting for replicas")) << log;
}

// A second SIGINT while the first one's shutdown waits: the user insists, the process exits at
// once with status 1.
TEST_P(ShutdownWait, SecondSigintExitsAtOnce) {
  Start({"--shutdown-timeout", "600"});
  StopReplica();
  kill(primary_->pid(), SIGINT);
  ASSERT_TRUE(WaitFor([&] {
    return Has(primary_->LogText(), "Waiting for replicas before shutting down.");
  })) << primary_->LogText();
  kill(primary_->pid(), SIGINT);
  EXPECT_EQ(primary_->Stop(30000), 1) << primary_->LogText();
  EXPECT_TRUE(Has(primary_->LogText(), "You insist... exiting now.")) << primary_->LogText();
}

INSTANTIATE_TEST_SUITE_P(Servers, ShutdownWait, ::testing::Values(Kind::kKvstore, Kind::kRedis),
                         [](const auto& info) {
                           return info.param == Kind::kKvstore ? "Kvstore" : "Redis";
                         });

}  // namespace
}  // namespace kv::test
