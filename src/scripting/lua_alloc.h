// The memory allocator of vireo's Lua states.
//
// A script run creates and drops many small objects (strings for every argument and reply,
// tables for KEYS, ARGV and array replies, closures), and Lua's collector frees them in bulk.
// Through glibc malloc that pattern overflows the per-thread cache and lands in the general bins,
// where allocation is slow. Lua passes the old size on every free and resize, so small blocks
// can come from exact size classes without any header: free lists of 16-byte granules up to
// 256 bytes, carved from 64 KB chunks that are returned only when the state is closed. Larger
// blocks go to malloc.
//
// The allocator also bounds the state: a request that would take the bytes in use past the
// limit fails (returns NULL) the way an exhausted malloc does, and Lua turns that into its
// "not enough memory" error inside the script's protected call. Without the bound a script's
// string.rep or table growth would run the machine out of memory before malloc ever failed.
#pragma once

#include <cstddef>
#include <vector>

namespace vireo {

class LuaAllocator {
 public:
  static constexpr size_t kGranule = 16;
  static constexpr size_t kMaxSmall = 256;
  static constexpr size_t kChunkBytes = 64 * 1024;
  // Default bound of one Lua state's heap.
  static constexpr size_t kDefaultLimit = size_t{4} << 30;

  explicit LuaAllocator(size_t limit = kDefaultLimit) : limit_(limit) {}
  ~LuaAllocator();
  LuaAllocator(const LuaAllocator&) = delete;
  LuaAllocator& operator=(const LuaAllocator&) = delete;

  // The lua_Alloc function; `ud` is the LuaAllocator.
  static void* Alloc(void* ud, void* ptr, size_t old_size, size_t new_size);

  // Bytes held in chunks (in use or on free lists), for tests and memory reports.
  size_t chunk_bytes() const { return chunks_.size() * kChunkBytes; }
  // Bytes Lua holds (the sum of its live block sizes).
  size_t used() const { return used_; }
  size_t limit() const { return limit_; }
  // Lowering the limit below what is in use refuses every growth until enough is freed.
  void set_limit(size_t limit) { limit_ = limit; }

 private:
  // A freed small block: the next block of its class.
  struct FreeBlock {
    FreeBlock* next;
  };
  static constexpr size_t kClasses = kMaxSmall / kGranule;

  static size_t ClassOf(size_t size) { return (size - 1) / kGranule; }
  void* AllocSmall(size_t size_class);
  void FreeSmall(void* p, size_t size_class);
  void* Resize(void* ptr, size_t old_size, size_t new_size);

  FreeBlock* free_[kClasses] = {};
  std::vector<void*> chunks_;
  char* bump_ = nullptr;  // the unused tail of the newest chunk
  size_t bump_left_ = 0;
  size_t limit_;
  size_t used_ = 0;
};

}  // namespace vireo
