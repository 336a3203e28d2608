// The blocking engine's bookkeeping: which clients wait on which keys (FIFO per key), which
// keys became ready since the last pass, and when each waiter times out.
//
// It knows clients only by id and nothing of sockets or replies: the server decides what
// serving or timing out a waiter means. Keeping this standalone lets the ordering rules
// (first come first served, one ready mark per key, a served client leaves every list) be
// unit-tested without a network.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "db/value.h"

namespace vireo {

struct BlockedKey {
  int db;
  std::string key;
  bool operator==(const BlockedKey&) const = default;
};

// Decides whether a waiter whose key was signalled can make progress by running its command
// again. Without one, a waiter is served when its key holds a value of its type (lists, zsets).
// Streams need more: an XREAD waiter is served only when entries newer than the ID it waits
// after exist (and every such reader is, not just one), and an XREADGROUP waiter must also run
// again when its key vanishes, changes type or loses its group, to get the error.
class WaitCondition {
 public:
  virtual ~WaitCondition() = default;
  // `value` is the key's current value, nullptr when the key is missing.
  virtual bool Ready(std::string_view key, const Value* value) const = 0;
  // True if deletions and other changes of the key (not only additions) may make it ready.
  virtual bool WakeOnChange() const { return false; }
};

class BlockingEngine {
 public:
  struct Waiter {
    uint64_t id;
    int db;
    std::vector<std::string> keys;
    int64_t deadline_ms;                             // monotonic ms; 0 = wait forever
    ValueType type;                                  // the kind of value that can serve it
    std::shared_ptr<const WaitCondition> condition;  // optional, see WaitCondition
  };

  // Registers a waiter on every key (appended at the tail of each key's FIFO). A client is
  // blocked at most once; blocking an already blocked id replaces its registration.
  void Block(uint64_t id, int db, std::vector<std::string> keys, int64_t deadline_ms,
             ValueType type, std::shared_ptr<const WaitCondition> condition = nullptr);
  // Whether the waiter can be served given the key's current value (nullptr = missing).
  static bool CanServe(const Waiter& waiter, std::string_view key, const Value* value);
  // Removes the waiter from every key list and from the timeouts. False if not blocked.
  bool Unblock(uint64_t id);
  const Waiter* Find(uint64_t id) const;
  bool IsBlocked(uint64_t id) const { return waiters_.count(id) != 0; }

  // Marks a key ready, once, if somebody waits on it; cheap when nobody does.
  void SignalKeyAsReady(int db, std::string_view key);
  // Any change of a key (deletion, expiry, overwrite): marks it ready only if a waiter whose
  // condition wants to hear about changes waits on it.
  void SignalKeyChanged(int db, std::string_view key);
  bool HasReadyKeys() const { return !ready_.empty(); }
  // The keys marked since the last call, in the order they were marked.
  std::vector<BlockedKey> TakeReadyKeys();

  // The ids waiting on a key, oldest first (a copy: serving changes the lists).
  std::vector<uint64_t> WaitersOf(int db, std::string_view key) const;
  bool HasWaiters(int db, std::string_view key) const;
  // Every key of `db` somebody waits on (SWAPDB and FLUSH need them).
  std::vector<std::string> KeysWithWaiters(int db) const;

  // The earliest deadline, or 0 when no waiter has one.
  int64_t NextDeadline() const;
  // Waiters whose deadline is <= now_ms, oldest deadline first; they stay registered until
  // the caller unblocks them.
  std::vector<uint64_t> Expired(int64_t now_ms) const;

  size_t blocked_clients() const { return waiters_.size(); }
  size_t blocking_keys() const { return waited_keys_; }
  // Keys with at least one waiter that wakes on deletion or type change (XREADGROUP), as
  // Redis 7.2's INFO total_blocking_keys_on_nokey counts them.
  size_t blocking_keys_on_nokey() const { return change_watched_keys_; }
  // Waiters with a deadline (INFO's clients_in_timeout_table).
  size_t waiters_with_timeout() const { return deadlines_.size(); }

 private:
  // Lets the per-database maps be searched with a string_view: SignalKeyAsReady runs for every
  // key a write creates, and must not allocate just to find that nobody waits on it.
  struct KeyHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  struct KeyWaiters {
    std::deque<uint64_t> fifo;
    uint32_t change_watchers = 0;  // waiters whose condition wants every change
    bool ready = false;            // already in ready_
  };
  using KeyMap = std::unordered_map<std::string, KeyWaiters, KeyHash, std::equal_to<>>;

  KeyWaiters* FindKey(int db, std::string_view key);
  const KeyWaiters* FindKey(int db, std::string_view key) const;

  std::unordered_map<uint64_t, Waiter> waiters_;
  // Per database: key -> its waiters, oldest first.
  std::vector<KeyMap> keys_by_db_;
  size_t waited_keys_ = 0;          // keys with at least one waiter, over all databases
  size_t change_watched_keys_ = 0;  // keys with change_watchers > 0, over all databases
  std::vector<BlockedKey> ready_;
  // (deadline, id) for waiters with a timeout.
  std::set<std::pair<int64_t, uint64_t>> deadlines_;
};

}  // namespace vireo
