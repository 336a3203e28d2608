// Helpers shared by vireo's own Lua libraries (cjson, cmsgpack).
//
// LuaBuffer: a growable byte buffer owned by the Lua state. Lua errors unwind with longjmp, so a
// library function may not hold a C++ object with a destructor (std::string, std::vector) across
// any call that can raise. The buffer lives in a full userdata on the Lua stack instead; its
// storage comes from the state's allocator (so any limit the allocator enforces applies), and a
// __gc metamethod frees it, so an error at any point (bad input, nesting limit, out of memory)
// leaks nothing. Every size is computed with overflow checks, and an allocation failure raises a
// Lua error instead of aborting the server.
#pragma once

#include <lua.h>

#include <cmath>
#include <cstddef>

namespace vireo {

struct LuaBuffer {
  char* data;
  size_t len;
  size_t cap;
};

// Pushes a new empty buffer onto the stack and returns it.
LuaBuffer* PushLuaBuffer(lua_State* L);

// Makes room for `extra` more bytes; raises "not enough memory" when the size overflows or the
// allocator refuses.
void LuaBufferReserve(lua_State* L, LuaBuffer* b, size_t extra);

// Appends after reserving room.
void LuaBufferAppend(lua_State* L, LuaBuffer* b, const char* s, size_t n);
inline void LuaBufferAppendChar(lua_State* L, LuaBuffer* b, char c) {
  if (b->len == b->cap) LuaBufferReserve(L, b, 1);
  b->data[b->len++] = c;
}

// Pushes the contents as a Lua string and releases the storage at once (the userdata itself is
// collected later; its __gc then has nothing left to free).
void LuaBufferPushResult(lua_State* L, LuaBuffer* b);

// Calls on_key(k) for each key of the table on top of the stack while every key is an integer
// >= 1 (in table order); false at the first other key. The stack is left as it was. Callers
// decide what an array is (cjson and cmsgpack differ).
template <typename OnKey>
bool ForEachArrayKey(lua_State* L, OnKey on_key) {
  lua_pushnil(L);
  while (lua_next(L, -2) != 0) {
    lua_pop(L, 1);
    double k = lua_type(L, -1) == LUA_TNUMBER ? lua_tonumber(L, -1) : 0;
    if (!(k >= 1 && std::floor(k) == k)) {
      lua_pop(L, 1);
      return false;
    }
    on_key(k);
  }
  return true;
}

}  // namespace vireo
