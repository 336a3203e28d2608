// vireo's `cjson` module. Behaviour follows lua-cjson 2.1.0 as Redis 7.2 bundles it; the code
// is vireo's own. Output goes to a LuaBuffer (see lua_lib_util.h), sized exactly for each string
// before it is written, so lengths near SIZE_MAX or allocation failures become Lua errors.
//
// Lua errors unwind with longjmp, so these functions hold no C++ objects with destructors.
#include "scripting/cjson.h"

#include <lauxlib.h>
#include <lua.h>
#include <strings.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "scripting/lua_lib_util.h"

namespace vireo {
namespace {

// The settings of one cjson instance; each module table's functions share it as upvalue 1.
struct JsonConfig {
  int sparse_convert;
  int sparse_ratio;
  int sparse_safe;
  int encode_max_depth;
  int decode_max_depth;
  int encode_invalid_numbers;  // 0 off (error), 1 on (nan/inf), 2 null
  int decode_invalid_numbers;
  int keep_buffer;  // accepted and reported; vireo's buffer is per call either way
  int precision;
};

JsonConfig* Config(lua_State* L) {
  auto* cfg = static_cast<JsonConfig*>(lua_touserdata(L, lua_upvalueindex(1)));
  if (cfg == nullptr) luaL_error(L, "BUG: Unable to fetch CJSON configuration");
  return cfg;
}

// ---- configuration functions ----

// Every setter takes at most `args` arguments; missing ones read as nil (= "just report").
JsonConfig* ConfigArgs(lua_State* L, int args) {
  luaL_argcheck(L, lua_gettop(L) <= args, args + 1, "found too many arguments");
  lua_settop(L, args);
  return Config(L);
}

void IntegerOption(lua_State* L, int index, int* setting, int min, int max) {
  if (!lua_isnil(L, index)) {
    // lua-cjson stores the integer in an int; keep its truncation for out-of-range values.
    int value = static_cast<int>(luaL_checkinteger(L, index));
    if (value < min || value > max) {
      char msg[64];
      snprintf(msg, sizeof(msg), "expected integer between %d and %d", min, max);
      luaL_argerror(L, 1, msg);
    }
    *setting = value;
  }
  lua_pushinteger(L, *setting);
}

// A setting with named values; true/false stand for the first two.
void EnumOption(lua_State* L, int index, int* setting, const char* const* names) {
  static const char* const kOnOff[] = {"off", "on", nullptr};
  if (names == nullptr) names = kOnOff;
  if (!lua_isnil(L, index)) {
    if (lua_isboolean(L, index)) {
      *setting = lua_toboolean(L, index);
    } else {
      *setting = luaL_checkoption(L, index, nullptr, names);
    }
  }
  if (*setting <= 1) {
    lua_pushboolean(L, *setting);
  } else {
    lua_pushstring(L, names[*setting]);
  }
}

int CfgEncodeSparseArray(lua_State* L) {
  JsonConfig* cfg = ConfigArgs(L, 3);
  EnumOption(L, 1, &cfg->sparse_convert, nullptr);
  IntegerOption(L, 2, &cfg->sparse_ratio, 0, INT32_MAX);
  IntegerOption(L, 3, &cfg->sparse_safe, 0, INT32_MAX);
  return 3;
}

int CfgEncodeMaxDepth(lua_State* L) {
  IntegerOption(L, 1, &ConfigArgs(L, 1)->encode_max_depth, 1, INT32_MAX);
  return 1;
}

int CfgDecodeMaxDepth(lua_State* L) {
  IntegerOption(L, 1, &ConfigArgs(L, 1)->decode_max_depth, 1, INT32_MAX);
  return 1;
}

int CfgEncodeNumberPrecision(lua_State* L) {
  IntegerOption(L, 1, &ConfigArgs(L, 1)->precision, 1, 14);
  return 1;
}

int CfgEncodeKeepBuffer(lua_State* L) {
  EnumOption(L, 1, &ConfigArgs(L, 1)->keep_buffer, nullptr);
  return 1;
}

int CfgEncodeInvalidNumbers(lua_State* L) {
  static const char* const kNames[] = {"off", "on", "null", nullptr};
  EnumOption(L, 1, &ConfigArgs(L, 1)->encode_invalid_numbers, kNames);
  return 1;
}

int CfgDecodeInvalidNumbers(lua_State* L) {
  EnumOption(L, 1, &ConfigArgs(L, 1)->decode_invalid_numbers, nullptr);
  return 1;
}

// ---- encoding ----

// How a byte is written inside a JSON string: itself, a two-character escape, or \u00XX.
// Control characters, DEL, '"', '\\' and '/' are escaped, as lua-cjson does.
char ShortEscape(unsigned char c) {
  switch (c) {
    case '"':
      return '"';
    case '\\':
      return '\\';
    case '/':
      return '/';
    case '\b':
      return 'b';
    case '\t':
      return 't';
    case '\n':
      return 'n';
    case '\f':
      return 'f';
    case '\r':
      return 'r';
    default:
      return 0;
  }
}

size_t EscapedWidth(unsigned char c) {
  if (ShortEscape(c) != 0) return 2;
  if (c < 0x20 || c == 0x7f) return 6;
  return 1;
}

[[noreturn]] void EncodeError(lua_State* L, int index, const char* reason) {
  luaL_error(L, "Cannot serialise %s: %s", luaL_typename(L, index), reason);
  abort();  // luaL_error does not return
}

void EncodeString(lua_State* L, LuaBuffer* out, int index) {
  size_t len = 0;
  const char* s = lua_tolstring(L, index, &len);
  // Size the output exactly first: one reservation, no overflow-prone worst-case multiple.
  size_t width = 2;
  for (size_t i = 0; i < len; ++i) {
    size_t w = EscapedWidth(static_cast<unsigned char>(s[i]));
    if (width > SIZE_MAX - w) luaL_error(L, "not enough memory");
    width += w;
  }
  LuaBufferReserve(L, out, width);
  char* p = out->data + out->len;
  *p++ = '"';
  for (size_t i = 0; i < len; ++i) {
    auto c = static_cast<unsigned char>(s[i]);
    if (char e = ShortEscape(c); e != 0) {
      *p++ = '\\';
      *p++ = e;
    } else if (c < 0x20 || c == 0x7f) {
      static const char kHex[] = "0123456789abcdef";
      memcpy(p, "\\u00", 4);
      p[4] = kHex[c >> 4];
      p[5] = kHex[c & 15];
      p += 6;
    } else {
      *p++ = static_cast<char>(c);
    }
  }
  *p++ = '"';
  out->len = static_cast<size_t>(p - out->data);
}

void EncodeNumber(lua_State* L, const JsonConfig* cfg, LuaBuffer* out, int index) {
  double num = lua_tonumber(L, index);
  bool invalid = std::isinf(num) || std::isnan(num);
  if (invalid) {
    if (cfg->encode_invalid_numbers == 0) EncodeError(L, index, "must not be NaN or Inf");
    if (cfg->encode_invalid_numbers == 2) return LuaBufferAppend(L, out, "null", 4);
    // "on": printf's spelling, except that NaN never carries a sign.
    if (std::isnan(num)) return LuaBufferAppend(L, out, "nan", 3);
  }
  char buf[48];
  int n = snprintf(buf, sizeof(buf), "%.*g", cfg->precision, num);
  LuaBufferAppend(L, out, buf, static_cast<size_t>(n));
}

// The length of the table on top of the stack if it encodes as a JSON array, else -1 (or 0,
// which also encodes as an object). Arrays have only integer keys >= 1; too sparse ones are
// objects or an error. lua-cjson keeps the largest key in an int, and a key past INT_MAX
// converts to INT_MIN on x86-64; later keys replace it again, so whether such a table is an
// array, an object or "excessively sparse" depends on key order. vireo keeps that order
// dependence exactly, with the conversion written out.
int ArrayLength(lua_State* L, const JsonConfig* cfg) {
  int64_t max = 0;
  int64_t items = 0;
  bool all_integer_keys = ForEachArrayKey(L, [&](double k) {
    if (k > static_cast<double>(max)) max = k > INT32_MAX ? INT32_MIN : static_cast<int64_t>(k);
    ++items;
  });
  if (!all_integer_keys) return -1;
  // lua-cjson multiplies in int; the product wraps as on x86-64.
  auto limit =
      static_cast<int32_t>(static_cast<uint32_t>(items) * static_cast<uint32_t>(cfg->sparse_ratio));
  if (cfg->sparse_ratio > 0 && max > limit && max > cfg->sparse_safe) {
    if (cfg->sparse_convert == 0) EncodeError(L, -1, "excessively sparse array");
    return -1;
  }
  return max < 0 ? -1 : static_cast<int>(max);
}

void EncodeValue(lua_State* L, const JsonConfig* cfg, int depth, LuaBuffer* out);

void EncodeTable(lua_State* L, const JsonConfig* cfg, int depth, LuaBuffer* out) {
  // Three free slots: key, value and an error message.
  if (depth > cfg->encode_max_depth || !lua_checkstack(L, 3)) {
    luaL_error(L, "Cannot serialise, excessive nesting (%d)", depth);
  }
  int len = ArrayLength(L, cfg);
  if (len > 0) {
    LuaBufferAppendChar(L, out, '[');
    for (int i = 1; i <= len; ++i) {
      if (i > 1) LuaBufferAppendChar(L, out, ',');
      lua_rawgeti(L, -1, i);
      EncodeValue(L, cfg, depth, out);
      lua_pop(L, 1);
    }
    LuaBufferAppendChar(L, out, ']');
    return;
  }
  LuaBufferAppendChar(L, out, '{');
  bool first = true;
  lua_pushnil(L);
  while (lua_next(L, -2) != 0) {
    if (!first) LuaBufferAppendChar(L, out, ',');
    first = false;
    int key_type = lua_type(L, -2);
    if (key_type == LUA_TNUMBER) {
      LuaBufferAppendChar(L, out, '"');
      EncodeNumber(L, cfg, out, -2);
      LuaBufferAppend(L, out, "\":", 2);
    } else if (key_type == LUA_TSTRING) {
      EncodeString(L, out, -2);
      LuaBufferAppendChar(L, out, ':');
    } else {
      EncodeError(L, -2, "table key must be a number or string");
    }
    EncodeValue(L, cfg, depth, out);
    lua_pop(L, 1);
  }
  LuaBufferAppendChar(L, out, '}');
}

void EncodeValue(lua_State* L, const JsonConfig* cfg, int depth, LuaBuffer* out) {
  switch (lua_type(L, -1)) {
    case LUA_TSTRING:
      return EncodeString(L, out, -1);
    case LUA_TNUMBER:
      return EncodeNumber(L, cfg, out, -1);
    case LUA_TBOOLEAN:
      if (lua_toboolean(L, -1)) return LuaBufferAppend(L, out, "true", 4);
      return LuaBufferAppend(L, out, "false", 5);
    case LUA_TTABLE:
      return EncodeTable(L, cfg, depth + 1, out);
    case LUA_TNIL:
      return LuaBufferAppend(L, out, "null", 4);
    case LUA_TLIGHTUSERDATA:
      if (lua_touserdata(L, -1) == nullptr) return LuaBufferAppend(L, out, "null", 4);
      [[fallthrough]];
    default:
      EncodeError(L, -1, "type not supported");
  }
}

int Encode(lua_State* L) {
  const JsonConfig* cfg = Config(L);
  luaL_argcheck(L, lua_gettop(L) == 1, 1, "expected 1 argument");
  LuaBuffer* out = PushLuaBuffer(L);
  lua_pushvalue(L, 1);
  EncodeValue(L, cfg, 0, out);
  lua_pop(L, 1);
  LuaBufferPushResult(L, out);
  return 1;
}

// ---- decoding ----

enum TokenType {
  kObjBegin,
  kObjEnd,
  kArrBegin,
  kArrEnd,
  kString,
  kNumber,
  kBoolean,
  kNull,
  kColon,
  kComma,
  kEnd,
  kError,
};

// The names lua-cjson prints in "Expected X but found Y" (Y for a token that is not an error).
const char* const kTokenNames[] = {"T_OBJ_BEGIN", "T_OBJ_END", "T_ARR_BEGIN", "T_ARR_END",
                                   "T_STRING",    "T_NUMBER",  "T_BOOLEAN",   "T_NULL",
                                   "T_COLON",     "T_COMMA",   "T_END",       "T_ERROR"};

struct Token {
  TokenType type;
  size_t index;       // 0-based offset of the token, or of the error inside it
  const char* error;  // kError: what is wrong
  double number;
  bool boolean;
  const char* str;  // kString: the decoded bytes (source or scratch buffer)
  size_t str_len;
};

// The parse state. The text is a Lua string, so data[len] is always '\0'; the scanner stops at
// the first NUL the way lua-cjson does, never reading past it.
struct Parser {
  const char* data;
  const char* p;
  const JsonConfig* cfg;
  LuaBuffer* scratch;  // unescaped string bytes
  int depth;
};

void SetError(Token* t, const Parser* ps, const char* what) {
  t->type = kError;
  t->index = static_cast<size_t>(ps->p - ps->data);
  t->error = what;
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  c = static_cast<char>(c | 0x20);
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

// Four hex digits at `s` (stops at the NUL terminator, which is not a digit), or -1.
int Hex4(const char* s) {
  int v = 0;
  for (int i = 0; i < 4; ++i) {
    int d = HexValue(s[i]);
    if (d < 0) return -1;
    v = (v << 4) | d;
  }
  return v;
}

// Decodes the \uXXXX (or surrogate pair) at ps->p into UTF-8. false on a malformed escape.
bool DecodeUnicodeEscape(lua_State* L, Parser* ps) {
  int cp = Hex4(ps->p + 2);
  if (cp < 0) return false;
  size_t consumed = 6;
  if ((cp & 0xF800) == 0xD800) {
    if ((cp & 0x400) != 0) return false;  // a low surrogate cannot come first
    if (ps->p[6] != '\\' || ps->p[7] != 'u') return false;
    int low = Hex4(ps->p + 8);
    if (low < 0 || (low & 0xFC00) != 0xDC00) return false;
    cp = (((cp & 0x3FF) << 10) | (low & 0x3FF)) + 0x10000;
    consumed = 12;
  }
  char utf8[4];
  size_t n;
  if (cp < 0x80) {
    utf8[0] = static_cast<char>(cp);
    n = 1;
  } else if (cp < 0x800) {
    utf8[0] = static_cast<char>(0xC0 | (cp >> 6));
    utf8[1] = static_cast<char>(0x80 | (cp & 0x3F));
    n = 2;
  } else if (cp < 0x10000) {
    utf8[0] = static_cast<char>(0xE0 | (cp >> 12));
    utf8[1] = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    utf8[2] = static_cast<char>(0x80 | (cp & 0x3F));
    n = 3;
  } else {
    utf8[0] = static_cast<char>(0xF0 | (cp >> 18));
    utf8[1] = static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    utf8[2] = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    utf8[3] = static_cast<char>(0x80 | (cp & 0x3F));
    n = 4;
  }
  LuaBufferAppend(L, ps->scratch, utf8, n);
  ps->p += consumed;
  return true;
}

char UnescapeChar(char c) {
  switch (c) {
    case '"':
    case '\\':
    case '/':
      return c;
    case 'b':
      return '\b';
    case 't':
      return '\t';
    case 'n':
      return '\n';
    case 'f':
      return '\f';
    case 'r':
      return '\r';
    default:
      return 0;
  }
}

void NextStringToken(lua_State* L, Parser* ps, Token* t) {
  ++ps->p;  // the opening quote
  const char* start = ps->p;
  // Fast path: no escapes, the value is a slice of the input.
  while (*ps->p != '"' && *ps->p != '\\' && *ps->p != '\0') ++ps->p;
  if (*ps->p == '"') {
    t->type = kString;
    t->str = start;
    t->str_len = static_cast<size_t>(ps->p - start);
    ++ps->p;
    return;
  }
  LuaBuffer* buf = ps->scratch;
  buf->len = 0;
  LuaBufferAppend(L, buf, start, static_cast<size_t>(ps->p - start));
  for (;;) {
    char c = *ps->p;
    if (c == '"') break;
    if (c == '\0') return SetError(t, ps, "unexpected end of string");
    if (c == '\\') {
      if (ps->p[1] == 'u') {
        if (!DecodeUnicodeEscape(L, ps)) return SetError(t, ps, "invalid unicode escape code");
        continue;
      }
      c = UnescapeChar(ps->p[1]);
      if (c == 0) return SetError(t, ps, "invalid escape code");
      ++ps->p;
    }
    LuaBufferAppendChar(L, buf, c);
    ++ps->p;
  }
  ++ps->p;
  t->type = kString;
  t->str = buf->len == 0 ? "" : buf->data;
  t->str_len = buf->len;
}

// Numbers strict JSON forbids but strtod() reads: a leading '+', hex, leading zeros, inf, nan.
bool IsNonJsonNumber(const char* p) {
  if (*p == '+') return true;
  if (*p == '-') ++p;
  if (*p == '0') {
    char c = p[1];
    return (c | 0x20) == 'x' || (c >= '0' && c <= '9');
  }
  // lua-cjson compares plain (signed) chars here: bytes >= 0x80 count as "ordinary".
  if (static_cast<signed char>(*p) <= '9') return false;
  return strncasecmp(p, "inf", 3) == 0 || strncasecmp(p, "nan", 3) == 0;
}

void NextNumberToken(Parser* ps, Token* t) {
  char* end = nullptr;
  t->number = strtod(ps->p, &end);
  if (end == ps->p) return SetError(t, ps, "invalid number");
  t->type = kNumber;
  ps->p = end;
}

void NextToken(lua_State* L, Parser* ps, Token* t) {
  while (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r') ++ps->p;
  t->index = static_cast<size_t>(ps->p - ps->data);
  char c = *ps->p;
  switch (c) {
    case '{':
      t->type = kObjBegin;
      break;
    case '}':
      t->type = kObjEnd;
      break;
    case '[':
      t->type = kArrBegin;
      break;
    case ']':
      t->type = kArrEnd;
      break;
    case ',':
      t->type = kComma;
      break;
    case ':':
      t->type = kColon;
      break;
    case '\0':
      t->type = kEnd;
      return;
    case '"':
      return NextStringToken(L, ps, t);
    default:
      if (c == '-' || (c >= '0' && c <= '9')) {
        if (!ps->cfg->decode_invalid_numbers && IsNonJsonNumber(ps->p)) {
          return SetError(t, ps, "invalid number");
        }
        return NextNumberToken(ps, t);
      }
      if (strncmp(ps->p, "true", 4) == 0 || strncmp(ps->p, "false", 5) == 0) {
        t->type = kBoolean;
        t->boolean = c == 't';
        ps->p += t->boolean ? 4 : 5;
        return;
      }
      if (strncmp(ps->p, "null", 4) == 0) {
        t->type = kNull;
        ps->p += 4;
        return;
      }
      // Only the characters that may start inf/nan/+number get here as numbers.
      if ((c == 'i' || c == 'I' || c == 'n' || c == 'N' || c == '+') &&
          ps->cfg->decode_invalid_numbers && IsNonJsonNumber(ps->p)) {
        return NextNumberToken(ps, t);
      }
      return SetError(t, ps, "invalid token");
  }
  ++ps->p;
}

[[noreturn]] void ParseError(lua_State* L, const char* expected, const Token* t) {
  const char* found = t->type == kError ? t->error : kTokenNames[t->type];
  luaL_error(L, "Expected %s but found %s at character %d", expected, found,
             static_cast<int>(t->index + 1));
  abort();
}

void Descend(lua_State* L, Parser* ps, int slots) {
  ++ps->depth;
  if (ps->depth <= ps->cfg->decode_max_depth && lua_checkstack(L, slots)) return;
  luaL_error(L, "Found too many nested data structures (%d) at character %d", ps->depth,
             static_cast<int>(ps->p - ps->data));
}

void ParseValue(lua_State* L, Parser* ps, Token* t);

void ParseObject(lua_State* L, Parser* ps) {
  Descend(L, ps, 3);  // table, key, value
  lua_newtable(L);
  Token t;
  NextToken(L, ps, &t);
  if (t.type != kObjEnd) {
    for (;;) {
      if (t.type != kString) ParseError(L, "object key string", &t);
      lua_pushlstring(L, t.str, t.str_len);
      NextToken(L, ps, &t);
      if (t.type != kColon) ParseError(L, "colon", &t);
      NextToken(L, ps, &t);
      ParseValue(L, ps, &t);
      lua_rawset(L, -3);
      NextToken(L, ps, &t);
      if (t.type == kObjEnd) break;
      if (t.type != kComma) ParseError(L, "comma or object end", &t);
      NextToken(L, ps, &t);
    }
  }
  --ps->depth;
}

void ParseArray(lua_State* L, Parser* ps) {
  Descend(L, ps, 2);  // table, value
  lua_newtable(L);
  Token t;
  NextToken(L, ps, &t);
  if (t.type != kArrEnd) {
    for (int i = 1;; ++i) {
      ParseValue(L, ps, &t);
      lua_rawseti(L, -2, i);
      NextToken(L, ps, &t);
      if (t.type == kArrEnd) break;
      if (t.type != kComma) ParseError(L, "comma or array end", &t);
      NextToken(L, ps, &t);
    }
  }
  --ps->depth;
}

void ParseValue(lua_State* L, Parser* ps, Token* t) {
  switch (t->type) {
    case kString:
      return lua_pushlstring(L, t->str, t->str_len);
    case kNumber:
      return lua_pushnumber(L, t->number);
    case kBoolean:
      return lua_pushboolean(L, t->boolean);
    case kObjBegin:
      return ParseObject(L, ps);
    case kArrBegin:
      return ParseArray(L, ps);
    case kNull:
      // nil cannot be stored in a table; cjson.null (a NULL light userdata) stands for it.
      return lua_pushlightuserdata(L, nullptr);
    default:
      ParseError(L, "value", t);
  }
}

int Decode(lua_State* L) {
  luaL_argcheck(L, lua_gettop(L) == 1, 1, "expected 1 argument");
  Parser ps;
  ps.cfg = Config(L);
  size_t len = 0;
  ps.data = luaL_checklstring(L, 1, &len);
  ps.p = ps.data;
  ps.depth = 0;
  // JSON text starts with an ASCII character, so a NUL among the first two bytes means UTF-16
  // or UTF-32 input.
  if (len >= 2 && (ps.data[0] == '\0' || ps.data[1] == '\0')) {
    luaL_error(L, "JSON parser does not support UTF-16 or UTF-32");
  }
  ps.scratch = PushLuaBuffer(L);
  Token t;
  NextToken(L, &ps, &t);
  ParseValue(L, &ps, &t);
  NextToken(L, &ps, &t);
  if (t.type != kEnd) ParseError(L, "the end", &t);
  return 1;
}

int New(lua_State* L);

void PushModule(lua_State* L) {
  static const luaL_Reg kFunctions[] = {{"encode", Encode},
                                        {"decode", Decode},
                                        {"encode_sparse_array", CfgEncodeSparseArray},
                                        {"encode_max_depth", CfgEncodeMaxDepth},
                                        {"decode_max_depth", CfgDecodeMaxDepth},
                                        {"encode_number_precision", CfgEncodeNumberPrecision},
                                        {"encode_keep_buffer", CfgEncodeKeepBuffer},
                                        {"encode_invalid_numbers", CfgEncodeInvalidNumbers},
                                        {"decode_invalid_numbers", CfgDecodeInvalidNumbers},
                                        {"new", New}};
  lua_newtable(L);
  auto* cfg = static_cast<JsonConfig*>(lua_newuserdata(L, sizeof(JsonConfig)));
  *cfg = JsonConfig{.sparse_convert = 0,
                    .sparse_ratio = 2,
                    .sparse_safe = 10,
                    .encode_max_depth = 1000,
                    .decode_max_depth = 1000,
                    .encode_invalid_numbers = 0,
                    .decode_invalid_numbers = 1,
                    .keep_buffer = 1,
                    .precision = 14};
  for (const luaL_Reg& fn : kFunctions) {
    lua_pushvalue(L, -1);
    lua_pushcclosure(L, fn.func, 1);
    lua_setfield(L, -3, fn.name);
  }
  lua_pop(L, 1);
  lua_pushlightuserdata(L, nullptr);
  lua_setfield(L, -2, "null");
  lua_pushliteral(L, "cjson");
  lua_setfield(L, -2, "_NAME");
  lua_pushliteral(L, "2.1.0");
  lua_setfield(L, -2, "_VERSION");
}

int New(lua_State* L) {
  PushModule(L);
  return 1;
}

}  // namespace

int OpenCjson(lua_State* L) {
  PushModule(L);
  return 1;
}

}  // namespace vireo
