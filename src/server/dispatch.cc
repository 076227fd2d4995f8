// The dispatcher: resolves a parsed request to its command, checks arity and authentication,
// runs it, and does the bookkeeping every command shares (statistics, slowlog, latency monitor,
// MONITOR feed, CLIENT REPLY modes).
#include <algorithm>
#include <cstdlib>

#include "common/clock.h"
#include "common/logging.h"
#include "common/strutil.h"
#include "repl/primary/primary.h"
#include "repl/replica/replica.h"
#include "server/acl_users.h"
#include "server/client.h"
#include "server/crash.h"
#include "server/evict.h"
#include "server/persistence/aof.h"
#include "server/persistence/persistence.h"
#include "server/server.h"
#include "server/tracking.h"

namespace kv::server {

void Server::Execute(Client& c, std::span<const std::string_view> args) {
  cmd::Session& session = c.session();
  current_client_ = &c;
  struct Executing {
    Server& s;
    const Client* client;
    std::span<const std::string_view> args;
    ~Executing() {
      s.executing_ = client;
      s.executing_args_ = args;
    }
  } restore{*this, executing_, executing_args_};
  executing_ = &c;
  executing_args_ = args;
  stats_.total_commands++;
  c.StartReplies();
  c.set_in_execute(true);
  resp::ReplyWriter w(&c.out(), session.resp);
  auto block = Run(c, args, w);
  // ASKING lasts for the next command (for a transaction, until its EXEC), as in Redis.
  if (session.asking && !c.tx().active && !EqualsIgnoreCase(args[0], "asking")) {
    session.asking = false;
  }
  // Invalidations of the client's own keys follow its reply (EXEC's, a script's).
  if (!c.paused()) tracking_->AfterExecute(c, args);
  c.set_in_execute(false);
  if (c.paused()) {  // held by CLIENT PAUSE: it runs (and counts) when the pause ends
    stats_.total_commands--;
    current_client_ = nullptr;
    return;
  }
  if (!local_writes_.empty()) TrackLocalWrites();  // a writable replica's keys with a TTL
  if (w.errors() > 0 && (c.flags() & (Client::kMaster | Client::kReplica))) {
    bool to_primary = c.flags() & Client::kMaster;
    std::string unused;
    const cmd::CommandSpec* spec = cmd::ResolveCommand(commands_, args, &unused);
    UnexpectedErrorReply(to_primary ? "replica" : "master", to_primary ? "master" : "replica",
                         w.last_error(), spec ? std::string_view(spec->name) : "<unknown>");
  }
  // WAIT waits for the stream to reach the end of this client's last write.
  bool wrap = !unwrapped_unit_;
  unwrapped_unit_ = false;
  if (EndReplicationUnit(wrap)) c.set_write_offset(primary_->feed().offset());
  if (evict_after_command_) {  // CONFIG SET maxmemory: each eviction its own unit
    evict_after_command_ = false;
    evictor_->Perform();
  }
  // Its replies wait for the AOF to hold every write made so far (its own and those it saw).
  if (primary_->feed().aof_on()) c.set_aof_offset(aof_->appended());
  if (block) BlockClient(c, args, std::move(*block));
  // CLIENT REPLY OFF and SKIP drop whatever the command wrote, errors included, but pushes.
  c.CheckpointReplies();
  // A blocked command's SKIP lasts until its reply (UnblockClient), as in Redis.
  if (!c.blocked()) c.EndReplyCommand();
  // Clients blocked on keys this command changed get their turn now, in order.
  if (!ready_keys_.empty()) ServeReadyKeys();
  tracking_->FlushPending();  // those of the blocked clients just served
  // Work outside commands (the cron's expiries) must not mistake anyone for the caller.
  current_client_ = nullptr;
}

namespace {
constexpr std::string_view kMisconfError =
    "-MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist "
    "to disk. Commands that may modify the data set are disabled, because this instance is "
    "configured to report errors during writes if RDB snapshotting fails "
    "(stop-writes-on-bgsave-error option). Please check the Redis logs for details about the "
    "RDB error.";

bool AllowedWhileSubscribed(const cmd::CommandSpec& spec) {
  static const char* kAllowed[] = {"subscribe",    "psubscribe", "ssubscribe", "unsubscribe",
                                   "punsubscribe", "sunsubscribe", "ping",     "quit",
                                   "reset"};
  const std::string& name = spec.parent ? spec.parent->name : spec.name;
  for (const char* a : kAllowed) {
    if (name == a) return true;
  }
  return false;
}
}  // namespace

std::optional<cmd::BlockRequest> Server::Run(Client& c, std::span<const std::string_view> args,
                                             resp::ReplyWriter& w) {
  cmd::Session& session = c.session();
  std::string error;
  const cmd::CommandSpec* spec = cmd::ResolveCommand(commands_, args, &error);
  if (!spec) {
    const cmd::CommandSpec* known = commands_.Find(args[0]);
    if (known && known->name == "exec") {
      // A refused EXEC discards the transaction, as Redis' execCommandAbort does.
      EndTransaction(c);
      w.Error("-EXECABORT Transaction discarded because of: " + error);
    } else {
      w.Error(error);
      FlagTransactionError(c);
    }
    if (known) const_cast<cmd::CommandSpec*>(known)->stats.rejected_calls++;
    CountErrors(w);
    return std::nullopt;
  }
  auto* mspec = const_cast<cmd::CommandSpec*>(spec);
  // CLIENT LIST's cmd= (and ACL LOG's client-info) names the command from here on, refused,
  // held or queued; EXEC's commands leave it at "exec". As Redis' processCommand.
  if (!running_queued_) c.set_last_command(&spec->name);
  uint32_t flags = spec->parent ? spec->parent->flags | spec->flags : spec->flags;
  if (flags & cmd::kNoMandatoryKeys) flags = ScriptCommandFlags(args, flags);  // EVAL, FCALL
  if (!session.authenticated && !(flags & cmd::kNoAuth)) {
    cmd::ReplyError(w, cmd::OpStatus::kNoAuth);
    mspec->stats.rejected_calls++;
    FlagTransactionError(c);
    CountErrors(w);
    return std::nullopt;
  }
  // ACL: may the client's user run this, on these keys and channels? Checked when sent (and
  // so when queued) and again when EXEC runs it, as in Redis. The primary's link and the AOF
  // loader are obeyed whatever the users say, and a blocked command run again is not asked.
  if (!session.obey && !session.woken) {
    acl::CheckResult acl_check = acl::CheckCommand(*c.acl_user(), *spec, args);
    if (!acl_check.allowed()) {
      if (running_queued_) {
        w.Error(acl_->Deny(acl_check, *spec, args, AclContext::kExec, c));
        CountErrors(w);
      } else {
        RejectCommand(c, *mspec, w, acl_->Deny(acl_check, *spec, args, AclContext::kTopLevel, c));
      }
      return std::nullopt;
    }
  }

  // Cluster mode: the keys' slots decide which node runs it (Redis' getNodeByQuery), except
  // for this node's primary and the AOF, which are obeyed.
  if (cluster_ && !running_queued_ && !session.obey && !(c.flags() & Client::kMaster) &&
      !RouteInCluster(c, *mspec, args, flags, w)) {
    return std::nullopt;
  }

  // maxmemory (evict.h): evicts what the policy allows first; when memory is over the limit
  // still, refuses commands that may grow it, anything MULTI would queue, and an EXEC that
  // queued one. The primary's stream is never refused.
  bool out_of_memory = false;
  if (evictor_->maxmemory() > 0 && !running_queued_) {
    // Evicted before the command starts: the caller's own invalidations precede its reply.
    tracking_->set_before_command(true);
    out_of_memory = evictor_->Perform() == Evictor::Outcome::kFail;
    tracking_->set_before_command(false);
    EndReplicationUnit();  // the evictions' DELs go before the command, on their own
  }
  if (!running_queued_) oom_before_command_ = out_of_memory;
  if (out_of_memory && !(c.flags() & Client::kMaster)) {
    const std::string& name = spec->parent ? spec->parent->name : spec->name;
    bool deny = (flags & cmd::kDenyOom) != 0;
    if (c.tx().active && name != "exec" && name != "discard" && name != "quit" && name != "reset") {
      deny = true;
    }
    if (name == "exec" && c.tx().active) {
      for (const auto& q : c.tx().queued) {
        const cmd::CommandSpec* qs = commands_.Find(q[0]);
        if (qs != nullptr && (qs->flags & cmd::kDenyOom)) deny = true;
      }
    }
    if (deny) {
      constexpr std::string_view kOom = "OOM command not allowed when used memory > 'maxmemory'.";
      if (name == "exec") {
        EndTransaction(c);  // as Redis' execCommandAbort
        w.Error("-EXECABORT Transaction discarded because of: " + std::string(kOom));
      } else {
        w.Error("-" + std::string(kOom));
        FlagTransactionError(c);
      }
      mspec->stats.rejected_calls++;
      CountErrors(w);
      return std::nullopt;
    }
  }
  // tracking-table-max-keys, where Redis' processCommand applies it: after the memory checks, not
  // for EXEC's commands nor for a blocked command run again.
  if (!running_queued_ && !session.woken) tracking_->LimitUsedSlots();
  // RESP2 subscribers may only manage subscriptions (RESP3 mixes pushes with replies).
  if (!running_queued_ && session.resp == 2 && c.subscriptions() > 0 &&
      !AllowedWhileSubscribed(*spec)) {
    w.Error("Can't execute '" + spec->name +
            "': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in "
            "this context");
    mspec->stats.rejected_calls++;
    CountErrors(w);
    return std::nullopt;
  }
  // The state checks below judge EXEC by what it queued as well (the flags summed as they were
  // queued), and EXEC's commands are not judged again: they all run, even once one of them made
  // this server a replica, as in Redis' execCommand.
  uint32_t gate = flags;
  if (running_queued_) {
    gate = cmd::kStale | cmd::kLoading;
  } else if (spec->name == "exec" && c.tx().active) {
    gate = (flags | c.tx().flags_any) & ~c.tx().flags_lacking;
  }
  // replica-serve-stale-data no: while the link is down only "stale"-flagged commands run.
  if (!(gate & cmd::kStale) && replica_->is_replica() && !replica_->link_up() &&
      !config_->GetBool("replica-serve-stale-data")) {
    RejectCommand(c, *mspec, w,
                  "-MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to "
                  "'no'.");
    return std::nullopt;
  }
  // In Redis' order: MISCONF, NOREPLICAS, READONLY.
  // MISCONF: a failing background save or AOF write stops writes (and PING, as in Redis);
  // the primary's stream is never refused: a replica that cannot persist it panics, unless
  // replica-ignore-disk-write-errors says to go on (then it logs, at most every 10 s).
  if ((gate & cmd::kWrite) || (spec->name == "ping" && !running_queued_)) {
    std::string denied = WritesDeniedError();
    if (!denied.empty() && (c.flags() & Client::kMaster)) {
      if (spec->name != "ping" && !config_->GetBool("replica-ignore-disk-write-errors")) {
        KV_PANIC("Replica was unable to write command to disk.");
      }
      static int64_t last_log_ms = 0;
      if (MonoMs() > last_log_ms + 10000) {
        last_log_ms = MonoMs();
        LOG_WARNING("Replica is applying a command even though it is unable to write to disk.");
      }
    } else if (!denied.empty()) {
      RejectCommand(c, *mspec, w, denied);
      return std::nullopt;
    }
  }
  // min-replicas-to-write: too few good replicas stop writes.
  if ((gate & cmd::kWrite) && !(c.flags() & Client::kMaster) && !GoodReplicasForWrites()) {
    RejectCommand(c, *mspec, w, "-NOREPLICAS Not enough good replicas to write.");
    return std::nullopt;
  }
  // A read-only replica takes writes only from its primary.
  if ((gate & cmd::kWrite) && replica_->is_replica() && !(c.flags() & Client::kMaster) &&
      config_->GetBool("replica-read-only")) {
    RejectCommand(c, *mspec, w, "-READONLY You can't write against a read only replica.");
    return std::nullopt;
  }
  // A replica loading its primary's snapshot (repl/replica.h): -LOADING for all but the
  // loading-flagged commands while the dataset being replaced is empty, and for the
  // no-async-loading ones while clients keep the old dataset.
  if (((replica_->loading() || startup_loading_) && !(gate & cmd::kLoading)) ||
      (replica_->async_loading() && (gate & cmd::kNoAsyncLoading))) {
    RejectCommand(c, *mspec, w, kLoadingError);
    return std::nullopt;
  }
  // A replica's connection may not touch the keyspace (replicas are exempt from CLIENT PAUSE,
  // which this would let them get around), as in Redis 7.0.
  if (!running_queued_ && (c.flags() & Client::kReplica) &&
      ((gate & (cmd::kWrite | cmd::kReadOnly)) || MayReplicate(c, *spec, args, flags))) {
    RejectCommand(c, *mspec, w, "-ERR Replica can't interact with the keyspace");
    return std::nullopt;
  }
  // CLIENT PAUSE holds the command (pause.cc) after the checks that answer at once, as Redis'
  // processCommand does; the commands of an EXEC that passed, and blocked commands run again
  // because a key changed, are not held.
  if (!running_queued_ && !session.woken && HoldForPause(c, *spec, args, flags)) {
    return std::nullopt;
  }
  if (QueueInTransaction(c, spec, args, w)) {
    if (w.errors()) CountErrors(w);
    return std::nullopt;
  }

  // One wall-clock reading serves as the command's time and as the start of its duration
  // (Redis does the same with ustime()); a clock step backwards counts as zero.
  int64_t start_us = WallUs();
  cmd::Context ctx(args, w, *keyspace_, session, *this, stats_.exec, start_us / 1000);
  ctx.spec = spec;
  int db = session.db;  // a write propagates in the db it ran in (SELECT/MOVE change it)
  if (!running_queued_ && (flags & cmd::kTouchesArbitraryKeys)) unwrapped_unit_ = true;
  spec->handler(ctx);
  tracking_->AfterCommand(c, *spec, flags, args);  // keys read, a flush's invalidation
  // Writes from our own primary go to sub-replicas verbatim instead (OnMasterCommand), and to
  // the AOF from here, as any write.
  repl::Feed& feed = primary_->feed();
  // A replica's sub-replicas follow its primary's stream alone: a writable replica's own writes
  // reach its AOF but not its replication stream, whose offsets are its primary's (as Redis).
  bool to_replicas = !(c.flags() & Client::kMaster) && !replica_->is_replica();
  if (ctx.replicate_only && ctx.dirty == 0 && feed.active() && to_replicas) {
    feed.Add(db, args, /*to_replicas=*/true, /*to_aof=*/false);
  } else if (ctx.dirty > 0 && !(flags & cmd::kNoPropagate) &&
             (((feed.active() || feed.tapped()) && to_replicas) || feed.aof_on())) {
    if (!ctx.propagate.empty()) {
      for (const auto& argv : ctx.propagate) {
        feed.Add(db, std::span<const std::string>(argv), to_replicas);
      }
    } else if (ctx.prevent_propagation) {
      // nothing: what changed reaches replicas through what the command propagated, if any
    } else if (ctx.rewrite) {
      feed.Add(db, std::span<const std::string>(*ctx.rewrite), to_replicas);
    } else {
      feed.Add(db, args, to_replicas);
    }
  }
  int64_t dur_us = std::max<int64_t>(0, WallUs() - start_us);

  // A command that blocks counts once, when it ends (CountUnblocked, or its run once woken).
  if (ctx.block) {
    blocked_run_us_ = dur_us;
  } else {
    mspec->stats.calls++;
    mspec->stats.usec += static_cast<uint64_t>(dur_us);
    RecordCommandLatency(*spec, dur_us);
  }
  // EXEC fails only for its own errors: its commands' errors were counted as theirs. A script
  // that fails with a command's error fails, but the error was counted as the command's.
  bool counted_failure = w.TakeCountedFailure();
  if (w.uncounted_errors() > 0) {
    mspec->stats.failed_calls++;
    CountErrors(w);
  } else if (counted_failure) {
    mspec->stats.failed_calls++;
  }
  stats_.dirty += ctx.dirty;
  if (dirty_reset_) {
    stats_.dirty = 0;
    dirty_reset_ = false;
  }

  std::span<const std::string_view> shown = args;
  std::vector<std::string_view> redacted;
  if (!ctx.redacted.empty()) {
    redacted.assign(args.begin(), args.end());
    for (size_t i : ctx.redacted) redacted[i] = "(redacted)";
    shown = redacted;
  }
  if (!(flags & (cmd::kSkipMonitor | cmd::kAdmin)) && !monitors_.empty()) {
    FeedMonitors(c, shown, start_us);
  }
  if (!(flags & cmd::kSkipSlowlog)) MaybeSlowlog(c, shown, dur_us);
  if (latency_threshold_ms_ > 0 && dur_us / 1000 >= latency_threshold_ms_) {
    RecordLatency((flags & cmd::kFast) ? "fast-command" : "command", dur_us / 1000);
  }
  return std::move(ctx.block);
}

// Redis' rejectCommand: EXEC refused discards the transaction and names the reason.
void Server::RejectCommand(Client& c, cmd::CommandSpec& spec, resp::ReplyWriter& w,
                           std::string_view error) {
  if (spec.name == "exec" && c.tx().active) {
    EndTransaction(c);
    if (!error.empty() && error[0] == '-') error.remove_prefix(1);
    w.Error("-EXECABORT Transaction discarded because of: " + std::string(error));
  } else {
    w.Error(error);
    FlagTransactionError(c);
  }
  spec.stats.rejected_calls++;
  CountErrors(w);
}

std::string Server::WritesDeniedError() const {
  std::string aof_error;
  if (persistence_->WritesDenied() || aof_->WritesDenied(&aof_error)) {
    return aof_error.empty() ? std::string(kMisconfError) : aof_error;
  }
  return "";
}

bool Server::GoodReplicasForWrites() const {
  return min_replicas_to_write_ <= 0 || primary_->EnoughGoodReplicas(WallMs());
}

std::string_view Server::FirstKey(std::span<const std::string_view> args) const {
  if (args.empty()) return {};
  const cmd::CommandSpec* spec = commands_.Find(args[0]);
  if (!spec) return {};
  if (spec->getkeys) {
    // A finder expects checked arity; a short request fails before touching any key anyway.
    if (args.size() < static_cast<size_t>(std::abs(spec->arity))) return {};
    std::vector<int> keys = spec->getkeys(args);
    return keys.empty() ? std::string_view() : args[keys.front()];
  }
  if (spec->first_key <= 0 || args.size() <= static_cast<size_t>(spec->first_key)) return {};
  return args[spec->first_key];
}

void Server::PrefetchKeys(int db, std::span<const std::string_view> keys) {
  keyspace_->db(db).table().Prefetch(keys);
}

void Server::UnexpectedErrorReply(std::string_view from, std::string_view to,
                                  std::string_view error, std::string_view command) {
  // As Redis logs it: a plain error without its "ERR " code, one with a code as written.
  if (error.rfind("-ERR ", 0) == 0) error.remove_prefix(5);
  error = error.substr(0, 4096);
  LOG_WARNING(
      "== CRITICAL == This %.*s is sending an error to its %.*s: '%.*s' after processing "
      "the command '%.*s'",
      static_cast<int>(from.size()), from.data(), static_cast<int>(to.size()), to.data(),
      static_cast<int>(error.size()), error.data(), static_cast<int>(command.size()),
      command.data());
  stats_.unexpected_error_replies++;
  const std::string& behavior = config_->GetString("propagation-error-behavior");
  bool panic = false;
  if (to == "master") {
    panic = behavior != "ignore" && config_->GetBool("replica-read-only");
  } else if (to == "AOF-loading-client") {
    panic = behavior == "panic";
  }
  if (panic) {
    KV_PANIC("This " + std::string(from) + " panicked sending an error to its " + std::string(to) +
             " after processing the command '" + std::string(command) + "'");
  }
}

void Server::FlushedAll() { dirty_reset_ = persistence_->ResetAfterFlushAll(); }

void Server::CountErrors(resp::ReplyWriter& w) {
  uint64_t n = w.uncounted_errors();
  w.MarkErrorsCounted();
  CountErrorCode(w.last_error_code(), n);
}

void Server::CountErrorText(std::string_view err) {
  // As Redis' afterErrorReply: "-CODE msg" counts as CODE (a space within 32 bytes), any other
  // text as ERR.
  std::string_view code = "ERR";
  if (!err.empty() && err[0] == '-') {
    size_t sp = err.substr(0, 32).find(' ');
    if (sp != std::string_view::npos) code = err.substr(1, sp - 1);
  }
  CountErrorCode(code, 1);
}

void Server::CountErrorCode(std::string_view error_code, uint64_t n) {
  stats_.total_error_replies += n;
  // Redis caps the number of distinct codes it tracks, so junk codes cannot grow the table.
  std::string code(error_code);
  auto it = stats_.error_codes.find(code);
  if (it != stats_.error_codes.end()) {
    it->second += n;
  } else if (n > 0 && stats_.error_codes.size() < 128) {
    stats_.error_codes.emplace(std::move(code), n);
  }
}

void Server::FeedMonitors(const Client& c, std::span<const std::string_view> args,
                          int64_t now_us) {
  // Redis names a Unix socket client "unix:PATH"; its peer() is "PATH:0".
  std::string who = c.unix_socket() ? "unix:" + c.peer().substr(0, c.peer().rfind(':')) : c.peer();
  FeedMonitors(c.session_db(), who, args, now_us);
}

void Server::FeedScriptToMonitors(std::span<const std::string_view> args) {
  if (!monitors_.empty()) FeedMonitors(*current_client_, args, WallUs());
}

void Server::FeedMonitors(int db, std::string_view who, std::span<const std::string_view> args,
                          int64_t now_us) {
  char head[256];
  snprintf(head, sizeof(head), "+%lld.%06lld [%d %.*s]", static_cast<long long>(now_us / 1000000),
           static_cast<long long>(now_us % 1000000), db, static_cast<int>(who.size()), who.data());
  std::string line = head;
  for (auto a : args) {
    line += ' ';
    line += QuoteString(a);
  }
  line += "\r\n";
  for (Client* m : monitors_) m->Push(line);
}

void Server::MaybeSlowlog(const Client& c, std::span<const std::string_view> args,
                          int64_t dur_us) {
  if (slowlog_slower_than_us_ < 0 || dur_us < slowlog_slower_than_us_) return;
  SlowlogEntry e;
  e.id = slowlog_next_id_++;
  e.time_s = WallMs() / 1000;
  e.duration_us = dur_us;
  // Redis keeps at most 32 arguments of at most 128 bytes each.
  size_t n = std::min<size_t>(args.size(), 32);
  for (size_t i = 0; i < n; i++) {
    if (n == 32 && i == 31 && args.size() > 32) {
      e.args.push_back("... (" + std::to_string(args.size() - 31) + " more arguments)");
      break;
    }
    std::string_view a = args[i];
    if (a.size() > 128) {
      e.args.push_back(std::string(a.substr(0, 128)) + "... (" + std::to_string(a.size() - 128) +
                       " more bytes)");
    } else {
      e.args.emplace_back(a);
    }
  }
  e.peer = c.peer();
  e.name = const_cast<Client&>(c).session().name;
  slowlog_.push_front(std::move(e));
  while (slowlog_.size() > static_cast<size_t>(slowlog_max_len_)) slowlog_.pop_back();
}

}  // namespace kv::server
