// A replica loading its primary's snapshot from the socket (repl-diskless-load): with swapdb it
// loads into a second dataset while its clients keep the old one (INFO async_loading:1; only
// the no-async-loading commands and CONFIG SET appendonly answer -LOADING), then swaps; with
// on-empty-db the dataset is empty meanwhile and clients get -LOADING (INFO loading:1), as
// during Redis' blocking load. Both kvstore and redis-server replicas, of either primary.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "tests/support/process.h"
#include "tests/support/resp_client.h"
#include "tests/support/wait.h"

namespace kv::test {
namespace {

using Kind = ServerProcess::Kind;

std::string Name(Kind k) { return k == Kind::kKvstore ? "Kvstore" : "Redis"; }

class DisklessLoad : public ::testing::TestWithParam<std::tuple<Kind, Kind>> {
 protected:
  void SetUp() override {
    if (!HaveRedisServer()) GTEST_SKIP() << "redis-server is not installed";
    auto [primary_kind, replica_kind] = GetParam();
    primary_ = std::make_unique<ServerProcess>(
        primary_kind,
        std::vector<std::string>{"--repl-diskless-sync", "yes", "--repl-diskless-sync-delay", "0"});
    p_ = std::make_unique<RespClient>(primary_->port());
    ASSERT_EQ(p_->Call({"DEBUG", "POPULATE", "2000"}).str, "OK");
  }

  // A replica with `mode`, slowed to about a second of loading (500 us per key).
  std::unique_ptr<ServerProcess> StartReplica(const std::string& mode) {
    Kind kind = std::get<1>(GetParam());
    std::vector<std::string> args = {"--repl-diskless-load", mode, "--key-load-delay", "500"};
    // Redis loads on its event loop and answers clients every so many bytes loaded.
    if (kind == Kind::kRedis) {
      args.insert(args.end(), {"--loading-process-events-interval-bytes", "1024"});
    }
    return std::make_unique<ServerProcess>(kind, args);
  }

  void Follow(RespClient& r) {
    ASSERT_EQ(r.Call({"REPLICAOF", "127.0.0.1", std::to_string(primary_->port())}).str, "OK");
  }

