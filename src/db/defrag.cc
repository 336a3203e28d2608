#include "db/defrag.h"

#include <algorithm>

#include "db/database.h"
#include "util/clock.h"

namespace vireo {

namespace {

// Keys (buckets) between two looks at the clock: a bucket holds about one key, and a key a
// few allocations, so the deadline is overrun by microseconds at most.
constexpr int kBucketsPerClockCheck = 16;

}  // namespace

bool Defragmenter::Fragmentation(double* percent, int64_t* bytes) {
  const std::optional<allocator::Stats> s = allocator::ReadStats();
  if (!s || s->allocated == 0) return false;
  *percent = static_cast<double>(s->active) / static_cast<double>(s->allocated) * 100 - 100;
  *bytes = static_cast<int64_t>(s->active) - static_cast<int64_t>(s->allocated);
  return true;
}

int Defragmenter::ComputeEffort(const DefragConfig& cfg, double frag_percent) const {
  // Linear from cycle-min at the lower threshold to cycle-max at the upper one.
  const double lower = static_cast<double>(cfg.threshold_lower);
  const double upper = static_cast<double>(std::max(cfg.threshold_upper, cfg.threshold_lower));
  double effort = static_cast<double>(cfg.cycle_max);
  if (upper > lower) {
    const double at = std::clamp((frag_percent - lower) / (upper - lower), 0.0, 1.0);
    effort = static_cast<double>(cfg.cycle_min) +
             at * static_cast<double>(cfg.cycle_max - cfg.cycle_min);
  }
  return std::clamp(static_cast<int>(effort), static_cast<int>(cfg.cycle_min),
                    static_cast<int>(std::max(cfg.cycle_min, cfg.cycle_max)));
}

int64_t Defragmenter::current_ms() const {
  return running_ ? (MonotonicUs() - started_us_) / 1000 : 0;
}

void Defragmenter::ResetStats() {
  const int64_t keep_running_since = started_us_;
  stats_ = DefragStats{};
  pass_hits_ = 0;
  started_us_ = keep_running_since;
}

void Defragmenter::Stop() {
  if (running_) stats_.total_us += MonotonicUs() - started_us_;
  running_ = false;
  db_ = 0;
  cursor_ = 0;
  expires_phase_ = false;
  pending_.clear();
}

int64_t Defragmenter::Cron(std::span<Database* const> dbs, const DefragConfig& cfg, int hz,
                           const ExtraPass& extra) {
  if (!cfg.enabled || !allocator::IsJemalloc()) {
    if (running_) Stop();
    return 0;
  }
  const int64_t start_us = MonotonicUs();
  double frag_percent = 0;
  int64_t frag_bytes = 0;
  if (!running_) {
    // Once a second, as Redis: reading the allocator's statistics costs an epoch refresh.
    if (start_us - last_check_us_ < 1000000) return 0;
    last_check_us_ = start_us;
    if (!Fragmentation(&frag_percent, &frag_bytes)) return 0;
    if (frag_percent <= static_cast<double>(cfg.threshold_lower) ||
        frag_bytes <= cfg.ignore_bytes) {
      return 0;
    }
    running_ = true;
    started_us_ = start_us;
    pass_hits_ = stats_.counters.hits;
    pass_frag_bytes_ = frag_bytes;
    effort_ = ComputeEffort(cfg, frag_percent);
    db_ = 0;
    cursor_ = 0;
    expires_phase_ = false;
  }
  const int64_t budget_us = 1000000 / std::max(hz, 1) * effort_ / 100;
  const int64_t deadline_us = start_us + budget_us;
  while (Work(dbs, cfg, deadline_us, extra)) {
    // The pass is complete. As Redis: if the fragmentation is still above the threshold,
    // another starts right away (what moved may have landed in slabs visited before it),
    // otherwise the defragmenter rests until a check finds it needed again.
    const int64_t now_us = MonotonicUs();
    stats_.total_us += now_us - started_us_;
    started_us_ = now_us;
    db_ = 0;
    cursor_ = 0;
    expires_phase_ = false;
    last_check_us_ = now_us;
    // A pass that moved nothing, or gained less than a tenth of the fragmented bytes, would
    // be repeated in vain (what stays fragmented is not movable, e.g. inside the Lua VM):
    // then rest until the next check instead of spinning at full effort.
    const bool moved = stats_.counters.hits > pass_hits_;
    pass_hits_ = stats_.counters.hits;
    const int64_t before_bytes = pass_frag_bytes_;
    if (!moved || !Fragmentation(&frag_percent, &frag_bytes) ||
        frag_percent <= static_cast<double>(cfg.threshold_lower) ||
        frag_bytes <= cfg.ignore_bytes || frag_bytes > before_bytes - before_bytes / 10) {
      running_ = false;
      break;
    }
    pass_frag_bytes_ = frag_bytes;
    if (now_us >= deadline_us) break;
  }
  return MonotonicUs() - start_us;
}

void Defragmenter::ContinueObject(std::span<Database* const> dbs, const DefragConfig& cfg) {
  PendingObject& p = pending_.front();
  DbEntry* entry = p.db < dbs.size() ? dbs[p.db]->Peek(p.key) : nullptr;
  // Deleted or replaced by a string meanwhile: nothing left to do.
  if (entry == nullptr || entry->value.is_string()) {
    pending_.pop_front();
    return;
  }
  p.cursor = entry->value.object()->Defrag(stats_.counters, p.cursor,
                                           static_cast<size_t>(cfg.max_scan_fields));
  if (p.cursor == 0) pending_.pop_front();
}

bool Defragmenter::Work(std::span<Database* const> dbs, const DefragConfig& cfg,
                        int64_t deadline_us, const ExtraPass& extra) {
  const size_t budget = static_cast<size_t>(std::max<int64_t>(cfg.max_scan_fields, 1));
  // Each key's object is done here when small, or queued to go on over the next slices.
  auto on_key = [&](DbEntry* entry, bool moved) {
    if (!entry->value.is_string()) {
      const uint64_t hits_before = stats_.counters.hits;
      const uint64_t cursor = entry->value.object()->Defrag(stats_.counters, 0, budget);
      if (cursor != 0) pending_.push_back({db_, std::string(entry->key.view()), cursor});
      moved = moved || stats_.counters.hits > hits_before;
    }
    (moved ? stats_.key_hits : stats_.key_misses) += 1;
  };
  int visited = 0;
  while (true) {
    if (++visited % kBucketsPerClockCheck == 0 && MonotonicUs() >= deadline_us) return false;
    if (!pending_.empty()) {
      // Up to max-scan-fields allocations: the clock is looked at after each.
      ContinueObject(dbs, cfg);
      if (MonotonicUs() >= deadline_us) return false;
      continue;
    }
    if (db_ >= dbs.size()) break;
    Database& db = *dbs[db_];
    if (!expires_phase_) {
      cursor_ = db.DefragKeys(cursor_, stats_.counters, on_key);
      if (cursor_ == 0) expires_phase_ = true;
    } else {
      cursor_ = db.DefragExpires(cursor_, stats_.counters);
      if (cursor_ == 0) {
        expires_phase_ = false;
        ++db_;
      }
    }
  }
  if (extra) extra(stats_.counters);
  return true;
}

}  // namespace vireo
