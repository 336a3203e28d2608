// The `cmsgpack` library of Redis's Lua environment: MessagePack encoding of Lua values.
//   cmsgpack.pack(v1, v2, ...)            the encodings of every argument, concatenated
//   cmsgpack.unpack(s)                    every value in s
//   cmsgpack.unpack_one(s [, offset])     next offset (-1 at the end), one value
//   cmsgpack.unpack_limit(s, n [, offset]) next offset, up to n values
// Encoding follows Redis's module: integral numbers as the smallest integer type, other
// numbers as float32 when exact else float64, strings as str (fixstr/str8/16/32), tables whose
// keys are exactly 1..n as arrays and others as maps; tables nested deeper than 16 become nil.
//
// Hostile input (CVE-2018-11218/11219, CVE-2022-24834 class): the output lives in a LuaBuffer
// (checked sizes, allocation failure is a Lua error), every count read from the input is only a
// loop bound (each element needs at least one more byte, so nothing is allocated for it up
// front), and every push is preceded by a stack check, so deep nesting and long value streams
// end in Redis's errors instead of overrunning the Lua stack.
//
// Lua errors unwind with longjmp, so these functions hold no C++ objects with destructors.
#include <cmath>
#include <cstdint>
#include <cstring>

#include "scripting/lua_engine.h"
#include "scripting/lua_lib_util.h"

