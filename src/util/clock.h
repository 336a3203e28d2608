// Time sources. Wall-clock readings are for anything a client can see or that must survive a
// restart (key expiry deadlines, TIME, LASTSAVE); the monotonic one is for measuring intervals
// (timeouts, latency, cron pacing), which must not jump when the system clock is adjusted.
#pragma once

#include <cstdint>

namespace vireo {

// Milliseconds and microseconds since the Unix epoch.
int64_t NowMs();
int64_t NowUs();

// Microseconds from an arbitrary fixed origin; never goes backwards.
int64_t MonotonicUs();

// Per-command timing on the hot path. clock_gettime costs ~60 ns on virtualised machines and a
// command needs the time more than once, so these read the CPU's invariant time-stamp counter
// and convert with a rate calibrated against the real clocks (and re-calibrated by the cron).
uint64_t CpuTicks();
int64_t TicksToUs(uint64_t ticks);
// The wall clock in ms, from the time-stamp counter: within a millisecond of NowMs() between
// calibrations. RecalibrateFastClock() re-anchors it to the real clock.
int64_t FastNowMs();
void RecalibrateFastClock();

}  // namespace vireo
