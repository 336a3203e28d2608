#include "types/member_index.h"

#include <xxhash.h>

#include <cstdlib>
#include <cstring>

namespace vireo {
namespace {

constexpr size_t kMinCapacity = 8;

// Grow past 7/8 full: with tags in the slots, long probe runs stay cheap.
bool TooFull(size_t size, size_t capacity) { return size * 8 > capacity * 7; }

}  // namespace

MemberIndex::~MemberIndex() { Clear(); }

uint64_t MemberIndex::Hash(std::string_view member) {
  return XXH3_64bits(member.data(), member.size());
}

void MemberIndex::Clear() {
  free(slots_);
  slots_ = nullptr;
  capacity_ = 0;
  size_ = 0;
  shift_ = 64;
}

ZEntry* MemberIndex::Find(std::string_view member) const {
  if (size_ == 0) return nullptr;
  uint64_t hash = Hash(member);
  uint64_t tag = Tag(hash);
  size_t mask = capacity_ - 1;
  for (size_t i = Home(hash);; i = (i + 1) & mask) {
    uint64_t slot = slots_[i];
    if (slot == 0) return nullptr;
    if ((slot & ~kPtrMask) == tag) {
      ZEntry* e = EntryOf(slot);
      if (e->member() == member) return e;
    }
  }
}

void MemberIndex::Place(uint64_t slot, uint64_t hash) {
  size_t mask = capacity_ - 1;
  size_t i = Home(hash);
  while (slots_[i] != 0) i = (i + 1) & mask;
  slots_[i] = slot;
}

void MemberIndex::Rehash(size_t capacity) {
  uint64_t* old = slots_;
  size_t old_capacity = capacity_;
  slots_ = static_cast<uint64_t*>(calloc(capacity, sizeof(uint64_t)));
  capacity_ = capacity;
  shift_ = 64 - __builtin_ctzll(capacity);
  for (size_t i = 0; i < old_capacity; ++i) {
    if (old[i] == 0) continue;
    Place(old[i], Hash(EntryOf(old[i])->member()));
  }
  free(old);
}

void MemberIndex::Reserve(size_t n) {
  size_t capacity = capacity_ == 0 ? kMinCapacity : capacity_;
  while (TooFull(n, capacity)) capacity *= 2;
  if (capacity != capacity_) Rehash(capacity);
}

void MemberIndex::Insert(ZEntry* e) {
  if (capacity_ == 0 || TooFull(size_ + 1, capacity_)) {
    Rehash(capacity_ == 0 ? kMinCapacity : capacity_ * 2);
  }
  uint64_t hash = Hash(e->member());
  Place(reinterpret_cast<uint64_t>(e) | Tag(hash), hash);
  ++size_;
}

ZEntry* MemberIndex::Erase(std::string_view member) {
  if (size_ == 0) return nullptr;
  uint64_t hash = Hash(member);
  uint64_t tag = Tag(hash);
  size_t mask = capacity_ - 1;
  size_t i = Home(hash);
  ZEntry* found = nullptr;
  for (;; i = (i + 1) & mask) {
    uint64_t slot = slots_[i];
    if (slot == 0) return nullptr;
    if ((slot & ~kPtrMask) == tag && EntryOf(slot)->member() == member) {
      found = EntryOf(slot);
      break;
    }
  }
  // Backward-shift deletion: pull later members of the cluster into the hole when the hole
  // lies between their home and their slot.
  size_t hole = i;
  for (size_t j = (i + 1) & mask;; j = (j + 1) & mask) {
    uint64_t slot = slots_[j];
    if (slot == 0) break;
    size_t home = Home(Hash(EntryOf(slot)->member()));
    // Distance from home to j versus from home to the hole, cyclically.
    if (((j - home) & mask) >= ((j - hole) & mask)) {
      slots_[hole] = slot;
      hole = j;
    }
  }
  slots_[hole] = 0;
  --size_;
  // Shrink when a quarter full, so a set emptied by pops gives its memory back.
  if (capacity_ > kMinCapacity && size_ * 4 < capacity_ / 2) Rehash(capacity_ / 2);
  return found;
}

}  // namespace vireo