namespace vireo {
namespace {

constexpr int kMaxNesting = 16;

void PutBig(lua_State* L, LuaBuffer* out, uint64_t v, int bytes) {
  char be[8];
  for (int i = 0; i < bytes; ++i) be[i] = static_cast<char>(v >> (8 * (bytes - 1 - i)));
  LuaBufferAppend(L, out, be, static_cast<size_t>(bytes));
}

void EncodeInteger(lua_State* L, LuaBuffer* out, int64_t n) {
  if (n >= 0) {
    auto u = static_cast<uint64_t>(n);
    if (u <= 127) {
      LuaBufferAppendChar(L, out, static_cast<char>(u));
    } else if (u <= 0xff) {
      LuaBufferAppendChar(L, out, static_cast<char>(0xcc));
      PutBig(L, out, u, 1);
    } else if (u <= 0xffff) {
      LuaBufferAppendChar(L, out, static_cast<char>(0xcd));
      PutBig(L, out, u, 2);
    } else if (u <= 0xffffffffULL) {
      LuaBufferAppendChar(L, out, static_cast<char>(0xce));
      PutBig(L, out, u, 4);
    } else {
      LuaBufferAppendChar(L, out, static_cast<char>(0xcf));
      PutBig(L, out, u, 8);
    }
  } else if (n >= -32) {
    LuaBufferAppendChar(L, out, static_cast<char>(static_cast<int8_t>(n)));
  } else if (n >= -128) {
    LuaBufferAppendChar(L, out, static_cast<char>(0xd0));
    PutBig(L, out, static_cast<uint64_t>(n), 1);
  } else if (n >= -32768) {
    LuaBufferAppendChar(L, out, static_cast<char>(0xd1));
    PutBig(L, out, static_cast<uint64_t>(n), 2);
  } else if (n >= -2147483648LL) {
    LuaBufferAppendChar(L, out, static_cast<char>(0xd2));
    PutBig(L, out, static_cast<uint64_t>(n), 4);
  } else {
    LuaBufferAppendChar(L, out, static_cast<char>(0xd3));
    PutBig(L, out, static_cast<uint64_t>(n), 8);
  }
}

void EncodeNumber(lua_State* L, LuaBuffer* out, double d) {
  if (!std::isinf(d) && !std::isnan(d) && d >= -9.2233720368547758e18 &&
      d < 9.2233720368547758e18 && static_cast<double>(static_cast<int64_t>(d)) == d) {
    EncodeInteger(L, out, static_cast<int64_t>(d));
    return;
  }
  auto f = static_cast<float>(d);
  if (static_cast<double>(f) == d) {
    uint32_t bits;
    memcpy(&bits, &f, 4);
    LuaBufferAppendChar(L, out, static_cast<char>(0xca));
    PutBig(L, out, bits, 4);
  } else {
    uint64_t bits;
    memcpy(&bits, &d, 8);
    LuaBufferAppendChar(L, out, static_cast<char>(0xcb));
    PutBig(L, out, bits, 8);
  }
}

void EncodeString(lua_State* L, LuaBuffer* out, const char* s, size_t len) {
  if (len < 32) {
    LuaBufferAppendChar(L, out, static_cast<char>(0xa0 | len));
  } else if (len <= 0xff) {
    LuaBufferAppendChar(L, out, static_cast<char>(0xd9));
    PutBig(L, out, len, 1);
  } else if (len <= 0xffff) {
    LuaBufferAppendChar(L, out, static_cast<char>(0xda));
    PutBig(L, out, len, 2);
  } else {
    LuaBufferAppendChar(L, out, static_cast<char>(0xdb));
    PutBig(L, out, len, 4);
  }
  LuaBufferAppend(L, out, s, len);
}

void EncodeHeader(lua_State* L, LuaBuffer* out, size_t n, bool map) {
  if (n < 16) {
    LuaBufferAppendChar(L, out, static_cast<char>((map ? 0x80 : 0x90) | n));
  } else if (n <= 0xffff) {
    LuaBufferAppendChar(L, out, static_cast<char>(map ? 0xde : 0xdc));
    PutBig(L, out, n, 2);
  } else {
    LuaBufferAppendChar(L, out, static_cast<char>(map ? 0xdf : 0xdd));
    PutBig(L, out, n, 4);
  }
}

// True when the table on top has exactly the keys 1..n (empty tables count as arrays).
bool IsArray(lua_State* L) {
  double max = 0;
  double count = 0;
  bool all_integer_keys = ForEachArrayKey(L, [&](double k) {
    if (k > max) max = k;
    ++count;
  });
  return all_integer_keys && max == count;
}

// Encodes the value on top of the stack (left in place).
void Encode(lua_State* L, LuaBuffer* out, int level) {
  int type = lua_type(L, -1);
  if (type == LUA_TTABLE && level == kMaxNesting) type = LUA_TNIL;
  switch (type) {
    case LUA_TSTRING: {
      size_t len = 0;
      const char* s = lua_tolstring(L, -1, &len);
      EncodeString(L, out, s, len);
      break;
    }
    case LUA_TBOOLEAN:
      LuaBufferAppendChar(L, out, static_cast<char>(lua_toboolean(L, -1) ? 0xc3 : 0xc2));
      break;
    case LUA_TNUMBER:
      EncodeNumber(L, out, lua_tonumber(L, -1));
      break;
    case LUA_TTABLE: {
      luaL_checkstack(L, 4, "in function mp_encode_lua_table");
      if (IsArray(L)) {
        size_t n = lua_objlen(L, -1);
        EncodeHeader(L, out, n, false);
        for (size_t i = 1; i <= n; ++i) {
          lua_rawgeti(L, -1, static_cast<int>(i));
          Encode(L, out, level + 1);
          lua_pop(L, 1);
        }
      } else {
        size_t n = 0;
        lua_pushnil(L);
        while (lua_next(L, -2) != 0) {
          lua_pop(L, 1);
          ++n;
        }
        EncodeHeader(L, out, n, true);
        lua_pushnil(L);
        while (lua_next(L, -2) != 0) {
          lua_pushvalue(L, -2);
          Encode(L, out, level + 1);  // key
          lua_pop(L, 1);
          Encode(L, out, level + 1);  // value
          lua_pop(L, 1);
        }
      }
      break;
    }
    default:
      LuaBufferAppendChar(L, out, static_cast<char>(0xc0));
  }
}

int Pack(lua_State* L) {
  int nargs = lua_gettop(L);
  if (nargs == 0) return luaL_argerror(L, 0, "MessagePack pack needs input.");
  if (!lua_checkstack(L, nargs)) {
    return luaL_argerror(L, 0, "Too many arguments for MessagePack pack.");
  }
  LuaBuffer* out = PushLuaBuffer(L);
  for (int i = 1; i <= nargs; ++i) {
    lua_pushvalue(L, i);
    Encode(L, out, 0);
    lua_pop(L, 1);
  }
  LuaBufferPushResult(L, out);
  return 1;
}

enum class DecodeError { kNone, kEof, kBadFormat };

struct Cursor {
  const uint8_t* p;
  size_t left;
  DecodeError err = DecodeError::kNone;
  bool Need(size_t n) {
    if (left < n) {
      err = DecodeError::kEof;
      return false;
    }
    return true;
  }
  uint64_t Big(size_t n) {
    uint64_t v = 0;
    for (size_t i = 0; i < n; ++i) v = (v << 8) | p[i];
    p += n;
    left -= n;
    return v;
  }
};

void Decode(lua_State* L, Cursor* c);

// Stack use mirrors Redis's decoder slot for slot (each value takes the slot its Decode call
// checked; an array also holds its index while the element decodes), so the nesting depth at
// which the stack runs out, and the message, are the same.
void DecodeArray(lua_State* L, Cursor* c, size_t n) {
  lua_createtable(L, n > 1024 ? 1024 : static_cast<int>(n), 0);
  luaL_checkstack(L, 1, "in function mp_decode_to_lua_array");
  for (size_t i = 1; i <= n; ++i) {
    lua_pushnumber(L, static_cast<lua_Number>(i));
    Decode(L, c);
    if (c->err != DecodeError::kNone) return;
    lua_rawset(L, -3);
  }
}

void DecodeMap(lua_State* L, Cursor* c, size_t n) {
  // Not presized: the hash part then grows as in Redis, so pairs() visits the keys (and
  // cjson.encode writes them) in the same order.
  lua_newtable(L);
  for (size_t i = 0; i < n; ++i) {
    Decode(L, c);
    if (c->err != DecodeError::kNone) return;
    Decode(L, c);
    if (c->err != DecodeError::kNone) return;
    lua_rawset(L, -3);  // a nil or NaN key raises "table index is nil/NaN", as in Redis
  }
}

void DecodeBytes(lua_State* L, Cursor* c, size_t len) {
  if (!c->Need(len)) return;
  lua_pushlstring(L, reinterpret_cast<const char*>(c->p), len);
  c->p += len;
  c->left -= len;
}

// Pushes the next value (on error pushes nothing meaningful; the caller raises).
void Decode(lua_State* L, Cursor* c) {
  // Room for this value; deep nesting or a long stream of top-level values runs out here.
  luaL_checkstack(L, 1, "too many return values at once; use unpack_one or unpack_limit instead.");
  if (!c->Need(1)) return;
  uint8_t b = *c->p++;
  --c->left;
  if (b <= 0x7f) {
    lua_pushnumber(L, b);
  } else if (b >= 0xe0) {
    lua_pushnumber(L, static_cast<int8_t>(b));
  } else if ((b & 0xe0) == 0xa0) {
    DecodeBytes(L, c, b & 0x1f);
  } else if ((b & 0xf0) == 0x90) {
    DecodeArray(L, c, b & 0x0f);
  } else if ((b & 0xf0) == 0x80) {
    DecodeMap(L, c, b & 0x0f);
  } else {
    switch (b) {
      case 0xc0:
        lua_pushnil(L);
        break;
      case 0xc2:
        lua_pushboolean(L, 0);
        break;
      case 0xc3:
        lua_pushboolean(L, 1);
        break;
      case 0xca: {
        if (!c->Need(4)) return;
        auto bits = static_cast<uint32_t>(c->Big(4));
        float f;
        memcpy(&f, &bits, 4);
        lua_pushnumber(L, f);
        break;
      }
      case 0xcb: {
        if (!c->Need(8)) return;
        uint64_t bits = c->Big(8);
        double d;
        memcpy(&d, &bits, 8);
        lua_pushnumber(L, d);
        break;
      }
      case 0xcc:
      case 0xcd:
      case 0xce:
      case 0xcf: {
        size_t n = size_t{1} << (b - 0xcc);
        if (!c->Need(n)) return;
        // Redis pushes unsigned values as a signed lua_Integer: uint64 values past INT64_MAX
        // come out negative.
        lua_pushinteger(L, static_cast<lua_Integer>(c->Big(n)));
        break;
      }
      case 0xd0:
      case 0xd1:
      case 0xd2:
      case 0xd3: {
        size_t n = size_t{1} << (b - 0xd0);
        if (!c->Need(n)) return;
        uint64_t v = c->Big(n);
        int64_t s = n == 1   ? static_cast<int8_t>(v)
                    : n == 2 ? static_cast<int16_t>(v)
                    : n == 4 ? static_cast<int32_t>(v)
                             : static_cast<int64_t>(v);
        lua_pushnumber(L, static_cast<lua_Number>(s));
        break;
      }
      // Redis's decoder has no bin8/16/32 (0xc4-0xc6): they are "Bad data format".
      case 0xd9:
        if (!c->Need(1)) return;
        DecodeBytes(L, c, c->Big(1));
        break;
      case 0xda:
        if (!c->Need(2)) return;
        DecodeBytes(L, c, c->Big(2));
        break;
      case 0xdb:
        if (!c->Need(4)) return;
        DecodeBytes(L, c, c->Big(4));
        break;
      case 0xdc:
        if (!c->Need(2)) return;
        DecodeArray(L, c, c->Big(2));
        break;
      case 0xdd:
        if (!c->Need(4)) return;
        DecodeArray(L, c, c->Big(4));
        break;
      case 0xde:
        if (!c->Need(2)) return;
        DecodeMap(L, c, c->Big(2));
        break;
      case 0xdf:
        if (!c->Need(4)) return;
        DecodeMap(L, c, c->Big(4));
        break;
      default:
        c->err = DecodeError::kBadFormat;
    }
  }
}

// Decodes up to `limit` values (0 with offset 0: all, without the offset result) from
// argument 1, starting at byte `offset`.
int UnpackFull(lua_State* L, lua_Integer limit, lua_Integer offset) {
  size_t len = 0;
  const char* s = luaL_checklstring(L, 1, &len);
  bool decode_all = limit == 0 && offset == 0;
  if (offset < 0 || limit < 0) {
    return luaL_error(L, "Invalid request to unpack with offset of %d and limit of %d.",
                      static_cast<int>(offset), static_cast<int>(len));
  }
  if (static_cast<size_t>(offset) > len) {
    return luaL_error(L, "Start offset %d greater than input length %d.", static_cast<int>(offset),
                      static_cast<int>(len));
  }
  if (decode_all) limit = INT32_MAX;
  Cursor c{reinterpret_cast<const uint8_t*>(s) + offset, len - static_cast<size_t>(offset)};
  int count = 0;
  for (; c.left > 0 && count < limit; ++count) {
    Decode(L, &c);
    if (c.err == DecodeError::kEof) return luaL_error(L, "Missing bytes in input.");
    if (c.err == DecodeError::kBadFormat) return luaL_error(L, "Bad data format in input.");
  }
  if (!decode_all) {
    luaL_checkstack(L, 1, "in function mp_unpack_full");
    lua_pushinteger(L, c.left == 0 ? -1 : static_cast<lua_Integer>(len - c.left));
    lua_insert(L, 2);
    ++count;
  }
  return count;
}

int Unpack(lua_State* L) { return UnpackFull(L, 0, 0); }

int UnpackOne(lua_State* L) {
  lua_Integer offset = luaL_optinteger(L, 2, 0);
  lua_settop(L, 1);
  return UnpackFull(L, 1, offset);
}

int UnpackLimit(lua_State* L) {
  lua_Integer limit = luaL_checkinteger(L, 2);
  lua_Integer offset = luaL_optinteger(L, 3, 0);
  lua_settop(L, 1);
  return UnpackFull(L, limit, offset);
}

}  // namespace

int OpenCmsgpack(lua_State* L) {
  static const luaL_Reg kFunctions[] = {{"pack", Pack},
                                        {"unpack", Unpack},
                                        {"unpack_one", UnpackOne},
                                        {"unpack_limit", UnpackLimit},
                                        {nullptr, nullptr}};
  lua_newtable(L);
  luaL_register(L, nullptr, kFunctions);
  lua_pushliteral(L, "lua-cmsgpack");
  lua_setfield(L, -2, "_NAME");
  lua_pushliteral(L, "lua-cmsgpack 0.4.0");
  lua_setfield(L, -2, "_VERSION");
  lua_pushliteral(L, "MessagePack C implementation.");
  lua_setfield(L, -2, "_DESCRIPTION");
  return 1;
}

}  // namespace vireo
