// The read-only global table. Redis 7.0 patches its Lua to mark tables read-only; kvstore uses
// Debian's stock Lua 5.1, so every protected table (the globals and, recursively, every table
// reachable from them: the libraries, `redis`) is replaced by an empty proxy whose metatable
// reads through to the real table (__index) and refuses writes (__newindex). The thread's global
// table is the globals' proxy, so scripts and the functions loadstring makes see only proxies;
// the real tables are reachable from C alone. The functions that bypass metatables are replaced
// by versions that see through proxies (next, pairs, ipairs, rawget) or refuse them (rawset,
// setmetatable, table.insert/remove/sort/setn), so no script can change what the next one sees.
// Messages are Redis': "Attempt to modify a readonly table" (with the script's position from a
// Lua assignment, without one from a C function), and "Script attempted to access nonexistent
// global variable 'x'".
#include "script/lua_internal.h"

namespace kv::script {
namespace {

const char kProxyToReal[] = "kv_proxy_real";  // registry: proxy -> real table
const char kRealToProxy[] = "kv_real_proxy";  // registry: real table -> proxy
const char kRealGlobals[] = "kv_real_globals";
const char kGlobalsProxy[] = "kv_globals_proxy";
const char kGlobalsMeta[] = "kv_globals_meta";  // what getmetatable(_G) shows (read-only)
const char kStringMeta[] = "kv_string_meta";    // what getmetatable("") shows (read-only)
// Functions engine: the metatable of the thread's global table, and what its __index is while
// a library loads (the loading API's proxy) and otherwise (the globals' proxy).
const char kFunctionGlobalsMeta[] = "kv_function_globals_meta";
const char kLibraryApi[] = "kv_library_api";

constexpr char kReadonly[] = "Attempt to modify a readonly table";

// Raised from a C function: no position, as Redis' patched lua_rawset and lua_setmetatable.
int ReadonlyError(lua_State* L) {
  lua_pushstring(L, kReadonly);
  return lua_error(L);
}

// __newindex of a proxy: an assignment in a script, with its position.
int ProxyNewIndex(lua_State* L) { return luaL_error(L, "%s", kReadonly); }

// __index of the real global table: reading a global that does not exist.
int MissingGlobal(lua_State* L) {
  const char* name = lua_tostring(L, 2);
  return luaL_error(L, "Script attempted to access nonexistent global variable '%s'",
                    name ? name : "?");
}

// Replaces the table at `idx` by the real table behind it when it is a proxy; true if it was.
bool ResolveProxy(lua_State* L, int idx) {
  if (!lua_istable(L, idx)) return false;
  lua_getfield(L, LUA_REGISTRYINDEX, kProxyToReal);
  lua_pushvalue(L, idx);
  lua_rawget(L, -2);
  if (lua_isnil(L, -1)) {
    lua_pop(L, 2);
    return false;
  }
  lua_replace(L, idx);
  lua_pop(L, 1);
  return true;
}

bool IsProxy(lua_State* L, int idx) {
  if (!lua_istable(L, idx)) return false;
  lua_getfield(L, LUA_REGISTRYINDEX, kProxyToReal);
  lua_pushvalue(L, idx);
  lua_rawget(L, -2);
  bool proxy = !lua_isnil(L, -1);
  lua_pop(L, 2);
  return proxy;
}

// Replaces the real table on top of the stack by its proxy, making one (and protecting every
// table it holds, recursively) the first time.
void ProtectTop(lua_State* L) {
  int real = lua_gettop(L);
  if (IsProxy(L, real)) return;  // a proxy already (the string metatable's __index)
  lua_getfield(L, LUA_REGISTRYINDEX, kRealToProxy);
  lua_pushvalue(L, real);
  lua_rawget(L, -2);
  if (!lua_isnil(L, -1)) {  // already protected (a cycle: _G._G)
    lua_replace(L, real);
    lua_settop(L, real);
    return;
  }
  lua_pop(L, 1);
  int rev = lua_gettop(L);
  lua_newtable(L);
  int proxy = lua_gettop(L);
  lua_pushvalue(L, real);
  lua_pushvalue(L, proxy);
  lua_rawset(L, rev);
  lua_getfield(L, LUA_REGISTRYINDEX, kProxyToReal);
  lua_pushvalue(L, proxy);
  lua_pushvalue(L, real);
  lua_rawset(L, -3);
  lua_pop(L, 1);
  lua_newtable(L);  // the proxy's metatable
  lua_pushvalue(L, real);
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, ProxyNewIndex);
  lua_setfield(L, -2, "__newindex");
  lua_setmetatable(L, proxy);
  // What the table holds is protected too: real[k] = proxy(v) for every table v.
  lua_pushnil(L);
  while (lua_next(L, real)) {
    if (lua_istable(L, -1)) {
      ProtectTop(L);
      lua_pushvalue(L, -2);
      lua_insert(L, -2);
      lua_rawset(L, real);
    } else {
      lua_pop(L, 1);
    }
  }
  lua_replace(L, real);
  lua_settop(L, real);
}

int NextThrough(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_settop(L, 2);
  ResolveProxy(L, 1);
  if (lua_next(L, 1)) return 2;
  lua_pushnil(L);
  return 1;
}

int PairsThrough(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_pushvalue(L, lua_upvalueindex(1));  // next
  lua_pushvalue(L, 1);
  lua_pushnil(L);
  return 3;
}

int IpairsStep(lua_State* L) {
  int i = luaL_checkint(L, 2);
  luaL_checktype(L, 1, LUA_TTABLE);
  ResolveProxy(L, 1);
  i++;
  lua_pushinteger(L, i);
  lua_rawgeti(L, 1, i);
  return lua_isnil(L, -1) ? 0 : 2;
}

int IpairsThrough(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_pushvalue(L, 1);
  lua_pushinteger(L, 0);
  return 3;
}

int RawgetThrough(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  luaL_checkany(L, 2);
  lua_settop(L, 2);
  ResolveProxy(L, 1);
  lua_rawget(L, 1);
  return 1;
}

int RawsetChecked(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  luaL_checkany(L, 2);
  luaL_checkany(L, 3);
  if (IsProxy(L, 1)) return ReadonlyError(L);
  lua_settop(L, 3);
  lua_rawset(L, 1);
  return 1;
}

int GetmetatableShown(lua_State* L) {
  luaL_checkany(L, 1);
  if (lua_type(L, 1) == LUA_TSTRING) {
    lua_getfield(L, LUA_REGISTRYINDEX, kStringMeta);
    return 1;
  }
  if (IsProxy(L, 1)) {
    // The globals show their (read-only) metatable, as in Redis; libraries have none.
    lua_getfield(L, LUA_REGISTRYINDEX, kGlobalsProxy);
    bool globals = lua_rawequal(L, 1, -1);
    lua_pop(L, 1);
    if (globals) {
      lua_getfield(L, LUA_REGISTRYINDEX, kGlobalsMeta);
    } else {
      lua_pushnil(L);
    }
    return 1;
  }
  if (!lua_getmetatable(L, 1)) {
    lua_pushnil(L);
    return 1;
  }
  luaL_getmetafield(L, 1, "__metatable");
  return 1;
}

int SetmetatableChecked(lua_State* L) {
  int t = lua_type(L, 2);
  luaL_checktype(L, 1, LUA_TTABLE);
  luaL_argcheck(L, t == LUA_TNIL || t == LUA_TTABLE, 2, "nil or table expected");
  if (IsProxy(L, 1)) return ReadonlyError(L);
  if (luaL_getmetafield(L, 1, "__metatable")) luaL_error(L, "cannot change a protected metatable");
  lua_settop(L, 2);
  lua_setmetatable(L, 1);
  return 1;
}

// table.insert/remove/sort/setn write with raw access: refused on a proxy, else the original.
int TableWriterChecked(lua_State* L) {
  if (IsProxy(L, 1)) return ReadonlyError(L);
  int n = lua_gettop(L);
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, n, LUA_MULTRET);
  return lua_gettop(L);
}

