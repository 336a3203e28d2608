#include "db/eviction.h"

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
  const size_t n = static_cast<size_t>(samples);
  const uint64_t r = random(random_ctx);
  // Keys are copied into the pool only when they make it in; scores are cheap to compute.
  if (volatile_only) {
    db.SampleExpiring(r, n, [&](const ExpireEntry* e) {
      Insert(db.index(), e->entry->key.view(),
             Score(policy, e->entry->value.access_clock(), e->when_ms, access, now_ms));
    });
  } else {
    db.SampleEntries(r, n, [&](const DbEntry* entry) {
      Insert(db.index(), entry->key.view(),
             Score(policy, entry->value.access_clock(), -1, access, now_ms));
    });
  }
}

void EvictionPool::Insert(int db, std::string_view key, uint64_t score) {
  // Already pooled (sampled again): refresh its score in place.
  for (size_t i = 0; i < count_; ++i) {
    if (slots_[i].db == db && slots_[i].key == key) {
      Slot moved = std::move(slots_[i]);
      for (size_t j = i; j + 1 < count_; ++j) slots_[j] = std::move(slots_[j + 1]);
      --count_;
      moved.score = score;
      Insert(moved.db, moved.key, score);
      return;
    }
  }
  // First slot whose score is >= ours: we go just before it.
  size_t pos = 0;
  while (pos < count_ && slots_[pos].score < score) ++pos;
  if (count_ == kSize) {
    if (pos == 0) return;  // worse than every pooled candidate
    // Drop the worst (slot 0) to make room below pos.
    for (size_t j = 0; j + 1 < pos; ++j) slots_[j] = std::move(slots_[j + 1]);
    --pos;
  } else {
    for (size_t j = count_; j > pos; --j) slots_[j] = std::move(slots_[j - 1]);
    ++count_;
  }
  slots_[pos].score = score;
  slots_[pos].db = db;
  slots_[pos].key.assign(key);
}

std::optional<EvictionCandidate> EvictionPool::PopBest() {
  if (count_ == 0) return std::nullopt;
  Slot& best = slots_[--count_];
  EvictionCandidate out{best.db, std::move(best.key)};
  best.key.clear();
  return out;
}

}  // namespace vireo
