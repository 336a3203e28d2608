// Idempotent production state of one stream (Redis 8.6 XADD IDMP / IDMPAUTO, XCFGSET).
//
// For each producer ID (pid) the stream remembers which idempotent IDs (iids) it has added and
// the entry ID each one got, so a producer that retries after a lost reply gets the original
// ID back instead of a second entry. A producer's history is a FIFO in insertion order with a
// hash index over it:
//  * at most `maxsize` iids per producer: adding one more forgets the oldest;
//  * an iid is forgotten `duration` seconds after its entry's ID time (the ID's ms part, which
//    for the auto-generated IDs IDMP requires is the wall clock of the add, and which replays
//    identically from the AOF or a RESTORE). Expiry is lazy but global: the producers are
//    ordered by their oldest record, so every operation drops everything expired in
//    O(log producers) plus the records dropped, and no idle producer keeps memory past its
//    duration once the stream is touched again.
// Lifetime counters (iids-added, iids-duplicates) survive eviction, expiry and XCFGSET.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "types/stream.h"

namespace vireo {

class StreamIdmp {
 public:
  static constexpr int64_t kDefaultDuration = 100;
  static constexpr int64_t kMinDuration = 1;
  static constexpr int64_t kMaxDuration = 86400;
  static constexpr int64_t kDefaultMaxsize = 100;
  static constexpr int64_t kMinMaxsize = 1;
  static constexpr int64_t kMaxMaxsize = 10000;
  // Size of an IDMPAUTO iid (a 128-bit digest).
  static constexpr size_t kAutoIidSize = 16;

  StreamIdmp(int64_t duration_s, int64_t maxsize) : duration_s_(duration_s), maxsize_(maxsize) {}
  StreamIdmp(const StreamIdmp&) = delete;
  StreamIdmp& operator=(const StreamIdmp&) = delete;

  int64_t duration() const { return duration_s_; }
  int64_t maxsize() const { return maxsize_; }
  // XCFGSET: a value different from the current one clears every producer's history (the
  // lifetime counters stay). Returns true if it cleared.
  bool Configure(int64_t duration_s, int64_t maxsize);

  // The entry ID recorded for (pid, iid), or nullptr. Drops what expired by `now_ms` first.
  const StreamID* Find(std::string_view pid, std::string_view iid, int64_t now_ms);
  // Records a pair that Find just reported absent, counting it in iids-added; evicts the
  // producer's oldest iid beyond maxsize.
  void Record(std::string_view pid, std::string_view iid, StreamID id);
  void CountDuplicate() { ++iids_duplicates_; }
  // Counts a pair in iids-added without keeping it (XIDMPRECORD replaying a pair that has
  // already expired).
  void CountAdded() { ++iids_added_; }
  // Whether a record for `id` would already be expired at `now_ms`.
  bool Expired(StreamID id, int64_t now_ms) const {
    return static_cast<int64_t>(id.ms) <= now_ms - duration_s_ * 1000;
  }
  // Drops every record whose duration has passed at `now_ms`.
  void Expire(int64_t now_ms);

  size_t pids_tracked() const { return producers_.size(); }
  size_t iids_tracked() const { return iids_tracked_; }
  uint64_t iids_added() const { return iids_added_; }
  uint64_t iids_duplicates() const { return iids_duplicates_; }
  // True when the state differs from what a stream that never used IDMP reports with these
  // defaults: persistence writes Redis 7's format when this is false.
  bool IsTrivial(int64_t default_duration, int64_t default_maxsize) const;

  // --- Persistence --------------------------------------------------------------------------
  // Visits producers (in no particular order) and, for each, its records oldest first.
  void ForEachProducer(const std::function<void(std::string_view pid, size_t count)>& producer,
                       const std::function<void(std::string_view iid, StreamID id)>& record) const;
  // Loaders: appends a record without counting it (call in the order ForEachProducer gave).
  void Restore(std::string_view pid, std::string_view iid, StreamID id);
  void set_counters(uint64_t added, uint64_t duplicates) {
    iids_added_ = added;
    iids_duplicates_ = duplicates;
  }

  std::unique_ptr<StreamIdmp> Clone() const;
  size_t MemoryUsage() const;

  // The IDMPAUTO iid of an entry: a 128-bit digest of its field/value pairs that does not
  // depend on their order (a multiset of pairs: repeated pairs count).
  static std::string AutoIid(std::span<const std::string_view> field_values);

 private:
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const;
  };
  struct Entry {
    std::string iid;
    StreamID id;
  };
  struct Producer {
    std::string pid;
    // Oldest first. A deque never moves its elements on push_back/pop_front, so the index may
    // point into the records' strings.
    std::deque<Entry> fifo;
    std::unordered_map<std::string_view, StreamID, Hash, std::equal_to<>> index;
  };
  using ProducerMap =
      std::unordered_map<std::string, std::unique_ptr<Producer>, Hash, std::equal_to<>>;
  // One entry per producer, keyed by an ID no newer than its oldest record's (kept exact on
  // expiry, left stale by maxsize evictions), for global expiry.
  using ByOldest = std::set<std::pair<StreamID, Producer*>>;

  Producer* GetOrCreate(std::string_view pid);
  void Append(Producer* p, std::string_view iid, StreamID id);
  void PopOldest(Producer* p);
  void Clear();

  int64_t duration_s_;
  int64_t maxsize_;
  ProducerMap producers_;
  ByOldest by_oldest_;
  Producer* last_producer_ = nullptr;
  size_t iids_tracked_ = 0;
  uint64_t iids_added_ = 0;
  uint64_t iids_duplicates_ = 0;
};

}  // namespace vireo
