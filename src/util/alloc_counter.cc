#include "util/alloc_counter.h"

#if defined(__SANITIZE_ADDRESS__)
#include <cstdlib>

// Declared here: the sanitizer's interface headers aren't installed with every compiler.
extern "C" size_t __sanitizer_get_current_allocated_bytes();

namespace vireo {
size_t AllocatedBytes() { return __sanitizer_get_current_allocated_bytes(); }
void* MoveAllocation(void*) { return nullptr; }
void* AllocateUncached(size_t size) { return malloc(size); }
void FreeUncached(void* ptr) { free(ptr); }
}  // namespace vireo

#elif defined(VIREO_JEMALLOC)

#include <errno.h>
#include <jemalloc/jemalloc.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <new>

// jemalloc is linked as a shared library that also defines malloc, free, ...; these definitions
// in the executable take their place (so glibc, libstdc++ and Lua allocate through them), and
// reach jemalloc through its non-standard entry points, which have names of their own. Each
// counts the allocation's usable size (sallocx: jemalloc has no per-chunk header), which is how
// Redis counts used_memory on jemalloc too.
namespace vireo {
namespace {

std::atomic<int64_t> allocated_bytes{0};

inline void* Counted(void* ptr) {
  if (ptr != nullptr) {
    allocated_bytes.fetch_add(static_cast<int64_t>(sallocx(ptr, 0)), std::memory_order_relaxed);
  }
  return ptr;
}

inline void Release(void* ptr, int flags) {
  allocated_bytes.fetch_sub(static_cast<int64_t>(sallocx(ptr, 0)), std::memory_order_relaxed);
  dallocx(ptr, flags);
}

// mallocx refuses size 0 (undefined behaviour); malloc(0) must return a unique pointer.
inline size_t NonZero(size_t size) { return size == 0 ? 1 : size; }

inline void* Aligned(size_t alignment, size_t size) {
  return Counted(mallocx(NonZero(size), MALLOCX_ALIGN(alignment)));
}

}  // namespace

size_t AllocatedBytes() {
  int64_t n = allocated_bytes.load(std::memory_order_relaxed);
  return n > 0 ? static_cast<size_t>(n) : 0;
}

// Bypassing the thread cache: a cached region would most likely be one just freed from an
// emptier slab; without the cache jemalloc hands out a region of its current slab or of the
// fullest non-full one, which is what compacts. Freeing past it returns the region to its slab
// at once, so an emptied slab can go back to the system.
void* AllocateUncached(size_t size) { return Counted(mallocx(NonZero(size), MALLOCX_TCACHE_NONE)); }

void FreeUncached(void* ptr) {
  if (ptr != nullptr) Release(ptr, MALLOCX_TCACHE_NONE);
}

void* MoveAllocation(void* ptr) {
  const size_t size = sallocx(ptr, 0);
  void* out = AllocateUncached(size);
  if (out == nullptr) return nullptr;
  memcpy(out, ptr, size);
  FreeUncached(ptr);
  return out;
}

}  // namespace vireo

using vireo::Counted;
using vireo::NonZero;

extern "C" {

void* malloc(size_t size) noexcept { return Counted(mallocx(NonZero(size), 0)); }

void free(void* ptr) noexcept {
  if (ptr != nullptr) vireo::Release(ptr, 0);
}

void* calloc(size_t count, size_t size) noexcept {
  size_t bytes;
  if (__builtin_mul_overflow(count, size, &bytes)) {
    errno = ENOMEM;
    return nullptr;
  }
  return Counted(mallocx(NonZero(bytes), MALLOCX_ZERO));
}

void* realloc(void* ptr, size_t size) noexcept {
  if (ptr == nullptr) return malloc(size);
  if (size == 0) {
    // glibc's realloc(p, 0) frees p and returns null; kept so for the code that relies on it.
    vireo::Release(ptr, 0);
    return nullptr;
  }
  const int64_t old_bytes = static_cast<int64_t>(sallocx(ptr, 0));
  void* out = rallocx(ptr, size, 0);
  if (out == nullptr) {
    errno = ENOMEM;
    return nullptr;
  }
  vireo::allocated_bytes.fetch_add(static_cast<int64_t>(sallocx(out, 0)) - old_bytes,
                                   std::memory_order_relaxed);
  return out;
}

size_t malloc_usable_size(void* ptr) noexcept { return ptr == nullptr ? 0 : sallocx(ptr, 0); }

void* memalign(size_t alignment, size_t size) noexcept { return vireo::Aligned(alignment, size); }

void* aligned_alloc(size_t alignment, size_t size) noexcept {
  return vireo::Aligned(alignment, size);
}

int posix_memalign(void** out, size_t alignment, size_t size) noexcept {
  if (alignment % sizeof(void*) != 0 || (alignment & (alignment - 1)) != 0 || alignment == 0) {
    return EINVAL;
  }
  void* ptr = vireo::Aligned(alignment, size);
  if (ptr == nullptr) return ENOMEM;
  *out = ptr;
  return 0;
}

void* valloc(size_t size) noexcept {
  return vireo::Aligned(static_cast<size_t>(sysconf(_SC_PAGESIZE)), size);
}

void* pvalloc(size_t size) noexcept {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t rounded = size == 0 ? page : (size + page - 1) / page * page;
  return vireo::Aligned(page, rounded);
}

}  // extern "C"

