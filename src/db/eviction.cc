#include "db/eviction.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "db/database.h"

namespace vireo {

EvictionPolicy ParseEvictionPolicy(std::string_view name) {
  if (name == "allkeys-lru") return EvictionPolicy::kAllKeysLru;
  if (name == "allkeys-lfu") return EvictionPolicy::kAllKeysLfu;
  if (name == "allkeys-random") return EvictionPolicy::kAllKeysRandom;
  if (name == "volatile-lru") return EvictionPolicy::kVolatileLru;
  if (name == "volatile-lfu") return EvictionPolicy::kVolatileLfu;
  if (name == "volatile-random") return EvictionPolicy::kVolatileRandom;
  if (name == "volatile-ttl") return EvictionPolicy::kVolatileTtl;
  return EvictionPolicy::kNoEviction;
}

uint64_t EvictionPool::Score(EvictionPolicy policy, uint32_t clock, int64_t expire_ms,
                             const AccessTracking& access, int64_t now_ms) {
  switch (policy) {
    case EvictionPolicy::kAllKeysLru:
    case EvictionPolicy::kVolatileLru:
      return static_cast<uint64_t>(LruIdleMs(clock, now_ms));
    case EvictionPolicy::kAllKeysLfu:
    case EvictionPolicy::kVolatileLfu:
      return 255 - LfuDecayed(clock, now_ms, access.lfu_decay_time);
    case EvictionPolicy::kVolatileTtl:
      // The nearest expiry first; TTLs are never negative here (expired keys are gone).
      return std::numeric_limits<uint64_t>::max() - static_cast<uint64_t>(expire_ms);
    default:
      return 0;
  }
}

void EvictionPool::Populate(Database& db, EvictionPolicy policy, int samples,
                            const AccessTracking& access, int64_t now_ms,
                            uint64_t (*random)(void*), void* random_ctx) {
  const bool volatile_only = IsVolatile(policy);
  if ((volatile_only ? db.expires_size() : db.size()) == 0) return;
  // Two passes per batch: first collect the sampled entries, prefetching the cache line of
  // each one's access clock, then score them. Every sample is a cache miss on a table bigger
  // than the cache; this way the misses overlap instead of following one another.
  constexpr size_t kBatch = 32;
  const DbEntry* entries[kBatch];
  int64_t expire_ms[kBatch];
  for (size_t remaining = static_cast<size_t>(samples); remaining > 0;) {
    const size_t want = std::min(remaining, kBatch);
    remaining -= want;
    size_t got = 0;
    const uint64_t r = random(random_ctx);
    if (volatile_only) {
      db.SampleExpiring(r, want, [&](const ExpireEntry* e) {
        __builtin_prefetch(&e->entry->value);
        entries[got] = e->entry;
        expire_ms[got++] = e->when_ms;
      });
    } else {
      db.SampleEntries(r, want, [&](const DbEntry* entry) {
        __builtin_prefetch(&entry->value);
        entries[got] = entry;
        expire_ms[got++] = -1;
      });
    }
    for (size_t i = 0; i < got; ++i) {
      Insert(db.index(), entries[i]->key.view(),
             Score(policy, entries[i]->value.access_clock(), expire_ms[i], access, now_ms));
    }
  }
}

void EvictionPool::Insert(int db, std::string_view key, uint64_t score) {
  // Worse than everything in a full pool: nothing to do (and it can't be pooled already, since
  // a pooled copy would score the same or better).
  if (count_ == kSize && score <= slots_[order_[0]].score) return;
  // Sampled again while pooled: a key's score only changes when it is accessed, so a copy can
  // only be among the equal scores; refresh nothing, keep one.
  size_t pos = 0;
  while (pos < count_ && slots_[order_[pos]].score < score) ++pos;
  for (size_t i = pos; i < count_ && slots_[order_[i]].score == score; ++i) {
    const Slot& slot = slots_[order_[i]];
    if (slot.db == db && slot.key == key) return;
  }
  uint8_t free_slot;
  if (count_ == kSize) {
    // Reuse the worst candidate's slot (its string keeps its capacity).
    free_slot = order_[0];
    for (size_t j = 0; j + 1 < pos; ++j) order_[j] = order_[j + 1];
    --pos;
  } else {
    free_slot = free_[kSize - 1 - count_];
    for (size_t j = count_; j > pos; --j) order_[j] = order_[j - 1];
    ++count_;
  }
  order_[pos] = free_slot;
  Slot& slot = slots_[free_slot];
  slot.score = score;
  slot.db = db;
  slot.key.assign(key);
}

std::optional<EvictionCandidate> EvictionPool::PopBest() {
  if (count_ == 0) return std::nullopt;
  const uint8_t index = order_[--count_];
  free_[kSize - 1 - count_] = index;
  const Slot& best = slots_[index];
  return EvictionCandidate{best.db, best.key};
}

EvictionPool::EvictionPool() {
  for (size_t i = 0; i < kSize; ++i) free_[i] = static_cast<uint8_t>(i);
}

void EvictionPool::Clear() {
  count_ = 0;
  for (size_t i = 0; i < kSize; ++i) free_[i] = static_cast<uint8_t>(i);
}

}  // namespace vireo
