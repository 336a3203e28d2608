// SHA-1, and the struct and cmsgpack Lua modules run in a bare Lua state.
#include <gtest/gtest.h>

#include <string>

#include "scripting/lua_engine.h"
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
  }
  void TearDown() override { lua_close(L); }

  // Runs `code` (which returns one value) and gives it as a string; errors as "ERR:<msg>".
  std::string Eval(const std::string& code) {
    if (luaL_loadstring(L, code.c_str()) != 0 || lua_pcall(L, 0, 1, 0) != 0) {
      std::string msg = std::string("ERR:") + lua_tostring(L, -1);
      lua_pop(L, 1);
      return msg;
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

}  // namespace
}  // namespace vireo
