// Failover in Redis Clusters with kvstore nodes among Debian's redis-server 7.0 nodes, end to
// end, in the layouts of cluster_mixed_test.cc: all redis-server (the reference), mixed and all
// kvstore, six nodes each (three primaries with a replica each). A primary killed with SIGKILL is
// replaced by its replica in every node's view and comes back as the replica of its successor;
// CLUSTER FAILOVER (plain, FORCE and TAKEOVER) swaps a primary and its replica. No write that a
// replica acknowledged before the failover is lost. In the mixed layout each failover is tried
// in both directions: a kvstore replica taking over from a redis-server primary, and the other
// way round. CLUSTER FAILOVER's error replies are compared with redis-server's.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "tests/support/cluster.h"
#include "tests/support/cluster_client.h"
#include "tests/support/resp_client.h"
#include "tests/support/wait.h"

namespace kv::test {
namespace {

using Kind = ServerProcess::Kind;
constexpr Kind K = Kind::kKvstore;
constexpr Kind R = Kind::kRedis;

// A primary and its replica, by node index.
struct Shard {
  size_t primary, replica;
};

std::string Key(int i) { return "fo:" + std::to_string(i); }
std::string Value(int i) { return "v" + std::to_string(i); }

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

const char* KindName(Kind k) { return k == K ? "kvstore" : "redis"; }

class ClusterFailover : public ::testing::TestWithParam<Layout> {
 protected:
  void SetUp() override {
    if (!HaveRedisServer() || access("/usr/bin/redis-cli", X_OK) != 0) {
      GTEST_SKIP() << "redis-server or redis-cli is not installed";
    }
    cluster_ = std::make_unique<TestCluster>(GetParam().kinds);
    ASSERT_TRUE(cluster_->Create(1));
    ASSERT_NO_FATAL_FAILURE(PairAcrossKinds());
  }

  void TearDown() override {
    if (HasFailure() && cluster_) {
      printf("The cluster at the end:\n%s\n", cluster_->Describe().c_str());
    }
  }

  bool mixed() const { return std::string(GetParam().name) == "Mixed"; }

  // Each primary with its replica by node 0's view, in primary index order.
  std::vector<Shard> Shards() {
    TestCluster& c = *cluster_;
    std::vector<ClusterNodeEntry> view = c.Nodes(0);
    std::vector<Shard> out;
    for (const ClusterNodeEntry& r : view) {
      if (!r.HasFlag("slave")) continue;
      for (const ClusterNodeEntry& p : view) {
        if (p.id == r.primary_id && c.IndexOf(p.port) >= 0 && c.IndexOf(r.port) >= 0) {
          out.push_back(
              {static_cast<size_t>(c.IndexOf(p.port)), static_cast<size_t>(c.IndexOf(r.port))});
        }
      }
    }
    std::sort(out.begin(), out.end(),
              [](const Shard& a, const Shard& b) { return a.primary < b.primary; });
    return out;
  }

  // The first shard with a primary of kind `p` and a replica of kind `r`; {0, 0} when none.
  Shard ShardOf(Kind p, Kind r) {
    for (const Shard& s : Shards()) {
      if (cluster_->kind(s.primary) == p && cluster_->kind(s.replica) == r) return s;
    }
    ADD_FAILURE() << "no shard with a " << KindName(p) << " primary and a " << KindName(r)
                  << " replica";
    return {0, 0};
  }

  // The shards to fail over: in the mixed layout a kvstore primary with a redis-server replica
  // and a redis-server primary with a kvstore replica; else the first shard.
  std::vector<Shard> Victims() {
    if (mixed()) return {ShardOf(K, R), ShardOf(R, K)};
    return {Shards().at(0)};
  }

