// What the allocator itself reports and controls, beyond alloc_counter's used_memory: its name
// for INFO's mem_allocator, jemalloc's statistics (INFO's allocator_* fields), its mallctl
// namespace (DEBUG MALLCTL / MALLCTL-STR), its stats report (MEMORY MALLOC-STATS), purging
// (MEMORY PURGE), and the active defragmenter's question "is this allocation worth moving?".
//
// Everything here is real only in the jemalloc build (VIREO_JEMALLOC); with glibc or under the
// sanitizer it answers as a Redis built with MALLOC=libc does: no statistics, nothing to move.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace vireo::allocator {

// "jemalloc-5.3.0" (jemalloc's own version string, up to its first '-') or "libc".
const std::string& Name();

// True when linked with jemalloc: active defragmentation and the mallctl commands exist.
bool IsJemalloc();

struct Stats {
  size_t allocated = 0;  // bytes in live allocations (stats.allocated)
  size_t active = 0;     // bytes in pages holding live allocations (stats.active)
  size_t resident = 0;   // bytes the allocator has resident (stats.resident)
};

// jemalloc's figures after an epoch refresh (a few microseconds: it merges each arena's and
// thread cache's counters); nullopt without jemalloc.
std::optional<Stats> ReadStats();

// DEBUG MALLCTL / MALLCTL-STR's outcome: exactly one of the fields is set.
struct CtlReply {
  std::optional<int64_t> number;
  std::optional<std::string> text;
  bool ok = false;
  std::string error;  // strerror text of jemalloc's errno
};

// Reads the numeric option `name` (trying 64-, 32- then 8-bit widths, as the option's type is
// not known), writing `value` when given; a write-only option is just written.
CtlReply CtlNumber(const std::string& name, std::optional<int64_t> value);
// Reads the string option `name`, writing `value` when given; "VOID" writes nothing, which
// triggers void controls such as thread.tcache.flush.
CtlReply CtlString(const std::string& name, std::optional<std::string> value);

// malloc_stats_print's report; empty without jemalloc.
std::string StatsReport();

// Returns every arena's unused dirty pages to the system (arena.<all>.purge).
void Purge();

// Turns jemalloc's background purging threads on or off (jemalloc-bg-thread).
void SetBackgroundThread(bool enabled);

// The defragmenter's hint: true when ptr sits in a slab less used than its bin's average and
// not in the slab new allocations come from, so that moving it (MoveAllocation) frees room in
// an emptier slab. Large allocations and non-jemalloc builds: false.
bool ShouldMove(const void* ptr);

// What one defragmentation pass did: allocations moved (hits) and looked at but left (misses).
struct DefragCounters {
  uint64_t hits = 0;
  uint64_t misses = 0;
};

// The defragmenter's step for one allocation: moved (ShouldMove, then MoveAllocation) and its
// new address returned, or null when it stays (then `ptr` is still valid). The caller updates
// every pointer to it. Null for null.
void* Defrag(void* ptr, DefragCounters& counters);

// The same for a typed pointer.
template <typename T>
T* Defrag(T* ptr, DefragCounters& counters) {
  return static_cast<T*>(Defrag(static_cast<void*>(ptr), counters));
}

}  // namespace vireo::allocator
