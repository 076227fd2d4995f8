// The shared replication buffer (Redis 7.0's): the backlog and every replica's stream are one
// copy of the writes, and the history a replica still needs keeps the backlog longer than its
// configured size, so another replica that reconnects meanwhile resyncs partially. The same
// scenarios run with a kvstore and a redis-server primary (kvstore replicas), and the INFO
// figures must agree in what they show.
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

constexpr int64_t kValueBytes = 50 * 1024;

class ReplicationBuffer : public ::testing::TestWithParam<Kind> {
 protected:
  void SetUp() override {
    if (!HaveRedisServer()) GTEST_SKIP() << "redis-server is not installed";
    // The replicas of one batch share a snapshot (a second to join it), and the snapshot
    // takes 100 ms a key: it is still being sent while the test writes.
    primary_ = std::make_unique<ServerProcess>(
        GetParam(),
        std::vector<std::string>{"--repl-diskless-sync", "yes", "--repl-diskless-sync-delay", "1"});
    p_ = std::make_unique<RespClient>(primary_->port());
    ASSERT_EQ(p_->Call({"DEBUG", "POPULATE", "30"}).str, "OK");
  }

  std::string Port() const { return std::to_string(primary_->port()); }

  // Writes `n` values of kValueBytes, one command each.
  void Write(int n, const std::string& prefix) {
    for (int i = 0; i < n; i++) {
      ASSERT_EQ(p_->Call({"SET", prefix + std::to_string(i), std::string(kValueBytes, 'v')}).str,
                "OK");
    }
  }

  void SlowSnapshots() {
    ASSERT_EQ(p_->Call({"CONFIG", "SET", "rdb-key-save-delay", "100000"}).str, "OK");
  }

  std::unique_ptr<ServerProcess> primary_;
  std::unique_ptr<RespClient> p_;
};

// Two replicas waiting for their snapshot keep the writes made meanwhile: once, not twice.
TEST_P(ReplicationBuffer, ReplicasShareOneCopyOfTheStream) {
  SlowSnapshots();
  ServerProcess a(Kind::kKvstore), b(Kind::kKvstore);
  RespClient ra(a.port()), rb(b.port());
  ASSERT_EQ(ra.Call({"REPLICAOF", "127.0.0.1", Port()}).str, "OK");
  ASSERT_EQ(rb.Call({"REPLICAOF", "127.0.0.1", Port()}).str, "OK");
  ASSERT_TRUE(WaitFor([&] { return InfoInt(*p_, "persistence", "rdb_bgsave_in_progress") == 1; }));
  ASSERT_EQ(InfoInt(*p_, "stats", "sync_full"), 2) << "both replicas share the snapshot";
  Write(40, "shared:");  // 2 MB
  int64_t total = InfoInt(*p_, "memory", "mem_total_replication_buffers");
  int64_t stream = 40 * kValueBytes;
  EXPECT_GE(total, stream);
  EXPECT_LT(total, stream + stream / 2) << "the stream is kept once for both replicas";
  int64_t backlog_size = InfoInt(*p_, "replication", "repl_backlog_size");
  // The backlog counts as its configured size (Redis adds a few bytes of its block index).
  int64_t backlog_mem = InfoInt(*p_, "memory", "mem_replication_backlog");
  EXPECT_GE(backlog_mem, backlog_size);
  EXPECT_LT(backlog_mem, backlog_size + 1024);
  EXPECT_EQ(InfoInt(*p_, "memory", "mem_clients_slaves"), total - backlog_size);
  // Both get all of it once their snapshot is through.
  ASSERT_TRUE(InSync(*p_, ra));
  ASSERT_TRUE(InSync(*p_, rb));
  EXPECT_EQ(ra.Call({"DEBUG", "DIGEST"}).str, p_->Call({"DEBUG", "DIGEST"}).str);
  EXPECT_EQ(rb.Call({"DEBUG", "DIGEST"}).str, p_->Call({"DEBUG", "DIGEST"}).str);
  // Once they have read it, the buffer is back to the backlog's size (within a block).
  ASSERT_TRUE(WaitFor([&] {
    return InfoInt(*p_, "memory", "mem_total_replication_buffers") < 2 * backlog_size;
  })) << InfoInt(*p_, "memory", "mem_total_replication_buffers");
}

// The shared buffer is the replicas' together: one of two waiting replicas going leaves it to
// the other to the byte (unit integration/replication-buffer), and the last one going frees it
// down to the backlog.
TEST_P(ReplicationBuffer, TheBufferGoesWithTheLastReplicaThatNeedsIt) {
  SlowSnapshots();
  auto a = std::make_unique<ServerProcess>(Kind::kKvstore);
  auto b = std::make_unique<ServerProcess>(Kind::kKvstore);
  for (ServerProcess* r : {a.get(), b.get()}) {
    ASSERT_EQ(RespClient(r->port()).Call({"REPLICAOF", "127.0.0.1", Port()}).str, "OK");
  }
  ASSERT_TRUE(WaitFor([&] { return InfoInt(*p_, "persistence", "rdb_bgsave_in_progress") == 1; }));
  ASSERT_EQ(InfoInt(*p_, "stats", "sync_full"), 2);
  Write(40, "shared:");  // 2 MB
  int64_t total = InfoInt(*p_, "memory", "mem_total_replication_buffers");
  a.reset();
  ASSERT_TRUE(WaitFor([&] { return InfoInt(*p_, "replication", "connected_slaves") == 1; }));
  EXPECT_EQ(InfoInt(*p_, "memory", "mem_total_replication_buffers"), total);
  b.reset();
  ASSERT_TRUE(WaitFor([&] { return InfoInt(*p_, "replication", "connected_slaves") == 0; }));
  // Down to the backlog's size (1 MB of the 2), within one block (a value).
  int64_t backlog_size = InfoInt(*p_, "replication", "repl_backlog_size");
  ASSERT_LT(backlog_size + 2 * kValueBytes, total);
  EXPECT_TRUE(WaitFor([&] {
    return InfoInt(*p_, "memory", "mem_total_replication_buffers") < backlog_size + 2 * kValueBytes;
  })) << InfoInt(*p_, "memory", "mem_total_replication_buffers");
}

