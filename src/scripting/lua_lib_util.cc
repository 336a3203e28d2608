#include "scripting/lua_lib_util.h"

#include <lauxlib.h>

#include <cstdint>
#include <cstring>

namespace vireo {
namespace {

constexpr const char* kMetatable = "vireo.buffer";
constexpr size_t kMinCapacity = 64;

void Release(lua_State* L, LuaBuffer* b) {
  if (b->data == nullptr) return;
  void* ud = nullptr;
  lua_Alloc alloc = lua_getallocf(L, &ud);
  alloc(ud, b->data, b->cap, 0);
  b->data = nullptr;
  b->len = 0;
  b->cap = 0;
}

int CollectBuffer(lua_State* L) {
  Release(L, static_cast<LuaBuffer*>(lua_touserdata(L, 1)));
  return 0;
}

}  // namespace

LuaBuffer* PushLuaBuffer(lua_State* L) {
  auto* b = static_cast<LuaBuffer*>(lua_newuserdata(L, sizeof(LuaBuffer)));
  b->data = nullptr;
  b->len = 0;
  b->cap = 0;
  if (luaL_newmetatable(L, kMetatable) != 0) {
    lua_pushcfunction(L, CollectBuffer);
    lua_setfield(L, -2, "__gc");
  }
  lua_setmetatable(L, -2);
  return b;
}

void LuaBufferReserve(lua_State* L, LuaBuffer* b, size_t extra) {
  if (b->cap - b->len >= extra) return;
  if (extra > SIZE_MAX - b->len) luaL_error(L, "not enough memory");
  size_t need = b->len + extra;
  // Doubling keeps appends amortised O(1); a huge single request gets exactly what it asks for.
  size_t want = b->cap > SIZE_MAX / 2 ? need : b->cap * 2;
  if (want < need) want = need;
  if (want < kMinCapacity) want = kMinCapacity;
  void* ud = nullptr;
  lua_Alloc alloc = lua_getallocf(L, &ud);
  void* grown = alloc(ud, b->data, b->cap, want);
  if (grown == nullptr && want > need) {
    want = need;
    grown = alloc(ud, b->data, b->cap, want);
  }
  if (grown == nullptr) luaL_error(L, "not enough memory");
  b->data = static_cast<char*>(grown);
  b->cap = want;
}

void LuaBufferAppend(lua_State* L, LuaBuffer* b, const char* s, size_t n) {
  if (n == 0) return;
  LuaBufferReserve(L, b, n);
  memcpy(b->data + b->len, s, n);
  b->len += n;
}

void LuaBufferPushResult(lua_State* L, LuaBuffer* b) {
  lua_pushlstring(L, b->len == 0 ? "" : b->data, b->len);
  Release(L, b);
}

}  // namespace vireo
