// Intrusive chained hash table with incremental rehashing, used for the keyspace.
//
// Why intrusive: the keyspace holds millions of entries, so the table stores no per-entry
// allocation of its own; the caller's node carries the `next` link. The only memory the table
// owns is the bucket arrays (one pointer per bucket).
//
// Why incremental: resizing a table of millions of buckets at once would stall the event loop.
// Instead, while a resize is in progress two bucket arrays coexist ("old" = tables_[0],
// "new" = tables_[1]) and every mutating/lookup operation migrates a bounded amount of work.
// A timer can drive the migration faster with RehashStep().
//
// Thread safety: none; the table is owned by a single shard/thread.
#pragma once

#include <xxhash.h>

#include <algorithm>
#include <array>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <string_view>
#include <utility>

#include "util/table_resize.h"

namespace vireo {

// 64-bit hash of a key. XXH3 is fast on the short keys typical of a keyspace.
inline uint64_t HashKey(std::string_view key) { return XXH3_64bits(key.data(), key.size()); }

// Same as HashKey but with a seed, so that a table can be keyed against hash-flooding.
// XXH3 with seed 0 is defined to equal the unseeded variant.
inline uint64_t HashKey(std::string_view key, uint64_t seed) {
  return XXH3_64bits_withSeed(key.data(), key.size(), seed);
}

namespace hash_table_internal {

// Reverses the bit order of a 64-bit word. Used by the SCAN cursor, which increments from the
// most significant bucket-index bit downward so that buckets split/merged by a resize stay
// contiguous in cursor order.
inline uint64_t ReverseBits(uint64_t v) {
  v = ((v >> 1) & 0x5555555555555555ULL) | ((v & 0x5555555555555555ULL) << 1);
  v = ((v >> 2) & 0x3333333333333333ULL) | ((v & 0x3333333333333333ULL) << 2);
  v = ((v >> 4) & 0x0F0F0F0F0F0F0F0FULL) | ((v & 0x0F0F0F0F0F0F0F0FULL) << 4);
  return __builtin_bswap64(v);
}

// Advances `cursor` to the next bucket of a table with the given mask, in reverse-binary order.
// Bits above the mask are set first so that the carry out of the top index bit propagates
// past them; when every index has been produced the cursor wraps to 0.
inline uint64_t NextCursor(uint64_t cursor, uint64_t mask) {
  cursor |= ~mask;
  cursor = ReverseBits(cursor);
  ++cursor;
  return ReverseBits(cursor);
}

// Smallest power of two >= n (n >= 1).
inline size_t RoundUpPow2(size_t n) {
  size_t p = 1;
  while (p < n) p <<= 1;
  return p;
}

// splitmix64: a cheap, well-mixed sequence so one caller-supplied random word can drive several
// independent choices in RandomNode.
inline uint64_t SplitMix64(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

}  // namespace hash_table_internal

// One bucket array's figures, as Redis's DEBUG HTSTATS reports a dict's tables.
struct HashTableStats {
  static constexpr size_t kChainBuckets = 50;  // chain lengths >= 49 share the last counter
  size_t table_size = 0;
  size_t elements = 0;
  // Only with `full` (they walk every bucket):
  size_t slots = 0;  // non-empty buckets
  size_t max_chain = 0;
  size_t total_chain = 0;
  std::array<size_t, kChainBuckets> chains{};  // buckets by chain length
};

// Node: any struct with a public `Node* next` member.
// KeyOf: functor with `std::string_view operator()(const Node&) const`.
// kShrinkOnDelete: a removal that leaves the table under kMinFillPercent starts a shrink (the
// tables of sets and hashes, as Redis's commands resize them after deleting); without it only
// TryShrink does (the keyspace, whose cron calls it, as Redis's tryResizeHashTables).
//
// Resizing follows Redis 7.2's dict, read with CurrentTableResize() (util/table_resize.h): an
// insert into a table whose load reached 1 grows it to the next power of two above the count
// (past kForceResizeRatio only, while a fork child exists); a shrink goes to the smallest power
// of two holding every node; rehash steps pause while a child exists unless one array is at
// least kForceResizeRatio times the other.
template <typename Node, typename KeyOf, bool kShrinkOnDelete = true>
class HashTable {
 public:
  // Redis's dict_force_resize_ratio.
  static constexpr size_t kForceResizeRatio = 5;
  // Redis's HASHTABLE_MIN_FILL: below this percentage of used buckets a table shrinks.
  static constexpr size_t kMinFillPercent = 10;
  // Smallest bucket array ever allocated; also the floor for shrinking.
  static constexpr size_t kMinBuckets = 4;
  // Per incremental step, how many empty buckets may be skipped per migrated non-empty one.
  // Bounds the latency of a step on a sparse old table (e.g. while shrinking).
  static constexpr size_t kEmptyVisitsPerBucket = 10;
  // Non-empty buckets a random pick migrates while a resize is pending (see RandomNode).
  static constexpr int kRandomRehashBuckets = 16;

