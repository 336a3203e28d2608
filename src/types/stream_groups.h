// Consumer groups of a stream: each group has a last-delivered ID, a logical read counter, a
// pending-entries list (PEL: entries delivered but not acknowledged) and named consumers, each
// with its own view of the PEL entries it owns.
//
// The group PEL owns the pending entries (ordered by ID); a consumer's PEL indexes the entries
// it owns. Every pending entry records its owner, last delivery time and delivery count, so
// claims, XPENDING and XINFO need no second lookup. An entry's owner may later be null (a
// NACKed entry that nobody owns, Redis 8.8); the code keeps that case in mind.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "types/stream.h"

namespace vireo {

class StreamConsumer;

struct PendingEntry {
  StreamID id;
  StreamConsumer* consumer = nullptr;
  int64_t delivery_time_ms = 0;  // unix ms of the last delivery; 0 once NACKed
  uint64_t delivery_count = 0;
  // Position in the group's NACK zone (0: not NACKed). Larger = NACKed later.
  uint64_t nack_seq = 0;

  bool nacked() const { return nack_seq != 0; }
  // One more delivery. XNACK FATAL sets the count to INT64_MAX; replies show it as a signed
  // integer, so it saturates there instead of turning negative.
  void CountDelivery() {
    if (delivery_count < static_cast<uint64_t>(INT64_MAX)) ++delivery_count;
  }
};

class StreamConsumer {
 public:
  StreamConsumer(std::string_view name, int64_t now_ms) : seen_time_ms(now_ms), name_(name) {}
  const std::string& name() const { return name_; }

  // Last attempted interaction (any read/claim), and last successful one (-1 = never).
  int64_t seen_time_ms;
  int64_t active_time_ms = -1;
  // The pending entries this consumer owns, by ID (owned by the group's PEL).
  std::map<StreamID, PendingEntry*> pel;

 private:
  std::string name_;
};

class ConsumerGroup {
 public:
  // entries_read when the counter is unknown.
  static constexpr int64_t kInvalidEntriesRead = -1;

  ConsumerGroup(std::string_view name, StreamID last_id, int64_t entries_read)
      : last_id(last_id), entries_read(entries_read), name_(name) {}
  ConsumerGroup(const ConsumerGroup&) = delete;

  const std::string& name() const { return name_; }

  StreamID last_id;
  int64_t entries_read;

  // --- Consumers ------------------------------------------------------------------------------
  StreamConsumer* FindConsumer(std::string_view name) const;
  // Creates the consumer if missing; *created says whether it did.
  StreamConsumer* GetOrCreateConsumer(std::string_view name, int64_t now_ms, bool* created);
  // Deletes a consumer and the pending entries it owns (NACKed ones stay); returns how many it
  // owned, -1 if absent.
  int64_t DeleteConsumer(std::string_view name);
  // By name, as XINFO CONSUMERS lists them.
  const std::map<std::string, std::unique_ptr<StreamConsumer>, std::less<>>& consumers() const {
    return consumers_;
  }

  // --- PEL --------------------------------------------------------------------------------------
  PendingEntry* FindPending(StreamID id);
  // Records a delivery of `id` to `consumer`: a new pending entry with count 1, or, if the ID
  // was already pending (re-delivery after SETID), moved to `consumer` with the count reset.
  PendingEntry* Deliver(StreamID id, StreamConsumer* consumer, int64_t now_ms);
  // Gives a pending entry to another consumer (claims); a NACKed entry leaves the NACK zone.
  void Reassign(PendingEntry* entry, StreamConsumer* consumer);
  // Adds a pending entry with explicit fields (XCLAIM FORCE, loaders).
  PendingEntry* AddPending(StreamID id, StreamConsumer* consumer, int64_t delivery_time_ms,
                           uint64_t delivery_count);
  // XACK: removes the entry from the PEL (and the NACK zone); false if it wasn't pending.
  bool Ack(StreamID id);
  const std::map<StreamID, PendingEntry>& pel() const { return pel_; }

  // --- NACK zone (Redis 8.8 XNACK) --------------------------------------------------------------
  // Unowned pending entries (released by XNACK), in the order they were released: claims take
  // them first. Persistence saves and restores the zone through these two calls.
  std::vector<const PendingEntry*> NackedInOrder() const;
  // Appends an unowned pending entry (delivery time 0) at the end of the NACK zone; an entry
  // already pending is released from its owner and moved there.
  PendingEntry* AddNacked(StreamID id, uint64_t delivery_count);
  size_t nacked_count() const { return nacked_.size(); }
  // The oldest NACKed entry (claimed first), or nullptr when the zone is empty.
  PendingEntry* FirstNacked() const { return nacked_.empty() ? nullptr : nacked_.begin()->second; }

  size_t MemoryUsage() const;

 private:
  void LeaveNackZone(PendingEntry& entry);

  std::string name_;
  std::map<StreamID, PendingEntry> pel_;
  // The NACK zone: NACKed (unowned) entries by nack_seq, i.e. in the order they were released.
  // Re-NACKing takes a new sequence number, which moves the entry to the end.
  std::map<uint64_t, PendingEntry*> nacked_;
  uint64_t next_nack_seq_ = 1;
  std::map<std::string, std::unique_ptr<StreamConsumer>, std::less<>> consumers_;
};

class StreamGroups {
 public:
  ConsumerGroup* Find(std::string_view name) const;
  // nullptr if a group with this name exists.
  ConsumerGroup* Create(std::string_view name, StreamID last_id, int64_t entries_read);
  bool Destroy(std::string_view name);
  size_t size() const { return groups_.size(); }
  // By name, as XINFO GROUPS lists them.
  const std::map<std::string, std::unique_ptr<ConsumerGroup>, std::less<>>& all() const {
    return groups_;
  }

  std::unique_ptr<StreamGroups> Clone() const;
  size_t MemoryUsage() const;

 private:
  std::map<std::string, std::unique_ptr<ConsumerGroup>, std::less<>> groups_;
};

}  // namespace vireo
