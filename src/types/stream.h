// The stream type: an append-only log of entries ordered by <ms>-<seq> IDs.
//
// Entries live in blocks of packed, delta-encoded entries (in the spirit of Redis's radix tree
// of listpacks), indexed by the ID of each block's first entry in an ordered map:
//  * appending touches only the tail block (O(1));
//  * seeking an ID is one map lookup plus a scan of at most one block (O(log n));
//  * trimming from the head drops whole blocks, deleting entries inside a block only marks
//    them (a block whose entries are all deleted is freed).
// Each block stores the field names of its first entry once ("master fields"); an entry with
// the same field names stores only its values. IDs are stored as varint deltas from the block's
// first ID, strings as a varint length (or a zigzag integer when the string is a canonical
// integer) followed by the bytes.
//
// Consumer groups (stream_groups.h) hang off the stream; the stream knows nothing of clients.
#pragma once

#include <compare>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "types/object.h"

namespace vireo {

struct StreamID {
  uint64_t ms = 0;
  uint64_t seq = 0;

  auto operator<=>(const StreamID&) const = default;
  static constexpr StreamID Min() { return {0, 0}; }
  static constexpr StreamID Max() { return {UINT64_MAX, UINT64_MAX}; }
  bool is_zero() const { return ms == 0 && seq == 0; }
  // The next/previous ID; false (and unchanged) at Max()/Min().
  bool Increment();
  bool Decrement();
  std::string ToString() const;
};

// Parses "<ms>-<seq>" or "<ms>" (seq = missing_seq) the way Redis does. With `seq_star` non-null,
// "<ms>-*" is accepted and sets *seq_star. Without `strict`, "-" and "+" mean Min and Max.
bool ParseStreamID(std::string_view s, StreamID* id, uint64_t missing_seq, bool strict,
                   bool* seq_star = nullptr);

class StreamGroups;
class StreamIdmp;

// One entry as iteration sees it: its ID and field/value pairs (fields at even positions).
// The views point into the stream (or into the iterator's scratch space) and stay valid until
// the stream is modified or the iterator advances.
struct StreamEntryView {
  StreamID id;
  std::vector<std::string_view> field_values;
};

class Stream : public HeapObject {
 public:
  // The node size limits in force when an entry is appended (stream-node-max-bytes / -entries;
  // 0 = no limit).
  struct NodeLimits {
    size_t max_bytes = 4096;
    size_t max_entries = 100;
  };

  // A block of packed entries (defined in stream.cc).
  struct Block;

  Stream();
  ~Stream() override;
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  // HeapObject.
  size_t MemoryUsage() const override;
  std::unique_ptr<HeapObject> Clone() const override;
  const char* EncodingName() const override { return "stream"; }
  size_t FreeEffort() const override { return length(); }

  // --- Metadata -------------------------------------------------------------------------------
  size_t length() const { return length_; }
  bool empty() const { return length_ == 0; }
  StreamID last_id() const { return last_id_; }
  // The ID of the first live entry, 0-0 when empty ("recorded-first-entry-id").
  StreamID first_id() const { return first_id_; }
  StreamID max_deleted_id() const { return max_deleted_id_; }
  uint64_t entries_added() const { return entries_added_; }
  // XSETID and loaders set these directly; the caller validates.
  void set_last_id(StreamID id) { last_id_ = id; }
  void set_max_deleted_id(StreamID id) { max_deleted_id_ = id; }
  void set_entries_added(uint64_t n) { entries_added_ = n; }
  // Blocks, as XINFO's radix-tree-keys reports.
  size_t block_count() const { return blocks_.size(); }

  // --- Writes ---------------------------------------------------------------------------------
  // The ID XADD * would give now (`now_ms` is the wall clock); false when the stream has
  // exhausted the ID space. With seq_only, `ms` is fixed ("<ms>-*").
  bool NextId(uint64_t now_ms, StreamID* out) const;
  bool NextIdForMs(uint64_t ms, StreamID* out) const;
  // Appends an entry; `id` must be greater than last_id(). field_values has even size > 0.
  void Append(StreamID id, std::span<const std::string_view> field_values,
              const NodeLimits& limits);
  // XDEL of one ID: true if a live entry was deleted. Updates max-deleted-entry-id and the
  // first ID.
  bool Delete(StreamID id);
  // How trimming treats entries consumer groups still reference (Redis 8.2 KEEPREF | DELREF |
  // ACKED); null = KEEPREF.
  struct TrimRefs {
    // When set, an entry is removed only if this says so (ACKED); entries it refuses are
    // skipped and trimming goes on past them.
    std::function<bool(StreamID)> removable;
    // Entries above this ID are never removable: trimming stops there (ACKED: the smallest
    // last-delivered ID of the groups).
    StreamID removable_until = StreamID::Max();
    // Called with each entry removed (DELREF cleans the PELs).
    std::function<void(StreamID)> on_removed;
  };
  // Trimming from the head. `approx` removes only whole blocks (with `refs`, only entries of
  // blocks wholly inside the trimmed range); `limit` (approx only, 0 = none) bounds the entries
  // removed. Returns the number removed. Does not touch max-deleted-id. With `stop_id`, the ID
  // where an approximate trim stopped is stored there (every entry below it was considered;
  // Max() when it reached the end), so it can be replayed exactly as MINID = stop_id.
  int64_t TrimByLength(uint64_t maxlen, bool approx, int64_t limit, const TrimRefs* refs = nullptr,
                       StreamID* stop_id = nullptr);
  int64_t TrimByMinId(StreamID minid, bool approx, int64_t limit, const TrimRefs* refs = nullptr,
                      StreamID* stop_id = nullptr);

