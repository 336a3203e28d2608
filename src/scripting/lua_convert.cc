// Lua <-> RESP conversions: command replies (RESP2/RESP3 as the script client received them)
// into Lua values, and a script's return value into the caller's reply, as Redis converts them.
#include <cmath>
#include <cstring>
#include <string>

#include "protocol/reply_builder.h"
#include "scripting/lua_engine.h"

namespace vireo {

namespace {

// Reads "<digits>\r\n" at *p. The magnitude is accumulated unsigned: INT64_MIN's does not fit
// in int64_t (a script reading `INCRBY k 0` of -9223372036854775808 overflowed here).
int64_t ReadLineInt(const char** p) {
  const char* s = *p;
  bool neg = *s == '-';
  if (neg) ++s;
  uint64_t v = 0;
  while (*s >= '0' && *s <= '9') v = v * 10 + static_cast<uint64_t>(*s++ - '0');
  *p = s + 2;
  return static_cast<int64_t>(neg ? 0 - v : v);
}

std::string_view ReadLine(const char** p, const char* end) {
  const char* s = *p;
  const char* e = static_cast<const char*>(memchr(s, '\r', static_cast<size_t>(end - s)));
  if (e == nullptr) e = end;
  *p = e + 2 <= end ? e + 2 : end;
  return {s, static_cast<size_t>(e - s)};
}

double ParseDouble(std::string_view line) {
  std::string text(line);
  return strtod(text.c_str(), nullptr);
}

}  // namespace

// Converts one RESP value of a command's reply into a Lua value, as Redis does.
int LuaEngine::PushRespValue(const char** p, const char* end) {
  lua_State* L = lua_;
  if (*p >= end) {
    lua_pushnil(L);
    return 0;
  }
  // Every level of a nested reply holds its table (and a map key) on the stack.
  if (!lua_checkstack(L, 4)) luaL_error(L, "reached lua stack limit");
  char type = **p;
  ++*p;
  switch (type) {
    case '+': {
      std::string_view line = ReadLine(p, end);
      lua_createtable(L, 0, 1);
      lua_pushliteral(L, "ok");
      lua_pushlstring(L, line.data(), line.size());
      lua_rawset(L, -3);
      break;
    }
    case '-': {
      std::string_view line = ReadLine(p, end);
      PushErrorTable(L, std::string_view(line.data() - 1, line.size() + 1));  // with its '-'
      // The reply hook counted it when the command replied.
      MarkErrorCounted(L);
      break;
    }
    case ':':
      lua_pushnumber(L, static_cast<lua_Number>(ReadLineInt(p)));
      break;
    case '$': {
      int64_t len = ReadLineInt(p);
      if (len < 0) {
        lua_pushboolean(L, 0);
      } else {
        lua_pushlstring(L, *p, static_cast<size_t>(len));
        *p += len + 2;
      }
      break;
    }
    case '*':
    case '>': {
      int64_t n = ReadLineInt(p);
      if (n < 0) {
        lua_pushboolean(L, 0);
        break;
      }
      lua_createtable(L, static_cast<int>(n), 0);
      for (int64_t i = 0; i < n; ++i) {
        PushRespValue(p, end);
        lua_rawseti(L, -2, static_cast<int>(i + 1));
      }
      break;
    }
    case '_':
      *p += 2;
      lua_pushnil(L);
      break;
    case '#':
      lua_pushboolean(L, **p == 't');
      *p += 3;
      break;
    case ',': {
      // Parsed before any Lua call: nothing with a destructor may be alive when one raises.
      double value = ParseDouble(ReadLine(p, end));
      lua_createtable(L, 0, 1);
      lua_pushliteral(L, "double");
      lua_pushnumber(L, value);
      lua_rawset(L, -3);
      break;
    }
    case '(': {
      std::string_view line = ReadLine(p, end);
      lua_createtable(L, 0, 1);
      lua_pushliteral(L, "big_number");
      lua_pushlstring(L, line.data(), line.size());
      lua_rawset(L, -3);
      break;
    }
    case '=': {
      int64_t len = ReadLineInt(p);
      std::string_view body(*p, static_cast<size_t>(len));
      *p += len + 2;
      lua_createtable(L, 0, 1);
      lua_pushliteral(L, "verbatim_string");
      lua_createtable(L, 0, 2);
      lua_pushliteral(L, "string");
      lua_pushlstring(L, body.data() + 4, body.size() - 4);
      lua_rawset(L, -3);
      lua_pushliteral(L, "format");
      lua_pushlstring(L, body.data(), 3);
      lua_rawset(L, -3);
      lua_rawset(L, -3);
      break;
    }
    case '%':
    case '~': {
      int64_t n = ReadLineInt(p);
      lua_createtable(L, 0, 1);
      lua_pushstring(L, type == '%' ? "map" : "set");
      lua_createtable(L, 0, static_cast<int>(n));
      for (int64_t i = 0; i < n; ++i) {
        PushRespValue(p, end);
        if (type == '%') {
          PushRespValue(p, end);
        } else {
          lua_pushboolean(L, 1);
        }
        if (lua_isnil(L, -2)) {
          lua_pop(L, 2);
        } else {
          lua_rawset(L, -3);
        }
      }
      lua_rawset(L, -3);
      break;
    }
    case '|': {
      // Attributes are not shown to scripts (as in Redis): skip them and convert the reply
      // they annotate.
      int64_t n = ReadLineInt(p);
      for (int64_t i = 0; i < 2 * n; ++i) {
        PushRespValue(p, end);
        lua_pop(L, 1);
      }
      PushRespValue(p, end);
      break;
    }
    default:
      lua_pushnil(L);
      *p = end;
  }
  return 0;
}

void MarkErrorCounted(lua_State* L) {
  // The field Redis 7.2 uses, so a script that walks the table sees what it sees in Redis.
  lua_pushliteral(L, "ignore_error_stats_update");
  lua_pushboolean(L, 1);
  lua_rawset(L, -3);
}

bool ErrorCounted(lua_State* L, int index) {
  lua_pushliteral(L, "ignore_error_stats_update");
  lua_rawget(L, index < 0 ? index - 1 : index);
  bool counted = lua_toboolean(L, -1) != 0;
  lua_pop(L, 1);
  return counted;
}

void LuaToReply(lua_State* L, ReplyBuilder& reply, int script_resp, bool* uncounted_error) {
  if (!lua_checkstack(L, 4)) {
    reply.Error("ERR reached lua stack limit");
    lua_pop(L, 1);
    return;
  }
  switch (lua_type(L, -1)) {
    case LUA_TSTRING: {
      size_t len = 0;
      const char* s = lua_tolstring(L, -1, &len);
      reply.Bulk(std::string_view(s, len));
      break;
    }
    case LUA_TBOOLEAN:
      if (script_resp == 2) {
        if (lua_toboolean(L, -1)) {
          reply.Integer(1);
        } else {
          reply.Null();
        }
      } else {
        reply.Bool(lua_toboolean(L, -1) != 0);
      }
      break;
    case LUA_TNUMBER: {
      double d = lua_tonumber(L, -1);
      // Redis casts with (long long): out of range (and NaN) gives x86's INT64_MIN.
      int64_t v = d >= -9.2233720368547758e18 && d < 9.2233720368547758e18 ? static_cast<int64_t>(d)
                                                                           : INT64_MIN;
      reply.Integer(v);
      break;
    }
    case LUA_TTABLE: {
      lua_pushliteral(L, "err");
      lua_rawget(L, -2);
      if (lua_type(L, -1) == LUA_TSTRING) {
        size_t len = 0;
        const char* s = lua_tolstring(L, -1, &len);
        if (ErrorCounted(L, -2)) {
          reply.ErrorUncounted(std::string_view(s, len));
          *uncounted_error = true;
        } else {
          reply.Error(std::string_view(s, len));
        }
        lua_pop(L, 2);
        return;
      }
      lua_pop(L, 1);
      lua_pushliteral(L, "ok");
      lua_rawget(L, -2);
      if (lua_type(L, -1) == LUA_TSTRING) {
        size_t len = 0;
        const char* s = lua_tolstring(L, -1, &len);
        std::string status(s, len);
        for (char& c : status) {
          if (c == '\r' || c == '\n') c = ' ';
        }
        reply.SimpleString(status);
        lua_pop(L, 2);
        return;
      }
      lua_pop(L, 1);
      lua_pushliteral(L, "double");
      lua_rawget(L, -2);
      if (lua_type(L, -1) == LUA_TNUMBER) {
        reply.Double(lua_tonumber(L, -1));
        lua_pop(L, 2);
        return;
      }
      lua_pop(L, 1);
      lua_pushliteral(L, "big_number");
      lua_rawget(L, -2);
      if (lua_type(L, -1) == LUA_TSTRING) {
        size_t len = 0;
        const char* s = lua_tolstring(L, -1, &len);
        std::string digits(s, len);
        for (char& c : digits) {
          if (c == '\r' || c == '\n') c = ' ';
        }
        reply.BigNumber(digits);
        lua_pop(L, 2);
        return;
      }
      lua_pop(L, 1);
      lua_pushliteral(L, "verbatim_string");
      lua_rawget(L, -2);
      if (lua_type(L, -1) == LUA_TTABLE) {
        lua_pushliteral(L, "format");
        lua_rawget(L, -2);
        lua_pushliteral(L, "string");
        lua_rawget(L, -3);
        if (lua_type(L, -2) == LUA_TSTRING && lua_type(L, -1) == LUA_TSTRING) {
          size_t flen = 0, len = 0;
          const char* f = lua_tolstring(L, -2, &flen);
          const char* s = lua_tolstring(L, -1, &len);
          reply.Verbatim(std::string_view(s, len), std::string_view(f, flen));
          lua_pop(L, 4);
          return;
        }
        lua_pop(L, 2);
      }
      lua_pop(L, 1);
      for (const char* kind : {"map", "set"}) {
        lua_pushstring(L, kind);
        lua_rawget(L, -2);
        if (lua_type(L, -1) == LUA_TTABLE) {
          bool is_map = kind[0] == 'm';
          size_t n = 0;
          lua_pushnil(L);
          while (lua_next(L, -2) != 0) {
            ++n;
            lua_pop(L, 1);
          }
          if (is_map) {
            reply.Map(n);
          } else {
            reply.Set(n);
          }
          lua_pushnil(L);
          while (lua_next(L, -2) != 0) {
            if (is_map) {
              lua_pushvalue(L, -2);
              LuaToReply(L, reply, script_resp, uncounted_error);  // the key
              LuaToReply(L, reply, script_resp, uncounted_error);  // the value
            } else {
              lua_pop(L, 1);
              lua_pushvalue(L, -1);
              LuaToReply(L, reply, script_resp, uncounted_error);
            }
          }
          lua_pop(L, 2);
          return;
        }
        lua_pop(L, 1);
      }
      // An array: elements 1..n up to the first nil.
      int n = 0;
      while (true) {
        lua_rawgeti(L, -1, n + 1);
        bool nil = lua_isnil(L, -1);
        lua_pop(L, 1);
        if (nil) break;
        ++n;
      }
      reply.Array(static_cast<size_t>(n));
      for (int i = 1; i <= n; ++i) {
        lua_rawgeti(L, -1, i);
        LuaToReply(L, reply, script_resp, uncounted_error);
      }
      break;
    }
    default:
      reply.Null();
  }
  lua_pop(L, 1);
}

}  // namespace vireo
