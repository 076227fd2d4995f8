// ASKING, READONLY and READWRITE as Redis has them outside cluster mode: commands that answer
// that cluster support is disabled (cluster clients send them; ACL categories count them).
#include "cmd/command.h"
#include "cmd/context.h"

namespace kv::server {
namespace {

void ClusterDisabled(cmd::Context& c) { c.Error("This instance has cluster support disabled"); }

}  // namespace

void RegisterClusterConnectionCommands(cmd::CommandTable& t) {
  constexpr uint32_t kAnyTime = cmd::kFast | cmd::kLoading | cmd::kStale;
  static constexpr cmd::CommandRow kRows[] = {
      {"asking", 1, cmd::kFast, 0, 0, 0, ClusterDisabled,
       "Sent by cluster clients after an -ASK redirect", "3.0.0"},
      {"readonly", 1, kAnyTime, 0, 0, 0, ClusterDisabled,
       "Enables read queries for a connection to a cluster replica node", "3.0.0"},
      {"readwrite", 1, kAnyTime, 0, 0, 0, ClusterDisabled,
       "Disables read queries for a connection to a cluster replica node", "3.0.0"},
  };
  // Their ACL category is @connection, which the "cluster" group does not imply.
  cmd::AddRows(t, kRows, "cluster");
  for (const cmd::CommandRow& r : kRows) t.Find(r.name)->acl_categories = "connection";
}

}  // namespace kv::server