  // redis-cli pairs primaries and replicas at random. In the mixed layout (primaries K R K,
  // replicas R K R) the kvstore replica may serve a kvstore primary: it is then swapped with
  // the redis-server primary's replica, so that each kind replicates the other.
  void PairAcrossKinds() {
    if (!mixed()) return;
    TestCluster& c = *cluster_;
    std::vector<Shard> shards = Shards();
    ASSERT_EQ(shards.size(), 3u) << c.Describe();
    Shard r_primary{0, 0}, k_replica{0, 0};
    for (const Shard& s : shards) {
      if (c.kind(s.primary) == R) r_primary = s;
      if (c.kind(s.replica) == K) k_replica = s;
    }
    if (r_primary.replica == k_replica.replica) return;
    RespClient q(c.port(r_primary.replica)), k(c.port(k_replica.replica));
    ASSERT_EQ(q.Raw({"CLUSTER", "REPLICATE", c.NodeId(k_replica.primary)}), "+OK\r\n");
    ASSERT_EQ(k.Raw({"CLUSTER", "REPLICATE", c.NodeId(r_primary.primary)}), "+OK\r\n");
    ASSERT_TRUE(c.WaitReplicaOf(r_primary.replica, k_replica.primary));
    ASSERT_TRUE(c.WaitReplicaOf(k_replica.replica, r_primary.primary));
    ASSERT_TRUE(c.WaitHealthy());
  }

  // Sets keys [from, to) through a ClusterClient seeded at node `via`.
  void Write(int from, int to, size_t via = 0) {
    ClusterClient cc(cluster_->port(via));
    for (int i = from; i < to; i++) {
      Reply r = cc.Call({"SET", Key(i), Value(i)});
      ASSERT_EQ(r.raw, "+OK\r\n") << Key(i) << ": " << r.Debug();
    }
  }

  // Waits until each replica has applied its primary's whole replication stream.
  void WaitReplicated() {
    for (const Shard& s : Shards()) {
      RespClient p(cluster_->port(s.primary)), r(cluster_->port(s.replica));
      ASSERT_TRUE(InSync(p, r)) << "node " << s.replica << " behind its primary " << s.primary;
    }
  }

  // Every key of [0, n) reads back with its value through a ClusterClient seeded at `via`.
  void ExpectKeys(int n, size_t via) {
    ClusterClient cc(cluster_->port(via));
    int wrong = 0;
    for (int i = 0; i < n; i++) {
      Reply r = cc.Call({"GET", Key(i)});
      if (r.str != Value(i) && wrong++ < 10) {
        ADD_FAILURE() << Key(i) << ": " << r.Debug() << ", not " << Value(i);
      }
    }
    EXPECT_EQ(wrong, 0) << "of " << n << " keys";
  }

  // Node i's slot ranges by node 0's view.
  std::vector<std::string> SlotsOf(size_t i) {
    for (const ClusterNodeEntry& e : cluster_->Nodes(0)) {
      if (e.port == cluster_->port(i)) return e.slots;
    }
    return {};
  }

  // Node i says it replicates node p, in CLUSTER NODES (myself,slave <p's id>) and in ROLE, and
  // catches up with p's keys.
  void ExpectReplicaOf(size_t i, size_t p) {
    TestCluster& c = *cluster_;
    const std::string p_id = c.NodeId(p);
    bool found = false;
    for (const ClusterNodeEntry& e : c.Nodes(i)) {
      if (!e.HasFlag("myself")) continue;
      found = true;
      EXPECT_TRUE(e.HasFlag("slave")) << "node " << i << " is not a replica";
      EXPECT_EQ(e.primary_id, p_id) << "node " << i;
      EXPECT_TRUE(e.slots.empty()) << "node " << i;
    }
    EXPECT_TRUE(found) << "node " << i << " lists no myself";
    RespClient rc(c.port(i)), pc(c.port(p));
    Reply role;
    EXPECT_TRUE(WaitFor(
        [&] {
          role = rc.Call({"ROLE"});
          return role.elems.size() == 5 && role.elems[3].str == "connected";
        },
        60000, 100))
        << "node " << i << " ROLE " << role.Debug();
    ASSERT_GE(role.elems.size(), 3u) << role.Debug();
    EXPECT_EQ(role.elems[0].str, "slave");
    EXPECT_EQ(role.elems[2].integer, c.port(p));
    EXPECT_TRUE(InSync(pc, rc)) << "node " << i << " behind node " << p;
    EXPECT_EQ(rc.Call({"DBSIZE"}).integer, pc.Call({"DBSIZE"}).integer) << "node " << i;
  }