// A replica whose snapshot is still being sent keeps the stream from the snapshot's offset:
// the backlog holds that much, past its 16 KB, and a replica that was away meanwhile resyncs
// partially from it. Once the slow replica goes, the backlog shrinks back.
TEST_P(ReplicationBuffer, TheBacklogOutgrowsItsSizeForAReplicaThatNeedsIt) {
  ASSERT_EQ(p_->Call({"CONFIG", "SET", "repl-backlog-size", "16384"}).str, "OK");
  ServerProcess away(Kind::kKvstore);
  RespClient ra(away.port());
  ASSERT_EQ(ra.Call({"REPLICAOF", "127.0.0.1", Port()}).str, "OK");
  ASSERT_TRUE(InSync(*p_, ra));
  SlowSnapshots();
  auto slow = std::make_unique<ServerProcess>(Kind::kKvstore);
  RespClient rs(slow->port());
  ASSERT_EQ(rs.Call({"REPLICAOF", "127.0.0.1", Port()}).str, "OK");
  ASSERT_TRUE(WaitFor([&] { return InfoInt(*p_, "persistence", "rdb_bgsave_in_progress") == 1; }));
  // The first replica follows a server that is not there for a while (it keeps its primary's
  // history), and misses 1 MB of writes.
  ASSERT_EQ(ra.Call({"REPLICAOF", "127.0.0.1", std::to_string(FreePort())}).str, "OK");
  ASSERT_TRUE(WaitFor([&] { return InfoInt(*p_, "replication", "connected_slaves") == 1; }));
  Write(20, "missed:");
  EXPECT_GT(InfoInt(*p_, "replication", "repl_backlog_histlen"), 20 * kValueBytes);
  int64_t full = InfoInt(*p_, "stats", "sync_full");
  int64_t partial = InfoInt(*p_, "stats", "sync_partial_ok");
  ASSERT_EQ(ra.Call({"REPLICAOF", "127.0.0.1", Port()}).str, "OK");
  ASSERT_TRUE(InSync(*p_, ra));
  EXPECT_EQ(InfoInt(*p_, "stats", "sync_partial_ok"), partial + 1);
  EXPECT_EQ(InfoInt(*p_, "stats", "sync_full"), full);
  EXPECT_EQ(ra.Call({"DEBUG", "DIGEST"}).str, p_->Call({"DEBUG", "DIGEST"}).str);
  EXPECT_EQ(InfoInt(*p_, "persistence", "rdb_bgsave_in_progress"), 1)
      << "the slow snapshot was still running: the history was kept for it";
  slow.reset();  // its connection goes, and with it what it kept
  ASSERT_TRUE(WaitFor([&] {
    return InfoInt(*p_, "replication", "repl_backlog_histlen") < 2 * kValueBytes;
  })) << InfoInt(*p_, "replication", "repl_backlog_histlen");
}

// A replica's hard output limit under repl-backlog-size counts as that size (Redis'
// checkClientOutputBufferLimits): a replica that reconnects and is accepted a partial resync of
// more than the limit gets it, instead of being cut off at once and resyncing in a loop.
TEST_P(ReplicationBuffer, APartialResyncPastTheReplicaLimitIsNotCutOff) {
  ASSERT_EQ(p_->Call({"CONFIG", "SET", "repl-backlog-size", "20mb"}).str, "OK");
  ASSERT_EQ(p_->Call({"CONFIG", "SET", "client-output-buffer-limit", "replica 512k 0 0"}).str,
            "OK");
  ServerProcess a(Kind::kKvstore);
  RespClient ra(a.port());
  ASSERT_EQ(ra.Call({"REPLICAOF", "127.0.0.1", Port()}).str, "OK");
  ASSERT_TRUE(InSync(*p_, ra));
  // The replica is cut off, and 4 MB are written before it comes back.
  const std::string big(2 * 1024 * 1024, 'A');
  ASSERT_EQ(p_->Call({"MULTI"}).str, "OK");
  p_->Call({"CLIENT", "KILL", "TYPE", "replica"});
  p_->Call({"SET", "k1", big});
  p_->Call({"SET", "k2", big});
  p_->Call({"DEBUG", "SLEEP", "2"});  // the replica reconnects meanwhile
  ASSERT_EQ(p_->Call({"EXEC"}).elems.size(), 4u);
  ASSERT_EQ(p_->Call({"SET", "k3", big}).str, "OK");
  ASSERT_TRUE(InSync(*p_, ra));
  EXPECT_EQ(InfoInt(*p_, "stats", "sync_full"), 1);
  EXPECT_EQ(InfoInt(*p_, "stats", "sync_partial_ok"), 1);
  EXPECT_EQ(ra.Call({"DEBUG", "DIGEST"}).str, p_->Call({"DEBUG", "DIGEST"}).str);
}

INSTANTIATE_TEST_SUITE_P(Servers, ReplicationBuffer,
                         ::testing::Values(Kind::kKvstore, Kind::kRedis), [](const auto& info) {
                           return info.param == Kind::kKvstore ? "kvstore" : "redis";
                         });

}  // namespace
}  // namespace kv::test
