// SHA-1, and vireo's own Lua libraries (struct, cmsgpack, cjson, bit and the guarded unpack)
// run in a bare Lua state. Expected values are what Redis 7.2's bundled libraries return.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <utility>

#include "scripting/bitop.h"
#include "scripting/cjson.h"
#include "scripting/lua_engine.h"
#include "scripting/safe_unpack.h"
#include "scripting/sha1.h"

namespace vireo {
namespace {

TEST(Sha1, KnownVectors) {
  EXPECT_EQ(Sha1Hex(""), "da39a3ee5e6b4b0d3255bfef95601890afd80709");
  EXPECT_EQ(Sha1Hex("abc"), "a9993e364706816aba3e25717850c26c9cd0d89d");
  EXPECT_EQ(Sha1Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "84983e441c3bd26ebaae4aa1f95129e5e54670f1");
  EXPECT_EQ(Sha1Hex(std::string(1000000, 'a')), "34aa973cd4c4daa4f61eeb2bdbad27316534016f");
  EXPECT_EQ(Sha1Hex("return 1"), "e0e1f9fabfc9d4800c877a703b823ac0578ff8db");
  // Lengths around the padding boundary (55, 56, 64 bytes).
  EXPECT_EQ(Sha1Hex(std::string(55, 'x')).size(), 40u);
  EXPECT_NE(Sha1Hex(std::string(55, 'x')), Sha1Hex(std::string(56, 'x')));
}

class LuaLibs : public ::testing::Test {
 protected:
  void SetUp() override {
    L = luaL_newstate();
    luaL_openlibs(L);
    lua_pushcfunction(L, OpenStruct);
    lua_call(L, 0, 1);
    lua_setglobal(L, "struct");
    lua_pushcfunction(L, OpenCmsgpack);
    lua_call(L, 0, 1);
    lua_setglobal(L, "cmsgpack");
    lua_pushcfunction(L, OpenCjson);
    lua_call(L, 0, 1);
    lua_setglobal(L, "cjson");
    lua_pushcfunction(L, OpenBit);
    lua_call(L, 0, 1);
    lua_setglobal(L, "bit");
    lua_pushcfunction(L, OpenSafeUnpack);
    lua_call(L, 0, 0);
  }
  void TearDown() override { lua_close(L); }

  // Runs `code` (which returns one value) and gives it as a string; errors as "ERR:<msg>".
  std::string Eval(const std::string& code) {
    if (luaL_loadstring(L, code.c_str()) != 0 || lua_pcall(L, 0, 1, 0) != 0) {
      // Without the chunk's position prefix ([string "..."]:1: ), which Redis spells differently.
      std::string msg = lua_tostring(L, -1);
      lua_pop(L, 1);
      if (msg.starts_with("[string \"")) {
        if (size_t at = msg.find("\"]:"); at != std::string::npos) {
          msg.erase(0, msg.find(": ", at) + 2);
        }
      }
      return "ERR:" + msg;
    }
    size_t len = 0;
    const char* s = lua_tolstring(L, -1, &len);
    std::string out = s == nullptr ? "<nil>" : std::string(s, len);
    lua_pop(L, 1);
    return out;
  }