  HashTable() = default;
  explicit HashTable(uint64_t seed) : seed_(seed) {}

  // Intrusive: nodes are owned by the caller. Call Clear(deleter) first if they must be freed.
  ~HashTable() {
    std::free(tables_[0].buckets);
    std::free(tables_[1].buckets);
  }

  HashTable(const HashTable&) = delete;
  HashTable& operator=(const HashTable&) = delete;

  HashTable(HashTable&& other) noexcept { MoveFrom(other); }
  HashTable& operator=(HashTable&& other) noexcept {
    if (this != &other) {
      std::free(tables_[0].buckets);
      std::free(tables_[1].buckets);
      MoveFrom(other);
    }
    return *this;
  }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  size_t bucket_count() const { return tables_[0].count() + tables_[1].count(); }
  bool rehashing() const { return tables_[1].buckets != nullptr; }
  uint64_t seed() const { return seed_; }
  size_t MemoryUsage() const { return bucket_count() * sizeof(Node*); }

  uint64_t Hash(std::string_view key) const { return HashKey(key, seed_); }

  // Looks up `key`. Performs one incremental rehash step first when a resize is in progress.
  Node* Find(std::string_view key) {
    StepForOperation();
    return Peek(key);
  }

  // Lookup that never modifies the table (usable from const contexts and inside callbacks).
  Node* Peek(std::string_view key) const {
    if (size_ == 0) return nullptr;
    const uint64_t h = Hash(key);
    for (int t = 0; t < 2; ++t) {
      const Table& table = tables_[t];
      if (table.buckets == nullptr) break;
      const size_t idx = h & table.mask;
      // Buckets of the old table below rehash_index_ have been migrated and are empty.
      if (t == 0 && rehashing() && idx < rehash_index_) continue;
      for (Node* n = table.buckets[idx]; n != nullptr; n = n->next) {
        if (key_of_(*n) == key) return n;
      }
    }
    return nullptr;
  }

  // Links `node` into the table. Precondition: no node with the same key is present.
  void Insert(Node* node) {
    Insert(node, [](size_t, double) { return true; });
  }
  // Same, growing the table first if it is due, and if allow_grow(bytes of the new bucket
  // array, current load factor) agrees (Redis's dictExpandAllowed: the keyspace refuses a grow
  // that would take used memory past maxmemory).
  template <typename AllowGrow>
  void Insert(Node* node, AllowGrow&& allow_grow) {
    assert(Peek(key_of_(*node)) == nullptr);
    if (tables_[0].buckets == nullptr) Allocate(tables_[0], kMinBuckets);
    StepForOperation();
    if (!rehashing() && GrowDue()) {
      const size_t target = std::max(kMinBuckets, hash_table_internal::RoundUpPow2(size_ + 1));
      const double load = static_cast<double>(size_) / static_cast<double>(tables_[0].count());
      if (allow_grow(target * sizeof(Node*), load)) StartResize(target);
    }
    // New nodes always go to the newest array so the old one only ever drains.
    Table& table = rehashing() ? tables_[1] : tables_[0];
    Node*& head = table.buckets[Hash(key_of_(*node)) & table.mask];
    node->next = head;
    head = node;
    ++size_;
  }

