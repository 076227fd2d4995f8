// Whole-slot migration (CLUSTER MIGRATESLOTS) between kvstore primaries, end to end: real
// clusters of kvstore-server processes made with redis-cli --cluster create, the slots' keys
// and writes moved through the data link over each provider the tests have (libfabric's shm
// and tcp, and the socket channel). Under a write load no acknowledged write is lost or applied
// twice, the target's replica gets every key, and every node ends up agreeing on the new owner.
// A migration cut off midway (the source or the target killed, the control connection killed,
// a cancel) leaves every key with exactly one owner.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common/strutil.h"
#include "tests/support/cluster.h"
#include "tests/support/cluster_client.h"
#include "tests/support/resp_client.h"
#include "tests/support/wait.h"
#include "transport/channel.h"
#include "transport/test_providers.h"

namespace kv::test {
namespace {

using Kind = ServerProcess::Kind;
constexpr Kind K = Kind::kKvstore;

// redis-cli --cluster create gives node 0 slots 0-5460; these move to node 1.
constexpr int kFirst = 0, kLast = 2999;
constexpr int kKeys = 6000;

std::string Key(int i) { return "sm:" + std::to_string(i); }
std::string Value(int i) { return "value-" + std::to_string(i); }
bool Moving(const std::string& key) {
  int s = KeySlot(key);
  return s >= kFirst && s <= kLast;
}

// A field of the first entry of CLUSTER GETSLOTMIGRATIONS ("" when there is none).
std::string JobField(RespClient& c, const std::string& field) {
  Reply r = c.Call({"CLUSTER", "GETSLOTMIGRATIONS"});
  if (r.elems.empty()) return "";
  const Reply& job = r.elems.back();  // the newest
  for (size_t i = 0; i + 1 < job.elems.size(); i += 2) {
    if (job.elems[i].str == field) {
      return job.elems[i + 1].type == ':' ? std::to_string(job.elems[i + 1].integer)
                                          : job.elems[i + 1].str;
    }
  }
  return "";
}

class SlotMigration : public ::testing::TestWithParam<std::string> {
 protected:
  // `replicas`: one per primary (six nodes) or none (three). The data link's provider is the
  // test's parameter unless given.
  void Start(int replicas, std::string provider = "") {
    if (provider.empty()) provider = GetParam();
    if (!HaveRedisServer() || access("/usr/bin/redis-cli", X_OK) != 0) {
      GTEST_SKIP() << "redis-cli is not installed";
    }
    cluster_ = std::make_unique<TestCluster>(std::vector<Kind>(replicas ? 6 : 3, K));
    ASSERT_TRUE(cluster_->Create(replicas));
    for (size_t i = 0; i < cluster_->size(); i++) {
      RespClient c(cluster_->port(i));
      ASSERT_EQ(c.Raw({"CONFIG", "SET", "repl-rdma-provider", provider}), "+OK\r\n");
    }
    ClusterClient cc(cluster_->port(0));
    for (int i = 0; i < kKeys; i++) {
      Reply r = (i % 10 == 1)   ? cc.Call({"SET", Key(i), Value(i), "PX", "600000"})
                : (i % 10 == 2) ? cc.Call({"RPUSH", Key(i), "a", "b", Value(i)})
                : (i % 10 == 3) ? cc.Call({"HSET", Key(i), "f", Value(i), "g", "x"})
                                : cc.Call({"SET", Key(i), Value(i)});
      ASSERT_FALSE(r.is_error()) << Key(i) << ": " << r.Debug();
    }
    // A value larger than the data link's chunks and the target's parse buffer.
    for (int i = 0; big_key_.empty(); i++) {
      if (Moving("big:" + std::to_string(i))) big_key_ = "big:" + std::to_string(i);
    }
    ASSERT_EQ(cc.Call({"SET", big_key_, BigValue()}).raw, "+OK\r\n");
  }

  static std::string BigValue() {
    std::string v(6 << 20, 'x');
    for (size_t i = 0; i < v.size(); i += 4096) v[i] = static_cast<char>('a' + (i / 4096) % 26);
    return v;
  }

