#include "scripting/lua_alloc.h"

#include <cstdlib>
#include <cstring>

namespace vireo {

LuaAllocator::~LuaAllocator() {
  for (void* chunk : chunks_) std::free(chunk);
}

void* LuaAllocator::AllocSmall(size_t size_class) {
  if (FreeBlock* block = free_[size_class]; block != nullptr) {
    free_[size_class] = block->next;
    return block;
  }
  const size_t bytes = (size_class + 1) * kGranule;
  if (bump_left_ < bytes) {
    // The tail of the old chunk (less than one block of this class) feeds the smaller classes'
    // free lists rather than being lost.
    // (Every block is a whole number of granules, so the tail is too.)
    while (bump_left_ >= kGranule) {
      const size_t tail_class = (bump_left_ < kMaxSmall ? bump_left_ : kMaxSmall) / kGranule - 1;
      FreeSmall(bump_, tail_class);
      bump_ += (tail_class + 1) * kGranule;
      bump_left_ -= (tail_class + 1) * kGranule;
    }
    void* chunk = std::malloc(kChunkBytes);
    if (chunk == nullptr) return nullptr;  // Lua raises its memory error
    chunks_.push_back(chunk);
    bump_ = static_cast<char*>(chunk);
    bump_left_ = kChunkBytes;
  }
  void* out = bump_;
  bump_ += bytes;
  bump_left_ -= bytes;
  return out;
}

void LuaAllocator::FreeSmall(void* p, size_t size_class) {
  auto* block = static_cast<FreeBlock*>(p);
  block->next = free_[size_class];
  free_[size_class] = block;
}

void* LuaAllocator::Resize(void* ptr, size_t old_size, size_t new_size) {
  const bool old_small = old_size <= kMaxSmall;
  const bool new_small = new_size <= kMaxSmall;
  if (old_small && new_small && ClassOf(old_size) == ClassOf(new_size)) return ptr;
  if (!old_small && !new_small) return std::realloc(ptr, new_size);
  void* out = new_small ? AllocSmall(ClassOf(new_size)) : std::malloc(new_size);
  if (out == nullptr) return nullptr;
  std::memcpy(out, ptr, old_size < new_size ? old_size : new_size);
  if (old_small) {
    FreeSmall(ptr, ClassOf(old_size));
  } else {
    std::free(ptr);
  }
  return out;
}

void* LuaAllocator::Alloc(void* ud, void* ptr, size_t old_size, size_t new_size) {
  auto* self = static_cast<LuaAllocator*>(ud);
  // Lua 5.1 gives the exact old size of every block it frees or resizes; 0 when ptr is null.
  if (ptr == nullptr) old_size = 0;
  if (new_size == 0) {
    if (ptr != nullptr) {
      if (old_size <= kMaxSmall) {
        self->FreeSmall(ptr, ClassOf(old_size));
      } else {
        std::free(ptr);
      }
      self->used_ -= old_size;
    }
    return nullptr;
  }
  // Over the bound: fail as malloc would. Lua 5.1 never asks to shrink a block and then treats
  // the failure as fatal, but refusing only growth keeps shrinking always possible anyway.
  if (new_size > old_size &&
      (self->used_ > self->limit_ || new_size - old_size > self->limit_ - self->used_)) {
    return nullptr;
  }
  void* out;
  if (ptr == nullptr) {
    out = new_size <= kMaxSmall ? self->AllocSmall(ClassOf(new_size)) : std::malloc(new_size);
  } else {
    out = self->Resize(ptr, old_size, new_size);
  }
  if (out != nullptr) self->used_ += new_size - old_size;
  return out;
}

}  // namespace vireo
