// The script sandbox: read-only globals and library tables (the string metatable included),
// guarded rawset/setmetatable/getfenv/setfenv, and the one way source reaches Lua's parser
// (PushChunk, used by EVAL, FUNCTION LOAD, loadstring and load).
#include <string_view>

#include "scripting/lua_engine.h"

namespace vireo {
namespace {

int ReadonlyTable(lua_State* L) { return luaL_error(L, "Attempt to modify a readonly table"); }

// Whether the table at `index` is one of the protected tables (globals, library tables).
bool IsProtected(lua_State* L, int index) {
  if (!lua_istable(L, index)) return false;
  lua_pushvalue(L, index);
  lua_rawget(L, lua_upvalueindex(1));
  bool result = lua_toboolean(L, -1);
  lua_pop(L, 1);
  return result;
}

// rawset and setmetatable refuse protected tables; upvalue 1 is the protected set, upvalue 2
// the original function.
int GuardedModify(lua_State* L) {
  if (IsProtected(L, 1)) return luaL_error(L, "Attempt to modify a readonly table");
  lua_pushvalue(L, lua_upvalueindex(2));
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
  return lua_gettop(L);
}

// Gives the function PushChunk left on top the script environment (upvalue 1 of the loaders).
int FinishLoad(lua_State* L, int results) {
  if (results == 1) {
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_setfenv(L, -2);
  }
  return results;
}

// loadstring(s [, name]): chunks see the sandboxed globals, not the raw table. The default
// name is `s` itself, which the stack holds.
int SandboxedLoadString(lua_State* L) {
  size_t len = 0;
  const char* s = luaL_checklstring(L, 1, &len);
  const char* name = luaL_optstring(L, 2, s);
  return FinishLoad(L, PushChunk(L, s, len, name));
}

// lua_load's reader for load(): slot 1 is the script's reader function, 2 the chunk name, 3
// the latest piece (which keeps it alive while the parser reads it).
struct ReaderState {
  bool first_pending;  // slot 3 holds the first piece, fetched before lua_load
};

const char* ScriptReader(lua_State* L, void* ud, size_t* size) {
  auto* state = static_cast<ReaderState*>(ud);
  if (!state->first_pending) {
    luaL_checkstack(L, 2, "too many nested functions");
    lua_pushvalue(L, 1);
    lua_call(L, 0, 1);
    if (lua_isnil(L, -1)) {
      lua_pop(L, 1);
      *size = 0;
      return nullptr;
    }
    if (!lua_isstring(L, -1)) luaL_error(L, "reader function must return a string");
    lua_replace(L, 3);
  }
  state->first_pending = false;
  return lua_tolstring(L, 3, size);
}

// load(reader [, name]). The reader is script code that runs while the parser is mid-chunk;
// a collection it triggers freed the parser's unanchored chunk name in Lua 5.1
// (CVE-2025-49844), so the name, its default included, is a string in slot 2 throughout. The
// first piece is fetched before parsing starts, so a binary chunk is refused like loadstring's.
int SandboxedLoadReader(lua_State* L) {
  bool default_name = lua_isnoneornil(L, 2);
  if (!default_name) luaL_checkstring(L, 2);
  luaL_checktype(L, 1, LUA_TFUNCTION);
  lua_settop(L, 2);
  if (default_name) {
    lua_pushliteral(L, "=(load)");
    lua_replace(L, 2);
  }
  lua_pushvalue(L, 1);
  if (lua_pcall(L, 0, 1, 0) != 0) {
    lua_pushnil(L);
    lua_insert(L, -2);
    return 2;
  }
  if (lua_isnil(L, 3)) {
    lua_pushliteral(L, "");
    lua_replace(L, 3);
  } else if (!lua_isstring(L, 3)) {
    // The message names the caller's line, as luaL_error raised from Lua's own reader would.
    lua_pushnil(L);
    luaL_where(L, 1);
    lua_pushliteral(L, "reader function must return a string");
    lua_concat(L, 2);
    return 2;
  }
  size_t len = 0;
  const char* first = lua_tolstring(L, 3, &len);
  if (len == 0 || first[0] == LUA_SIGNATURE[0]) {
    return FinishLoad(L, PushChunk(L, first, len, lua_tostring(L, 2)));
  }
  ReaderState state{true};
  if (lua_load(L, ScriptReader, &state, lua_tostring(L, 2)) != 0) {
    lua_pushnil(L);
    lua_insert(L, -2);
    return 2;
  }
  return FinishLoad(L, 1);
}

// getfenv never hands out the raw globals; setfenv can't replace a thread's globals.
// Upvalue 1: the script environment, 2: the raw globals, 3: the original function.
int SandboxedGetfenv(lua_State* L) {
  lua_pushvalue(L, lua_upvalueindex(3));
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, 1);
  if (lua_rawequal(L, -1, lua_upvalueindex(2))) {
    lua_pop(L, 1);
    lua_pushvalue(L, lua_upvalueindex(1));
  }
  return 1;
}

int SandboxedSetfenv(lua_State* L) {
  if (lua_type(L, 1) == LUA_TNUMBER && lua_tonumber(L, 1) == 0) {
    return luaL_error(L, "Attempt to modify a readonly table");
  }
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
  return lua_gettop(L);
}

// Pushes the metatable of a read-only view: reads go to the value at `index_of`, writes raise
// "Attempt to modify a readonly table", and getmetatable() on the view gives false.
void PushReadonlyMetatable(lua_State* L, int index_of) {
  lua_createtable(L, 0, 3);
  lua_pushvalue(L, index_of);
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, ReadonlyTable);
  lua_setfield(L, -2, "__newindex");
  lua_pushboolean(L, 0);
  lua_setfield(L, -2, "__metatable");
}

