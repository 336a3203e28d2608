#include "util/clock.h"

#include <chrono>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define VIREO_HAS_TSC 1
#endif

namespace vireo {

// std::chrono's system_clock and steady_clock are clock_gettime(CLOCK_REALTIME / CLOCK_MONOTONIC)
// on Linux, served by the vDSO without a system call.

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

int64_t NowUs() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

int64_t MonotonicUs() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

namespace {

#ifdef VIREO_HAS_TSC
struct TscCalibration {
  uint64_t anchor_ticks = 0;
  int64_t anchor_wall_us = 0;
  int64_t anchor_mono_us = 0;
  double ticks_per_us = 0;

  TscCalibration() {
    // A first rate from a 2 ms busy wait; the cron refines it over longer intervals.
    uint64_t t0 = __rdtsc();
    int64_t m0 = MonotonicUs();
    while (MonotonicUs() - m0 < 2000) {
    }
    uint64_t t1 = __rdtsc();
    int64_t m1 = MonotonicUs();
    ticks_per_us = static_cast<double>(t1 - t0) / static_cast<double>(m1 - m0);
    if (ticks_per_us <= 0) ticks_per_us = 1000;
    Anchor();
  }
  void Anchor() {
    anchor_ticks = __rdtsc();
    anchor_wall_us = NowUs();
    anchor_mono_us = MonotonicUs();
  }
};

TscCalibration& Calibration() {
  static TscCalibration calibration;
  return calibration;
}
#endif

}  // namespace

uint64_t CpuTicks() {
#ifdef VIREO_HAS_TSC
  return __rdtsc();
#else
  return static_cast<uint64_t>(MonotonicUs());
#endif
}

int64_t TicksToUs(uint64_t ticks) {
#ifdef VIREO_HAS_TSC
  return static_cast<int64_t>(static_cast<double>(ticks) / Calibration().ticks_per_us);
#else
  return static_cast<int64_t>(ticks);
#endif
}

int64_t FastNowMs() {
#ifdef VIREO_HAS_TSC
  TscCalibration& c = Calibration();
  return (c.anchor_wall_us + TicksToUs(__rdtsc() - c.anchor_ticks)) / 1000;
#else
  return NowMs();
#endif
}

void RecalibrateFastClock() {
#ifdef VIREO_HAS_TSC
  TscCalibration& c = Calibration();
  uint64_t ticks = __rdtsc();
  int64_t mono = MonotonicUs();
  // Refine the rate over the interval since the last anchor when it is long enough to matter.
  if (mono - c.anchor_mono_us > 50000 && ticks > c.anchor_ticks) {
    c.ticks_per_us =
        static_cast<double>(ticks - c.anchor_ticks) / static_cast<double>(mono - c.anchor_mono_us);
  }
  c.Anchor();
#endif
}

}  // namespace vireo