// libjemalloc also defines operator new and delete, straight on its allocator: they would skip
// the count, so the executable replaces them too (C++'s replaceable allocation functions).
// Sized deletes know the size: nallocx gives its usable size without looking the pointer up.
namespace {

void* NewBytes(size_t size, int flags = 0) {
  void* ptr = Counted(mallocx(NonZero(size), flags));
  if (ptr == nullptr) throw std::bad_alloc();
  return ptr;
}

void SizedDelete(void* ptr, size_t size, int flags = 0) {
  if (ptr == nullptr) return;
  vireo::allocated_bytes.fetch_sub(static_cast<int64_t>(nallocx(NonZero(size), flags)),
                                   std::memory_order_relaxed);
  sdallocx(ptr, NonZero(size), flags);
}

int AlignFlags(std::align_val_t al) { return MALLOCX_ALIGN(static_cast<size_t>(al)); }

}  // namespace

void* operator new(size_t size) { return NewBytes(size); }
void* operator new[](size_t size) { return NewBytes(size); }
void* operator new(size_t size, const std::nothrow_t&) noexcept {
  return Counted(mallocx(NonZero(size), 0));
}
void* operator new[](size_t size, const std::nothrow_t&) noexcept {
  return Counted(mallocx(NonZero(size), 0));
}
void* operator new(size_t size, std::align_val_t al) { return NewBytes(size, AlignFlags(al)); }
void* operator new[](size_t size, std::align_val_t al) { return NewBytes(size, AlignFlags(al)); }
void* operator new(size_t size, std::align_val_t al, const std::nothrow_t&) noexcept {
  return Counted(mallocx(NonZero(size), AlignFlags(al)));
}
void* operator new[](size_t size, std::align_val_t al, const std::nothrow_t&) noexcept {
  return Counted(mallocx(NonZero(size), AlignFlags(al)));
}

void operator delete(void* ptr) noexcept { free(ptr); }
void operator delete[](void* ptr) noexcept { free(ptr); }
void operator delete(void* ptr, const std::nothrow_t&) noexcept { free(ptr); }
void operator delete[](void* ptr, const std::nothrow_t&) noexcept { free(ptr); }
void operator delete(void* ptr, size_t size) noexcept { SizedDelete(ptr, size); }
void operator delete[](void* ptr, size_t size) noexcept { SizedDelete(ptr, size); }
void operator delete(void* ptr, std::align_val_t al) noexcept {
  if (ptr != nullptr) vireo::Release(ptr, AlignFlags(al));
}
void operator delete[](void* ptr, std::align_val_t al) noexcept {
  if (ptr != nullptr) vireo::Release(ptr, AlignFlags(al));
}
void operator delete(void* ptr, std::align_val_t al, const std::nothrow_t&) noexcept {
  if (ptr != nullptr) vireo::Release(ptr, AlignFlags(al));
}
void operator delete[](void* ptr, std::align_val_t al, const std::nothrow_t&) noexcept {
  if (ptr != nullptr) vireo::Release(ptr, AlignFlags(al));
}
void operator delete(void* ptr, size_t size, std::align_val_t al) noexcept {
  SizedDelete(ptr, size, AlignFlags(al));
}
void operator delete[](void* ptr, size_t size, std::align_val_t al) noexcept {
  SizedDelete(ptr, size, AlignFlags(al));
}

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

// glibc has no way to ask for a chunk in a fuller part of the heap: nothing is moved.
void* MoveAllocation(void*) { return nullptr; }
void* AllocateUncached(size_t size) { return malloc(size); }
void FreeUncached(void* ptr) { free(ptr); }

}  // namespace vireo

using vireo::ChunkBytes;
using vireo::Counted;
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
