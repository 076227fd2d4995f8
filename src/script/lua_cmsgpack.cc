// The `cmsgpack` library that scripts see (MessagePack), with the behaviour Redis 7.0 ships
// (lua-cmsgpack 0.4.0):
//   pack(v1, v2, ...) encodes each argument and returns the concatenation;
//   unpack(s) decodes every object in s and returns them all;
//   unpack_one(s [, offset]) and unpack_limit(s, limit [, offset]) decode one, or at most
//   `limit`, objects from byte `offset` (0-based, default 0) and return first the offset where
//   decoding stopped (-1 once s is used up), then the objects. A limit and offset both 0
//   decode everything and return no offset, as unpack does.
//
// Encoding: booleans as such; numbers that are integral and fit an int64_t as the shortest
// integer form, other numbers as a float32 when they survive the round trip, else a float64;
// strings as fixstr, str8, str16 or str32; a table whose keys are exactly 1..n (numbers) as an
// array of n, any other table as a map in lua_next order; nil and everything else (functions,
// userdata, threads) as nil. A table 16 levels down encodes as nil, which also ends cycles.
// Decoding takes nil, booleans, every integer and float form, fixstr, str8/16/32, arrays and
// maps; other types (bin, ext, 0xc1) are bad data. Unsigned 64-bit values above INT64_MAX come
// back negative, as lua_Integer holds them.
//
// The stack checks and their messages are those of Redis 7.0, at the same depths: a script
// that overflows Lua's stack here fails where it fails there, with the same words. Where
// kvstore differs: pack's output is limited to kMaxPackedSize bytes (an error past it, where
// Redis 7.0 grows until memory runs out), and a long pack or unpack answers busy clients and
// ends on SCRIPT KILL as Lua code does (ScriptMustStop), where Redis 7.0 serves no one until
// it is done.
#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include <lua5.1/lua.hpp>

#include "script/lua_internal.h"

namespace kv::script {

namespace {

// How deep tables are followed before they encode as nil.
constexpr int kMaxNesting = 16;

// The longest encoding pack produces. Sixteen levels of tables that each hold the same subtable
// n times encode n^16 values: past this size pack fails rather than exhaust memory, where Redis
// 7.0 keeps going.
constexpr size_t kMaxPackedSize = size_t{1} << 30;

// A double truncated to int64_t the way the x86-64 instruction does it: NaN and values out of
// range give INT64_MIN rather than undefined behaviour.
int64_t TruncateToInt64(double d) {
  if (d >= -0x1p63 && d < 0x1p63) return static_cast<int64_t>(d);
  return INT64_MIN;
}

// Whether the number is an integer that an int64_t holds exactly (NaN and infinities are not).
bool IsInt64(double d) { return static_cast<double>(TruncateToInt64(d)) == d; }

// Whether the number is an integer that an int holds exactly.
bool IsInt(double d) {
  return d >= INT_MIN && d < 0x1p31 && static_cast<double>(static_cast<int>(d)) == d;
}

// ---------------------------------------------------------------------------------------------
// Encoding.

// Encodes Lua values into a byte buffer that is itself a userdata at a fixed stack slot, so
// that the collector accounts for it and reclaims it when an error interrupts the encoding.
class Encoder {
 public:
  // Starts with an empty buffer, pushed on the stack.
  explicit Encoder(lua_State* L) : L_(L) {
    data_ = static_cast<unsigned char*>(lua_newuserdata(L_, kInitialCapacity));
    cap_ = kInitialCapacity;
    buffer_index_ = lua_gettop(L_);
  }

  const char* data() const { return reinterpret_cast<const char*>(data_); }
  size_t size() const { return len_; }

  // The stack slots Redis 7.0 holds at this point and this encoder does not. Redis pushes each
  // argument's encoding as a string and concatenates them at the end, where this encoder appends
  // them all to one buffer; the stack checks add the difference, so they fail where Redis' do.
  void set_hidden_slots(int n) { hidden_slots_ = n; }

  // Whether the script is to end (ScriptMustStop): the encoding stopped where it was.
  bool stopped() const { return stopped_; }

