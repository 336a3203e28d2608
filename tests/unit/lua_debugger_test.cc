// The Lua debugger's standalone pieces: its command parser (as forgiving and as strict as
// Redis's), the human form of RESP replies (`<reply> ...` lines), and the form of Lua values
// (`print`, redis.debug()).
#include "scripting/lua_debugger.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

extern "C" {
#include <lualib.h>
}

namespace vireo {
namespace {

TEST(LdbParseTest, CompleteCommand) {
  std::vector<std::string> argv;
  EXPECT_EQ(ParseLdbCommand("*2\r\n$5\r\nprint\r\n$1\r\na\r\n", &argv), LdbParse::kOk);
  EXPECT_EQ(argv, (std::vector<std::string>{"print", "a"}));
  // Arguments may hold any byte.
  EXPECT_EQ(ParseLdbCommand(std::string("*1\r\n$3\r\na\0b\r\n", 13), &argv), LdbParse::kOk);
  EXPECT_EQ(argv[0], std::string("a\0b", 3));
}

TEST(LdbParseTest, PartialInputWaitsForMore) {
  std::vector<std::string> argv;
  EXPECT_EQ(ParseLdbCommand("", &argv), LdbParse::kNeedMore);
  EXPECT_EQ(ParseLdbCommand("*1", &argv), LdbParse::kNeedMore);
  EXPECT_EQ(ParseLdbCommand("*1\r\n", &argv), LdbParse::kNeedMore);
  EXPECT_EQ(ParseLdbCommand("*1\r\n$4\r\nst", &argv), LdbParse::kNeedMore);
  EXPECT_EQ(ParseLdbCommand("*2\r\n$4\r\nstep\r\n", &argv), LdbParse::kNeedMore);
}

TEST(LdbParseTest, ProtocolErrors) {
  std::vector<std::string> argv;
  EXPECT_EQ(ParseLdbCommand("step\r\n", &argv), LdbParse::kProtocolError);  // no '*'
  EXPECT_EQ(ParseLdbCommand("*0\r\n", &argv), LdbParse::kProtocolError);
  EXPECT_EQ(ParseLdbCommand("*1025\r\n", &argv), LdbParse::kProtocolError);
  EXPECT_EQ(ParseLdbCommand("*1\r\n:1\r\n", &argv), LdbParse::kProtocolError);
  EXPECT_EQ(ParseLdbCommand("*1\r\n$0\r\n\r\n", &argv), LdbParse::kProtocolError);
  EXPECT_EQ(ParseLdbCommand("*1\r\n$1025\r\n", &argv), LdbParse::kProtocolError);
  EXPECT_EQ(ParseLdbCommand("*1\r\n$1\r\nabc", &argv), LdbParse::kProtocolError);
}

std::string Human(std::string_view resp) {
  std::string out;
  EXPECT_EQ(RespToHuman(resp, &out), resp.size()) << resp;
  return out;
}

TEST(LdbRespToHumanTest, Shapes) {
  EXPECT_EQ(Human(":12\r\n"), "12");
  EXPECT_EQ(Human("$3\r\na\nb\r\n"), "\"a\\nb\"");
  EXPECT_EQ(Human("$-1\r\n"), "NULL");
  EXPECT_EQ(Human("*-1\r\n"), "NULL");
  EXPECT_EQ(Human("+OK\r\n"), "\"+OK\"");
  EXPECT_EQ(Human("-ERR no\r\n"), "\"-ERR no\"");
  EXPECT_EQ(Human("*2\r\n:1\r\n$1\r\nx\r\n"), "[1,\"x\"]");
  EXPECT_EQ(Human("~1\r\n:1\r\n"), "~(1)");
  EXPECT_EQ(Human("%1\r\n$1\r\nk\r\n:2\r\n"), "{\"k\" => 2}");
  EXPECT_EQ(Human("_\r\n"), "(null)");
  EXPECT_EQ(Human("#t\r\n"), "#true");
  EXPECT_EQ(Human("#f\r\n"), "#false");
  EXPECT_EQ(Human(",1.5\r\n"), "(double) 1.5");
}

TEST(LdbValueTest, LuaValues) {
  lua_State* L = luaL_newstate();
  ASSERT_EQ(luaL_dostring(L, "return 'a\"b', 1.5, nil, true, {1, 'x'}, {k = 2}, {{{}}}"), 0);
  const char* expected[] = {"\"a\\\"b\"", "1.5",         "nil",   "true",
                            "{1; \"x\"}", "{[\"k\"]=2}", "{{{}}}"};
  for (int i = 1; i <= 7; ++i) {
    std::string out;
    LdbAppendValue(L, i, &out);
    EXPECT_EQ(out, expected[i - 1]);
  }
  // Nesting stops at a bound instead of recursing without end.
  ASSERT_EQ(luaL_dostring(L, "local t = {}; t[1] = t; return t"), 0);
  std::string out;
  LdbAppendValue(L, -1, &out);
  EXPECT_NE(out.find("<max recursion level reached! Nested table?>"), std::string::npos);
  lua_close(L);
}

}  // namespace
}  // namespace vireo