  void TearDown() override {
    if (HasFailure() && cluster_)
      printf("The cluster at the end:\n%s\n", cluster_->Describe().c_str());
  }

  Reply MigrateTo(size_t from, size_t to) {
    RespClient c(cluster_->port(from));
    return c.Call({"CLUSTER", "MIGRATESLOTS", "SLOTSRANGE", std::to_string(kFirst),
                   std::to_string(kLast), "NODE", cluster_->NodeId(to)});
  }

  // Waits until node i's newest job is in a final state; returns it.
  std::string WaitJobEnd(size_t i, int timeout_ms = 120000) {
    RespClient c(cluster_->port(i));
    std::string state;
    WaitFor(
        [&] {
          state = JobField(c, "state");
          return state == "success" || state == "failed" || state == "cancelled";
        },
        timeout_ms, 20);
    return state;
  }

  // Waits until node i's newest job has sent some of the slots and is still sending.
  ::testing::AssertionResult WaitMidSnapshot(size_t i) {
    RespClient c(cluster_->port(i));
    std::string state;
    bool ok = WaitFor(
        [&] {
          state = JobField(c, "state");
          return state == "snapshot" && std::stoll("0" + JobField(c, "slots_sent")) > 100;
        },
        60000, 5);
    if (ok) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "the export never was mid-snapshot: " << state;
  }

  // Every key reads back as written, through the cluster as a client sees it.
  void ExpectKeys(size_t via) {
    ClusterClient cc(cluster_->port(via));
    for (int i = 0; i < kKeys; i++) {
      std::string want = Value(i);
      Reply r = (i % 10 == 2)   ? cc.Call({"LINDEX", Key(i), "2"})
                : (i % 10 == 3) ? cc.Call({"HGET", Key(i), "f"})
                                : cc.Call({"GET", Key(i)});
      ASSERT_EQ(r.str, want) << Key(i) << ": " << r.Debug();
      if (i % 10 == 1) {
        Reply ttl = cc.Call({"PTTL", Key(i)});
        ASSERT_GT(ttl.integer, 0) << Key(i) << " lost its TTL";
      }
    }
    ASSERT_TRUE(cc.Call({"GET", big_key_}).str == BigValue()) << big_key_;
  }

  // How many keys of the moving slots node i holds.
  int64_t KeysInMovingSlots(size_t i) {
    RespClient c(cluster_->port(i));
    int64_t n = 0;
    for (int s = kFirst; s <= kLast; s++) {
      n += c.Call({"CLUSTER", "COUNTKEYSINSLOT", std::to_string(s)}).integer;
    }
    return n;
  }

  static int ExpectedInMovingSlots() {
    int n = 1;  // the big value's key
    for (int i = 0; i < kKeys; i++) n += Moving(Key(i));
    return n;
  }

  // Whether node `via` sees node `owner` serving slot kFirst.
  bool Serves(size_t via, size_t owner) {
    for (const ClusterNodeEntry& e : cluster_->Nodes(via)) {
      if (e.port != cluster_->port(owner)) continue;
      for (const std::string& r : e.slots) {
        size_t dash = r.find('-');
        int a = std::stoi(r.substr(0, dash));
        int b = dash == std::string::npos ? a : std::stoi(r.substr(dash + 1));
        if (a <= kFirst && kFirst <= b) return true;
      }
    }
    return false;
  }

  // The node that replicates node `primary` (by node 0's view); -1 when none.
  int ReplicaOf(size_t primary) {
    std::string id = cluster_->NodeId(primary);
    for (const ClusterNodeEntry& e : cluster_->Nodes(primary)) {
      if (e.primary_id == id) return cluster_->IndexOf(e.port);
    }
    return -1;
  }

