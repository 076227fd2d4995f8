// The `redis` table scripts call (Redis 7.0's script_lua.c and eval.c): call and pcall through
// ScriptHost, error_reply, status_reply, sha1hex, log and its levels, setresp, set_repl and its
// flags, replicate_commands (always true), breakpoint (false: no debugger) and debug (nothing),
// acl_check_cmd, REDIS_VERSION(_NUM); the global pcall that hands back an error table's message;
// math.random and math.randomseed on Redis' own generator.
#include <strings.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "common/logging.h"
#include "common/sha1.h"
#include "script/lua_internal.h"

namespace kv::script {
namespace {

LuaEngine* RunningEngine(lua_State* L, const char* what) {
  LuaEngine* e = EngineOf(L);
  if (!e || !e->running()) {
    PushError(L, std::string(what) + " can only be called inside a script invocation");
    lua_error(L);
  }
  return e;
}

// The arguments of redis.call as strings (numbers as "%.17g"); false with the error pushed.
// `argv` is the engine's scratch (LuaEngine::Scratch), reused from call to call.
bool ArgsToArgv(lua_State* L, std::vector<std::string>* argv) {
  argv->clear();
  int argc = lua_gettop(L);
  if (argc == 0) {
    PushError(L, "Please specify at least one argument for this redis lib call");
    return false;
  }
  argv->reserve(static_cast<size_t>(argc));
  for (int j = 1; j <= argc; j++) {
    if (lua_type(L, j) == LUA_TNUMBER) {
      char buf[64];
      int n = snprintf(buf, sizeof(buf), "%.17g", static_cast<double>(lua_tonumber(L, j)));
      argv->emplace_back(buf, static_cast<size_t>(n));
      continue;
    }
    size_t len;
    const char* s = lua_tolstring(L, j, &len);
    if (!s) {
      lua_pop(L, argc);
      PushError(L, "Lua redis lib command arguments must be strings or integers");
      return false;
    }
    argv->emplace_back(s, len);
  }
  lua_pop(L, argc);
  return true;
}

int GenericCommand(lua_State* L, bool raise) {
  LuaEngine* e = RunningEngine(L, "redis.call/pcall");
  // No C++ object may live in this frame: lua_error longjmps past it.
  LuaEngine::Scratch& s = e->scratch();
  if (!ArgsToArgv(L, &s.argv)) return raise ? lua_error(L) : 1;
  static bool in_use = false;  // a debug hook calling back in
  if (in_use) {
    PushError(L,
              "luaRedisGenericCommand() recursive call detected. Are you doing funny stuff "
              "with Lua debug hooks?");
    return 1;
  }
  in_use = true;
  s.reply.clear();
  s.error.clear();
  e->host()->Call(s.argv, e->run(), &s.reply, &s.error);
  in_use = false;
  if (!s.error.empty()) {
    PushError(L, s.error);
    lua_pushstring(L, "ignore_error_stats_update");
    lua_pushboolean(L, 1);
    lua_settable(L, -3);
    return raise ? lua_error(L) : 1;
  }
  PushReply(L, s.reply);
  if (raise && !s.reply.empty() && s.reply[0] == '-') return lua_error(L);
  return 1;
}

int Call(lua_State* L) { return GenericCommand(L, true); }
int PCall(lua_State* L) { return GenericCommand(L, false); }

// The global pcall: an error table comes back as its message, as in Redis 7.0.
int GlobalPcall(lua_State* L) {
  int argc = lua_gettop(L);
  lua_pushboolean(L, 1);
  lua_insert(L, 1);
  if (lua_pcall(L, argc - 1, LUA_MULTRET, 0)) {
    lua_remove(L, 1);
    if (lua_istable(L, -1)) {
      lua_getfield(L, -1, "err");
      if (lua_isstring(L, -1)) {
        lua_replace(L, -2);
      } else {
        lua_pop(L, 1);
      }
    }
    lua_pushboolean(L, 0);
    lua_insert(L, 1);
  }
  return lua_gettop(L);
}

int Sha1hex(lua_State* L) {
  if (lua_gettop(L) != 1) {
    PushError(L, "wrong number of arguments");
    return lua_error(L);
  }
  size_t len = 0;
  const char* s = lua_tolstring(L, 1, &len);
  std::string hex = Sha1::HexDigest(std::string_view(s ? s : "", s ? len : 0));
  lua_pushstring(L, hex.c_str());
  return 1;
}

int ErrorReply(lua_State* L) {
  if (lua_gettop(L) != 1 || lua_type(L, -1) != LUA_TSTRING) {
    PushError(L, "wrong number or type of arguments");
    return 1;
  }
  std::string err = lua_tostring(L, -1);
  PushError(L, err[0] == '-' ? err : "-" + err);
  return 1;
}

int StatusReply(lua_State* L) {
  if (lua_gettop(L) != 1 || lua_type(L, -1) != LUA_TSTRING) {
    PushError(L, "wrong number or type of arguments");
    return 1;
  }
  lua_newtable(L);
  lua_pushstring(L, "ok");
  lua_pushvalue(L, -3);
  lua_settable(L, -3);
  return 1;
}

int SetRepl(lua_State* L) {
  LuaEngine* e = RunningEngine(L, "redis.set_repl");
  if (lua_gettop(L) != 1) {
    PushError(L, "redis.set_repl() requires two arguments.");
    return lua_error(L);
  }
  int flags = static_cast<int>(lua_tonumber(L, -1));
  if ((flags & ~(RunState::kReplAof | RunState::kReplReplica)) != 0) {
    PushError(L, "Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE.");
    return lua_error(L);
  }
  e->run().repl = flags;
  return 0;
}

int SetResp(lua_State* L) {
  LuaEngine* e = RunningEngine(L, "redis.setresp");
  if (lua_gettop(L) != 1) {
    PushError(L, "redis.setresp() requires one argument.");
    return lua_error(L);
  }
  int resp = static_cast<int>(lua_tonumber(L, -1));
  if (resp != 2 && resp != 3) {
    PushError(L, "RESP version must be 2 or 3.");
    return lua_error(L);
  }
  e->run().resp = resp;
  return 0;
}

int Log(lua_State* L) {
  int argc = lua_gettop(L);
  if (argc < 2) {
    PushError(L, "redis.log() requires two arguments or more.");
    return lua_error(L);
  }
  if (!lua_isnumber(L, -argc)) {
    PushError(L, "First argument must be a number (log level).");
    return lua_error(L);
  }
  int level = static_cast<int>(lua_tonumber(L, -argc));
  if (level < 0 || level > 3) {
    PushError(L, "Invalid debug level.");
    return lua_error(L);
  }
  LuaEngine* e = EngineOf(L);
  ScriptHost* host = e ? e->host() : nullptr;
  // A library's code logs while it loads, with no script running.
  if (host ? !host->LogEnabled(level) : level < static_cast<int>(GetLogLevel())) return 0;
  std::string msg;
  for (int j = 1; j < argc; j++) {
    size_t len;
    const char* s = lua_tolstring(L, -argc + j, &len);
    if (s) {
      if (j != 1) msg.push_back(' ');
      msg.append(s, len);
    }
  }
  if (host) {
    host->Log(level, msg);
  } else {
    kv::Log(static_cast<LogLevel>(level), "%s", msg.c_str());
  }
  return 0;
}

// Redis' functionsVerifyName: letters, digits and underscores, at least one.
bool ValidName(std::string_view name) {
  if (name.empty()) return false;
  for (char c : name) {
    if (!isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

// The string at `idx` (a number counts, as lua_isstring says), or false.
bool StringAt(lua_State* L, int idx, std::string* out) {
  if (!lua_isstring(L, idx)) return false;
  size_t len;
  const char* s = lua_tolstring(L, idx, &len);
  out->assign(s, len);
  return true;
}

// The flags table on top of the stack; false on one Redis does not know (or not a string).
bool ReadFunctionFlags(lua_State* L, uint32_t* flags) {
  *flags = 0;
  for (int j = 1;; j++) {
    lua_pushnumber(L, j);
    lua_gettable(L, -2);
    if (lua_isnil(L, -1)) {
      lua_pop(L, 1);
      return true;
    }
    bool found = false;
    if (lua_isstring(L, -1)) {
      const char* name = lua_tostring(L, -1);
      for (const auto& [n, f] : kFlagNames) {
        if (strcasecmp(n, name) == 0) {
          *flags |= f;
          found = true;
          break;
        }
      }
    }
    lua_pop(L, 1);
    if (!found) return false;
  }
}

// redis.register_function{function_name=..., callback=..., flags={...}, description=...}.
// Leaves the callback on top of the stack; false with *err.
bool ReadNamedArgs(lua_State* L, FunctionDef* def, const char** err) {
  if (!lua_istable(L, 1)) {
    *err =
        "calling redis.register_function with a single argument is only applicable to Lua table "
        "(representing named arguments).";
    return false;
  }
  bool has_name = false, has_callback = false;
  lua_pushnil(L);
  while (lua_next(L, 1)) {
    if (!lua_isstring(L, -2)) {
      *err = "named argument key given to redis.register_function is not a string";
      return false;
    }
    const char* key = lua_tostring(L, -2);
    if (strcasecmp(key, "function_name") == 0) {
      if (!StringAt(L, -1, &def->name)) {
        *err = "function_name argument given to redis.register_function must be a string";
        return false;
      }
      has_name = true;
    } else if (strcasecmp(key, "description") == 0) {
      if (!StringAt(L, -1, &def->desc)) {
        *err = "description argument given to redis.register_function must be a string";
        return false;
      }
      def->has_desc = true;
    } else if (strcasecmp(key, "callback") == 0) {
      if (!lua_isfunction(L, -1)) {
        *err = "callback argument given to redis.register_function must be a function";
        return false;
      }
      lua_pushvalue(L, -1);
      lua_replace(L, 2);  // the callback's slot
      has_callback = true;
    } else if (strcasecmp(key, "flags") == 0) {
      if (!lua_istable(L, -1)) {
        *err =
            "flags argument to redis.register_function must be a table representing function "
            "flags";
        return false;
      }
      if (!ReadFunctionFlags(L, &def->flags)) {
        *err = "unknown flag given";
        return false;
      }
    } else {
      *err = "unknown argument given to redis.register_function";
      return false;
    }
    lua_pop(L, 1);
  }
  if (!has_name) {
    *err = "redis.register_function must get a function name argument";
    return false;
  }
  if (!has_callback) {
    *err = "redis.register_function must get a callback argument";
    return false;
  }
  lua_settop(L, 2);
  return true;
}

// redis.register_function(name, callback) or redis.register_function{...}, while a library
// loads (luaRegisterFunction in function_lua.c, with its messages).
// Reads redis.register_function's arguments and registers the function in *defs; the error
// when they are bad (nothing registered then). What it builds dies with its frame.
const char* Register(lua_State* L, std::vector<FunctionDef>* defs) {
  FunctionDef def;
  const char* err = nullptr;
  int argc = lua_gettop(L);
  if (argc < 1 || argc > 2) {
    err = "wrong number of arguments to redis.register_function";
  } else if (argc == 1) {
    lua_pushnil(L);  // the callback's slot
    ReadNamedArgs(L, &def, &err);
  } else if (!StringAt(L, 1, &def.name)) {
    err = "first argument to redis.register_function must be a string";
  } else if (!lua_isfunction(L, 2)) {
    err = "second argument to redis.register_function must be a function";
  }
  if (!err && !ValidName(def.name)) {
    err =
        "Library names can only contain letters, numbers, or underscores(_) and must be at "
        "least one character long";
  }
  if (!err) {
    for (const FunctionDef& d : *defs) {
      if (d.name == def.name) err = "Function already exists in the library";
    }
  }
  if (err) return err;
  lua_settop(L, 2);
  def.ref = luaL_ref(L, LUA_REGISTRYINDEX);
  defs->push_back(std::move(def));
  return nullptr;
}

int RegisterFunction(lua_State* L) {
  LuaEngine* e = EngineOf(L);
  std::vector<FunctionDef>* defs = e ? e->loading() : nullptr;
  if (!defs) {
    PushError(L, "redis.register_function can only be called on FUNCTION LOAD command");
    return lua_error(L);
  }
  // No C++ object may live in this frame: lua_error longjmps past it.
  if (const char* err = Register(L, defs)) {
    PushError(L, err);
    return lua_error(L);
  }
  return 0;
}

int ReturnTrue(lua_State* L) {
  lua_pushboolean(L, 1);
  return 1;
}

int ReturnFalse(lua_State* L) {
  lua_pushboolean(L, 0);
  return 1;
}

int Nothing(lua_State*) { return 0; }

int AclCheckCmd(lua_State* L) {
  LuaEngine* e = RunningEngine(L, "redis.acl_check_cmd");
  std::vector<std::string>& argv = e->scratch().argv;  // no C++ object in a frame lua_error leaves
  if (!ArgsToArgv(L, &argv)) return lua_error(L);
  std::optional<bool> allowed = e->host()->AclCheckCmd(argv);
  if (!allowed) {
    PushError(L, "Invalid command passed to redis.acl_check_cmd()");
    return lua_error(L);
  }
  lua_pushboolean(L, *allowed ? 1 : 0);
  return 1;
}

// math.random as Lua's own, on redisLrand48 (the same sequence on every machine).
int MathRandom(lua_State* L) {
  LuaEngine* e = EngineOf(L);
  if (!e || !e->running())
    return luaL_error(L, "math.random can only be called inside a script invocation");
  constexpr double kMax = 2147483647.0;  // REDIS_LRAND48_MAX (INT32_MAX)
  lua_Number r = static_cast<lua_Number>(e->Lrand48() % 2147483647) / kMax;
  switch (lua_gettop(L)) {
    case 0:
      lua_pushnumber(L, r);
      break;
    case 1: {
      int u = luaL_checkint(L, 1);
      luaL_argcheck(L, 1 <= u, 1, "interval is empty");
      lua_pushnumber(L, std::floor(r * u) + 1);
      break;
    }
    case 2: {
      int l = luaL_checkint(L, 1);
      int u = luaL_checkint(L, 2);
      luaL_argcheck(L, l <= u, 2, "interval is empty");
      lua_pushnumber(L, std::floor(r * (u - l + 1)) + l);
      break;
    }
    default:
      return luaL_error(L, "wrong number of arguments");
  }
  return 1;
}

int MathRandomseed(lua_State* L) {
  LuaEngine* e = EngineOf(L);
  if (!e || !e->running()) {
    return luaL_error(L, "math.randomseed can only be called inside a script invocation");
  }
  e->Srand48(luaL_checkint(L, 1));
  return 0;
}

void SetFunction(lua_State* L, const char* name, lua_CFunction f) {
  lua_pushstring(L, name);
  lua_pushcfunction(L, f);
  lua_settable(L, -3);
}

void SetNumber(lua_State* L, const char* name, lua_Number n) {
  lua_pushstring(L, name);
  lua_pushnumber(L, n);
  lua_settable(L, -3);
}

}  // namespace

// REDIS_VERSION and REDIS_VERSION_NUM into the table on top of the stack.
void SetVersion(lua_State* L, std::string_view version) {
  int major = 0, minor = 0, patch = 0;
  sscanf(std::string(version).c_str(), "%d.%d.%d", &major, &minor, &patch);
  SetNumber(L, "REDIS_VERSION_NUM", (major << 16) | (minor << 8) | patch);
  lua_pushstring(L, "REDIS_VERSION");
  lua_pushlstring(L, version.data(), version.size());
  lua_settable(L, -3);
}

void SetLog(lua_State* L) {
  SetFunction(L, "log", Log);
  SetNumber(L, "LOG_DEBUG", 0);
  SetNumber(L, "LOG_VERBOSE", 1);
  SetNumber(L, "LOG_NOTICE", 2);
  SetNumber(L, "LOG_WARNING", 3);
}

void RegisterRedisApi(lua_State* L, std::string_view version) {
  lua_pushcfunction(L, GlobalPcall);
  lua_setglobal(L, "pcall");

  lua_newtable(L);
  SetFunction(L, "call", Call);
  SetFunction(L, "pcall", PCall);
  SetLog(L);
  SetVersion(L, version);
  SetFunction(L, "setresp", SetResp);
  SetFunction(L, "sha1hex", Sha1hex);
  SetFunction(L, "error_reply", ErrorReply);
  SetFunction(L, "status_reply", StatusReply);
  SetFunction(L, "set_repl", SetRepl);
  SetNumber(L, "REPL_NONE", 0);
  SetNumber(L, "REPL_AOF", RunState::kReplAof);
  SetNumber(L, "REPL_SLAVE", RunState::kReplReplica);
  SetNumber(L, "REPL_REPLICA", RunState::kReplReplica);
  SetNumber(L, "REPL_ALL", RunState::kReplAof | RunState::kReplReplica);
  SetFunction(L, "acl_check_cmd", AclCheckCmd);
  SetFunction(L, "breakpoint", ReturnFalse);
  SetFunction(L, "debug", Nothing);
  SetFunction(L, "replicate_commands", ReturnTrue);
  lua_setglobal(L, "redis");

  lua_getglobal(L, "math");
  lua_pushstring(L, "random");
  lua_pushcfunction(L, MathRandom);
  lua_settable(L, -3);
  lua_pushstring(L, "randomseed");
  lua_pushcfunction(L, MathRandomseed);
  lua_settable(L, -3);
  lua_pop(L, 1);
}

void PushLibraryApi(lua_State* L, std::string_view version) {
  lua_newtable(L);
  lua_newtable(L);
  SetFunction(L, "register_function", RegisterFunction);
  SetLog(L);
  SetVersion(L, version);
  lua_setfield(L, -2, "redis");
}

}  // namespace kv::script
