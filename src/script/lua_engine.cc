// The interpreter's life (libraries, the error handler, the lock on the globals), the script
// cache, and one script run with Redis 7.0's error replies (luaCallFunction in script_lua.c).
#include "script/lua_engine.h"

#include <algorithm>
#include <atomic>
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
// The chunk names of the engine's loads (kept referenced: AnchorChunkNames).
const char kScriptChunk[] = "@user_script";
const char kFunctionChunk[] = "@user_function";
const char kHandlerChunk[] = "@err_handler_def";

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

std::atomic<size_t> max_allocation{size_t{512} << 20};

// The interpreter's allocator (growth past SetMaxAllocation's limit fails, which Lua raises as
// a memory error in the script) and panic handler.
void* Alloc(void*, void* ptr, size_t osize, size_t nsize) {
  if (nsize == 0) {
    free(ptr);
    return nullptr;
  }
  if (nsize > osize && nsize > max_allocation.load(std::memory_order_relaxed)) return nullptr;
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

// The message of a failed lua_cpcall (on top of the stack).
std::string ProtectedError(lua_State* L) {
  const char* msg = lua_isstring(L, -1) ? lua_tostring(L, -1) : nullptr;
  return msg ? msg : "unknown error in the script engine";
}

int GcStep(lua_State* L) {
  lua_gc(L, LUA_GCSTEP, 50);
  return 0;
}

int UseLibraryApiOff(lua_State* L) {
  UseLibraryApi(L, false);
  return 0;
}

// A field of the error table at `t`, read raw (an error table's metatable never runs: its
// __index may raise, CVE-2022-24736), as a string ("" when absent). The value stays on the stack
// so the pointer stays valid; the caller pops it.
const char* RawField(lua_State* L, int t, const char* name, size_t* len, bool* present = nullptr) {
  lua_pushstring(L, name);
  lua_rawget(L, t);
  bool is = lua_isstring(L, -1);
  if (present) *present = is;
  if (!is) {
    *len = 0;
    return "";
  }
  return lua_tolstring(L, -1, len);
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

// A failed protected call's error (on top of the stack) as Redis' luaExtractErrorInformation
// reads its message: a string gets "ERR ", an error table gives its `err`. In protected mode.
void ErrorMessage(lua_State* L, std::string* out) {
  size_t len;
  if (lua_isstring(L, -1)) {
    const char* msg = lua_tolstring(L, -1, &len);
    out->assign("ERR ").append(msg, len);
  } else if (lua_istable(L, -1)) {
    const char* msg = RawField(L, lua_gettop(L), "err", &len);
    out->assign(msg, len);
    lua_pop(L, 1);
  } else {
    out->assign("ERR unknown error");
  }
}

// The error reply of a script that failed (Redis' luaCallFunction), from its error (on top of
// the stack, a table from the error handler or a plain value). In protected mode.
void ScriptErrorReply(lua_State* L, const std::string& name, std::string* out, bool* counted) {
  int err = lua_gettop(L);
  *counted = false;
  if (!lua_istable(L, err)) {
    const char* msg = lua_isstring(L, err) ? lua_tostring(L, err) : "execution failure";
    out->assign("Error running script ").append(name).append(", ");
    out->append(std::string_view(msg).substr(0, 100)).append("\n");
    return;
  }
  size_t msg_len, source_len, line_len;
  bool has_source = false, has_line = false;
  const char* msg = RawField(L, err, "err", &msg_len);
  const char* source = RawField(L, err, "source", &source_len, &has_source);
  const char* line = RawField(L, err, "line", &line_len, &has_line);
  out->assign("-").append(msg, msg_len);
  *counted = ErrorCounted(L, err);
  if (has_source && has_line) {
    out->append(" script: ").append(name).append(", on ").append(source, source_len);
    out->append(":").append(line, line_len).append(".");
  }
  lua_settop(L, err);
}

void PushArray(lua_State* L, std::span<const std::string_view> items) {
  lua_createtable(L, static_cast<int>(items.size()), 0);
  for (size_t j = 0; j < items.size(); j++) {
    lua_pushlstring(L, items[j].data(), items[j].size());
    lua_rawseti(L, -2, static_cast<int>(j + 1));
  }
}

// Every engine operation on the interpreter runs inside lua_cpcall, so no Lua error (a memory
// error, a metamethod that raises, a limit) can reach Lua's panic handler and end the process.
// The operations take their inputs and give their results through these frames: plain data and
// pointers to the caller's objects, since a Lua error longjmps across the C frames in between
// without running destructors (so none of those frames owns anything that has one).
struct LoadFrame {
  std::string_view code;
  const char* chunk_name;
  int ref = 0;
  std::string* err;  // set when the code does not compile
};

int LoadProtected(lua_State* L) {
  auto* f = static_cast<LoadFrame*>(lua_touserdata(L, 1));
  if (luaL_loadbuffer(L, f->code.data(), f->code.size(), f->chunk_name)) {
    f->err->assign(lua_tostring(L, -1));
    return 0;
  }
  f->ref = luaL_ref(L, LUA_REGISTRYINDEX);
  return 0;
}

struct RunFrame {
  LuaEngine* engine;
  int handler_ref, fn_ref;
  bool eval;  // KEYS and ARGV as globals (EVAL), else the function's two parameters (FCALL)
  int real_globals_ref, keys_ref, argv_ref;
  std::span<const std::string_view> keys, args;
  const std::string* name;
  resp::ReplyWriter* w;
  std::string* error;  // the script's error reply, when it failed
  bool failed = false;
  bool error_counted = false;  // the error came from a command, which counted it
};

int RunProtected(lua_State* L) {
  auto* f = static_cast<RunFrame*>(lua_touserdata(L, 1));
  lua_rawgeti(L, LUA_REGISTRYINDEX, f->handler_ref);
  int handler = lua_gettop(L);
  lua_rawgeti(L, LUA_REGISTRYINDEX, f->fn_ref);
  int nargs = 0;
  if (f->eval) {
    lua_rawgeti(L, LUA_REGISTRYINDEX, f->real_globals_ref);  // past the globals' protection
    lua_rawgeti(L, LUA_REGISTRYINDEX, f->keys_ref);
    PushArray(L, f->keys);
    lua_rawset(L, -3);
    lua_rawgeti(L, LUA_REGISTRYINDEX, f->argv_ref);
    PushArray(L, f->args);
    lua_rawset(L, -3);
    lua_pop(L, 1);
  } else {
    PushArray(L, f->keys);
    PushArray(L, f->args);
    nargs = 2;
  }
  int err = lua_pcall(L, nargs, 1, handler);
  if (err) {
    f->failed = true;
    ScriptErrorReply(L, *f->name, f->error, &f->error_counted);
  } else {
    WriteReply(L, *f->w, f->engine->run().resp);
  }
  return 0;
}

}  // namespace

void SetMaxAllocation(size_t bytes) {
  max_allocation.store(bytes, std::memory_order_relaxed);
}

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
  OpenLibrary(L, "cjson", OpenCjson, true);
  OpenLibrary(L, "struct", OpenStruct, true);
  OpenLibrary(L, "cmsgpack", OpenCmsgpack, true);
  OpenLibrary(L, "bit", OpenBit, true);
  // Not in Redis 7.0's sandbox: files, printing, environments.
  for (const char* name : {"dofile", "loadfile", "print", "getfenv", "setfenv", "newproxy"}) {
    lua_pushnil(L);
    lua_setglobal(L, name);
  }
  HardenBaseLibrary(L);
  AnchorChunkNames(L, {kScriptChunk, kFunctionChunk, kHandlerChunk});
  RegisterRedisApi(L, version_);
  luaL_loadbuffer(L, kErrorHandlerCode, strlen(kErrorHandlerCode), kHandlerChunk);
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
  std::string compile_err;
  LoadFrame frame{body.substr(shebang_len), kScriptChunk, 0, &compile_err};
  int top = lua_gettop(lua_);
  int status = lua_cpcall(lua_, LoadProtected, &frame);
  if (status) compile_err = ProtectedError(lua_);
  lua_settop(lua_, top);
  if (status || frame.ref == 0) {
    *err = "Error compiling script (new function): " + compile_err;
    return false;
  }
  int ref = frame.ref;
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
  Call(script.ref, true, keys, args, script.sha, host, w);
}

