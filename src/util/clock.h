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

}  // namespace vireo
