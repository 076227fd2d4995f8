// A cluster replica loading a full sync, as Redis' cluster tests 22-replica-in-sync and
// 28-cluster-shards watch it: the replica's snapshot is received to disk and loaded into its
// live dataset (repl-diskless-load disabled, the default) slowly (key-load-delay). Meanwhile the
// replica says INFO loading:1 and answers -LOADING, its bus goes on announcing it with offset 0,
// so its primary leaves it out of CLUSTER SLOTS and CLUSTER SHARDS calls it "loading"; after
// the load it is back, with every key.
#include <gtest/gtest.h>
#include <unistd.h>

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

// Whether CLUSTER SLOTS (from `c`) lists node `id` among the nodes of some range.
bool InSlots(RespClient& c, const std::string& id) {
  for (const Reply& range : c.Call({"CLUSTER", "SLOTS"}).elems) {
    for (size_t i = 2; i < range.elems.size(); i++) {
      if (range.elems[i].elems.size() >= 3 && range.elems[i].elems[2].str == id) return true;
    }
  }
  return false;
}

// Node `id`'s "health" in CLUSTER SHARDS (from `c`); "" when it is not listed.
std::string Health(RespClient& c, const std::string& id) {
  for (const Reply& shard : c.Call({"CLUSTER", "SHARDS"}).elems) {
    for (size_t k = 0; k + 1 < shard.elems.size(); k += 2) {
      if (shard.elems[k].str != "nodes") continue;
      for (const Reply& n : shard.elems[k + 1].elems) {
        std::string node_id, health;
        for (size_t f = 0; f + 1 < n.elems.size(); f += 2) {
          if (n.elems[f].str == "id") node_id = n.elems[f + 1].str;
          if (n.elems[f].str == "health") health = n.elems[f + 1].str;
        }
        if (node_id == id) return health;
      }
    }
  }
  return "";
}

TEST(ClusterReplicaLoading, HiddenWhileItLoadsAndBackAfter) {
  if (!HaveRedisServer() || access("/usr/bin/redis-cli", X_OK) != 0) {
    GTEST_SKIP() << "redis-cli is not installed";
  }
  // The data link's shm provider (the default, verbs, has no device here).
  TestCluster c(std::vector<Kind>(6, K), [](Kind) {
    return std::vector<std::string>{"--repl-rdma-provider", "shm"};
  });
  ASSERT_TRUE(c.Create(1));
  // The primary of the keys "{t}..." and its replica.
  int primary = -1;
  for (size_t i = 0; i < c.size(); i++) {
    for (const ClusterNodeEntry& e : c.Nodes(0)) {
      if (e.id != c.NodeId(i) || !e.is_primary()) continue;
      for (const std::string& s : e.slots) {
        size_t dash = s.find('-');
        int first = std::stoi(s.substr(0, dash));
        int last = dash == std::string::npos ? first : std::stoi(s.substr(dash + 1));
        if (KeySlot("{t}") >= first && KeySlot("{t}") <= last) primary = static_cast<int>(i);
      }
    }
  }
  ASSERT_GE(primary, 0);
  std::string primary_id = c.NodeId(primary);
  int replica = -1;
  for (const ClusterNodeEntry& e : c.Nodes(0)) {
    if (e.primary_id == primary_id) replica = c.IndexOf(e.port);
  }
  ASSERT_GE(replica, 0);
  std::string replica_id = c.NodeId(replica);
  RespClient p(c.port(primary));
  RespClient r(c.port(replica));
  std::string value(1024, 'v');
  for (int i = 0; i < 400; i++) {
    ASSERT_EQ(p.Raw({"SET", "{t}" + std::to_string(i), value}), "+OK\r\n");
  }
  ASSERT_TRUE(WaitFor([&] { return r.Call({"DBSIZE"}).integer == 400; }, 60000));
  ASSERT_TRUE(WaitFor([&] { return InSlots(p, replica_id); }, 60000));
  // Between kvstore nodes a shard's replication runs over the data link.
  EXPECT_EQ(InfoField(r, "replication", "master_link_transport"), "rdma");

  // A full resync (the 16 KB backlog cannot hold the 100 KB written meanwhile), loaded at
  // 10 ms a key.
  ASSERT_EQ(p.Raw({"CONFIG", "SET", "repl-backlog-size", "100"}), "+OK\r\n");
  ASSERT_EQ(r.Raw({"CONFIG", "SET", "key-load-delay", "10000"}), "+OK\r\n");
  ASSERT_EQ(r.Raw({"CONFIG", "SET", "loading-process-events-interval-bytes", "1024"}), "+OK\r\n");
  p.Send({"MULTI"});
  p.Send({"CLIENT", "KILL", "TYPE", "replica"});
  for (int i = 0; i < 100; i++) p.Send({"SET", "{t}new" + std::to_string(i), value});
  p.Send({"EXEC"});
  for (int i = 0; i < 103; i++) ASSERT_FALSE(p.Read().is_error()) << i;

  std::string info;
  ASSERT_TRUE(WaitFor(
      [&] {
        info = r.Call({"INFO", "persistence"}).str;
        return InfoTextField(info, "loading") == "1";
      },
      60000, 5))
      << info;
  // (A key's command gets -MOVED first, as in Redis: redirection comes before the loading check.)
  EXPECT_EQ(r.Raw({"DBSIZE"}), "-LOADING Redis is loading the dataset in memory\r\n");
  EXPECT_EQ(InfoField(r, "replication", "role"), "slave");
  // The primary learns of it through the bus: out of CLUSTER SLOTS, "loading" in SHARDS.
  EXPECT_TRUE(WaitFor([&] { return !InSlots(p, replica_id); }, 60000, 20));
  EXPECT_EQ(Health(p, replica_id), "loading");
  EXPECT_EQ(InfoField(r, "persistence", "loading"), "1");

  ASSERT_EQ(r.Raw({"CONFIG", "SET", "key-load-delay", "0"}), "+OK\r\n");
  ASSERT_TRUE(WaitFor(
      [&] {
        info = r.Call({"INFO", "replication"}).str;
        return InfoTextField(info, "master_link_status") == "up";
      },
      120000))
      << info;
  EXPECT_EQ(InfoField(r, "persistence", "loading"), "0");
  EXPECT_EQ(r.Call({"DBSIZE"}).integer, 500);
  EXPECT_EQ(InfoField(r, "replication", "master_link_transport"), "rdma");
  EXPECT_TRUE(WaitFor([&] { return InSlots(p, replica_id); }, 60000));
  EXPECT_TRUE(WaitFor([&] { return Health(p, replica_id) == "online"; }, 60000));
  EXPECT_TRUE(c.WaitHealthy());
}

}  // namespace
}  // namespace kv::test
