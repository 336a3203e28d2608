// CLIENT PAUSE and the pauses FAILOVER and SHUTDOWN take: while one lasts, clients' commands of
// the paused kind wait (postponed, in arrival order) and run when it ends; a write pause also
// stops what would change data on its own (active expiry, eviction, pings to replicas), so the
// replication offset stands still.
//
// Each purpose has its own pause (the client's, failover's); what is paused is their union.
#pragma once

#include <cstdint>
#include <functional>
#include <utility>

namespace vireo {

enum PauseAction : uint32_t {
  kPauseClientWrite = 1u << 0,  // write and may-replicate commands wait
  kPauseClientAll = 1u << 1,    // every command waits
  kPauseExpire = 1u << 2,       // keys don't expire (reads of expired keys see nothing)
  kPauseEvict = 1u << 3,        // no eviction
  kPauseReplica = 1u << 4,      // no pings into the replication stream
};
inline constexpr uint32_t kPauseWrite = kPauseClientWrite | kPauseExpire | kPauseEvict |
                                        kPauseReplica;
inline constexpr uint32_t kPauseAll = kPauseWrite | kPauseClientAll;

enum class PausePurpose { kClient = 0, kFailover = 1, kShutdown = 2 };

class ClientPause {
 public:
  // `on_change` runs after each Pause and Unpause (not when a pause merely runs out): the
  // owner re-arms its timer for NextEnd() and resumes the waiting clients when nothing is
  // paused any more, so whoever pauses needs only this component.
  explicit ClientPause(std::function<void()> on_change = nullptr)
      : on_change_(std::move(on_change)) {}

  // Pauses `actions` for `purpose` until `end_ms` (monotonic ms). A purpose's actions are
  // replaced; its end only moves later (Redis keeps the longer of two pauses).
  void Pause(PausePurpose purpose, int64_t end_ms, uint32_t actions);
  void Unpause(PausePurpose purpose);
  // The actions paused at `now_ms` (pauses past their end are over).
  uint32_t Actions(int64_t now_ms);
  bool Paused(uint32_t action, int64_t now_ms) { return (Actions(now_ms) & action) != 0; }
  // The earliest end among active pauses, 0 if none.
  int64_t NextEnd() const;

 private:
  void Clear(int purpose);
  void Changed() {
    if (on_change_) on_change_();
  }

  static constexpr int kPurposes = 3;
  int64_t end_ms_[kPurposes] = {};
  uint32_t actions_[kPurposes] = {};
  std::function<void()> on_change_;
};

}  // namespace vireo
