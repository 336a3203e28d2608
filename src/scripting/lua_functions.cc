// redis.register_function: the registrations a FUNCTION LOAD library body makes.
#include <cctype>
#include <cstring>
#include <string>

#include "scripting/lua_engine.h"

namespace vireo {

int LuaEngine::LuaRegisterFunction(lua_State* L) {
  if (registrations_ == nullptr) {
    PushErrorTable(L, "redis.register_function can only be called on FUNCTION LOAD command");
    return -1;
  }
  int argc = lua_gettop(L);
  Registration reg;
  bool has_name = false, has_callback = false;
  auto fail = [&](const char* text) {
    PushErrorTable(L, text);
    return -1;
  };
  if (argc == 1) {
    if (!lua_istable(L, 1)) {
      return fail(
          "calling redis.register_function with a single argument is only applicable to Lua "
          "table (representing named arguments).");
    }
    lua_pushnil(L);
    while (lua_next(L, 1) != 0) {
      const char* key = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : nullptr;
      if (key == nullptr)
        return fail("named argument key given to redis.register_function is not a string");
      if (strcmp(key, "function_name") == 0) {
        if (lua_type(L, -1) != LUA_TSTRING) {
          return fail("function_name argument given to redis.register_function must be a string");
        }
        size_t len = 0;
        const char* name = lua_tolstring(L, -1, &len);
        reg.name.assign(name, len);
        has_name = true;
      } else if (strcmp(key, "description") == 0) {
        if (lua_type(L, -1) != LUA_TSTRING) {
          return fail("description argument given to redis.register_function must be a string");
        }
        reg.description = lua_tostring(L, -1);
      } else if (strcmp(key, "callback") == 0) {
        if (!lua_isfunction(L, -1)) {
          return fail("callback argument given to redis.register_function must be a function");
        }
        if (has_callback) luaL_unref(L, LUA_REGISTRYINDEX, reg.ref);
        lua_pushvalue(L, -1);
        reg.ref = luaL_ref(L, LUA_REGISTRYINDEX);
        has_callback = true;
      } else if (strcmp(key, "flags") == 0) {
        if (!lua_istable(L, -1)) {
          return fail(
              "flags argument to redis.register_function must be a table representing function "
              "flags");
        }
        for (int i = 1;; ++i) {
          lua_rawgeti(L, -1, i);
          if (lua_isnil(L, -1)) {
            lua_pop(L, 1);
            break;
          }
          std::string bad;
          if (lua_type(L, -1) != LUA_TSTRING ||
              !ParseScriptFlags(lua_tostring(L, -1), &reg.flags, &bad)) {
            return fail("unknown flag given");
          }
          lua_pop(L, 1);
        }
      } else {
        return fail("unknown argument given to redis.register_function");
      }
      lua_pop(L, 1);
    }
  } else if (argc == 2) {
    if (lua_type(L, 1) != LUA_TSTRING) {
      return fail("first argument to redis.register_function must be a string");
    }
    if (!lua_isfunction(L, 2)) {
      return fail("second argument to redis.register_function must be a function");
    }
    size_t len = 0;
    const char* name = lua_tolstring(L, 1, &len);
    reg.name.assign(name, len);  // all of it: an embedded NUL makes the name invalid
    has_name = true;
    lua_pushvalue(L, 2);
    reg.ref = luaL_ref(L, LUA_REGISTRYINDEX);
    has_callback = true;
  } else {
    return fail("wrong number of arguments to redis.register_function");
  }
  if (!has_name) {
    if (has_callback) luaL_unref(L, LUA_REGISTRYINDEX, reg.ref);
    return fail("redis.register_function must get a function name argument");
  }
  if (!has_callback) return fail("redis.register_function must get a callback argument");
  bool valid = !reg.name.empty();
  for (char c : reg.name) {
    if (!isalnum(static_cast<unsigned char>(c)) && c != '_') valid = false;
  }
  if (!valid) {
    luaL_unref(L, LUA_REGISTRYINDEX, reg.ref);
    return fail(
        // Redis 7.2 says "Library names" here too.
        "Library names can only contain letters, numbers, or underscores(_) and must be at "
        "least one character long");
  }
  for (const Registration& r : *registrations_) {
    if (r.name == reg.name) {
      luaL_unref(L, LUA_REGISTRYINDEX, reg.ref);
      return fail("Function already exists in the library");
    }
  }
  registrations_->push_back(std::move(reg));
  return 0;
}

}  // namespace vireo
