// The server's side of one script run, shared by EVAL (scripting.cc) and FCALL (functions.cc).
// A script runs under the keyspace lock from its first instruction to its reply, so no other
// command runs meanwhile. Its redis.call goes through Redis 7.0's checks (scriptCall in
// script.c: arity, noscript, stale, read-only scripts, a replica's read-only mode, MISCONF,
// min-replicas, OOM) and runs the command as the script's own client (its own db and protocol,
// blocking denied, the script's start time as the clock). What the commands write is
// replicated as Redis 7.0 does it, as effects: the commands themselves (as each propagates, in
// the db it ran in), wrapped in MULTI/EXEC when more than one, never the EVAL or FCALL;
// redis.set_repl narrows that to the AOF, the replicas or neither.
//
// Past busy-reply-threshold the run serves the clients that wait (Interrupt): commands get
// -BUSY; SCRIPT KILL (an EVAL) or FUNCTION KILL (an FCALL), FUNCTION STATS and SHUTDOWN NOSAVE
// are answered (Server::ReplyWhileBusy).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cmd/context.h"
#include "net/socket.h"
#include "script/lua_engine.h"

namespace kv::server {

class Client;
class Server;

// What FUNCTION STATS and the BUSY replies say of a busy script (Server::busy_script).
struct BusyScript {
  bool eval = true;               // EVAL's kind (SCRIPT KILL), else a function (FUNCTION KILL)
  std::string name;               // the function's name, or the script's SHA1
  std::vector<std::string> argv;  // the command that runs it
  int64_t start_ms = 0;           // MonoMs
  size_t libraries = 0, functions = 0;  // FUNCTION STATS' counts
};

// FUNCTION STATS' reply: `s` names the running function (none when its name is empty).
void WriteFunctionStats(resp::ReplyWriter& w, const BusyScript& s);

class ScriptRun final : public script::ScriptHost {
 public:
  // `flags`: the script's (shebang or registration); `read_only`: an *_RO command; `oom`: memory
  // was over maxmemory when the command started; `eval`: EVAL's kind, else FCALL's.
  ScriptRun(Server& s, Client& caller, const cmd::Context& c, uint32_t flags, bool read_only,
            bool oom, bool eval, std::string name);
  ~ScriptRun() override;

  int64_t BusyThresholdMs() override { return threshold_ms_; }
  bool Interrupt() override;
  void Call(std::vector<std::string>& argv, const script::RunState& run, std::string* reply,
            std::string* error) override;
  std::optional<bool> AclCheckCmd(const std::vector<std::string>& argv) override;
  bool LogEnabled(int level) override;
  void Log(int level, const std::string& msg) override;

 private:
  // A connection accepted while the script is busy: answered here until the script ends.
  struct BusyConn {
    net::Fd fd;
    bool unix_socket;
    std::string in;  // what it sent that was not answered yet
    bool quit = false;
  };

  void AcceptAndServe();
  const cmd::CommandSpec* Lookup(std::span<const std::string_view> args);
  // `may_replicate`: a write, or a command whose effects reach the replication stream.
  bool Allowed(uint32_t flags, bool may_replicate, std::string* error);
  void Propagate(cmd::Context& ctx, uint32_t flags, int db, std::span<const std::string_view> args,
                 int repl);

  Server& s_;
  Client& caller_;
  cmd::Session session_;
  cmd::ExecStats& stats_;
  std::span<const std::string_view> caller_args_;
  int64_t now_ms_;
  bool oom_at_start_;
  bool read_only_ = false;
  bool allow_oom_ = false;
  bool allow_cross_slot_ = false;
  int cluster_slot_ = -2;  // the slot the script's keys are in: -2 not known yet, -1 none yet
  bool write_dirty_ = false;
  bool eval_;
  int64_t threshold_ms_ = 0;
  int64_t start_ms_ = 0;
  bool busy_ = false;
  std::string name_;
  std::vector<BusyConn> conns_;
};

// scriptPrepareForRun's checks of a script's flags against the server's state: false with the
// error replied.
bool PrepareScript(cmd::Context& c, Server& s, uint32_t flags, bool ro);

}  // namespace kv::server