  // Unlinks and returns the node with `key`, or nullptr if absent.
  Node* Remove(std::string_view key) {
    if (size_ == 0) return nullptr;
    StepForOperation();
    Node** link = FindLink(key, Hash(key), nullptr);
    if (link == nullptr) return nullptr;
    Node* node = *link;
    *link = node->next;
    node->next = nullptr;
    --size_;
    if constexpr (kShrinkOnDelete) TryShrink();
    return node;
  }

  // Unlinks exactly `node` (compared by address). Returns false if it is not in the table.
  // The node's key must be unchanged since insertion: it is rehashed to find the bucket.
  bool Unlink(Node* node) {
    if (size_ == 0 || node == nullptr) return false;
    StepForOperation();
    const std::string_view key = key_of_(*node);
    Node** link = FindLink(key, Hash(key), node);
    if (link == nullptr) return false;
    *link = node->next;
    node->next = nullptr;
    --size_;
    if constexpr (kShrinkOnDelete) TryShrink();
    return true;
  }

  // Migrates up to `max_buckets` non-empty buckets (skipping at most
  // kEmptyVisitsPerBucket * max_buckets empty ones), if rehashing may proceed now. Meant for a
  // periodic timer so that an idle table still finishes its resize.
  void RehashStep(int max_buckets) {
    if (max_buckets <= 0 || !RehashAllowed()) return;
    MigrateBuckets(static_cast<size_t>(max_buckets));
  }

  // Redis's htNeedsResize + dictResize: when fewer than kMinFillPercent of the buckets are
  // used, starts a shrink to the smallest power of two (at least kMinBuckets) that holds every
  // node. Not while resizing is avoided or a resize is running. True if a shrink started.
  bool TryShrink() {
    if (CurrentTableResize() != TableResize::kEnable || rehashing()) return false;
    const size_t buckets = tables_[0].count();
    if (buckets <= kMinBuckets || size_ * 100 / buckets >= kMinFillPercent) return false;
    const size_t target = std::max(kMinBuckets, hash_table_internal::RoundUpPow2(size_));
    if (target == buckets) return false;
    StartResize(target);
    return true;
  }

  // The figures of bucket array `index` (0: the main one, 1: the rehashing target). Counting
  // the nodes of each array walks the target while rehashing; `full` walks every bucket.
  HashTableStats Stats(int index, bool full) const {
    HashTableStats stats;
    const Table& table = tables_[index];
    stats.table_size = table.count();
    if (table.buckets == nullptr) return stats;
    if (rehashing()) {
      size_t in_target = 0;
      for (size_t i = 0; i < tables_[1].count(); ++i) {
        for (Node* n = tables_[1].buckets[i]; n != nullptr; n = n->next) ++in_target;
      }
      stats.elements = index == 1 ? in_target : size_ - in_target;
    } else {
      stats.elements = index == 0 ? size_ : 0;
    }
    if (!full) return stats;
    for (size_t i = 0; i < table.count(); ++i) {
      size_t chain = 0;
      for (Node* n = table.buckets[i]; n != nullptr; n = n->next) ++chain;
      ++stats.chains[std::min(chain, HashTableStats::kChainBuckets - 1)];
      if (chain == 0) continue;
      ++stats.slots;
      stats.max_chain = std::max(stats.max_chain, chain);
      stats.total_chain += chain;
    }
    return stats;
  }

  // Cursor-based iteration with SCAN semantics: starting from cursor 0 and feeding back the
  // returned cursor until it is 0 again, every node present for the whole duration is passed
  // to fn(Node*) at least once, even if the table resizes between calls. Nodes may be reported
  // more than once. Never modifies the table; fn must not modify it either.
  //
  // The cursor is a bucket index read with its bits reversed. Growing a 2^k table to 2^(k+1)
  // splits bucket i into i and i + 2^k, which are adjacent in reversed order, so the set of
  // not-yet-visited indices maps onto a contiguous, still-unvisited range of the new table (and
  // symmetrically when shrinking, at worst re-reporting merged buckets).
  template <typename F>
  uint64_t Scan(uint64_t cursor, F&& fn) const {
    return ScanBuckets(cursor, [&fn](Node* const& head) { VisitChain(head, fn); });
  }

