// The latency monitor (LATENCY LATEST / HISTORY / GRAPH / DOCTOR / RESET) and the per-command
// latency histograms of latency-tracking (LATENCY HISTOGRAM, INFO latencystats). One per
// server: events are recorded where the slow thing happens (the dispatcher, active expiry,
// eviction, the AOF, fork) and only when they reach latency-monitor-threshold.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace vireo {

// A log-linear histogram of durations in nanoseconds, 1 ns to 1 s, with the resolution of a
// 2-significant-figure HDR histogram: values below 256 are exact, and every power of two above
// is split into 128 equal buckets (under 1% error). Percentiles report a bucket's highest
// value, as Redis's do, so INFO latencystats reads the same for the same samples.
class LatencyHistogram {
 public:
  static constexpr int64_t kMinValue = 1;
  static constexpr int64_t kMaxValue = 1'000'000'000;

  // A couple of shifts and an increment: this runs after every command.
  void Record(int64_t ns) {
    if (ns < kMinValue) ns = kMinValue;
    if (ns > kMaxValue) ns = kMaxValue;
    ++counts_[IndexOf(ns)];
    ++total_;
  }
  uint64_t total() const { return total_; }
  // The value under which `percentile` percent of the samples fall (0..100), in ns.
  int64_t ValueAtPercentile(double percentile) const;
  // LATENCY HISTOGRAM's buckets: (upper bound in µs, samples up to it) at every power of two
  // from 1024 ns, only where the cumulative count grew.
  std::vector<std::pair<int64_t, uint64_t>> PowerOfTwoBuckets() const;

  static size_t IndexOf(int64_t value);
  static int64_t LowestAt(size_t index);
  static int64_t HighestAt(size_t index);

 private:
  static constexpr int kSubBits = 7;  // 128 buckets per power of two
  static constexpr size_t kLinear = size_t{2} << kSubBits;
  // 1e9 < 2^30: exponents 8..29 above the linear part.
  static constexpr size_t kBuckets = kLinear + (30 - (kSubBits + 1)) * (size_t{1} << kSubBits);
  std::array<uint64_t, kBuckets> counts_{};
  uint64_t total_ = 0;
};

// What LATENCY DOCTOR's advice depends on besides the events.
struct LatencyDoctorInputs {
  int64_t slowlog_log_slower_than = 0;  // µs, -1 = off
  bool appendfsync_always = false;
  int hz = 10;
  double fork_rate_gb_per_sec = 0;
};

class LatencyMonitor {
 public:
  static constexpr size_t kHistoryLen = 160;
  struct Sample {
    int64_t time = 0;  // unix seconds; 0 = unused slot
    int64_t ms = 0;
  };
  struct Series {
    std::array<Sample, kHistoryLen> samples{};
    size_t next = 0;  // the slot the next new second goes to
    int64_t max_ms = 0;
    const Sample& latest() const { return samples[(next + kHistoryLen - 1) % kHistoryLen]; }
  };

  // latency-monitor-threshold in ms; 0 turns the monitor off.
  void set_threshold_ms(int64_t ms) { threshold_ms_ = ms; }
  int64_t threshold_ms() const { return threshold_ms_; }
  // Records `ms` for `event` when the monitor is on and it reaches the threshold.
  void AddSampleIfNeeded(std::string_view event, int64_t ms) {
    if (threshold_ms_ > 0 && ms >= threshold_ms_) AddSample(event, ms, 0);
  }
  // One sample per event and second: a second's worst latency is kept. `now_s` 0 = the clock.
  void AddSample(std::string_view event, int64_t ms, int64_t now_s);
  // Forgets one event (case-insensitive) or all (empty); returns how many were forgotten.
  size_t Reset(std::string_view event);
  const std::map<std::string, Series, std::less<>>& events() const { return events_; }
  const Series* Find(std::string_view event) const;

  // LATENCY GRAPH's text for a recorded event.
  std::string Graph(const std::string& event, const Series& series, int64_t now_s) const;
  // LATENCY DOCTOR's report.
  std::string Doctor(const LatencyDoctorInputs& in, int64_t now_s) const;

  // latency-tracking: a histogram per command spec id, created on its first call.
  bool tracking() const { return tracking_; }
  void set_tracking(bool on) { tracking_ = on; }
  void RecordCommand(uint32_t spec_id, int64_t usec) {
    if (spec_id >= histograms_.size()) histograms_.resize(spec_id + 1);
    auto& h = histograms_[spec_id];
    if (h == nullptr) h = std::make_unique<LatencyHistogram>();
    // Redis measures commands in µs and histograms them in ns.
    h->Record(usec * 1000);
  }
  const LatencyHistogram* histogram(uint32_t spec_id) const {
    return spec_id < histograms_.size() ? histograms_[spec_id].get() : nullptr;
  }
  // CONFIG RESETSTAT: every command's histogram goes (it reappears on the next call).
  void ResetHistograms() { histograms_.clear(); }

 private:
  int64_t threshold_ms_ = 0;
  bool tracking_ = true;
  std::map<std::string, Series, std::less<>> events_;
  std::vector<std::unique_ptr<LatencyHistogram>> histograms_;
};

}  // namespace vireo
