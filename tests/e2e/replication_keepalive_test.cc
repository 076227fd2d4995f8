// End-to-end tests of replicas that wait for their snapshot longer than their repl-timeout:
// behind another save, behind a slow disk-based save, and over the data link. A primary keeps
// a replica that waits alive with newlines (Redis' replicas count repl-timeout from the last
// byte they read); a data-link replica waits on its link for the first byte without a limit.
// Meanwhile no other save may replace the file a sync sends. And replicas whose load outlasts
// their primary's repl-timeout: they send the primary a newline a second while they load, which
// counts as their ACK. rdb-key-save-delay and key-load-delay make a save or a load slow on
// purpose, as in Redis. redis-server is the oracle.
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "net/socket.h"
#include "tests/support/populate.h"
#include "tests/support/process.h"
#include "tests/support/resp_client.h"
#include "tests/support/wait.h"
#include "transport/test_providers.h"

namespace kv::test {
namespace {

using Kind = ServerProcess::Kind;
using Cmd = std::vector<std::string>;

const char* Name(Kind k) { return k == Kind::kKvstore ? "kvstore" : "redis"; }

// 2,000 keys at 2 ms each: a save of about 4 s, twice a replica's repl-timeout of 2 s.
constexpr int kKeys = 2000;
const char* const kSlowSave = "2000";

// Waits for the replica's link and checks that it took one full sync, no more, and left the
// replica with the primary's dataset.
void ExpectOneSync(RespClient& p, RespClient& r, const ServerProcess& primary,
                   const ServerProcess& replica) {
  ASSERT_TRUE(WaitFor([&] { return InfoField(r, "replication", "master_link_status") == "up"; },
                      40000))
      << replica.LogText() << "\n---- primary:\n" << primary.LogText();
  EXPECT_EQ(InfoField(p, "stats", "sync_full"), "1") << replica.LogText();
  ASSERT_TRUE(InSync(p, r));
  EXPECT_EQ(r.Call({"DEBUG", "DIGEST"}).str, p.Call({"DEBUG", "DIGEST"}).str);
}

// rdb-key-save-delay and key-load-delay: microseconds after each key saved or loaded. Hidden
// parameters, as in Redis: CONFIG GET answers them by name, never through a pattern.
TEST(ReplicationKeepalive, SaveDelayIsAHiddenTestingKnob) {
  for (Kind kind : {Kind::kKvstore, Kind::kRedis}) {
    SCOPED_TRACE(Name(kind));
    ServerProcess server(kind);
    RespClient c(server.port());
    Reply all = c.Call({"CONFIG", "GET", "*"});
    ASSERT_GT(all.elems.size(), 100u);
    for (const char* knob : {"rdb-key-save-delay", "key-load-delay"}) {
      Reply one = c.Call({"CONFIG", "GET", knob});
      ASSERT_EQ(one.elems.size(), 2u) << one.raw;
      EXPECT_EQ(one.elems[1].str, "0");
      for (const Reply& e : all.elems) EXPECT_NE(e.str, knob);
    }
    EXPECT_EQ(c.Call({"CONFIG", "GET", "rdb-key-*"}).elems.size(), 0u);
    EXPECT_EQ(c.Call({"CONFIG", "GET", "key-load-*"}).elems.size(), 0u);
    ASSERT_NO_FATAL_FAILURE(Populate(c, 200));
    ASSERT_EQ(c.Call({"CONFIG", "SET", "rdb-key-save-delay", "5000"}).str, "OK");
    auto start = std::chrono::steady_clock::now();
    c.Call({"BGSAVE"});
    ASSERT_TRUE(WaitFor([&] {
      return InfoField(c, "persistence", "rdb_bgsave_in_progress") == "0";
    }));
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                  std::chrono::steady_clock::now() - start).count();
    EXPECT_GE(ms, 900) << "200 keys at 5 ms each";
    EXPECT_EQ(InfoField(c, "persistence", "rdb_last_bgsave_status"), "ok");
  }
}

struct Pair {
  Kind primary, replica;
};
// kvstore primaries with either replica, and redis-server alone as the oracle.
constexpr Pair kPairs[] = {{Kind::kKvstore, Kind::kRedis}, {Kind::kKvstore, Kind::kKvstore},
                           {Kind::kRedis, Kind::kRedis}};

// A primary started with `primary_args`, kKeys keys and a slow save; `before` runs on it; then
// a TCP replica with a repl-timeout of 2 s attaches, and must get there with one sync.
void SyncPastTheReplicasTimeout(Pair pair, const Cmd& primary_args,
                                const std::function<void(RespClient&)>& before) {
  SCOPED_TRACE(std::string(Name(pair.primary)) + " -> " + Name(pair.replica));
  // The replica's repl-timeout is short: the primary PINGs it once a second once it is online.
  Cmd args = primary_args;
  args.insert(args.end(), {"--repl-ping-replica-period", "1"});
  ServerProcess primary(pair.primary, args);
  RespClient p(primary.port());
  ASSERT_NO_FATAL_FAILURE(Populate(p, kKeys));
  ASSERT_EQ(p.Call({"CONFIG", "SET", "rdb-key-save-delay", kSlowSave}).str, "OK");
  ASSERT_NO_FATAL_FAILURE(before(p));
  Cmd replica_args = {"--repl-timeout", "2"};
  if (pair.replica == Kind::kKvstore) {
    replica_args.insert(replica_args.end(), {"--repl-transport", "tcp"});
  }
  ServerProcess replica(pair.replica, replica_args);
  RespClient r(replica.port());
  ASSERT_EQ(r.Call({"REPLICAOF", "127.0.0.1", std::to_string(primary.port())}).str, "OK");
  ASSERT_NO_FATAL_FAILURE(ExpectOneSync(p, r, primary, replica));
}

// A disk-based sync whose save outlasts the replica's repl-timeout: the snapshot child sends
// the replica a newline each second until the file follows, and the first sync goes through.
// Without them a redis-server replica gave up after its timeout and asked again, for ever.
// redis-server as the primary behaves the same.
TEST(ReplicationKeepalive, ReplicasWaitingForADiskSaveStayConnected) {
  for (Pair pair : kPairs) {
    SyncPastTheReplicasTimeout(pair, {"--repl-diskless-sync", "no"}, [](RespClient&) {});
  }
}

// A replica whose sync waits for another child (a BGSAVE) to end hears a newline each second
// from the primary until its +FULLRESYNC comes. The replication snapshot itself is quick.
TEST(ReplicationKeepalive, ReplicasWaitingBehindABackgroundSaveStayConnected) {
  for (Pair pair : kPairs) {
    SyncPastTheReplicasTimeout(pair, {"--repl-diskless-sync-delay", "0"}, [](RespClient& p) {
      p.Call({"BGSAVE"});
      // The child keeps the delay it was forked with; the replication snapshot goes without.
      ASSERT_EQ(p.Call({"CONFIG", "SET", "rdb-key-save-delay", "0"}).str, "OK");
      // About 4 s of it left: the replica attaches behind it.
      ASSERT_EQ(InfoField(p, "persistence", "rdb_bgsave_in_progress"), "1");
    });
  }
}

// While a replication snapshot child runs (a disk-based sync's slow save here), SAVE, BGSAVE
// and BGSAVE SCHEDULE answer that a background save is in progress, as Redis' do for any RDB
// child: a SAVE would rename another file over the one the sync is about to send.
TEST(ReplicationKeepalive, SavesWaitForTheReplicationChild) {
  for (Kind kind : {Kind::kKvstore, Kind::kRedis}) {
    SCOPED_TRACE(Name(kind));
    ServerProcess primary(kind, {"--repl-diskless-sync", "no"});
    RespClient p(primary.port());
    ASSERT_NO_FATAL_FAILURE(Populate(p, kKeys));
    ASSERT_EQ(p.Call({"CONFIG", "SET", "rdb-key-save-delay", kSlowSave}).str, "OK");
    ServerProcess replica(Kind::kRedis);
    RespClient r(replica.port());
    ASSERT_EQ(r.Call({"REPLICAOF", "127.0.0.1", std::to_string(primary.port())}).str, "OK");
    ASSERT_TRUE(WaitFor([&] {
      return InfoField(p, "persistence", "rdb_bgsave_in_progress") == "1";
    }));
    for (const Cmd& save : {Cmd{"SAVE"}, Cmd{"BGSAVE"}, Cmd{"BGSAVE", "SCHEDULE"}}) {
      EXPECT_EQ(p.Call(save).raw, "-ERR Background save already in progress\r\n") << save[0];
    }
    ASSERT_NO_FATAL_FAILURE(ExpectOneSync(p, r, primary, replica));
    ASSERT_TRUE(WaitFor([&] {
      return InfoField(p, "persistence", "rdb_bgsave_in_progress") == "0";
    }));
    ASSERT_EQ(p.Call({"CONFIG", "SET", "rdb-key-save-delay", "0"}).str, "OK");
    EXPECT_EQ(p.Call({"SAVE"}).str, "OK");
  }
}

// 2,000 values of 10 KB (20 MB, saved without compression): a loader's progress, and a
// replica's newline, comes every 2 MB of it, about 0.4 s apart at the load delay below.
void PopulateLarge(RespClient& c) {
  for (int batch = 0; batch < 10; batch++) {
    Cmd mset = {"MSET"};
    for (int i = batch * 200; i < (batch + 1) * 200; i++) {
      mset.push_back("big:" + std::to_string(i));
      mset.push_back(std::string(10000, static_cast<char>('a' + i % 26)));
    }
    ASSERT_EQ(c.Call(mset).str, "OK");
  }
}
// key-load-delay: 2 ms a key, 4 s for the 2,000 keys, twice the primary's repl-timeout.
const char* const kSlowLoad = "2000";

// The primary (repl-timeout 2 s) with the large dataset, and a replica whose load takes 4 s;
// the replica sends the primary a newline a second while it loads, which the primary counts
// as an ACK: the replica is not cut off as timed out, and the first sync is the only one.
void LoadPastThePrimarysTimeout(Kind primary_kind, Kind replica_kind, Cmd primary_args,
                                Cmd replica_args) {
  SCOPED_TRACE(std::string(Name(primary_kind)) + " -> " + Name(replica_kind));
  primary_args.insert(primary_args.end(), {"--repl-timeout", "2", "--repl-diskless-sync-delay",
                                           "0", "--rdbcompression", "no"});
  ServerProcess primary(primary_kind, primary_args);
  RespClient p(primary.port());
  ASSERT_NO_FATAL_FAILURE(PopulateLarge(p));
  replica_args.insert(replica_args.end(), {"--key-load-delay", kSlowLoad});
  ServerProcess replica(replica_kind, replica_args);
  RespClient r(replica.port());
  auto start = std::chrono::steady_clock::now();
  ASSERT_EQ(r.Call({"REPLICAOF", "127.0.0.1", std::to_string(primary.port())}).str, "OK");
  ASSERT_NO_FATAL_FAILURE(ExpectOneSync(p, r, primary, replica));
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                std::chrono::steady_clock::now() - start).count();
  EXPECT_GE(ms, 3000) << "the load was not slow: the test proves nothing";
  // A replica cut off mid-load comes back once loaded, with a partial resync.
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  EXPECT_EQ(InfoField(p, "stats", "sync_partial_ok"), "0") << primary.LogText();
  EXPECT_EQ(InfoField(p, "stats", "sync_full"), "1");
  EXPECT_EQ(InfoField(r, "replication", "master_link_status"), "up");
  // Online on the primary's side too: it counts for WAIT.
  EXPECT_NE(InfoField(p, "replication", "slave0").find("state=online"), std::string::npos)
      << InfoField(p, "replication", "slave0");
  ASSERT_EQ(p.Call({"SET", "after", "load"}).str, "OK");
  EXPECT_EQ(p.Call({"WAIT", "1", "5000"}).integer, 1);
}