  std::unique_ptr<TestCluster> cluster_;
  std::string big_key_;
};

// Slots move under a load of counters: every acknowledged INCR is there once, every key with
// its value, type and TTL, on the target and on its replica; no key is left on the source.
TEST_P(SlotMigration, MovesSlotsUnderWriteLoad) {
  ASSERT_NO_FATAL_FAILURE(Start(1));
  TestCluster& c = *cluster_;
  std::atomic<bool> stop{false};
  std::map<std::string, int64_t> acked;  // the writer's
  std::string writer_error;
  std::thread writer([&] {
    ClusterClient cc(c.port(2));
    for (int n = 0; !stop; n++) {
      std::string key = "ctr:" + std::to_string(n % 200);
      Reply r = cc.Call({"INCR", key});
      if (r.type != ':') {
        writer_error = key + ": " + r.Debug();
        return;
      }
      if (r.integer != acked[key] + 1) {
        writer_error =
            key + " went from " + std::to_string(acked[key]) + " to " + std::to_string(r.integer);
        return;
      }
      acked[key] = r.integer;
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  Reply r = MigrateTo(0, 1);
  ASSERT_EQ(r.raw, "+OK\r\n") << r.Debug();
  std::string state = WaitJobEnd(0);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // writes after the hand-over
  stop = true;
  writer.join();
  RespClient src(c.port(0)), dst(c.port(1));
  ASSERT_EQ(state, "success") << JobField(src, "message");
  EXPECT_EQ(JobField(dst, "state"), "success");
  EXPECT_EQ(writer_error, "");
  ASSERT_TRUE(c.WaitHealthy());
  for (size_t i = 0; i < c.size(); i++) EXPECT_TRUE(Serves(i, 1)) << "node " << i;
  int moving = 0;
  for (const auto& [key, v] : acked) moving += Moving(key);
  EXPECT_GT(moving, 0) << "no counter in the moving slots";
  ClusterClient cc(c.port(0));
  for (const auto& [key, v] : acked) {
    EXPECT_EQ(cc.Call({"GET", key}).str, std::to_string(v)) << key;
  }
  ASSERT_NO_FATAL_FAILURE(ExpectKeys(0));
  // The source deletes its copy after the hand-over, a slot at a time.
  EXPECT_TRUE(WaitFor([&] { return KeysInMovingSlots(0) == 0; }, 30000));
  EXPECT_TRUE(WaitFor([&] { return JobField(src, "message").empty(); }, 30000));
  int64_t expected = ExpectedInMovingSlots();
  for (const auto& [key, v] : acked) expected += Moving(key);
  EXPECT_EQ(KeysInMovingSlots(1), expected);
  int replica = ReplicaOf(1);
  ASSERT_GE(replica, 0);
  RespClient rep(c.port(replica));
  ASSERT_TRUE(InSync(dst, rep));
  EXPECT_EQ(KeysInMovingSlots(replica), expected);
  // INFO shows the job, and the moved slots' transport.
  std::string info = src.Call({"INFO", "slot_migration"}).str;
  EXPECT_NE(info.find("state=success"), std::string::npos) << info;
  EXPECT_NE(info.find("progress=100.0%"), std::string::npos) << info;
  CliResult check = c.Check();
  EXPECT_EQ(check.status, 0) << check.output;
  printf("hand-over pause %s us over %s\n", JobField(src, "pause_us").c_str(),
         JobField(src, "link").c_str());
}

// The faults run over shm (no connection: a dead peer is found by the control connection) and
// the socket channel (the link fails first); libfabric's tcp provider runs the write load above.
class SlotMigrationFaults : public SlotMigration {};

// The source killed mid-snapshot: its replica takes over with every key, and the target drops
// what it had received.
TEST_P(SlotMigrationFaults, SourceKilledMidSnapshot) {
  ASSERT_NO_FATAL_FAILURE(Start(1));
  TestCluster& c = *cluster_;
  int replica = ReplicaOf(0);
  ASSERT_GE(replica, 0);
  {
    RespClient src(c.port(0)), rep(c.port(replica));
    ASSERT_TRUE(InSync(src, rep));
    ASSERT_EQ(src.Raw({"CONFIG", "SET", "rdb-key-save-delay", "2000"}), "+OK\r\n");
  }
  ASSERT_EQ(MigrateTo(0, 1).raw, "+OK\r\n");
  ASSERT_TRUE(WaitMidSnapshot(0));
  c.Kill(0);
  // Cancelled when the control connection's end is seen first, failed when the data link's.
  std::string import_state = WaitJobEnd(1);
  EXPECT_TRUE(import_state == "cancelled" || import_state == "failed") << import_state;
  ASSERT_TRUE(c.WaitFailed(0));
  ASSERT_TRUE(WaitFor([&] { return Serves(1, replica) && Serves(2, replica); }, 60000));
  EXPECT_EQ(KeysInMovingSlots(1), 0);
  EXPECT_EQ(KeysInMovingSlots(replica), ExpectedInMovingSlots());
  ASSERT_NO_FATAL_FAILURE(ExpectKeys(1));
}

// The target killed mid-snapshot: the export fails, and the source goes on serving the slots
// with every key, its writes not paused.
TEST_P(SlotMigrationFaults, TargetKilledMidSnapshot) {
  ASSERT_NO_FATAL_FAILURE(Start(0));
  TestCluster& c = *cluster_;
  RespClient src(c.port(0));
  ASSERT_EQ(src.Raw({"CONFIG", "SET", "rdb-key-save-delay", "2000"}), "+OK\r\n");
  ASSERT_EQ(MigrateTo(0, 1).raw, "+OK\r\n");
  ASSERT_TRUE(WaitMidSnapshot(0));
  c.Kill(1);
  EXPECT_EQ(WaitJobEnd(0), "failed");
  EXPECT_TRUE(Serves(0, 0));
  EXPECT_EQ(KeysInMovingSlots(0), ExpectedInMovingSlots());
  std::string key;
  for (int i = 0; key.empty(); i++) {
    if (Moving("w:" + std::to_string(i))) key = "w:" + std::to_string(i);
  }
  EXPECT_EQ(src.Raw({"SET", key, "after"}), "+OK\r\n");
}

// A cancel, the control connection killed on the target, the data link broken: both ends give
// up each time, the source keeps every key and the target none; a last migration succeeds.
TEST_P(SlotMigrationFaults, CancelAndBrokenLinks) {
  ASSERT_NO_FATAL_FAILURE(Start(0));
  TestCluster& c = *cluster_;
  RespClient src(c.port(0)), dst(c.port(1));
  ASSERT_EQ(src.Raw({"CONFIG", "SET", "rdb-key-save-delay", "2000"}), "+OK\r\n");

  ASSERT_EQ(MigrateTo(0, 1).raw, "+OK\r\n");
  ASSERT_TRUE(WaitMidSnapshot(0));
  EXPECT_EQ(MigrateTo(0, 2).str, "ERR Slot 0 is already being migrated");
  ASSERT_EQ(src.Raw({"CLUSTER", "CANCELSLOTMIGRATIONS"}), "+OK\r\n");
  EXPECT_EQ(WaitJobEnd(0), "cancelled");
  EXPECT_NE(WaitJobEnd(1), "success");
  EXPECT_EQ(KeysInMovingSlots(1), 0);
  EXPECT_EQ(KeysInMovingSlots(0), ExpectedInMovingSlots());

  ASSERT_EQ(MigrateTo(0, 1).raw, "+OK\r\n");
  ASSERT_TRUE(WaitMidSnapshot(0));
  Reply killed = dst.Call({"CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes"});
  EXPECT_GE(killed.integer, 1) << killed.Debug();
  EXPECT_EQ(WaitJobEnd(0), "failed");
  EXPECT_EQ(WaitJobEnd(1), "cancelled");
  EXPECT_EQ(KeysInMovingSlots(1), 0);
  EXPECT_EQ(KeysInMovingSlots(0), ExpectedInMovingSlots());
  EXPECT_TRUE(Serves(0, 0));

  // The data link broken mid-snapshot (not rebuilt: the migration fails and can start again).
  ASSERT_EQ(MigrateTo(0, 1).raw, "+OK\r\n");
  ASSERT_TRUE(WaitMidSnapshot(0));
  ASSERT_EQ(src.Raw({"DEBUG", "REPLICATION-BREAK-DATA-LINK"}), "+OK\r\n");
  EXPECT_EQ(WaitJobEnd(0), "failed");
  EXPECT_NE(JobField(src, "message").find("data link"), std::string::npos)
      << JobField(src, "message");
  EXPECT_NE(WaitJobEnd(1), "success");
  EXPECT_EQ(KeysInMovingSlots(1), 0);
  EXPECT_EQ(KeysInMovingSlots(0), ExpectedInMovingSlots());
  EXPECT_TRUE(Serves(0, 0));

  // The target's clients' writes paused (CLIENT PAUSE WRITE) do not hold the import's.
  ASSERT_EQ(src.Raw({"CONFIG", "SET", "rdb-key-save-delay", "0"}), "+OK\r\n");
  ASSERT_EQ(dst.Raw({"CLIENT", "PAUSE", "120000", "WRITE"}), "+OK\r\n");
  ASSERT_EQ(MigrateTo(0, 1).raw, "+OK\r\n");
  ASSERT_EQ(WaitJobEnd(0), "success") << JobField(src, "message");
  ASSERT_EQ(dst.Raw({"CLIENT", "UNPAUSE"}), "+OK\r\n");
  ASSERT_TRUE(c.WaitHealthy());
  ASSERT_NO_FATAL_FAILURE(ExpectKeys(2));
}

// The source's export held at a step (DEBUG SLOT-MIGRATION-HOLD), then the source or the target
// killed (the parameter: "<step>_<victim>"). Until the target's claim the source's side (the
// source, or its replica once promoted) serves the slots with every key and the target's import
// is dropped; from the claim on the target's side does. Every key, and every write made during
// the stream (and acknowledged by the source's replica, WAIT), reads back from the owner; the
// owner's copy is complete.
class SlotMigrationKills : public SlotMigration {};

TEST_P(SlotMigrationKills, EveryKeyServedByOneOwner) {
  const std::string& param = GetParam();
  std::string step = param.substr(0, param.find('_')), victim = param.substr(param.find('_') + 1);
  ASSERT_NO_FATAL_FAILURE(Start(1, "shm"));
  TestCluster& c = *cluster_;
  int src_replica = ReplicaOf(0), dst_replica = ReplicaOf(1);
  ASSERT_GE(src_replica, 0);
  ASSERT_GE(dst_replica, 0);
  {
    RespClient s(c.port(0)), sr(c.port(src_replica)), d(c.port(1)), dr(c.port(dst_replica));
    ASSERT_TRUE(InSync(s, sr));
    ASSERT_TRUE(InSync(d, dr));
  }
  RespClient src(c.port(0)), dst(c.port(1));
  ASSERT_EQ(src.Raw({"DEBUG", "SLOT-MIGRATION-HOLD", step}), "+OK\r\n");
  ASSERT_EQ(MigrateTo(0, 1).raw, "+OK\r\n");
  // "claimed": the target's import has ended with its claim; the source waits to record it.
  ASSERT_TRUE(WaitFor(
      [&] {
        return step == "claimed" ? JobField(dst, "state") == "success"
                                 : JobField(src, "state") == step;
      },
      60000, 10))
      << JobField(src, "state") << " / " << JobField(dst, "state");
  std::map<std::string, std::string> written;  // acknowledged during the stream
  if (step == "streaming") {
    for (int i = 0; written.size() < 50; i++) {
      std::string k = "late:" + std::to_string(i);
      if (!Moving(k)) continue;
      ASSERT_EQ(src.Raw({"SET", k, "v" + std::to_string(i)}), "+OK\r\n");
      written[k] = "v" + std::to_string(i);
    }
    // Acknowledged by the source's replica too: a write only the killed primary had is lost
    // in any Redis failover.
    ASSERT_EQ(src.Call({"WAIT", "1", "30000"}).integer, 1);
  }
  size_t victim_i = victim == "source" ? 0 : 1;
  c.Kill(victim_i);
  if (victim == "target") {
    ASSERT_EQ(src.Raw({"DEBUG", "SLOT-MIGRATION-HOLD", "none"}), "+OK\r\n");
  }
  bool claimed = step == "claimed";
  size_t owner =
      claimed ? (victim == "target" ? dst_replica : 1) : (victim == "source" ? src_replica : 0);
  ASSERT_TRUE(c.WaitFailed(victim_i));
  ASSERT_TRUE(WaitFor(
      [&] {
        for (size_t i = 0; i < c.size(); i++) {
          if (i != victim_i && !Serves(i, owner)) return false;
        }
        return true;
      },
      60000))
      << "node " << owner << " never served the slots everywhere";
  // The victim's other slots are served again once its replica has taken over.
  ASSERT_TRUE(WaitFor(
      [&] {
        for (size_t i = 0; i < c.size(); i++) {
          if (i == victim_i) continue;
          RespClient n(c.port(i));
          if (n.Call({"CLUSTER", "INFO"}).str.find("cluster_state:ok") == std::string::npos) {
            return false;
          }
        }
        return true;
      },
      60000));
  ASSERT_NO_FATAL_FAILURE(ExpectKeys(2));
  ClusterClient cc(c.port(2));
  for (const auto& [k, v] : written) EXPECT_EQ(cc.Call({"GET", k}).str, v) << k;
  EXPECT_EQ(KeysInMovingSlots(owner),
            ExpectedInMovingSlots() + static_cast<int64_t>(written.size()));
  if (!claimed && victim == "source") {
    EXPECT_TRUE(WaitFor([&] { return KeysInMovingSlots(1) == 0; }, 30000));  // import dropped
  }
  if (claimed && victim == "target") {
    EXPECT_EQ(WaitJobEnd(0), "success");
    EXPECT_TRUE(WaitFor([&] { return KeysInMovingSlots(0) == 0; }, 30000));  // copy deleted
  }
  if (!claimed && victim == "target") {
    EXPECT_EQ(WaitJobEnd(0), "failed");
    std::string key = "after:0";
    for (int i = 1; !Moving(key); i++) key = "after:" + std::to_string(i);
    EXPECT_EQ(src.Raw({"SET", key, "x"}), "+OK\r\n");  // not paused
  }
  for (size_t i = 0; i < c.size(); i++) {
    if (i == victim_i || i == owner) continue;
    printf("node %zu keeps %lld keys of the moved slots\n", i,
           static_cast<long long>(KeysInMovingSlots(i)));
  }
}

INSTANTIATE_TEST_SUITE_P(Steps, SlotMigrationKills,
                         ::testing::Values("streaming_source", "streaming_target",
                                           "handover_source", "handover_target", "claimed_source",
                                           "claimed_target"),
                         [](const auto& info) { return std::string(info.param); });

// verbs in the Soft-RoCE guest (tests/softroce/guest-suite.sh's cluster step).
INSTANTIATE_TEST_SUITE_P(Providers, SlotMigration,
                         ::testing::ValuesIn(transport::test::WithVerbs({"shm", "tcp", "sockets"},
                                                                        {"verbs"})),
                         [](const auto& info) { return info.param; });
INSTANTIATE_TEST_SUITE_P(Providers, SlotMigrationFaults,
                         ::testing::ValuesIn(transport::test::WithVerbs({"shm", "sockets"},
                                                                        {"verbs"})),
                         [](const auto& info) { return info.param; });

// A redis-server target has no whole-slot migration: the source moves the keys itself, as
// redis-cli --cluster reshard would, and the cluster ends up agreeing on the new owner.
TEST(SlotMigrationToRedis, FallsBackToRestoreAsking) {
  if (!HaveRedisServer() || access("/usr/bin/redis-cli", X_OK) != 0) {
    GTEST_SKIP() << "redis-server or redis-cli is not installed";
  }
  TestCluster c({K, Kind::kRedis, K});
  ASSERT_TRUE(c.Create(0));
  ClusterClient cc(c.port(0));
  std::vector<std::string> keys;
  for (int i = 0; keys.size() < 500; i++) {
    std::string k = "fb:" + std::to_string(i);
    if (KeySlot(k) > 199) continue;
    keys.push_back(k);
    ASSERT_EQ(cc.Call({"SET", k, Value(i), "PX", "600000"}).raw, "+OK\r\n");
  }
  RespClient src(c.port(0));
  ASSERT_EQ(src.Raw({"CLUSTER", "MIGRATESLOTS", "SLOTSRANGE", "0", "199", "NODE", c.NodeId(1)}),
            "+OK\r\n");
  std::string state;
  ASSERT_TRUE(WaitFor(
      [&] {
        state = JobField(src, "state");
        return state == "success" || state == "failed";
      },
      120000));
  ASSERT_EQ(state, "success") << JobField(src, "message");
  EXPECT_EQ(JobField(src, "keys"), "500");
  ASSERT_TRUE(c.WaitHealthy());
  RespClient dst(c.port(1));
  EXPECT_EQ(dst.Call({"DBSIZE"}).integer, 500);
  EXPECT_EQ(src.Call({"DBSIZE"}).integer, 0);
  for (size_t i = 0; i < keys.size(); i++) {
    ASSERT_GT(cc.Call({"PTTL", keys[i]}).integer, 0) << keys[i];
  }
  CliResult check = c.Check();
  EXPECT_EQ(check.status, 0) << check.output;
}

// A source whose stream is not a migration's: a write outside the slots it imports, a keyless
// write (FLUSHALL), bytes that are not RESP. The target gives up, deletes what it imported and
// keeps serving with its view of the cluster unchanged.
TEST(SlotMigrationHostileSource, StreamsThatAreNotAMigrationsAreRefused) {
  if (!HaveRedisServer() || access("/usr/bin/redis-cli", X_OK) != 0) {
    GTEST_SKIP() << "redis-cli is not installed";
  }
  TestCluster c(std::vector<Kind>(3, K));
  ASSERT_TRUE(c.Create(0));
  RespClient src(c.port(0));
  std::string key;  // a key of slots 0-99, which node 0 serves
  for (int i = 0; key.empty(); i++) {
    if (KeySlot("h:" + std::to_string(i)) < 100) key = "h:" + std::to_string(i);
  }
  ASSERT_EQ(src.Raw({"SET", key, "v"}), "+OK\r\n");
  std::string payload = src.Call({"DUMP", key}).str;
  std::string outside;  // a key of slot 6000, which node 1 serves
  for (int i = 0; outside.empty(); i++) {
    if (KeySlot("o:" + std::to_string(i)) > 5460) outside = "o:" + std::to_string(i);
  }
  auto resp = [](std::vector<std::string> argv) {
    std::string out = "*" + std::to_string(argv.size()) + "\r\n";
    for (const auto& a : argv) out += "$" + std::to_string(a.size()) + "\r\n" + a + "\r\n";
    return out;
  };
  std::string restore = resp({"SELECT", "0"}) + resp({"RESTORE", key, "0", payload, "REPLACE"});
  struct Case {
    std::string stream, why;
  } cases[] = {
      {restore + resp({"SET", outside, "x"}), "wrote outside the slots it imports (SET)"},
      {restore + resp({"FLUSHALL"}), "wrote outside the slots it imports (FLUSHALL)"},
      {restore + "*2\r\n$3\r\nSET\r\n:12\r\n", "malformed stream"},
  };
  RespClient dst(c.port(1));
  std::string mine;  // a key the target serves: no stream may touch it
  for (int i = 0; mine.empty(); i++) {
    std::string k = "m:" + std::to_string(i);
    if (KeySlot(k) > 5460 && KeySlot(k) < 10923 && k != outside) mine = k;
  }
  ASSERT_EQ(dst.Raw({"SET", mine, "kept"}), "+OK\r\n");
  std::string source_id = c.NodeId(0);
  std::string view = dst.Call({"CLUSTER", "NODES"}).str;
  int n = 0;
  for (const Case& tc : cases) {
    SCOPED_TRACE(tc.why);
    RespClient control(c.port(1));
    transport::ChannelOptions opts;
    opts.transport = "tcp";
    auto sender = transport::CreateSender(opts);
    ASSERT_TRUE(sender.ok()) << sender.status().message();
    auto blob = (*sender)->LocalBlob();
    ASSERT_TRUE(blob.ok());
    std::string name = "hostile" + std::to_string(n++);
    Reply r = control.Call({"CLUSTER", "SYNCSLOTS", "ESTABLISH", name, source_id, "0-99", "sockets",
                            HexEncode(*blob)});
    ASSERT_EQ(r.str.rfind("RDMA ", 0), 0u) << r.Debug();
    std::string peer;
    ASSERT_TRUE(HexDecode(r.str.substr(5), &peer));
    ASSERT_TRUE((*sender)->Connect(peer).ok());
    Status sent = transport::SendAll(
        **sender, std::span(reinterpret_cast<const uint8_t*>(tc.stream.data()), tc.stream.size()),
        10000);
    ASSERT_TRUE(sent.ok()) << sent.message();
    std::string state;
    ASSERT_TRUE(WaitFor([&] {
      state = JobField(dst, "state");
      return state == "failed" || state == "success";
    }));
    EXPECT_EQ(state, "failed");
    EXPECT_NE(JobField(dst, "message").find(tc.why), std::string::npos) << JobField(dst, "message");
    EXPECT_EQ(dst.Call({"CLUSTER", "COUNTKEYSINSLOT", std::to_string(KeySlot(key))}).integer, 0);
    EXPECT_EQ(dst.Call({"EXISTS", outside}).integer, 0);
  }
  EXPECT_EQ(dst.Call({"CLUSTER", "NODES"}).str.size(), view.size());
  EXPECT_TRUE(c.WaitHealthy());
  EXPECT_EQ(src.Call({"GET", key}).str, "v");
  EXPECT_EQ(dst.Call({"GET", mine}).str, "kept");
}

// The command's errors, before any job starts.
TEST(SlotMigrationErrors, RefusedWithAReason) {
  if (!HaveRedisServer() || access("/usr/bin/redis-cli", X_OK) != 0) {
    GTEST_SKIP() << "redis-cli is not installed";
  }
  TestCluster c(std::vector<Kind>(3, K));
  ASSERT_TRUE(c.Create(0));
  RespClient n0(c.port(0));
  std::string other = c.NodeId(1), me = c.NodeId(0);
  auto err = [&](std::vector<std::string> args) {
    args.insert(args.begin(), {"CLUSTER", "MIGRATESLOTS"});
    return n0.Call(args).str;
  };
  EXPECT_EQ(err({"SLOTSRANGE", "0", "10"}), "ERR syntax error");
  EXPECT_EQ(err({"NODE", other}),
            "ERR wrong number of arguments for 'cluster|migrateslots' command");
  EXPECT_EQ(err({"NODE", other, "SLOTSRANGE"}), "ERR syntax error");
  EXPECT_EQ(err({"SLOTSRANGE", "10", "5", "NODE", other}),
            "ERR start slot number 10 is greater than end slot number 5");
  EXPECT_EQ(err({"SLOTSRANGE", "0", "16384", "NODE", other}), "ERR Invalid or out of range slot");
  EXPECT_EQ(err({"SLOTSRANGE", "0", "5", "3", "8", "NODE", other}),
            "ERR Slot 3 specified multiple times");
  EXPECT_EQ(err({"SLOTSRANGE", "6000", "6001", "NODE", other}),
            "ERR I'm not the owner of hash slot 6000");
  EXPECT_EQ(err({"SLOTSRANGE", "0", "1", "NODE", "nosuchnode"}), "ERR Unknown node nosuchnode");
  EXPECT_EQ(err({"SLOTSRANGE", "0", "1", "NODE", me}), "ERR Can't migrate slots to myself");
  EXPECT_EQ(n0.Call({"CLUSTER", "GETSLOTMIGRATIONS"}).elems.size(), 0u);
  // The control connection's command checks its peer's claim.
  RespClient n1(c.port(1));
  Reply r = n1.Call({"CLUSTER", "SYNCSLOTS", "ESTABLISH", "x", me, "6000-6001", "sockets", "00"});
  EXPECT_EQ(r.str, "ERR Hash slot 6000 is not served by " + me + " in my view");
  EXPECT_EQ(n1.Call({"CLUSTER", "SYNCSLOTS", "STATUS", "x"}).str, "ERR No slot import named x");
}

}  // namespace
}  // namespace kv::test