  // Appends the encoding of the value at absolute stack index `idx`, `level` tables deep.
  // Returns at once, leaving the stack as it is, once stopped().
  void Encode(int idx, int level) {
    if (++values_ % kScriptPollEvery == 0 && ScriptMustStop(L_)) stopped_ = true;
    if (stopped_) return;
    int type = lua_type(L_, idx);
    if (type == LUA_TTABLE && level == kMaxNesting) type = LUA_TNIL;
    switch (type) {
      case LUA_TSTRING: {
        size_t len;
        const char* s = lua_tolstring(L_, idx, &len);
        EncodeString(s, len);
        break;
      }
      case LUA_TBOOLEAN:
        AppendByte(lua_toboolean(L_, idx) ? 0xc3 : 0xc2);
        break;
      case LUA_TNUMBER: {
        lua_Number n = lua_tonumber(L_, idx);
        if (IsInt64(n)) {
          EncodeInt(static_cast<int64_t>(n));
        } else {
          EncodeDouble(n);
        }
        break;
      }
      case LUA_TTABLE:
        if (IsArray(idx)) {
          EncodeArray(idx, level);
        } else {
          EncodeMap(idx, level);
        }
        break;
      default:
        AppendByte(0xc0);
    }
  }

 private:
  static constexpr size_t kInitialCapacity = 64;

  // luaL_checkstack as Redis 7.0 calls it, failing where it fails there: the slots Redis would
  // hold count too. One more slot than Redis uses is reserved, for a growing buffer. This frame
  // holds at most a few dozen slots above the arguments (a few per table level, 16 levels), so
  // that slot never makes the check fail where Redis' passes.
  void CheckStack(int space, const char* msg) {
    if (lua_gettop(L_) + hidden_slots_ + space > LUAI_MAXCSTACK) {
      luaL_error(L_, "stack overflow (%s)", msg);
    }
    luaL_checkstack(L_, space + 1, msg);
  }

  // Appends bytes, doubling past what is needed when the buffer is full. The new buffer replaces
  // the old one in its stack slot, which leaves the old one to the collector.
  void Append(const void* p, size_t n) {
    if (cap_ - len_ < n) {
      if (n > kMaxPackedSize - len_) {
        luaL_error(L_, "MessagePack pack output larger than %d bytes.",
                   static_cast<int>(kMaxPackedSize));
      }
      size_t cap = std::min((len_ + n) * 2, kMaxPackedSize);
      auto* data = static_cast<unsigned char*>(lua_newuserdata(L_, cap));
      std::memcpy(data, data_, len_);
      lua_replace(L_, buffer_index_);
      data_ = data;
      cap_ = cap;
    }
    std::memcpy(data_ + len_, p, n);
    len_ += n;
  }

  void AppendByte(unsigned char b) { Append(&b, 1); }

  // A type byte followed by the low `bytes` bytes of `v`, most significant first.
  void AppendTagged(unsigned char tag, uint64_t v, int bytes) {
    unsigned char b[9];
    b[0] = tag;
    for (int i = bytes; i >= 1; i--) {
      b[i] = static_cast<unsigned char>(v & 0xff);
      v >>= 8;
    }
    Append(b, bytes + 1);
  }

  void EncodeString(const char* s, size_t len) {
    if (len < 32) {
      AppendByte(static_cast<unsigned char>(0xa0 | len));
    } else if (len <= 0xff) {
      AppendTagged(0xd9, len, 1);
    } else if (len <= 0xffff) {
      AppendTagged(0xda, len, 2);
    } else {
      AppendTagged(0xdb, len, 4);
    }
    Append(s, len);
  }

  void EncodeInt(int64_t n) {
    auto u = static_cast<uint64_t>(n);
    if (n >= 0) {
      if (n <= 127) {
        AppendByte(static_cast<unsigned char>(n));  // Positive fixint.
      } else if (n <= 0xff) {
        AppendTagged(0xcc, u, 1);
      } else if (n <= 0xffff) {
        AppendTagged(0xcd, u, 2);
      } else if (n <= 0xffffffffLL) {
        AppendTagged(0xce, u, 4);
      } else {
        AppendTagged(0xcf, u, 8);
      }
    } else {
      if (n >= -32) {
        AppendByte(static_cast<unsigned char>(u & 0xff));  // Negative fixint.
      } else if (n >= -128) {
        AppendTagged(0xd0, u, 1);
      } else if (n >= -32768) {
        AppendTagged(0xd1, u, 2);
      } else if (n >= -2147483648LL) {
        AppendTagged(0xd2, u, 4);
      } else {
        AppendTagged(0xd3, u, 8);
      }
    }
  }

  void EncodeDouble(double d) {
    auto f = static_cast<float>(d);
    if (d == static_cast<double>(f)) {
      uint32_t bits;
      std::memcpy(&bits, &f, sizeof(bits));
      AppendTagged(0xca, bits, 4);
    } else {
      uint64_t bits;
      std::memcpy(&bits, &d, sizeof(bits));
      AppendTagged(0xcb, bits, 8);
    }
  }

