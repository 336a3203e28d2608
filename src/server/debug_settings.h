// The switches DEBUG flips for the test suites (src/commands/debug.cc).
#pragma once

#include <cstdint>

namespace vireo {

// What DEBUG subcommands switch at run time; tests use them to reach states that are hard to
// produce otherwise. Only active_expire and disable_deny_scripts change behaviour (scripts may
// then call no-script commands); the others are accepted for the test suite and recorded.
struct DebugSettings {
  bool active_expire = true;                  // SET-ACTIVE-EXPIRE: the cron deletes expired keys
  bool disable_deny_scripts = false;          // SET-DISABLE-DENY-SCRIPTS
  bool skip_checksum_validation = false;      // SET-SKIP-CHECKSUM-VALIDATION
  bool pause_cron = false;                    // PAUSE-CRON
  int aof_flush_sleep_us = 0;                 // AOF-FLUSH-SLEEP
  int64_t reply_buffer_peak_reset_ms = 5000;  // REPLYBUFFER PEAK-RESET-TIME
  bool reply_buffer_resizing = true;          // REPLYBUFFER RESIZING
};

}  // namespace vireo
