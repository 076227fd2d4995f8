// The base functions Lua 5.1 gets wrong for a server that runs untrusted scripts, replaced with
// Redis' fixed versions (Debian's liblua5.1 carries none of Redis' fixes to its own copy):
//   unpack      CVE-2025-46817: `unpack({}, -2, 2147483647)` overflows the count of results in
//               stock Lua, whose compiled range check then lets it write past the stack. Here the
//               count is computed unsigned and checked before anything is pushed.
//   loadstring  Lua 5.1 runs binary chunks (string.dump's output) without verifying them, a known
//   load        way to corrupt memory. Redis' Lua parses every chunk as text, so a binary one fails
//               to compile: "[string "..."]:1: unexpected symbol near 'char(27)'", which these
//               answer too.
// And the chunk names of every load the engine makes are kept referenced, so no collection can
// free one while the parser holds it (CVE-2025-49844: Lua 5.1's parser does not anchor the name
// it is given).
#include <climits>
#include <cstring>

#include "script/lua_internal.h"

namespace kv::script {
namespace {

constexpr char kBinaryMark = '\033';  // LUA_SIGNATURE[0]: what makes Lua undump a chunk
const char kAnchoredNames[] = "kv_anchored_chunk_names";

int Unpack(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  int i = luaL_optint(L, 2, 1);
  int e = luaL_opt(L, luaL_checkint, 3, luaL_getn(L, 1));
  if (i > e) return 0;
  unsigned int n = static_cast<unsigned int>(e) - static_cast<unsigned int>(i);  // count - 1
  if (n >= INT_MAX || !lua_checkstack(L, static_cast<int>(++n))) {
    return luaL_error(L, "too many results to unpack");
  }
  lua_rawgeti(L, 1, i);
  while (i++ < e) lua_rawgeti(L, 1, i);
  return static_cast<int>(n);
}

// After a load that failed on the stand-in byte of a binary chunk: the message a text parse of
// the chunk itself gives.
void NameTheBinaryMark(lua_State* L) {
  size_t len;
  const char* msg = lua_tolstring(L, -1, &len);
  static const char kStandIn[] = "'char(1)'";
  const size_t n = sizeof(kStandIn) - 1;
  if (!msg || len < n || memcmp(msg + len - n, kStandIn, n) != 0) return;
  lua_pushlstring(L, msg, len - n);
  lua_pushliteral(L, "'char(27)'");
  lua_concat(L, 2);
  lua_replace(L, -2);
}

// Stock Lua's load_aux: the function, or nil and the message.
int LoadResult(lua_State* L, int status, bool binary) {
  if (status == 0) return 1;
  if (binary) NameTheBinaryMark(L);
  lua_pushnil(L);
  lua_insert(L, -2);
  return 2;
}

int LoadString(lua_State* L) {
  size_t len;
  const char* s = luaL_checklstring(L, 1, &len);
  const char* name = luaL_optstring(L, 2, s);  // on the stack either way
  // A binary chunk fails on its first byte when parsed as text: parse a byte that fails the
  // same way, under the same name, and name the real byte in the message.
  if (len > 0 && s[0] == kBinaryMark) return LoadResult(L, luaL_loadbuffer(L, "\1", 1, name), true);
  return LoadResult(L, luaL_loadbuffer(L, s, len, name), false);
}

// load's reader: the pieces the caller's function returns, in stack slot 3 while the parser
// reads them (stock Lua's generic_reader), with a binary chunk's first byte swapped for one that
// fails the parse at once.
struct PieceReader {
  bool first = true;
  bool binary = false;
};

const char* ReadPiece(lua_State* L, void* ud, size_t* size) {
  auto* r = static_cast<PieceReader*>(ud);
  luaL_checkstack(L, 2, "too many nested functions");
  lua_pushvalue(L, 1);
  lua_call(L, 0, 1);
  if (lua_isnil(L, -1)) {
    *size = 0;
    return nullptr;
  }
  if (!lua_isstring(L, -1)) luaL_error(L, "reader function must return a string");
  lua_replace(L, 3);
  const char* piece = lua_tolstring(L, 3, size);
  if (r->first && *size > 0) {
    r->first = false;
    if (piece[0] == kBinaryMark) {
      r->binary = true;
      *size = 1;
      return "\1";
    }
  }
  return piece;
}

int Load(lua_State* L) {
  luaL_checktype(L, 1, LUA_TFUNCTION);
  if (lua_isnoneornil(L, 2)) {
    lua_settop(L, 1);
    lua_pushliteral(L, "=(load)");  // a Lua string in slot 2: the parser's name stays referenced
  } else {
    luaL_checkstring(L, 2);
  }
  lua_settop(L, 3);  // the function, the name, the reader's slot
  PieceReader reader;
  int status = lua_load(L, ReadPiece, &reader, lua_tostring(L, 2));
  return LoadResult(L, status, reader.binary);
}

}  // namespace

void HardenBaseLibrary(lua_State* L) {
  lua_pushcfunction(L, Unpack);
  lua_setglobal(L, "unpack");
  lua_pushcfunction(L, LoadString);
  lua_setglobal(L, "loadstring");
  lua_pushcfunction(L, Load);
  lua_setglobal(L, "load");
}

void AnchorChunkNames(lua_State* L, std::initializer_list<const char*> names) {
  lua_getfield(L, LUA_REGISTRYINDEX, kAnchoredNames);
  if (lua_isnil(L, -1)) {
    lua_pop(L, 1);
    lua_newtable(L);
    lua_pushvalue(L, -1);
    lua_setfield(L, LUA_REGISTRYINDEX, kAnchoredNames);
  }
  for (const char* name : names) {
    lua_pushstring(L, name);
    lua_pushboolean(L, 1);
    lua_rawset(L, -3);
  }
  lua_pop(L, 1);
}

}  // namespace kv::script
