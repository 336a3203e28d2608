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

class BlockingEngine {
 public:
  struct Waiter {
    uint64_t id;
    int db;
    std::vector<std::string> keys;
    int64_t deadline_ms;  // monotonic ms; 0 = wait forever
    ValueType type;       // the kind of value that can serve it
  };

  // Registers a waiter on every key (appended at the tail of each key's FIFO). A client is
  // blocked at most once; blocking an already blocked id replaces its registration.
  void Block(uint64_t id, int db, std::vector<std::string> keys, int64_t deadline_ms,
             ValueType type);
  // Removes the waiter from every key list and from the timeouts. False if not blocked.
  bool Unblock(uint64_t id);
  const Waiter* Find(uint64_t id) const;
  bool IsBlocked(uint64_t id) const { return waiters_.count(id) != 0; }

  // Marks a key ready, once, if somebody waits on it; cheap when nobody does.
  void SignalKeyAsReady(int db, std::string_view key);
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
    bool ready = false;  // already in ready_
  };
  using KeyMap = std::unordered_map<std::string, KeyWaiters, KeyHash, std::equal_to<>>;

  KeyWaiters* FindKey(int db, std::string_view key);
  const KeyWaiters* FindKey(int db, std::string_view key) const;

  std::unordered_map<uint64_t, Waiter> waiters_;
  // Per database: key -> its waiters, oldest first.
  std::vector<KeyMap> keys_by_db_;
  size_t waited_keys_ = 0;  // keys with at least one waiter, over all databases
  std::vector<BlockedKey> ready_;
  // (deadline, id) for waiters with a timeout.
  std::set<std::pair<int64_t, uint64_t>> deadlines_;
};

}  // namespace vireo
