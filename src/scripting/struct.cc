// The `struct` library of Redis's Lua environment: struct.pack, struct.unpack and struct.size
// with the format language of Roberto Ierusalimschy's struct module (Redis embeds it):
//   > < !n     big / little endian, alignment n
//   b B h H l L T i[n] I[n]   signed/unsigned integers of 1, 2, 8, size_t and n (default 4) bytes
//   f d        float, double                  x  a zero byte
//   s          zero-terminated string          c[n]  n bytes (c0: length from the previous value)
//
// Every size is a size_t checked against the data actually present before any read, integer
// widths are limited to 32 bytes, and conversions that are undefined in C (a 0-byte integer's
// sign bit, out-of-range doubles) are spelled out with the values Redis 7.2 produces on x86-64
// (CVE-2020-14147 class).
//
// Lua errors unwind with longjmp, so these functions hold no C++ objects with destructors.
#include <cctype>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "scripting/lua_engine.h"

namespace vireo {
namespace {

constexpr int kMaxIntSize = 32;
constexpr int kMaxAlign = 8;

struct Header {
  bool little = true;
  int align = 1;
};

int GetNum(lua_State* L, const char** fmt, int def) {
  if (!isdigit(static_cast<unsigned char>(**fmt))) return def;
  int a = 0;
  do {
    if (a > (INT_MAX / 10) || a * 10 > (INT_MAX - (**fmt - '0'))) {
      luaL_error(L, "integral size overflow");
    }
    a = a * 10 + (*((*fmt)++) - '0');
  } while (isdigit(static_cast<unsigned char>(**fmt)));
  return a;
}

int OptSize(lua_State* L, char opt, const char** fmt) {
  switch (opt) {
    case 'B':
    case 'b':
      return 1;
    case 'H':
    case 'h':
      return 2;
    case 'L':
    case 'l':
      return static_cast<int>(sizeof(long));
    case 'T':
      return static_cast<int>(sizeof(size_t));
    case 'f':
      return static_cast<int>(sizeof(float));
    case 'd':
      return static_cast<int>(sizeof(double));
    case 'x':
      return 1;
    case 'c':
      return GetNum(L, fmt, 1);
    case 'i':
    case 'I': {
      int size = GetNum(L, fmt, static_cast<int>(sizeof(int)));
      if (size > kMaxIntSize) {
        luaL_error(L, "integral size %d is larger than limit of %d", size, kMaxIntSize);
      }
      return size;
    }
    default:
      return 0;
  }
}

// Padding needed before an item of `size` at offset `len`.
int ToAlign(size_t len, const Header& h, char opt, int size) {
  if (size == 0 || opt == 'c') return 0;
  if (size > h.align) size = h.align;
  return static_cast<int>((size - (len & (size - 1))) & (size - 1));
}

void ControlOptions(lua_State* L, char opt, const char** fmt, Header* h) {
  switch (opt) {
    case ' ':
      return;
    case '>':
      h->little = false;
      return;
    case '<':
      h->little = true;
      return;
    case '!': {
      int a = GetNum(L, fmt, kMaxAlign);
      if (a <= 0 || (a & (a - 1)) != 0) luaL_error(L, "alignment %d is not a power of 2", a);
      h->align = a;
      return;
    }
    default:
      luaL_argerror(L, 1, lua_pushfstring(L, "invalid format option '%c'", opt));
  }
}

// A Lua number as the 64-bit pattern struct.pack writes (and as the size a 'c0' reads). In
// range this is the C conversion (towards zero, negatives as two's complement); out of range,
// where C leaves it undefined, it is what Redis's build yields on x86-64: 2^63's pattern for NaN
// and for values below -2^63, 0 for values of 2^64 and more.
uint64_t IntegerBits(lua_Number n) {
  constexpr double kTwo63 = 9223372036854775808.0;
  constexpr uint64_t kIndefinite = uint64_t{1} << 63;
  if (n < 0) return n >= -kTwo63 ? static_cast<uint64_t>(static_cast<int64_t>(n)) : kIndefinite;
  if (n < 2 * kTwo63) return static_cast<uint64_t>(n);
  return std::isnan(n) ? kIndefinite : 0;
}

void PutInteger(lua_State* L, luaL_Buffer* b, int arg, bool little, int size) {
  uint64_t value = IntegerBits(luaL_checknumber(L, arg));
  char buf[kMaxIntSize];
  for (int i = 0; i < size; ++i) {
    int at = little ? i : size - 1 - i;
    buf[at] = static_cast<char>(value & 0xff);
    value = i < 7 ? value >> 8 : 0;
  }
  luaL_addlstring(b, buf, static_cast<size_t>(size));
}

lua_Number GetInteger(const char* p, bool little, bool is_signed, int size) {
  uint64_t v = 0;
  for (int i = 0; i < size; ++i) {
    int at = little ? size - 1 - i : i;
    v = (v << 8) | static_cast<uint8_t>(p[at]);
  }
  // A 0-byte integer is 0 (C would shift by -1 to find its sign bit); from 8 bytes on the
  // value is the low 64 bits as they are.
  if (!is_signed || size == 0 || size >= 8) {
    return is_signed ? static_cast<lua_Number>(static_cast<int64_t>(v))
                     : static_cast<lua_Number>(v);
  }
  uint64_t mask = ~uint64_t{0} << (size * 8 - 1);
  if ((v & mask) != 0) v |= mask;
  return static_cast<lua_Number>(static_cast<int64_t>(v));
}

// Floats are stored in the requested byte order; the machine is little-endian.
void CorrectBytes(char* p, int size, bool little) {
  if (little) return;
  for (int i = 0, j = size - 1; i < j; ++i, --j) {
    char t = p[i];
    p[i] = p[j];
    p[j] = t;
  }
}

int Pack(lua_State* L) {
  Header h;
  const char* fmt = luaL_checkstring(L, 1);
  int arg = 2;
  size_t total = 0;
  // A nil between the arguments and the buffer's pieces: a missing argument reads as "got nil"
  // (Redis's wording), not "got no value".
  lua_pushnil(L);
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  while (*fmt != '\0') {
    char opt = *fmt++;
    int size = OptSize(L, opt, &fmt);
    int pad = ToAlign(total, h, opt, size);
    total += static_cast<size_t>(pad);
    while (pad-- > 0) luaL_addchar(&b, '\0');
    switch (opt) {
      case 'b':
      case 'B':
      case 'h':
      case 'H':
      case 'l':
      case 'L':
      case 'T':
      case 'i':
      case 'I':
        PutInteger(L, &b, arg++, h.little, size);
        break;
      case 'x':
        luaL_addchar(&b, '\0');
        break;
      case 'f': {
        float f = static_cast<float>(luaL_checknumber(L, arg++));
        CorrectBytes(reinterpret_cast<char*>(&f), size, h.little);
        luaL_addlstring(&b, reinterpret_cast<char*>(&f), static_cast<size_t>(size));
        break;
      }
      case 'd': {
        double d = luaL_checknumber(L, arg++);
        CorrectBytes(reinterpret_cast<char*>(&d), size, h.little);
        luaL_addlstring(&b, reinterpret_cast<char*>(&d), static_cast<size_t>(size));
        break;
      }
      case 'c':
      case 's': {
        size_t l = 0;
        const char* s = luaL_checklstring(L, arg++, &l);
        size_t n = size == 0 ? l : static_cast<size_t>(size);
        // Redis names the argument after the string (its counter has moved on already).
        luaL_argcheck(L, l >= n, arg, "string too short");
        luaL_addlstring(&b, s, n);
        if (opt == 's') luaL_addchar(&b, '\0');
        total += n + (opt == 's' ? 1 : 0);
        continue;
      }
      default:
        ControlOptions(L, opt, &fmt, &h);
    }
    total += static_cast<size_t>(size);
  }
  luaL_pushresult(&b);
  return 1;
}

int Unpack(lua_State* L) {
  Header h;
  const char* fmt = luaL_checkstring(L, 1);
  size_t ld = 0;
  const char* data = luaL_checklstring(L, 2, &ld);
  // As in Redis, a negative offset wraps to a huge one and fails the length check below
  // ("data string too short"); only 0 is refused as an offset.
  auto pos = static_cast<size_t>(luaL_optinteger(L, 3, 1));
  luaL_argcheck(L, pos > 0, 3, "offset must be 1 or greater");
  --pos;
  int n = 0;
  while (*fmt != '\0') {
    char opt = *fmt++;
    auto size = static_cast<size_t>(OptSize(L, opt, &fmt));
    pos += static_cast<size_t>(ToAlign(pos, h, opt, static_cast<int>(size)));
    luaL_argcheck(L, size <= ld && pos <= ld - size, 2, "data string too short");
    luaL_checkstack(L, 2, "too many results");
    switch (opt) {
      case 'b':
      case 'B':
      case 'h':
      case 'H':
      case 'l':
      case 'L':
      case 'T':
      case 'i':
      case 'I':
        lua_pushnumber(L,
                       GetInteger(data + pos, h.little, islower(opt) != 0, static_cast<int>(size)));
        ++n;
        break;
      case 'x':
        break;
      case 'f': {
        float f;
        memcpy(&f, data + pos, sizeof(f));
        CorrectBytes(reinterpret_cast<char*>(&f), static_cast<int>(sizeof(f)), h.little);
        lua_pushnumber(L, f);
        ++n;
        break;
      }
      case 'd': {
        double d;
        memcpy(&d, data + pos, sizeof(d));
        CorrectBytes(reinterpret_cast<char*>(&d), static_cast<int>(sizeof(d)), h.little);
        lua_pushnumber(L, d);
        ++n;
        break;
      }
      case 'c': {
        if (size == 0) {
          if (n == 0 || !lua_isnumber(L, -1)) luaL_error(L, "format 'c0' needs a previous size");
          // The previous value converts as Redis converts it (a fraction below 1, even a
          // negative one, is 0 bytes; other negatives and NaN are too long).
          size = IntegerBits(lua_tonumber(L, -1));
          lua_pop(L, 1);
          --n;
          luaL_argcheck(L, size <= ld && pos <= ld - size, 2, "data string too short");
        }
        lua_pushlstring(L, data + pos, size);
        ++n;
        break;
      }
      case 's': {
        const void* e = memchr(data + pos, '\0', ld - pos);
        if (e == nullptr) luaL_error(L, "unfinished string in data");
        size = static_cast<size_t>(static_cast<const char*>(e) - (data + pos)) + 1;
        lua_pushlstring(L, data + pos, size - 1);
        ++n;
        break;
      }
      default:
        ControlOptions(L, opt, &fmt, &h);
    }
    pos += size;
  }
  lua_pushinteger(L, static_cast<lua_Integer>(pos + 1));
  return n + 1;
}

int Size(lua_State* L) {
  Header h;
  const char* fmt = luaL_checkstring(L, 1);
  size_t pos = 0;
  while (*fmt != '\0') {
    char opt = *fmt++;
    int size = OptSize(L, opt, &fmt);
    pos += static_cast<size_t>(ToAlign(pos, h, opt, size));
    if (opt == 's') {
      luaL_argerror(L, 1, "option 's' has no fixed size");
    } else if (opt == 'c' && size == 0) {
      luaL_argerror(L, 1, "option 'c0' has no fixed size");
    }
    if (!isalnum(static_cast<unsigned char>(opt))) ControlOptions(L, opt, &fmt, &h);
    pos += static_cast<size_t>(size);
  }
  lua_pushinteger(L, static_cast<lua_Integer>(pos));
  return 1;
}

}  // namespace

int OpenStruct(lua_State* L) {
  static const luaL_Reg kFunctions[] = {
      {"pack", Pack}, {"unpack", Unpack}, {"size", Size}, {nullptr, nullptr}};
  lua_newtable(L);
  luaL_register(L, nullptr, kFunctions);
  return 1;
}

}  // namespace vireo
