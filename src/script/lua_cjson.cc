// The `cjson` library that scripts see (JSON), with the behaviour Redis 7.0 ships (lua-cjson
// 2.1.0 as Redis bundles it, with the fix of CVE-2022-24834):
//   encode(v) the JSON text of v; decode(s) the Lua value of a JSON text;
//   encode_sparse_array([convert [, ratio [, safe]]]), encode_max_depth([n]),
//   decode_max_depth([n]), encode_number_precision([n]), encode_keep_buffer([on]),
//   encode_invalid_numbers([on|"null"]), decode_invalid_numbers([on]): each sets what it is
//   given (nil keeps a setting) and returns the settings;
//   new() a fresh module table with its own settings; null (the light userdata NULL that
//   decode gives for JSON null and encode writes as null); _NAME and _VERSION.
// The settings live in a userdata that every function of a module table holds as its upvalue,
// so they outlast the script that sets them (until SCRIPT FLUSH, as in Redis).
//
// Encoding is in lua_cjson_encode.cc, decoding in lua_cjson_decode.cc; lua_cjson.h holds the
// settings they share.
//
// Every message, the checks of Lua's stack and where they fail are Redis 7.0's. Where kvstore
// differs: the text encode produces is limited to kMaxEncodedSize bytes (lua_cjson_encode.cc;
// past it, an error rather than an allocation Redis would attempt), a failed allocation is a
// Lua error, and a long encode or decode answers busy clients and ends on SCRIPT KILL as Lua
// code does (ScriptMustStop), where Redis 7.0 serves no one until it is done.
#include <climits>
#include <cstdio>

#include <lua5.1/lua.hpp>

#include "script/lua_cjson.h"
#include "script/lua_internal.h"

