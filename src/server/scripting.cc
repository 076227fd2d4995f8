// EVAL, EVALSHA, EVAL_RO, EVALSHA_RO and SCRIPT LOAD / EXISTS / FLUSH / KILL / DEBUG / HELP, on
// the Lua engine (script/). A script runs under the keyspace lock from its first instruction
// to its reply, so no other command runs meanwhile. Its redis.call goes through Redis 7.0's
// checks (scriptCall in script.c: arity, noscript, stale, read-only scripts, a replica's
// read-only mode, MISCONF, min-replicas, OOM) and runs the command as the script's own client
// (its own db and protocol, blocking denied, the script's start time as the clock). What the
// commands write is replicated as Redis 7.0 does it, as effects: the commands themselves (as
// each propagates, in the db it ran in), wrapped in MULTI/EXEC when more than one, never the
// EVAL; redis.set_repl narrows that to the AOF, the replicas or neither.
#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

#include "cmd/context.h"
#include "cmd/key_finders.h"
#include "common/clock.h"
#include "common/logging.h"
#include "common/sha1.h"
#include "common/strutil.h"
#include "net/socket.h"
#include "resp/parser.h"
#include "script/lua_engine.h"
#include "server/aof.h"
#include "server/client.h"
#include "server/config.h"
#include "server/evict.h"
#include "server/persistence.h"
#include "server/repl_primary.h"
#include "server/repl_replica.h"
#include "server/server.h"

namespace kv::server {

// The server's side of one script run.
class ScriptRun final : public script::ScriptHost {
 public:
  ScriptRun(Server& s, Client& caller, const cmd::Context& c, uint32_t flags, bool read_only,
            bool oom)
      : s_(s), caller_(caller), stats_(c.stats), now_ms_(c.now_ms), oom_at_start_(oom) {
    session_.db = c.session.db;
    session_.authenticated = true;
    session_.user = c.session.user;
    session_.deny_blocking = true;
    session_.obey = c.session.obey;
    bool compat = flags & script::kFlagCompat;
    read_only_ = read_only || (!compat && (flags & script::kFlagNoWrites));
    allow_oom_ = !compat && (flags & script::kFlagAllowOom);
    threshold_ms_ = s.busy_reply_threshold_ms_;
    start_ms_ = MonoMs();
    s_.script_obey_.store(session_.obey, std::memory_order_relaxed);
  }

  ~ScriptRun() override {
    if (busy_)
      LOG_NOTICE("Slow script finished after %lld milliseconds",
                 static_cast<long long>(MonoMs() - start_ms_));
    // Connections accepted while busy become clients, with what they sent and was not answered.
    for (BusyConn& bc : conns_) {
      s_.OnAccept(std::move(bc.fd), bc.unix_socket, std::move(bc.in));
    }
    s_.script_busy_.store(false, std::memory_order_release);
    s_.script_kill_.store(false, std::memory_order_relaxed);
    s_.script_dirty_.store(false, std::memory_order_relaxed);
  }

  int64_t BusyThresholdMs() override { return threshold_ms_; }

  bool Interrupt() override {
    if (!busy_) {
      int64_t elapsed = MonoMs() - start_ms_;
      if (elapsed < threshold_ms_) return false;
      LOG_WARNING(
          "Slow script detected: still in execution after %lld milliseconds. You can try "
          "killing the script using the SCRIPT KILL command. Script name is: %s.",
          static_cast<long long>(elapsed), name_.c_str());
      busy_ = true;
      s_.script_busy_.store(true, std::memory_order_release);
    }
    // Clients of other poll groups see the busy state on their own threads; this group's wait
    // on this thread, which serves them here.
    caller_.group().ForEach([&](Client& other) {
      if (&other != &caller_) other.ServeWhileBusy();
    });
    AcceptAndServe();
    return s_.script_kill_.load(std::memory_order_acquire);
  }

  void set_name(std::string name) { name_ = std::move(name); }

