// maxmemory: eviction by policy, the OOM state commands are checked against, and the keyspace
// options (access tracking, lazy freeing) derived from the memory configuration.
#include <spdlog/spdlog.h>

#include <cmath>
#include <limits>

#include "persistence/aof.h"
#include "server/notify.h"
#include "server/server.h"
#include "util/alloc_counter.h"
#include "util/clock.h"

namespace vireo {
namespace {

// How long one PerformEvictions may run before handing the rest to a timer:
// maxmemory-eviction-tenacity 0..10 gives 0..500 us, above that the limit grows 15% a step,
// and 100 means no limit.
int64_t EvictionTimeLimitUs(int64_t tenacity) {
  if (tenacity <= 10) return 50 * tenacity;
  if (tenacity < 100) return static_cast<int64_t>(500.0 * std::pow(1.15, tenacity - 10.0));
  return std::numeric_limits<int64_t>::max();
}

uint64_t NextRandom(void* state) {
  uint64_t& s = *static_cast<uint64_t*>(state);
  uint64_t z = (s += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// What a lazily freed value will give back once the background thread has freed it.
size_t EstimatedEntryBytes(const DbEntry& entry) {
  return sizeof(DbEntry) + entry.key.HeapUsage() + entry.value.MemoryUsage();
}

}  // namespace

size_t Server::UsedMemory() const { return AllocatedBytes(); }

size_t Server::MemoryNotCountedForEviction() const {
  // Redis leaves out the AOF buffer (it is flushed every loop turn and would otherwise make a
  // burst of writes evict keys for memory that is about to be released), and replica output
  // buffers once replicas exist.
  return aof_->buffer_bytes() + replication_->ReplicaOutputBytes();
}

size_t Server::MemoryCountedForEviction() const {
  const size_t used = UsedMemory();
  const size_t not_counted = MemoryNotCountedForEviction();
  return used > not_counted ? used - not_counted : 0;
}

uint64_t Server::current_eviction_exceeded_us() const {
  if (eviction_exceeded_since_us_ == 0) return 0;
  return static_cast<uint64_t>(MonotonicUs() - eviction_exceeded_since_us_);
}

void Server::ApplyMemoryConfig() {
  const ServerConfig& c = config_.values();
  eviction_policy_ = ParseEvictionPolicy(c.maxmemory_policy);
  AccessTracking& access = keyspace_options_.access;
  access.lfu = IsLfu(eviction_policy_);
  access.lfu_log_factor = static_cast<int>(c.lfu_log_factor);
  access.lfu_decay_time = static_cast<int>(c.lfu_decay_time);
  keyspace_options_.freer = &lazy_freer_;
  keyspace_options_.lazy_expire = c.lazyfree_lazy_expire;
  keyspace_options_.lazy_server_del = c.lazyfree_lazy_server_del;
  keyspace_options_.fits_in_maxmemory = [this](size_t bytes) {
    const int64_t limit = config_.values().maxmemory;
    return limit <= 0 || MemoryCountedForEviction() + bytes <= static_cast<size_t>(limit);
  };
  eviction_pool_.Clear();  // scores of another policy mean nothing to this one
}

// Picks the key the policy wants gone and deletes it. False when no key can go.
bool Server::EvictOneKey(size_t* freed) {
  const ServerConfig& c = config_.values();
  const int64_t now_ms = keyspace_options_.now_ms;
  Database* victim_db = nullptr;
  DbEntry* victim = nullptr;
  if (IsRandom(eviction_policy_)) {
    const bool volatile_only = IsVolatile(eviction_policy_);
    for (size_t i = 0; i < dbs_.size() && victim == nullptr; ++i) {
      Database& db = *dbs_[eviction_next_db_++ % dbs_.size()];
      if ((volatile_only ? db.expires_size() : db.size()) == 0) continue;
      // A sample of one from a random spot; a table left very sparse may need a few tries,
      // and the fair (slower) pick is the last resort.
      for (int attempt = 0; attempt < 8 && victim == nullptr; ++attempt) {
        const uint64_t r = NextRandom(&eviction_rng_);
        if (volatile_only) {
          db.SampleExpiring(r, 1, [&](ExpireEntry* e) { victim = e->entry; });
        } else {
          db.SampleEntries(r, 1, [&](DbEntry* entry) { victim = entry; });
        }
      }
      if (victim == nullptr) {
        const uint64_t r = NextRandom(&eviction_rng_);
        victim = volatile_only ? db.RandomExpiring(r)->entry : db.RandomEntry(r);
      }
      if (victim != nullptr) victim_db = &db;
    }
  } else {
    // A few rounds at most: a round only comes up empty when every pooled candidate was
    // deleted since it was sampled, and then the next round samples afresh.
    for (int round = 0; round < 4 && victim == nullptr; ++round) {
      size_t candidates = 0;
      for (auto& db : dbs_) {
        eviction_pool_.Populate(*db, eviction_policy_, static_cast<int>(c.maxmemory_samples),
                                keyspace_options_.access, now_ms, NextRandom, &eviction_rng_);
        candidates += IsVolatile(eviction_policy_) ? db->expires_size() : db->size();
      }
      if (candidates == 0) break;
      while (auto best = eviction_pool_.PopBest()) {
        Database& db = *dbs_[best->db];
        DbEntry* entry = db.Peek(best->key);
        if (entry == nullptr) continue;
        if (IsVolatile(eviction_policy_) && !entry->has_expire()) continue;
        victim_db = &db;
        victim = entry;
        break;
      }
    }
  }
  if (victim == nullptr) return false;

  const bool lazy = c.lazyfree_lazy_eviction;
  std::string key(victim->key.view());
  const int index = victim_db->index();
  std::string_view del_argv[] = {lazy ? "UNLINK" : "DEL", key};
  propagator_.Feed(index, del_argv);
  const size_t estimate = lazy ? EstimatedEntryBytes(*victim) : 0;
  const size_t before = UsedMemory();
  victim_db->DeleteEntry(victim, lazy);
  const size_t after = UsedMemory();
  // A lazily freed value is still allocated until the background thread gets to it; count
  // what it will give back, so one eviction doesn't look like it freed nothing.
  *freed += lazy ? std::max(estimate, before > after ? before - after : 0)
                 : (before > after ? before - after : 0);
  ++stats_.evicted_keys;
  victim_db->NotifyModified(key);
  NotifyKeyspaceEvent(*this, kNotifyEvicted, "evicted", key, index);
  return true;
}

Server::EvictResult Server::PerformEvictions() {
  const ServerConfig& c = config_.values();
  // Nothing is evicted while a script runs past its time limit (other clients are being
  // served between its steps) or while the dataset loads.
  // Nor during a write pause (CLIENT PAUSE WRITE, FAILOVER): the dataset must stand still.
  if (c.maxmemory <= 0 || busy_script_ != 0 || aof_->loading() ||
      loading_.mode != LoadingMode::kNone || Paused(kPauseEvict)) {
    return EvictResult::kOk;
  }
  const size_t limit = static_cast<size_t>(c.maxmemory);
  size_t used = MemoryCountedForEviction();
  if (used <= limit) {
    if (eviction_exceeded_since_us_ != 0) {
      stats_.total_eviction_exceeded_us += current_eviction_exceeded_us();
      eviction_exceeded_since_us_ = 0;
    }
    return EvictResult::kOk;
  }
  if (eviction_exceeded_since_us_ == 0) eviction_exceeded_since_us_ = MonotonicUs();
  if (eviction_policy_ == EvictionPolicy::kNoEviction) return EvictResult::kFail;

  const size_t to_free = used - limit;
  size_t freed = 0;
  const int64_t start_us = MonotonicUs();
  const int64_t budget_us = EvictionTimeLimitUs(c.maxmemory_eviction_tenacity);
  uint64_t evicted = 0;
  // Each deletion is timed only while the latency monitor is on (a clock read per key).
  const bool monitor = latency_.threshold_ms() > 0;
  while (freed < to_free) {
    const int64_t del_start_us = monitor ? MonotonicUs() : 0;
    if (!EvictOneKey(&freed)) break;
    if (monitor) latency_.AddSampleIfNeeded("eviction-del", (MonotonicUs() - del_start_us) / 1000);
    ++evicted;
    // Checking the clock costs a little: every 16 keys is often enough.
    if (evicted % 16 == 0) {
      if (c.lazyfree_lazy_eviction && MemoryCountedForEviction() <= limit) break;
      if (MonotonicUs() - start_us > budget_us) {
        latency_.AddSampleIfNeeded("eviction-cycle", (MonotonicUs() - start_us) / 1000);
        StartEvictionTimer();
        return EvictResult::kRunning;
      }
    }
  }
  if (monitor) latency_.AddSampleIfNeeded("eviction-cycle", (MonotonicUs() - start_us) / 1000);
  if (freed >= to_free || MemoryCountedForEviction() <= limit) return EvictResult::kOk;
  // Nothing left that the policy may evict. Values handed to the background thread may still
  // bring memory under the limit: while they are pending, let the command through (the next
  // one checks again) rather than fail it.
  if (lazy_freer_.pending_objects() > 0) return EvictResult::kRunning;
  return EvictResult::kFail;
}

void Server::ContinueEvictions() {
  if (!eviction_pending_) return;
  eviction_pending_ = false;
  command_clock_.Update();
  // Sets eviction_pending_ again while more has to go.
  PerformEvictions();
}

}  // namespace vireo
