// The facts about the running server process that INFO and a few commands (LASTSAVE, the
// writes that count toward the next save) read or advance. The server implements it and hands
// it out as Server::process().
#pragma once

#include <cstdint>
#include <string>

namespace vireo {

class ProcessInfo {
 public:
  virtual ~ProcessInfo() = default;

  // When the server started (Unix ms), for INFO's uptime.
  virtual int64_t start_time_ms() const = 0;
  // The 40-hex-digit id of this run (INFO server run_id).
  virtual const std::string& run_id() const = 0;
  // The cron's current frequency: hz, or more under dynamic-hz (INFO server hz).
  virtual int hz() const = 0;
  // The Unix time of the last successful save (LASTSAVE).
  virtual int64_t lastsave() const = 0;
  virtual void set_lastsave(int64_t unix_seconds) = 0;
  // Changes since the last save (what the save points count).
  virtual uint64_t dirty() const = 0;
  virtual void AddDirty(uint64_t n) = 0;
};

}  // namespace vireo
