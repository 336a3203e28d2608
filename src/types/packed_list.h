// PackedList: the value of a list key (LPUSH/RPUSH/LRANGE/BLPOP...).
//
// A doubly linked list of packed nodes. Each node is ONE malloc'd block:
//
//   +-------------------------------------------+-------+-------------------------+------+
//   | Node: prev next count used cap lp front   | front | entry 0 ... entry N-1   | back |
//   +-------------------------------------------+-------+-------------------------+------+
//    40 bytes                                    `front` `used` bytes              slack
//
// Free room is kept at both ends of the payload so that pushes and pops at either end of the
// list are amortised O(1): popping the first entry only advances `front`, and the node is
// compacted (or reallocated with fresh room at the end that needs it) when its free room
// runs out or exceeds what it holds.
//
// An entry is a tag byte followed by its payload:
//   0x00-0x7f  string of 0..127 bytes (the tag is the length)
//   0x80-0xbf  string of 128..16383 bytes; length = (tag & 0x3f) << 8 | next byte
//   0xc0       string; a 4-byte little-endian length follows
//   0xc1-0xc8  integer; (tag - 0xc0) bytes of little-endian two's complement follow
//   0xd0-0xff  integer 0..47 held in the tag itself
// Only strings that Redis would also store as integers (canonical decimal within int64) are
// stored as integers, so reading one back yields the original bytes. There is no per-entry
// back-length (a 16-byte string costs 17 bytes; 18 in a Redis listpack), so walking backwards
// inside a node rescans it forwards; PopBack keeps an offset table of the tail node so that
// repeated pops at the tail stay O(1).
//
// Node boundaries follow Redis 7.2's quicklist exactly: each node also tracks `lp`, the size
// a Redis listpack of the same elements has, and every push/insert/split/merge decision uses
// it with Redis's rules for list-max-listpack-size. That is what lets EncodingName() answer
// what OBJECT ENCODING answers in Redis 7.2: "listpack" (a single node that is not split while
// it grows) until an addition would exceed the limit, then "quicklist" until a removal leaves
// one node under half the limit.
//
// list-compress-depth is accepted and ignored: nodes are never compressed. Redis's 1 GB "plain
// node" threshold is not modelled (such an element is just a node of its own here, too).
//
// Thread safety: none; a list is owned by one thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "types/object.h"

namespace vireo {

namespace packed_list_internal {

struct Node {
  Node* prev;
  Node* next;
  uint32_t count;  // entries
  uint32_t used;   // payload bytes holding entries
  uint32_t cap;    // payload bytes allocated: front room + used + back room
  uint32_t lp;     // bytes a Redis listpack of these entries takes; drives node limits
  uint32_t front;  // free payload bytes before the first entry
  uint8_t* base() { return reinterpret_cast<uint8_t*>(this + 1); }
  uint8_t* data() { return base() + front; }
  const uint8_t* data() const { return reinterpret_cast<const uint8_t*>(this + 1) + front; }
};
static_assert(sizeof(Node) == 40);

// A string as about to be stored (parsed once: integer or not).
struct Elem;

// Offsets of a node's entries with O(1) push/pop at both ends (defined in the .cc).
struct OffsetDeque;

constexpr uint8_t kTagStr14 = 0x80;
constexpr uint8_t kTagStr32 = 0xc0;
constexpr uint8_t kTagSmallInt = 0xd0;
constexpr size_t kIntBufSize = 24;

inline uint32_t Load32(const uint8_t* p) {
  uint32_t v;
  memcpy(&v, p, 4);
  return v;
}

// Bytes of the entry at p, tag included.
inline size_t EntrySize(const uint8_t* p) {
  uint8_t t = p[0];
  if (t < kTagStr14) return 1 + t;
  if (t < kTagStr32) return 2 + (((t & 0x3f) << 8) | p[1]);
  if (t == kTagStr32) return 5 + Load32(p + 1);
  if (t < kTagSmallInt) return 1 + (t - kTagStr32);
  return 1;
}

inline bool EntryIsInt(const uint8_t* p) { return p[0] > kTagStr32; }

// The payload of a string entry.
inline std::string_view EntryString(const uint8_t* p) {
  uint8_t t = p[0];
  const char* s = reinterpret_cast<const char*>(p);
  if (t < kTagStr14) return {s + 1, t};
  if (t < kTagStr32) return {s + 2, static_cast<size_t>(((t & 0x3f) << 8) | p[1])};
  return {s + 5, Load32(p + 1)};
}

// The value of an integer entry.
inline int64_t EntryInt(const uint8_t* p) {
  uint8_t t = p[0];
  if (t >= kTagSmallInt) return t - kTagSmallInt;
  size_t n = t - kTagStr32;
  uint64_t v = 0;
  memcpy(&v, p + 1, n);  // little-endian host assumed (x86-64, aarch64)
  if (n < 8 && (v >> (8 * n - 1)) & 1) v |= ~uint64_t{0} << (8 * n);  // sign-extend
  return static_cast<int64_t>(v);
}

// The entry's bytes; integers are formatted into buf (kIntBufSize bytes).
std::string_view EntryView(const uint8_t* p, char* buf);

}  // namespace packed_list_internal

class PackedList : public HeapObject {
 public:
  // max_listpack_size: Redis's list-max-listpack-size (-1..-5: 4..64 KB per node, >= 0:
  // entries per node). compress_depth is accepted and ignored.
  explicit PackedList(int max_listpack_size = -2, int compress_depth = 0);
  ~PackedList() override;
  PackedList(const PackedList&) = delete;
  PackedList& operator=(const PackedList&) = delete;

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

