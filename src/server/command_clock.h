// The time commands see: read once before each top-level command and standing still for the
// whole of it, including what EXEC or a script runs, as Redis's cached time does. Expiry reads
// it in milliseconds through KeyspaceOptions::now_ms; TIME reads microseconds, taken at most
// once per command time.
#pragma once

#include <cstdint>

#include "db/database.h"
#include "util/clock.h"

namespace vireo {

class CommandClock {
 public:
  // `options` (the server's keyspace options, whose now_ms this sets) outlives the clock.
  explicit CommandClock(KeyspaceOptions& options) : options_(options) {}
  CommandClock(const CommandClock&) = delete;
  CommandClock& operator=(const CommandClock&) = delete;

  // Before each command (not inside EXEC or scripts).
  void Update() {
    options_.now_ms = FastNowMs();
    us_ = 0;
  }
  int64_t ms() const { return options_.now_ms; }
  // Puts the millisecond clock back (a script that served other clients while busy, the AOF
  // loader replaying a timestamp).
  void set_ms(int64_t ms) { options_.now_ms = ms; }
  // TIME's clock.
  int64_t us() {
    if (us_ == 0) us_ = NowUs();
    return us_;
  }

 private:
  KeyspaceOptions& options_;
  int64_t us_ = 0;  // 0: not read since the command time was set
};

}  // namespace vireo
