#include "scripting/safe_unpack.h"

#include <lauxlib.h>
#include <lua.h>

#include <cstdint>

namespace vireo {
namespace {

// unpack(t [, i [, j]]) returns t[i], ..., t[j]; j defaults to #t.
int Unpack(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  int64_t first = luaL_optint(L, 2, 1);
  int64_t last =
      lua_isnoneornil(L, 3) ? luaL_getn(L, 1) : static_cast<int64_t>(luaL_checkint(L, 3));
  if (first > last) return 0;
  int64_t count = last - first + 1;
  if (count >= INT32_MAX || !lua_checkstack(L, static_cast<int>(count))) {
    return luaL_error(L, "too many results to unpack");
  }
  for (int64_t i = first; i <= last; ++i) lua_rawgeti(L, 1, static_cast<int>(i));
  return static_cast<int>(count);
}

}  // namespace

int OpenSafeUnpack(lua_State* L) {
  lua_pushcfunction(L, Unpack);
  lua_setglobal(L, "unpack");
  return 0;
}

}  // namespace vireo
