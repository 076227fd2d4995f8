// The interpreter's life (libraries, the error handler, the lock on the globals), the script
// cache, and one script run with Redis 7.0's error replies (luaCallFunction in script_lua.c).
#include "script/lua_engine.h"

extern "C" {
#include <lua5.1/lua-bitop.h>
#include <lua5.1/lua-cjson.h>
}

#include <algorithm>
#include <cctype>
#include <cstring>

#include "common/clock.h"
#include "common/logging.h"
#include "common/sha1.h"
#include "common/strutil.h"
#include "script/lua_internal.h"

namespace kv::script {
namespace {

const char kErrorHandler[] = "__redis__err__handler";

// As Redis' error handler: the error as a table {err=..., source=..., line=...}, where source
// and line are the script's position (the caller's, when a C function raised it).
const char kErrorHandlerCode[] =
    "local dbg = debug\n"
    "debug = nil\n"
    "function __redis__err__handler(err)\n"
    "  local i = dbg.getinfo(2,'nSl')\n"
    "  if i and i.what == 'C' then\n"
    "    i = dbg.getinfo(3,'nSl')\n"
    "  end\n"
    "  if type(err) ~= 'table' then\n"
    "    err = {err='ERR ' .. tostring(err)}\n"
    "  end\n"
    "  if i then\n"
    "    err['source'] = i.source\n"
    "    err['line'] = i.currentline\n"
    "  end\n"
    "  return err\n"
    "end\n";

// luaL_newstate's allocator and panic handler.
void* Alloc(void*, void* ptr, size_t, size_t nsize) {
  if (nsize == 0) {
    free(ptr);
    return nullptr;
  }
  return realloc(ptr, nsize);
}

int Panic(lua_State* L) {
  LOG_WARNING("PANIC: unprotected error in call to Lua API (%s)", lua_tostring(L, -1));
  return 0;
}

void OpenLibrary(lua_State* L, const char* name, lua_CFunction open, bool set_global) {
  lua_pushcfunction(L, open);
  lua_pushstring(L, name);
  lua_call(L, 1, 1);
  if (set_global) {
    lua_setglobal(L, name);
  } else {
    lua_pop(L, 1);
  }
}

// A field of the error table on top of the stack, as a string ("" when absent).
std::string ErrorField(lua_State* L, const char* name, bool* present = nullptr) {
  lua_getfield(L, -1, name);
  std::string out;
  bool is = lua_isstring(L, -1);
  if (is) {
    size_t len;
    const char* s = lua_tolstring(L, -1, &len);
    out.assign(s, len);
  }
  if (present) *present = is;
  lua_pop(L, 1);
  return out;
}

// The count hook: SCRIPT KILL ends the script with an error that pcall cannot keep catching
// (the hook then runs on every line).
void CountHook(lua_State* L, lua_Debug*) {
  LuaEngine* e = EngineOf(L);
  if (!e || !e->host() || !e->host()->Interrupt()) return;
  LOG_WARNING("Lua script killed by user with SCRIPT KILL.");
  lua_sethook(L, CountHook, LUA_MASKLINE, 0);
  PushError(L, "Script killed by user with SCRIPT KILL...");
  lua_error(L);
}

// The hook of a library load: one that runs past its time fails (FUNCTION LOAD's 500 ms).
void LoadHook(lua_State* L, lua_Debug*) {
  LuaEngine* e = EngineOf(L);
  if (!e || e->load_deadline_ms() == 0 || MonoMs() <= e->load_deadline_ms()) return;
  lua_sethook(L, LoadHook, LUA_MASKLINE, 0);
  PushError(L, "FUNCTION LOAD timeout");
  lua_error(L);
}

// A failed protected call's error as Redis' luaExtractErrorInformation reads its message: a
// string gets "ERR ", an error table gives its `err`.
std::string ErrorMessage(lua_State* L) {
  if (lua_isstring(L, -1)) return std::string("ERR ") + lua_tostring(L, -1);
  if (lua_istable(L, -1)) return ErrorField(L, "err");
  return "ERR unknown error";
}

void PushArray(lua_State* L, std::span<const std::string_view> items) {
  lua_createtable(L, static_cast<int>(items.size()), 0);
  for (size_t j = 0; j < items.size(); j++) {
    lua_pushlstring(L, items[j].data(), items[j].size());
    lua_rawseti(L, -2, static_cast<int>(j + 1));
  }
}

}  // namespace

// The engine is the allocator's user data: found without a lookup (C functions ask for it on
// every call).
LuaEngine* EngineOf(lua_State* L) {
  void* ud = nullptr;
  lua_getallocf(L, &ud);
  return static_cast<LuaEngine*>(ud);
}

const FlagName kFlagNames[5] = {
    {"no-writes", kFlagNoWrites},
    {"allow-oom", kFlagAllowOom},
    {"allow-stale", kFlagAllowStale},
    {"no-cluster", kFlagNoCluster},
    {"allow-cross-slot-keys", kFlagAllowCrossSlot},
};

uint32_t LuaEngine::rand_x_[3] = {0x330E, 0xABCD, 0x1234};  // drand48's default state

bool ParseShebang(std::string_view body, uint32_t* flags, size_t* shebang_len, std::string* err) {
  *flags = kFlagCompat;
  *shebang_len = 0;
  if (body.substr(0, 2) != "#!") return true;
  size_t end = body.find('\n');
  if (end == std::string_view::npos) {
    *err = "Invalid script shebang";
    return false;
  }
  std::vector<std::string> parts;
  std::string_view line = body.substr(0, end);
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && isspace(static_cast<unsigned char>(line[i]))) i++;
    size_t start = i;
    while (i < line.size() && !isspace(static_cast<unsigned char>(line[i]))) i++;
    if (i > start) parts.emplace_back(line.substr(start, i - start));
  }
  if (parts.empty()) {
    *err = "Invalid engine in script shebang";
    return false;
  }
  if (parts[0] != "#!lua") {
    *err = "Unexpected engine in script shebang: " + parts[0];
    return false;
  }
  *flags = 0;
  for (size_t j = 1; j < parts.size(); j++) {
    if (parts[j].rfind("flags=", 0) != 0) {
      *err = "Unknown lua shebang option: " + parts[j];
      return false;
    }
    std::string_view list = std::string_view(parts[j]).substr(6);
    // Split on commas as Redis does: "" has no flags, "a," an empty second one.
    while (!std::string_view(parts[j]).substr(6).empty()) {
      size_t comma = list.find(',');
      std::string_view name = list.substr(0, comma);
      bool found = false;
      for (const auto& [n, f] : kFlagNames) {
        if (name == n) {
          *flags |= f;
          found = true;
        }
      }
      if (!found) {
        *err = "Unexpected flag in script shebang: " + std::string(name);
        return false;
      }
      if (comma == std::string_view::npos) break;
      list = list.substr(comma + 1);
    }
  }
  *shebang_len = end;
  return true;
}