  // CLUSTER FAILOVER [option] on the replica of `s`: every node sees the replica as the primary
  // of the shard's slots and the old primary as its replica, and the cluster settles.
  void Failover(Shard s, const std::string& option) {
    TestCluster& c = *cluster_;
    std::vector<std::string> slots = SlotsOf(s.primary);
    ASSERT_FALSE(slots.empty());
    std::vector<std::string> cmd = {"CLUSTER", "FAILOVER"};
    if (!option.empty()) cmd.push_back(option);
    EXPECT_EQ(RespClient(c.port(s.replica)).Raw(cmd), "+OK\r\n")
        << option << " on node " << s.replica;
    ASSERT_TRUE(c.WaitPrimary(s.replica, slots));
    ASSERT_TRUE(c.WaitReplicaOf(s.primary, s.replica));
    ASSERT_TRUE(c.WaitHealthy());
    ExpectReplicaOf(s.primary, s.replica);
  }

  std::unique_ptr<TestCluster> cluster_;
};

TEST_P(ClusterFailover, AutomaticFailover) {
  TestCluster& c = *cluster_;
  constexpr int kBatch = 300;
  int written = 0;
  for (Shard s : Victims()) {
    SCOPED_TRACE("primary " + std::to_string(s.primary) + " (" + KindName(c.kind(s.primary)) +
                 "), replica " + std::to_string(s.replica) + " (" + KindName(c.kind(s.replica)) +
                 ")");
    ASSERT_NO_FATAL_FAILURE(Write(written, written + kBatch));
    written += kBatch;
    ASSERT_NO_FATAL_FAILURE(WaitReplicated());
    std::vector<std::string> slots = SlotsOf(s.primary);
    ASSERT_FALSE(slots.empty());

    std::vector<size_t> voters;  // the other primaries: both must vote for a majority of three
    for (const Shard& other : Shards()) {
      if (other.primary != s.primary) voters.push_back(other.primary);
    }
    ASSERT_EQ(voters.size(), 2u);
    const std::string replica_id = c.NodeId(s.replica);

    c.Kill(s.primary);
    ASSERT_TRUE(c.WaitFailed(s.primary));
    ASSERT_TRUE(c.WaitPrimary(s.replica, slots));
    // It won an election, with the votes of the other primaries (of either kind).
    EXPECT_TRUE(Contains(c.node(s.replica).LogText(), "Failover election won"))
        << c.node(s.replica).LogText();
    for (size_t v : voters) {
      const std::string granted = "Failover auth granted to " + replica_id;
      auto voted = [&] { return Contains(c.node(v).LogText(), granted); };
      EXPECT_TRUE(WaitFor(voted)) << "node " << v << "'s log:\n" << c.node(v).LogText();
    }
    // The dead primary keeps no slot in any view.
    for (size_t j = 0; j < c.size(); j++) {
      if (j == s.primary) continue;
      for (const ClusterNodeEntry& e : c.Nodes(j)) {
        if (e.port == c.port(s.primary)) {
          EXPECT_TRUE(e.slots.empty()) << "node " << j;
        }
      }
    }
    // redis-cli cannot reach the failed node, leaves it out, and finds the rest whole with the
    // replica as a primary.
    const std::string victim = "127.0.0.1:" + std::to_string(c.port(s.primary));
    CliResult check = c.Check(s.replica);
    EXPECT_EQ(check.status, 0) << check.output;
    EXPECT_TRUE(Contains(check.output, "Could not connect to Redis at " + victim + ":"))
        << check.output;
    EXPECT_FALSE(Contains(check.output, " " + victim + "\n")) << check.output;
    EXPECT_TRUE(Contains(check.output, "M: " + c.NodeId(s.replica) + " 127.0.0.1:" +
                                           std::to_string(c.port(s.replica)) + "\n"))
        << check.output;
    EXPECT_TRUE(Contains(check.output, " keys in 3 masters.")) << check.output;
    EXPECT_TRUE(Contains(check.output, "[OK] All nodes agree about slots configuration."))
        << check.output;
    EXPECT_TRUE(Contains(check.output, "[OK] All 16384 slots covered.")) << check.output;
    EXPECT_FALSE(Contains(check.output, "[ERR]") || Contains(check.output, "[WARNING]"))
        << check.output;
    ASSERT_NO_FATAL_FAILURE(ExpectKeys(written, s.replica));

    // Back from its nodes.conf, the old primary becomes the replica of its successor.
    ASSERT_TRUE(c.node(s.primary).Restart()) << c.node(s.primary).LogText();
    ASSERT_TRUE(c.WaitReplicaOf(s.primary, s.replica));
    ASSERT_TRUE(c.WaitHealthy());
    ExpectReplicaOf(s.primary, s.replica);
  }
  ExpectKeys(written, 0);
}

TEST_P(ClusterFailover, ManualFailover) {
  constexpr int kBatch = 300;
  int written = 0;
  for (Shard s : Victims()) {
    SCOPED_TRACE("replica " + std::to_string(s.replica) + " (" +
                 KindName(cluster_->kind(s.replica)) + ")");
    // Writes the replica acknowledged, then writes it may not have yet: the manual failover
    // waits for the replica to catch up with the paused primary.
    ASSERT_NO_FATAL_FAILURE(Write(written, written + kBatch));
    ASSERT_NO_FATAL_FAILURE(WaitReplicated());
    ASSERT_NO_FATAL_FAILURE(Write(written + kBatch, written + 2 * kBatch));
    written += 2 * kBatch;
    ASSERT_NO_FATAL_FAILURE(Failover(s, ""));
    ExpectKeys(written, s.primary);
  }
}

TEST_P(ClusterFailover, ForceAndTakeover) {
  // Each option on a replica of each kind where there are both; FORCE and TAKEOVER do not wait
  // for the replica to catch up, so only acknowledged writes are expected.
  std::vector<std::pair<Shard, const char*>> steps;
  if (mixed()) {
    Shard a = ShardOf(K, R), b = ShardOf(R, K);
    steps = {{a, "FORCE"},
             {b, "TAKEOVER"},
             {{a.replica, a.primary}, "FORCE"},
             {{b.replica, b.primary}, "TAKEOVER"}};
  } else {
    std::vector<Shard> shards = Shards();
    ASSERT_EQ(shards.size(), 3u);
    steps = {{shards[0], "FORCE"}, {shards[1], "TAKEOVER"}};
  }
  constexpr int kBatch = 300;
  int written = 0;
  for (auto [s, option] : steps) {
    SCOPED_TRACE(std::string(option) + " on replica " + std::to_string(s.replica) + " (" +
                 KindName(cluster_->kind(s.replica)) + ")");
    ASSERT_NO_FATAL_FAILURE(Write(written, written + kBatch));
    written += kBatch;
    ASSERT_NO_FATAL_FAILURE(WaitReplicated());
    ASSERT_NO_FATAL_FAILURE(Failover(s, option));
    ExpectKeys(written, s.primary);
  }
}

INSTANTIATE_TEST_SUITE_P(Layouts, ClusterFailover,
                         ::testing::Values(Layout{"AllRedis", {R, R, R, R, R, R}},
                                           // Primaries K R K, replicas R K R.
                                           Layout{"Mixed", {K, R, K, R, K, R}},
                                           Layout{"AllKvstore", {K, K, K, K, K, K}}),
                         [](const ::testing::TestParamInfo<Layout>& info) {
                           return std::string(info.param.name);
                         });

// CLUSTER FAILOVER's refusals, on a kvstore node and on a redis-server node in the same role, in
// the mixed layout only.
using ClusterFailoverErrors = ClusterFailover;

TEST_P(ClusterFailoverErrors, RepliesAsRedis) {
  TestCluster& c = *cluster_;
  Shard a = ShardOf(K, R), b = ShardOf(R, K);
  // Primaries refuse every form; replicas refuse bad options before anything else.
  const std::vector<std::vector<std::string>> on_primary = {
      {"CLUSTER", "FAILOVER"},
      {"CLUSTER", "FAILOVER", "FORCE"},
      {"CLUSTER", "FAILOVER", "takeover"},
      {"CLUSTER", "FAILOVER", "BOGUS"},
      {"CLUSTER", "FAILOVER", "FORCE", "TAKEOVER"}};
  const std::vector<std::vector<std::string>> on_replica = {
      {"CLUSTER", "FAILOVER", "BOGUS"}, {"CLUSTER", "FAILOVER", "FORCE", "TAKEOVER"}};
  RespClient kp(c.port(a.primary)), rp(c.port(b.primary));
  RespClient kr(c.port(b.replica)), rr(c.port(a.replica));
  EXPECT_EQ(rp.Raw(on_primary[0]), "-ERR You should send CLUSTER FAILOVER to a replica\r\n");
  for (const auto& cmd : on_primary) {
    EXPECT_EQ(kp.Raw(cmd), rp.Raw(cmd)) << cmd.back() << " on a primary";
  }
  for (const auto& cmd : on_replica) {
    EXPECT_EQ(kr.Raw(cmd), rr.Raw(cmd)) << cmd.back() << " on a replica";
  }

  // A replica whose primary failed wants FORCE. The primary is stopped (SIGSTOP) until the
  // replica sees it failed; the replica, told not to fail over by itself, waits.
  std::string reply[2];
  for (size_t k = 0; k < 2; k++) {
    Shard s = k == 0 ? b : a;  // the kvstore replica, then the redis-server one
    RespClient replica(c.port(s.replica));
    ASSERT_EQ(replica.Raw({"CONFIG", "SET", "cluster-replica-no-failover", "yes"}), "+OK\r\n");
    kill(c.node(s.primary).pid(), SIGSTOP);
    bool failed = WaitFor(
        [&] {
          for (const ClusterNodeEntry& e :
               ParseClusterNodes(replica.Call({"CLUSTER", "NODES"}).str)) {
            if (e.port == c.port(s.primary) && e.HasFlag("fail")) return true;
          }
          return false;
        },
        60000, 100);
    reply[k] = replica.Raw({"CLUSTER", "FAILOVER"});
    kill(c.node(s.primary).pid(), SIGCONT);
    ASSERT_TRUE(failed) << "node " << s.replica << " never saw node " << s.primary << " fail";
    ASSERT_TRUE(c.WaitHealthy());
    EXPECT_EQ(replica.Raw({"CONFIG", "SET", "cluster-replica-no-failover", "no"}), "+OK\r\n");
  }
  EXPECT_EQ(reply[1], "-ERR Master is down or failed, please use CLUSTER FAILOVER FORCE\r\n");
  EXPECT_EQ(reply[0], reply[1]);
  // Nothing changed hands.
  EXPECT_TRUE(c.WaitReplicaOf(a.replica, a.primary));
  EXPECT_TRUE(c.WaitReplicaOf(b.replica, b.primary));
}

INSTANTIATE_TEST_SUITE_P(Mixed, ClusterFailoverErrors,
                         ::testing::Values(Layout{"Mixed", {K, R, K, R, K, R}}),
                         [](const ::testing::TestParamInfo<Layout>& info) {
                           return std::string(info.param.name);
                         });

}  // namespace
}  // namespace kv::test
