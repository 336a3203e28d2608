#include "core/latency_monitor.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cstdio>
#include <ctime>
#include <span>

#include "util/strings.h"

namespace vireo {

// ---- LatencyHistogram ----

size_t LatencyHistogram::IndexOf(int64_t value) {
  const auto v = static_cast<uint64_t>(value);
  if (v < kLinear) return static_cast<size_t>(v);
  const int exponent = std::bit_width(v) - 1;  // >= kSubBits + 1
  const int shift = exponent - kSubBits;
  const size_t sub = static_cast<size_t>(v >> shift) - (size_t{1} << kSubBits);
  return kLinear + static_cast<size_t>(exponent - (kSubBits + 1)) * (size_t{1} << kSubBits) + sub;
}

int64_t LatencyHistogram::LowestAt(size_t index) {
  if (index < kLinear) return static_cast<int64_t>(index);
  const size_t j = index - kLinear;
  const int exponent = static_cast<int>(j >> kSubBits) + kSubBits + 1;
  const uint64_t sub = j & ((size_t{1} << kSubBits) - 1);
  return static_cast<int64_t>(((uint64_t{1} << kSubBits) + sub) << (exponent - kSubBits));
}

int64_t LatencyHistogram::HighestAt(size_t index) {
  if (index < kLinear) return static_cast<int64_t>(index);
  const int exponent = static_cast<int>((index - kLinear) >> kSubBits) + kSubBits + 1;
  return LowestAt(index) + (int64_t{1} << (exponent - kSubBits)) - 1;
}

int64_t LatencyHistogram::ValueAtPercentile(double percentile) const {
  if (total_ == 0) return 0;
  const double p = std::min(percentile, 100.0);
  auto wanted = static_cast<uint64_t>(p / 100.0 * static_cast<double>(total_) + 0.5);
  wanted = std::max<uint64_t>(wanted, 1);
  uint64_t seen = 0;
  for (size_t i = 0; i < kBuckets; ++i) {
    seen += counts_[i];
    if (seen >= wanted) return percentile == 0.0 ? LowestAt(i) : HighestAt(i);
  }
  return 0;
}

std::vector<std::pair<int64_t, uint64_t>> LatencyHistogram::PowerOfTwoBuckets() const {
  std::vector<std::pair<int64_t, uint64_t>> out;
  uint64_t cumulative = 0;
  size_t next_index = 0;  // counts_[0, next_index) are in `cumulative`
  uint64_t reported = 0;
  for (int64_t level = 1024; cumulative < total_; level *= 2) {
    int64_t upper_ns;
    if (level > kMaxValue) {
      // Everything left: the top bucket ends where the histogram's range does (2^30 - 1).
      cumulative = total_;
      upper_ns = (int64_t{1} << 30) - 1;
    } else {
      const size_t index = IndexOf(level);
      for (; next_index <= index; ++next_index) cumulative += counts_[next_index];
      upper_ns = HighestAt(index);
    }
    if (cumulative > reported) {
      out.emplace_back(upper_ns / 1000, cumulative);
      reported = cumulative;
    }
  }
  return out;
}

// ---- LatencyMonitor ----

void LatencyMonitor::AddSample(std::string_view event, int64_t ms, int64_t now_s) {
  if (now_s == 0) now_s = static_cast<int64_t>(std::time(nullptr));
  auto it = events_.find(event);
  if (it == events_.end()) it = events_.emplace(std::string(event), Series{}).first;
  Series& s = it->second;
  s.max_ms = std::max(s.max_ms, ms);
  // One slot per second: a second's later samples only raise its worst latency.
  Sample& prev = s.samples[(s.next + kHistoryLen - 1) % kHistoryLen];
  if (prev.time == now_s) {
    prev.ms = std::max(prev.ms, ms);
    return;
  }
  s.samples[s.next] = {now_s, ms};
  s.next = (s.next + 1) % kHistoryLen;
}

size_t LatencyMonitor::Reset(std::string_view event) {
  if (event.empty()) {
    size_t n = events_.size();
    events_.clear();
    return n;
  }
  size_t n = 0;
  for (auto it = events_.begin(); it != events_.end();) {
    if (EqualsIgnoreCase(it->first, event)) {
      it = events_.erase(it);
      ++n;
    } else {
      ++it;
    }
  }
  return n;
}

const LatencyMonitor::Series* LatencyMonitor::Find(std::string_view event) const {
  auto it = events_.find(event);
  return it == events_.end() ? nullptr : &it->second;
}

namespace {

// How long ago a sample was, as LATENCY GRAPH labels its columns.
std::string AgoLabel(int64_t seconds) {
  if (seconds < 60) return fmt::format("{}s", seconds);
  if (seconds < 3600) return fmt::format("{}m", seconds / 60);
  if (seconds < 86400) return fmt::format("{}h", seconds / 3600);
  return fmt::format("{}d", seconds / 86400);
}

struct Column {
  int64_t value;
  std::string label;
};

// A filled sparkline of `rows` text rows (each row holds 3 heights: '_', 'o', '#', and '|'
// where a higher row is reached), then the labels written vertically under their columns.
void RenderSparkline(std::span<const Column> cols, int64_t lo, int64_t hi, std::string* out) {
  constexpr int kRows = 4;
  constexpr std::string_view kLevels = "_o#";
  const int steps = static_cast<int>(kLevels.size()) * kRows;
  const double range = hi - lo == 0 ? 1.0 : static_cast<double>(hi - lo);
  for (int row = 0; row < kRows; ++row) {
    const int row_base = (kRows - row - 1) * static_cast<int>(kLevels.size());
    for (const Column& c : cols) {
      const double rel = static_cast<double>(c.value - lo);
      int step = static_cast<int>(static_cast<int>(rel * steps) / range);
      step = std::clamp(step, 0, steps - 1);
      const int level = step - row_base;
      if (level >= static_cast<int>(kLevels.size())) {
        out->push_back('|');
      } else if (level >= 0) {
        out->push_back(kLevels[level]);
      } else {
        out->push_back(' ');
      }
    }
    out->push_back('\n');
  }
  size_t longest = 0;
  for (const Column& c : cols) longest = std::max(longest, c.label.size());
  if (longest == 0) return;
  out->append(cols.size(), ' ');  // a blank line between the graph and its labels
  out->push_back('\n');
  for (size_t i = 0; i < longest; ++i) {
    for (const Column& c : cols) out->push_back(i < c.label.size() ? c.label[i] : ' ');
    out->push_back('\n');
  }
}

}  // namespace

std::string LatencyMonitor::Graph(const std::string& event, const Series& series,
                                  int64_t now_s) const {
  constexpr size_t kWidth = 80;
  std::vector<Column> cols;
  int64_t lo = 0, hi = 0;
  for (size_t j = 0; j < kHistoryLen; ++j) {
    const Sample& s = series.samples[(series.next + j) % kHistoryLen];
    if (s.time == 0) continue;
    lo = cols.empty() ? s.ms : std::min(lo, s.ms);
    hi = cols.empty() ? s.ms : std::max(hi, s.ms);
    cols.push_back({s.ms, AgoLabel(now_s - s.time)});
  }
  std::string out = fmt::format("{} - high {} ms, low {} ms (all time high {} ms)\n", event, hi, lo,
                                series.max_ms);
  out.append(kWidth, '-');
  out.push_back('\n');
  for (size_t j = 0; j < cols.size(); j += kWidth) {
    if (j != 0) out.push_back('\n');
    const size_t n = std::min(kWidth, cols.size() - j);
    RenderSparkline(std::span<const Column>(cols).subspan(j, n), lo, hi, &out);
  }
  return out;
}

namespace {

// What an event suggests looking at; LATENCY DOCTOR prints each piece of advice once.
enum Advice : uint32_t {
  kAdviseFasterVm = 1u << 0,
  kAdviseEnableSlowlog = 1u << 1,
  kAdviseTuneSlowlog = 1u << 2,
  kAdviseReadSlowlog = 1u << 3,
  kAdviseScheduler = 1u << 4,
  kAdviseLocalDisk = 1u << 5,
  kAdviseSsd = 1u << 6,
  kAdviseWriteback = 1u << 7,
  kAdviseDiskContention = 1u << 8,
  kAdviseNoFsyncOnRewrite = 1u << 9,
  kAdviseRelaxFsync = 1u << 10,
  kAdviseWriteLoad = 1u << 11,
  kAdviseHz = 1u << 12,
  kAdviseLargeObjects = 1u << 13,
  kAdviseMassEviction = 1u << 14,
};

uint32_t AdviceFor(std::string_view event, const LatencyDoctorInputs& in, int64_t threshold_ms) {
  auto is = [&](std::string_view name) { return EqualsIgnoreCase(event, name); };
  if (is("fork")) return in.fork_rate_gb_per_sec < 25 ? uint32_t{kAdviseFasterVm} : 0u;
  if (is("command")) {
    uint32_t a = kAdviseReadSlowlog | kAdviseLargeObjects;
    if (in.slowlog_log_slower_than < 0) {
      a |= kAdviseEnableSlowlog;
    } else if (in.slowlog_log_slower_than / 1000 > threshold_ms) {
      a |= kAdviseTuneSlowlog;
    }
    return a;
  }
  if (is("fast-command")) return kAdviseScheduler;
  if (is("aof-write-pending-fsync"))
    return kAdviseLocalDisk | kAdviseDiskContention | kAdviseSsd | kAdviseWriteback;
  if (is("aof-write-active-child")) return kAdviseNoFsyncOnRewrite | kAdviseWriteback | kAdviseSsd;
  if (is("aof-write-alone")) return kAdviseLocalDisk | kAdviseWriteback | kAdviseSsd;
  if (is("aof-fsync-always")) return kAdviseRelaxFsync;
  if (is("aof-fstat") || is("rdb-unlink-temp-file"))
    return kAdviseDiskContention | kAdviseLocalDisk;
  if (is("aof-rewrite-diff-write") || is("aof-rename"))
    return kAdviseWriteLoad | kAdviseWriteback | kAdviseSsd | kAdviseLocalDisk;
  if (is("expire-cycle")) return kAdviseHz | kAdviseLargeObjects;
  if (is("eviction-del")) return kAdviseLargeObjects;
  if (is("eviction-cycle")) return kAdviseMassEviction;
  return 0;
}

}  // namespace

std::string LatencyMonitor::Doctor(const LatencyDoctorInputs& in, int64_t now_s) const {
  if (events_.empty() && threshold_ms_ == 0) {
    return "I'm sorry, Dave, I can't do that. Latency monitoring is disabled in this server. "
           "Enable it with \"CONFIG SET latency-monitor-threshold <milliseconds>.\" and ask me "
           "again once some latency was observed.\n";
  }
  std::string out;
  uint32_t advice = 0;
  int n = 0;
  for (const auto& [event, s] : events_) {
    if (n++ == 0) {
      out +=
          "Dave, I have observed latency spikes in this server. You don't mind talking "
          "about it, do you Dave?\n\n";
    }
    int64_t count = 0, sum = 0, lo = 0, hi = 0, oldest = 0;
    for (const Sample& x : s.samples) {
      if (x.time == 0) continue;
      lo = count == 0 ? x.ms : std::min(lo, x.ms);
      hi = count == 0 ? x.ms : std::max(hi, x.ms);
      oldest = count == 0 ? x.time : std::min(oldest, x.time);
      sum += x.ms;
      ++count;
    }
    const int64_t avg = count ? sum / count : 0;
    int64_t deviation = 0;
    for (const Sample& x : s.samples) {
      if (x.time != 0) deviation += avg > x.ms ? avg - x.ms : x.ms - avg;
    }
    if (count) deviation /= count;
    const int64_t period = count ? std::max<int64_t>(now_s - oldest, 1) : 0;
    out += fmt::format(
        "{}. {}: {} latency spikes (average {}ms, mean deviation {}ms, period {:.2f} sec). "
        "Worst all time event {}ms.",
        n, event, count, avg, deviation,
        count ? static_cast<double>(period) / static_cast<double>(count) : 0.0, s.max_ms);
    if (EqualsIgnoreCase(event, "fork")) {
      const double rate = in.fork_rate_gb_per_sec;
      out += fmt::format(" Fork rate is {:.2f} GB/sec ({}).", rate,
                         rate < 10    ? "terrible"
                         : rate < 25  ? "poor"
                         : rate < 100 ? "good"
                                      : "excellent");
    }
    out += '\n';
    advice |= AdviceFor(event, in, threshold_ms_);
  }
  if (!in.appendfsync_always) advice &= ~kAdviseRelaxFsync;
  if (in.hz >= 100) advice &= ~kAdviseHz;
  if (n == 0) {
    out +=
        "Dave, no latency spike was observed during the lifetime of this server, not in the "
        "slightest bit. I honestly think you ought to sit down calmly, take a stress pill, and "
        "think things over.\n";
    return out;
  }
  if (advice == 0) {
    out +=
        "\nWhile there are latency events logged, I'm not able to suggest any easy fix. "
        "Please ask the community for help, with this report.\n";
    return out;
  }
  out += "\nI have a few advices for you:\n\n";
  const int64_t threshold_us = threshold_ms_ * 1000;
  const std::pair<Advice, std::string> texts[] = {
      {kAdviseFasterVm,
       "- fork() is slow on this host. On a virtual machine, a hypervisor or instance type "
       "with faster fork() helps (Xen is known to be slow here)."},
      {kAdviseEnableSlowlog,
       fmt::format("- Slow commands cause latency, but the slow log is disabled. Enable it with "
                   "'CONFIG SET slowlog-log-slower-than {}' to see which.",
                   threshold_us)},
      {kAdviseTuneSlowlog,
       fmt::format("- The slow log only records commands slower than the latency monitor's "
                   "threshold. Use 'CONFIG SET slowlog-log-slower-than {}'.",
                   threshold_us)},
      {kAdviseReadSlowlog,
       "- Check your Slow Log (SLOWLOG GET) to find out which commands are too slow."},
      {kAdviseScheduler,
       "- Code paths without system calls ran slowly: the system does not give the server CPU "
       "time for long periods. Lower the system load, give the server its own machine, look "
       "for noisy neighbours, and measure with 'redis-cli --intrinsic-latency 100'."},
      {kAdviseLocalDisk,
       "- Use local disks for persistence, above all with AOF: remote disks are known to be "
       "slow."},
      {kAdviseSsd,
       "- SSD disks reduce fsync latency and the time needed for snapshots and AOF rewrites."},
      {kAdviseWriteback,
       "- Mounting ext3/4 with data=writeback can be faster than data=ordered, with weaker "
       "guarantees after a crash (the AOF may end with a half-written command)."},
      {kAdviseDiskContention,
       "- Try to lower the disk contention: other disk-heavy processes on the same machine "
       "(other servers included) make it slow."},
      {kAdviseNoFsyncOnRewrite,
       "- If your data safety needs allow it, 'no-appendfsync-on-rewrite yes' skips fsync "
       "while a child writes an RDB or rewrites the AOF."},
      {kAdviseRelaxFsync,
       "- Your fsync policy is 'always', which is hard to make fast. If possible, use "
       "'everysec'."},
      {kAdviseWriteLoad,
       "- Latency at the end of an AOF rewrite comes from a large buffer of writes made "
       "meanwhile. Sending fewer commands (MULTI, scripts) keeps it small."},
      {kAdviseHz,
       "- To make the expiry of keys more incremental, set 'hz' to 100 with 'CONFIG SET hz "
       "100'."},
      {kAdviseLargeObjects,
       "- Deleting, expiring or evicting large objects blocks the server. If very large "
       "objects are often deleted, expired or evicted, split them into smaller ones."},
      {kAdviseMassEviction,
       "- Sudden changes of 'maxmemory', or large new values (set intersections, SORT ... "
       "STORE, RESTORE of big keys), may force the server to block while it evicts keys."},
  };
  for (const auto& [flag, text] : texts) {
    if (advice & flag) out += text + "\n";
  }
  return out;
}

}  // namespace vireo