  // Scan's walk for moving nodes in memory (active defragmentation): fn(Node*) returns the
  // node's new address, a copy it made (`next` included) of the node it freed, or the node
  // itself; the link that pointed at it is updated. Same cursor and guarantees as Scan.
  template <typename F>
  uint64_t ScanReplace(uint64_t cursor, F&& fn) {
    return ScanBuckets(cursor, [&fn](Node* const& head) {
      for (Node** link = const_cast<Node**>(&head); *link != nullptr; link = &(*link)->next) {
        *link = fn(*link);
      }
    });
  }

  // Returns a random node, or nullptr if empty. `rand` is a caller-supplied random word.
  // Rejection sampling makes the pick fair (SRANDMEMBER/HRANDFIELD replies are checked for a
  // uniform distribution, as Redis's dictGetFairRandomKey gives): a uniform bucket and a uniform
  // slot in [0, slots) name a node when that chain has one, else try again. Every node of a
  // chain no longer than `slots` is equally likely. `slots` starts from the load factor and
  // rises to the longest chain met so far (a try that meets a longer chain is discarded), so a
  // few long chains (a shrink can gather the survivors of a mass deletion into one bucket) are
  // sampled as fairly as the rest.
  //
  // A table left sparse by mass deletion (mid-shrink) makes misses frequent, so a pick first
  // advances a pending resize by a bounded step, as Redis's random-key picks do: logically const
  // (the node set is unchanged, nodes never move in memory, and Scan's guarantee holds across
  // resizes), hence the const_cast. The try budget scales with the expected number of tries,
  // so the biased fallback below is practically never reached.
  Node* RandomNode(uint64_t rand) const {
    using hash_table_internal::SplitMix64;
    if (size_ == 0) return nullptr;
    if (rehashing()) const_cast<HashTable*>(this)->RehashStep(kRandomRehashBuckets);
    // Candidate positions: the not-yet-migrated tail of the old array, then the new array.
    const size_t old_begin = rehashing() ? rehash_index_ : 0;
    const size_t old_live = tables_[0].count() - old_begin;
    const size_t total = old_live + tables_[1].count();
    auto bucket_at = [&](size_t pos) -> Node* {
      return pos < old_live ? tables_[0].buckets[old_begin + pos]
                            : tables_[1].buckets[pos - old_live];
    };
    uint64_t state = rand;
    size_t slots = 4 + 2 * ((size_ + total - 1) / total);
    auto budget = [&] { return std::max<size_t>(256, 32 * (total * slots / size_ + 1)); };
    size_t max_tries = budget();
    size_t pos = 0;
    Node* chain = nullptr;
    for (size_t i = 0; i < max_tries; ++i) {
      pos = SplitMix64(state) % total;
      Node* n = bucket_at(pos);
      if (n == nullptr) continue;
      chain = n;
      size_t length = 0;
      for (Node* m = n; m != nullptr; m = m->next) ++length;
      if (length > slots) {
        slots = length;
        max_tries = budget();
        continue;
      }
      const size_t slot = SplitMix64(state) % slots;
      if (slot >= length) continue;
      for (size_t k = 0; k < slot; ++k) n = n->next;
      return n;
    }
    // Out of budget (astronomically unlikely): a bounded linear walk rather than probing
    // indefinitely. Biased, but always terminates since size_ > 0.
    for (size_t i = 1; chain == nullptr && i < total; ++i) chain = bucket_at((pos + i) % total);
    size_t length = 0;
    for (Node* n = chain; n != nullptr; n = n->next) ++length;
    size_t pick = SplitMix64(state) % length;
    while (pick-- > 0) chain = chain->next;
    return chain;
  }

