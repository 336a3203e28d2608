// The server's counters: INFO stats, errorstats and the instantaneous_* rates.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

namespace vireo {

// A per-second rate averaged over the last few cron samples (INFO's instantaneous_* fields).
class RateSampler {
 public:
  void Sample(int64_t now_ms, uint64_t counter) {
    if (last_ms_ != 0 && now_ms > last_ms_) {
      uint64_t delta = counter >= last_counter_ ? counter - last_counter_ : 0;
      rates_[next_ % kSamples] =
          static_cast<double>(delta) * 1000.0 / static_cast<double>(now_ms - last_ms_);
      ++next_;
    }
    last_ms_ = now_ms;
    last_counter_ = counter;
  }
  double PerSecond() const {
    size_t n = next_ < kSamples ? next_ : kSamples;
    if (n == 0) return 0;
    double sum = 0;
    for (size_t i = 0; i < n; ++i) sum += rates_[i];
    return sum / static_cast<double>(n);
  }

 private:
  static constexpr size_t kSamples = 16;
  double rates_[kSamples] = {};
  size_t next_ = 0;
  int64_t last_ms_ = 0;
  uint64_t last_counter_ = 0;
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
  size_t used_memory_peak = 0;  // updated when INFO reads memory
};

}  // namespace vireo