// A replica that loads its snapshot from disk (repl-diskless-load disabled) for longer than
// its primary's repl-timeout stays connected, in every pairing of kvstore and redis-server:
// kvstore's replicas send the newlines, kvstore's primaries count them.
TEST(ReplicationKeepalive, ReplicasLoadingLongerThanThePrimarysTimeoutStayConnected) {
  const Cmd disk_load = {"--repl-diskless-load", "disabled"};
  for (Kind primary : {Kind::kKvstore, Kind::kRedis}) {
    for (Kind replica : {Kind::kKvstore, Kind::kRedis}) {
      Cmd replica_args = disk_load;
      if (replica == Kind::kKvstore) {
        replica_args.insert(replica_args.end(), {"--repl-transport", "tcp"});
      }
      LoadPastThePrimarysTimeout(primary, replica, {}, replica_args);
    }
  }
}

class ReplicationKeepaliveDataLink : public ::testing::TestWithParam<std::string> {};

// The same over the data link: the newlines go on the control connection while the snapshot
// comes over the link, whether the replica loads as it receives (swapdb) or from the file it
// received (disabled), and whether the primary streams the snapshot or sends its saved file
// (a replica that gets a file over the link goes online once it is delivered).
TEST_P(ReplicationKeepaliveDataLink, ReplicasLoadingLongerThanThePrimarysTimeoutStayConnected) {
  for (const char* sync : {"yes", "no"}) {
    for (const char* load : {"swapdb", "disabled"}) {
      SCOPED_TRACE(std::string("repl-diskless-sync ") + sync + ", repl-diskless-load " + load);
      LoadPastThePrimarysTimeout(Kind::kKvstore, Kind::kKvstore, {"--repl-diskless-sync", sync},
                                 {"--repl-diskless-load", load, "--repl-transport", "rdma",
                                  "--repl-rdma-provider", GetParam()});
    }
  }
}

