// The backlog's lifetime as the primary's replicas see it: a replica that comes back before
// repl-backlog-ttl continues from the backlog; one that comes back after it finds the backlog
// (and the history) gone, which counts as a failed partial resync. The replica drops its own
// link and sleeps, as Redis' test does (MULTI, CLIENT KILL of the primary, DEBUG SLEEP, EXEC):
// the killed connection must end at once, not when the sleep is over. A replica back from a
// detour to another node continues in the db the stream had selected.
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

class BacklogTtl : public ::testing::TestWithParam<std::tuple<Kind, Kind>> {
 protected:
  void SetUp() override {
    if (!HaveRedisServer()) GTEST_SKIP() << "redis-server is not installed";
  }

  // The replica kills its link to the primary and sleeps `sleep_s` in the same transaction.
  // Returns the primary's sync_partial_ok and sync_partial_err once the replica is back.
  std::pair<int64_t, int64_t> DropLinkAndSleep(const std::string& ttl, const std::string& sleep_s) {
    auto [primary_kind, replica_kind] = GetParam();
    ServerProcess primary(primary_kind,
                          {"--repl-backlog-ttl", ttl, "--repl-diskless-sync-delay", "0"});
    ServerProcess replica(replica_kind,
                          {"--replicaof", "127.0.0.1 " + std::to_string(primary.port())});
    RespClient p(primary.port()), r(replica.port());
    EXPECT_EQ(p.Call({"SET", "k", "v"}).str, "OK");
    EXPECT_TRUE(InSync(p, r));
    EXPECT_EQ(r.Call({"MULTI"}).str, "OK");
    r.Call({"CLIENT", "KILL", "127.0.0.1:" + std::to_string(primary.port())});
    r.Call({"DEBUG", "SLEEP", sleep_s});
    Reply exec = r.Call({"EXEC"});
    EXPECT_EQ(exec.elems.size(), 2u);
    if (exec.elems.size() == 2) EXPECT_EQ(exec.elems[0].str, "OK");
    EXPECT_EQ(p.Call({"SET", "k", "v2"}).str, "OK");
    EXPECT_TRUE(InSync(p, r));
    EXPECT_EQ(r.Call({"GET", "k"}).str, "v2");
    return {InfoInt(p, "stats", "sync_partial_ok"), InfoInt(p, "stats", "sync_partial_err")};
  }
};

// Back within the TTL: the replica continues.
TEST_P(BacklogTtl, ReplicaBackBeforeTheTtlContinues) {
  auto [ok, err] = DropLinkAndSleep("3600", "0.5");
  EXPECT_EQ(ok, 1);
  EXPECT_EQ(err, 0);
}

// Asleep for longer than the TTL: the primary had no replica for that long and freed its
// backlog, so the replica's PSYNC fails (and is counted) and it resyncs fully.
TEST_P(BacklogTtl, ReplicaBackAfterTheTtlCountsAFailedPartialResync) {
  auto [ok, err] = DropLinkAndSleep("1", "3");
  EXPECT_EQ(ok, 0);
  EXPECT_EQ(err, 1);
}

