#include "util/clock.h"

#include <chrono>

namespace vireo {

// std::chrono's system_clock and steady_clock are clock_gettime(CLOCK_REALTIME / CLOCK_MONOTONIC)
// on Linux, served by the vDSO without a system call, so these are cheap enough for hot paths.

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

}  // namespace vireo
