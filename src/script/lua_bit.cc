// The `bit` library that scripts see (32-bit operations on Lua numbers), with the behaviour
// Redis 7.0 ships (LuaBitOp 1.0.2, with the tohex fix of CVE-2024-31449):
//   tobit(x) x as a signed 32-bit number; bnot(x); band/bor/bxor(x1, x2, ...);
//   lshift/rshift/arshift(x, n) logical left, logical right and arithmetic right shifts;
//   rol/ror(x, n) rotations; bswap(x) the bytes reversed; tohex(x [, n]) the low |n| hex
//   digits of x (8 by default, at most 8), upper case when n is negative.
// Shift and rotation counts are taken modulo 32. Every result is a signed 32-bit number.
//
// A number becomes 32 bits as LuaBitOp makes it: 2^52 + 2^51 is added to the double and its
// low 32 bits of mantissa are the result. That rounds fractions to nearest (ties to even), wraps
// values modulo 2^32 while the double is exact (below 2^51 in magnitude), and gives the low bits
// of the rounded sum beyond; NaN and the infinities give 0. Strings that are numbers convert as
// Lua converts them; any other argument is an error ("number expected").
#include <bit>
#include <cstdint>
#include <iterator>

#include <lua5.1/lua.hpp>

namespace kv::script {

namespace {

// Argument `idx` as 32 bits (LuaBitOp's barg).
uint32_t Arg(lua_State* L, int idx) {
  double sum = lua_tonumber(L, idx) + 6755399441055744.0;  // 2^52 + 2^51
  auto b = static_cast<uint32_t>(std::bit_cast<uint64_t>(sum));
  // Only a value that is not a number converts to 0 (lua_tonumber's 0 plus the constant).
  if (b == 0 && !lua_isnumber(L, idx)) luaL_typerror(L, idx, "number");
  return b;
}

int Push(lua_State* L, uint32_t b) {
  lua_pushnumber(L, static_cast<lua_Number>(static_cast<int32_t>(b)));
  return 1;
}

int ToBit(lua_State* L) { return Push(L, Arg(L, 1)); }

int BNot(lua_State* L) { return Push(L, ~Arg(L, 1)); }

// band, bor and bxor fold their arguments from the last to the second into the first, so a
// bad argument is reported from the last one back, as LuaBitOp does.
int BAnd(lua_State* L) {
  uint32_t b = Arg(L, 1);
  for (int i = lua_gettop(L); i > 1; i--) b &= Arg(L, i);
  return Push(L, b);
}

int BOr(lua_State* L) {
  uint32_t b = Arg(L, 1);
  for (int i = lua_gettop(L); i > 1; i--) b |= Arg(L, i);
  return Push(L, b);
}

int BXor(lua_State* L) {
  uint32_t b = Arg(L, 1);
  for (int i = lua_gettop(L); i > 1; i--) b ^= Arg(L, i);
  return Push(L, b);
}

// The shift count: the second argument modulo 32. The value is converted first.
uint32_t Count(lua_State* L) { return Arg(L, 2) & 31; }

int LShift(lua_State* L) {
  uint32_t b = Arg(L, 1);
  return Push(L, b << Count(L));
}

int RShift(lua_State* L) {
  uint32_t b = Arg(L, 1);
  return Push(L, b >> Count(L));
}

int ARShift(lua_State* L) {
  uint32_t b = Arg(L, 1);
  return Push(L, static_cast<uint32_t>(static_cast<int32_t>(b) >> Count(L)));
}

int Rol(lua_State* L) {
  uint32_t b = Arg(L, 1);
  return Push(L, std::rotl(b, static_cast<int>(Count(L))));
}

int Ror(lua_State* L) {
  uint32_t b = Arg(L, 1);
  return Push(L, std::rotr(b, static_cast<int>(Count(L))));
}

int BSwap(lua_State* L) { return Push(L, __builtin_bswap32(Arg(L, 1))); }

// tohex(x [, n]): an explicit nil n is an error, as any other non-number. A negative n asks
// for upper case; INT32_MIN, whose negation overflows, counts as INT32_MIN + 1 (the fix of
// CVE-2024-31449, which the library Debian ships lacks). At most 8 digits.
int ToHex(lua_State* L) {
  uint32_t b = Arg(L, 1);
  int32_t n = lua_isnone(L, 2) ? 8 : static_cast<int32_t>(Arg(L, 2));
  const char* digits = "0123456789abcdef";
  if (n == INT32_MIN) n = INT32_MIN + 1;
  if (n < 0) {
    n = -n;
    digits = "0123456789ABCDEF";
  }
  if (n > 8) n = 8;
  char buf[8];
  for (int i = n - 1; i >= 0; i--) {
    buf[i] = digits[b & 15];
    b >>= 4;
  }
  lua_pushlstring(L, buf, static_cast<size_t>(n));
  return 1;
}

}  // namespace

int OpenBit(lua_State* L) {
  // Sized and filled in LuaBitOp's order (luaL_register's table), so that pairs(bit) walks the
  // functions in the order Redis 7.0 does.
  static const luaL_Reg kFunctions[] = {
      {"tobit", ToBit}, {"bnot", BNot},     {"band", BAnd},     {"bor", BOr},
      {"bxor", BXor},   {"lshift", LShift}, {"rshift", RShift}, {"arshift", ARShift},
      {"rol", Rol},     {"ror", Ror},       {"bswap", BSwap},   {"tohex", ToHex},
  };
  lua_createtable(L, 0, static_cast<int>(std::size(kFunctions)));
  for (const luaL_Reg& f : kFunctions) {
    lua_pushcfunction(L, f.func);
    lua_setfield(L, -2, f.name);
  }
  return 1;
}

}  // namespace kv::script