LuaEngine::LuaEngine(std::string version, EngineKind kind)
    : version_(std::move(version)), kind_(kind) {
  Open();
}

LuaEngine::~LuaEngine() { Close(); }

void LuaEngine::Open() {
  lua_ = lua_newstate(Alloc, this);
  lua_State* L = lua_;
  lua_atpanic(L, Panic);
  OpenLibrary(L, "", luaopen_base, false);
  OpenLibrary(L, LUA_TABLIBNAME, luaopen_table, false);
  OpenLibrary(L, LUA_STRLIBNAME, luaopen_string, false);
  OpenLibrary(L, LUA_MATHLIBNAME, luaopen_math, false);
  OpenLibrary(L, LUA_DBLIBNAME, luaopen_debug, false);
  OpenLibrary(L, "cjson", luaopen_cjson, true);
  OpenLibrary(L, "struct", OpenStruct, true);
  OpenLibrary(L, "cmsgpack", OpenCmsgpack, true);
  OpenLibrary(L, "bit", luaopen_bit, true);
  // Not in Redis 7.0's sandbox: files, printing, environments.
  for (const char* name : {"dofile", "loadfile", "print", "getfenv", "setfenv", "newproxy"}) {
    lua_pushnil(L);
    lua_setglobal(L, name);
  }
  RegisterRedisApi(L, version_);
  luaL_loadbuffer(L, kErrorHandlerCode, strlen(kErrorHandlerCode), "@err_handler_def");
  lua_pcall(L, 0, 0, 0);
  lua_getglobal(L, kErrorHandler);
  handler_ref_ = luaL_ref(L, LUA_REGISTRYINDEX);
  if (kind_ == EngineKind::kFunctions) {
    // What only EVAL has: the handler as a global, and the redis fields of its debugger and
    // of script replication.
    lua_pushnil(L);
    lua_setglobal(L, kErrorHandler);
    lua_getglobal(L, "redis");
    for (const char* name : {"replicate_commands", "breakpoint", "debug"}) {
      lua_pushnil(L);
      lua_setfield(L, -2, name);
    }
    lua_pop(L, 1);
  }
  LockGlobals(L);
  if (kind_ == EngineKind::kFunctions) {
    PushLibraryApi(L, version_);
    UseFunctionGlobals(L);
  }
  // What every run touches, as references (a named lookup hashes the name each time).
  PushRealGlobals(L);
  real_globals_ref_ = luaL_ref(L, LUA_REGISTRYINDEX);
  lua_pushvalue(L, LUA_GLOBALSINDEX);
  thread_globals_ref_ = luaL_ref(L, LUA_REGISTRYINDEX);
  lua_pushliteral(L, "KEYS");
  keys_ref_ = luaL_ref(L, LUA_REGISTRYINDEX);
  lua_pushliteral(L, "ARGV");
  argv_ref_ = luaL_ref(L, LUA_REGISTRYINDEX);
}

