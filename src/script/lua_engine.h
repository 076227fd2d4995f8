// The Lua 5.1 scripting engine behind EVAL and SCRIPT, and (a second instance, kFunctions)
// behind FUNCTION and FCALL: one interpreter each, sandboxed as Redis 7.0 sandboxes its own (the
// libraries string, math, table, cjson, bit and coroutine; no os, io, loadfile or dofile; a
// read-only global table and read-only libraries), the `redis` API (call, pcall, error_reply,
// status_reply, sha1hex, log, setresp, set_repl, replicate_commands, breakpoint, debug), Redis'
// math.random, and the conversions between Lua values and RESP2/RESP3 replies both ways. The cache
// maps SHA1 ids to compiled script bodies. A functions engine runs a library's code once with the
// loading API (redis.register_function, redis.log and the version; nothing else is visible then)
// and calls the functions it registered with their keys and arguments as parameters (no KEYS or
// ARGV).
//
// The engine knows nothing of commands: redis.call reaches the server through ScriptHost. One
// thread at a time uses an engine (the server's keyspace lock).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "resp/writer.h"

struct lua_State;

namespace kv::script {

// Shebang flags (`#!lua flags=no-writes,allow-oom`); a script without a shebang runs in EVAL's
// compatibility mode, where none of them apply.
enum ScriptFlag : uint32_t {
  kFlagCompat = 1u << 0,  // no shebang
  kFlagNoWrites = 1u << 1,
  kFlagAllowOom = 1u << 2,
  kFlagAllowStale = 1u << 3,
  kFlagNoCluster = 1u << 4,
  kFlagAllowCrossSlot = 1u << 5,
};

// Parses the shebang at the start of `body` (Redis' evalExtractShebangFlags). Sets *flags and
// *shebang_len (0 without one); false with *err (Redis' message) when it is malformed.
bool ParseShebang(std::string_view body, uint32_t* flags, size_t* shebang_len, std::string* err);

// The state of one script run that the script itself changes.
struct RunState {
  int resp = 2;  // redis.setresp: the protocol redis.call's replies come in
  int repl = 3;  // redis.set_repl: kReplAof | kReplReplica
  static constexpr int kReplAof = 1, kReplReplica = 2;
};

// What a script's redis.call and redis.pcall reach.
class ScriptHost {
 public:
  virtual ~ScriptHost() = default;
  // Runs `argv` as the script's client. The reply (in `run.resp`) goes to *reply; a command
  // refused before it ran (unknown, wrong arity, not allowed from scripts, a write from a
  // read-only script...) leaves *reply empty and sets *error instead, Redis' text ("-CODE msg",
  // or a message that gets "ERR ").
  virtual void Call(std::vector<std::string>& argv, const RunState& run, std::string* reply,
                    std::string* error) = 0;
  // redis.acl_check_cmd: whether the script's user may run argv (a command and its
  // arguments); nullopt when argv names no command (or subcommand) the server knows.
  virtual std::optional<bool> AclCheckCmd(const std::vector<std::string>& argv) = 0;
  // busy-reply-threshold in milliseconds (0: scripts are never interrupted).
  virtual int64_t BusyThresholdMs() = 0;
  // Called every 100,000 Lua instructions when the threshold is set: serves the clients that
  // wait (past the threshold), and says whether SCRIPT KILL asked the script to end.
  virtual bool Interrupt() = 0;
  // redis.log: level 0 debug, 1 verbose, 2 notice, 3 warning; false when below the verbosity.
  virtual bool LogEnabled(int level) = 0;
  virtual void Log(int level, const std::string& msg) = 0;
};

// A function a library registered (redis.register_function).
struct FunctionDef {
  std::string name;
  std::string desc;
  bool has_desc = false;
  uint32_t flags = 0;  // never kFlagCompat
  int ref = 0;         // the callback, in the interpreter's registry
};

// The names of the shebang flags, in Redis' order (FUNCTION LIST shows them so).
struct FlagName {
  const char* name;
  ScriptFlag flag;
};
extern const FlagName kFlagNames[5];

struct Script {
  std::string sha;  // 40 lowercase hex digits
  std::string body;
  uint32_t flags = kFlagCompat;
  int ref = 0;  // the compiled function, in the interpreter's registry
};

enum class EngineKind { kEval, kFunctions };

// The largest single allocation a script may make (one string, one table's part; default
// 512 MiB). The server keeps it at proto-max-bulk-len, the largest value a client may send. A
// script that asks for more gets Lua's "not enough memory" error, instead of a C function such
// as string.rep(s, 2^40) growing the server, beyond SCRIPT KILL's reach, until it runs out of
// memory. Applies to every engine in the process.
void SetMaxAllocation(size_t bytes);

class LuaEngine {
 public:
  // `version`: what redis.REDIS_VERSION says (the Redis version kvstore is compatible with).
  explicit LuaEngine(std::string version, EngineKind kind = EngineKind::kEval);
  ~LuaEngine();
  LuaEngine(const LuaEngine&) = delete;
  LuaEngine& operator=(const LuaEngine&) = delete;