// A data-link replica of a disk-based sync gets nothing on its link while the primary saves:
// it waits for the first byte however long the save takes (the link's stall limit, its
// repl-timeout, counts only once bytes flow), with no rebuild of the link and no second sync.
TEST_P(ReplicationKeepaliveDataLink, ASlowDiskSaveIsWaitedFor) {
  ServerProcess primary(Kind::kKvstore,
                        {"--repl-diskless-sync", "no", "--repl-ping-replica-period", "1"});
  RespClient p(primary.port());
  ASSERT_NO_FATAL_FAILURE(Populate(p, kKeys));
  ASSERT_EQ(p.Call({"CONFIG", "SET", "rdb-key-save-delay", kSlowSave}).str, "OK");
  ServerProcess replica(Kind::kKvstore, {"--repl-timeout", "2", "--repl-transport", "rdma",
                                         "--repl-rdma-provider", GetParam()});
  RespClient r(replica.port());
  ASSERT_EQ(r.Call({"REPLICAOF", "127.0.0.1", std::to_string(primary.port())}).str, "OK");
  ASSERT_NO_FATAL_FAILURE(ExpectOneSync(p, r, primary, replica));
  EXPECT_EQ(InfoField(r, "replication", "master_link_transport"), "rdma");
  EXPECT_EQ(InfoField(r, "replication", "rdma_link_errors"), "0") << replica.LogText();
  EXPECT_EQ(InfoField(r, "replication", "rdma_resumes"), "0");
}

