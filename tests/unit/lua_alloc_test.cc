#include "scripting/lua_alloc.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

extern "C" {
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
}

namespace vireo {
namespace {

void* Alloc(LuaAllocator& a, void* p, size_t old_size, size_t new_size) {
  return LuaAllocator::Alloc(&a, p, old_size, new_size);
}

TEST(LuaAllocatorTest, SmallBlocksAreAlignedAndReused) {
  LuaAllocator a;
  void* p = Alloc(a, nullptr, 0, 24);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 16, 0u);
  EXPECT_EQ(Alloc(a, p, 24, 0), nullptr);
  // Same size class (17..32 bytes): the freed block comes back.
  EXPECT_EQ(Alloc(a, nullptr, 0, 32), p);
}

TEST(LuaAllocatorTest, ResizeKeepsContentsAcrossClassesAndMalloc) {
  LuaAllocator a;
  auto* p = static_cast<char*>(Alloc(a, nullptr, 0, 10));
  std::memcpy(p, "abcdefghi", 10);
  // Within the class: same block.
  EXPECT_EQ(Alloc(a, p, 10, 16), p);
  // Small to small of another class, to a malloc'd block, and back down.
  auto* q = static_cast<char*>(Alloc(a, p, 16, 100));
  EXPECT_STREQ(q, "abcdefghi");
  auto* r = static_cast<char*>(Alloc(a, q, 100, 5000));
  EXPECT_STREQ(r, "abcdefghi");
  auto* s = static_cast<char*>(Alloc(a, r, 5000, 12));
  EXPECT_STREQ(s, "abcdefghi");
  Alloc(a, s, 12, 0);
}

TEST(LuaAllocatorTest, RandomWorkloadKeepsBlocksDistinct) {
  LuaAllocator a;
  std::mt19937 rng(7);
  struct Block {
    unsigned char* p;
    size_t size;
    unsigned char tag;
  };
  std::vector<Block> live;
  for (int step = 0; step < 200000; ++step) {
    int op = static_cast<int>(rng() % 3);
    if (op == 0 || live.empty()) {
      size_t size = 1 + rng() % (rng() % 8 == 0 ? 2000 : 300);
      auto* p = static_cast<unsigned char*>(Alloc(a, nullptr, 0, size));
      auto tag = static_cast<unsigned char>(rng());
      std::memset(p, tag, size);
      live.push_back({p, size, tag});
    } else {
      size_t i = rng() % live.size();
      Block& b = live[i];
      for (size_t k = 0; k < b.size; ++k) ASSERT_EQ(b.p[k], b.tag);
      if (op == 1) {
        Alloc(a, b.p, b.size, 0);
        live[i] = live.back();
        live.pop_back();
      } else {
        size_t size = 1 + rng() % 600;
        b.p = static_cast<unsigned char*>(Alloc(a, b.p, b.size, size));
        for (size_t k = 0; k < std::min(size, b.size); ++k) ASSERT_EQ(b.p[k], b.tag);
        std::memset(b.p, b.tag, size);
        b.size = size;
      }
    }
  }
  for (Block& b : live) Alloc(a, b.p, b.size, 0);
}

TEST(LuaAllocatorTest, RunsALuaState) {
  auto* allocator = new LuaAllocator();
  lua_State* L = lua_newstate(LuaAllocator::Alloc, allocator);
  ASSERT_NE(L, nullptr);
  luaL_openlibs(L);
  const char* script =
      "local t = {} for i = 1, 20000 do t[i] = 'x' .. i end "
      "local s = 0 for i = 1, #t do s = s + #t[i] end return s";
  ASSERT_EQ(luaL_dostring(L, script), 0) << lua_tostring(L, -1);
  EXPECT_EQ(lua_tointeger(L, -1), 108894);
  EXPECT_GT(allocator->chunk_bytes(), 0u);
  lua_close(L);
  delete allocator;
}

TEST(LuaAllocatorTest, TracksUsedBytes) {
  LuaAllocator a(1 << 20);
  void* p = Alloc(a, nullptr, 0, 100);
  void* q = Alloc(a, nullptr, 0, 5000);
  EXPECT_EQ(a.used(), 5100u);
  q = Alloc(a, q, 5000, 300);
  EXPECT_EQ(a.used(), 400u);
  Alloc(a, p, 100, 0);
  Alloc(a, q, 300, 0);
  EXPECT_EQ(a.used(), 0u);
}

TEST(LuaAllocatorTest, RefusesGrowthPastTheLimit) {
  LuaAllocator a(10000);
  void* p = Alloc(a, nullptr, 0, 6000);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(Alloc(a, nullptr, 0, 5000), nullptr);
  // A refused resize leaves the block as it was; shrinking always works.
  EXPECT_EQ(Alloc(a, p, 6000, 20000), nullptr);
  EXPECT_EQ(a.used(), 6000u);
  p = Alloc(a, p, 6000, 1000);
  ASSERT_NE(p, nullptr);
  void* q = Alloc(a, nullptr, 0, 5000);
  EXPECT_NE(q, nullptr);
  Alloc(a, p, 1000, 0);
  Alloc(a, q, 5000, 0);
  EXPECT_EQ(a.used(), 0u);
}

TEST(LuaAllocatorTest, LimitLoweredBelowUseRefusesGrowthOnly) {
  LuaAllocator a(10000);
  void* p = Alloc(a, nullptr, 0, 6000);
  a.set_limit(4000);
  EXPECT_EQ(Alloc(a, nullptr, 0, 16), nullptr);
  p = Alloc(a, p, 6000, 3000);
  ASSERT_NE(p, nullptr);
  void* q = Alloc(a, nullptr, 0, 16);
  EXPECT_NE(q, nullptr);
  Alloc(a, q, 16, 0);
  Alloc(a, p, 3000, 0);
}

// Table growth and string building that run into the limit are Lua errors ("not enough
// memory") inside the protected call, and the state stays usable after a collection.
TEST(LuaAllocatorTest, ExhaustionIsALuaError) {
  auto* allocator = new LuaAllocator(8 << 20);
  lua_State* L = lua_newstate(LuaAllocator::Alloc, allocator);
  ASSERT_NE(L, nullptr);
  luaL_openlibs(L);
  for (const char* script : {"local t = {} for i = 1, 1e8 do t[i] = i end",
                             "local t = {} for i = 1, 1e8 do t[i] = 'x' .. i end",
                             "local s = 'x' for i = 1, 40 do s = s .. s end"}) {
    ASSERT_EQ(luaL_loadstring(L, script), 0);
    EXPECT_EQ(lua_pcall(L, 0, 0, 0), LUA_ERRMEM) << script;
    EXPECT_STREQ(lua_tostring(L, -1), "not enough memory");
    lua_pop(L, 1);
    lua_gc(L, LUA_GCCOLLECT, 0);
    EXPECT_LT(allocator->used(), 1u << 20);
    ASSERT_EQ(luaL_dostring(L, "return #string.rep('ab', 1000)"), 0);
    EXPECT_EQ(lua_tointeger(L, -1), 2000);
    lua_pop(L, 1);
  }
  lua_close(L);
  EXPECT_EQ(allocator->used(), 0u);
  delete allocator;
}

}  // namespace
}  // namespace vireo
