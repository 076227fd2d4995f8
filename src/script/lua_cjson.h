// What the files of the `cjson` library share (lua_cjson.cc: the module table and its settings;
// lua_cjson_encode.cc: cjson.encode; lua_cjson_decode.cc: cjson.decode): the settings of a
// module table and the byte buffers they own. Internal to those files.
#pragma once

#include <cstddef>

#include <lua5.1/lua.hpp>

namespace kv::script::cjson {

// A byte buffer from the interpreter's allocator (so that the engine's limits on allocations
// apply to it), owned by the settings userdata, whose __gc frees it: a Lua error thrown mid-call
// longjmps past the C frames, and the buffer must not leak with them.
struct ByteBuffer {
  lua_Alloc alloc;
  void* alloc_ud;
  char* data;
  size_t len;
  size_t cap;
};

void FreeBuffer(ByteBuffer* b);
// Makes the buffer hold `cap` bytes (its contents kept); false when the allocation fails.
bool GrowBuffer(ByteBuffer* b, size_t cap);
// Empties the buffer for the next call, freeing it when it is large or not to be kept.
void ResetBuffer(ByteBuffer* b, bool keep);

// The settings of one module table, with Redis' defaults. Plain data in a userdata.
struct Config {
  ByteBuffer encode_buf;
  ByteBuffer decode_buf;
  int encode_sparse_convert;
  int encode_sparse_ratio;
  int encode_sparse_safe;
  int encode_max_depth;
  int decode_max_depth;
  int encode_invalid_numbers;  // 0 off (an error), 1 on (inf, nan), 2 "null"
  int decode_invalid_numbers;
  int encode_keep_buffer;
  int encode_number_precision;
};

// The settings of the module table the running C function belongs to (its upvalue); raises a
// Lua error when it has none.
Config* FetchConfig(lua_State* L);

// cjson.encode(v) and cjson.decode(s), each a C closure over its module table's settings.
int Encode(lua_State* L);
int Decode(lua_State* L);

}  // namespace kv::script::cjson