  // --- Reads ----------------------------------------------------------------------------------
  bool Contains(StreamID id) const;
  // The first/last live entry ID; false when empty.
  bool FirstEntryId(StreamID* id) const;
  bool LastEntryId(StreamID* id) const;
  // Whether entries may have been deleted (XDEL) with IDs in [start, end], judged as Redis does
  // from max-deleted-entry-id alone: it decides whether a group's entries-read counter can
  // keep counting.
  bool RangeHasTombstones(StreamID start, StreamID end) const;

  // Iterates live entries with IDs in [start, end], ascending (or descending when `reverse`).
  class Iterator {
   public:
    Iterator(const Stream& stream, StreamID start, StreamID end, bool reverse);
    // False at the end.
    bool Next(StreamEntryView* out);

   private:
    bool LoadBlock();
    const Stream& stream_;
    StreamID start_, end_;
    bool reverse_;
    bool done_ = false;
    // The block being walked and the offsets of its entries (in walk order).
    std::map<StreamID, Block*>::const_iterator block_;
    std::vector<uint32_t> offsets_;
    size_t pos_ = 0;
    std::string scratch_;  // integer-encoded strings, formatted
  };
  // Calls fn for each live entry in [start, end] until it returns false or `count` entries
  // (0 = all) were visited. Returns the number visited.
  size_t Range(StreamID start, StreamID end, bool reverse, size_t count,
               const std::function<bool(const StreamEntryView&)>& fn) const;

  // --- Raw blocks, for the RDB codec -----------------------------------------------------------
  // A block is close to one of Redis's listpack nodes (master fields, then entries as flags, ID
  // deltas and strings), so snapshots translate block <-> node element by element, without
  // formatting integers or building entries. One stored string: an integer or bytes.
  struct RawString {
    bool is_int = false;
    int64_t ival = 0;
    std::string_view sval;
  };
  // Receives every block in ID order, deleted entries included.
  class BlockVisitor {
   public:
    virtual ~BlockVisitor() = default;
    virtual void BeginBlock(StreamID master, uint32_t live, uint32_t deleted,
                            std::span<const RawString> master_fields) = 0;
    // `items`: the values alone when `same_fields` (the master fields' values, in order), else
    // the field/value pairs.
    virtual void Entry(bool deleted, bool same_fields, StreamID id,
                       std::span<const RawString> items) = 0;
    virtual void EndBlock() = 0;
  };
  void VisitBlocks(BlockVisitor& visitor) const;
  // Appends blocks as a snapshot holds them, checking what the stream's own invariants need:
  // IDs strictly increasing and never below their block's master ID, entries shaped as the
  // master fields say. A block left without live entries is dropped. The caller sets last ID,
  // max-deleted ID and entries-added afterwards.
  class BlockLoader {
   public:
    explicit BlockLoader(Stream* stream) : stream_(stream) {}
    ~BlockLoader();
    BlockLoader(const BlockLoader&) = delete;
    BlockLoader& operator=(const BlockLoader&) = delete;
    bool BeginBlock(StreamID master, std::span<const RawString> master_fields, size_t size_hint);
    bool Entry(bool deleted, bool same_fields, StreamID id, std::span<const RawString> items);
    void EndBlock();

   private:
    Stream* stream_;
    Block* block_ = nullptr;
    StreamID master_;
    StreamID last_seen_;
    bool seen_any_ = false;
  };

  // --- Consumer groups ------------------------------------------------------------------------
  // nullptr until the first group is created.
  StreamGroups* groups() const { return groups_.get(); }
  StreamGroups& MutableGroups();

  // --- Idempotent production (XADD IDMP, XCFGSET) ---------------------------------------------
  // nullptr until the stream first needs it, so streams that never use IDMP pay one pointer.
  StreamIdmp* idmp() const { return idmp_.get(); }
  // Creates the state with these settings if missing.
  StreamIdmp& MutableIdmp(int64_t duration_s, int64_t maxsize);
  void set_idmp(std::unique_ptr<StreamIdmp> idmp);

  // --- Lag estimate (XINFO entries-read / lag) ------------------------------------------------
  // Redis's estimate of how many entries were added up to and including `id`, or -1 when it
  // cannot be known.
  int64_t EstimateDistanceFromFirstEver(StreamID id) const;

 private:
  using BlockMap = std::map<StreamID, Block*>;
  void RemoveBlock(BlockMap::iterator it);
  void UpdateFirstId();
  int64_t Trim(bool by_length, uint64_t maxlen, StreamID minid, bool approx, int64_t limit,
               const TrimRefs* refs, StreamID* stop_id);

  BlockMap blocks_;  // keyed by each block's first (master) ID
  size_t length_ = 0;
  StreamID last_id_;
  StreamID first_id_;
  StreamID max_deleted_id_;
  uint64_t entries_added_ = 0;
  std::unique_ptr<StreamGroups> groups_;
  std::unique_ptr<StreamIdmp> idmp_;
};

}  // namespace vireo