  // Active defragmentation: each node (one allocation) moved where the allocator says, at most
  // `budget` nodes per call from node number `cursor`; returns the next cursor, 0 when done.
  uint64_t Defrag(allocator::DefragCounters& counters, uint64_t cursor, size_t budget) override;

  void PushFront(std::string_view v);
  void PushBack(std::string_view v);
  // LPUSH/RPUSH with several elements, in argument order. Redis checks the listpack size
  // limit once for the whole batch, so this is not the same as pushing one at a time.
  void PushFrontMany(std::span<const std::string_view> values);
  void PushBackMany(std::span<const std::string_view> values);
  // False if empty. Redis checks for quicklist -> listpack after a removal; LMOVE with the
  // same source and destination makes that check after its push, so it passes convert=false
  // and calls AfterRemoval() once it has pushed.
  bool PopFront(std::string* out, bool convert = true);
  bool PopBack(std::string* out, bool convert = true);
  void AfterRemoval() { TryConvertToListpack(true); }

  // Negative indexes count from the tail (-1 = last). False when out of range.
  bool Get(int64_t index, std::string* out) const;
  // LSET. False when out of range (the list may still change encoding, as in Redis).
  bool Set(int64_t index, std::string_view v);

  // Visits the elements of [start, stop] (normalised: see NormalizeRange; clamped to the list)
  // head to tail; fn(std::string_view) returns false to stop. O(seek + visited): it walks
  // nodes from whichever end is nearer.
  template <typename F>
  void ForRange(int64_t start, int64_t stop, F&& fn) const {
    char buf[packed_list_internal::kIntBufSize];
    VisitRaw(start, stop, false,
             [&](const uint8_t* p) { return fn(packed_list_internal::EntryView(p, buf)); });
  }
  // The same range, visited from stop down to start.
  template <typename F>
  void ForRangeReverse(int64_t start, int64_t stop, F&& fn) const {
    char buf[packed_list_internal::kIntBufSize];
    VisitRaw(start, stop, true,
             [&](const uint8_t* p) { return fn(packed_list_internal::EntryView(p, buf)); });
  }

  // LINSERT: inserts v before/after the first element equal to pivot. Returns the new size,
  // or -1 if the pivot is not found (the encoding may still change, as in Redis).
  int64_t Insert(std::string_view pivot, std::string_view v, bool after);
  // LREM: removes up to |count| elements equal to v, from the head if count > 0, from the
  // tail if count < 0, all if 0. Returns the number removed.
  int64_t Remove(std::string_view v, int64_t count);
  // LTRIM with a normalised inclusive range: keeps [start, stop]; empties the list when the
  // range is empty (start > stop or start >= size()).
  void Trim(int64_t start, int64_t stop);
  // LPOS: indexes (from the head) of the elements equal to v. rank > 0 scans from the head
  // and skips the first rank-1 matches; rank < 0 scans from the tail. count = 0 returns all
  // matches, otherwise at most count; maxlen > 0 scans at most maxlen elements.
  std::vector<int64_t> Positions(std::string_view v, int64_t rank, int64_t count,
                                 int64_t maxlen) const;

  // Redis's LRANGE/LTRIM index normalisation: negative indexes count from the tail, start is
  // clamped to 0 and stop to len-1. Returns false when the range is empty.
  static bool NormalizeRange(int64_t start, int64_t stop, int64_t len, int64_t* from, int64_t* to);

  // Redis's LIST_CONV_AUTO, for a list built in bulk (RDB load, SORT ... STORE): listpack if
  // it is a single node within the limit, else quicklist.
  void ConvertAuto();

  size_t MemoryUsage() const override;
  const char* EncodingName() const override;
  std::unique_ptr<HeapObject> Clone() const override;
  std::unique_ptr<PackedList> CloneList() const;
  size_t node_count() const { return node_count_; }
  // What Redis's listpacks of these nodes would take in all (DEBUG OBJECT ql_uncompressed_size).
  size_t ListpackBytes() const;
  size_t FreeEffort() const override { return node_count_; }
  int max_listpack_size() const { return fill_; }
  int compress_depth() const { return compress_depth_; }