// Makes a read-only view of the table on top of the stack (replacing it): reads go through,
// writes raise "Attempt to modify a readonly table". Both tables join the protected set.
void ReplaceWithReadonlyProxy(lua_State* L, int protected_set) {
  int real = lua_gettop(L);
  lua_newtable(L);  // proxy
  PushReadonlyMetatable(L, real);
  lua_setmetatable(L, -2);
  for (int index : {real, real + 1}) {
    lua_pushvalue(L, index);
    lua_pushboolean(L, 1);
    lua_rawset(L, protected_set);
  }
  lua_replace(L, real);
}

}  // namespace

int PushChunk(lua_State* L, const char* s, size_t len, const char* name) {
  if (len >= kMaxChunkBytes) {
    // CVE-2025-46819: Lua 5.1's lexer reads out of bounds on two source shapes, both at least
    // 2^30 bytes long. 2^31 line breaks before the first token raise "chunk has too many
    // lines" while the current token is still uninitialised, and its text is then looked up
    // in the token-name table at a garbage index; a long bracket with 2^30 '=' overflows the
    // int separator arithmetic and cuts the string at a negative length. Chunks that large
    // never reach the lexer.
    lua_pushnil(L);
    lua_pushliteral(L, "chunk too large (1 GB or more)");
    return 2;
  }
  if (len > 0 && s[0] == LUA_SIGNATURE[0]) {
    // Precompiled bytecode is never loaded: Lua 5.1 does not verify it, so a crafted chunk
    // corrupts memory (CVE-2015-4335). Redis's Lua parses every chunk as source, which fails on
    // the first byte; the same error comes from parsing a one-byte chunk under the same name
    // and naming byte 27 instead of byte 1.
    luaL_loadbuffer(L, "\x01", 1, name);
    size_t n = 0;
    const char* msg = lua_tolstring(L, -1, &n);
    constexpr std::string_view kNear = "'char(1)'";
    if (msg != nullptr && std::string_view(msg, n).ends_with(kNear)) {
      lua_pushlstring(L, msg, n - kNear.size());
      lua_pushliteral(L, "'char(27)'");
      lua_concat(L, 2);
      lua_remove(L, -2);
    }
    lua_pushnil(L);
    lua_insert(L, -2);
    return 2;
  }
  if (luaL_loadbuffer(L, s, len, name) != 0) {
    lua_pushnil(L);
    lua_insert(L, -2);
    return 2;
  }
  return 1;
}

