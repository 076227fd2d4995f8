// A primary restarted from its own snapshot keeps its replicas with a partial resync: the
// snapshot's aux fields hold the replication ID and offset, the restarted primary takes them as
// its secondary ID, and the keys that expired while it was down reach the replicas as DELs
// through the backlog (or, when those DELs overflow the backlog, the replicas resync fully).
// Each case runs with kvstore and redis-server in either role; a sub-replica hangs off the
// replica, as in Redis' own test of the same behaviour.
#include <gtest/gtest.h>

#include <string>
#include <tuple>

#include "tests/support/process.h"
#include "tests/support/resp_client.h"
#include "tests/support/wait.h"

namespace kv::test {
namespace {

using Kind = ServerProcess::Kind;

std::string Name(Kind k) { return k == Kind::kKvstore ? "Kvstore" : "Redis"; }

class PrimaryRestart : public ::testing::TestWithParam<std::tuple<Kind, Kind>> {
 protected:
  void SetUp() override {
    if (!HaveRedisServer()) GTEST_SKIP() << "redis-server is not installed";
    auto [primary_kind, replica_kind] = GetParam();
    // Save points, so the SIGTERM of a restart saves the snapshot the restart loads; no
    // timeout, so only the restart breaks the links (Redis' test does the same); no pings, so
    // the offsets are the writes'.
    primary_ = std::make_unique<ServerProcess>(
        primary_kind, std::vector<std::string>{"--save", "3600 1", "--repl-timeout", "3600",
                                               "--repl-ping-replica-period", "3600",
                                               "--repl-diskless-sync-delay", "0"});
    replica_ = std::make_unique<ServerProcess>(replica_kind, Follow(*primary_));
    sub_ = std::make_unique<ServerProcess>(replica_kind, Follow(*replica_));
    p_ = std::make_unique<RespClient>(primary_->port());
    r_ = std::make_unique<RespClient>(replica_->port());
    s_ = std::make_unique<RespClient>(sub_->port());
    ASSERT_TRUE(InSync(*p_, *r_));
    ASSERT_TRUE(InSync(*r_, *s_));
  }

  static std::vector<std::string> Follow(const ServerProcess& p) {
    return {"--replicaof", "127.0.0.1 " + std::to_string(p.port()), "--repl-diskless-sync-delay",
            "0"};
  }

  // Restarts the primary (SIGTERM, which saves) and waits for both links to be up again.
  void RestartPrimary(std::vector<std::string> extra = {}) {
    ASSERT_TRUE(InSync(*p_, *r_));
    ASSERT_TRUE(InSync(*r_, *s_));
    ASSERT_EQ(r_->Call({"CONFIG", "RESETSTAT"}).str, "OK");
    ASSERT_TRUE(primary_->Restart(std::move(extra))) << primary_->LogText();
    p_ = std::make_unique<RespClient>(primary_->port());
    ASSERT_TRUE(InSync(*p_, *r_)) << primary_->LogText();
    ASSERT_TRUE(InSync(*r_, *s_));
  }

