#include "server/scripting/script_run.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "cluster/cluster.h"
#include "cmd/context.h"
#include "common/clock.h"
#include "common/logging.h"
#include "common/strutil.h"
#include "net/socket.h"
#include "repl/primary/primary.h"
#include "repl/replica/replica.h"
#include "resp/parser.h"
#include "script/function_libraries.h"
#include "server/acl_users.h"
#include "server/client.h"
#include "server/config/config.h"
#include "server/evict.h"
#include "server/persistence/aof.h"
#include "server/persistence/persistence.h"
#include "server/server.h"
#include "server/tracking.h"

namespace kv::server {

ScriptRun::ScriptRun(Server& s, Client& caller, const cmd::Context& c, uint32_t flags,
                     bool read_only, bool oom, bool eval, std::string name)
    : s_(s),
      caller_(caller),
      stats_(c.stats),
      caller_args_(c.args),
      now_ms_(c.now_ms),
      oom_at_start_(oom),
      eval_(eval),
      name_(std::move(name)) {
  session_.db = c.session.db;
  session_.authenticated = true;
  session_.user = c.session.user;
  session_.deny_blocking = true;
  session_.script = true;
  session_.obey = c.session.obey;
  bool compat = flags & script::kFlagCompat;
  read_only_ = read_only || (!compat && (flags & script::kFlagNoWrites));
  allow_oom_ = !compat && (flags & script::kFlagAllowOom);
  allow_cross_slot_ = compat || (flags & script::kFlagAllowCrossSlot);
  threshold_ms_ = s.busy_reply_threshold_ms_;
  start_ms_ = MonoMs();
  s_.script_obey_.store(session_.obey, std::memory_order_relaxed);
}

ScriptRun::~ScriptRun() {
  if (busy_)
    LOG_NOTICE("Slow script finished after %lld milliseconds",
               static_cast<long long>(MonoMs() - start_ms_));
  // Connections accepted while busy become clients, with what they sent and was not answered.
  for (BusyConn& bc : conns_) {
    s_.OnAccept(std::move(bc.fd), bc.unix_socket, std::move(bc.in));
  }
  if (busy_) s_.ServeBusyHandoffs();
  {
    // Under busy_mu_: a client waiting on a handoff learns the script is over, and runs its
    // command itself.
    std::lock_guard lock(s_.busy_mu_);
    s_.script_busy_.store(false, std::memory_order_release);
    if (busy_) s_.busy_script_ = BusyScript{};
  }
  s_.busy_cv_.notify_all();
  s_.script_kill_.store(false, std::memory_order_relaxed);
  s_.script_dirty_.store(false, std::memory_order_relaxed);
}

bool ScriptRun::Interrupt() {
  if (!busy_) {
    int64_t elapsed = MonoMs() - start_ms_;
    if (elapsed < threshold_ms_) return false;
    LOG_WARNING(
        "Slow script detected: still in execution after %lld milliseconds. You can try "
        "killing the script using the %s command. Script name is: %s.",
        static_cast<long long>(elapsed), eval_ ? "SCRIPT KILL" : "FUNCTION KILL", name_.c_str());
    busy_ = true;
    {
      std::lock_guard lock(s_.busy_mu_);
      s_.script_thread_ = std::this_thread::get_id();
      BusyScript& b = s_.busy_script_;
      b.eval = eval_;
      b.name = name_;
      b.argv.assign(caller_args_.begin(), caller_args_.end());
      b.start_ms = start_ms_;
      if (s_.functions_) {
        b.libraries = s_.functions_->libraries().size();
        b.functions = s_.functions_->function_count();
      }
    }
    s_.script_busy_.store(true, std::memory_order_release);
  }
  // Clients of other poll groups see the busy state on their own threads, and hand what needs
  // the lock to this one; this group's wait on this thread, which serves them here.
  s_.ServeBusyHandoffs();
  std::vector<Client*> gone;
  // Not the script's caller, nor a client whose command runs the script further down (DEBUG
  // LOADAOF replaying an EVAL): their requests are still being run.
  caller_.group().ForEach([&](Client& other) {
    if (&other != &caller_ && !other.in_execute() && other.ServeWhileBusy()) {
      gone.push_back(&other);
    }
  });
  for (Client* c : gone) c->Close("client closed connection");
  AcceptAndServe();
  return s_.script_kill_.load(std::memory_order_acquire);
}

void ScriptRun::Call(std::vector<std::string>& argv, const script::RunState& run,
                     std::string* reply, std::string* error) {
  // A command refused here (unknown, arity, the script's rules, OOM...) counts as an error
  // reply where it is refused, as in Redis, whether the script catches it (redis.pcall) or not.
  struct CountRefusal {
    Server& s;
    const std::string* error;
    ~CountRefusal() {
      if (!error->empty()) s.CountErrorText(*error);
    }
  } count_refusal{s_, error};
  std::vector<std::string_view> args(argv.begin(), argv.end());
  const cmd::CommandSpec* spec = Lookup(args);
  if (!spec) {
    *error = "Unknown Redis command called from script";
    return;
  }
  if (!cmd::ArityOk(spec->arity, args.size())) {
    *error = "Wrong number of args calling Redis command from script";
    const_cast<cmd::CommandSpec*>(spec)->stats.rejected_calls++;
    return;
  }
  uint32_t flags = spec->parent ? spec->parent->flags | spec->flags : spec->flags;
  auto* mspec = const_cast<cmd::CommandSpec*>(spec);
  // The script runs as its caller's user (a script the primary or the AOF sends is obeyed).
  if (!session_.obey) {
    acl::CheckResult acl_check = acl::CheckCommand(*caller_.acl_user(), *spec, args);
    if (!acl_check.allowed()) {
      *error = s_.acl().Deny(acl_check, *spec, args, AclContext::kScript, caller_);
      mspec->stats.rejected_calls++;
      return;
    }
  }
  if (!Allowed(flags, s_.MayReplicate(caller_, *spec, args, flags), error)) {
    mspec->stats.rejected_calls++;
    return;
  }
  // Cluster mode: keys served here, and of one slot unless the script allows cross-slot keys.
  if (s_.cluster() && !session_.obey) {
    *error = s_.RouteScriptCall(caller_, *spec, args, flags, caller_args_, allow_cross_slot_,
                                &cluster_slot_);
    if (!error->empty()) {
      mspec->stats.rejected_calls++;
      return;
    }
  }
  if (flags & cmd::kWrite) {
    write_dirty_ = true;
    s_.script_dirty_.store(true, std::memory_order_relaxed);  // SCRIPT KILL refuses then
  }

  resp::ReplyWriter w(reply, run.resp);
  cmd::Context ctx(args, w, s_.keyspace(), session_, s_, stats_, now_ms_);
  ctx.spec = spec;
  int db = session_.db;  // a write propagates in the db it ran in
  int64_t start_us = WallUs();
  s_.tracking().ScriptCommandStarts();
  spec->handler(ctx);
  s_.tracking().ScriptCommandEnds();
  if (flags & cmd::kReadOnly) s_.tracking().AfterScriptRead(caller_, caller_args_);
  Propagate(ctx, flags, db, args, run.repl);
  if (!(flags & (cmd::kSkipMonitor | cmd::kAdmin)) && !s_.monitors_.empty()) {
    s_.FeedMonitors(session_.db, "lua", args, start_us);
  }
  int64_t dur_us = std::max<int64_t>(0, WallUs() - start_us);
  mspec->stats.calls++;
  mspec->stats.usec += static_cast<uint64_t>(dur_us);
  s_.RecordCommandLatency(*spec, dur_us);
  if (w.errors()) {
    mspec->stats.failed_calls++;
    s_.CountErrors(w);
  }
  s_.stats_.dirty += ctx.dirty;
}

std::optional<bool> ScriptRun::AclCheckCmd(const std::vector<std::string>& argv) {
  std::vector<std::string_view> args(argv.begin(), argv.end());
  const cmd::CommandSpec* spec = Lookup(args);
  if (spec == nullptr) return std::nullopt;
  // As redis.call checks it: the caller's user, and a script the primary or the AOF sends is
  // obeyed. Redis looks the arguments' keys up whatever their count; here the key finders
  // that read arguments (movable keys) need the command's arity, and a count it refuses is
  // answered false.
  if (session_.obey) return true;
  if (spec->getkeys != nullptr && !cmd::ArityOk(spec->arity, args.size())) return false;
  return acl::CheckCommand(*caller_.acl_user(), *spec, args).allowed();
}

bool ScriptRun::LogEnabled(int level) { return level >= static_cast<int>(GetLogLevel()); }

void ScriptRun::Log(int level, const std::string& msg) {
  kv::Log(static_cast<LogLevel>(level), "%s", msg.c_str());
}

// New connections, as Redis' processEventsWhileBlocked accepts them: their commands get
// -BUSY (or SCRIPT KILL's reply) now, and they become clients once the script ends.
void ScriptRun::AcceptAndServe() {
  for (auto [fd, unix_socket] : s_.ListenFds()) {
    for (int i = 0; i < 64; i++) {
      auto r = net::AcceptTcp(fd);
      if (!r.ok()) break;
      conns_.push_back({std::move(*r), unix_socket, ""});
    }
  }
  resp::ParserLimits limits;
  for (BusyConn& bc : conns_) {
    char buf[16384];
    ssize_t n;
    while ((n = read(bc.fd.get(), buf, sizeof(buf))) > 0) bc.in.append(buf, static_cast<size_t>(n));
    std::string out;
    size_t off = 0;
    resp::RequestParser parser;
    while (off < bc.in.size()) {
      auto r = parser.Parse(bc.in.data() + off, bc.in.size() - off, limits);
      if (r != resp::RequestParser::kComplete) break;
      off += parser.request_size();
      if (!parser.args().empty() && s_.ReplyWhileBusy(parser.args(), &out)) {
        bc.quit = true;
        break;
      }
      parser.Reset();
    }
    bc.in.erase(0, off);
    if (!out.empty()) [[maybe_unused]]
      ssize_t w = write(bc.fd.get(), out.data(), out.size());
  }
  std::erase_if(conns_, [](const BusyConn& bc) { return bc.quit; });  // closes them
}

// Redis' lookupCommand: a container's subcommand, or the container itself when none is given.
const cmd::CommandSpec* ScriptRun::Lookup(std::span<const std::string_view> args) {
  const cmd::CommandSpec* spec = s_.commands().Find(args[0]);
  if (spec && !spec->subcommands.empty() && args.size() >= 2) spec = spec->FindSub(args[1]);
  return spec;
}

// scriptCall's checks, in its order, with its messages.
bool ScriptRun::Allowed(uint32_t flags, bool may_replicate, std::string* error) {
  if ((flags & cmd::kNoScript) && !s_.debug_state().disable_deny_scripts) {
    *error = "This Redis command is not allowed from script";
    return false;
  }
  repl::Replica& replica = s_.replica();
  if (replica.is_replica() && !replica.link_up() &&
      !s_.config().GetBool("replica-serve-stale-data") && !(flags & cmd::kStale)) {
    *error = "Can not execute the command on a stale replica";
    return false;
  }
  // PUBLISH and the like count as writes here, so that a read-only script never reaches the
  // replication stream (and so may run under CLIENT PAUSE WRITE).
  if (read_only_ && may_replicate) {
    *error = "Write commands are not allowed from read-only scripts.";
    return false;
  }
  if ((flags & cmd::kWrite) && !write_dirty_) {
    // Once the script wrote, it cannot be failed half way on the server's state.
    if (replica.is_replica() && s_.config().GetBool("replica-read-only") && !session_.obey) {
      *error = "-READONLY You can't write against a read only replica.";
      return false;
    }
    std::string denied = s_.WritesDeniedError();
    if (!denied.empty()) {
      *error = denied;
      return false;
    }
    if (!s_.GoodReplicasForWrites()) {
      *error = "-NOREPLICAS Not enough good replicas to write.";
      return false;
    }
  }
  if (!allow_oom_ && s_.evictor().maxmemory() > 0 && !session_.obey && !write_dirty_ &&
      oom_at_start_ && (flags & cmd::kDenyOom)) {
    *error = "-OOM command not allowed when used memory > 'maxmemory'.";
    return false;
  }
  return true;
}

// As the dispatcher propagates a command, narrowed by redis.set_repl.
void ScriptRun::Propagate(cmd::Context& ctx, uint32_t flags, int db,
                          std::span<const std::string_view> args, int repl) {
  repl::Feed& feed = s_.primary().feed();
  bool from_primary = caller_.flags() & Client::kMaster;
  bool to_replicas = (repl & script::RunState::kReplReplica) && !from_primary;
  bool to_aof = repl & script::RunState::kReplAof;
  if (ctx.replicate_only && ctx.dirty == 0) {
    if (to_replicas) feed.Add(db, args, /*to_replicas=*/true, /*to_aof=*/false);
    return;
  }
  if (ctx.dirty == 0 || (flags & cmd::kNoPropagate) || (!to_replicas && !to_aof)) return;
  if (!ctx.propagate.empty()) {
    for (const auto& argv : ctx.propagate) {
      feed.Add(db, std::span<const std::string>(argv), to_replicas, to_aof);
    }
  } else if (ctx.prevent_propagation) {
    // what changed went out through what the command propagated, if anything
  } else if (ctx.rewrite) {
    feed.Add(db, std::span<const std::string>(*ctx.rewrite), to_replicas, to_aof);
  } else {
    feed.Add(db, args, to_replicas, to_aof);
  }
}

// scriptPrepareForRun's checks of the script's flags against the server's state.
uint32_t Server::ScriptCommandFlags(std::span<const std::string_view> args, uint32_t flags) {
  if (args.size() < 2) return flags;
  uint32_t script_flags;
  char first = static_cast<char>(tolower(static_cast<unsigned char>(args[0][0])));
  if (first == 'f') {  // FCALL, FCALL_RO
    const script::FunctionDef* f = functions().Find(args[1]);
    if (!f) return flags;
    script_flags = f->flags;
  } else if (args[0].size() >= 7 && EqualsIgnoreCase(args[0].substr(0, 7), "evalsha")) {
    const script::Script* s = lua().Find(args[1]);
    if (!s) return flags;
    script_flags = s->flags;
  } else {
    size_t shebang_len;
    std::string err;
    if (!script::ParseShebang(args[1], &script_flags, &shebang_len, &err)) return flags;
  }
  if (script_flags & script::kFlagCompat) return flags;
  flags &= ~(cmd::kStale | cmd::kDenyOom | cmd::kWrite);
  if (!(script_flags & (script::kFlagAllowOom | script::kFlagNoWrites))) flags |= cmd::kDenyOom;
  if (!(script_flags & script::kFlagNoWrites)) flags |= cmd::kWrite;
  if (script_flags & script::kFlagAllowStale) flags |= cmd::kStale;
  return flags;
}

bool PrepareScript(cmd::Context& c, Server& s, uint32_t flags, bool ro) {
  repl::Replica& replica = s.replica();
  bool stale =
      replica.is_replica() && !replica.link_up() && !s.config().GetBool("replica-serve-stale-data");
  bool obey = c.session.obey;
  if (flags & script::kFlagCompat) {
    if (stale) {
      c.Error("-MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.");
      return false;
    }
    return true;
  }
  if ((flags & script::kFlagNoCluster) && s.cluster()) {
    c.Error("Can not run script on cluster, 'no-cluster' flag is set.");
    return false;
  }
  if (stale && !(flags & script::kFlagAllowStale)) {
    c.Error(
        "-MASTERDOWN Link with MASTER is down, replica-serve-stale-data is set to 'no' and "
        "'allow-stale' flag is not set on the script.");
    return false;
  }
  if (!(flags & script::kFlagNoWrites)) {
    if (replica.is_replica() && s.config().GetBool("replica-read-only") && !obey) {
      c.Error("-READONLY Can not run script with write flag on readonly replica");
      return false;
    }
    std::string denied = s.WritesDeniedError();
    if (!denied.empty() && !obey) {
      if (denied.rfind("-MISCONF Errors writing to the AOF", 0) == 0) {
        c.Error(
            "-MISCONF Redis is configured to persist data to AOF, but it's currently unable to "
            "persist to disk. Writable scripts are blocked. Use 'no-writes' flag for read only "
            "scripts. AOF error: " +
            denied.substr(denied.find(": ") + 2));
      } else {
        c.Error(
            "-MISCONF Redis is configured to save RDB snapshots, but it's currently unable to "
            "persist to disk. Writable scripts are blocked. Use 'no-writes' flag for read only "
            "scripts.");
      }
      return false;
    }
    if (ro) {
      c.Error("Can not execute a script with write flag using *_ro command.");
      return false;
    }
    if (!s.GoodReplicasForWrites()) {
      c.Error("-NOREPLICAS Not enough good replicas to write.");
      return false;
    }
  }
  if (s.oom_before_command() && s.evictor().maxmemory() > 0 &&
      !(flags & (script::kFlagAllowOom | script::kFlagNoWrites))) {
    c.Error(
        "-OOM allow-oom flag is not set on the script, can not run it when used memory > "
        "'maxmemory'");
    return false;
  }
  return true;
}

void WriteFunctionStats(resp::ReplyWriter& w, const BusyScript& s) {
  w.Map(2);
  w.Bulk("running_script");
  if (s.name.empty()) {
    w.Null();
  } else {
    w.Map(3);
    w.Bulk("name");
    w.Bulk(s.name);
    w.Bulk("command");
    w.Array(s.argv.size());
    for (const std::string& a : s.argv) w.Bulk(a);
    w.Bulk("duration_ms");
    w.Int(MonoMs() - s.start_ms);
  }
  w.Bulk("engines");
  w.Map(1);
  w.Bulk("LUA");
  w.Map(2);
  w.Bulk("libraries_count");
  w.Int(static_cast<int64_t>(s.libraries));
  w.Bulk("functions_count");
  w.Int(static_cast<int64_t>(s.functions));
}

bool Server::ReplyWhileBusy(std::span<const std::string_view> args, std::string* out, int resp) {
  resp::ReplyWriter w(out, resp);
  BusyScript busy;
  {
    std::lock_guard lock(busy_mu_);
    busy = busy_script_;
  }
  constexpr std::string_view kBusyEval =
      "-BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.";
  constexpr std::string_view kBusyFunction =
      "-BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE.";
  if (EqualsIgnoreCase(args[0], "quit")) {
    w.Ok();
    return true;
  }
  // The busy script is one DEBUG LOADAOF replays: Redis answers as it does while it loads.
  if (aof_->debug_loading()) {
    const cmd::CommandSpec* spec = commands_.Find(args[0]);
    if (spec == nullptr || !(spec->flags & cmd::kLoading)) {
      w.Error(kLoadingError);
      return false;
    }
  }
  bool script_kill = EqualsIgnoreCase(args[0], "script");
  if (args.size() == 2 && (script_kill || EqualsIgnoreCase(args[0], "function")) &&
      EqualsIgnoreCase(args[1], "kill")) {
    // scriptKill: each kind of script is killed by its own command.
    if (script_obey_.load(std::memory_order_relaxed)) {
      w.Error(
          "-UNKILLABLE The busy script was sent by a master instance in the context of "
          "replication and cannot be killed.");
    } else if (script_dirty_.load(std::memory_order_relaxed)) {
      w.Error(
          "-UNKILLABLE Sorry the script already executed write commands against the dataset. "
          "You can either wait the script termination or kill the server in a hard way using "
          "the SHUTDOWN NOSAVE command.");
    } else if (script_kill != busy.eval) {
      w.Error(busy.eval ? kBusyEval : kBusyFunction);
    } else {
      script_kill_.store(true, std::memory_order_release);
      w.Ok();
    }
    return false;
  }
  if (args.size() == 2 && EqualsIgnoreCase(args[0], "function") &&
      EqualsIgnoreCase(args[1], "stats")) {
    if (busy.eval) {
      w.Error(kBusyEval);
      return false;
    }
    WriteFunctionStats(w, busy);
    return false;
  }
  if (args.size() == 2 && EqualsIgnoreCase(args[0], "shutdown") &&
      EqualsIgnoreCase(args[1], "nosave")) {
    // As Redis: the server exits at once, the script unfinished. Its writes are not in the AOF
    // (a command's writes reach it when the command ends) and nothing is saved.
    LOG_WARNING("User requested shutdown while a script was busy: exiting without saving");
    if (!unix_socket_path_.empty()) unlink(unix_socket_path_.c_str());
    std::string pidfile = config_->GetString("pidfile");
    if (!pidfile.empty()) unlink(pidfile.c_str());
    LOG_WARNING("kvstore is now ready to exit, bye bye...");
    _exit(0);
  }
  w.Error(busy.eval ? kBusyEval : kBusyFunction);
  return false;
}

bool Server::NeedsScriptThread(Client& c, std::span<const std::string_view> args) {
  if (EqualsIgnoreCase(args[0], "quit")) return false;  // ReplyWhileBusy closes the connection
  if (c.tx().active) return true;
  const cmd::CommandSpec* spec = commands_.Find(args[0]);
  if (spec == nullptr || !(spec->flags & cmd::kAllowBusy)) return false;
  // These ReplyWhileBusy answers without the lock; REPLCONF is a replica's.
  const std::string& name = spec->name;
  return name != "quit" && name != "script" && name != "function" && name != "shutdown" &&
         name != "replconf";
}

bool Server::RunOnScriptThread(Client& c, std::span<const std::string_view> args) {
  return HandToScript([&] { RunForBusyClient(c, args); });
}

bool Server::HandToScript(const std::function<void()>& fn) {
  BusyHandoff h{&fn};
  {
    std::unique_lock lock(busy_mu_);
    if (!script_busy()) return false;
    if (script_thread_ != std::this_thread::get_id()) {
      busy_handoffs_.push_back(&h);
      busy_cv_.wait(lock, [&] { return h.done || (!h.taken && !script_busy()); });
      if (h.done) return true;
      std::erase(busy_handoffs_, &h);
      return false;
    }
  }
  fn();  // on the script's own thread (its poll group's clients, served from Interrupt)
  return true;
}

bool Server::LockUnlessBusy(std::unique_lock<std::timed_mutex>& lock) {
  // A script holds the lock until it ends, and becomes busy only after busy-reply-threshold:
  // the wait looks again now and then, so that a thread that began waiting before the script
  // became busy is not held until its end.
  constexpr auto kLookAgain = std::chrono::milliseconds(10);
  while (!script_busy()) {
    if (lock.try_lock_for(kLookAgain)) return true;
  }
  return false;
}

void Server::WhenLocked(net::EventLoop& loop, std::function<void()> fn) {
  std::unique_lock lock(mu_, std::defer_lock);
  if (LockUnlessBusy(lock)) {
    fn();
    return;
  }
  loop.AddTimer(10, [this, &loop, fn = std::move(fn)]() mutable {
    WhenLocked(loop, std::move(fn));
    return int64_t{-1};
  });
}

void Server::RunLocked(const std::function<void()>& fn) {
  for (;;) {
    std::unique_lock lock(mu_, std::defer_lock);
    if (LockUnlessBusy(lock)) {
      fn();
      return;
    }
    if (HandToScript(fn)) return;
    // The script ended meanwhile: the lock is free (or soon is).
  }
}

void Server::ServeBusyHandoffs() {
  std::vector<BusyHandoff*> todo;
  {
    std::lock_guard lock(busy_mu_);
    todo.swap(busy_handoffs_);
    for (BusyHandoff* h : todo) h->taken = true;
  }
  if (todo.empty()) return;
  for (BusyHandoff* h : todo) (*h->run)();
  {
    std::lock_guard lock(busy_mu_);
    for (BusyHandoff* h : todo) h->done = true;
  }
  busy_cv_.notify_all();
}

// Redis' processCommand while a script yields: the checks that come before the busy one, then
// -BUSY for a command that is not allow-busy (EXEC's aborts the transaction), else the command
// queued inside MULTI or run. Nothing else happens meanwhile (no blocked client is served).
void Server::RunForBusyClient(Client& c, std::span<const std::string_view> args) {
  Client* caller = current_client_;  // the script's
  current_client_ = &c;
  resp::ReplyWriter w(&c.out(), c.session().resp);
  std::string error;
  const cmd::CommandSpec* spec = cmd::ResolveCommand(commands_, args, &error);
  uint32_t flags = spec ? (spec->parent ? spec->parent->flags | spec->flags : spec->flags) : 0;
  bool eval;
  {
    std::lock_guard lock(busy_mu_);
    eval = busy_script_.eval;
  }
  if (spec != nullptr) c.set_last_command(&spec->name);  // as Server::Run
  if (spec == nullptr) {
    const cmd::CommandSpec* known = commands_.Find(args[0]);
    if (known != nullptr && known->name == "exec") {
      RejectCommand(c, *const_cast<cmd::CommandSpec*>(known), w, error);
    } else {
      w.Error(error);
      FlagTransactionError(c);
      CountErrors(w);
    }
  } else if (!c.session().authenticated && !(flags & cmd::kNoAuth)) {
    RejectCommand(c, *const_cast<cmd::CommandSpec*>(spec), w, "-NOAUTH Authentication required.");
  } else if (acl::CheckResult acl_check = c.session().obey
                                              ? acl::CheckResult{}
                                              : acl::CheckCommand(*c.acl_user(), *spec, args);
             !acl_check.allowed()) {
    RejectCommand(c, *const_cast<cmd::CommandSpec*>(spec), w,
                  acl_->Deny(acl_check, *spec, args, AclContext::kTopLevel, c));
  } else if (aof_->debug_loading() && !(flags & cmd::kLoading)) {
    // The busy script is one DEBUG LOADAOF replays: Redis answers as while it loads.
    RejectCommand(c, *const_cast<cmd::CommandSpec*>(spec), w, kLoadingError);
  } else if (!(flags & cmd::kAllowBusy)) {
    RejectCommand(c, *const_cast<cmd::CommandSpec*>(spec), w,
                  eval ? "-BUSY Redis is busy running a script. You can only call SCRIPT KILL or "
                         "SHUTDOWN NOSAVE."
                       : "-BUSY Redis is busy running a script. You can only call FUNCTION KILL "
                         "or SHUTDOWN NOSAVE.");
  } else if (!QueueInTransaction(c, spec, args, w)) {
    cmd::Context ctx(args, w, *keyspace_, c.session(), *this, stats_.exec, WallMs());
    ctx.spec = spec;
    spec->handler(ctx);
    auto* mspec = const_cast<cmd::CommandSpec*>(spec);
    mspec->stats.calls++;
    if (w.errors()) {
      mspec->stats.failed_calls++;
      CountErrors(w);
    }
  } else if (w.errors()) {
    CountErrors(w);
  }
  current_client_ = caller;
}

script::LuaEngine& Server::lua() {
  if (!lua_) lua_ = std::make_unique<script::LuaEngine>(kRedisCompatVersion);
  return *lua_;
}

}  // namespace kv::server
