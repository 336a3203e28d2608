// The server's counters: INFO stats, errorstats and the instantaneous_* rates.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

namespace vireo {

// The ratio of two counters' growth between cron samples (growth of `value` per unit of
// `base`, times `factor`), averaged over the last few samples: INFO's instantaneous_* fields.
class RatioSampler {
 public:
  void Sample(uint64_t value, uint64_t base, double factor) {
    if (has_last_ && base > last_base_) {
      uint64_t delta = value >= last_value_ ? value - last_value_ : 0;
      ratios_[next_ % kSamples] =
          static_cast<double>(delta) * factor / static_cast<double>(base - last_base_);
      ++next_;
    }
    has_last_ = true;
    last_value_ = value;
    last_base_ = base;
  }
  double Average() const {
    size_t n = next_ < kSamples ? next_ : kSamples;
    if (n == 0) return 0;
    double sum = 0;
    for (size_t i = 0; i < n; ++i) sum += ratios_[i];
    return sum / static_cast<double>(n);
  }

 private:
  static constexpr size_t kSamples = 16;
  double ratios_[kSamples] = {};
  size_t next_ = 0;
  bool has_last_ = false;
  uint64_t last_value_ = 0;
  uint64_t last_base_ = 0;
};

// A counter's growth per second.
class RateSampler {
 public:
  void Sample(int64_t now_ms, uint64_t counter) {
    ratio_.Sample(counter, static_cast<uint64_t>(now_ms), 1000.0);
  }
  double PerSecond() const { return ratio_.Average(); }

 private:
  RatioSampler ratio_;
};

// The event loop's own figures (INFO stats eventloop_* and INFO debug). A cycle runs from the
// moment the poll returns to the end of the work before the next poll, as Redis measures it
// (afterSleep to beforeSleep), so idle waiting is not counted. Times are in microseconds.
struct EventLoopStats {
  uint64_t cycles = 0;
  uint64_t duration_sum = 0;
  uint64_t duration_max = 0;
  uint64_t cmd_sum = 0;   // top-level commands' own time
  uint64_t aof_sum = 0;   // writing the AOF buffer before replies go out
  uint64_t cron_sum = 0;  // the cron and the before-sleep housekeeping (not AOF, not replies)
  uint64_t cmd_per_cycle_max = 0;
  RateSampler cycles_rate;
  RatioSampler duration_per_cycle;  // eventloop_duration_sum growth per cycle
};

struct ServerStats {
  uint64_t total_connections_received = 0;
  uint64_t total_commands_processed = 0;
  uint64_t rejected_connections = 0;
  uint64_t expired_keys = 0;
  uint64_t expired_subkeys = 0;  // hash fields deleted by their TTL
  // Active expiry cycles that stopped at their time budget with expired keys left, and the
  // time all cycles took.
  uint64_t expired_time_cap_reached_count = 0;
  uint64_t expire_cycle_us = 0;
  uint64_t evicted_keys = 0;
  uint64_t total_eviction_exceeded_us = 0;  // time spent over maxmemory, finished periods
  uint64_t keyspace_hits = 0;
  uint64_t keyspace_misses = 0;
  uint64_t total_net_input_bytes = 0;
  uint64_t total_net_output_bytes = 0;
  uint64_t total_error_replies = 0;
  uint64_t unexpected_error_replies = 0;
  uint64_t total_reads_processed = 0;
  uint64_t total_writes_processed = 0;
  uint64_t client_query_buffer_limit_disconnections = 0;
  uint64_t client_output_buffer_limit_disconnections = 0;
  uint64_t evicted_clients = 0;  // maxmemory-clients
  uint64_t sync_full = 0;        // replication full resyncs served
  uint64_t sync_partial_ok = 0;
  uint64_t sync_partial_err = 0;
  uint64_t total_net_repl_input_bytes = 0;
  uint64_t total_net_repl_output_bytes = 0;
  std::map<std::string, uint64_t> error_counts;  // errorstats, by error code
  RateSampler ops_rate;
  RateSampler net_input_rate;
  RateSampler net_output_rate;
  EventLoopStats eventloop;
  size_t used_memory_peak = 0;  // updated when INFO reads memory
};

}  // namespace vireo