void LuaEngine::RunFunction(const FunctionDef& f, std::span<const std::string_view> keys,
                            std::span<const std::string_view> args, ScriptHost& host,
                            resp::ReplyWriter& w) {
  Call(f.ref, false, keys, args, f.name, host, w);
}

void LuaEngine::Call(int fn_ref, bool eval, std::span<const std::string_view> keys,
                     std::span<const std::string_view> args, const std::string& name,
                     ScriptHost& host, resp::ReplyWriter& w) {
  lua_State* L = lua_;
  host_ = &host;
  run_ = RunState{};
  std::string error;
  RunFrame frame{this, handler_ref_, fn_ref, eval, real_globals_ref_, keys_ref_, argv_ref_,
                 keys, args, &name, &w, &error};
  const size_t mark = w.buffer()->size();
  const int top = lua_gettop(L);
  bool hooked = host.BusyThresholdMs() > 0;
  if (hooked) lua_sethook(L, CountHook, LUA_MASKCOUNT, 100000);
  int status = lua_cpcall(L, RunProtected, &frame);
  if (hooked) lua_sethook(L, nullptr, 0, 0);
  if (status) {
    // The engine's own step failed (out of memory, a reply past its limits): whatever part of
    // the reply was written goes, and the error takes its place.
    w.buffer()->resize(mark);
    w.Error(ProtectedError(L));
  } else if (frame.failed) {
    w.Error(error);
    if (frame.error_counted) w.MarkLastErrorCounted();
  }
  lua_settop(L, top);
  // A small GC step every 50 runs keeps Lua from a full cycle at an inopportune time.
  if (++runs_ % 50 == 0) lua_cpcall(L, GcStep, nullptr);
  lua_settop(L, top);
  // The thread's global table stays the protected one whatever the script did.
  lua_rawgeti(L, LUA_REGISTRYINDEX, thread_globals_ref_);
  lua_replace(L, LUA_GLOBALSINDEX);
  host_ = nullptr;
}

