// End-to-end tests of FAILOVER with real processes on loopback: a kvstore primary failing over to
// a kvstore replica and to a redis-server replica, and a redis-server primary failing over to a
// kvstore replica (which must take the PSYNC ... FAILOVER that promotes it); the errors, byte
// for byte against redis-server; TIMEOUT, FORCE and ABORT with a replica kept behind (SIGSTOP);
// INFO's master_failover_state along the way.
#include <gtest/gtest.h>
#include <signal.h>

#include <string>
#include <vector>

#include "tests/support/process.h"
#include "tests/support/resp_client.h"
#include "tests/support/wait.h"

namespace kv::test {
namespace {

using Kind = ServerProcess::Kind;
using Cmd = std::vector<std::string>;

std::string Name(Kind k) { return k == Kind::kKvstore ? "Kvstore" : "Redis"; }

ServerProcess StartPrimary(Kind k) { return ServerProcess(k, {"--repl-diskless-sync-delay", "0"}); }

// A replica of `primary` that has its whole stream.
std::unique_ptr<ServerProcess> StartReplica(Kind k, ServerProcess& primary) {
  auto r = std::make_unique<ServerProcess>(
      k, Cmd{"--replicaof", "127.0.0.1 " + std::to_string(primary.port()),
             "--repl-diskless-sync-delay", "0"});
  RespClient p(primary.port()), rc(r->port());
  EXPECT_TRUE(InSync(p, rc)) << r->LogText();
  // The primary has seen the replica's ACK: it is online with the whole stream.
  EXPECT_TRUE(WaitFor([&] {
    std::string line = InfoField(p, "replication", "slave0");
    return line.find("state=online") != std::string::npos &&
           line.find("offset=" + InfoField(p, "replication", "master_repl_offset")) !=
               std::string::npos;
  })) << InfoField(p, "replication", "slave0");
  return r;
}

// Resumes a stopped process when the test ends, whatever happens.
struct Resume {
  pid_t pid;
  ~Resume() { kill(pid, SIGCONT); }
};

std::string State(RespClient& c) { return InfoField(c, "replication", "master_failover_state"); }

// ---- errors, compared with redis-server ----

// What each server answers, in order; the test compares kvstore's with redis-server's.
std::vector<std::string> ErrorTranscript(Kind k) {
  std::vector<std::string> out;
  ServerProcess primary = StartPrimary(k);
  RespClient c(primary.port());
  for (const Cmd& cmd : std::vector<Cmd>{
           {"FAILOVER"},
           {"FAILOVER", "ABORT"},
           {"FAILOVER", "abort", "TIMEOUT", "5"},
           {"FAILOVER", "TIMEOUT", "0"},
           {"FAILOVER", "TIMEOUT", "-3"},
           {"FAILOVER", "TIMEOUT", "abc"},
           {"FAILOVER", "TIMEOUT", "10", "TIMEOUT", "20"},
           {"FAILOVER", "TO", "127.0.0.1"},
           {"FAILOVER", "TO", "127.0.0.1", "port"},
           {"FAILOVER", "FORCE", "FORCE"},
           {"FAILOVER", "BOGUS"},
           {"FAILOVER", "FORCE"},
           {"PSYNC", "0123456789012345678901234567890123456789", "1", "FAILOVER"},
       }) {
    out.push_back(c.Raw(cmd));
  }
  // Queued in a transaction, answered by EXEC.
  out.push_back(c.Raw({"MULTI"}));
  out.push_back(c.Raw({"FAILOVER"}));
  out.push_back(c.Raw({"EXEC"}));
  auto replica = StartReplica(k, primary);
  std::string rport = std::to_string(replica->port());
  for (const Cmd& cmd : std::vector<Cmd>{
           {"FAILOVER", "FORCE"},
           {"FAILOVER", "TIMEOUT", "100", "FORCE"},
           {"FAILOVER", "TO", "127.0.0.1", rport, "FORCE"},
           {"FAILOVER", "TO", "127.0.0.1", "1"},
           {"FAILOVER", "TO", "127.0.0.2", rport},
       }) {
    out.push_back(c.Raw(cmd));
  }
  RespClient r(replica->port());
  out.push_back(r.Raw({"FAILOVER"}));
  out.push_back(r.Raw({"FAILOVER", "ABORT"}));
  // A PSYNC FAILOVER that names another history is refused, and changes nothing.
  out.push_back(r.Raw({"PSYNC", "0123456789012345678901234567890123456789", "1", "FAILOVER"}));
  out.push_back(InfoField(r, "replication", "role"));
  return out;
}

TEST(FailoverErrors, SameAsRedis) {
  if (!HaveRedisServer()) GTEST_SKIP() << "redis-server is not installed";
  std::vector<std::string> kv = ErrorTranscript(Kind::kKvstore);
  std::vector<std::string> redis = ErrorTranscript(Kind::kRedis);
  ASSERT_EQ(kv.size(), redis.size());
  for (size_t i = 0; i < kv.size(); i++) EXPECT_EQ(kv[i], redis[i]) << "step " << i;
  EXPECT_EQ(kv[0], "-ERR FAILOVER requires connected replicas.\r\n");
}

// ---- failing over, every pairing ----

struct Pair {
  Kind primary, replica;
};

class FailoverTo : public ::testing::TestWithParam<Pair> {
 protected:
  void SetUp() override {
    if (!HaveRedisServer()) GTEST_SKIP() << "redis-server is not installed";
  }
};

// The old primary follows the new one, with the link up, the same data and the history
// continued (no full resync of the old primary).
void ExpectSwapped(ServerProcess& old_primary, ServerProcess& new_primary) {
  RespClient o(old_primary.port()), n(new_primary.port());
  ASSERT_TRUE(WaitFor([&] {
    return InfoField(n, "replication", "role") == "master" &&
           InfoField(o, "replication", "role") == "slave" &&
           InfoField(o, "replication", "master_link_status") == "up" && State(o) == "no-failover";
  })) << "old:\n"
      << old_primary.LogText() << "new:\n"
      << new_primary.LogText();
  EXPECT_EQ(InfoField(o, "replication", "master_port"), std::to_string(new_primary.port()));
  EXPECT_EQ(State(n), "no-failover");
  EXPECT_EQ(n.Call({"DEBUG", "DIGEST"}).str, o.Call({"DEBUG", "DIGEST"}).str);
  EXPECT_EQ(InfoField(n, "stats", "sync_full"), "0") << new_primary.LogText();
  // Writes go to the new primary and reach the old one.
  EXPECT_EQ(n.Call({"SET", "after", "failover"}).str, "OK");
  ASSERT_TRUE(InSync(n, o));
  EXPECT_EQ(o.Call({"GET", "after"}).str, "failover");
  EXPECT_EQ(o.Raw({"SET", "x", "1"}), "-READONLY You can't write against a read only replica.\r\n");
}

void Fill(RespClient& c) {
  for (int i = 0; i < 200; i++) {
    c.Call({"SET", "k" + std::to_string(i), std::to_string(i)});
    c.Call({"RPUSH", "list", std::to_string(i)});
  }
  c.Call({"SELECT", "3"});
  c.Call({"HSET", "h", "f", "v"});
  c.Call({"SELECT", "0"});
}

TEST_P(FailoverTo, NamedReplica) {
  ServerProcess primary = StartPrimary(GetParam().primary);
  RespClient p(primary.port());
  Fill(p);
  auto replica = StartReplica(GetParam().replica, primary);
  std::string rport = std::to_string(replica->port());
  EXPECT_EQ(p.Raw({"FAILOVER", "TO", "127.0.0.1", rport}), "+OK\r\n");
  ExpectSwapped(primary, *replica);
  if (GetParam().primary == Kind::kKvstore) {
    std::string log = primary.LogText();
    EXPECT_NE(log.find("FAILOVER requested to 127.0.0.1:" + rport + "."), std::string::npos);
    EXPECT_NE(log.find("Failover target 127.0.0.1:" + rport + " is synced, failing over."),
              std::string::npos)
        << log;
  }
  if (GetParam().replica == Kind::kKvstore) {
    std::string log = replica->LogText();
    EXPECT_NE(log.find("Failover request received for replid"), std::string::npos) << log;
    EXPECT_NE(log.find("MASTER MODE enabled (failover request from"), std::string::npos) << log;
  }
}

TEST_P(FailoverTo, AnyReplica) {
  ServerProcess primary = StartPrimary(GetParam().primary);
  RespClient p(primary.port());
  Fill(p);
  auto replica = StartReplica(GetParam().replica, primary);
  EXPECT_EQ(p.Raw({"FAILOVER"}), "+OK\r\n");
  ExpectSwapped(primary, *replica);
  if (GetParam().primary == Kind::kKvstore) {
    EXPECT_NE(primary.LogText().find("FAILOVER requested to any replica."), std::string::npos);
  }
}

INSTANTIATE_TEST_SUITE_P(Pairs, FailoverTo,
                         ::testing::Values(Pair{Kind::kKvstore, Kind::kKvstore},
                                           Pair{Kind::kKvstore, Kind::kRedis},
                                           Pair{Kind::kRedis, Kind::kKvstore}),
                         [](const auto& info) {
                           return Name(info.param.primary) + "To" + Name(info.param.replica);
                         });

// ---- a replica kept behind: TIMEOUT, ABORT, FORCE ----

class FailoverBehind : public ::testing::TestWithParam<Kind> {
 protected:
  void SetUp() override {
    if (GetParam() == Kind::kRedis && !HaveRedisServer()) GTEST_SKIP();
    primary_ = std::make_unique<ServerProcess>(GetParam(), Cmd{"--repl-diskless-sync-delay", "0"});
    replica_ = StartReplica(GetParam(), *primary_);
    // The replica stops reading: what the primary writes next is never acknowledged.
    kill(replica_->pid(), SIGSTOP);
    resume_.reset(new Resume{replica_->pid()});  // in place: a temporary would resume it
    RespClient p(primary_->port());
    EXPECT_EQ(p.Call({"SET", "behind", "1"}).str, "OK");
  }
  std::string target() const { return std::to_string(replica_->port()); }
  std::unique_ptr<ServerProcess> primary_, replica_;
  std::unique_ptr<Resume> resume_;
};

// Writes wait while the failover waits for its target, then run.
TEST_P(FailoverBehind, TimeoutAbortsAndWritesResume) {
  RespClient p(primary_->port()), writer(primary_->port());
  EXPECT_EQ(p.Raw({"FAILOVER", "TO", "127.0.0.1", target(), "TIMEOUT", "1500"}), "+OK\r\n");
  EXPECT_EQ(State(p), "waiting-for-sync");
  EXPECT_EQ(p.Raw({"FAILOVER"}), "-ERR FAILOVER already in progress.\r\n");
  EXPECT_EQ(p.Raw({"REPLICAOF", "127.0.0.1", "1"}),
            "-ERR REPLICAOF not allowed while failing over.\r\n");
  writer.Send({"SET", "during", "1"});
  EXPECT_EQ(p.Call({"GET", "behind"}).str, "1");  // reads go on
  ASSERT_TRUE(WaitFor([&] { return State(p) == "no-failover"; }));
  EXPECT_EQ(writer.Read().raw, "+OK\r\n");
  EXPECT_EQ(InfoField(p, "replication", "role"), "master");
  if (GetParam() == Kind::kKvstore) {
    EXPECT_NE(primary_->LogText().find("FAILOVER to 127.0.0.1:" + target() +
                                       " aborted: Replica never caught up before timeout"),
              std::string::npos)
        << primary_->LogText();
  }
}

TEST_P(FailoverBehind, Abort) {
  RespClient p(primary_->port()), writer(primary_->port());
  EXPECT_EQ(p.Raw({"FAILOVER", "TO", "127.0.0.1", target()}), "+OK\r\n");
  writer.Send({"INCR", "during"});
  EXPECT_EQ(State(p), "waiting-for-sync");
  EXPECT_EQ(p.Raw({"FAILOVER", "ABORT"}), "+OK\r\n");
  EXPECT_EQ(writer.Read().raw, ":1\r\n");
  EXPECT_EQ(State(p), "no-failover");
  EXPECT_EQ(p.Raw({"FAILOVER", "ABORT"}), "-ERR No failover in progress.\r\n");
  EXPECT_EQ(InfoField(p, "replication", "role"), "master");
  if (GetParam() == Kind::kKvstore) {
    EXPECT_NE(primary_->LogText().find("aborted: Failover manually aborted"), std::string::npos);
  }
}

// FORCE: past the timeout the primary follows the target anyway; it stays in progress until
// the target answers its PSYNC.
TEST_P(FailoverBehind, ForceFailsOverAfterTheTimeout) {
  RespClient p(primary_->port());
  EXPECT_EQ(p.Raw({"FAILOVER", "TO", "127.0.0.1", target(), "TIMEOUT", "500", "FORCE"}), "+OK\r\n");
  ASSERT_TRUE(WaitFor([&] { return State(p) == "failover-in-progress"; })) << State(p);
  EXPECT_EQ(InfoField(p, "replication", "role"), "slave");
  kill(replica_->pid(), SIGCONT);
  RespClient r(replica_->port());
  ASSERT_TRUE(WaitFor([&] {
    return InfoField(r, "replication", "role") == "master" &&
           InfoField(p, "replication", "master_link_status") == "up" && State(p) == "no-failover";
  })) << primary_->LogText()
      << replica_->LogText();
  ASSERT_TRUE(InSync(r, p));
  EXPECT_EQ(r.Call({"DEBUG", "DIGEST"}).str, p.Call({"DEBUG", "DIGEST"}).str);
  if (GetParam() == Kind::kKvstore) {
    EXPECT_NE(primary_->LogText().find("FAILOVER to 127.0.0.1:" + target() +
                                       " time out exceeded, failing over."),
              std::string::npos);
  }
}

// An abort while in progress makes the server a primary again.
TEST_P(FailoverBehind, AbortInProgressRestoresThePrimary) {
  RespClient p(primary_->port()), writer(primary_->port());
  EXPECT_EQ(p.Raw({"FAILOVER", "TO", "127.0.0.1", target(), "TIMEOUT", "300", "FORCE"}), "+OK\r\n");
  ASSERT_TRUE(WaitFor([&] { return State(p) == "failover-in-progress"; }));
  // Following the target meanwhile: a read-only replica.
  EXPECT_EQ(writer.Raw({"SET", "during", "1"}),
            "-READONLY You can't write against a read only replica.\r\n");
  EXPECT_EQ(p.Raw({"FAILOVER", "ABORT"}), "+OK\r\n");
  EXPECT_EQ(writer.Raw({"SET", "after", "1"}), "+OK\r\n");
  EXPECT_EQ(InfoField(p, "replication", "role"), "master");
  EXPECT_EQ(State(p), "no-failover");
}

INSTANTIATE_TEST_SUITE_P(Servers, FailoverBehind, ::testing::Values(Kind::kKvstore, Kind::kRedis),
                         [](const auto& info) { return Name(info.param); });

}  // namespace
}  // namespace kv::test