  // Keys in every database that expire 10 ms from now, with active expiry off so only the
  // restart's load finds them expired.
  void SetExpiring(int n) {
    ASSERT_EQ(p_->Call({"DEBUG", "SET-ACTIVE-EXPIRE", "0"}).str, "OK");
    for (int j = 0; j < n; j++) {
      p_->Call({"SELECT", std::to_string(j % 16)});
      ASSERT_EQ(p_->Call({"SET", std::to_string(j), "somevalue", "PX", "10"}).str, "OK");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }

  void ExpectSameDigests() {
    std::string digest = p_->Call({"DEBUG", "DIGEST"}).str;
    EXPECT_EQ(r_->Call({"DEBUG", "DIGEST"}).str, digest);
    EXPECT_EQ(s_->Call({"DEBUG", "DIGEST"}).str, digest);
  }

  std::unique_ptr<ServerProcess> primary_, replica_, sub_;
  std::unique_ptr<RespClient> p_, r_, s_;
};

TEST_P(PrimaryRestart, PartialResyncFromTheSnapshotsAuxFields) {
  for (int i = 0; i < 100; i++) p_->Call({"SET", "k" + std::to_string(i), std::to_string(i)});
  std::string old_id = InfoField(*p_, "replication", "master_replid");
  int64_t old_offset = InfoInt(*p_, "replication", "master_repl_offset");
  RestartPrimary();
  EXPECT_EQ(InfoInt(*p_, "stats", "sync_partial_ok"), 1)
      << primary_->LogText() << replica_->LogText();
  EXPECT_EQ(InfoInt(*p_, "stats", "sync_full"), 0);
  // The replica's own ID changed with the primary's, so its sub-replica resynced partially.
  EXPECT_EQ(InfoInt(*r_, "stats", "sync_partial_ok"), 1);
  // The old history is the secondary ID, continued from the offset after the saved one (a
  // shutdown may add to the stream: Redis asks its replicas for an ack).
  EXPECT_NE(InfoField(*p_, "replication", "master_replid"), old_id);
  EXPECT_EQ(InfoField(*p_, "replication", "master_replid2"), old_id);
  int64_t offset = InfoInt(*p_, "replication", "master_repl_offset");
  EXPECT_GE(offset, old_offset);
  EXPECT_EQ(InfoInt(*p_, "replication", "second_repl_offset"), offset + 1);
  ExpectSameDigests();
  EXPECT_EQ(r_->Call({"GET", "k42"}).str, "42");
}

// The keys that expired while the primary was down are deleted by its load and the DELs go
// through the backlog to the replicas, which end with the primary's dataset.
TEST_P(PrimaryRestart, KeysExpiredAtLoadReachTheReplicasAsDels) {
  SetExpiring(1024);
  RestartPrimary();
  EXPECT_EQ(InfoInt(*p_, "stats", "sync_partial_ok"), 1);
  EXPECT_EQ(InfoInt(*p_, "stats", "sync_full"), 0);
  EXPECT_EQ(InfoInt(*r_, "stats", "sync_partial_ok"), 1);
  EXPECT_EQ(InfoInt(*p_, "persistence", "rdb_last_load_keys_expired"), 1024);
  ExpectSameDigests();
  r_->Call({"SELECT", "3"});
  EXPECT_EQ(r_->Call({"DEBUG", "OBJECT", "3"}).str, "ERR no such key");
}

// More DELs than the backlog holds: the replicas cannot continue and resync fully.
TEST_P(PrimaryRestart, TooManyExpiredKeysForTheBacklogMeanAFullResync) {
  ASSERT_EQ(p_->Call({"CONFIG", "SET", "repl-backlog-size", "16384"}).str, "OK");
  SetExpiring(2048);
  RestartPrimary({"--repl-backlog-size", "16384"});
  EXPECT_GT(InfoInt(*p_, "replication", "repl_backlog_first_byte_offset"),
            InfoInt(*p_, "replication", "second_repl_offset"));
  EXPECT_EQ(InfoInt(*p_, "stats", "sync_partial_ok"), 0);
  EXPECT_EQ(InfoInt(*p_, "stats", "sync_full"), 1);
  EXPECT_EQ(InfoInt(*p_, "persistence", "rdb_last_load_keys_expired"), 2048);
  EXPECT_EQ(InfoInt(*r_, "stats", "sync_full"), 1);
  ExpectSameDigests();
}

INSTANTIATE_TEST_SUITE_P(Servers, PrimaryRestart,
                         ::testing::Values(std::make_tuple(Kind::kKvstore, Kind::kKvstore),
                                           std::make_tuple(Kind::kKvstore, Kind::kRedis),
                                           std::make_tuple(Kind::kRedis, Kind::kKvstore)),
                         [](const auto& info) {
                           return Name(std::get<0>(info.param)) + "PrimaryOf" +
                                  Name(std::get<1>(info.param));
                         });

}  // namespace
}  // namespace kv::test
