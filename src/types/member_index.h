// MemberIndex: member -> ZEntry lookup for a large sorted set (ZSCORE, ZADD's update check).
//
// An open-addressing table of tagged pointers with linear probing: each 8-byte slot holds the
// entry pointer in its low 48 bits and 16 bits of the member's hash above them, so a probe
// rejects almost every non-matching slot without touching the entry. A slot's home is the top
// bits of the hash; deletion shifts the following cluster back (no tombstones).
//
// Why not a chained dict: a chained entry costs a 32-byte allocation per member; here a member
// costs 8 / load-factor bytes.
//
// Scan order is by home slot, i.e. by the hash's top bits, which stays the same order when the
// table grows or shrinks: a cursor is the next hash prefix to visit, so SCAN's guarantee (every
// member present throughout is returned) survives resizes and deletions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "types/zset_entry.h"

namespace vireo {

class MemberIndex {
 public:
  MemberIndex() = default;
  ~MemberIndex();
  MemberIndex(const MemberIndex&) = delete;
  MemberIndex& operator=(const MemberIndex&) = delete;

  size_t size() const { return size_; }
  size_t capacity() const { return capacity_; }
  ZEntry* Find(std::string_view member) const;
  // Adds an entry whose member is not present.
  void Insert(ZEntry* e);
  // Removes and returns the entry for `member`, or nullptr.
  ZEntry* Erase(std::string_view member);
  // Pre-sizes for n members.
  void Reserve(size_t n);

  // Calls fn(entry) for members whose hash prefix lies in [cursor, next), visiting about
  // `count` home slots; returns next, 0 when the scan is complete.
  template <typename F>
  uint64_t Scan(uint64_t cursor, size_t count, F&& fn) const;

  // Frees the table (not the entries).
  void Clear();
  size_t MemoryUsage() const { return capacity_ * sizeof(uint64_t); }

 private:
  static constexpr uint64_t kPtrMask = (uint64_t{1} << 48) - 1;
  static uint64_t Hash(std::string_view member);
  static uint64_t Tag(uint64_t hash) { return (hash & 0xffff) << 48; }
  static ZEntry* EntryOf(uint64_t slot) { return reinterpret_cast<ZEntry*>(slot & kPtrMask); }
  size_t Home(uint64_t hash) const { return static_cast<size_t>(hash >> shift_); }
  void Rehash(size_t capacity);
  void Place(uint64_t slot, uint64_t hash);

  uint64_t* slots_ = nullptr;
  size_t capacity_ = 0;  // a power of two, or 0
  size_t size_ = 0;
  int shift_ = 64;
};

template <typename F>
uint64_t MemberIndex::Scan(uint64_t cursor, size_t count, F&& fn) const {
  if (size_ == 0) return 0;
  size_t first = Home(cursor);
  if (shift_ == 64) first = 0;
  size_t last = first + (count == 0 ? 1 : count);  // exclusive home range
  if (last > capacity_) last = capacity_;
  // Entries with home in [first, last) sit at or after their home, up to the next empty slot
  // past `last` (wrapping around the end).
  size_t mask = capacity_ - 1;
  for (size_t i = first;; ++i) {
    size_t s = i & mask;
    uint64_t slot = slots_[s];
    if (i >= last && slot == 0) break;
    if (i >= first + capacity_) break;
    if (slot == 0) continue;
    ZEntry* e = EntryOf(slot);
    size_t home = Home(Hash(e->member()));
    if (home >= first && home < last) fn(e);
  }
  if (last >= capacity_) return 0;
  return static_cast<uint64_t>(last) << shift_;
}

}  // namespace vireo