// A primary that accepts the connection and never answers the handshake: the replica gives up
// after repl-timeout with Redis' line and connects again.
class HandshakeTimeout : public ::testing::TestWithParam<Kind> {};

TEST_P(HandshakeTimeout, ReplicaGivesUpOnASilentPrimaryAndRetries) {
  if (!HaveRedisServer()) GTEST_SKIP() << "redis-server is not installed";
  int port = FreePort();
  auto listener = net::ListenTcp("127.0.0.1", port, 16);
  ASSERT_TRUE(listener.ok());
  std::vector<net::Fd> accepted;  // held open, never read or written
  ServerProcess replica(
      GetParam(), {"--repl-timeout", "1", "--replicaof", "127.0.0.1 " + std::to_string(port)});
  ASSERT_TRUE(WaitFor(
      [&] {
        auto c = net::AcceptTcp(listener->get());
        if (c.ok()) accepted.push_back(std::move(*c));
        return accepted.size() >= 2;
      },
      30000, 50))
      << replica.LogText();
  EXPECT_NE(replica.LogText().find("Timeout connecting to the MASTER..."), std::string::npos)
      << replica.LogText();
  RespClient r(replica.port());
  EXPECT_EQ(InfoField(r, "replication", "master_link_status"), "down");
}

INSTANTIATE_TEST_SUITE_P(Servers, HandshakeTimeout, ::testing::Values(Kind::kKvstore, Kind::kRedis),
                         [](const auto& info) { return std::string(Name(info.param)); });

INSTANTIATE_TEST_SUITE_P(Providers, ReplicationKeepaliveDataLink,
                         ::testing::ValuesIn(transport::test::WithVerbs({"tcp", "shm"}, {"verbs"})),
                         transport::test::ConfigNamer());

}  // namespace
}  // namespace kv::test