namespace kv::script {

namespace cjson {

// Larger buffers are freed after each call rather than kept for the next.
constexpr size_t kKeptBufferSize = 64 * 1024;

void FreeBuffer(ByteBuffer* b) {
  if (b->data != nullptr) b->alloc(b->alloc_ud, b->data, b->cap, 0);
  b->data = nullptr;
  b->len = b->cap = 0;
}

bool GrowBuffer(ByteBuffer* b, size_t cap) {
  void* p = b->alloc(b->alloc_ud, b->data, b->cap, cap);
  if (p == nullptr) return false;
  b->data = static_cast<char*>(p);
  b->cap = cap;
  return true;
}

void ResetBuffer(ByteBuffer* b, bool keep) {
  if (!keep || b->cap > kKeptBufferSize) {
    FreeBuffer(b);
  } else {
    b->len = 0;
  }
}

Config* FetchConfig(lua_State* L) {
  auto* cfg = static_cast<Config*>(lua_touserdata(L, lua_upvalueindex(1)));
  if (cfg == nullptr) luaL_error(L, "BUG: Unable to fetch CJSON configuration");
  return cfg;
}

namespace {

int FreeConfig(lua_State* L) {
  auto* cfg = static_cast<Config*>(lua_touserdata(L, 1));
  if (cfg != nullptr) {
    FreeBuffer(&cfg->encode_buf);
    FreeBuffer(&cfg->decode_buf);
  }
  return 0;
}

// ---------------------------------------------------------------------------------------------
// Settings.

// Checks that at most `args` arguments came, pads the missing ones with nil, and returns the
// settings.
Config* ConfigArgs(lua_State* L, int args) {
  luaL_argcheck(L, lua_gettop(L) <= args, args + 1, "found too many arguments");
  while (lua_gettop(L) < args) lua_pushnil(L);
  return FetchConfig(L);
}

// Sets *setting from argument `idx` unless it is nil (an integer in [min, max], converted to
// an int as C converts it), and pushes the setting. The range error names argument 1 whatever
// the argument, as Redis' does.
void IntegerOption(lua_State* L, int idx, int* setting, int min, int max) {
  if (!lua_isnil(L, idx)) {
    auto value = static_cast<int>(luaL_checkinteger(L, idx));
    char msg[64];
    snprintf(msg, sizeof(msg), "expected integer between %d and %d", min, max);
    luaL_argcheck(L, min <= value && value <= max, 1, msg);
    *setting = value;
  }
  lua_pushinteger(L, *setting);
}

// Sets *setting from argument `idx` unless it is nil: a boolean, or the index of one of
// `options` ("off", "on" by default). Pushes the setting: a boolean for off and on, else its
// name.
void EnumOption(lua_State* L, int idx, int* setting, const char* const* options = nullptr) {
  static const char* const kBoolOptions[] = {"off", "on", nullptr};
  if (options == nullptr) options = kBoolOptions;
  if (!lua_isnil(L, idx)) {
    if (lua_isboolean(L, idx)) {
      *setting = lua_toboolean(L, idx);
    } else {
      *setting = luaL_checkoption(L, idx, nullptr, options);
    }
  }
  if (*setting == 0 || *setting == 1) {
    lua_pushboolean(L, *setting);
  } else {
    lua_pushstring(L, options[*setting]);
  }
}

int CfgEncodeSparseArray(lua_State* L) {
  Config* cfg = ConfigArgs(L, 3);
  EnumOption(L, 1, &cfg->encode_sparse_convert);
  IntegerOption(L, 2, &cfg->encode_sparse_ratio, 0, INT_MAX);
  IntegerOption(L, 3, &cfg->encode_sparse_safe, 0, INT_MAX);
  return 3;
}

int CfgEncodeMaxDepth(lua_State* L) {
  Config* cfg = ConfigArgs(L, 1);
  IntegerOption(L, 1, &cfg->encode_max_depth, 1, INT_MAX);
  return 1;
}

int CfgDecodeMaxDepth(lua_State* L) {
  Config* cfg = ConfigArgs(L, 1);
  IntegerOption(L, 1, &cfg->decode_max_depth, 1, INT_MAX);
  return 1;
}

int CfgEncodeNumberPrecision(lua_State* L) {
  Config* cfg = ConfigArgs(L, 1);
  IntegerOption(L, 1, &cfg->encode_number_precision, 1, 14);
  return 1;
}

// Only a setting here: each call's buffer is the settings' own either way, kept between calls
// while it is small.
int CfgEncodeKeepBuffer(lua_State* L) {
  Config* cfg = ConfigArgs(L, 1);
  EnumOption(L, 1, &cfg->encode_keep_buffer);
  return 1;
}

int CfgEncodeInvalidNumbers(lua_State* L) {
  static const char* const kOptions[] = {"off", "on", "null", nullptr};
  Config* cfg = ConfigArgs(L, 1);
  EnumOption(L, 1, &cfg->encode_invalid_numbers, kOptions);
  return 1;
}

int CfgDecodeInvalidNumbers(lua_State* L) {
  Config* cfg = ConfigArgs(L, 1);
  EnumOption(L, 1, &cfg->decode_invalid_numbers);
  return 1;
}

// ---------------------------------------------------------------------------------------------
// The module table.

int New(lua_State* L);

// Pushes a module table with fresh settings, filled in Redis' order (so that pairs walks it in
// the same order).
void PushModule(lua_State* L) {
  static const luaL_Reg kFunctions[] = {
      {"encode", Encode},
      {"decode", Decode},
      {"encode_sparse_array", CfgEncodeSparseArray},
      {"encode_max_depth", CfgEncodeMaxDepth},
      {"decode_max_depth", CfgDecodeMaxDepth},
      {"encode_number_precision", CfgEncodeNumberPrecision},
      {"encode_keep_buffer", CfgEncodeKeepBuffer},
      {"encode_invalid_numbers", CfgEncodeInvalidNumbers},
      {"decode_invalid_numbers", CfgDecodeInvalidNumbers},
      {"new", New},
  };
  lua_newtable(L);
  auto* cfg = static_cast<Config*>(lua_newuserdata(L, sizeof(Config)));
  ByteBuffer empty{};
  empty.alloc = lua_getallocf(L, &empty.alloc_ud);
  *cfg = Config{.encode_buf = empty,
                .decode_buf = empty,
                .encode_sparse_convert = 0,
                .encode_sparse_ratio = 2,
                .encode_sparse_safe = 10,
                .encode_max_depth = 1000,
                .decode_max_depth = 1000,
                .encode_invalid_numbers = 0,
                .decode_invalid_numbers = 1,
                .encode_keep_buffer = 1,
                .encode_number_precision = 14};
  lua_createtable(L, 0, 1);
  lua_pushcfunction(L, FreeConfig);
  lua_setfield(L, -2, "__gc");
  lua_setmetatable(L, -2);
  for (const luaL_Reg& f : kFunctions) {
    lua_pushvalue(L, -1);
    lua_pushcclosure(L, f.func, 1);
    lua_setfield(L, -3, f.name);
  }
  lua_pop(L, 1);
  lua_pushlightuserdata(L, nullptr);
  lua_setfield(L, -2, "null");
  lua_pushliteral(L, "cjson");
  lua_setfield(L, -2, "_NAME");
  lua_pushliteral(L, "2.1.0");
  lua_setfield(L, -2, "_VERSION");
}

int New(lua_State* L) {
  PushModule(L);
  return 1;
}

}  // namespace

}  // namespace cjson

int OpenCjson(lua_State* L) {
  cjson::PushModule(L);
  return 1;
}

}  // namespace kv::script
