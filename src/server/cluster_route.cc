// Cluster mode's redirection, decided before a command runs: the slots of its keys (of every
// command an EXEC runs; of the channels of SPUBLISH, SSUBSCRIBE and SUNSUBSCRIBE) against the
// slot map, as Redis' processCommand asks getNodeByQuery.
#include <algorithm>
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

void Server::ClusterKeys(const cmd::CommandSpec& s, std::span<const std::string_view> args,
                         std::vector<std::string_view>* out, bool* shard) {
  thread_local std::vector<cmd::KeyRef> refs;
  if (IsShardPubSub(s)) {
    *shard = true;
    size_t end = s.name == "spublish" ? 2 : args.size();
    for (size_t i = 1; i < end && i < args.size(); i++) out->push_back(args[i]);
    return;
  }
  if (s.key_specs.empty() && !s.getkeys) return;
  cmd::KeysAndFlagsInto(s, args, &refs);
  for (const cmd::KeyRef& r : refs) out->push_back(args[static_cast<size_t>(r.index)]);
}

bool Server::RouteInCluster(Client& c, cmd::CommandSpec& spec,
                            std::span<const std::string_view> args, uint32_t flags,
                            resp::ReplyWriter& w) {
  bool exec = spec.name == "exec" && c.tx().active;
  // A command without keys runs anywhere.
  if (!exec && spec.key_specs.empty() && !spec.getkeys && !IsShardPubSub(spec)) return true;
  thread_local std::vector<std::string_view> keys;
  keys.clear();
  bool shard = false;
  std::vector<std::vector<std::string_view>> queued;
  if (exec) {
    queued.reserve(c.tx().queued.size());
    for (const auto& q : c.tx().queued) {
      queued.emplace_back(q.begin(), q.end());
      std::string error;
      const cmd::CommandSpec* qs = cmd::ResolveCommand(commands_, queued.back(), &error);
      if (qs) ClusterKeys(*qs, queued.back(), &keys, &shard);
    }
  } else {
    ClusterKeys(spec, args, &keys, &shard);
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

std::string Server::RouteScriptCall(Client& caller, const cmd::CommandSpec& spec,
                                    std::span<const std::string_view> args, uint32_t flags,
                                    std::span<const std::string_view> caller_args,
                                    bool allow_cross_slot, int* slot) {
  std::vector<std::string_view> keys;
  bool shard = false;
  ClusterKeys(spec, args, &keys, &shard);
  cluster::Query q;
  q.keys = keys;
  q.write = (flags & cmd::kWrite) != 0;
  q.pubsub_shard = shard;
  q.migrate = spec.name == "migrate";
  q.asking = caller.session().asking;
  q.readonly = caller.session().cluster_readonly;
  q.tls = caller.tls();
  int64_t now = WallMs();
  q.exists = [&](std::string_view key) { return keyspace_->Lookup(0, key, now) != nullptr; };
  cluster::Route r = cluster_->RouteQuery(q);
  if (r.kind == cluster::Route::kDownRo) {
    return "Script attempted to execute a write command while the cluster is down and readonly";
  }
  if (r.kind == cluster::Route::kDown) {
    return "Script attempted to execute a command while the cluster is down";
  }
  if (r.kind != cluster::Route::kHere)
    return "Script attempted to access a non local key in a cluster node";
  if (r.slot == -1 || allow_cross_slot) return "";
  if (*slot == -2) {
    // The keys the EVAL or FCALL declared (routed before it ran) set the script's slot.
    *slot = -1;
    std::string error;
    if (const cmd::CommandSpec* cs = cmd::ResolveCommand(commands_, caller_args, &error)) {
      std::vector<std::string_view> declared;
      bool unused = false;
      ClusterKeys(*cs, caller_args, &declared, &unused);
      if (!declared.empty()) *slot = KeyHashSlot(declared[0]);
    }
  }
  if (*slot == -1) {
    *slot = r.slot;
  } else if (*slot != r.slot) {
    return "Script attempted to access keys that do not hash to the same slot";
  }
  return "";
}

void Server::RedirectBlockedClients() {
  std::vector<Client*> clients;
  for (const auto& [key, waiting] : blocked_) {
    for (Client* c : waiting) {
      if (std::find(clients.begin(), clients.end(), c) == clients.end()) clients.push_back(c);
    }
  }
  for (Client* c : clients) {
    Client::Blocked& b = c->block_state();
    if (b.keys.empty() || b.argv.empty()) continue;
    const cmd::CommandSpec* spec = commands_.Find(b.argv[0]);
    bool write = spec && (spec->flags & cmd::kWrite);
    cluster::Route r =
        cluster_->RouteBlocked(b.keys[0], c->session().cluster_readonly, write, c->tls());
    if (r.kind == cluster::Route::kHere) continue;
    std::string reply;
    resp::ReplyWriter w(&reply, c->session().resp);
    w.Error(r.ErrorLine());
    CountErrors(w);
    CountUnblocked(*c, true);
    CompleteBlocked(*c, reply);
  }
}

}  // namespace kv::server
