// ScoreTree: the ordered index of a large sorted set, a B+ tree over ZEntry pointers ordered by
// (score, member), with per-child element counts in the inner nodes so that rank lookups and
// selection by rank are O(log n).
//
// Why a B+ tree rather than Redis's skiplist: a skiplist node costs a score, a backward link
// and on average 1.33 (forward, span) pairs per member, in its own allocation. Here a member
// costs one 8-byte slot in a leaf of ~61 slots (kept at least a quarter full), and inner
// nodes add about 1/40 of that again.
//
// Inner nodes keep, for every child, the pointer to the child's smallest entry ("first"), so
// a search compares against entries without descending. Erase replaces any such pointer to the
// removed entry before returning, so they never dangle.
//
// The tree never allocates or frees entries: the owner (ZSet) does.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "types/zset_entry.h"

namespace vireo {

class ScoreTree {
 public:
  static constexpr int kLeafCap = 61;   // a 512-byte leaf
  static constexpr int kInnerCap = 32;  // a 776-byte inner node

  struct Node {
    uint16_t n = 0;
    bool leaf = true;
  };
  struct Leaf : Node {
    Leaf* prev = nullptr;
    Leaf* next = nullptr;
    ZEntry* items[kLeafCap];
  };
  struct Inner : Node {
    Node* child[kInnerCap];
    ZEntry* first[kInnerCap];
    uint64_t count[kInnerCap];
  };

  // A position in the tree: an entry of a leaf, or the end when leaf is null.
  struct Pos {
    Leaf* leaf = nullptr;
    int i = 0;
    bool valid() const { return leaf != nullptr; }
    ZEntry* entry() const { return leaf->items[i]; }
    void Next() {
      if (++i >= leaf->n) {
        leaf = leaf->next;
        i = 0;
      }
    }
    void Prev() {
      if (--i < 0) {
        leaf = leaf->prev;
        i = leaf == nullptr ? 0 : leaf->n - 1;
      }
    }
  };

  ScoreTree() = default;
  ~ScoreTree() { Clear(); }
  ScoreTree(const ScoreTree&) = delete;
  ScoreTree& operator=(const ScoreTree&) = delete;

  size_t size() const { return size_; }

  // Inserts an entry whose (score, member) is not in the tree yet.
  void Insert(ZEntry* e);
  // Removes the entry with this (score, member); false if there is none. Does not free it.
  bool Erase(double score, std::string_view member);
  // The 0-based rank of (score, member), which must be present.
  size_t Rank(double score, std::string_view member) const;
  // The entry at `rank`, or the end position when rank >= size().
  Pos Select(size_t rank) const;
  Pos Begin() const { return Pos{head_, 0}; }
  Pos Last() const { return tail_ == nullptr ? Pos{} : Pos{tail_, tail_->n - 1}; }

  // The rank of the first entry e for which less(e) is false, given that less is true for a
  // prefix of the order and false after it (so size() when it is true for every entry).
  template <typename Less>
  size_t LowerBound(Less less) const {
    if (root_ == nullptr) return 0;
    size_t rank = 0;
    const Node* node = root_;
    while (!node->leaf) {
      auto* in = static_cast<const Inner*>(node);
      int lo = 1, hi = in->n;  // find the last i >= 1 with less(first[i])
      while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (less(in->first[mid])) {
          lo = mid + 1;
        } else {
          hi = mid;
        }
      }
      int idx = lo - 1;
      for (int i = 0; i < idx; ++i) rank += in->count[i];
      node = in->child[idx];
    }
    auto* leaf = static_cast<const Leaf*>(node);
    int lo = 0, hi = leaf->n;
    while (lo < hi) {
      int mid = (lo + hi) / 2;
      if (less(leaf->items[mid])) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return rank + static_cast<size_t>(lo);
  }

  // Frees the nodes (not the entries).
  void Clear();
  // Bytes of the nodes (not the entries).
  size_t MemoryUsage() const;
  // Checks every structural invariant; for tests.
  bool Validate() const;

 private:
  struct PathStep {
    Inner* node;
    int idx;
  };
  static constexpr int kMaxDepth = 16;

  void InsertChild(PathStep* path, int depth, int level, Node* left, Node* right);
  void Rebalance(PathStep* path, int depth);
  void CollapseRoot();
  static ZEntry* MinOf(const Node* n);
  static uint64_t CountOf(const Node* n);
  bool ValidateNode(const Node* n, int level, uint64_t* count, const ZEntry** min,
                    const ZEntry** max) const;

  Node* root_ = nullptr;
  Leaf* head_ = nullptr;
  Leaf* tail_ = nullptr;
  int height_ = 0;  // inner levels above the leaves
  size_t size_ = 0;
  size_t leaves_ = 0;
  size_t inners_ = 0;
};

}  // namespace vireo
