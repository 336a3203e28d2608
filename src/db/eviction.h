// Choosing which keys maxmemory evicts: the policies and the sampled candidate pool.
//
// Like Redis, vireo approximates LRU/LFU/TTL by sampling: every eviction samples
// maxmemory-samples keys of each database and merges them into a small pool of the best
// candidates seen so far, which survives between evictions. Evicting the best of the pool
// rather than the best of one sample makes the choice much closer to true LRU for the same
// sampling cost, because good candidates found earlier are not forgotten.
//
// The pool holds copies of key names (not entry pointers): the entries can be deleted or
// replaced between two evictions, so a candidate is looked up again before it is evicted.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "db/access_clock.h"

namespace vireo {

class Database;

enum class EvictionPolicy : uint8_t {
  kNoEviction,
  kAllKeysLru,
  kAllKeysLfu,
  kAllKeysRandom,
  kVolatileLru,
  kVolatileLfu,
  kVolatileRandom,
  kVolatileTtl,
};

// The policy a maxmemory-policy name means (the config has already validated it).
EvictionPolicy ParseEvictionPolicy(std::string_view name);
inline bool IsVolatile(EvictionPolicy p) { return p >= EvictionPolicy::kVolatileLru; }
inline bool IsRandom(EvictionPolicy p) {
  return p == EvictionPolicy::kAllKeysRandom || p == EvictionPolicy::kVolatileRandom;
}
inline bool IsLfu(EvictionPolicy p) {
  return p == EvictionPolicy::kAllKeysLfu || p == EvictionPolicy::kVolatileLfu;
}

struct EvictionCandidate {
  int db = -1;
  std::string key;
};

class EvictionPool {
 public:
  static constexpr size_t kSize = 16;

  EvictionPool();

  // Samples up to `samples` keys of `db` (only keys with a TTL for volatile policies) and
  // keeps the best of them in the pool. `random` feeds the sampling.
  void Populate(Database& db, EvictionPolicy policy, int samples, const AccessTracking& access,
                int64_t now_ms, uint64_t (*random)(void*), void* random_ctx);
  // The best candidate, removed from the pool; nullopt when the pool is empty.
  std::optional<EvictionCandidate> PopBest();
  size_t size() const { return count_; }
  void Clear();

  // Higher means evict sooner: idle milliseconds (LRU), 255 minus the decayed counter (LFU),
  // how soon the TTL ends (volatile-ttl).
  static uint64_t Score(EvictionPolicy policy, uint32_t clock, int64_t expire_ms,
                        const AccessTracking& access, int64_t now_ms);

 private:
  void Insert(int db, std::string_view key, uint64_t score);

  struct Slot {
    uint64_t score = 0;
    int db = -1;
    std::string key;
  };
  // Slots stay put (their key strings keep their capacity, so pooling a key rarely
  // allocates); order_[0 .. count_) indexes them by ascending score, the best candidate last.
  // The unused slot indices are a stack in free_[0 .. kSize - count_).
  std::array<Slot, kSize> slots_;
  std::array<uint8_t, kSize> order_{};
  std::array<uint8_t, kSize> free_{};
  size_t count_ = 0;
};

}  // namespace vireo
