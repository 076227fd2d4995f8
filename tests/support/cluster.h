// Redis Cluster clusters of real server processes for end-to-end tests: kvstore-server and
// Debian's redis-server nodes, each a ServerProcess in cluster mode with its own directory (its
// nodes.conf lives there), joined with Debian's redis-cli --cluster, and waited on until every
// node reports the same healthy cluster. Waits poll for the event, with generous deadlines.
// Call from the test's thread (ClusterClient, in cluster_client.h, may run on another).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tests/support/process.h"
#include "tests/support/resp_client.h"

namespace kv::test {

// What a redis-cli run printed (stdout and stderr together, colours removed) and how it ended.
// Node kinds in redis-cli --cluster create's order (the first half become primaries), named
// for the parameterized cluster tests ("AllRedis", "Mixed", "AllKvstore").
struct Layout {
  const char* name;
  std::vector<ServerProcess::Kind> kinds;
};

struct CliResult {
  int status = -1;  // its exit status; -1 when it was killed (timeout) or could not run
  std::string output;
};

// Runs /usr/bin/redis-cli with `args` and waits for it; killed after `timeout_ms`.
CliResult RunRedisCli(const std::vector<std::string>& args, int timeout_ms = 120000);

// The arguments that put a node in cluster mode: nodes.conf in the node's dir, a 2 s node
// timeout, and the cluster bus on `bus_port` (given, since port + 10000 may be past 65535).
std::vector<std::string> ClusterNodeArgs(int bus_port);

// One line of CLUSTER NODES.
struct ClusterNodeEntry {
  std::string id;
  std::string addr;  // ip:port@cport[,hostname]
  int port = 0;
  std::vector<std::string> flags;  // myself, master, slave, fail?, fail, handshake, noaddr, ...
  std::string primary_id;          // "-" for a primary
  int64_t config_epoch = -1;
  std::string link;                     // connected / disconnected
  std::vector<std::string> slots;       // "0-5460", "7000", ...
  std::vector<std::string> open_slots;  // "[93->-id]", "[93-<-id]" (the node's own line only)

  bool HasFlag(const std::string& f) const;
  bool is_primary() const { return HasFlag("master"); }
};
// CLUSTER NODES' text, line by line.
std::vector<ClusterNodeEntry> ParseClusterNodes(const std::string& text);

class TestCluster {
 public:
  using Kind = ServerProcess::Kind;

  // Starts one node per entry of `kinds`, in that order, each on its own ports and directory;
  // they know no other node until Create. `extra_args`, when given, is called once per node,
  // in order, with its kind, for more arguments (a TLS port of its own...).
  explicit TestCluster(const std::vector<Kind>& kinds,
                       const std::function<std::vector<std::string>(Kind)>& extra_args = nullptr);
  TestCluster(const TestCluster&) = delete;
  TestCluster& operator=(const TestCluster&) = delete;

  size_t size() const { return nodes_.size(); }
  ServerProcess& node(size_t i) { return *nodes_[i].process; }
  Kind kind(size_t i) const { return nodes_[i].kind; }
  int port(size_t i) const { return nodes_[i].process->port(); }
  int bus_port(size_t i) const { return nodes_[i].bus_port; }
  // The index of the node serving `port`; -1 when none does.
  int IndexOf(int port) const;

  // redis-cli --cluster create over every node in order with `replicas` replicas per primary
  // (the first size() / (replicas + 1) nodes become primaries), then WaitHealthy. A failure
  // carries redis-cli's output.
  ::testing::AssertionResult Create(int replicas);
  // Waits until Disagreement() is empty; a failure carries the last one and Describe().
  ::testing::AssertionResult WaitHealthy(int timeout_ms = 60000);
  // Empty when every node answers, says cluster_state:ok, and lists in CLUSTER NODES every node
  // of the cluster with the same address, flags, primary, config epoch, link state and slots as
  // every other node does, none failing, in handshake or with an open slot; else what is amiss.
  std::string Disagreement();

  // redis-cli --cluster check through node `via`.
  CliResult Check(size_t via = 0);
  // redis-cli --cluster reshard through node `via`: `slots` slots from node `from` to node `to`.
  CliResult Reshard(size_t from, size_t to, int slots, size_t via = 0);

  // CLUSTER MYID of node i ("" when it does not answer).
  std::string NodeId(size_t i);
  // Node i's CLUSTER NODES (empty when it does not answer).
  std::vector<ClusterNodeEntry> Nodes(size_t i);
  // The indices of the nodes node `via` sees as primaries, in index order.
  std::vector<size_t> Primaries(size_t via = 0);
  // Each node's kind, port, CLUSTER NODES and the end of its log, for failure messages.
  std::string Describe();

  // ---- failover: nodes that die and come back ----

  // Kills node i with SIGKILL (it saves nothing and tells no one) and reaps it. Restart it with
  // node(i).Restart(): it starts again from its nodes.conf, on the same port and directory.
  void Kill(size_t i);
  // Waits until every running node lists node `i` with the flag "fail".
  ::testing::AssertionResult WaitFailed(size_t i, int timeout_ms = 60000);
  // Waits until every running node says cluster_state:ok and lists node `i` as a primary owning
  // exactly `slots` (CLUSTER NODES' ranges, in its order), neither failing nor in doubt.
  ::testing::AssertionResult WaitPrimary(size_t i, const std::vector<std::string>& slots,
                                         int timeout_ms = 60000);
  // Waits until every running node lists node `replica` as a replica of node `primary` (by
  // port), neither failing nor in doubt.
  ::testing::AssertionResult WaitReplicaOf(size_t replica, size_t primary, int timeout_ms = 60000);

 private:
  struct Node {
    Kind kind;
    int bus_port;
    std::unique_ptr<ServerProcess> process;
  };
  // A connection to node i; nullptr when it is not running or does not accept one.
  std::unique_ptr<RespClient> Connect(size_t i);
  std::string Addr(size_t i) const { return "127.0.0.1:" + std::to_string(port(i)); }
  // Waits until `want` (given a node's index and CLUSTER NODES entries, "" when content, else
  // what is amiss) is content with every running node's view; a failure says `what` and why.
  ::testing::AssertionResult WaitEveryView(
      const std::string& what,
      const std::function<std::string(size_t, const std::vector<ClusterNodeEntry>&)>& want,
      int timeout_ms);

  std::vector<Node> nodes_;
};

}  // namespace kv::test
