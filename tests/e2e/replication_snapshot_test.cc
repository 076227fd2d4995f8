// End-to-end tests of the snapshot child's transfers: the replicas of one snapshot get it at
// once, a replica lost or stalled mid-transfer fails none of the others, and a replica being
// sent its saved file is send_bulk until it is delivered. kvstore (over TCP and over the data
// link), with redis-server held to the same where Redis behaves alike.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/incompressible.h"
#include "tests/support/process.h"
#include "tests/support/resp_client.h"
#include "tests/support/wait.h"

namespace kv::test {
namespace {

using Kind = ServerProcess::Kind;
using Cmd = std::vector<std::string>;

// Two replicas share one snapshot child; one dies while the child serves it. The other gets its
// whole snapshot and goes online, and stays connected: before, the child's failed transfer
// dropped every replica of its batch once the child exited (a survivor that had loaded its
// snapshot came back with a partial resync, one still loading had to sync again).
// redis-server, whose primary feeds its replicas from the child through a pipe, behaves so.
TEST(ReplicationSync, AReplicaLostMidTransferDoesNotFailTheOthers) {
  for (Kind kind : {Kind::kKvstore, Kind::kRedis}) {
    SCOPED_TRACE(kind == Kind::kKvstore ? "kvstore" : "redis");
    // The snapshot starts once both replicas wait, and takes a second or more per replica.
    ServerProcess primary(kind, {"--repl-diskless-sync-max-replicas", "2",
                                 "--repl-diskless-sync-delay", "20", "--rdbcompression", "no"});
    RespClient p(primary.port());
    // 3 MB at 1 ms a key: bytes go out about once a second (the writer's 1 MiB buffer), so the
    // lost replica's socket is written to, and fails, well before the end.
    ASSERT_EQ(p.Call({"DEBUG", "POPULATE", "3000", "key", "1000"}).str, "OK");
    ASSERT_EQ(p.Call({"CONFIG", "SET", "rdb-key-save-delay", "1000"}).str, "OK");
    ServerProcess doomed(Kind::kRedis);
    ServerProcess survivor(Kind::kRedis);
    RespClient d(doomed.port()), r(survivor.port());
    ASSERT_EQ(d.Call({"REPLICAOF", "127.0.0.1", std::to_string(primary.port())}).str, "OK");
    ASSERT_TRUE(WaitFor([&] { return InfoField(p, "replication", "connected_slaves") == "1"; }));
    ASSERT_EQ(r.Call({"REPLICAOF", "127.0.0.1", std::to_string(primary.port())}).str, "OK");
    ASSERT_TRUE(WaitFor([&] {
      return InfoField(p, "persistence", "rdb_bgsave_in_progress") == "1";
    })) << primary.LogText();
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    ASSERT_EQ(kill(doomed.pid(), SIGKILL), 0);
    ASSERT_TRUE(WaitFor([&] {
      return InfoField(r, "replication", "master_link_status") == "up";
    }, 30000)) << survivor.LogText() << "\n---- primary:\n" << primary.LogText();
    ASSERT_TRUE(InSync(p, r));
    EXPECT_EQ(r.Call({"DEBUG", "DIGEST"}).str, p.Call({"DEBUG", "DIGEST"}).str);
    EXPECT_EQ(InfoField(p, "stats", "sync_full"), "2") << primary.LogText();
    // Nor was the survivor dropped once loaded (it would have come back with a partial resync).
    EXPECT_EQ(InfoField(p, "stats", "sync_partial_ok"), "0") << primary.LogText();
    if (kind == Kind::kKvstore) {
      // The transfer to the lost one did fail (else this test would prove nothing).
      EXPECT_NE(primary.LogText().find("Snapshot transfer to a replica failed"),
                std::string::npos) << primary.LogText();
    }
  }
}

// One snapshot child feeds all the replicas of its batch at once, as Redis' does: both are part
// way through their transfer at the same moment (before, the child served one replica after
// the other, so the second started once the first had its whole snapshot). TCP replicas and,
// for kvstore, data-link replicas.
TEST(ReplicationSync, OneSnapshotFeedsItsReplicasAtOnce) {
  struct Case {
    Kind primary;
    Cmd replica_args;  // empty: redis-server replicas
  };
  for (const Case& c : {Case{Kind::kKvstore, {}}, Case{Kind::kRedis, {}},
                        Case{Kind::kKvstore, {"--repl-transport", "rdma", "--repl-rdma-provider",
                                              "shm", "--repl-diskless-load", "swapdb"}}}) {
    SCOPED_TRACE(std::string(c.primary == Kind::kKvstore ? "kvstore" : "redis") +
                 (c.replica_args.empty() ? " -> redis" : " -> kvstore over the data link"));
    ServerProcess primary(c.primary, {"--repl-diskless-sync-max-replicas", "2",
                                      "--repl-diskless-sync-delay", "20", "--rdbcompression",
                                      "no"});
    RespClient p(primary.port());
    // 3 MB in 3,000 keys at 1 ms each: about 3 s of snapshot.
    ASSERT_EQ(p.Call({"DEBUG", "POPULATE", "3000", "key", "1000"}).str, "OK");
    ASSERT_EQ(p.Call({"CONFIG", "SET", "rdb-key-save-delay", "1000"}).str, "OK");
    Kind replica_kind = c.replica_args.empty() ? Kind::kRedis : Kind::kKvstore;
    ServerProcess a(replica_kind, c.replica_args), b(replica_kind, c.replica_args);
    RespClient ra(a.port()), rb(b.port());
    for (RespClient* r : {&ra, &rb}) {
      ASSERT_EQ(r->Call({"REPLICAOF", "127.0.0.1", std::to_string(primary.port())}).str, "OK");
    }
    auto reading = [](RespClient& r) {
      std::string n = InfoField(r, "replication", "master_sync_read_bytes");
      return InfoField(r, "replication", "master_sync_in_progress") == "1" && !n.empty() &&
             n != "0";
    };
    auto up = [](RespClient& r) {
      return InfoField(r, "replication", "master_link_status") == "up";
    };
    bool both = false;
    ASSERT_TRUE(WaitFor([&] {
      both = both || (reading(ra) && reading(rb));
      return up(ra) || up(rb);
    }, 30000)) << primary.LogText();
    EXPECT_TRUE(both) << "the replicas' transfers did not overlap\n" << primary.LogText();
    ASSERT_TRUE(WaitFor([&] { return up(ra) && up(rb); }, 30000)) << primary.LogText();
    EXPECT_EQ(InfoField(p, "stats", "sync_full"), "2");
  }
}

// One snapshot child feeds a data-link replica and a TCP replica. The data-link replica stops
// (SIGSTOP) before the snapshot: its link takes no bytes, its ring fills, and the child would
// wait on it, starving the other replica, until the link's own 60 s timeout. With company, a
// ring that takes nothing for half the primary's repl-timeout drops out, as a socket does: the
// TCP replica gets its snapshot, and the stopped one resyncs once it runs again.
TEST(ReplicationSync, AStalledDataLinkDropsOutOfASharedSnapshot) {
  ServerProcess primary(Kind::kKvstore, {"--repl-diskless-sync-max-replicas", "2",
                                         "--repl-diskless-sync-delay", "20", "--rdbcompression",
                                         "no", "--repl-timeout", "4"});
  RespClient p(primary.port());
  // 48 MB: more than the data link's ring (32 MiB) and what its credits let through.
  ASSERT_EQ(p.Call({"DEBUG", "POPULATE", "48000", "key", "1000"}).str, "OK");
  ServerProcess stalled(Kind::kKvstore, {"--repl-transport", "rdma", "--repl-rdma-provider",
                                         "shm", "--repl-diskless-load", "swapdb"});
  RespClient rs(stalled.port());
  ASSERT_EQ(rs.Call({"REPLICAOF", "127.0.0.1", std::to_string(primary.port())}).str, "OK");
  // Its PSYNC came (after the data link's setup): it waits for the second replica.
  ASSERT_TRUE(WaitFor([&] { return InfoField(p, "replication", "connected_slaves") == "1"; }))
      << stalled.LogText();
  ASSERT_NE(p.Call({"INFO", "replication"}).str.find("transport=rdma"), std::string::npos);
  kill(stalled.pid(), SIGSTOP);
  ServerProcess tcp(Kind::kRedis);
  RespClient rt(tcp.port());
  auto start = std::chrono::steady_clock::now();
  ASSERT_EQ(rt.Call({"REPLICAOF", "127.0.0.1", std::to_string(primary.port())}).str, "OK");
  bool up = WaitFor([&] { return InfoField(rt, "replication", "master_link_status") == "up"; },
                    20000);
  auto secs = std::chrono::duration_cast<std::chrono::seconds>(
                  std::chrono::steady_clock::now() - start).count();
  kill(stalled.pid(), SIGCONT);
  ASSERT_TRUE(up) << "the TCP replica waited on the stalled data link\n" << primary.LogText();
  EXPECT_LE(secs, 15);
  EXPECT_NE(primary.LogText().find("took no snapshot bytes"), std::string::npos)
      << primary.LogText();
  EXPECT_EQ(rt.Call({"DEBUG", "DIGEST"}).str, p.Call({"DEBUG", "DIGEST"}).str);
  // The stopped replica runs again and gets a snapshot of its own.
  ASSERT_TRUE(WaitFor([&] { return InfoField(rs, "replication", "master_link_status") == "up"; },
                      30000)) << stalled.LogText();
  ASSERT_TRUE(InSync(p, rs));
  EXPECT_EQ(rs.Call({"DEBUG", "DIGEST"}).str, p.Call({"DEBUG", "DIGEST"}).str);
}

// A disk-based sync sends the replica its saved file: from the moment the file is saved until
// it is delivered the replica is send_bulk, not online (Redis' states), so ROLE (and WAIT,
// min-replicas-to-write and repl-timeout) leave it out. Over a data link the primary keeps it
// so until the link has delivered the whole file; the replica here loads slowly as it
// receives (key-load-delay), so that takes seconds. redis-server is the oracle.
TEST(ReplicationSync, AReplicaIsSendBulkUntilItsFileIsDelivered) {
  struct Case {
    Kind kind;
    Cmd replica_args;
  };
  for (const Case& c : {Case{Kind::kKvstore, {"--repl-transport", "rdma", "--repl-rdma-provider",
                                              "shm"}},
                        Case{Kind::kRedis, {}}}) {
    SCOPED_TRACE(c.kind == Kind::kKvstore ? "kvstore over the data link" : "redis");
    ServerProcess primary(c.kind, {"--repl-diskless-sync", "no", "--repl-diskless-sync-delay",
                                   "0", "--rdbcompression", "no"});
    RespClient p(primary.port());
    // 60 MB: more than the data link's ring and the replica's receive queue hold (36 MiB).
    ASSERT_NO_FATAL_FAILURE(PopulateIncompressible(p, 60));
    Cmd args = c.replica_args;
    args.insert(args.end(), {"--repl-diskless-load", "swapdb", "--key-load-delay", "50"});
    ServerProcess replica(c.kind, args);
    RespClient r(replica.port());
    ASSERT_EQ(r.Call({"REPLICAOF", "127.0.0.1", std::to_string(primary.port())}).str, "OK");
    // The full sync began, and its child has saved the file and exited.
    ASSERT_TRUE(WaitFor([&] {
      return InfoField(p, "stats", "sync_full") == "1" &&
             InfoField(p, "persistence", "rdb_bgsave_in_progress") == "0";
    }, 20000)) << primary.LogText();
    std::string slave = InfoField(p, "replication", "slave0");
    EXPECT_NE(slave.find("state=send_bulk"), std::string::npos) << slave;
    Reply role = p.Call({"ROLE"});
    ASSERT_EQ(role.elems.size(), 3u) << role.raw;
    EXPECT_EQ(role.elems[2].elems.size(), 0u) << role.raw;
    ASSERT_TRUE(WaitFor([&] {
      return InfoField(r, "replication", "master_link_status") == "up";
    }, 60000)) << replica.LogText();
    ASSERT_TRUE(WaitFor([&] {
      return InfoField(p, "replication", "slave0").find("state=online") != std::string::npos;
    })) << InfoField(p, "replication", "slave0");
    EXPECT_EQ(p.Call({"ROLE"}).elems[2].elems.size(), 1u);
    ASSERT_TRUE(InSync(p, r));
    EXPECT_EQ(r.Call({"DEBUG", "DIGEST"}).str, p.Call({"DEBUG", "DIGEST"}).str);
  }
}

// A disk-based snapshot that no replica waits for any more is killed when the user keeps no
// snapshots of their own (no save points), and its temporary file goes with it; with save
// points it goes on. Redis' integration/replication "Kill rdb child process if its dumping RDB is
// not useful".
TEST(ReplicationSync, ASnapshotNoReplicaWaitsForIsKilled) {
  for (Kind kind : {Kind::kKvstore, Kind::kRedis}) {
    SCOPED_TRACE(kind == Kind::kKvstore ? "kvstore" : "redis");
    ServerProcess primary(kind, {"--repl-diskless-sync", "no"});
    RespClient p(primary.port());
    // A second per key: the snapshot would take 100 s.
    ASSERT_EQ(p.Call({"DEBUG", "POPULATE", "100"}).str, "OK");
    ASSERT_EQ(p.Call({"CONFIG", "SET", "rdb-key-save-delay", "1000000"}).str, "OK");
    std::string follow = "127.0.0.1 " + std::to_string(primary.port());
    auto waiting = [&](int n) {
      return InfoField(p, "persistence", "rdb_bgsave_in_progress") == "1" &&
             InfoField(p, "replication", "connected_slaves") == std::to_string(n);
    };
    for (const char* save : {"", "900 1"}) {
      SCOPED_TRACE(std::string("save '") + save + "'");
      ASSERT_EQ(p.Call({"CONFIG", "SET", "save", save}).str, "OK");
      ServerProcess r1(kind, {"--replicaof", follow});
      ServerProcess r2(kind, {"--replicaof", follow});
      ASSERT_TRUE(WaitFor([&] { return waiting(2); }, 30000));
      r1.Stop();
      ASSERT_TRUE(WaitFor([&] { return waiting(1); }, 30000));  // another replica still waits
      r2.Stop();
      if (save[0] == '\0') {
        ASSERT_TRUE(WaitFor(
            [&] { return InfoField(p, "persistence", "rdb_bgsave_in_progress") == "0"; }, 30000));
        ASSERT_TRUE(WaitFor([&] {
          for (const auto& e : std::filesystem::directory_iterator(primary.dir())) {
            if (e.path().filename().string().rfind("temp-", 0) == 0) return false;
          }
          return true;
        }));
      } else {
        ASSERT_TRUE(
            WaitFor([&] { return InfoField(p, "replication", "connected_slaves") == "0"; }, 30000));
        EXPECT_EQ(InfoField(p, "persistence", "rdb_bgsave_in_progress"), "1");
      }
    }
  }
}

}  // namespace
}  // namespace kv::test