  lua_State* L = nullptr;
};

TEST_F(LuaLibs, StructPackUnpack) {
  EXPECT_EQ(Eval("return struct.pack('>I2', 258)"), std::string("\x01\x02", 2));
  EXPECT_EQ(Eval("return struct.pack('<I2', 258)"), std::string("\x02\x01", 2));
  EXPECT_EQ(Eval("return struct.pack('b', -1)"), "\xff");
  EXPECT_EQ(Eval("return select(1, struct.unpack('b', '\\255'))"), "-1");
  EXPECT_EQ(Eval("return select(1, struct.unpack('B', '\\255'))"), "255");
  EXPECT_EQ(Eval("return select(2, struct.unpack('>i', struct.pack('>i', 7)))"), "5");
  EXPECT_EQ(Eval("return select(1, struct.unpack('>d', struct.pack('>d', 1.5)))"), "1.5");
  EXPECT_EQ(Eval("return select(1, struct.unpack('<f', struct.pack('<f', 0.25)))"), "0.25");
  EXPECT_EQ(Eval("return struct.pack('s', 'ab')"), std::string("ab\0", 3));
  EXPECT_EQ(Eval("return struct.pack('c3', 'abcdef')"), "abc");
  EXPECT_EQ(Eval("return struct.size('!4bi')"), "8");
  EXPECT_EQ(Eval("return struct.size('bi')"), "5");
  EXPECT_EQ(Eval("return #struct.pack('!4bi', 1, 2)"), "8");
  EXPECT_EQ(Eval("return select(1, struct.unpack('i8', struct.pack('i8', -2)))"), "-2");
  EXPECT_NE(Eval("return struct.pack('y', 1)").find("invalid format option 'y'"),
            std::string::npos);
  EXPECT_NE(Eval("return struct.unpack('>I4', 'ab')").find("data string too short"),
            std::string::npos);
  EXPECT_NE(Eval("return struct.pack('i33', 1)").find("integral size 33 is larger than limit"),
            std::string::npos);
  EXPECT_NE(Eval("return struct.unpack('s', 'abc')").find("unfinished string"), std::string::npos);
}

// Issue 20 finding 6 and CVE-2020-14147 / CVE-2018-11219: sizes, offsets and conversions that
// are undefined or overflow in C give Redis's results or errors.
TEST_F(LuaLibs, StructHostileFormats) {
  // A 0-byte signed integer is 0 (the C original shifts by -1 to find its sign).
  EXPECT_EQ(Eval("local v, n = struct.unpack('i0', 'abcd') return v .. ',' .. n"), "0,1");
  EXPECT_EQ(Eval("return #struct.pack('i0', 5)"), "0");
  EXPECT_EQ(Eval("return struct.unpack('c2147483647', 'abcd')"),
            "ERR:bad argument #2 to 'unpack' (data string too short)");
  EXPECT_EQ(Eval("return struct.unpack('i2147483648', 'abcd')"), "ERR:integral size overflow");
  EXPECT_EQ(Eval("return struct.size('c99999999999')"), "ERR:integral size overflow");
  EXPECT_EQ(Eval("return struct.size('c2147483647c2147483647')"), "4294967294");
  // Offsets before the data (the 2018 out-of-bounds read) and past it.
  EXPECT_EQ(Eval("return struct.unpack('f', 'xxxxxxxxxxxxx', -3)"),
            "ERR:bad argument #2 to 'unpack' (data string too short)");
  EXPECT_EQ(Eval("return struct.unpack('b', 'ab', 0)"),
            "ERR:bad argument #3 to 'unpack' (offset must be 1 or greater)");
  EXPECT_EQ(Eval("return struct.unpack('', 'ab', 10)"), "10");
  EXPECT_EQ(Eval("return struct.unpack('c0', 'abc')"), "ERR:format 'c0' needs a previous size");
  EXPECT_EQ(Eval("return struct.unpack('bc0', '\\255abc')"),
            "ERR:bad argument #2 to 'unpack' (data string too short)");
  EXPECT_EQ(Eval("return (struct.unpack('bc0', '\\2abc'))"), "ab");
  EXPECT_EQ(Eval("return struct.pack('!3i', 1)"), "ERR:alignment 3 is not a power of 2");
  EXPECT_EQ(Eval("return struct.pack('n', 1)"),
            "ERR:bad argument #1 to 'pack' (invalid format option 'n')");
  EXPECT_EQ(Eval("return struct.pack('c3', 'ab')"),
            "ERR:bad argument #3 to 'pack' (string too short)");
  EXPECT_EQ(Eval("return struct.size('s')"),
            "ERR:bad argument #1 to 'size' (option 's' has no fixed size)");
  // Out-of-range doubles pack as Redis's x86-64 build packs them.
  EXPECT_EQ(Eval("return struct.pack('>i8', 1e300)"), std::string(8, '\0'));
  EXPECT_EQ(Eval("return struct.pack('>i8', -1e300)"), std::string("\x80\0\0\0\0\0\0\0", 8));
  EXPECT_EQ(Eval("return struct.pack('>i8', 0/0)"), std::string("\x80\0\0\0\0\0\0\0", 8));
  EXPECT_EQ(Eval("return struct.pack('>i8', 3.7)"), std::string("\0\0\0\0\0\0\0\x03", 8));
  // Wide integers keep their low 64 bits.
  EXPECT_EQ(Eval("return struct.unpack('>i9', string.rep('\\255', 9))"), "-1");
  EXPECT_EQ(Eval("return struct.unpack('<i9', '\\1\\0\\0\\0\\0\\0\\0\\0\\128')"), "1");
}

TEST_F(LuaLibs, CmsgpackRoundTrips) {
  EXPECT_EQ(Eval("return cmsgpack.pack(nil, true, false)"), "\xc0\xc3\xc2");
  EXPECT_EQ(Eval("return cmsgpack.pack(127, 128, -32, -33)"),
            std::string("\x7f\xcc\x80\xe0\xd0\xdf", 6));
  EXPECT_EQ(Eval("return cmsgpack.pack(65536)"), std::string("\xce\x00\x01\x00\x00", 5));
  EXPECT_EQ(Eval("return cmsgpack.pack(2^40)"),
            std::string("\xcf\x00\x00\x01\x00\x00\x00\x00\x00", 9));
  EXPECT_EQ(Eval("return cmsgpack.pack(0.1):byte(1)"), "203");  // 0xcb: not exact as a float
  EXPECT_EQ(Eval("return #cmsgpack.pack(string.rep('x', 40))"), "42");    // str8
  EXPECT_EQ(Eval("return #cmsgpack.pack(string.rep('x', 300))"), "303");  // str16
  EXPECT_EQ(Eval("return cmsgpack.pack({})"), "\x90");
  EXPECT_EQ(Eval("return cmsgpack.pack({[2]=1})"), std::string("\x81\x02\x01", 3));
  EXPECT_EQ(Eval("local t = cmsgpack.unpack(cmsgpack.pack({1, {2, {a='b'}}, 'x'})) "
                 "return t[2][2].a .. t[3] .. #t"),
            "bx3");
  EXPECT_EQ(Eval("local a, b, c = cmsgpack.unpack(cmsgpack.pack(1, 'two', {3})) "
                 "return a .. b .. c[1]"),
            "1two3");
  EXPECT_EQ(Eval("local big = {} for i = 1, 70000 do big[i] = i end "
                 "local t = cmsgpack.unpack(cmsgpack.pack(big)) return #t .. ':' .. t[70000]"),
            "70000:70000");
  // Nesting beyond 16 levels encodes nil.
  EXPECT_EQ(Eval("local t = {} local c = t for i = 1, 20 do c[1] = {} c = c[1] end "
                 "local u = cmsgpack.unpack(cmsgpack.pack(t)) local d = 0 "
                 "while type(u) == 'table' do d = d + 1 u = u[1] end return d"),
            "16");
  EXPECT_EQ(Eval("local o, v = cmsgpack.unpack_one(cmsgpack.pack(5, 6)) return o .. ',' .. v"),
            "1,5");
  EXPECT_EQ(Eval("local o, v = cmsgpack.unpack_one(cmsgpack.pack(5, 6), 1) return o .. ',' .. v"),
            "-1,6");
  EXPECT_NE(Eval("return cmsgpack.unpack('\\193')").find("Bad data format in input."),
            std::string::npos);
  EXPECT_NE(Eval("return cmsgpack.unpack('\\205\\1')").find("Missing bytes in input."),
            std::string::npos);
}

// CVE-2018-11218: counts and nesting from the input never outrun the Lua stack or memory.
TEST_F(LuaLibs, CmsgpackHostileInput) {
  // An array header claiming 2^32-1 elements with none present.
  EXPECT_EQ(Eval("return cmsgpack.unpack('\\221\\255\\255\\255\\255')"),
            "ERR:Missing bytes in input.");
  EXPECT_EQ(Eval("return cmsgpack.unpack('\\223\\255\\255\\255\\255\\1')"),
            "ERR:Missing bytes in input.");
  EXPECT_EQ(Eval("return cmsgpack.unpack('\\219\\255\\255\\255\\255ab')"),
            "ERR:Missing bytes in input.");
  // 100000 nested one-element arrays, and 100000 top-level values at once.
  EXPECT_EQ(Eval("return cmsgpack.unpack(string.rep('\\145', 100000) .. '\\1')"),
            "ERR:stack overflow (in function mp_decode_to_lua_array)");
  EXPECT_EQ(Eval("return select('#', cmsgpack.unpack(string.rep('\\1', 100000)))"),
            "ERR:stack overflow (too many return values at once; use unpack_one or "
            "unpack_limit instead.)");
  EXPECT_EQ(Eval("local o, v = cmsgpack.unpack_limit(string.rep('\\1', 100000), 1, 99999) "
                 "return o .. ',' .. v"),
            "-1,1");
  // Many arguments to pack (the original stack smash) and a large array.
  EXPECT_EQ(Eval("local t = {} for i = 1, 3999 do t[i] = i end "
                 "return #cmsgpack.pack(unpack(t))"),
            "11615");
  EXPECT_EQ(Eval("local t = {} for i = 1, 7000 do t[i] = i end "
                 "return #cmsgpack.pack(unpack(t))"),
            "ERR:bad argument #0 to 'pack' (Too many arguments for MessagePack pack.)");
  EXPECT_EQ(Eval("local t = {} for i = 1, 100000 do t[i] = 'x' end "
                 "return #cmsgpack.unpack(cmsgpack.pack(t))"),
            "100000");
}

TEST_F(LuaLibs, CjsonEncode) {
  EXPECT_EQ(Eval("return cjson.encode({1, 2, nil, 4})"), "[1,2,null,4]");
  EXPECT_EQ(Eval("return cjson.encode('a/b\"c\\\\\\1\\127\\128\\n')"),
            "\"a\\/b\\\"c\\\\\\u0001\\u007f\x80\\n\"");
  EXPECT_EQ(Eval("return cjson.encode({[2] = 1})"), "[null,1]");
  EXPECT_EQ(Eval("return cjson.encode({[20] = 1})"),
            "ERR:Cannot serialise table: excessively sparse array");
  EXPECT_EQ(Eval("return cjson.encode({})"), "{}");
  EXPECT_EQ(Eval("return cjson.encode({[1e10] = 1})"), "{\"10000000000\":1}");
  EXPECT_EQ(Eval("return cjson.encode(12345678901234567)"), "1.2345678901235e+16");
  EXPECT_EQ(Eval("return cjson.encode(0.1)"), "0.1");
  EXPECT_EQ(Eval("return cjson.encode(-0.0)"), "-0");
  EXPECT_EQ(Eval("return cjson.encode({a = cjson.null})"), "{\"a\":null}");
  EXPECT_EQ(Eval("return cjson.encode(1/0)"),
            "ERR:Cannot serialise number: must not be NaN or Inf");
  EXPECT_EQ(Eval("return cjson.encode(print)"),
            "ERR:Cannot serialise function: type not supported");
  EXPECT_EQ(Eval("return cjson.encode({[true] = 1})"),
            "ERR:Cannot serialise boolean: table key must be a number or string");
  EXPECT_EQ(Eval("return cjson.encode()"), "ERR:bad argument #1 to 'encode' (expected 1 argument)");
  EXPECT_EQ(Eval("local t = {} local c = t for i = 1, 1001 do c[1] = {} c = c[1] end "
                 "return cjson.encode(t)"),
            "ERR:Cannot serialise, excessive nesting (1001)");
  // The configuration functions of a fresh instance.
  EXPECT_EQ(Eval("local j = cjson.new() j.encode_invalid_numbers('null') "
                 "return j.encode({0/0, 1/0})"),
            "[null,null]");
  EXPECT_EQ(Eval("local j = cjson.new() j.encode_invalid_numbers(true) "
                 "return j.encode({0/0, -1/0})"),
            "[nan,-inf]");
  EXPECT_EQ(Eval("local j = cjson.new() j.encode_number_precision(3) return j.encode(3.14159)"),
            "3.14");
  EXPECT_EQ(Eval("local j = cjson.new() j.encode_sparse_array(true) return j.encode({[20]=1})"),
            "{\"20\":1}");
  EXPECT_EQ(
      Eval("return cjson.encode_max_depth(0)"),
      "ERR:bad argument #1 to 'encode_max_depth' (expected integer between 1 and 2147483647)");
  EXPECT_EQ(Eval("return cjson.encode_max_depth(1, 2)"),
            "ERR:bad argument #2 to 'encode_max_depth' (found too many arguments)");
  EXPECT_EQ(Eval("return cjson.encode_keep_buffer('x')"),
            "ERR:bad argument #1 to 'encode_keep_buffer' (invalid option 'x')");
  EXPECT_EQ(Eval("return tostring(cjson.encode_keep_buffer())"), "true");
  EXPECT_EQ(Eval("return cjson.new().encode_invalid_numbers('null')"), "null");
  EXPECT_EQ(Eval("return cjson.encode_max_depth()"), "1000");
}

TEST_F(LuaLibs, CjsonDecode) {
  EXPECT_EQ(Eval("local t = cjson.decode('{\"a\":[1,2.5,\"x\"],\"b\":null}') "
                 "return t.a[1] + t.a[2] .. t.a[3] .. tostring(t.b == cjson.null)"),
            "3.5xtrue");
  EXPECT_EQ(Eval("return cjson.decode('\"\\\\u00e9\\\\ud83d\\\\ude00\\\\/\\\\n\"')"),
            "\xc3\xa9\xf0\x9f\x98\x80/\n");
  EXPECT_EQ(Eval("return cjson.decode('0x10')"), "16");
  EXPECT_EQ(Eval("return cjson.decode('[1,2')"),
            "ERR:Expected comma or array end but found T_END at character 5");
  EXPECT_EQ(Eval("return cjson.decode('{\"a\":1,}')"),
            "ERR:Expected object key string but found T_OBJ_END at character 8");
  EXPECT_EQ(Eval("return cjson.decode('\"\\\\uD800\"')"),
            "ERR:Expected value but found invalid unicode escape code at character 2");
  EXPECT_EQ(Eval("return cjson.decode('\"ab')"),
            "ERR:Expected value but found unexpected end of string at character 4");
  EXPECT_EQ(Eval("return cjson.decode(string.rep('[', 1001))"),
            "ERR:Found too many nested data structures (1001) at character 1001");
  EXPECT_EQ(Eval("return cjson.decode(string.rep('[', 100000))"),
            "ERR:Found too many nested data structures (1001) at character 1001");
  EXPECT_EQ(Eval("return cjson.decode(' ')"), "ERR:Expected value but found T_END at character 2");
  EXPECT_EQ(Eval("return cjson.decode('nul')"),
            "ERR:Expected value but found invalid token at character 1");
  EXPECT_EQ(Eval("return cjson.decode('1 2')"),
            "ERR:Expected the end but found T_NUMBER at character 3");
  EXPECT_EQ(Eval("return cjson.decode('a\\0')"),
            "ERR:JSON parser does not support UTF-16 or UTF-32");
  EXPECT_EQ(Eval("local j = cjson.new() j.decode_invalid_numbers(false) return j.decode('+1')"),
            "ERR:Expected value but found invalid token at character 1");
  EXPECT_EQ(Eval("return cjson.decode('+1')"), "1");
  EXPECT_EQ(Eval("local j = cjson.new() j.decode_invalid_numbers(false) return j.decode('01')"),
            "ERR:Expected value but found invalid number at character 1");
}

TEST_F(LuaLibs, CjsonHugeString) {
  // CVE-2022-24834: the escaped size is computed exactly and checked, never overflowed.
  EXPECT_EQ(Eval("return #cjson.encode(string.rep('a', 10000000))"), "10000002");
  EXPECT_EQ(Eval("return #cjson.encode(string.rep('\\1', 1000000))"), "6000002");
}

// An allocation the allocator refuses is a Lua error ("not enough memory"), never an abort, and
// the state stays usable.
TEST(LuaLibsAllocation, RefusedBufferIsALuaError) {
  struct Limit {
    static void* Alloc(void* ud, void* ptr, size_t, size_t nsize) {
      if (nsize == 0) {
        free(ptr);
        return nullptr;
      }
      if (nsize > *static_cast<size_t*>(ud)) return nullptr;
      return realloc(ptr, nsize);
    }
  };
  size_t max_block = 4 << 20;
  lua_State* L = lua_newstate(Limit::Alloc, &max_block);
  ASSERT_NE(L, nullptr);
  luaL_openlibs(L);
  const std::pair<const char*, lua_CFunction> kLibs[] = {{"cjson", OpenCjson},
                                                         {"cmsgpack", OpenCmsgpack}};
  for (const auto& [name, open] : kLibs) {
    lua_pushcfunction(L, open);
    lua_call(L, 0, 1);
    lua_setglobal(L, name);
  }
  // 1.5 MB of control characters escape to 9 MB: more than any block the allocator gives.
  const char* script =
      "local s = string.rep('\\1', 1500000) "
      "local ok, e = pcall(cjson.encode, s) "
      "local ok2, e2 = pcall(cmsgpack.pack, s, s, s) "
      "return tostring(ok) .. ':' .. e .. '|' .. tostring(ok2) .. ':' .. e2 .. '|' .. "
      "cjson.encode({1, 'x'})";
  ASSERT_EQ(luaL_loadstring(L, script), 0);
  ASSERT_EQ(lua_pcall(L, 0, 1, 0), 0) << lua_tostring(L, -1);
  EXPECT_STREQ(lua_tostring(L, -1), "false:not enough memory|false:not enough memory|[1,\"x\"]");
  lua_close(L);
}

TEST_F(LuaLibs, BitOps) {
  // CVE-2024-31449: INT32_MIN as a width must not be negated in 32 bits.
  EXPECT_EQ(Eval("return bit.tohex(65535, -2147483648)"), "0000FFFF");
  EXPECT_EQ(Eval("return bit.tohex(65535)"), "0000ffff");
  EXPECT_EQ(Eval("return bit.tohex(-1, 2)"), "ff");
  EXPECT_EQ(Eval("return bit.tohex(255, -3)"), "0FF");
  EXPECT_EQ(Eval("return bit.tohex(1, 100)"), "00000001");
  EXPECT_EQ(Eval("return bit.tobit(0xffffffff)"), "-1");
  EXPECT_EQ(Eval("return bit.tobit(2^32 + 5)"), "5");
  EXPECT_EQ(Eval("return bit.tobit(1.5)"), "2");
  EXPECT_EQ(Eval("return bit.tobit(2.5)"), "2");
  EXPECT_EQ(Eval("return bit.bnot(0)"), "-1");
  EXPECT_EQ(Eval("return bit.band(0xff, 0x0f, 0x3)"), "3");
  EXPECT_EQ(Eval("return bit.bor(1, 2, 4)"), "7");
  EXPECT_EQ(Eval("return bit.bxor(5, 3)"), "6");
  EXPECT_EQ(Eval("return bit.lshift(1, 31)"), "-2147483648");
  EXPECT_EQ(Eval("return bit.lshift(1, 33)"), "2");
  EXPECT_EQ(Eval("return bit.rshift(-1, 28)"), "15");
  EXPECT_EQ(Eval("return bit.arshift(-256, 4)"), "-16");
  EXPECT_EQ(Eval("return bit.rol(0x12345678, 12)"), "1164411171");
  EXPECT_EQ(Eval("return bit.ror(0x12345678, 12)"), "1736516421");
  EXPECT_EQ(Eval("return bit.rol(5, 0)"), "5");
  EXPECT_EQ(Eval("return bit.bswap(0x12345678)"), "2018915346");
  EXPECT_EQ(Eval("return bit.tobit('12')"), "12");
  EXPECT_EQ(Eval("return bit.tobit('x')"),
            "ERR:bad argument #1 to 'tobit' (number expected, got string)");
  EXPECT_EQ(Eval("return bit.band()"),
            "ERR:bad argument #1 to 'band' (number expected, got no value)");
}

// CVE-2025-46817: ranges near INT_MAX neither overflow nor push past the stack.
TEST_F(LuaLibs, GuardedUnpack) {
  EXPECT_EQ(Eval("return unpack({}, 0, 2147483647)"), "ERR:too many results to unpack");
  EXPECT_EQ(Eval("return unpack({}, -2147483648, 2147483647)"), "ERR:too many results to unpack");
  EXPECT_EQ(Eval("return unpack({}, -2, 2147483647)"), "ERR:too many results to unpack");
  EXPECT_EQ(Eval("return unpack({}, 2147483647, 2147483647)"), "<nil>");
  EXPECT_EQ(Eval("return select('#', unpack({}, 2147483647, -2147483648))"), "0");
  EXPECT_EQ(Eval("return select('#', unpack({1, 2, 3}))"), "3");
  EXPECT_EQ(Eval("return select(2, unpack({1, 2, 3}, 2))"), "3");
  EXPECT_EQ(Eval("return select('#', unpack({1, 2, 3}, 2, 5))"), "4");
  EXPECT_EQ(Eval("return select('#', unpack({}, 1, 7990))"), "7990");
  EXPECT_EQ(Eval("return unpack({}, 1, 9000)"), "ERR:too many results to unpack");
  EXPECT_EQ(Eval("return unpack(1)"),
            "ERR:bad argument #1 to 'unpack' (table expected, got number)");
}

}  // namespace
}  // namespace vireo