void SetCFunction(lua_State* L, int table, const char* name, lua_CFunction f) {
  lua_pushcfunction(L, f);
  lua_setfield(L, table, name);
}

}  // namespace

void LockGlobals(lua_State* L) {
  lua_newtable(L);
  lua_setfield(L, LUA_REGISTRYINDEX, kProxyToReal);
  lua_newtable(L);
  lua_setfield(L, LUA_REGISTRYINDEX, kRealToProxy);

  lua_pushvalue(L, LUA_GLOBALSINDEX);
  int real = lua_gettop(L);
  lua_pushvalue(L, real);
  lua_setfield(L, LUA_REGISTRYINDEX, kRealGlobals);

  // The functions that see through proxies or refuse them.
  SetCFunction(L, real, "next", NextThrough);
  lua_pushcfunction(L, NextThrough);
  lua_pushcclosure(L, PairsThrough, 1);
  lua_setfield(L, real, "pairs");
  lua_pushcfunction(L, IpairsStep);
  lua_pushcclosure(L, IpairsThrough, 1);
  lua_setfield(L, real, "ipairs");
  SetCFunction(L, real, "rawget", RawgetThrough);
  SetCFunction(L, real, "rawset", RawsetChecked);
  SetCFunction(L, real, "getmetatable", GetmetatableShown);
  SetCFunction(L, real, "setmetatable", SetmetatableChecked);
  lua_getfield(L, real, "table");
  for (const char* name : {"insert", "remove", "sort", "setn"}) {
    lua_getfield(L, -1, name);
    lua_pushcclosure(L, TableWriterChecked, 1);
    lua_setfield(L, -2, name);
  }
  lua_pop(L, 1);

  // Reading a missing global is an error.
  lua_newtable(L);
  SetCFunction(L, lua_gettop(L), "__index", MissingGlobal);
  lua_pushvalue(L, -1);
  ProtectTop(L);
  lua_setfield(L, LUA_REGISTRYINDEX, kGlobalsMeta);
  lua_setmetatable(L, real);

  // Strings' methods read through the string library's proxy; their metatable shows read-only.
  lua_pushvalue(L, real);
  ProtectTop(L);  // every library and _G itself
  lua_pushvalue(L, -1);
  lua_setfield(L, LUA_REGISTRYINDEX, kGlobalsProxy);
  lua_pushstring(L, "");
  lua_getmetatable(L, -1);
  lua_getfield(L, real, "string");  // the string library's proxy now
  lua_setfield(L, -2, "__index");
  ProtectTop(L);
  lua_setfield(L, LUA_REGISTRYINDEX, kStringMeta);
  lua_pop(L, 1);  // ""
  lua_replace(L, LUA_GLOBALSINDEX);
  lua_pop(L, 1);  // real
}