void LuaEngine::ProtectGlobals() {
  lua_State* L = lua_;
  // The set of protected tables (weak keys: nothing here keeps a table alive).
  lua_newtable(L);
  int protected_set = lua_gettop(L);
  lua_createtable(L, 0, 1);
  lua_pushliteral(L, "k");
  lua_setfield(L, -2, "__mode");
  lua_setmetatable(L, protected_set);

  // Library tables become read-only views.
  for (const char* name :
       {"string", "table", "math", "cjson", "bit", "struct", "cmsgpack", "coroutine"}) {
    lua_getglobal(L, name);
    if (!lua_istable(L, -1)) {
      lua_pop(L, 1);
      continue;
    }
    ReplaceWithReadonlyProxy(L, protected_set);
    lua_pushstring(L, name);
    lua_insert(L, -2);
    lua_rawset(L, LUA_GLOBALSINDEX);
  }
  for (int* ref : {&full_api_ref_, &load_api_ref_}) {
    if (*ref == LUA_NOREF) continue;
    lua_rawgeti(L, LUA_REGISTRYINDEX, *ref);
    ReplaceWithReadonlyProxy(L, protected_set);
    luaL_unref(L, LUA_REGISTRYINDEX, *ref);
    *ref = luaL_ref(L, LUA_REGISTRYINDEX);
  }

  // The script environment: an empty table reading through to the globals (or, in functions
  // mode, to whichever API table is active), refusing every write.
  lua_newtable(L);
  int env = lua_gettop(L);
  PushReadonlyMetatable(L, LUA_GLOBALSINDEX);
  // getmetatable(_G) answers a read-only view of that metatable (Redis 7.2 gives its
  // read-only metatable, so `getmetatable(_G).__index = {}` is refused the same way).
  const int env_meta = lua_gettop(L);
  lua_pushvalue(L, env_meta);
  ReplaceWithReadonlyProxy(L, protected_set);
  lua_setfield(L, env_meta, "__metatable");
  lua_pushvalue(L, -1);
  api_slot_ref_ = luaL_ref(L, LUA_REGISTRYINDEX);  // the env's metatable, to switch __index
  lua_setmetatable(L, env);
  lua_pushvalue(L, env);
  proxy_ref_ = luaL_ref(L, LUA_REGISTRYINDEX);

  // The string metatable (CVE-2025-46818): what the VM uses stays as it is, but getmetatable('')
  // answers a read-only view of it whose __index is the read-only `string`, so no script can
  // change string methods for later scripts.
  lua_pushliteral(L, "");
  lua_getmetatable(L, -1);
  int string_meta = lua_gettop(L);
  lua_createtable(L, 0, 1);
  lua_getglobal(L, LUA_STRLIBNAME);
  lua_setfield(L, -2, "__index");
  ReplaceWithReadonlyProxy(L, protected_set);
  lua_setfield(L, string_meta, "__metatable");
  lua_settop(L, string_meta - 2);

  // Wrappers that would otherwise reach around the protection.
  for (const char* name : {"rawset", "setmetatable"}) {
    lua_pushstring(L, name);
    lua_pushvalue(L, protected_set);
    lua_getglobal(L, name);
    lua_pushcclosure(L, GuardedModify, 2);
    lua_rawset(L, LUA_GLOBALSINDEX);
  }
  const struct {
    const char* name;
    lua_CFunction fn;
  } kLoaders[] = {{"loadstring", SandboxedLoadString}, {"load", SandboxedLoadReader}};
  for (const auto& loader : kLoaders) {
    lua_pushstring(L, loader.name);
    lua_pushvalue(L, env);
    lua_pushcclosure(L, loader.fn, 1);
    lua_rawset(L, LUA_GLOBALSINDEX);
  }
  lua_pushliteral(L, "getfenv");
  lua_pushvalue(L, env);
  lua_pushvalue(L, LUA_GLOBALSINDEX);
  lua_getglobal(L, "getfenv");
  lua_pushcclosure(L, SandboxedGetfenv, 3);
  lua_rawset(L, LUA_GLOBALSINDEX);
  lua_pushliteral(L, "setfenv");
  lua_getglobal(L, "setfenv");
  lua_pushcclosure(L, SandboxedSetfenv, 1);
  lua_rawset(L, LUA_GLOBALSINDEX);

  if (!functions_mode_) {
    lua_pushliteral(L, "redis");
    lua_rawgeti(L, LUA_REGISTRYINDEX, full_api_ref_);
    lua_rawset(L, LUA_GLOBALSINDEX);
  } else {
    // Functions run with the full API as `redis`; FUNCTION LOAD swaps in the load API.
    lua_pushliteral(L, "redis");
    lua_rawgeti(L, LUA_REGISTRYINDEX, full_api_ref_);
    lua_rawset(L, LUA_GLOBALSINDEX);
  }
  lua_pushliteral(L, "_G");
  lua_pushvalue(L, env);
  lua_rawset(L, LUA_GLOBALSINDEX);

  // The globals themselves: reading a missing name is an error, adding one refused.
  lua_createtable(L, 0, 2);
  lua_pushcfunction(L, NonexistentGlobal);
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, ReadonlyTable);
  lua_setfield(L, -2, "__newindex");
  lua_setmetatable(L, LUA_GLOBALSINDEX);
  for (int index : {LUA_GLOBALSINDEX, env}) {
    lua_pushvalue(L, index);
    lua_pushboolean(L, 1);
    lua_rawset(L, protected_set);
  }
  lua_settop(L, 0);
}

}  // namespace vireo
