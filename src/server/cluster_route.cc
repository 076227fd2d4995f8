// Cluster mode's redirection, decided before a command runs: the slots of its keys (of every
// command an EXEC runs; of the channels of SPUBLISH, SSUBSCRIBE and SUNSUBSCRIBE) against the
// slot map, as Redis' processCommand asks getNodeByQuery.
#include <string>
#include <vector>

#include "cluster/cluster.h"
#include "common/clock.h"
#include "server/client.h"
#include "server/server.h"

namespace kv::server {

namespace {

bool IsShardPubSub(const cmd::CommandSpec& s) {
  return s.name == "spublish" || s.name == "ssubscribe" || s.name == "sunsubscribe";
}

}  // namespace

bool Server::RouteInCluster(Client& c, cmd::CommandSpec& spec,
                            std::span<const std::string_view> args, uint32_t flags,
                            resp::ReplyWriter& w) {
  bool exec = spec.name == "exec" && c.tx().active;
  // A command without keys runs anywhere.
  if (!exec && spec.key_specs.empty() && !spec.getkeys && !IsShardPubSub(spec)) return true;
  thread_local std::vector<std::string_view> keys;
  thread_local std::vector<cmd::KeyRef> refs;
  keys.clear();
  bool shard = false;
  auto collect = [&](const cmd::CommandSpec& s, std::span<const std::string_view> a) {
    if (IsShardPubSub(s)) {
      shard = true;
      size_t end = s.name == "spublish" ? 2 : a.size();
      for (size_t i = 1; i < end && i < a.size(); i++) keys.push_back(a[i]);
      return;
    }
    cmd::KeysAndFlagsInto(s, a, &refs);
    for (const cmd::KeyRef& r : refs) keys.push_back(a[static_cast<size_t>(r.index)]);
  };
  std::vector<std::vector<std::string_view>> queued;
  if (exec) {
    queued.reserve(c.tx().queued.size());
    for (const auto& q : c.tx().queued) {
      queued.emplace_back(q.begin(), q.end());
      std::string error;
      const cmd::CommandSpec* qs = cmd::ResolveCommand(commands_, queued.back(), &error);
      if (qs) collect(*qs, queued.back());
    }
  } else {
    collect(spec, args);
  }
  cluster::Query q;
  q.keys = keys;
  q.write = ((flags | (exec ? c.tx().flags_any : 0)) & cmd::kWrite) != 0;
  q.pubsub_shard = shard;
  q.migrate = spec.name == "migrate";
  q.asking = c.session().asking || (flags & cmd::kAsking);
  q.readonly = c.session().cluster_readonly;
  q.tls = c.tls();
  int64_t now = WallMs();
  q.exists = [&](std::string_view key) { return keyspace_->Lookup(0, key, now) != nullptr; };
  cluster::Route r = cluster_->RouteQuery(q);
  if (r.kind == cluster::Route::kHere) return true;
  if (exec) {
    EndTransaction(c);
  } else {
    FlagTransactionError(c);
  }
  w.Error(r.ErrorLine());
  spec.stats.rejected_calls++;
  CountErrors(w);
  return false;
}

}  // namespace kv::server