  // Calls fn(Node*) for up to `count` nodes found in a random stretch of consecutive buckets,
  // and returns how many. Cheap at any load (it never probes the whole table), and not
  // uniform: nodes in long chains or after empty stretches are favoured, which sampling for
  // eviction tolerates (RandomNode is the fair one, and can be slow on a table left sparse by
  // mass deletion). Jumps to a new random bucket after a run of empty ones; visits at most
  // 10 * count + 10 buckets, so it may return fewer than asked, even none.
  template <typename F>
  size_t SampleNodes(uint64_t rand, size_t count, F&& fn) const {
    using hash_table_internal::SplitMix64;
    if (size_ == 0 || count == 0) return 0;
    const size_t old_begin = rehashing() ? rehash_index_ : 0;
    const size_t old_live = tables_[0].count() - old_begin;
    const size_t total = old_live + tables_[1].count();
    uint64_t state = rand;
    size_t pos = SplitMix64(state) % total;
    size_t found = 0;
    size_t empty_run = 0;
    for (size_t visits = 0; found < count && visits < 10 * count + 10; ++visits) {
      Node* n =
          pos < old_live ? tables_[0].buckets[old_begin + pos] : tables_[1].buckets[pos - old_live];
      if (n == nullptr) {
        if (++empty_run >= 5) {
          empty_run = 0;
          pos = SplitMix64(state) % total;
          continue;
        }
      } else {
        empty_run = 0;
        for (; n != nullptr && found < count; n = n->next, ++found) fn(n);
      }
      pos = pos + 1 == total ? 0 : pos + 1;
    }
    return found;
  }

  // Calls fn(Node*) for every node. The table must not be modified during the walk, except that
  // fn may destroy the node it was given (the successor is read before the call).
  template <typename F>
  void ForEach(F&& fn) const {
    for (int t = 0; t < 2; ++t) {
      const Table& table = tables_[t];
      if (table.buckets == nullptr) continue;
      const size_t begin = (t == 0 && rehashing()) ? rehash_index_ : 0;
      for (size_t i = begin; i < table.count(); ++i) VisitChain(table.buckets[i], fn);
    }
  }

  // Calls deleter(Node*) for every node, frees the bucket arrays and resets to empty.
  template <typename D>
  void Clear(D&& deleter) {
    ForEach(deleter);
    std::free(tables_[0].buckets);
    std::free(tables_[1].buckets);
    tables_[0] = Table{};
    tables_[1] = Table{};
    size_ = 0;
    rehash_index_ = 0;
  }

 private:
  struct Table {
    Node** buckets = nullptr;
    size_t mask = 0;  // bucket count - 1 when allocated
    size_t count() const { return buckets == nullptr ? 0 : mask + 1; }
  };

  static void Allocate(Table& table, size_t count) {
    // calloc: large arrays come from fresh zeroed pages, so a big resize does not pay for
    // touching every bucket up front.
    auto* buckets = static_cast<Node**>(std::calloc(count, sizeof(Node*)));
    if (buckets == nullptr) throw std::bad_alloc();
    table.buckets = buckets;
    table.mask = count - 1;
  }

  void MoveFrom(HashTable& other) {
    tables_[0] = std::exchange(other.tables_[0], Table{});
    tables_[1] = std::exchange(other.tables_[1], Table{});
    size_ = std::exchange(other.size_, 0);
    rehash_index_ = std::exchange(other.rehash_index_, 0);
    seed_ = other.seed_;
  }

  // The bucket walk of Scan: visit(head) for each bucket the cursor stands for.
  template <typename V>
  uint64_t ScanBuckets(uint64_t cursor, V&& visit) const {
    using hash_table_internal::NextCursor;
    if (tables_[0].buckets == nullptr) return 0;
    if (!rehashing()) {
      visit(tables_[0].buckets[cursor & tables_[0].mask]);
      return NextCursor(cursor, tables_[0].mask);
    }
    // Mid-resize, a node may live in either array. Visit the small array's bucket, then every
    // bucket of the large array that the small one expands to (same low bits, all values of the
    // extra high bits); the cursor advances past all of them together.
    const Table* small = &tables_[0];
    const Table* large = &tables_[1];
    if (small->mask > large->mask) std::swap(small, large);
    visit(small->buckets[cursor & small->mask]);
    const uint64_t extra_bits = small->mask ^ large->mask;
    do {
      visit(large->buckets[cursor & large->mask]);
      cursor = NextCursor(cursor, large->mask);
    } while ((cursor & extra_bits) != 0);
    return cursor;
  }

