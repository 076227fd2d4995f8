// The `struct` library that scripts see (struct.pack, struct.unpack, struct.size), with the
// behaviour Redis 7.0 ships: binary records described by a format string.
//
// Format options:
//   '>' big endian, '<' little endian (the native order until one of them is given);
//   '!n' maximum alignment n, a power of 2 (plain '!' is the platform's largest, 8);
//   'x' one zero byte of padding;
//   'b'/'B' signed/unsigned char, 'h'/'H' short, 'l'/'L' long, 'T' size_t;
//   'i'/'I' int, or with a count ('i3', 'I8') an integer of that many bytes, at most 32;
//   'cn' n chars (default 1): packing 'c0' takes the whole string, unpacking 'c0' takes the
//        length from the number read just before it;
//   's' a zero-terminated string; 'f' float; 'd' double; ' ' ignored.
// Values are Lua numbers (doubles) both ways. Where C leaves a conversion undefined (a double
// out of an integer's range, a shift wider than the integer), the code does what the x86-64
// instructions do, so that the bytes and values are those Redis 7.0 gives on that platform.
#include <bit>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include <lua5.1/lua.hpp>

namespace kv::script {

namespace {

// The widest integer option, in bytes ('i32').
constexpr int kMaxIntSize = 32;

// The default of '!': the alignment a double gets in a struct, or an int's when larger.
struct AlignProbe {
  char c;
  double d;
};
constexpr size_t kPadding = sizeof(AlignProbe) - sizeof(double);
constexpr int kMaxAlign = static_cast<int>(kPadding > sizeof(int) ? kPadding : sizeof(int));

// The sizes of C's short and long on the LP64 platforms kvstore runs on.
constexpr size_t kShortSize = sizeof(int16_t);
constexpr size_t kLongSize = sizeof(int64_t);

constexpr bool kNativeLittle = std::endian::native == std::endian::little;

// The state a format string sets as it goes: byte order and maximum alignment.
struct Options {
  bool little = kNativeLittle;
  int align = 1;
};

// ASCII classes, independent of the process locale.
bool IsDigit(int c) { return c >= '0' && c <= '9'; }
bool IsLower(int c) { return c >= 'a' && c <= 'z'; }
bool IsAlnum(int c) { return IsDigit(c) || IsLower(c) || (c >= 'A' && c <= 'Z'); }

bool IsPowerOf2(int x) { return x > 0 && (x & (x - 1)) == 0; }

// A double truncated to int64_t the way the x86-64 instruction does it: NaN and values out of
// range give INT64_MIN rather than undefined behaviour.
int64_t TruncateToInt64(double d) {
  if (d >= -0x1p63 && d < 0x1p63) return static_cast<int64_t>(d);
  return INT64_MIN;
}

// A double converted to uint64_t the way GCC compiles it for x86-64: below 2^63 (and NaN)
// through the signed truncation, from 2^63 up by truncating d - 2^63 and flipping the top bit
// (so 2^64 and beyond give 0).
uint64_t TruncateToUint64(double d) {
  if (!(d >= 0x1p63)) return static_cast<uint64_t>(TruncateToInt64(d));
  return static_cast<uint64_t>(TruncateToInt64(d - 0x1p63)) ^ (uint64_t{1} << 63);
}

// Reads the decimal count that follows an option, or returns `def` when there is none. The
// count must fit an int.
int GetNum(lua_State* L, const char** fmt, int def) {
  if (!IsDigit(**fmt)) return def;
  int a = 0;
  do {
    int digit = **fmt - '0';
    if (a > INT_MAX / 10 || a * 10 > INT_MAX - digit) luaL_error(L, "integral size overflow");
    a = a * 10 + digit;
    ++*fmt;
  } while (IsDigit(**fmt));
  return a;
}

// The size in bytes of option `opt`, reading its count from *fmt where it takes one. Options
// that are not values ('s' too, whose size depends on the data) have size 0.
size_t OptSize(lua_State* L, int opt, const char** fmt) {
  switch (opt) {
    case 'B':
    case 'b':
      return sizeof(char);
    case 'H':
    case 'h':
      return kShortSize;
    case 'L':
    case 'l':
      return kLongSize;
    case 'T':
      return sizeof(size_t);
    case 'f':
      return sizeof(float);
    case 'd':
      return sizeof(double);
    case 'x':
      return 1;
    case 'c':
      return GetNum(L, fmt, 1);
    case 'i':
    case 'I': {
      int size = GetNum(L, fmt, sizeof(int));
      if (size > kMaxIntSize) {
        luaL_error(L, "integral size %d is larger than limit of %d", size, kMaxIntSize);
      }
      return size;
    }
    default:
      return 0;
  }
}

// The padding that puts an item of `size` bytes at offset `len` on its alignment: the smaller
// of its size and the maximum alignment. Chars are never aligned. The arithmetic is the mask
// formula even for sizes that are not powers of 2 ('i3'), as Redis 7.0 computes it.
size_t GetToAlign(size_t len, const Options& o, int opt, size_t size) {
  if (size == 0 || opt == 'c') return 0;
  if (size > static_cast<size_t>(o.align)) size = o.align;
  return (size - (len & (size - 1))) & (size - 1);
}

// Applies an option that is not a value: a space, a byte order or an alignment. Anything else
// is an invalid option.
void ControlOption(lua_State* L, int opt, const char** fmt, Options* o) {
  switch (opt) {
    case ' ':
      return;
    case '>':
      o->little = false;
      return;
    case '<':
      o->little = true;
      return;
    case '!': {
      int a = GetNum(L, fmt, kMaxAlign);
      if (!IsPowerOf2(a)) luaL_error(L, "alignment %d is not a power of 2", a);
      o->align = a;
      return;
    }
    default: {
      const char* msg = lua_pushfstring(L, "invalid format option '%c'", opt);
      luaL_argerror(L, 1, msg);
    }
  }
}

// Copies `size` bytes of a native value into `out` in the requested byte order.
void OrderBytes(const void* value, size_t size, bool little, char* out) {
  std::memcpy(out, value, size);
  if (little != kNativeLittle) {
    for (size_t i = 0, j = size - 1; i < j; i++, j--) {
      char t = out[i];
      out[i] = out[j];
      out[j] = t;
    }
  }
}

// Appends argument `arg` as an integer of `size` bytes. Negative numbers go through int64_t,
// others through uint64_t; bytes past the eighth are zero (also for negative numbers).
void PutInteger(lua_State* L, luaL_Buffer* b, int arg, bool little, size_t size) {
  lua_Number n = luaL_checknumber(L, arg);
  uint64_t value = n < 0 ? static_cast<uint64_t>(TruncateToInt64(n)) : TruncateToUint64(n);
  char buff[kMaxIntSize];
  for (size_t i = 0; i < size; i++) {
    buff[little ? i : size - 1 - i] = static_cast<char>(value & 0xff);
    value >>= 8;
  }
  luaL_addlstring(b, buff, size);
}

// Reads an integer of `size` bytes. Only the last eight bytes in significance order survive.
// The sign bit of a signed value is bit size*8-1, with the shift count taken modulo 64 as
// x86-64 does: so 'i0' reads 0 and wider integers sign-extend from bit (size*8-1) % 64.
lua_Number GetInteger(const char* buff, bool little, bool is_signed, size_t size) {
  uint64_t l = 0;
  for (size_t i = 0; i < size; i++) {
    l <<= 8;
    l |= static_cast<unsigned char>(buff[little ? size - 1 - i : i]);
  }
  if (!is_signed) return static_cast<lua_Number>(l);
  uint64_t mask = ~uint64_t{0} << ((size * 8 - 1) & 63);
  if (l & mask) l |= mask;
  return static_cast<lua_Number>(static_cast<int64_t>(l));
}

// struct.pack(fmt, v1, v2, ...): the values packed into a string.
int Pack(lua_State* L) {
  const char* fmt = luaL_checkstring(L, 1);
  Options o;
  int arg = 2;
  size_t total = 0;
  // A nil between the arguments and the buffer's pieces: the first missing value is reported
  // as "got nil", as Redis 7.0 reports it.
  lua_pushnil(L);
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  while (*fmt != '\0') {
    int opt = static_cast<unsigned char>(*fmt++);
    size_t size = OptSize(L, opt, &fmt);
    size_t pad = GetToAlign(total, o, opt, size);
    total += pad;
    for (; pad > 0; pad--) luaL_addchar(&b, '\0');
    switch (opt) {
      case 'b':
      case 'B':
      case 'h':
      case 'H':
      case 'l':
      case 'L':
      case 'T':
      case 'i':
      case 'I':
        PutInteger(L, &b, arg++, o.little, size);
        break;
      case 'x':
        luaL_addchar(&b, '\0');
        break;
      case 'f': {
        float f = static_cast<float>(luaL_checknumber(L, arg++));
        char out[sizeof(f)];
        OrderBytes(&f, sizeof(f), o.little, out);
        luaL_addlstring(&b, out, sizeof(f));
        break;
      }
      case 'd': {
        double d = luaL_checknumber(L, arg++);
        char out[sizeof(d)];
        OrderBytes(&d, sizeof(d), o.little, out);
        luaL_addlstring(&b, out, sizeof(d));
        break;
      }
      case 'c':
      case 's': {
        size_t l;
        const char* s = luaL_checklstring(L, arg++, &l);
        if (size == 0) size = l;
        // The error names the argument after the string, as Redis 7.0's does.
        luaL_argcheck(L, l >= size, arg, "string too short");
        luaL_addlstring(&b, s, size);
        if (opt == 's') {
          luaL_addchar(&b, '\0');
          size++;
        }
        break;
      }
      default:
        ControlOption(L, opt, &fmt, &o);
    }
    total += size;
  }
  luaL_pushresult(&b);
  return 1;
}

// struct.unpack(fmt, data [, init]): the values read from data starting at byte init (1-based,
// default 1), then the position just past them.
int Unpack(lua_State* L) {
  const char* fmt = luaL_checkstring(L, 1);
  size_t ld;
  const char* data = luaL_checklstring(L, 2, &ld);
  // A negative init wraps around, as the unsigned position does in Redis 7.0.
  size_t pos = static_cast<size_t>(luaL_optinteger(L, 3, 1));
  luaL_argcheck(L, pos > 0, 3, "offset must be 1 or greater");
  pos--;
  int n = 0;  // The values pushed so far.
  Options o;
  while (*fmt != '\0') {
    int opt = static_cast<unsigned char>(*fmt++);
    size_t size = OptSize(L, opt, &fmt);
    pos += GetToAlign(pos, o, opt, size);
    luaL_argcheck(L, size <= ld && pos <= ld - size, 2, "data string too short");
    // Room for this value and the final position.
    luaL_checkstack(L, 2, "too many results");
    switch (opt) {
      case 'b':
      case 'B':
      case 'h':
      case 'H':
      case 'l':
      case 'L':
      case 'T':
      case 'i':
      case 'I':
        lua_pushnumber(L, GetInteger(data + pos, o.little, IsLower(opt), size));
        n++;
        break;
      case 'x':
        break;
      case 'f': {
        float f;
        char in[sizeof(f)];
        OrderBytes(data + pos, sizeof(f), o.little, in);
        std::memcpy(&f, in, sizeof(f));
        lua_pushnumber(L, f);
        n++;
        break;
      }
      case 'd': {
        double d;
        char in[sizeof(d)];
        OrderBytes(data + pos, sizeof(d), o.little, in);
        std::memcpy(&d, in, sizeof(d));
        lua_pushnumber(L, d);
        n++;
        break;
      }
      case 'c': {
        if (size == 0) {
          // The length is the value just read (a number, or a string that converts to one),
          // which is consumed.
          if (n == 0 || !lua_isnumber(L, -1)) luaL_error(L, "format 'c0' needs a previous size");
          size = TruncateToUint64(lua_tonumber(L, -1));
          lua_pop(L, 1);
          n--;
          luaL_argcheck(L, size <= ld && pos <= ld - size, 2, "data string too short");
        }
        lua_pushlstring(L, data + pos, size);
        n++;
        break;
      }
      case 's': {
        const void* end = std::memchr(data + pos, '\0', ld - pos);
        if (end == nullptr) luaL_error(L, "unfinished string in data");
        size = static_cast<size_t>(static_cast<const char*>(end) - (data + pos)) + 1;
        lua_pushlstring(L, data + pos, size - 1);
        n++;
        break;
      }
      default:
        ControlOption(L, opt, &fmt, &o);
    }
    pos += size;
  }
  lua_pushinteger(L, static_cast<lua_Integer>(pos + 1));
  return n + 1;
}

// struct.size(fmt): the bytes fmt packs into, which must not depend on the data ('s', 'c0').
// Letters and digits that are not options count as nothing here, as Redis 7.0 lets them.
int Size(lua_State* L) {
  const char* fmt = luaL_checkstring(L, 1);
  Options o;
  size_t pos = 0;
  while (*fmt != '\0') {
    int opt = static_cast<unsigned char>(*fmt++);
    size_t size = OptSize(L, opt, &fmt);
    pos += GetToAlign(pos, o, opt, size);
    if (opt == 's') {
      luaL_argerror(L, 1, "option 's' has no fixed size");
    } else if (opt == 'c' && size == 0) {
      luaL_argerror(L, 1, "option 'c0' has no fixed size");
    }
    if (!IsAlnum(opt)) ControlOption(L, opt, &fmt, &o);
    pos += size;
  }
  lua_pushinteger(L, static_cast<lua_Integer>(pos));
  return 1;
}

}  // namespace

int OpenStruct(lua_State* L) {
  lua_createtable(L, 0, 3);
  lua_pushcfunction(L, Pack);
  lua_setfield(L, -2, "pack");
  lua_pushcfunction(L, Unpack);
  lua_setfield(L, -2, "unpack");
  lua_pushcfunction(L, Size);
  lua_setfield(L, -2, "size");
  return 1;
}

}  // namespace kv::script