  void Call(std::vector<std::string>& argv, const script::RunState& run, std::string* reply,
            std::string* error) override {
    std::vector<std::string_view> args(argv.begin(), argv.end());
    const cmd::CommandSpec* spec = Lookup(args);
    if (!spec) {
      *error = "Unknown Redis command called from script";
      return;
    }
    if (!cmd::ArityOk(spec->arity, args.size())) {
      *error = "Wrong number of args calling Redis command from script";
      return;
    }
    uint32_t flags = spec->parent ? spec->parent->flags | spec->flags : spec->flags;
    auto* mspec = const_cast<cmd::CommandSpec*>(spec);
    if (!Allowed(flags, error)) {
      mspec->stats.rejected_calls++;
      return;
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
    spec->handler(ctx);
    Propagate(ctx, flags, db, args, run.repl);
    mspec->stats.calls++;
    mspec->stats.usec += static_cast<uint64_t>(std::max<int64_t>(0, WallUs() - start_us));
    if (w.errors()) {
      mspec->stats.failed_calls++;
      s_.CountErrors(w);
    }
    s_.stats_.dirty += ctx.dirty;
  }

  bool KnownCommand(const std::vector<std::string>& argv) override {
    std::vector<std::string_view> args(argv.begin(), argv.end());
    return Lookup(args) != nullptr;
  }

  bool LogEnabled(int level) override { return level >= static_cast<int>(GetLogLevel()); }
  void Log(int level, const std::string& msg) override {
    kv::Log(static_cast<LogLevel>(level), "%s", msg.c_str());
  }

 private:
  // A connection accepted while the script is busy: answered here until the script ends.
  struct BusyConn {
    net::Fd fd;
    bool unix_socket;
    std::string in;  // what it sent that was not answered yet
  };

  // New connections, as Redis' processEventsWhileBlocked accepts them: their commands get
  // -BUSY (or SCRIPT KILL's reply) now, and they become clients once the script ends.
  void AcceptAndServe() {
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
      while ((n = read(bc.fd.get(), buf, sizeof(buf))) > 0)
        bc.in.append(buf, static_cast<size_t>(n));
      std::string out;
      size_t off = 0;
      resp::RequestParser parser;
      while (off < bc.in.size()) {
        auto r = parser.Parse(bc.in.data() + off, bc.in.size() - off, limits);
        if (r != resp::RequestParser::kComplete) break;
        if (!parser.args().empty()) s_.ReplyWhileBusy(parser.args(), &out);
        off += parser.request_size();
        parser.Reset();
      }
      bc.in.erase(0, off);
      if (!out.empty()) [[maybe_unused]]
        ssize_t w = write(bc.fd.get(), out.data(), out.size());
    }
  }

  // Redis' lookupCommand: a container's subcommand, or the container itself when none is given.
  const cmd::CommandSpec* Lookup(std::span<const std::string_view> args) {
    const cmd::CommandSpec* spec = s_.commands().Find(args[0]);
    if (spec && !spec->subcommands.empty() && args.size() >= 2) spec = spec->FindSub(args[1]);
    return spec;
  }