  template <typename F>
  static void VisitChain(Node* n, F& fn) {
    while (n != nullptr) {
      Node* next = n->next;
      fn(n);
      n = next;
    }
  }

  // Returns the link (bucket head or a predecessor's `next`) that points at the node with `key`
  // (and, if `exact` is non-null, at exactly that node), or nullptr.
  Node** FindLink(std::string_view key, uint64_t h, const Node* exact) {
    for (int t = 0; t < 2; ++t) {
      Table& table = tables_[t];
      if (table.buckets == nullptr) break;
      const size_t idx = h & table.mask;
      if (t == 0 && rehashing() && idx < rehash_index_) continue;
      for (Node** link = &table.buckets[idx]; *link != nullptr; link = &(*link)->next) {
        if (exact != nullptr ? *link == exact : key_of_(**link) == key) return link;
      }
    }
    return nullptr;
  }

  // The per-operation share of rehash work: one non-empty bucket. If a shrink is being swamped
  // by inserts (the small target array already holds more nodes than buckets), migrate a few
  // more per operation so the follow-up grow can start sooner; still O(1) per operation.
  void StepForOperation() {
    if (!RehashAllowed()) return;
    const size_t buckets = size_ > tables_[1].count() ? 4 : 1;
    MigrateBuckets(buckets);
  }

  // Moves up to `max_buckets` non-empty buckets of the old array into the new one, skipping at
  // most kEmptyVisitsPerBucket * max_buckets empty buckets. Finishes the resize when drained.
  void MigrateBuckets(size_t max_buckets) {
    Table& from = tables_[0];
    Table& to = tables_[1];
    size_t empty_budget = max_buckets * kEmptyVisitsPerBucket;
    const size_t end = from.count();
    while (max_buckets > 0 && rehash_index_ < end) {
      Node* n = from.buckets[rehash_index_];
      if (n == nullptr) {
        ++rehash_index_;
        if (--empty_budget == 0) break;
        continue;
      }
      while (n != nullptr) {
        Node* next = n->next;
        Node*& head = to.buckets[Hash(key_of_(*n)) & to.mask];
        n->next = head;
        head = n;
        n = next;
      }
      from.buckets[rehash_index_++] = nullptr;
      --max_buckets;
    }
    if (rehash_index_ == end) {
      std::free(from.buckets);
      from = to;
      to = Table{};
      rehash_index_ = 0;
    }
  }

  // Redis's _dictExpandIfNeeded: load 1 reached, or past kForceResizeRatio while resizing is
  // avoided; never inside a fork child.
  bool GrowDue() const {
    const size_t buckets = tables_[0].count();
    switch (CurrentTableResize()) {
      case TableResize::kEnable:
        return size_ >= buckets;
      case TableResize::kAvoid:
        return size_ / buckets > kForceResizeRatio;
      case TableResize::kForbid:
        return false;
    }
    return false;
  }

  // Redis's dictRehash gate: steps pause in a fork child, and while one exists unless one array
  // is at least kForceResizeRatio times the other (finishing such a resize is worth the copied
  // pages: a table that size is far off its load).
  bool RehashAllowed() const {
    if (!rehashing()) return false;
    switch (CurrentTableResize()) {
      case TableResize::kEnable:
        return true;
      case TableResize::kAvoid: {
        const size_t s0 = tables_[0].count();
        const size_t s1 = tables_[1].count();
        return std::max(s0, s1) / std::min(s0, s1) >= kForceResizeRatio;
      }
      case TableResize::kForbid:
        return false;
    }
    return false;
  }

  // A resize never starts while another is in progress: the old array must fully drain first.
  void StartResize(size_t target) {
    assert(!rehashing());
    Allocate(tables_[1], target);
    rehash_index_ = 0;
  }

  Table tables_[2];
  size_t size_ = 0;
  size_t rehash_index_ = 0;  // next old-array bucket to migrate (valid while rehashing)
  uint64_t seed_ = 0;
  [[no_unique_address]] KeyOf key_of_{};
};

}  // namespace vireo