  // Whether every key of the table at `idx` is a positive number holding an int, and the
  // largest equals their count: the keys are then exactly 1..n.
  bool IsArray(int idx) {
    int top = lua_gettop(L_);
    CheckStack(2, "in function table_is_an_array");
    int count = 0, max = 0;
    lua_pushnil(L_);
    while (lua_next(L_, idx)) {
      lua_pop(L_, 1);
      lua_Number n;
      if (lua_type(L_, -1) != LUA_TNUMBER || (n = lua_tonumber(L_, -1)) <= 0 || !IsInt(n)) {
        lua_settop(L_, top);
        return false;
      }
      if (n > max) max = static_cast<int>(n);
      count++;
    }
    lua_settop(L_, top);
    return max == count;
  }

  void EncodeArray(int idx, int level) {
    size_t len = lua_objlen(L_, idx);
    if (len <= 15) {
      AppendByte(static_cast<unsigned char>(0x90 | len));
    } else if (len <= 0xffff) {
      AppendTagged(0xdc, len, 2);
    } else {
      AppendTagged(0xdd, len, 4);
    }
    CheckStack(1, "in function mp_encode_lua_table_as_array");
    for (size_t j = 1; j <= len; j++) {
      lua_pushnumber(L_, static_cast<lua_Number>(j));
      lua_gettable(L_, idx);
      Encode(lua_gettop(L_), level + 1);
      if (stopped_) return;
      lua_pop(L_, 1);
    }
  }

  void EncodeMap(int idx, int level) {
    // Counting the pairs takes a first pass: the header precedes them.
    CheckStack(3, "in function mp_encode_lua_table_as_map");
    size_t len = 0;
    lua_pushnil(L_);
    while (lua_next(L_, idx)) {
      lua_pop(L_, 1);
      len++;
    }
    if (len <= 15) {
      AppendByte(static_cast<unsigned char>(0x80 | len));
    } else if (len <= 0xffff) {
      AppendTagged(0xde, len, 2);
    } else {
      AppendTagged(0xdf, len, 4);
    }
    lua_pushnil(L_);
    while (lua_next(L_, idx)) {
      // The key is encoded from a copy on top, as Redis 7.0 does it, which keeps the stack
      // as deep as there (for the stack checks) and the original key intact for lua_next.
      lua_pushvalue(L_, -2);
      Encode(lua_gettop(L_), level + 1);
      lua_pop(L_, 1);
      Encode(lua_gettop(L_), level + 1);
      if (stopped_) return;
      lua_pop(L_, 1);
    }
  }

