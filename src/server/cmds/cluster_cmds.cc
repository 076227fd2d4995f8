// ASKING, READONLY and READWRITE as Redis has them outside cluster mode: commands that answer
// that cluster support is disabled (cluster clients send them; ACL categories count them).
#include "cmd/command.h"
#include "cmd/context.h"

namespace kv::server {
namespace {

void ClusterDisabled(cmd::Context& c) { c.Error("This instance has cluster support disabled"); }

}  // namespace

void RegisterClusterConnectionCommands(cmd::CommandTable& t) {
  t.Add({.name = "asking",
         .arity = 1,
         .flags = cmd::kFast,
         .handler = ClusterDisabled,
         .group = "cluster",
         .acl_categories = "connection",
         .summary = "Sent by cluster clients after an -ASK redirect",
         .since = "3.0.0"});
  t.Add({.name = "readonly",
         .arity = 1,
         .flags = cmd::kFast | cmd::kLoading | cmd::kStale,
         .handler = ClusterDisabled,
         .group = "cluster",
         .acl_categories = "connection",
         .summary = "Enables read queries for a connection to a cluster replica node",
         .since = "3.0.0"});
  t.Add({.name = "readwrite",
         .arity = 1,
         .flags = cmd::kFast | cmd::kLoading | cmd::kStale,
         .handler = ClusterDisabled,
         .group = "cluster",
         .acl_categories = "connection",
         .summary = "Disables read queries for a connection to a cluster replica node",
         .since = "3.0.0"});
}

}  // namespace kv::server