void LuaEngine::Close() {
  if (lua_) lua_close(lua_);
  lua_ = nullptr;
}

void LuaEngine::Reset() {
  Close();
  cache_.clear();
  cache_bytes_ = 0;
  Open();
}

size_t LuaEngine::lua_memory() const {
  return static_cast<size_t>(lua_gc(lua_, LUA_GCCOUNT, 0)) * 1024 +
         static_cast<size_t>(lua_gc(lua_, LUA_GCCOUNTB, 0));
}

bool LuaEngine::Load(std::string_view body, std::string* sha, std::string* err) {
  *sha = Sha1::HexDigest(body);
  if (cache_.count(*sha)) return true;
  uint32_t flags;
  size_t shebang_len;
  if (!ParseShebang(body, &flags, &shebang_len, err)) return false;
  // The shebang line is skipped but its newline kept: line numbers stay the user's.
  if (luaL_loadbuffer(lua_, body.data() + shebang_len, body.size() - shebang_len, "@user_script")) {
    *err = std::string("Error compiling script (new function): ") + lua_tostring(lua_, -1);
    lua_pop(lua_, 1);
    return false;
  }
  int ref = luaL_ref(lua_, LUA_REGISTRYINDEX);
  cache_bytes_ += body.size() + sha->size() + sizeof(Script) + 64;
  cache_.emplace(*sha, Script{*sha, std::string(body), flags, ref});
  return true;
}

const Script* LuaEngine::Find(std::string_view sha) const {
  if (sha.size() != 40) return nullptr;
  bool lower = std::none_of(sha.begin(), sha.end(), [](char c) { return c >= 'A' && c <= 'Z'; });
  auto it = lower ? cache_.find(sha) : cache_.find(ToLower(sha));
  return it == cache_.end() ? nullptr : &it->second;
}

void LuaEngine::Run(const Script& script, std::span<const std::string_view> keys,
                    std::span<const std::string_view> args, ScriptHost& host,
                    resp::ReplyWriter& w) {
  lua_State* L = lua_;
  lua_rawgeti(L, LUA_REGISTRYINDEX, handler_ref_);
  lua_rawgeti(L, LUA_REGISTRYINDEX, script.ref);
  // KEYS and ARGV on the real global table, past its protection.
  lua_rawgeti(L, LUA_REGISTRYINDEX, real_globals_ref_);
  lua_rawgeti(L, LUA_REGISTRYINDEX, keys_ref_);
  PushArray(L, keys);
  lua_rawset(L, -3);
  lua_rawgeti(L, LUA_REGISTRYINDEX, argv_ref_);
  PushArray(L, args);
  lua_rawset(L, -3);
  lua_pop(L, 1);
  Call(0, script.sha, host, w);
}

void LuaEngine::RunFunction(const FunctionDef& f, std::span<const std::string_view> keys,
                            std::span<const std::string_view> args, ScriptHost& host,
                            resp::ReplyWriter& w) {
  lua_State* L = lua_;
  lua_rawgeti(L, LUA_REGISTRYINDEX, handler_ref_);
  lua_rawgeti(L, LUA_REGISTRYINDEX, f.ref);
  PushArray(L, keys);
  PushArray(L, args);
  Call(2, f.name, host, w);
}

