#include "types/score_tree.h"

#include <malloc.h>

#include <cstring>

namespace vireo {
namespace {

int Cmp(const ZEntry* a, double score, std::string_view member) {
  return CompareScoreMember(a->score(), a->member(), score, member);
}

// In an inner node: the last child i whose first entry is <= (score, member) (child 0 when
// none is), i.e. the only child that can hold it.
int ChildFor(const ScoreTree::Inner* in, double score, std::string_view member) {
  int lo = 1, hi = in->n;
  while (lo < hi) {
    int mid = (lo + hi) / 2;
    if (Cmp(in->first[mid], score, member) <= 0) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo - 1;
}

// In a leaf: the first slot whose entry is >= (score, member).
int SlotFor(const ScoreTree::Leaf* leaf, double score, std::string_view member) {
  int lo = 0, hi = leaf->n;
  while (lo < hi) {
    int mid = (lo + hi) / 2;
    if (Cmp(leaf->items[mid], score, member) < 0) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

template <typename T>
void InsertAt(T* array, int n, int at, T value) {
  memmove(array + at + 1, array + at, sizeof(T) * static_cast<size_t>(n - at));
  array[at] = value;
}

template <typename T>
void RemoveAt(T* array, int n, int at) {
  memmove(array + at, array + at + 1, sizeof(T) * static_cast<size_t>(n - at - 1));
}

}  // namespace

ZEntry* ScoreTree::MinOf(const Node* n) {
  return n->leaf ? static_cast<const Leaf*>(n)->items[0] : static_cast<const Inner*>(n)->first[0];
}

uint64_t ScoreTree::CountOf(const Node* n) {
  if (n->leaf) return n->n;
  auto* in = static_cast<const Inner*>(n);
  uint64_t total = 0;
  for (int i = 0; i < in->n; ++i) total += in->count[i];
  return total;
}

void ScoreTree::Insert(ZEntry* e) {
  double score = e->score();
  std::string_view member = e->member();
  ++size_;
  if (root_ == nullptr) {
    auto* leaf = new Leaf;
    leaf->items[0] = e;
    leaf->n = 1;
    root_ = head_ = tail_ = leaf;
    leaves_ = 1;
    height_ = 0;
    return;
  }
  PathStep path[kMaxDepth];
  int depth = 0;
  Node* node = root_;
  while (!node->leaf) {
    auto* in = static_cast<Inner*>(node);
    int idx = ChildFor(in, score, member);
    // The new entry becomes the subtree's minimum: the separator must follow it now.
    if (idx == 0 && Cmp(in->first[0], score, member) > 0) in->first[0] = e;
    ++in->count[idx];
    path[depth++] = {in, idx};
    node = in->child[idx];
  }
  auto* leaf = static_cast<Leaf*>(node);
  int pos = SlotFor(leaf, score, member);
  if (leaf->n < kLeafCap) {
    InsertAt(leaf->items, leaf->n, pos, e);
    ++leaf->n;
    return;
  }
  // Full: split in two halves of the kLeafCap + 1 entries.
  ZEntry* all[kLeafCap + 1];
  memcpy(all, leaf->items, sizeof(ZEntry*) * pos);
  all[pos] = e;
  memcpy(all + pos + 1, leaf->items + pos, sizeof(ZEntry*) * (kLeafCap - pos));
  auto* right = new Leaf;
  ++leaves_;
  int left_n = (kLeafCap + 1) / 2;
  int right_n = kLeafCap + 1 - left_n;
  memcpy(leaf->items, all, sizeof(ZEntry*) * left_n);
  memcpy(right->items, all + left_n, sizeof(ZEntry*) * right_n);
  leaf->n = static_cast<uint16_t>(left_n);
  right->n = static_cast<uint16_t>(right_n);
  right->next = leaf->next;
  right->prev = leaf;
  if (right->next != nullptr) {
    right->next->prev = right;
  } else {
    tail_ = right;
  }
  leaf->next = right;
  InsertChild(path, depth, depth - 1, leaf, right);
}

// `right` was split off `left`, the child at path[level]; adds it to that parent (splitting
// the parent in turn when full, or growing a new root above the old one).
void ScoreTree::InsertChild(PathStep* path, int depth, int level, Node* left, Node* right) {
  uint64_t right_count = CountOf(right);
  if (level < 0) {
    auto* root = new Inner;
    ++inners_;
    root->leaf = false;
    root->n = 2;
    root->child[0] = left;
    root->first[0] = MinOf(left);
    root->count[0] = CountOf(left);
    root->child[1] = right;
    root->first[1] = MinOf(right);
    root->count[1] = right_count;
    root_ = root;
    ++height_;
    return;
  }
  Inner* parent = path[level].node;
  int idx = path[level].idx;
  parent->count[idx] -= right_count;
  if (parent->n < kInnerCap) {
    InsertAt(parent->child, parent->n, idx + 1, static_cast<Node*>(right));
    InsertAt(parent->first, parent->n, idx + 1, MinOf(right));
    InsertAt(parent->count, parent->n, idx + 1, right_count);
    ++parent->n;
    return;
  }
  Node* child[kInnerCap + 1];
  ZEntry* first[kInnerCap + 1];
  uint64_t count[kInnerCap + 1];
  memcpy(child, parent->child, sizeof(child[0]) * kInnerCap);
  memcpy(first, parent->first, sizeof(first[0]) * kInnerCap);
  memcpy(count, parent->count, sizeof(count[0]) * kInnerCap);
  InsertAt(child, kInnerCap, idx + 1, right);
  InsertAt(first, kInnerCap, idx + 1, MinOf(right));
  InsertAt(count, kInnerCap, idx + 1, right_count);
  auto* sibling = new Inner;
  ++inners_;
  sibling->leaf = false;
  int left_n = (kInnerCap + 1) / 2;
  int right_n = kInnerCap + 1 - left_n;
  memcpy(parent->child, child, sizeof(child[0]) * left_n);
  memcpy(parent->first, first, sizeof(first[0]) * left_n);
  memcpy(parent->count, count, sizeof(count[0]) * left_n);
  memcpy(sibling->child, child + left_n, sizeof(child[0]) * right_n);
  memcpy(sibling->first, first + left_n, sizeof(first[0]) * right_n);
  memcpy(sibling->count, count + left_n, sizeof(count[0]) * right_n);
  parent->n = static_cast<uint16_t>(left_n);
  sibling->n = static_cast<uint16_t>(right_n);
  InsertChild(path, depth, level - 1, parent, sibling);
}

bool ScoreTree::Erase(double score, std::string_view member) {
  if (root_ == nullptr) return false;
  PathStep path[kMaxDepth];
  int depth = 0;
  Node* node = root_;
  while (!node->leaf) {
    auto* in = static_cast<Inner*>(node);
    int idx = ChildFor(in, score, member);
    path[depth++] = {in, idx};
    node = in->child[idx];
  }
  auto* leaf = static_cast<Leaf*>(node);
  int pos = SlotFor(leaf, score, member);
  if (pos == leaf->n || Cmp(leaf->items[pos], score, member) != 0) return false;
  ZEntry* e = leaf->items[pos];
  ZEntry* successor = pos + 1 < leaf->n       ? leaf->items[pos + 1]
                      : leaf->next != nullptr ? leaf->next->items[0]
                                              : nullptr;
  RemoveAt(leaf->items, leaf->n, pos);
  --leaf->n;
  --size_;
  for (int level = 0; level < depth; ++level) {
    Inner* in = path[level].node;
    int idx = path[level].idx;
    --in->count[idx];
    // The removed entry was this subtree's minimum; its successor is the new one (or, if the
    // subtree is now empty, the next subtree's, and the empty one is merged away below).
    if (in->first[idx] == e) in->first[idx] = successor;
  }
  Rebalance(path, depth);
  return true;
}

void ScoreTree::Rebalance(PathStep* path, int depth) {
  for (int level = depth - 1; level >= 0; --level) {
    Inner* parent = path[level].node;
    int idx = path[level].idx;
    Node* x = parent->child[idx];
    int cap = x->leaf ? kLeafCap : kInnerCap;
    if (x->n >= cap / 4 || parent->n == 1) break;
    int li = idx > 0 ? idx - 1 : idx;
    int ri = li + 1;
    Node* l = parent->child[li];
    Node* r = parent->child[ri];
    if (l->n + r->n <= cap) {
      // Merge r into l and drop r from the parent.
      if (l->leaf) {
        auto* ll = static_cast<Leaf*>(l);
        auto* rl = static_cast<Leaf*>(r);
        memcpy(ll->items + ll->n, rl->items, sizeof(ZEntry*) * rl->n);
        ll->next = rl->next;
        if (rl->next != nullptr) {
          rl->next->prev = ll;
        } else {
          tail_ = ll;
        }
        if (head_ == rl) head_ = ll;
        ll->n = static_cast<uint16_t>(ll->n + rl->n);
        delete rl;
        --leaves_;
      } else {
        auto* li_node = static_cast<Inner*>(l);
        auto* ri_node = static_cast<Inner*>(r);
        memcpy(li_node->child + li_node->n, ri_node->child, sizeof(Node*) * ri_node->n);
        memcpy(li_node->first + li_node->n, ri_node->first, sizeof(ZEntry*) * ri_node->n);
        memcpy(li_node->count + li_node->n, ri_node->count, sizeof(uint64_t) * ri_node->n);
        li_node->n = static_cast<uint16_t>(li_node->n + ri_node->n);
        delete ri_node;
        --inners_;
      }
      parent->count[li] += parent->count[ri];
      parent->first[li] = MinOf(l);
      RemoveAt(parent->child, parent->n, ri);
      RemoveAt(parent->first, parent->n, ri);
      RemoveAt(parent->count, parent->n, ri);
      --parent->n;
      continue;  // the parent lost a child: it may underflow in turn
    }
    // Too many for one node: even the two out instead.
    int target = (l->n + r->n) / 2;
    if (l->leaf) {
      auto* ll = static_cast<Leaf*>(l);
      auto* rl = static_cast<Leaf*>(r);
      if (ll->n < target) {
        int k = target - ll->n;
        memcpy(ll->items + ll->n, rl->items, sizeof(ZEntry*) * k);
        memmove(rl->items, rl->items + k, sizeof(ZEntry*) * (rl->n - k));
        ll->n = static_cast<uint16_t>(ll->n + k);
        rl->n = static_cast<uint16_t>(rl->n - k);
      } else {
        int k = ll->n - target;
        memmove(rl->items + k, rl->items, sizeof(ZEntry*) * rl->n);
        memcpy(rl->items, ll->items + ll->n - k, sizeof(ZEntry*) * k);
        ll->n = static_cast<uint16_t>(ll->n - k);
        rl->n = static_cast<uint16_t>(rl->n + k);
      }
      parent->count[li] = ll->n;
      parent->count[ri] = rl->n;
    } else {
      auto* a = static_cast<Inner*>(l);
      auto* b = static_cast<Inner*>(r);
      if (a->n < target) {
        int k = target - a->n;
        memcpy(a->child + a->n, b->child, sizeof(Node*) * k);
        memcpy(a->first + a->n, b->first, sizeof(ZEntry*) * k);
        memcpy(a->count + a->n, b->count, sizeof(uint64_t) * k);
        memmove(b->child, b->child + k, sizeof(Node*) * (b->n - k));
        memmove(b->first, b->first + k, sizeof(ZEntry*) * (b->n - k));
        memmove(b->count, b->count + k, sizeof(uint64_t) * (b->n - k));
        a->n = static_cast<uint16_t>(a->n + k);
        b->n = static_cast<uint16_t>(b->n - k);
      } else {
        int k = a->n - target;
        memmove(b->child + k, b->child, sizeof(Node*) * b->n);
        memmove(b->first + k, b->first, sizeof(ZEntry*) * b->n);
        memmove(b->count + k, b->count, sizeof(uint64_t) * b->n);
        memcpy(b->child, a->child + a->n - k, sizeof(Node*) * k);
        memcpy(b->first, a->first + a->n - k, sizeof(ZEntry*) * k);
        memcpy(b->count, a->count + a->n - k, sizeof(uint64_t) * k);
        a->n = static_cast<uint16_t>(a->n - k);
        b->n = static_cast<uint16_t>(b->n + k);
      }
      parent->count[li] = CountOf(a);
      parent->count[ri] = CountOf(b);
    }
    parent->first[ri] = MinOf(r);
    break;
  }
  CollapseRoot();
}

void ScoreTree::CollapseRoot() {
  while (root_ != nullptr && !root_->leaf && root_->n == 1) {
    auto* old = static_cast<Inner*>(root_);
    root_ = old->child[0];
    delete old;
    --inners_;
    --height_;
  }
  if (root_ != nullptr && root_->leaf && root_->n == 0) {
    delete static_cast<Leaf*>(root_);
    root_ = head_ = tail_ = nullptr;
    leaves_ = 0;
    height_ = 0;
  }
}

size_t ScoreTree::Rank(double score, std::string_view member) const {
  size_t rank = 0;
  const Node* node = root_;
  while (!node->leaf) {
    auto* in = static_cast<const Inner*>(node);
    int idx = ChildFor(in, score, member);
    for (int i = 0; i < idx; ++i) rank += in->count[i];
    node = in->child[idx];
  }
  return rank + static_cast<size_t>(SlotFor(static_cast<const Leaf*>(node), score, member));
}

ScoreTree::Pos ScoreTree::Select(size_t rank) const {
  if (rank >= size_) return Pos{};
  const Node* node = root_;
  while (!node->leaf) {
    auto* in = static_cast<const Inner*>(node);
    int i = 0;
    while (rank >= in->count[i]) rank -= in->count[i++];
    node = in->child[i];
  }
  return Pos{const_cast<Leaf*>(static_cast<const Leaf*>(node)), static_cast<int>(rank)};
}

void ScoreTree::Clear() {
  if (root_ == nullptr) return;
  // Free level by level: the leaves through their links, inner nodes recursively.
  struct Freer {
    static void Free(Node* n) {
      if (n->leaf) return;
      auto* in = static_cast<Inner*>(n);
      for (int i = 0; i < in->n; ++i) Free(in->child[i]);
      delete in;
    }
  };
  Freer::Free(root_);
  for (Leaf* l = head_; l != nullptr;) {
    Leaf* next = l->next;
    delete l;
    l = next;
  }
  root_ = head_ = tail_ = nullptr;
  size_ = leaves_ = inners_ = 0;
  height_ = 0;
}

size_t ScoreTree::MemoryUsage() const {
  // Each node is one malloc chunk: its size plus glibc's 8-byte header, rounded to 16.
  auto chunk = [](size_t n) { return (n + 8 + 15) & ~size_t{15}; };
  return leaves_ * chunk(sizeof(Leaf)) + inners_ * chunk(sizeof(Inner));
}

bool ScoreTree::ValidateNode(const Node* n, int level, uint64_t* count, const ZEntry** min,
                             const ZEntry** max) const {
  if (n->leaf) {
    if (level != 0 || n->n == 0) return false;
    auto* leaf = static_cast<const Leaf*>(n);
    for (int i = 1; i < leaf->n; ++i) {
      const ZEntry* a = leaf->items[i - 1];
      if (Cmp(a, leaf->items[i]->score(), leaf->items[i]->member()) >= 0) return false;
    }
    *count = leaf->n;
    *min = leaf->items[0];
    *max = leaf->items[leaf->n - 1];
    return true;
  }
  auto* in = static_cast<const Inner*>(n);
  if (in->n == 0) return false;
  *count = 0;
  const ZEntry* prev_max = nullptr;
  for (int i = 0; i < in->n; ++i) {
    uint64_t c;
    const ZEntry *lo, *hi;
    if (!ValidateNode(in->child[i], level - 1, &c, &lo, &hi)) return false;
    if (c != in->count[i] || lo != in->first[i]) return false;
    if (prev_max != nullptr && Cmp(prev_max, lo->score(), lo->member()) >= 0) return false;
    if (i == 0) *min = lo;
    prev_max = hi;
    *count += c;
  }
  *max = prev_max;
  return true;
}

bool ScoreTree::Validate() const {
  if (root_ == nullptr) return size_ == 0 && head_ == nullptr && tail_ == nullptr;
  uint64_t count;
  const ZEntry *lo, *hi;
  if (!ValidateNode(root_, height_, &count, &lo, &hi) || count != size_) return false;
  // The leaf chain visits every entry in order.
  size_t seen = 0;
  const Leaf* prev = nullptr;
  for (const Leaf* l = head_; l != nullptr; l = l->next) {
    if (l->prev != prev) return false;
    seen += l->n;
    prev = l;
  }
  return prev == tail_ && seen == size_;
}

}  // namespace vireo