  // Compiles `body` into the cache (a body already there is found, not compiled again). Sets
  // *sha (40 lowercase hex); false with *err, the whole error reply text ("-ERR ..." or
  // "Error compiling script ..."), when the shebang or the code is bad.
  bool Load(std::string_view body, std::string* sha, std::string* err);
  // The cached script of a SHA1 (any letter case), or null.
  const Script* Find(std::string_view sha) const;
  // Runs a cached script (Find's) with its KEYS and ARGV; its reply (or error) goes to `w`.
  void Run(const Script& script, std::span<const std::string_view> keys,
           std::span<const std::string_view> args, ScriptHost& host, resp::ReplyWriter& w);
  // SCRIPT FLUSH: a fresh interpreter and an empty cache.
  void Reset();

  // Functions engine: runs a library's code (what follows its shebang line, from the newline
  // on, so line numbers stay the user's) with the loading API, and appends the functions it
  // registers to *defs. False with *err (Redis' message, without "ERR ") when the code does not
  // compile, fails, or runs past `timeout_ms` (0: no limit); what it registered is released.
  bool LoadLibrary(std::string_view code, int64_t timeout_ms, std::vector<FunctionDef>* defs,
                   std::string* err);
  // Calls a registered function with its keys and arguments; its reply (or error) goes to `w`.
  void RunFunction(const FunctionDef& f, std::span<const std::string_view> keys,
                   std::span<const std::string_view> args, ScriptHost& host, resp::ReplyWriter& w);
  // Frees a registered function's callback.
  void Release(const FunctionDef& f);

  size_t scripts() const { return cache_.size(); }
  // The memory the interpreter uses (used_memory_lua) and the cache's (used_memory_scripts).
  size_t lua_memory() const;
  size_t cache_memory() const { return cache_bytes_; }

  // For the engine's C functions (lua_engine.cc, lua_api.cc). Valid during Run only.
  ScriptHost* host() { return host_; }
  RunState& run() { return run_; }
  bool running() const { return host_ != nullptr; }
  // Buffers for the C functions behind redis.call and friends: a Lua error longjmps past a C
  // frame without running destructors, so what they build lives here, reused call to call.
  struct Scratch {
    std::vector<std::string> argv;
    std::string reply, error;
  };
  Scratch& scratch() { return scratch_; }
  // The functions registered so far by the library being loaded (LoadLibrary), or null.
  std::vector<FunctionDef>* loading() { return loading_; }
  int64_t load_deadline_ms() const { return load_deadline_ms_; }
  // Redis' redisLrand48 / redisSrand48: math.random's generator, the same sequence everywhere,
  // and one for the whole process as in Redis (EVAL and FCALL draw from the same sequence).
  static int32_t Lrand48();
  static void Srand48(int32_t seed);

 private:
  void Open();
  void Close();
  // Runs the script or function whose registry reference is `fn_ref` (with KEYS and ARGV set
  // when `eval`, else with them as its two parameters) and writes its reply or error; `name`
  // names it in errors. Everything it does with the interpreter runs in protected mode.
  void Call(int fn_ref, bool eval, std::span<const std::string_view> keys,
            std::span<const std::string_view> args, const std::string& name, ScriptHost& host,
            resp::ReplyWriter& w);

  std::string version_;
  EngineKind kind_;
  lua_State* lua_ = nullptr;
  std::map<std::string, Script, std::less<>> cache_;  // by lowercase sha
  // Registry references: the error handler, the real global table, the thread's (protected)
  // global table, and the strings "KEYS" and "ARGV".
  int handler_ref_ = 0, real_globals_ref_ = 0, thread_globals_ref_ = 0;
  int keys_ref_ = 0, argv_ref_ = 0;
  size_t cache_bytes_ = 0;
  ScriptHost* host_ = nullptr;
  RunState run_;
  uint64_t runs_ = 0;
  Scratch scratch_;
  std::vector<FunctionDef>* loading_ = nullptr;
  int64_t load_deadline_ms_ = 0;  // 0: none
  static uint32_t rand_x_[3];
};

}  // namespace kv::script
