// Shared by the engine's parts (lua_engine.cc, lua_api.cc, lua_sandbox.cc, lua_convert.cc).
#pragma once

#include <lua5.1/lua.hpp>

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

// Pushes the Lua value of one RESP reply (redis.call's result, Redis' redisProtocolToLuaType).
void PushReply(lua_State* L, std::string_view reply);
// Writes the value on top of the stack as a reply and pops it (luaReplyToRedisReply). The
// script's own protocol (redis.setresp) decides how booleans go out.
void WriteReply(lua_State* L, resp::ReplyWriter& w, int script_resp);

// The struct and cmsgpack libraries, as Redis 7.0 bundles them (lua_struct.cc, lua_cmsgpack.cc):
// each pushes its table.
int OpenStruct(lua_State* L);
int OpenCmsgpack(lua_State* L);

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
