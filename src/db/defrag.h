// Active defragmentation (activedefrag): the keyspace walked in time-bounded slices from the
// server's cron, each allocation of each key moved out of slabs emptier than their bin's
// average (util/allocator.h's ShouldMove and MoveAllocation), until the allocator's
// fragmentation is back under active-defrag-threshold-lower.
//
// Everything runs on the main thread between commands: no other thread touches live data.
// A slice visits keys one hash-table bucket at a time (SCAN's cursor, so a pass survives
// resizes and writes in between) and stops at its deadline; an object with more than
// active-defrag-max-scan-fields elements is done over several slices, resumed by key name
// (it may be gone or replaced in between: then it is dropped). Once every database has been
// walked the pass ends, and the next check (once a second) decides whether another is needed.
//
// Redis computes the effort the same way: from active-defrag-cycle-min at the lower threshold
// to active-defrag-cycle-max at the upper one, as a percentage of each cron period.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <span>
#include <string>

#include "util/allocator.h"

namespace vireo {

class Database;

struct DefragConfig {
  bool enabled = false;
  int64_t ignore_bytes = 100 << 20;
  int64_t threshold_lower = 10;   // percent of fragmentation to start
  int64_t threshold_upper = 100;  // percent where the maximum effort applies
  int64_t cycle_min = 1;          // percent of CPU at the lower threshold
  int64_t cycle_max = 25;         // and at the upper one
  int64_t max_scan_fields = 1000;
};

struct DefragStats {
  allocator::DefragCounters counters;  // active_defrag_hits / misses
  uint64_t key_hits = 0;               // keys with at least one allocation moved
  uint64_t key_misses = 0;             // keys looked at with none moved
  int64_t total_us = 0;                // time passes ran for (total_active_defrag_time)
};

class Defragmenter {
 public:
  // Things above the keyspace (Lua scripts) moved once per pass, after the keys:
  // `extra(counters)` is called once the databases are done.
  using ExtraPass = std::function<void(allocator::DefragCounters&)>;

  // One cron tick: decides (once a second) whether to run, and when running works until the
  // tick's share of time (effort % of 1/hz) is used. Returns the slice's duration in
  // microseconds (0 when it did nothing), for the active-defrag-cycle latency event.
  int64_t Cron(std::span<Database* const> dbs, const DefragConfig& cfg, int hz,
               const ExtraPass& extra = {});

  bool running() const { return running_; }
  // The effort of the pass in progress, in percent of CPU (INFO's active_defrag_running).
  int effort() const { return running_ ? effort_ : 0; }
  // Milliseconds since the pass in progress started (current_active_defrag_time), 0 if none.
  int64_t current_ms() const;
  const DefragStats& stats() const { return stats_; }
  void ResetStats();
  // Stops a pass (activedefrag no, FLUSHALL): the next one starts from the beginning.
  void Stop();

 private:
  // The allocator's fragmentation; false if it has no statistics.
  static bool Fragmentation(double* percent, int64_t* bytes);
  int ComputeEffort(const DefragConfig& cfg, double frag_percent) const;
  // Works until `deadline_us`; true when the pass is complete.
  bool Work(std::span<Database* const> dbs, const DefragConfig& cfg, int64_t deadline_us,
            const ExtraPass& extra);
  // Continues the oldest big object being done over several slices.
  void ContinueObject(std::span<Database* const> dbs, const DefragConfig& cfg);

  bool running_ = false;
  int effort_ = 0;
  int64_t started_us_ = 0;
  int64_t last_check_us_ = 0;
  uint64_t pass_hits_ = 0;       // hits when the pass in progress started
  int64_t pass_frag_bytes_ = 0;  // and the fragmented bytes then
  size_t db_ = 0;                // database being walked
  uint64_t cursor_ = 0;          // its keyspace cursor
  bool expires_phase_ = false;   // walking its expires table (after the keys)
  // Big objects left half done: database, key and cursor of each, oldest first.
  struct PendingObject {
    size_t db;
    std::string key;
    uint64_t cursor;
  };
  std::deque<PendingObject> pending_;
  DefragStats stats_;
};

}  // namespace vireo