  // scriptCall's checks, in its order, with its messages.
  bool Allowed(uint32_t flags, std::string* error) {
    if (flags & cmd::kNoScript) {
      *error = "This Redis command is not allowed from script";
      return false;
    }
    ReplReplica& replica = s_.replica();
    if (replica.is_replica() && !replica.link_up() &&
        !s_.config().GetBool("replica-serve-stale-data") && !(flags & cmd::kStale)) {
      *error = "Can not execute the command on a stale replica";
      return false;
    }
    if (read_only_ && (flags & cmd::kWrite)) {
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
  void Propagate(cmd::Context& ctx, uint32_t flags, int db, std::span<const std::string_view> args,
                 int repl) {
    repl::Feed& feed = s_.primary().feed();
    bool from_primary = caller_.flags() & Client::kMaster;
    bool to_replicas = (repl & script::RunState::kReplReplica) && !from_primary;
    bool to_aof = repl & script::RunState::kReplAof;
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

  Server& s_;
  Client& caller_;
  cmd::Session session_;
  cmd::ExecStats& stats_;
  int64_t now_ms_;
  bool oom_at_start_;
  bool read_only_ = false;
  bool allow_oom_ = false;
  bool write_dirty_ = false;
  int64_t threshold_ms_ = 0;
  int64_t start_ms_ = 0;
  bool busy_ = false;
  std::string name_;
  std::vector<BusyConn> conns_;
};

namespace {

using cmd::Context;

constexpr std::string_view kNoScriptError = "-NOSCRIPT No matching script. Please use EVAL.";

// scriptPrepareForRun's checks of the script's flags against the server's state.
bool Prepare(Context& c, Server& s, uint32_t flags, bool ro) {
  ReplReplica& replica = s.replica();
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

void EvalGeneric(Context& c, bool evalsha, bool ro) {
  Server& s = ServerOf(c);
  auto numkeys = ParseInt64(c.arg(2));
  if (!numkeys) {
    c.Error(cmd::OpStatus::kNotInteger);
    return;
  }
  if (*numkeys > static_cast<int64_t>(c.argc()) - 3) {
    c.Error("Number of keys can't be greater than number of args");
    return;
  } else if (*numkeys < 0) {
    c.Error("Number of keys can't be negative");
    return;
  }
  script::LuaEngine& lua = s.lua();
  const script::Script* script;
  if (evalsha) {
    script = lua.Find(c.arg(1));
    if (!script) {
      c.Error(kNoScriptError);
      return;
    }
  } else {
    std::string sha, err;
    if (!lua.Load(c.arg(1), &sha, &err)) {
      c.Error(err);
      return;
    }
    script = lua.Find(sha);
  }
  if (!Prepare(c, s, script->flags, ro)) return;
  ScriptRun run(s, s.current_client(), c, script->flags, ro, s.oom_before_command());
  run.set_name(script->sha);
  size_t n = static_cast<size_t>(*numkeys);
  lua.Run(*script, c.args.subspan(3, n), c.args.subspan(3 + n), run, c.out);
}

void Eval(Context& c) { EvalGeneric(c, false, false); }
void EvalRo(Context& c) { EvalGeneric(c, false, true); }
void EvalSha(Context& c) { EvalGeneric(c, true, false); }
void EvalShaRo(Context& c) { EvalGeneric(c, true, true); }

void ScriptContainer(Context&) {}  // ResolveCommand dispatches to a subcommand

void ScriptCommand(Context& c) {
  Server& s = ServerOf(c);
  std::string_view sub = c.arg(1);
  script::LuaEngine& lua = s.lua();
  if (EqualsIgnoreCase(sub, "help")) {
    static const std::string_view kHelp[] = {
        "DEBUG (YES|SYNC|NO)",
        "    Set the debug mode for subsequent scripts executed.",
        "EXISTS <sha1> [<sha1> ...]",
        "    Return information about the existence of the scripts in the script cache.",
        "FLUSH [ASYNC|SYNC]",
        "    Flush the Lua scripts cache. Very dangerous on replicas.",
        "    When called without the optional mode argument, the behavior is determined by the",
        "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
        "    * ASYNC: Asynchronously flush the scripts cache.",
        "    * SYNC: Synchronously flush the scripts cache.",
        "KILL",
        "    Kill the currently executing Lua script.",
        "LOAD <script>",
        "    Load a script into the scripts cache without executing it.",
    };
    c.ReplyHelp(kHelp);
  } else if (EqualsIgnoreCase(sub, "flush")) {
    if (c.argc() > 3 || (c.argc() == 3 && !EqualsIgnoreCase(c.arg(2), "sync") &&
                         !EqualsIgnoreCase(c.arg(2), "async"))) {
      c.Error("SCRIPT FLUSH only support SYNC|ASYNC option");
      return;
    }
    lua.Reset();  // both modes free at once: the cache is small next to a keyspace
    c.out.Ok();
  } else if (EqualsIgnoreCase(sub, "exists")) {
    c.out.Array(c.argc() - 2);
    for (size_t j = 2; j < c.argc(); j++) c.out.Int(lua.Find(c.arg(j)) ? 1 : 0);
  } else if (EqualsIgnoreCase(sub, "load")) {
    std::string sha, err;
    if (!lua.Load(c.arg(2), &sha, &err)) {
      c.Error(err);
      return;
    }
    c.out.Bulk(sha);
  } else if (EqualsIgnoreCase(sub, "kill")) {
    // A script holds the keyspace lock until it ends: none runs while this does (a busy
    // script's SCRIPT KILL is answered by ReplyWhileBusy).
    c.Error("-NOTBUSY No scripts in execution right now.");
  } else if (EqualsIgnoreCase(sub, "debug")) {
    c.Error("SCRIPT DEBUG (the Lua debugger) is not supported by kvstore");
  }
}

}  // namespace

void Server::ReplyWhileBusy(std::span<const std::string_view> args, std::string* out) {
  resp::ReplyWriter w(out, 2);
  if (args.size() == 2 && EqualsIgnoreCase(args[0], "script") &&
      EqualsIgnoreCase(args[1], "kill")) {
    if (script_obey_.load(std::memory_order_relaxed)) {
      w.Error(
          "-UNKILLABLE The busy script was sent by a master instance in the context of "
          "replication and cannot be killed.");
    } else if (script_dirty_.load(std::memory_order_relaxed)) {
      w.Error(
          "-UNKILLABLE Sorry the script already executed write commands against the dataset. "
          "You can either wait the script termination or kill the server in a hard way using "
          "the SHUTDOWN NOSAVE command.");
    } else {
      script_kill_.store(true, std::memory_order_release);
      w.Ok();
    }
    return;
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
  w.Error(
      "-BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.");
}

script::LuaEngine& Server::lua() {
  if (!lua_) lua_ = std::make_unique<script::LuaEngine>(kRedisCompatVersion);
  return *lua_;
}

void RegisterScriptingCommands(cmd::CommandTable& t) {
  using namespace cmd;
  uint32_t eval_flags = kNoScript | kStale | kSkipMonitor | kNoMandatoryKeys;
  struct EvalRow {
    const char* name;
    Handler fn;
    uint32_t flags;
    const char* summary;
    const char* since;
  };
  static const EvalRow kEvals[] = {
      {"eval", Eval, 0, "Execute a Lua script server side", "2.6.0"},
      {"evalsha", EvalSha, 0, "Execute a Lua script server side", "2.6.0"},
      {"eval_ro", EvalRo, kReadOnly, "Execute a read-only Lua script server side", "7.0.0"},
      {"evalsha_ro", EvalShaRo, kReadOnly, "Execute a read-only Lua script server side", "7.0.0"},
  };
  for (const EvalRow& e : kEvals) {
    t.Add({.name = e.name,
           .arity = -3,
           .flags = eval_flags | e.flags,
           .handler = e.fn,
           .getkeys = NumkeysAt2Keys,
           .group = "scripting",
           .summary = e.summary,
           .since = e.since});
  }
  CommandSpec* script = t.Add({.name = "script",
                               .arity = -2,
                               .handler = ScriptContainer,
                               .group = "scripting",
                               .summary = "A container for Lua scripts management commands",
                               .since = "2.6.0"});
  struct Sub {
    const char* name;
    int arity;
    uint32_t flags;
    const char* summary;
    const char* since;
  };
  static const Sub kSubs[] = {
      {"debug", 3, kNoScript, "Set the debug mode for executed scripts.", "3.2.0"},
      {"exists", -3, kNoScript, "Check existence of scripts in the script cache.", "2.6.0"},
      {"flush", -2, kNoScript, "Remove all the scripts from the script cache.", "2.6.0"},
      {"help", 2, kLoading | kStale, "Show helpful text about the different subcommands", "5.0.0"},
      {"kill", 2, kNoScript | kAllowBusy, "Kill the script currently in execution.", "2.6.0"},
      {"load", 3, kNoScript | kStale, "Load the specified Lua script into the script cache.",
       "2.6.0"},
  };
  for (const Sub& sub : kSubs) {
    t.AddSub(script, {.name = sub.name,
                      .arity = sub.arity,
                      .flags = sub.flags,
                      .handler = ScriptCommand,
                      .group = "scripting",
                      .summary = sub.summary,
                      .since = sub.since});
  }
}

}  // namespace kv::server
