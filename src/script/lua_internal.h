// Shared by the engine's parts (lua_engine.cc, lua_api.cc, lua_sandbox.cc, lua_convert.cc).
#pragma once

#include <lua5.1/lua.hpp>

#include <initializer_list>
#include <string>
#include <string_view>

#include "resp/writer.h"
#include "script/lua_engine.h"

namespace kv::script {

// The engine a lua_State belongs to (its allocator's user data).
LuaEngine* EngineOf(lua_State* L);

// Pushes Redis' error table {err="CODE msg"} (luaPushErrorBuff): "-CODE msg" keeps its code,
// a message without one gets "ERR "; a trailing CRLF is trimmed.
void PushError(lua_State* L, std::string_view error);
// Whether the error table at absolute index `t` carries ignore_error_stats_update: its error
// was counted by the command it came from (Redis' ERR_REPLY_FLAG_NO_STATS_UPDATE).
bool ErrorCounted(lua_State* L, int t);

// Pushes the Lua value of one RESP reply (redis.call's result, Redis' redisProtocolToLuaType).
void PushReply(lua_State* L, std::string_view reply);
// Writes the value on top of the stack as a reply and pops it (luaReplyToRedisReply). The
// script's own protocol (redis.setresp) decides how booleans go out.
void WriteReply(lua_State* L, resp::ReplyWriter& w, int script_resp);

// The struct, cmsgpack, cjson and bit libraries, as Redis 7.0 bundles them (lua_struct.cc,
// lua_cmsgpack.cc, lua_cjson.cc, lua_bit.cc): each pushes its table.
int OpenStruct(lua_State* L);
int OpenCmsgpack(lua_State* L);
int OpenCjson(lua_State* L);
int OpenBit(lua_State* L);

// For the C functions of those libraries whose work a script can make long without running
// Lua instructions (cjson.encode or cmsgpack.pack of a table holding the same subtable many
// times over), called every kScriptPollEvery values they encode or decode: what the engine's
// count hook does every so many instructions (lua_engine.cc), so that clients past
// busy-reply-threshold are answered and SCRIPT KILL or FUNCTION KILL reaches such work too.
// True when the script is to end: the caller then stops, pushes its results (nil) and returns
// without raising an error of its own. The hook is armed to run as the C function returns, and
// raises the kill error there as Lua runs hooks (with hooks off until the error is caught), so
// that the error handler names the line of the call. Raised from here, the error handler would
// run with the hook live, be killed in turn, and name its own line.
constexpr unsigned kScriptPollEvery = 1u << 14;
inline bool ScriptMustStop(lua_State* L) {
  lua_Hook hook = lua_gethook(L);
  if (hook == nullptr) return false;  // Neither a script run with busy-reply-threshold nor a load.
  LuaEngine* e = EngineOf(L);
  ScriptHost* host = e != nullptr ? e->host() : nullptr;  // None while a library loads.
  if (host == nullptr || host->BusyThresholdMs() <= 0 || !host->Interrupt()) return false;
  lua_sethook(L, hook, lua_gethookmask(L) | LUA_MASKRET, lua_gethookcount(L));
  return true;
}

// Replaces unpack, loadstring and load by Redis' fixed versions (lua_baselib.cc): unpack checks
// its range (CVE-2025-46817), loadstring and load compile binary chunks as text (so they fail).
void HardenBaseLibrary(lua_State* L);
// Keeps the strings `names` referenced for the interpreter's life: the chunk names the engine
// loads code under, which Lua 5.1's parser does not anchor itself (CVE-2025-49844).
void AnchorChunkNames(lua_State* L, std::initializer_list<const char*> names);

// The `redis` table, math.random/randomseed, the global pcall (lua_api.cc).
void RegisterRedisApi(lua_State* L, std::string_view version);
// Makes the global table and every library read-only (lua_sandbox.cc): writes raise "Attempt
// to modify a readonly table", reading a missing global "Script attempted to access nonexistent
// global variable". Call once everything is loaded.
void LockGlobals(lua_State* L);
// The table of what a library's code sees while it loads (lua_api.cc): `redis` with
// register_function, log and its levels, REDIS_VERSION(_NUM). Pushes it.
void PushLibraryApi(lua_State* L, std::string_view version);
// Functions engine, after LockGlobals (lua_sandbox.cc): pops the loading API table, protects it
// (a missing name in it is an error, as a missing global), and makes the thread's global table
// an empty read-only table that reads through to the globals, or to the loading API while
// UseLibraryApi(L, true) is in force. A library's code and the functions it defines share that
// table, so they see the loading API while it loads and the globals when they are called.
void UseFunctionGlobals(lua_State* L);
void UseLibraryApi(lua_State* L, bool on);
// Pushes the real global table behind the protection (where KEYS and ARGV are set).
void PushRealGlobals(lua_State* L);

}  // namespace kv::script
