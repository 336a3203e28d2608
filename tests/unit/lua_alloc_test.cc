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

}  // namespace
}  // namespace vireo
