// PushChunk, the one way source reaches Lua's parser: what it refuses before the lexer sees it.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "scripting/lua_engine.h"

namespace vireo {
namespace {

class LuaChunkTest : public ::testing::Test {
 protected:
  void SetUp() override {
    L = luaL_newstate();
    luaL_openlibs(L);
  }
  void TearDown() override { lua_close(L); }

  // Runs PushChunk under `name` and returns its error message ("" when it compiled).
  std::string Load(const char* source, size_t len, const char* name) {
    lua_pushstring(L, name);
    int results = PushChunk(L, source, len, lua_tostring(L, -1));
    std::string message;
    if (results == 2) {
      EXPECT_TRUE(lua_isnil(L, -2));
      message = lua_tostring(L, -1);
    } else {
      EXPECT_TRUE(lua_isfunction(L, -1));
    }
    lua_settop(L, 0);
    return message;
  }

  lua_State* L = nullptr;
};

TEST_F(LuaChunkTest, CompilesSource) {
  EXPECT_EQ(Load("return 1", 8, "=x"), "");
  EXPECT_EQ(Load("", 0, "=x"), "");
  EXPECT_EQ(Load("x = = 1", 7, "@user_script"), "user_script:1: unexpected symbol near '='");
}

TEST_F(LuaChunkTest, RefusesBytecodeWithTheTextParsersError) {
  ASSERT_EQ(luaL_dostring(L, "return string.dump(function() return 1 end)"), 0);
  size_t len = 0;
  const char* bytes = lua_tolstring(L, -1, &len);
  std::string dump(bytes, len);
  lua_settop(L, 0);
  EXPECT_EQ(Load(dump.data(), dump.size(), "@user_script"),
            "user_script:1: unexpected symbol near 'char(27)'");
  EXPECT_EQ(Load("\x1b", 1, "=chunk"), "chunk:1: unexpected symbol near 'char(27)'");
}

// CVE-2025-46819: the lexer's out-of-bounds reads need sources of 2^30 bytes or more. Such a
// chunk is refused from its length alone: the buffer here is never written, and never read.
TEST_F(LuaChunkTest, RefusesChunksTheLexerMishandles) {
  std::unique_ptr<char[]> huge(new char[kMaxChunkBytes]);
  EXPECT_EQ(Load(huge.get(), kMaxChunkBytes, "=huge"), "chunk too large (1 GB or more)");
}

}  // namespace
}  // namespace vireo