// A replica that follows another node for a while (one that refuses it: a replica with no link
// to its own primary answers -NOMASTERLINK) and comes back continues the stream where it left
// it, in the db the stream had selected: the primary sends no SELECT for writes to the same db.
TEST_P(BacklogTtl, ADetourKeepsTheStreamsSelectedDb) {
  auto [primary_kind, replica_kind] = GetParam();
  ServerProcess primary(primary_kind, {"--repl-diskless-sync-delay", "0"});
  ServerProcess replica(replica_kind,
                        {"--replicaof", "127.0.0.1 " + std::to_string(primary.port())});
  ServerProcess orphan(replica_kind, {"--replicaof", "127.0.0.1 " + std::to_string(FreePort())});
  RespClient p(primary.port()), r(replica.port());
  // Synced first, so that the writes come in the stream (with its SELECT), not in the snapshot.
  ASSERT_TRUE(InSync(p, r));
  ASSERT_EQ(p.Call({"SELECT", "9"}).str, "OK");
  ASSERT_EQ(p.Call({"SET", "a", "1"}).str, "OK");
  ASSERT_TRUE(InSync(p, r));
  ASSERT_EQ(r.Call({"REPLICAOF", "127.0.0.1", std::to_string(orphan.port())}).str, "OK");
  // The other node has refused it (both servers log the error reply).
  ASSERT_TRUE(WaitFor([&] { return replica.LogText().find("NOMASTERLINK") != std::string::npos; }))
      << replica.LogText();
  RespClient p9(primary.port());  // another client, in the same db: the stream needs no SELECT
  ASSERT_EQ(p9.Call({"SELECT", "9"}).str, "OK");
  ASSERT_EQ(p9.Call({"SET", "b", "2"}).str, "OK");
  ASSERT_EQ(r.Call({"REPLICAOF", "127.0.0.1", std::to_string(primary.port())}).str, "OK");
  ASSERT_TRUE(InSync(p, r));
  EXPECT_EQ(InfoInt(p, "stats", "sync_partial_ok"), 1);
  ASSERT_EQ(r.Call({"SELECT", "9"}).str, "OK");
  EXPECT_EQ(r.Call({"GET", "b"}).str, "2");
  EXPECT_EQ(r.Call({"DBSIZE"}).integer, 2);
  ASSERT_EQ(r.Call({"SELECT", "0"}).str, "OK");
  EXPECT_EQ(r.Call({"DBSIZE"}).integer, 0);
}

INSTANTIATE_TEST_SUITE_P(Servers, BacklogTtl,
                         ::testing::Values(std::make_tuple(Kind::kKvstore, Kind::kKvstore),
                                           std::make_tuple(Kind::kKvstore, Kind::kRedis),
                                           std::make_tuple(Kind::kRedis, Kind::kKvstore)),
                         [](const auto& info) {
                           return Name(std::get<0>(info.param)) + "PrimaryOf" +
                                  Name(std::get<1>(info.param));
                         });

// PSYNC with an offset that is no integer is an error, not a full resync (Redis 7.0's reply).
class PsyncArgs : public ::testing::TestWithParam<Kind> {};

TEST_P(PsyncArgs, AnOffsetThatIsNoIntegerIsAnError) {
  if (!HaveRedisServer()) GTEST_SKIP() << "redis-server is not installed";
  ServerProcess primary(GetParam());
  RespClient c(primary.port());
  std::string replid = InfoField(c, "replication", "master_replid");
  EXPECT_EQ(c.Raw({"PSYNC", replid, "offset_str"}),
            "-ERR value is not an integer or out of range\r\n");
  EXPECT_EQ(c.Raw({"PING"}), "+PONG\r\n");  // still an ordinary client
  EXPECT_EQ(InfoField(c, "replication", "connected_slaves"), "0");
}

INSTANTIATE_TEST_SUITE_P(Servers, PsyncArgs, ::testing::Values(Kind::kKvstore, Kind::kRedis),
                         [](const auto& info) { return Name(info.param); });

// CONFIG SET repl-backlog-size under 16 KB gives a 16 KB backlog, and CONFIG GET says so (Redis'
// minimum; its cluster tests set 100 to force full resyncs).
class BacklogSize : public ::testing::TestWithParam<Kind> {};

TEST_P(BacklogSize, HasASixteenKilobyteFloor) {
  if (!HaveRedisServer()) GTEST_SKIP() << "redis-server is not installed";
  ServerProcess server(GetParam());
  RespClient c(server.port());
  ASSERT_EQ(c.Raw({"CONFIG", "SET", "repl-backlog-size", "100"}), "+OK\r\n");
  EXPECT_EQ(c.Call({"CONFIG", "GET", "repl-backlog-size"}).elems.at(1).str, "16384");
  ASSERT_EQ(c.Raw({"CONFIG", "SET", "repl-backlog-size", "20000"}), "+OK\r\n");
  EXPECT_EQ(c.Call({"CONFIG", "GET", "repl-backlog-size"}).elems.at(1).str, "20000");
  EXPECT_EQ(InfoField(c, "replication", "repl_backlog_size"), "20000");
}

INSTANTIATE_TEST_SUITE_P(Servers, BacklogSize, ::testing::Values(Kind::kKvstore, Kind::kRedis),
                         [](const auto& info) { return Name(info.param); });

}  // namespace
}  // namespace kv::test