  std::unique_ptr<ServerProcess> primary_;
  std::unique_ptr<RespClient> p_;
};

// A full resync within the same history (the backlog could not serve the replica's PSYNC):
// the old dataset is an earlier point of the new one, and clients keep reading it.
TEST_P(DisklessLoad, SwapdbServesTheOldDatasetWithinTheSameHistory) {
  auto replica = StartReplica("swapdb");
  RespClient r(replica->port());
  ASSERT_EQ(r.Call({"CONFIG", "SET", "key-load-delay", "0"}).str, "OK");
  Follow(r);
  ASSERT_TRUE(InSync(*p_, r));
  ASSERT_EQ(r.Call({"CONFIG", "SET", "key-load-delay", "500"}).str, "OK");
  // The link drops and the backlog moves past the replica's offset before it is back.
  ASSERT_EQ(p_->Call({"MULTI"}).str, "OK");
  p_->Call({"CLIENT", "KILL", "TYPE", "replica"});
  p_->Call({"CONFIG", "SET", "repl-backlog-size", "16384"});
  for (int i = 0; i < 10; i++)
    p_->Call({"SET", "big" + std::to_string(i), std::string(16384, 'A')});
  ASSERT_EQ(p_->Call({"EXEC"}).elems.size(), 12u);
  // The replica that was cut off keeps no history: the backlog is within a block or two of its
  // size as soon as the writes are in it, before the replica can reconnect.
  EXPECT_LT(InfoInt(*p_, "replication", "repl_backlog_histlen"), 3 * 16384);
  ASSERT_TRUE(WaitFor([&] { return InfoField(r, "persistence", "async_loading") == "1"; }))
      << replica->LogText() << "primary:\n"
      << primary_->LogText();
  EXPECT_EQ(InfoField(r, "persistence", "loading"), "0");
  EXPECT_EQ(r.Call({"GET", "key:1"}).str, "value:1");
  EXPECT_EQ(r.Call({"DBSIZE"}).integer, 2000);
  EXPECT_EQ(r.Call({"CONFIG", "SET", "appendonly", "no"}).str,
            "LOADING Redis is loading the dataset in memory");
  EXPECT_EQ(r.Call({"REPLICAOF", "NO", "ONE"}).str,
            "LOADING Redis is loading the dataset in memory");
  ASSERT_TRUE(InSync(*p_, r));
  EXPECT_EQ(InfoField(r, "persistence", "async_loading"), "0");
  EXPECT_EQ(r.Call({"DBSIZE"}).integer, 2010);
  EXPECT_EQ(r.Call({"DEBUG", "DIGEST"}).str, p_->Call({"DEBUG", "DIGEST"}).str);
  std::string log = replica->LogText();
  EXPECT_NE(log.find("MASTER <-> REPLICA sync: Swapping active DB with loaded DB"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("MASTER <-> REPLICA sync: Discarding old DB in background"),
            std::string::npos);
}

// Another primary's data: the replica's own dataset is no earlier point of it, so clients get
// -LOADING while it loads (the old dataset is kept only in case the load fails).
TEST_P(DisklessLoad, SwapdbOfAnotherHistoryAnswersLoading) {
  auto replica = StartReplica("swapdb");
  RespClient r(replica->port());
  ASSERT_EQ(r.Call({"SET", "mykey", "myvalue"}).str, "OK");
  Follow(r);
  ASSERT_TRUE(WaitFor([&] { return InfoField(r, "persistence", "loading") == "1"; }))
      << replica->LogText();
  EXPECT_EQ(InfoField(r, "persistence", "async_loading"), "0");
  EXPECT_EQ(r.Call({"GET", "mykey"}).str, "LOADING Redis is loading the dataset in memory");
  ASSERT_TRUE(InSync(*p_, r));
  EXPECT_TRUE(r.Call({"GET", "mykey"}).is_null);
  EXPECT_EQ(r.Call({"DBSIZE"}).integer, 2000);
}

TEST_P(DisklessLoad, OnEmptyDbAnswersLoadingWhileItLoads) {
  auto replica = StartReplica("on-empty-db");
  RespClient r(replica->port());
  Follow(r);
  ASSERT_TRUE(WaitFor([&] { return InfoField(r, "persistence", "loading") == "1"; }))
      << replica->LogText();
  EXPECT_EQ(InfoField(r, "persistence", "async_loading"), "0");
  EXPECT_EQ(r.Call({"GET", "key:1"}).str, "LOADING Redis is loading the dataset in memory");
  EXPECT_EQ(r.Call({"DBSIZE"}).str, "LOADING Redis is loading the dataset in memory");
  ASSERT_TRUE(InSync(*p_, r));
  EXPECT_EQ(InfoField(r, "persistence", "loading"), "0");
  EXPECT_EQ(r.Call({"GET", "key:1"}).str, "value:1");
  EXPECT_EQ(r.Call({"DBSIZE"}).integer, 2000);
}

// A full sync replaces the dataset whichever way the replica loads it: a client tracking keys
// there gets the null invalidation of a flush (RESP3) at once, and a transaction that WATCHed a
// key of the old dataset fails, as after FLUSHALL.
TEST_P(DisklessLoad, AFullSyncInvalidatesTrackedAndWatchedKeys) {
  for (const char* mode : {"disabled", "swapdb"}) {
    SCOPED_TRACE(mode);
    auto replica = std::make_unique<ServerProcess>(
        std::get<1>(GetParam()), std::vector<std::string>{"--repl-diskless-load", mode});
    RespClient r(replica->port()), tracker(replica->port()), watcher(replica->port());
    Follow(r);
    ASSERT_TRUE(InSync(*p_, r));
    tracker.Call({"HELLO", "3"});
    ASSERT_EQ(tracker.Call({"CLIENT", "TRACKING", "ON"}).str, "OK");
    ASSERT_EQ(tracker.Call({"GET", "key:1"}).str, "value:1");
    ASSERT_EQ(watcher.Call({"WATCH", "key:1"}).str, "OK");
    // A replica that was promoted has a history of its own: following again is a full sync.
    int64_t full_syncs = InfoInt(*p_, "stats", "sync_full");
    ASSERT_EQ(r.Call({"REPLICAOF", "NO", "ONE"}).str, "OK");
    Follow(r);
    ASSERT_TRUE(WaitFor([&] { return InfoInt(*p_, "stats", "sync_full") > full_syncs; }));
    ASSERT_TRUE(InSync(*p_, r));
    EXPECT_EQ(tracker.Read().raw, ">2\r\n$10\r\ninvalidate\r\n_\r\n");
    EXPECT_EQ(tracker.Call({"GET", "key:1"}).str, "value:1");
    ASSERT_EQ(watcher.Call({"MULTI"}).str, "OK");
    ASSERT_EQ(watcher.Call({"GET", "key:1"}).str, "QUEUED");
    EXPECT_TRUE(watcher.Call({"EXEC"}).is_null);
  }
}

INSTANTIATE_TEST_SUITE_P(Servers, DisklessLoad,
                         ::testing::Values(std::make_tuple(Kind::kKvstore, Kind::kKvstore),
                                           std::make_tuple(Kind::kRedis, Kind::kKvstore),
                                           std::make_tuple(Kind::kKvstore, Kind::kRedis)),
                         [](const auto& info) {
                           return Name(std::get<0>(info.param)) + "PrimaryOf" +
                                  Name(std::get<1>(info.param));
                         });

}  // namespace
}  // namespace kv::test