namespace {

struct LibraryFrame {
  std::string_view code;
  bool compiled = false, ran = false;
  std::string* err;
};

// A library's code, compiled and run once with the loading API in view. In protected mode.
int LoadLibraryProtected(lua_State* L) {
  auto* f = static_cast<LibraryFrame*>(lua_touserdata(L, 1));
  if (luaL_loadbuffer(L, f->code.data(), f->code.size(), kFunctionChunk)) {
    f->err->assign("Error compiling function: ").append(lua_tostring(L, -1));
    return 0;
  }
  f->compiled = true;
  UseLibraryApi(L, true);
  int status = lua_pcall(L, 0, 0, 0);
  UseLibraryApi(L, false);
  if (status) {
    std::string msg;
    ErrorMessage(L, &msg);
    f->err->assign("Error registering functions: ").append(msg);
    return 0;
  }
  f->ran = true;
  return 0;
}

}  // namespace

bool LuaEngine::LoadLibrary(std::string_view code, int64_t timeout_ms,
                            std::vector<FunctionDef>* defs, std::string* err) {
  lua_State* L = lua_;
  size_t first = defs->size();
  LibraryFrame frame{code, false, false, err};
  loading_ = defs;
  load_deadline_ms_ = timeout_ms > 0 ? MonoMs() + timeout_ms : 0;
  const int top = lua_gettop(L);
  lua_sethook(L, LoadHook, LUA_MASKCOUNT, 100000);
  int status = lua_cpcall(L, LoadLibraryProtected, &frame);
  lua_sethook(L, nullptr, 0, 0);
  if (status) *err = "Error registering functions: " + ProtectedError(L);
  lua_settop(L, top);
  loading_ = nullptr;
  load_deadline_ms_ = 0;
  if (status) lua_cpcall(L, UseLibraryApiOff, nullptr);  // LoadLibraryProtected stopped early
  lua_settop(L, top);
  lua_rawgeti(L, LUA_REGISTRYINDEX, thread_globals_ref_);
  lua_replace(L, LUA_GLOBALSINDEX);
  bool ok = status == 0 && frame.ran;
  if (!ok) {
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
