// Per-key access data for eviction and OBJECT IDLETIME/FREQ: 24 bits kept in each keyspace
// entry (Value::access_clock), read either as an LRU clock or as an LFU counter, depending on
// maxmemory-policy. As in Redis, switching policy reinterprets the bits of existing keys; they
// become meaningful again as keys are accessed.
//
//   LRU: seconds since the epoch, modulo 2^24 (wraps every 194 days; idle times are computed
//        across one wrap).
//   LFU: high 16 bits = minutes since the epoch modulo 2^16, when the counter was last
//        decremented; low 8 bits = a logarithmic access counter (new keys start at 5, so they
//        get a chance to be accessed before they look colder than everything else).
#pragma once

#include <cstdint>

namespace vireo {

inline constexpr uint32_t kAccessClockMax = (1u << 24) - 1;
inline constexpr uint8_t kLfuInitCounter = 5;

// How the keyspace records accesses (owned by the Server, derived from its configuration).
struct AccessTracking {
  bool lfu = false;          // maxmemory-policy is an LFU policy
  int lfu_log_factor = 10;   // lfu-log-factor
  int lfu_decay_time = 1;    // lfu-decay-time, minutes per counter decrement (0: never)
  bool touch = true;         // false while a command must not count as an access
  uint64_t rng_state = 0x2545f4914f6cdd1dULL;  // for the probabilistic LFU increment

  // A uniform double in [0, 1) (xorshift64*; quality is ample for a coin flip).
  double NextUnit() {
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return static_cast<double>((rng_state * 0x2545f4914f6cdd1dULL) >> 11) * 0x1.0p-53;
  }
};

inline uint32_t LruClock(int64_t now_ms) {
  return static_cast<uint32_t>(now_ms / 1000) & kAccessClockMax;
}

// Milliseconds since the clock was stamped (1-second resolution).
inline int64_t LruIdleMs(uint32_t clock, int64_t now_ms) {
  const uint32_t now = LruClock(now_ms);
  const uint32_t seconds = now >= clock ? now - clock : (kAccessClockMax - clock) + now;
  return static_cast<int64_t>(seconds) * 1000;
}

// The clock a key idle for `idle_ms` would carry (RESTORE ... IDLETIME, RDB IDLE). A stamp
// "before zero" wraps by kAccessClockMax, the span LruIdleMs unwraps with, so the idle time
// reads back exactly; longer idle times than one span saturate at the span.
inline uint32_t LruClockForIdle(int64_t idle_ms, int64_t now_ms) {
  const int64_t span = kAccessClockMax;
  const int64_t seconds = idle_ms / 1000 < span ? idle_ms / 1000 : span;
  const int64_t now = LruClock(now_ms);
  return static_cast<uint32_t>(now >= seconds ? now - seconds : now - seconds + span);
}

inline uint16_t LfuMinutes(int64_t now_ms) { return static_cast<uint16_t>(now_ms / 60000); }
inline uint8_t LfuCounter(uint32_t clock) { return static_cast<uint8_t>(clock & 0xff); }
inline uint32_t LfuPack(uint16_t minutes, uint8_t counter) {
  return (static_cast<uint32_t>(minutes) << 8) | counter;
}

// The counter after the decay owed since it was last stamped: one step per lfu-decay-time
// minutes elapsed.
inline uint8_t LfuDecayed(uint32_t clock, int64_t now_ms, int decay_time) {
  const uint16_t then = static_cast<uint16_t>(clock >> 8);
  const uint16_t now = LfuMinutes(now_ms);
  const uint32_t elapsed = now >= then ? now - then : 65535u - then + now;
  const uint8_t counter = LfuCounter(clock);
  if (decay_time <= 0) return counter;
  const uint32_t periods = elapsed / static_cast<uint32_t>(decay_time);
  return periods >= counter ? 0 : static_cast<uint8_t>(counter - periods);
}

// One access: the counter grows with probability 1 / ((counter - 5) * log_factor + 1), so it
// takes about log_factor * n^2 / 2 accesses to reach n above the initial value, and 255
// (saturation) needs around a million hits with the default factor of 10.
inline uint8_t LfuLogIncrement(uint8_t counter, int log_factor, double unit_random) {
  if (counter == 255) return 255;
  const double base = counter > kLfuInitCounter ? counter - kLfuInitCounter : 0;
  const double p = 1.0 / (base * log_factor + 1);
  return unit_random < p ? static_cast<uint8_t>(counter + 1) : counter;
}

// Access data carried with a serialized key (RDB IDLE/FREQ opcodes, RESTORE IDLETIME/FREQ),
// -1 when absent. Under an LFU policy only the frequency counts (stamped with the current
// minute, decay starts afresh); under any other policy only the idle time (seconds). Returns
// false, leaving *clock alone, when the hint doesn't apply: the key keeps its new-key clock.
inline bool ClockFromHints(const AccessTracking& t, int64_t lfu_freq, int64_t lru_idle_seconds,
                           int64_t now_ms, uint32_t* clock) {
  if (t.lfu) {
    if (lfu_freq < 0) return false;
    *clock = LfuPack(LfuMinutes(now_ms), static_cast<uint8_t>(lfu_freq > 255 ? 255 : lfu_freq));
    return true;
  }
  if (lru_idle_seconds < 0) return false;
  const int64_t max_seconds = kAccessClockMax;
  const int64_t seconds = lru_idle_seconds < max_seconds ? lru_idle_seconds : max_seconds;
  *clock = LruClockForIdle(seconds * 1000, now_ms);
  return true;
}

// The clock stamped on a key that is created now.
inline uint32_t NewKeyClock(const AccessTracking& t, int64_t now_ms) {
  return t.lfu ? LfuPack(LfuMinutes(now_ms), kLfuInitCounter) : LruClock(now_ms);
}

// The clock after one access now.
inline uint32_t TouchedClock(uint32_t clock, AccessTracking& t, int64_t now_ms) {
  if (!t.lfu) return LruClock(now_ms);
  uint8_t counter = LfuDecayed(clock, now_ms, t.lfu_decay_time);
  counter = LfuLogIncrement(counter, t.lfu_log_factor, t.NextUnit());
  return LfuPack(LfuMinutes(now_ms), counter);
}

}  // namespace vireo