  // Checks every internal invariant (links, counts, sizes, offsets); for tests.
  bool Verify() const;

 private:
  using Node = packed_list_internal::Node;
  using Elem = packed_list_internal::Elem;

  // Calls fn(const uint8_t* entry) for the entries of [start, stop] in order, or reversed;
  // stops early when fn returns false.
  template <typename F>
  void VisitRaw(int64_t start, int64_t stop, bool reverse, F&& fn) const {
    if (start < 0) start = 0;
    if (stop >= static_cast<int64_t>(size_)) stop = static_cast<int64_t>(size_) - 1;
    if (start > stop) return;
    int64_t remaining = stop - start + 1;
    uint32_t at;
    const Node* n = Seek(reverse ? stop : start, &at);
    if (!reverse) {
      const uint8_t* p = n->data() + OffsetOf(n, at);
      while (true) {
        for (; at < n->count; ++at) {
          if (!fn(p) || --remaining == 0) return;
          p += packed_list_internal::EntrySize(p);
        }
        n = n->next;
        at = 0;
        p = n->data();
      }
    }
    std::vector<uint32_t> offsets;
    while (true) {
      EntryOffsets(n, at + 1, &offsets);
      for (uint32_t i = at + 1; i-- > 0;) {
        if (!fn(n->data() + offsets[i]) || --remaining == 0) return;
      }
      n = n->prev;
      at = n->count - 1;
    }
  }

  // The node holding element `index` (< size()) and its position in that node.
  const Node* Seek(int64_t index, uint32_t* at) const;
  Node* Seek(int64_t index, uint32_t* at) {
    return const_cast<Node*>(static_cast<const PackedList*>(this)->Seek(index, at));
  }
  // Byte offset of entry k in n (k may equal n->count: the end).
  uint32_t OffsetOf(const Node* n, uint32_t k) const;
  // Byte offsets of the first k entries of n.
  void EntryOffsets(const Node* n, uint32_t k, std::vector<uint32_t>* out) const;

  // Node memory. Relayout and the Reserve functions may move a node; they relink it and
  // return the new address, so they are only used on linked nodes.
  Node* NewNode(size_t payload);
  void FreeNode(Node* n);
  // Reallocates n as [front room][entries][back room].
  Node* Relayout(Node* n, size_t front, size_t back);
  Node* Reserve(Node* n, size_t extra);       // back room >= extra
  Node* ReserveFront(Node* n, size_t extra);  // front room >= extra
  Node* ShrinkIfSparse(Node* n);
  void Link(Node* pos, Node* n, bool after);
  void UnlinkAndFree(Node* n);

  // Entry edits inside one node (tail offset table not maintained: callers do that).
  Node* InsertAt(Node* n, uint32_t off, const Elem& e);
  size_t EraseAt(Node* n, uint32_t from, uint32_t to, uint32_t entries);

  // Redis's node limit rules.
  bool ExceedsLimit(size_t lp_bytes, size_t count) const;
  bool AllowInsert(const Node* n, size_t len) const;
  bool AllowMerge(const Node* a, const Node* b) const;
  // listpack -> quicklist before adding add_count elements of add_bytes string bytes.
  void GrowCheck(size_t add_bytes, size_t add_count);
  // quicklist -> listpack; `shrinking` after a removal.
  void TryConvertToListpack(bool shrinking);

  void PushMany(std::span<const std::string_view> values, bool front);
  void PushFrontElem(const Elem& e);
  void PushBackElem(const Elem& e);
  void InsertQuicklist(Node* n, uint32_t at, uint32_t off, const Elem& e, bool after);
  Node* Split(Node** n, uint32_t at, bool after);
  Node* Merge(Node* a, Node* b);
  void MergeAround(Node* center);
  void DropFront(uint64_t k);
  void DropBack(uint64_t k);

  void BuildTailIndex();
  void InvalidateTailIndex();

  Node* head_ = nullptr;
  Node* tail_ = nullptr;
  size_t size_ = 0;
  size_t node_count_ = 0;
  size_t bytes_ = 0;  // malloc'd bytes of all nodes
  int fill_;
  int compress_depth_;
  bool listpack_ = true;  // what OBJECT ENCODING says; see the file comment
  // Built by the first PopBack on a node and kept up to date until the tail node changes in
  // some other way: the offset (from base()) of every entry of tail_, so that PopBack need
  // not rescan the node.
  std::unique_ptr<packed_list_internal::OffsetDeque> tail_index_;
  // The node an unfinished Defrag resumes from (null: none, or it was freed since).
  Node* defrag_next_ = nullptr;
};

}  // namespace vireo
