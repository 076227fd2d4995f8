// Transactions: MULTI, EXEC, DISCARD, WATCH, UNWATCH, and the queueing the dispatcher does for a
// client inside MULTI. EXEC runs the queued commands back to back under the keyspace lock, so
// the transaction is atomic; WATCH is optimistic locking: any change to a watched key (a write,
// an expiry, a flush) makes the next EXEC fail with a null reply.
#include <algorithm>

#include "cmd/context.h"
#include "common/clock.h"
#include "common/strutil.h"
#include "repl/replica/replica.h"
#include "server/client.h"
#include "server/server.h"
#include "server/tracking.h"

namespace kv::server {

bool Server::QueueInTransaction(Client& c, const cmd::CommandSpec* spec,
                                std::span<const std::string_view> args,
                                resp::ReplyWriter& w) {
  Client::Transaction& tx = c.tx();
  if (!tx.active) return false;
  const std::string& name = spec->parent ? spec->parent->name : spec->name;
  // These run immediately, even inside MULTI.
  if (name == "exec" || name == "discard" || name == "multi" || name == "watch" ||
      name == "quit" || name == "reset") {
    return false;
  }
  uint32_t flags = spec->parent ? spec->parent->flags | spec->flags : spec->flags;
  if (flags & cmd::kNoMulti) {
    w.Error("Command not allowed inside a transaction");
    tx.abort = true;
    return true;
  }
  // A script counts with its own flags (ScriptCommandFlags).
  if (flags & cmd::kNoMandatoryKeys) flags = ScriptCommandFlags(args, flags);
  tx.flags_any |= flags & (cmd::kWrite | cmd::kDenyOom | cmd::kNoAsyncLoading);
  tx.flags_lacking |= ~flags & (cmd::kStale | cmd::kLoading);
  tx.queued.emplace_back(args.begin(), args.end());
  w.Simple("QUEUED");
  return true;
}

void Server::FlagTransactionError(Client& c) {
  if (c.tx().active) c.tx().abort = true;
}

void Server::KeyModified(int db, std::string_view key) { KeyModifiedBy(db, key, current_client_); }

void Server::KeyModifiedBy(int db, std::string_view key, const Client* modifier) {
  WakeBlockedOn(db, key);
  tracking_->InvalidateKey(key, modifier);  // client-side caching
  if (current_client_ != nullptr && !current_client_->is_master() && replica_->is_replica()) {
    local_writes_.emplace_back(db, key);
  }
  if (watchers_.empty()) return;
  TouchWatchedKey(db, key, keyspace_->db(db).Find(key) != nullptr);
}

void Server::WakeBlockedOn(int db, std::string_view key) {
  if (blocked_.empty()) return;
  auto k = std::make_pair(db, std::string(key));
  if (blocked_.count(k)) ready_keys_.push_back(std::move(k));
}

void Server::TrackLocalWrites() {
  for (const auto& [db, key] : local_writes_) keyspace_->TrackLocalExpire(db, key);
  local_writes_.clear();
}

// A key that had already expired when it was watched and is now gone (deleted, expired,
// flushed) did not change logically: EXEC still runs, and the key counts as watched afresh.
void Server::TouchWatchedKey(int db, std::string_view key, bool exists) {
  if (watchers_.empty()) return;
  auto it = watchers_.find(std::make_pair(db, std::string(key)));
  if (it == watchers_.end()) return;
  for (Client* c : it->second) {
    for (auto& wk : c->tx().watched) {
      if (wk.db != db || wk.key != key) continue;
      if (wk.expired_when_watched && !exists) {
        wk.expired_when_watched = false;
      } else {
        c->tx().dirty = true;
      }
      break;
    }
  }
}

void Server::DatasetReplaced() {
  for (int db = 0; db < keyspace_->num_dbs(); db++) DbReplaced(db, -1);
  tracking_->FlushNow();  // no command ends this one: the null goes out now
}

// Redis' touchAllWatchedKeysInDb, run before the flush or the swap: a watched key changes if
// it exists in `emptied` or in `replaced_with`, except that an expired key replaced by nothing
// or by another expired key, and nothing replaced by an expired key, are no change.
// Client-side caching's null for every key, once per FLUSHDB or FLUSHALL (SWAPDB sends none).
void Server::Flushed() { tracking_->Flushed(); }

void Server::DbReplaced(int emptied, int replaced_with) {
  int64_t now = WallMs();
  store::Db& from = keyspace_->db(emptied);
  store::Db* to = replaced_with >= 0 ? &keyspace_->db(replaced_with) : nullptr;
  // Clients blocked on a key that goes (XREADGROUP ends its wait then) or that the other db
  // brings (SWAPDB) get their turn once the command is done.
  for (auto it = blocked_.lower_bound({emptied, std::string()});
       it != blocked_.end() && it->first.first == emptied; ++it) {
    const std::string& key = it->first.second;
    if (from.Find(key) != nullptr || (to != nullptr && to->Find(key) != nullptr)) {
      ready_keys_.push_back(it->first);
    }
  }
  for (auto it = watchers_.lower_bound({emptied, std::string()});
       it != watchers_.end() && it->first.first == emptied; ++it) {
    const std::string& key = it->first.second;
    bool in_emptied = from.Find(key) != nullptr;
    store::Entry* in_replacement = to ? to->Find(key) : nullptr;
    if (!in_emptied && in_replacement == nullptr) continue;
    bool replacement_expired = in_replacement && to->IsExpired(in_replacement, now);
    for (Client* c : it->second) {
      for (auto& wk : c->tx().watched) {
        if (wk.db != emptied || wk.key != key) continue;
        if (wk.expired_when_watched) {
          if (in_replacement == nullptr) {
            wk.expired_when_watched = false;
            break;
          }
          if (replacement_expired) break;
        } else if (!in_emptied && replacement_expired) {
          wk.expired_when_watched = true;
          break;
        }
        c->tx().dirty = true;
        break;
      }
    }
  }
}

void Server::Unwatch(Client& c) {
  for (const auto& wk : c.tx().watched) {
    auto it = watchers_.find(std::make_pair(wk.db, wk.key));
    if (it == watchers_.end()) continue;
    std::erase(it->second, &c);
    if (it->second.empty()) watchers_.erase(it);
  }
  c.tx().watched.clear();
  c.tx().dirty = false;
}

void Server::EndTransaction(Client& c) {
  Client::Transaction& tx = c.tx();
  tx.active = false;
  tx.abort = false;
  tx.queued.clear();
  tx.flags_any = tx.flags_lacking = 0;
  c.set_flag(Client::kMulti, false);
  Unwatch(c);
}

namespace {

using cmd::Context;

void Multi(Context& c) {
  Server& s = ServerOf(c);
  Client& me = s.current_client();
  if (me.tx().active) {
    c.Error("MULTI calls can not be nested");
    return;
  }
  me.tx().active = true;
  me.set_flag(Client::kMulti, true);
  c.out.Ok();
}

void Discard(Context& c) {
  Server& s = ServerOf(c);
  Client& me = s.current_client();
  if (!me.tx().active) {
    c.Error("DISCARD without MULTI");
    return;
  }
  s.EndTransaction(me);
  c.out.Ok();
}

// Redis 7.0: a watched key that has logically expired since WATCH fails the EXEC too.
bool WatchedKeyExpired(Context& c, Client& me) {
  for (const auto& wk : me.tx().watched) {
    if (wk.expired_when_watched) continue;
    store::Db& db = c.ks.db(wk.db);
    store::Entry* e = db.Find(wk.key);
    if (e && db.IsExpired(e, c.now_ms)) return true;
  }
  return false;
}

void Exec(Context& c) {
  Server& s = ServerOf(c);
  Client& me = s.current_client();
  Client::Transaction& tx = me.tx();
  if (!tx.active) {
    c.Error("EXEC without MULTI");
    return;
  }
  if (tx.abort) {
    s.EndTransaction(me);
    c.Error("-EXECABORT Transaction discarded because of previous errors.");
    return;
  }
  if (tx.dirty || WatchedKeyExpired(c, me)) {
    s.EndTransaction(me);
    c.out.NullArray();
    return;
  }
  std::vector<std::vector<std::string>> queued = std::move(tx.queued);
  s.EndTransaction(me);  // unwatches before running, as Redis does
  // CLIENT LIST (and ACL LOG's client-info) shows the client in its transaction until EXEC
  // ends, as Redis does.
  me.set_flag(Client::kMulti, true);
  tx.executing = queued.size();
  c.out.Array(queued.size());
  std::vector<std::string_view> views;
  c.session.deny_blocking = true;  // blocking commands answer at once inside EXEC
  for (const auto& argv : queued) {
    views.assign(argv.begin(), argv.end());
    s.RunQueued(me, views, c.out);
  }
  c.session.deny_blocking = false;
  tx.executing = 0;
  me.set_flag(Client::kMulti, false);
}

void Watch(Context& c) {
  Server& s = ServerOf(c);
  Client& me = s.current_client();
  if (me.tx().active) {
    c.Error("WATCH inside MULTI is not allowed");
    return;
  }
  for (size_t i = 1; i < c.argc(); i++) s.WatchKey(me, c.session.db, c.arg(i), c.now_ms);
  c.out.Ok();
}

void Unwatch(Context& c) {
  Server& s = ServerOf(c);
  s.Unwatch(s.current_client());
  c.out.Ok();
}

}  // namespace

void Server::WatchKey(Client& c, int db, std::string_view key, int64_t now_ms) {
  for (const auto& wk : c.tx().watched) {
    if (wk.db == db && wk.key == key) return;
  }
  store::Db& d = keyspace_->db(db);
  store::Entry* e = d.Find(key);
  bool expired = e && d.IsExpired(e, now_ms);
  c.tx().watched.push_back({db, std::string(key), expired});
  watchers_[std::make_pair(db, std::string(key))].push_back(&c);
}

void RegisterMultiCommands(cmd::CommandTable& t) {
  using namespace cmd;
  uint32_t f = kNoScript | kLoading | kStale | kFast | kAllowBusy;
  t.Add({.name = "multi", .arity = 1, .flags = f, .handler = Multi, .group = "transactions",
         .summary = "Mark the start of a transaction block", .since = "1.2.0"});
  t.Add({.name = "exec", .arity = 1, .flags = kNoScript | kLoading | kStale | kSkipSlowlog,
         .handler = Exec, .group = "transactions",
         .summary = "Execute all commands issued after MULTI", .since = "1.2.0"});
  t.Add({.name = "discard", .arity = 1, .flags = f, .handler = Discard, .group = "transactions",
         .summary = "Discard all commands issued after MULTI", .since = "2.0.0"});
  t.Add({.name = "watch", .arity = -2, .flags = f, .first_key = 1, .last_key = -1, .key_step = 1,
         .handler = Watch, .group = "transactions",
         .summary = "Watch the given keys to determine execution of the MULTI/EXEC block",
         .since = "2.2.0"});
  t.Add({.name = "unwatch", .arity = 1, .flags = f, .handler = Unwatch, .group = "transactions",
         .summary = "Forget about all watched keys", .since = "2.2.0"});
}

}  // namespace kv::server