void LuaEngine::Call(int nargs, const std::string& name, ScriptHost& host, resp::ReplyWriter& w) {
  lua_State* L = lua_;
  host_ = &host;
  run_ = RunState{};
  bool hooked = host.BusyThresholdMs() > 0;
  if (hooked) lua_sethook(L, CountHook, LUA_MASKCOUNT, 100000);
  int err = lua_pcall(L, nargs, 1, -(nargs + 2));
  if (hooked) lua_sethook(L, nullptr, 0, 0);
  // A small GC step every 50 runs keeps Lua from a full cycle at an inopportune time.
  if (++runs_ % 50 == 0) lua_gc(L, LUA_GCSTEP, 50);
  if (err) {
    if (!lua_istable(L, -1)) {
      const char* msg = lua_isstring(L, -1) ? lua_tostring(L, -1) : "execution failure";
      w.Error("Error running script " + name + ", " + std::string(msg).substr(0, 100) + "\n");
    } else {
      bool has_source = false, has_line = false;
      std::string msg = ErrorField(L, "err");
      std::string source = ErrorField(L, "source", &has_source);
      std::string line = ErrorField(L, "line", &has_line);
      std::string reply = "-" + msg;
      if (has_source && has_line) reply += " script: " + name + ", on " + source + ":" + line + ".";
      w.Error(reply);
    }
    lua_pop(L, 1);
  } else {
    WriteReply(L, w, run_.resp);
  }
  lua_pop(L, 1);  // the error handler
  // The thread's global table stays the protected one whatever the script did.
  lua_rawgeti(L, LUA_REGISTRYINDEX, thread_globals_ref_);
  lua_replace(L, LUA_GLOBALSINDEX);
  host_ = nullptr;
}

bool LuaEngine::LoadLibrary(std::string_view code, int64_t timeout_ms,
                            std::vector<FunctionDef>* defs, std::string* err) {
  lua_State* L = lua_;
  size_t first = defs->size();
  if (luaL_loadbuffer(L, code.data(), code.size(), "@user_function")) {
    *err = std::string("Error compiling function: ") + lua_tostring(L, -1);
    lua_pop(L, 1);
    return false;
  }
  UseLibraryApi(L, true);
  loading_ = defs;
  load_deadline_ms_ = timeout_ms > 0 ? MonoMs() + timeout_ms : 0;
  lua_sethook(L, LoadHook, LUA_MASKCOUNT, 100000);
  bool ok = lua_pcall(L, 0, 0, 0) == 0;
  lua_sethook(L, nullptr, 0, 0);
  loading_ = nullptr;
  load_deadline_ms_ = 0;
  UseLibraryApi(L, false);
  lua_rawgeti(L, LUA_REGISTRYINDEX, thread_globals_ref_);
  lua_replace(L, LUA_GLOBALSINDEX);
  if (!ok) {
    *err = "Error registering functions: " + ErrorMessage(L);
    lua_pop(L, 1);
    for (size_t i = first; i < defs->size(); i++) Release((*defs)[i]);
    defs->resize(first);
  }
  return ok;
}

void LuaEngine::Release(const FunctionDef& f) { luaL_unref(lua_, LUA_REGISTRYINDEX, f.ref); }

int32_t LuaEngine::Lrand48() {
  uint64_t x = (static_cast<uint64_t>(rand_x_[2]) << 32) |
               (static_cast<uint64_t>(rand_x_[1]) << 16) | rand_x_[0];
  x = (x * 0x5DEECE66DULL + 0xB) & ((1ULL << 48) - 1);
  rand_x_[0] = static_cast<uint32_t>(x & 0xFFFF);
  rand_x_[1] = static_cast<uint32_t>((x >> 16) & 0xFFFF);
  rand_x_[2] = static_cast<uint32_t>((x >> 32) & 0xFFFF);
  return static_cast<int32_t>(x >> 17);
}

void LuaEngine::Srand48(int32_t seed) {
  rand_x_[0] = 0x330E;
  rand_x_[1] = static_cast<uint32_t>(seed) & 0xFFFF;
  rand_x_[2] = (static_cast<uint32_t>(seed) >> 16) & 0xFFFF;
}

}  // namespace kv::script
