#include "scripting/bitop.h"

#include <lauxlib.h>
#include <lua.h>

#include <cstdint>
#include <cstring>

namespace vireo {
namespace {

// A Lua number as a 32-bit pattern, as LuaBitOp defines it: the number is rounded to an
// integer (ties to even) and taken modulo 2^32. Adding 2^52 + 2^51 puts the rounded value in
// the low mantissa bits of the double, the same conversion for every input (NaN and huge values
// included) without undefined float-to-int casts.
uint32_t ToBits(lua_State* L, int index) {
  double n = lua_tonumber(L, index) + 6755399441055744.0;
  uint64_t raw;
  memcpy(&raw, &n, sizeof(raw));
  auto b = static_cast<uint32_t>(raw);
  // lua_tonumber gives 0 for a non-number; only then is the type worth a second look.
  if (b == 0 && !lua_isnumber(L, index)) luaL_typerror(L, index, "number");
  return b;
}

int Push(lua_State* L, uint32_t b) {
  lua_pushnumber(L, static_cast<lua_Number>(static_cast<int32_t>(b)));
  return 1;
}

int ToBit(lua_State* L) { return Push(L, ToBits(L, 1)); }
int BNot(lua_State* L) { return Push(L, ~ToBits(L, 1)); }

template <typename Op>
int Fold(lua_State* L, Op op) {
  uint32_t b = ToBits(L, 1);
  for (int i = lua_gettop(L); i > 1; --i) b = op(b, ToBits(L, i));
  return Push(L, b);
}
int BAnd(lua_State* L) {
  return Fold(L, [](uint32_t a, uint32_t b) { return a & b; });
}
int BOr(lua_State* L) {
  return Fold(L, [](uint32_t a, uint32_t b) { return a | b; });
}
int BXor(lua_State* L) {
  return Fold(L, [](uint32_t a, uint32_t b) { return a ^ b; });
}

// Shift counts use their low five bits only.
template <typename Op>
int Shift(lua_State* L, Op op) {
  uint32_t b = ToBits(L, 1);
  uint32_t n = ToBits(L, 2) & 31;
  return Push(L, op(b, n));
}
int LShift(lua_State* L) {
  return Shift(L, [](uint32_t b, uint32_t n) { return b << n; });
}
int RShift(lua_State* L) {
  return Shift(L, [](uint32_t b, uint32_t n) { return b >> n; });
}
int ARShift(lua_State* L) {
  return Shift(L, [](uint32_t b, uint32_t n) {
    return static_cast<uint32_t>(static_cast<int32_t>(b) >> n);
  });
}
int Rol(lua_State* L) {
  return Shift(L, [](uint32_t b, uint32_t n) { return (b << n) | (b >> ((32 - n) & 31)); });
}
int Ror(lua_State* L) {
  return Shift(L, [](uint32_t b, uint32_t n) { return (b >> n) | (b << ((32 - n) & 31)); });
}

int BSwap(lua_State* L) { return Push(L, __builtin_bswap32(ToBits(L, 1))); }

// bit.tohex(x [, n]): the low |n| hex digits of x (default 8, at most 8), upper case when n is
// negative. The width is clamped in 64-bit arithmetic, so -2^31 cannot overflow on negation.
int ToHex(lua_State* L) {
  uint32_t b = ToBits(L, 1);
  int64_t n = lua_isnone(L, 2) ? 8 : static_cast<int32_t>(ToBits(L, 2));
  const char* digits = "0123456789abcdef";
  if (n < 0) {
    n = -n;
    digits = "0123456789ABCDEF";
  }
  if (n > 8) n = 8;
  char buf[8];
  for (int64_t i = n - 1; i >= 0; --i) {
    buf[i] = digits[b & 15];
    b >>= 4;
  }
  lua_pushlstring(L, buf, static_cast<size_t>(n));
  return 1;
}

}  // namespace

int OpenBit(lua_State* L) {
  static const luaL_Reg kFunctions[] = {
      {"tobit", ToBit},   {"bnot", BNot},     {"band", BAnd},       {"bor", BOr}, {"bxor", BXor},
      {"lshift", LShift}, {"rshift", RShift}, {"arshift", ARShift}, {"rol", Rol}, {"ror", Ror},
      {"bswap", BSwap},   {"tohex", ToHex},   {nullptr, nullptr}};
  lua_newtable(L);
  luaL_register(L, nullptr, kFunctions);
  return 1;
}

}  // namespace vireo
