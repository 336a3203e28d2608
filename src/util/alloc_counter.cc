#include "util/alloc_counter.h"

#if defined(__SANITIZE_ADDRESS__)
// Declared here: the sanitizer's interface headers aren't installed with every compiler.
extern "C" size_t __sanitizer_get_current_allocated_bytes();

namespace vireo {
size_t AllocatedBytes() { return __sanitizer_get_current_allocated_bytes(); }
}  // namespace vireo

#else

#include <errno.h>
#include <malloc.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>

extern "C" {
void* __libc_malloc(size_t size);
void __libc_free(void* ptr);
void* __libc_calloc(size_t count, size_t size);
void* __libc_realloc(void* ptr, size_t size);
void* __libc_memalign(size_t alignment, size_t size);
}

namespace vireo {
namespace {

// Signed: a chunk allocated before the wrappers existed (none in practice: the executable's
// definitions are bound before any allocation) could make it dip below zero for a moment.
std::atomic<int64_t> allocated_bytes{0};

// glibc keeps a size word in front of every chunk: memory the process really spends per
// allocation, so it is counted (with it, used_memory tracks RSS growth within a few percent;
// without it, a dataset of small values reads about 10 % low).
constexpr int64_t kChunkHeader = sizeof(size_t);

inline int64_t ChunkBytes(void* ptr) {
  return static_cast<int64_t>(malloc_usable_size(ptr)) + kChunkHeader;
}

inline void* Counted(void* ptr) {
  if (ptr != nullptr) allocated_bytes.fetch_add(ChunkBytes(ptr), std::memory_order_relaxed);
  return ptr;
}

inline void Uncount(void* ptr) {
  allocated_bytes.fetch_sub(ChunkBytes(ptr), std::memory_order_relaxed);
}

}  // namespace

size_t AllocatedBytes() {
  int64_t n = allocated_bytes.load(std::memory_order_relaxed);
  return n > 0 ? static_cast<size_t>(n) : 0;
}

}  // namespace vireo

using vireo::Counted;
using vireo::ChunkBytes;
using vireo::Uncount;

extern "C" {

void* malloc(size_t size) noexcept { return Counted(__libc_malloc(size)); }

void free(void* ptr) noexcept {
  if (ptr == nullptr) return;
  Uncount(ptr);
  __libc_free(ptr);
}

void* calloc(size_t count, size_t size) noexcept { return Counted(__libc_calloc(count, size)); }

void* realloc(void* ptr, size_t size) noexcept {
  if (ptr == nullptr) return Counted(__libc_realloc(nullptr, size));
  const int64_t old_bytes = vireo::ChunkBytes(ptr);
  void* out = __libc_realloc(ptr, size);
  if (out == nullptr) {
    // realloc(p, 0) frees p and returns null; any other null leaves p untouched.
    if (size == 0) vireo::allocated_bytes.fetch_sub(old_bytes, std::memory_order_relaxed);
    return nullptr;
  }
  vireo::allocated_bytes.fetch_add(vireo::ChunkBytes(out) - old_bytes, std::memory_order_relaxed);
  return out;
}

void* memalign(size_t alignment, size_t size) noexcept {
  return Counted(__libc_memalign(alignment, size));
}

void* aligned_alloc(size_t alignment, size_t size) noexcept {
  return Counted(__libc_memalign(alignment, size));
}

int posix_memalign(void** out, size_t alignment, size_t size) noexcept {
  // The checks glibc's posix_memalign makes before it allocates.
  if (alignment % sizeof(void*) != 0 || (alignment & (alignment - 1)) != 0 || alignment == 0) {
    return EINVAL;
  }
  void* ptr = Counted(__libc_memalign(alignment, size));
  if (ptr == nullptr) return ENOMEM;
  *out = ptr;
  return 0;
}

void* valloc(size_t size) noexcept {
  return Counted(__libc_memalign(static_cast<size_t>(sysconf(_SC_PAGESIZE)), size));
}

void* pvalloc(size_t size) noexcept {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t rounded = size == 0 ? page : (size + page - 1) / page * page;
  return Counted(__libc_memalign(page, rounded));
}

}  // extern "C"

#endif
