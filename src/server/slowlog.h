// SLOWLOG: the most recent commands that ran longer than slowlog-log-slower-than, newest
// first, at most slowlog-max-len of them. Arguments are shortened as Redis does so the log
// stays small, and secrets are redacted: any client with SLOWLOG GET can read it.
#pragma once

#include <cstdint>
#include <deque>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace vireo {

class Client;

// COMMANDLOG (Valkey 8.1) keeps three logs of this one shape: the slow log (SLOWLOG's own, as
// in Valkey), and those of large requests and large replies, whose value is a size in bytes.
enum class CommandlogType { kSlow = 0, kLargeRequest = 1, kLargeReply = 2 };

struct SlowlogEntry {
  uint64_t id;
  int64_t timestamp;    // unix seconds
  int64_t duration_us;  // the logged value: bytes in the large-request and large-reply logs
  std::vector<std::string> argv;
  std::string peer;
  std::string client_name;
};

class Slowlog {
 public:
  // Logs `client`'s call of `argv` if it took at least `slower_than_us` (negative: log
  // nothing), then drops the oldest entries beyond `max_len`.
  void Add(const Client& client, std::span<const std::string_view> argv, int64_t duration_us,
           int64_t slower_than_us, int64_t max_len);
  const std::deque<SlowlogEntry>& entries() const { return entries_; }
  size_t size() const { return entries_.size(); }
  // SLOWLOG RESET: ids keep counting.
  void Reset() { entries_.clear(); }
  uint64_t next_id() const { return next_id_; }

 private:
  std::deque<SlowlogEntry> entries_;
  uint64_t next_id_ = 0;
};

}  // namespace vireo