void UseFunctionGlobals(lua_State* L) {
  int api = lua_gettop(L);
  // A missing name in the loading API (or in its `redis`) is an error, as a missing global.
  lua_newtable(L);
  SetCFunction(L, lua_gettop(L), "__index", MissingGlobal);
  lua_getfield(L, api, "redis");
  lua_pushvalue(L, -2);
  lua_setmetatable(L, -2);
  lua_pop(L, 1);
  lua_setmetatable(L, api);
  ProtectTop(L);
  lua_setfield(L, LUA_REGISTRYINDEX, kLibraryApi);

  // The thread's global table: empty, read-only, reading through (its __index is switched by
  // UseLibraryApi). rawset and setmetatable refuse it as a proxy; next sees the globals.
  lua_newtable(L);
  int globals = lua_gettop(L);
  lua_newtable(L);
  lua_getfield(L, LUA_REGISTRYINDEX, kGlobalsProxy);
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, ProxyNewIndex);
  lua_setfield(L, -2, "__newindex");
  lua_pushvalue(L, -1);
  lua_setfield(L, LUA_REGISTRYINDEX, kFunctionGlobalsMeta);
  lua_setmetatable(L, globals);
  lua_getfield(L, LUA_REGISTRYINDEX, kProxyToReal);
  lua_pushvalue(L, globals);
  lua_getfield(L, LUA_REGISTRYINDEX, kRealGlobals);
  lua_rawset(L, -3);
  lua_pop(L, 1);
  lua_replace(L, LUA_GLOBALSINDEX);
}

void UseLibraryApi(lua_State* L, bool on) {
  lua_getfield(L, LUA_REGISTRYINDEX, kFunctionGlobalsMeta);
  lua_getfield(L, LUA_REGISTRYINDEX, on ? kLibraryApi : kGlobalsProxy);
  lua_setfield(L, -2, "__index");
  lua_pop(L, 1);
}

void PushRealGlobals(lua_State* L) { lua_getfield(L, LUA_REGISTRYINDEX, kRealGlobals); }

}  // namespace kv::script
