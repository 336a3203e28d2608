#include "util/allocator.h"

#include "util/alloc_counter.h"

#if defined(VIREO_JEMALLOC)

#include <errno.h>
#include <jemalloc/jemalloc.h>
#include <string.h>

#include <array>

namespace vireo::allocator {

const std::string& Name() {
  static const std::string name = [] {
    const char* version = nullptr;
    size_t len = sizeof(version);
    if (mallctl("version", &version, &len, nullptr, 0) != 0 || version == nullptr) {
      return std::string("jemalloc");
    }
    // "5.3.0-0-g54eaed1d..." names the release and the commit; INFO shows the release.
    std::string_view v(version);
    return "jemalloc-" + std::string(v.substr(0, v.find('-')));
  }();
  return name;
}

bool IsJemalloc() { return true; }

namespace {

size_t ReadSize(const char* name) {
  size_t value = 0;
  size_t len = sizeof(value);
  return mallctl(name, &value, &len, nullptr, 0) == 0 ? value : 0;
}

}  // namespace

std::optional<Stats> ReadStats() {
  // Writing the epoch makes jemalloc gather its counters; without it stats.* are stale.
  uint64_t epoch = 1;
  size_t len = sizeof(epoch);
  mallctl("epoch", &epoch, &len, &epoch, len);
  Stats s;
  s.allocated = ReadSize("stats.allocated");
  s.active = ReadSize("stats.active");
  s.resident = ReadSize("stats.resident");
  return s;
}

CtlReply CtlNumber(const std::string& name, std::optional<int64_t> value) {
  CtlReply reply;
  // The option's width is unknown: jemalloc answers EINVAL to a wrong size, so the widest is
  // tried first, then halved (x86-64 is little-endian: the low bytes of `val` and `old` are the
  // narrower integer's).
  int64_t val = value.value_or(0);
  for (size_t width = sizeof(int64_t); width > 0; width /= 2) {
    int64_t old = 0;
    size_t old_len = width;
    int ret = mallctl(name.c_str(), &old, &old_len, value ? &val : nullptr, value ? width : 0);
    if (ret == EPERM && value) {
      // A write-only option: write it alone.
      if (mallctl(name.c_str(), nullptr, nullptr, &val, width) == 0) {
        reply.ok = true;
        return reply;
      }
    }
    if (ret == EINVAL) continue;
    if (ret != 0) {
      reply.error = strerror(ret);
      return reply;
    }
    reply.number = old;
    return reply;
  }
  reply.error = strerror(EINVAL);
  return reply;
}

CtlReply CtlString(const std::string& name, std::optional<std::string> value) {
  CtlReply reply;
  const char* old = nullptr;
  size_t len = sizeof(old);
  // The old value first: a write would replace the string it points at.
  const int read_ret = mallctl(name.c_str(), &old, &len, nullptr, 0);
  if (read_ret != 0 && !(read_ret == EPERM && value)) {
    reply.error = strerror(read_ret);
    return reply;
  }
  int write_ret = 0;
  if (value) {
    const char* str = value->c_str();
    // "VOID" writes nothing: how a void control (thread.tcache.flush) is triggered.
    write_ret = *value == "VOID" ? mallctl(name.c_str(), nullptr, nullptr, nullptr, 0)
                                 : mallctl(name.c_str(), nullptr, nullptr, &str, sizeof(str));
  }
  if (read_ret == 0) {
    reply.text = old != nullptr ? old : "";
  } else if (write_ret != 0) {
    reply.error = strerror(write_ret);
  } else {
    reply.ok = true;
  }
  return reply;
}

std::string StatsReport() {
  std::string out;
  malloc_stats_print(
      [](void* opaque, const char* text) { static_cast<std::string*>(opaque)->append(text); }, &out,
      nullptr);
  return out;
}

void Purge() {
  // MALLCTL_ARENAS_ALL stands for every arena.
  const std::string name = "arena." + std::to_string(MALLCTL_ARENAS_ALL) + ".purge";
  mallctl(name.c_str(), nullptr, nullptr, nullptr, 0);
}

void SetBackgroundThread(bool enabled) {
  mallctl("background_thread", nullptr, nullptr, &enabled, sizeof(enabled));
}

namespace {

// experimental.utilization.query's answer for one pointer (jemalloc's documented layout):
// the slab new allocations of that size come from, then the pointer's slab and its bin.
struct Utilization {
  void* slabcur;
  size_t nfree;      // free regions of the pointer's slab
  size_t nregs;      // regions of the pointer's slab (1: a large allocation)
  size_t size;       // the slab's size in bytes
  size_t bin_nfree;  // free regions in all the bin's slabs
  size_t bin_nregs;  // regions in all the bin's slabs
};

// The mallctl name is resolved once; each query is then a lookup by index.
bool Query(const void* ptr, Utilization* out) {
  static std::array<size_t, 3> mib;
  static size_t mib_len = 0;
  static const bool resolved = [] {
    mib_len = mib.size();
    return mallctlnametomib("experimental.utilization.query", mib.data(), &mib_len) == 0;
  }();
  if (!resolved) return false;
  size_t out_len = sizeof(*out);
  return mallctlbymib(mib.data(), mib_len, out, &out_len, &ptr, sizeof(ptr)) == 0;
}

}  // namespace

bool ShouldMove(const void* ptr) {
  Utilization u;
  if (!Query(ptr, &u)) return false;
  // A large allocation, or a full slab: moving it frees nothing.
  if (u.nregs <= 1 || u.nfree == 0) return false;
  const auto* p = static_cast<const char*>(ptr);
  const auto* cur = static_cast<const char*>(u.slabcur);
  // In the slab new allocations come from: a move would land in the same slab.
  if (cur != nullptr && p >= cur && p < cur + u.size) return false;
  size_t bin_used = u.bin_nregs - u.bin_nfree;
  size_t bin_regs = u.bin_nregs;
  if (cur != nullptr) {
    // The bin's average leaves the current slab out: it fills before any other, and an emptier
    // current slab would pull the average under every other slab's (all equally used) and
    // nothing would ever move.
    Utilization c;
    if (Query(cur, &c) && c.nregs <= bin_regs && c.nregs - c.nfree <= bin_used) {
      bin_used -= c.nregs - c.nfree;
      bin_regs -= c.nregs;
    }
  }
  // Less used than average (cross-multiplied: used/nregs <= bin_used/bin_regs).
  return (u.nregs - u.nfree) * bin_regs <= bin_used * u.nregs;
}

}  // namespace vireo::allocator

#else  // glibc or the sanitizer's allocator

namespace vireo::allocator {

const std::string& Name() {
  static const std::string name = "libc";
  return name;
}
bool IsJemalloc() { return false; }
std::optional<Stats> ReadStats() { return std::nullopt; }
CtlReply CtlNumber(const std::string&, std::optional<int64_t>) { return {}; }
CtlReply CtlString(const std::string&, std::optional<std::string>) { return {}; }
std::string StatsReport() { return {}; }
void Purge() {}
void SetBackgroundThread(bool) {}
bool ShouldMove(const void*) { return false; }

}  // namespace vireo::allocator

#endif

namespace vireo::allocator {

void* Defrag(void* ptr, DefragCounters& counters) {
  if (ptr == nullptr) return nullptr;
  if (!ShouldMove(ptr)) {
    ++counters.misses;
    return nullptr;
  }
  void* out = MoveAllocation(ptr);
  if (out == nullptr) {
    ++counters.misses;
    return nullptr;
  }
  ++counters.hits;
  return out;
}

}  // namespace vireo::allocator