  lua_State* L_;
  unsigned char* data_;
  size_t len_ = 0;
  size_t cap_;
  int buffer_index_;
  int hidden_slots_ = 0;
  unsigned values_ = 0;   // encoded so far (for ScriptMustStop)
  bool stopped_ = false;  // the script is to end: unwind
};

// cmsgpack.pack(v1, v2, ...).
int Pack(lua_State* L) {
  int nargs = lua_gettop(L);
  if (nargs == 0) return luaL_argerror(L, 0, "MessagePack pack needs input.");
  if (!lua_checkstack(L, nargs)) {
    return luaL_argerror(L, 0, "Too many arguments for MessagePack pack.");
  }
  Encoder encoder(L);
  // Redis 7.0 also checks for one free slot before each argument; after the check above that
  // cannot fail, so it is left out.
  for (int i = 1; i <= nargs; i++) {
    // While Redis 7.0 encodes argument i, it holds the i - 1 strings encoded before it and a
    // copy of the argument, where this frame holds the buffer.
    encoder.set_hidden_slots(i - 1);
    encoder.Encode(i, 0);
    if (encoder.stopped()) {
      lua_pushnil(L);
      return 1;
    }
  }
  lua_pushlstring(L, encoder.data(), encoder.size());
  return 1;
}

// ---------------------------------------------------------------------------------------------
// Decoding.

// kStopped: the script is to end (ScriptMustStop), and decoding stopped where it was.
enum class DecodeError { kNone, kMissingBytes, kBadFormat, kStopped };

// The bytes still to decode.
struct Cursor {
  const unsigned char* p;
  size_t left;
  DecodeError err;
  unsigned values;  // decoded so far (for ScriptMustStop)
};

// Whether `n` more bytes are there; sets the error when they are not.
bool Need(Cursor* c, size_t n) {
  if (c->left >= n) return true;
  c->err = DecodeError::kMissingBytes;
  return false;
}

void Consume(Cursor* c, size_t n) {
  c->p += n;
  c->left -= n;
}

// The big-endian unsigned integer of `bytes` bytes at p.
uint64_t ReadBig(const unsigned char* p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; i++) v = (v << 8) | p[i];
  return v;
}

void DecodeValue(lua_State* L, Cursor* c);

void DecodeArray(lua_State* L, Cursor* c, size_t len) {
  lua_newtable(L);
  luaL_checkstack(L, 1, "in function mp_decode_to_lua_array");
  for (int index = 1; len > 0; len--, index++) {
    lua_pushnumber(L, index);
    DecodeValue(L, c);
    if (c->err != DecodeError::kNone) return;
    lua_settable(L, -3);
  }
}

void DecodeMap(lua_State* L, Cursor* c, size_t len) {
  lua_newtable(L);
  for (; len > 0; len--) {
    DecodeValue(L, c);  // The key.
    if (c->err != DecodeError::kNone) return;
    DecodeValue(L, c);  // The value.
    if (c->err != DecodeError::kNone) return;
    // A nil or NaN key raises Lua's own error here ("table index is nil").
    lua_settable(L, -3);
  }
}

// Pushes the object at the cursor and moves past it, or sets the cursor's error (and may leave
// a partial value pushed).
void DecodeValue(lua_State* L, Cursor* c) {
  if (!Need(c, 1)) return;
  if (++c->values % kScriptPollEvery == 0 && ScriptMustStop(L)) {
    c->err = DecodeError::kStopped;
    return;
  }
  // The values of a top-level stream pile up on the stack, one more each time.
  luaL_checkstack(L, 1, "too many return values at once; use unpack_one or unpack_limit instead.");
  unsigned char tag = c->p[0];
  switch (tag) {
    case 0xc0:
      lua_pushnil(L);
      Consume(c, 1);
      return;
    case 0xc2:
    case 0xc3:
      lua_pushboolean(L, tag == 0xc3);
      Consume(c, 1);
      return;
    case 0xcc:  // uint 8, 16, 32, 64.
    case 0xcd:
    case 0xce:
    case 0xcf: {
      int bytes = 1 << (tag - 0xcc);
      if (!Need(c, 1 + bytes)) return;
      // Through lua_Integer, which turns values above INT64_MAX negative.
      lua_pushinteger(L, static_cast<lua_Integer>(ReadBig(c->p + 1, bytes)));
      Consume(c, 1 + bytes);
      return;
    }
    case 0xd0:  // int 8, 16, 32, 64.
    case 0xd1:
    case 0xd2:
    case 0xd3: {
      int bytes = 1 << (tag - 0xd0);
      if (!Need(c, 1 + bytes)) return;
      uint64_t v = ReadBig(c->p + 1, bytes);
      int shift = 64 - 8 * bytes;  // Sign-extends from the value's top bit.
      auto n = static_cast<int64_t>(v << shift) >> shift;
      lua_pushnumber(L, static_cast<lua_Number>(n));
      Consume(c, 1 + bytes);
      return;
    }
    case 0xca: {
      if (!Need(c, 5)) return;
      auto bits = static_cast<uint32_t>(ReadBig(c->p + 1, 4));
      float f;
      std::memcpy(&f, &bits, sizeof(f));
      lua_pushnumber(L, f);
      Consume(c, 5);
      return;
    }
    case 0xcb: {
      if (!Need(c, 9)) return;
      uint64_t bits = ReadBig(c->p + 1, 8);
      double d;
      std::memcpy(&d, &bits, sizeof(d));
      lua_pushnumber(L, d);
      Consume(c, 9);
      return;
    }
    case 0xd9:  // str 8, 16, 32.
    case 0xda:
    case 0xdb: {
      int bytes = 1 << (tag - 0xd9);
      if (!Need(c, 1 + bytes)) return;
      size_t len = ReadBig(c->p + 1, bytes);
      Consume(c, 1 + bytes);
      if (!Need(c, len)) return;
      lua_pushlstring(L, reinterpret_cast<const char*>(c->p), len);
      Consume(c, len);
      return;
    }
    case 0xdc:  // array 16, 32.
    case 0xdd: {
      int bytes = tag == 0xdc ? 2 : 4;
      if (!Need(c, 1 + bytes)) return;
      size_t len = ReadBig(c->p + 1, bytes);
      Consume(c, 1 + bytes);
      DecodeArray(L, c, len);
      return;
    }
    case 0xde:  // map 16, 32.
    case 0xdf: {
      int bytes = tag == 0xde ? 2 : 4;
      if (!Need(c, 1 + bytes)) return;
      size_t len = ReadBig(c->p + 1, bytes);
      Consume(c, 1 + bytes);
      DecodeMap(L, c, len);
      return;
    }
    default:
      break;
  }
  if ((tag & 0x80) == 0) {  // Positive fixint.
    lua_pushinteger(L, tag);
    Consume(c, 1);
  } else if ((tag & 0xe0) == 0xe0) {  // Negative fixint.
    lua_pushinteger(L, static_cast<int8_t>(tag));
    Consume(c, 1);
  } else if ((tag & 0xe0) == 0xa0) {  // Fixstr.
    size_t len = tag & 0x1f;
    if (!Need(c, 1 + len)) return;
    lua_pushlstring(L, reinterpret_cast<const char*>(c->p + 1), len);
    Consume(c, 1 + len);
  } else if ((tag & 0xf0) == 0x90) {  // Fixarray.
    Consume(c, 1);
    DecodeArray(L, c, tag & 0xf);
  } else if ((tag & 0xf0) == 0x80) {  // Fixmap.
    Consume(c, 1);
    DecodeMap(L, c, tag & 0xf);
  } else {
    c->err = DecodeError::kBadFormat;
  }
}

// Decodes up to `limit` objects of argument 1 from byte `offset`; both 0 mean everything, and
// no offset among the results.
int UnpackFull(lua_State* L, lua_Integer limit, lua_Integer offset) {
  bool decode_all = limit == 0 && offset == 0;
  size_t len;
  const char* s = luaL_checklstring(L, 1, &len);
  if (offset < 0 || limit < 0) {
    // The message shows the input's length as the limit, as Redis 7.0's does.
    return luaL_error(L, "Invalid request to unpack with offset of %d and limit of %d.",
                      static_cast<int>(offset), static_cast<int>(len));
  }
  if (static_cast<size_t>(offset) > len) {
    return luaL_error(L, "Start offset %d greater than input length %d.", static_cast<int>(offset),
                      static_cast<int>(len));
  }
  if (decode_all) limit = INT_MAX;
  Cursor c{reinterpret_cast<const unsigned char*>(s) + offset, len - offset, DecodeError::kNone, 0};
  int count = 0;
  for (; c.left > 0 && count < limit; count++) {
    DecodeValue(L, &c);
    if (c.err == DecodeError::kMissingBytes) return luaL_error(L, "Missing bytes in input.");
    if (c.err == DecodeError::kBadFormat) return luaL_error(L, "Bad data format in input.");
    if (c.err == DecodeError::kStopped) return 0;  // No results: the hook ends the script.
  }
  if (decode_all) return count;
  luaL_checkstack(L, 1, "in function mp_unpack_full");
  lua_pushinteger(L, c.left == 0 ? -1 : static_cast<lua_Integer>(len - c.left));
  // The offset goes first, right above the input string.
  lua_insert(L, 2);
  return count + 1;
}

// cmsgpack.unpack(s).
int Unpack(lua_State* L) { return UnpackFull(L, 0, 0); }

// cmsgpack.unpack_one(s [, offset]).
int UnpackOne(lua_State* L) {
  lua_Integer offset = luaL_optinteger(L, 2, 0);
  if (lua_gettop(L) > 1) lua_settop(L, 1);
  return UnpackFull(L, 1, offset);
}

// cmsgpack.unpack_limit(s, limit [, offset]).
int UnpackLimit(lua_State* L) {
  lua_Integer limit = luaL_checkinteger(L, 2);
  lua_Integer offset = luaL_optinteger(L, 3, 0);
  if (lua_gettop(L) > 1) lua_settop(L, 1);
  return UnpackFull(L, limit, offset);
}

}  // namespace

int OpenCmsgpack(lua_State* L) {
  lua_createtable(L, 0, 8);
  lua_pushcfunction(L, Pack);
  lua_setfield(L, -2, "pack");
  lua_pushcfunction(L, Unpack);
  lua_setfield(L, -2, "unpack");
  lua_pushcfunction(L, UnpackOne);
  lua_setfield(L, -2, "unpack_one");
  lua_pushcfunction(L, UnpackLimit);
  lua_setfield(L, -2, "unpack_limit");
  lua_pushliteral(L, "cmsgpack");
  lua_setfield(L, -2, "_NAME");
  lua_pushliteral(L, "lua-cmsgpack 0.4.0");
  lua_setfield(L, -2, "_VERSION");
  lua_pushliteral(L, "Copyright (C) 2012, Salvatore Sanfilippo");
  lua_setfield(L, -2, "_COPYRIGHT");
  lua_pushliteral(L, "MessagePack C implementation for Lua");
  lua_setfield(L, -2, "_DESCRIPTION");
  return 1;
}

}  // namespace kv::script
