// The bytes this process holds from the allocator, readable on every write for the price of
// one load.
//
// Why our own counter: maxmemory has to compare used memory against the limit before every
// write, and glibc's own figure (mallinfo2) walks every arena under its locks. So malloc,
// free, calloc, realloc and the aligned variants are wrapped (in the executable, which glibc
// supports: "Replacing malloc") around glibc's __libc_* entry points, and each one adds or
// subtracts the chunk's usable size from one atomic counter. Everything is counted: operator
// new, Lua, asio, OpenSSL, the hash-table bucket arrays; frees from the background free thread
// too (hence the atomic). What is counted is each live chunk: its usable size plus glibc's
// 8-byte size word (jemalloc, which Redis counts the same way, has no per-chunk header). Free
// memory the allocator keeps (fragmentation) is not counted; RSS shows it.
//
// The counter is process-wide because the allocator is: two servers embedded in one process
// see the sum of both.
//
// With jemalloc (the default build, VIREO_JEMALLOC) the same wrappers reach jemalloc through its
// own entry points (mallocx, dallocx, rallocx) and count sallocx's usable size, as Redis does.
//
// Under AddressSanitizer the sanitizer owns malloc, so its own allocated-bytes figure is used.
#pragma once

#include <cstddef>

namespace vireo {

size_t AllocatedBytes();

// The active defragmenter's move: a copy of ptr's allocation (same size) allocated past the
// thread cache, so it lands in the fullest slab with room, and ptr freed the same way. Returns
// the new pointer, or null when nothing was moved (allocation failure, or an allocator that
// can't place it better: glibc, the sanitizer). The caller replaces every reference to ptr.
void* MoveAllocation(void* ptr);

// malloc and free past jemalloc's thread cache (plain malloc and free elsewhere): for a
// defragmenter rebuilding an object in a fuller slab. Compatible with free / malloc.
void* AllocateUncached(size_t size);
void FreeUncached(void* ptr);

}  // namespace vireo
