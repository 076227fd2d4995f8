// CLUSTER, ASKING, READONLY and READWRITE: in cluster mode the cluster answers CLUSTER
// (cluster/cluster_cmds.cc) and the others set the client's flags; outside it they answer that
// cluster support is disabled, as redis-server does (cluster clients and tools send them to
// find out). COMMAND INFO and the ACL categories list them as Redis does.
#include "cluster/cluster.h"
#include "cmd/command.h"
#include "cmd/context.h"
#include "server/client.h"
#include "server/server.h"

namespace kv::server {
namespace {

void ClusterDisabled(cmd::Context& c) {
  if (cluster::Cluster* cl = ServerOf(c).cluster()) {
    Client* client = ServerOf(c).current_client_if_any();
    cl->Command(c, client != nullptr && client->tls());
    return;
  }
  c.Error("This instance has cluster support disabled");
}

// ASKING, READONLY and READWRITE set a flag of the client's in cluster mode.
template <bool cmd::Session::*kFlag, bool kValue>
void SetClusterFlag(cmd::Context& c) {
  if (!ServerOf(c).cluster()) {
    c.Error("This instance has cluster support disabled");
    return;
  }
  c.session.*kFlag = kValue;
  c.out.Ok();
}

constexpr auto Asking = SetClusterFlag<&cmd::Session::asking, true>;
constexpr auto ReadOnly = SetClusterFlag<&cmd::Session::cluster_readonly, true>;
constexpr auto ReadWrite = SetClusterFlag<&cmd::Session::cluster_readonly, false>;

}  // namespace

void RegisterClusterConnectionCommands(cmd::CommandTable& t) {
  constexpr uint32_t kAnyTime = cmd::kFast | cmd::kLoading | cmd::kStale;
  static constexpr cmd::CommandRow kRows[] = {
      {"asking", 1, cmd::kFast, 0, 0, 0, Asking, "Sent by cluster clients after an -ASK redirect",
       "3.0.0"},
      {"readonly", 1, kAnyTime, 0, 0, 0, ReadOnly,
       "Enables read queries for a connection to a cluster replica node", "3.0.0"},
      {"readwrite", 1, kAnyTime, 0, 0, 0, ReadWrite,
       "Disables read queries for a connection to a cluster replica node", "3.0.0"},
  };
  // Their ACL category is @connection, which the "cluster" group does not imply.
  cmd::AddRows(t, kRows, "cluster");
  for (const cmd::CommandRow& r : kRows) t.Find(r.name)->acl_categories = "connection";

  cmd::CommandSpec* parent = t.Add({.name = "cluster",
                                    .arity = -2,
                                    .group = "cluster",
                                    .summary = "A container for cluster commands",
                                    .since = "3.0.0"});
  constexpr uint32_t kChange = cmd::kAdmin | cmd::kStale | cmd::kNoAsyncLoading;
  constexpr uint32_t kLook = cmd::kAdmin | cmd::kStale;
  constexpr uint32_t kRead = cmd::kStale;
  static constexpr cmd::CommandRow kSubs[] = {
      {"addslots", -3, kChange, 0, 0, 0, ClusterDisabled, "Assign new hash slots to receiving node",
       "3.0.0"},
      {"addslotsrange", -4, kChange, 0, 0, 0, ClusterDisabled,
       "Assign new hash slots to receiving node", "7.0.0"},
      {"bumpepoch", 2, kChange, 0, 0, 0, ClusterDisabled, "Advance the cluster config epoch",
       "3.0.0"},
      {"count-failure-reports", 3, kLook, 0, 0, 0, ClusterDisabled,
       "Return the number of failure reports active for a given node", "3.0.0"},
      {"countkeysinslot", 3, kRead, 0, 0, 0, ClusterDisabled,
       "Return the number of local keys in the specified hash slot", "3.0.0"},
      {"delslots", -3, kChange, 0, 0, 0, ClusterDisabled,
       "Set hash slots as unbound in receiving node", "3.0.0"},
      {"delslotsrange", -4, kChange, 0, 0, 0, ClusterDisabled,
       "Set hash slots as unbound in receiving node", "7.0.0"},
      {"failover", -2, kChange, 0, 0, 0, ClusterDisabled,
       "Forces a replica to perform a manual failover of its master.", "3.0.0"},
      {"flushslots", 2, kChange, 0, 0, 0, ClusterDisabled, "Delete a node's own slots information",
       "3.0.0"},
      {"forget", 3, kChange, 0, 0, 0, ClusterDisabled, "Remove a node from the nodes table",
       "3.0.0"},
      {"getkeysinslot", 4, kRead, 0, 0, 0, ClusterDisabled,
       "Return local key names in the specified hash slot", "3.0.0"},
      {"help", 2, cmd::kLoading | cmd::kStale, 0, 0, 0, ClusterDisabled,
       "Show helpful text about the different subcommands", "5.0.0"},
      {"info", 2, kRead, 0, 0, 0, ClusterDisabled, "Provides info about Redis Cluster node state",
       "3.0.0"},
      {"keyslot", 3, kRead, 0, 0, 0, ClusterDisabled, "Returns the hash slot of the specified key",
       "3.0.0"},
      {"links", 2, kRead, 0, 0, 0, ClusterDisabled,
       "Returns a list of all TCP links to and from peer nodes in cluster", "7.0.0"},
      {"meet", -4, kChange, 0, 0, 0, ClusterDisabled,
       "Force a node cluster to handshake with another node", "3.0.0"},
      {"myid", 2, kRead, 0, 0, 0, ClusterDisabled, "Return the node id", "3.0.0"},
      {"nodes", 2, kRead, 0, 0, 0, ClusterDisabled, "Get Cluster config for the node", "3.0.0"},
      {"replicas", 3, kLook, 0, 0, 0, ClusterDisabled,
       "List replica nodes of the specified master node", "5.0.0"},
      {"replicate", 3, kChange, 0, 0, 0, ClusterDisabled,
       "Reconfigure a node as a replica of the specified master node", "3.0.0"},
      {"reset", -2, cmd::kAdmin | cmd::kNoScript | cmd::kStale, 0, 0, 0, ClusterDisabled,
       "Reset a Redis Cluster node", "3.0.0"},
      {"saveconfig", 2, kChange, 0, 0, 0, ClusterDisabled,
       "Forces the node to save cluster state on disk", "3.0.0"},
      {"set-config-epoch", 3, kChange, 0, 0, 0, ClusterDisabled,
       "Set the configuration epoch in a new node", "3.0.0"},
      {"setslot", -4, kChange, 0, 0, 0, ClusterDisabled, "Bind a hash slot to a specific node",
       "3.0.0"},
      {"shards", 2, kRead, 0, 0, 0, ClusterDisabled, "Get array of cluster slots to node mappings",
       "7.0.0"},
      {"slaves", 3, kLook, 0, 0, 0, ClusterDisabled,
       "List replica nodes of the specified master node", "3.0.0"},
      {"slots", 2, kRead, 0, 0, 0, ClusterDisabled, "Get array of Cluster slot to node mappings",
       "3.0.0"},
      // Whole-slot migration (server/slot_migration.h), in the form Valkey 9 gives it.
      {"migrateslots", -5, kChange, 0, 0, 0, ClusterDisabled,
       "Migrate whole slots to another node over the data link", "9.0.0"},
      {"getslotmigrations", 2, kLook, 0, 0, 0, ClusterDisabled, "Get the status of slot migrations",
       "9.0.0"},
      {"cancelslotmigrations", 2, kChange, 0, 0, 0, ClusterDisabled,
       "Cancel the slot migrations this node exports", "9.0.0"},
      {"syncslots", -3, kChange, 0, 0, 0, ClusterDisabled,
       "Internal command of the slot migration's control connection", "9.0.0"},
  };
  cmd::AddSubRows(t, parent, kSubs, "cluster");
}

}  // namespace kv::server
