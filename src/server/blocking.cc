// Blocking commands: a command that finds nothing to pop parks its client on the keys it named;
// a later change to one of them runs the command again for the clients waiting there, first come
// first served, and the deadline (or CLIENT UNBLOCK) answers the timeout reply. The client's
// further input waits.
//
// Clients may live on other poll groups than the command that wakes them: the reply goes
// through Deliver (Client::Push) and the client's loop resumes its input.
#include <algorithm>
#include <span>

#include "cmd/context.h"
#include "common/clock.h"
#include "common/strutil.h"
#include "repl/primary/primary.h"
#include "server/client.h"
#include "server/poll_group.h"
#include "server/server.h"
#include "server/tracking.h"

namespace kv::server {

void Server::BlockClient(Client& c, std::span<const std::string_view> args,
                         cmd::BlockRequest req) {
  Client::Blocked& b = c.block_state();
  b.generation = ++block_generation_;
  b.db = c.session().db;
  b.argv.assign(args.begin(), args.end());
  b.keys = std::move(req.keys);
  b.key_argv = std::move(req.key_retry_args);
  b.unblock_on_delete = req.unblock_on_delete;
  b.type = req.type;
  b.first_run_us = blocked_run_us_;
  for (const auto& k : b.keys) {
    auto& q = blocked_[std::make_pair(b.db, k)];
    if (std::find(q.begin(), q.end(), &c) == q.end()) q.push_back(&c);
  }
  c.set_blocked(true);
  blocked_count_++;
  if (req.deadline_ms > 0) {
    int64_t delay = std::max<int64_t>(0, req.deadline_ms - WallMs());
    PollGroup* g = &c.group();
    uint64_t id = c.id(), gen = b.generation;
    g->loop().AddTimer(delay, [this, g, id, gen] {
      std::unique_lock lock(mu_, std::defer_lock);
      if (!LockUnlessBusy(lock)) return int64_t{10};  // times out once the script is over
      Client* cl = g->Find(id);
      bool timed_out = cl && TimeOutClient(*cl, gen);
      lock.unlock();
      if (timed_out) cl->ResumeInput();  // takes the lock itself; this is the client's thread
      return int64_t{-1};
    });
  }
}

void Server::UnblockClient(Client& c) {
  if (!c.blocked()) return;
  Client::Blocked& b = c.block_state();
  for (const auto& k : b.keys) {
    auto it = blocked_.find(std::make_pair(b.db, k));
    if (it == blocked_.end()) continue;
    std::erase(it->second, &c);
    if (it->second.empty()) blocked_.erase(it);
  }
  b.argv.clear();
  b.keys.clear();
  b.key_argv.clear();
  c.set_blocked(false);
  blocked_count_--;
  c.EndReplyCommand();  // a CLIENT REPLY SKIP that silenced the blocked command is used up
}

bool Server::TimeOutClient(Client& c, uint64_t generation) {
  if (!c.blocked() || c.block_state().generation != generation) return false;  // served
  if (!c.replies_silenced()) {  // CLIENT REPLY OFF or SKIP: the timeout is not answered either
    // A null array whatever the command (BLMOVE too), as Redis' replyToBlockedClientTimedOut.
    resp::ReplyWriter(&c.out(), c.session().resp).NullArray();  // on the client's own thread
  }
  CountUnblocked(c, false);
  UnblockClient(c);
  return true;
}

void Server::CountUnblocked(Client& c, bool failed) {
  const Client::Blocked& b = c.block_state();
  std::vector<std::string_view> argv(b.argv.begin(), b.argv.end());
  std::string unused;
  const cmd::CommandSpec* spec = cmd::ResolveCommand(commands_, argv, &unused);
  if (!spec) return;
  auto* mspec = const_cast<cmd::CommandSpec*>(spec);
  mspec->stats.calls++;
  mspec->stats.usec += static_cast<uint64_t>(b.first_run_us);
  if (failed) mspec->stats.failed_calls++;
  RecordCommandLatency(*spec, b.first_run_us);
}

bool Server::UnblockByCommand(Client& c, bool error) {
  if (!c.blocked()) return false;
  std::string reply;
  resp::ReplyWriter w(&reply, c.session().resp);
  std::optional<int64_t> acked = primary_->CancelWait(&c);  // WAIT's own list of waiters
  CountUnblocked(c, error);
  if (error) {
    w.Error("-UNBLOCKED client unblocked via CLIENT UNBLOCK");
    CountErrors(w);
  } else if (acked) {
    w.Int(*acked);  // what WAIT answers at its timeout
  } else {
    w.NullArray();  // what any other blocking command answers at its timeout
  }
  CompleteBlocked(c, reply);
  return true;
}

bool Server::TryServe(Client& c, const std::string& key) {
  Client::Blocked& b = c.block_state();
  // Run may unblock and clear the state. The first mention of the key counts, as in Redis.
  std::vector<std::string> argv = b.argv;
  auto at = std::find(b.keys.begin(), b.keys.end(), key);
  if (!b.key_argv.empty() && at != b.keys.end()) argv = b.key_argv[at - b.keys.begin()];
  std::vector<std::string_view> views(argv.begin(), argv.end());
  std::string reply;
  resp::ReplyWriter w(&reply, c.session().resp);
  Client* caller = current_client_;
  current_client_ = &c;
  int saved_db = c.session().db;
  c.session().db = b.db;
  c.session().woken = true;
  // Redis 7.0 serves BLPOP, BRPOP, BRPOPLPUSH and BLMOVE by popping the list without signalling
  // it as modified (a move's destination is): client-side caching sees no change of the list.
  std::span<const std::string_view> sources;
  std::string_view name = views[0];
  if (views.size() >= 3 && (EqualsIgnoreCase(name, "blpop") || EqualsIgnoreCase(name, "brpop"))) {
    sources = std::span(views).subspan(1, views.size() - 2);
  } else if (views.size() >= 3 && views[1] != views[2] &&
             (EqualsIgnoreCase(name, "blmove") || EqualsIgnoreCase(name, "brpoplpush"))) {
    sources = std::span(views).subspan(1, 1);
  }
  tracking_->set_unchanged_keys(sources);
  auto again = Run(c, views, w);
  tracking_->set_unchanged_keys({});
  c.session().woken = false;
  if (EndReplicationUnit()) c.set_write_offset(primary_->feed().offset());
  c.session().db = saved_db;
  current_client_ = caller;
  if (again) return false;  // still nothing for it: it keeps its place in the queues
  CompleteBlocked(c, reply);
  return true;
}

void Server::CompleteBlocked(Client& c, const std::string& reply) {
  bool silenced = c.replies_silenced() || c.is_master();  // as the command's reply would be
  UnblockClient(c);
  if (!silenced) c.Push(reply);  // no output limit: this is the reply it waited for
  PollGroup* g = &c.group();
  uint64_t id = c.id();
  g->loop().Post([g, id] {
    if (Client* cl = g->Find(id)) cl->ResumeInput();
  });
}

void Server::ServeKey(const std::pair<int, std::string>& k) {
  auto it = blocked_.find(k);
  if (it == blocked_.end()) return;
  // First come, first served. A list's or sorted set's waiters stop at the first that cannot be
  // served (nothing is left to pop); a stream's each wait for entries after their own IDs.
  std::vector<Client*> waiting(it->second.begin(), it->second.end());  // serving changes it
  for (Client* c : waiting) {
    it = blocked_.find(k);
    if (it == blocked_.end()) return;
    if (std::find(it->second.begin(), it->second.end(), c) == it->second.end()) continue;
    Client::Blocked& b = c->block_state();
    bool stream = b.type == store::ObjType::kStream;
    // Only a key that now holds what the client waits for wakes it.
    store::Entry* e = keyspace_->Lookup(k.first, k.second, WallMs());
    if (!e || e->value.type() != b.type) {
      if (b.unblock_on_delete) {
        std::string reply;
        resp::ReplyWriter w(&reply, c->session().resp);
        w.Error("-UNBLOCKED the stream key no longer exists");
        CountErrors(w);
        CountUnblocked(*c, true);
        CompleteBlocked(*c, reply);
        continue;
      }
      if (stream) continue;
      return;
    }
    if (!TryServe(*c, k.second) && !stream) return;
  }
}

void Server::ServeReadyKeys() {
  // Serving can make other keys ready (BLMOVE pushes to its destination): loop until quiet.
  while (!ready_keys_.empty()) {
    auto keys = std::move(ready_keys_);
    ready_keys_.clear();
    for (const auto& k : keys) ServeKey(k);
  }
}

}  // namespace kv::server
