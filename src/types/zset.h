// ZSet: the value of a sorted-set key.
//
// Two encodings, as Redis has, switched at the same thresholds so OBJECT ENCODING answers the
// same:
//  * packed ("listpack"): one malloc'd buffer of entries in (score, member) order, each
//      [len][member][8-byte score][len backwards]
//    where len is 1 byte below 255, else 0xff + 4 bytes (the trailing copy lets iteration run
//    backwards). Lookups are linear, which is fine up to zset-max-listpack-entries.
//  * tree ("skiplist"): ScoreTree (order, rank) + MemberIndex (member -> entry) over shared
//    ZEntry allocations.
// Conversion to the tree happens when an insert would exceed zset-max-listpack-entries or a
// member is longer than zset-max-listpack-value; the caller passes the limits in (the type
// knows nothing of the server's config). Redis never converts back on removals, nor do we.
//
// Everything is addressed by rank (0 = lowest score): range queries find the rank bounds with
// ScoreLowerBound / LexLowerBound and then walk an Iter.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "types/member_index.h"
#include "types/object.h"
#include "types/score_tree.h"

namespace vireo {

// A bound of a lexicographic range: "-", "+", "[value" or "(value".
struct LexBound {
  enum class Kind : uint8_t { kMin, kMax, kValue };
  Kind kind = Kind::kMin;
  bool exclusive = false;
  std::string value;
};

class ZSet : public HeapObject {
 public:
  struct Limits {
    size_t max_entries = 128;
    size_t max_value = 64;
  };

  // An empty set whose encoding is chosen as Redis 7.2's zsetTypeCreate does for a set about
  // to receive `size_hint` members of at most `max_len` bytes.
  ZSet(size_t size_hint, size_t max_len, const Limits& limits);
  ~ZSet() override;
  ZSet(const ZSet&) = delete;
  ZSet& operator=(const ZSet&) = delete;

  bool packed() const { return big_ == nullptr; }
  size_t size() const { return packed() ? count_ : big_->tree.size(); }
  // Slots of the skiplist encoding's member index (0 when packed), for DEBUG HTSTATS-KEY.
  size_t index_capacity() const { return packed() ? 0 : big_->index.capacity(); }
  bool empty() const { return size() == 0; }

  // The score of `member`; false when absent.
  bool Score(std::string_view member, double* score) const;
  // Adds a member that is not present, converting the encoding when limits say so.
  void Insert(std::string_view member, double score, const Limits& limits);
  // Moves a present member to a new score.
  void Update(std::string_view member, double new_score);
  bool Erase(std::string_view member);
  // The 0-based ascending rank of `member`, if present.
  std::optional<size_t> Rank(std::string_view member) const;

  // The rank of the first member with score >= min (> min when exclusive): where a score range
  // starts. For its end, ask with the upper bound and !exclusive inverted (see ScoreRangeEnd).
  size_t ScoreLowerBound(double min, bool exclusive) const;
  // The rank just past the last member with score <= max (< max when exclusive).
  size_t ScoreRangeEnd(double max, bool exclusive) const;
  // The same for lexicographic bounds (members compared as bytes; the scores are assumed
  // equal, as Redis requires of lex ranges).
  size_t LexLowerBound(const LexBound& min) const;
  size_t LexRangeEnd(const LexBound& max) const;

  // A cursor over the members in order; Prev/Next step down/up by one rank.
  class Iter {
   public:
    bool Valid() const;
    std::string_view member() const { return member_; }
    double score() const { return score_; }
    void Next();
    void Prev();

   private:
    friend class ZSet;
    void Load();
    const ZSet* set_ = nullptr;
    // packed: the entry's byte offset; tree: the leaf position.
    size_t off_ = 0;
    ScoreTree::Pos pos_;
    bool valid_ = false;
    std::string_view member_;
    double score_ = 0;
  };
  // The member at `rank` (an invalid Iter past the end).
  Iter At(size_t rank) const;

  // Removes the members of ranks [from, to).
  void EraseRanks(size_t from, size_t to);

  // Calls fn(member, score) in ascending order.
  template <typename F>
  void ForEach(F&& fn) const {
    for (Iter it = At(0); it.Valid(); it.Next()) fn(it.member(), it.score());
  }

  // ZSCAN: calls fn(member, score) for the next batch; returns the next cursor (0 = done).
  // The packed encoding returns everything at once, as Redis does for listpacks.
  template <typename F>
  uint64_t Scan(uint64_t cursor, size_t count, F&& fn) const {
    if (packed()) {
      ForEach(fn);
      return 0;
    }
    // COUNT asks for about that many members, as Redis's bucket walk gives at load factor ~1.
    // The index is sparser than that, so visit home-slot ranges sized by what is still missing
    // until COUNT members came back (bounded like Redis: at most 10 * COUNT home slots).
    const size_t want = count == 0 ? 1 : count;
    size_t visited = 0;
    size_t budget = want > SIZE_MAX / 10 ? SIZE_MAX : want * 10;
    do {
      const size_t chunk = std::min(want - visited, budget);
      cursor = big_->index.Scan(cursor, chunk, [&](const ZEntry* e) {
        ++visited;
        fn(e->member(), e->score());
      });
      budget -= chunk;
    } while (cursor != 0 && visited < want && budget > 0);
    return cursor;
  }

  // Switches to the tree encoding (no-op if already there).
  void ConvertToTree();
  // Switches back to packed when the set fits the limits (ZUNIONSTORE & co. do this for
  // their results, as Redis does).
  void ConvertToPackedIfFits(const Limits& limits);

  size_t MemoryUsage() const override;
  std::unique_ptr<HeapObject> Clone() const override;
  const char* EncodingName() const override { return packed() ? "listpack" : "skiplist"; }
  size_t FreeEffort() const override { return packed() ? 1 : size(); }

  // Structural self-check, for tests.
  bool Validate() const;

 private:
  struct Big {
    ScoreTree tree;
    MemberIndex index;
    size_t entry_bytes = 0;
  };
  ZSet() = default;

  // Packed-encoding helpers.
  size_t PackedFind(std::string_view member, double* score) const;  // offset or npos
  void PackedInsertAt(size_t off, std::string_view member, double score);
  void PackedEraseAt(size_t off);
  size_t PackedEntrySize(size_t off) const;
  template <typename Less>
  size_t LowerBound(Less less) const;
  void TreeInsert(std::string_view member, double score);
  void FreeTree();

  uint8_t* buf_ = nullptr;  // packed entries
  uint32_t bytes_ = 0;      // packed bytes used
  uint32_t count_ = 0;      // packed entries
  std::unique_ptr<Big> big_;
};

}  // namespace vireo
