#include "types/packed_list.h"

#include <malloc.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <limits>
#include <new>

#include "util/strings.h"

namespace vireo {

namespace packed_list_internal {
namespace {

// Redis's quicklist constants (quicklist.c), mirrored so node boundaries match.
constexpr size_t kSizeSafetyLimit = 8192;    // max node bytes under a count limit
constexpr size_t kSizeEstimateOverhead = 8;  // per-insert overestimate of entry overhead
constexpr size_t kNegFillLimits[] = {4096, 8192, 16384, 32768, 65536};

// Node byte limit of a negative fill; fills below -5 act as -5.
size_t NegFillLimit(int fill) { return kNegFillLimits[fill <= -5 ? 4 : -fill - 1]; }

// Smallest n such that v fits n-byte two's complement.
size_t IntBytes(int64_t v) {
  size_t n = 1;
  while (n < 8 && (v < -(int64_t{1} << (8 * n - 1)) || v >= (int64_t{1} << (8 * n - 1)))) ++n;
  return n;
}

// Bytes Redis's listpack spends on an element: encoding + payload + back-length.
size_t LpEntryBytes(bool is_int, int64_t v, size_t len) {
  size_t enc;
  if (is_int) {
    if (v >= 0 && v <= 127)
      enc = 1;
    else if (v >= -4096 && v <= 4095)
      enc = 2;
    else if (v >= INT16_MIN && v <= INT16_MAX)
      enc = 3;
    else if (v >= -(1 << 23) && v < (1 << 23))
      enc = 4;
    else if (v >= INT32_MIN && v <= INT32_MAX)
      enc = 5;
    else
      enc = 9;
  } else {
    enc = len + (len < 64 ? 1 : len < 4096 ? 2 : 5);
  }
  size_t back = enc <= 127 ? 1 : enc < 16383 ? 2 : enc < 2097151 ? 3 : enc < 268435455 ? 4 : 5;
  return enc + back;
}

size_t EntryLpBytes(const uint8_t* p) {
  if (EntryIsInt(p)) return LpEntryBytes(true, EntryInt(p), 0);
  return LpEntryBytes(false, 0, EntryString(p).size());
}

}  // namespace

// Entry offsets of one node, with amortised O(1) push and pop at both ends: the live offsets
// are v[begin..], and the slots before begin are room for pushes at the front.
struct OffsetDeque {
  std::vector<uint32_t> v;
  size_t begin = 0;

  size_t size() const { return v.size() - begin; }
  uint32_t operator[](size_t i) const { return v[begin + i]; }
  uint32_t back() const { return v.back(); }
  void push_back(uint32_t off) { v.push_back(off); }
  void pop_back() { v.pop_back(); }
  void push_front(uint32_t off) {
    if (begin == 0) {
      size_t room = v.size() + 4;
      v.insert(v.begin(), room, 0);
      begin = room;
    }
    v[--begin] = off;
  }
  void pop_front() {
    if (++begin > 16 && begin * 2 > v.size()) {
      v.erase(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(begin));
      begin = 0;
    }
  }
  void Shift(uint32_t from, uint32_t to) {
    for (size_t i = begin; i < v.size(); ++i) v[i] = v[i] - from + to;
  }
};

constexpr size_t kLpEmptyBytes = 7;  // listpack header (6) + terminator (1)

struct Elem {
  std::string_view str;
  int64_t num = 0;
  bool is_int;

  // ParseInt64 has string2ll's grammar, which is also what a listpack stores as an integer.
  explicit Elem(std::string_view s) : str(s), is_int(ParseInt64(s, &num)) {}

  size_t EncodedSize() const {
    if (is_int) return num >= 0 && num < 0x30 ? 1 : 1 + IntBytes(num);
    size_t n = str.size();
    return n + (n < 0x80 ? 1 : n < 0x4000 ? 2 : 5);
  }
  size_t LpBytes() const { return LpEntryBytes(is_int, num, str.size()); }
  void Encode(uint8_t* p) const {
    if (is_int) {
      if (num >= 0 && num < 0x30) {
        p[0] = static_cast<uint8_t>(kTagSmallInt + num);
        return;
      }
      size_t n = IntBytes(num);
      p[0] = static_cast<uint8_t>(kTagStr32 + n);
      memcpy(p + 1, &num, n);  // little-endian low bytes
      return;
    }
    size_t n = str.size();
    if (n < 0x80) {
      *p++ = static_cast<uint8_t>(n);
    } else if (n < 0x4000) {
      *p++ = static_cast<uint8_t>(kTagStr14 | (n >> 8));
      *p++ = static_cast<uint8_t>(n);
    } else {
      *p++ = kTagStr32;
      uint32_t len = static_cast<uint32_t>(n);
      memcpy(p, &len, 4);
      p += 4;
    }
    if (n > 0) memcpy(p, str.data(), n);  // an empty string may have no data pointer
  }
  bool Matches(const uint8_t* p) const {
    if (EntryIsInt(p)) return is_int && EntryInt(p) == num;
    // A canonical integer string is always stored as an integer, never as a string.
    return !is_int && EntryString(p) == str;
  }
};

std::string_view EntryView(const uint8_t* p, char* buf) {
  if (!EntryIsInt(p)) return EntryString(p);
  auto res = std::to_chars(buf, buf + kIntBufSize, EntryInt(p));
  return {buf, static_cast<size_t>(res.ptr - buf)};
}

}  // namespace packed_list_internal

namespace pl = packed_list_internal;
using pl::EntrySize;
using pl::kLpEmptyBytes;

namespace {

void AssignEntry(const uint8_t* p, std::string* out) {
  char buf[pl::kIntBufSize];
  std::string_view v = pl::EntryView(p, buf);
  out->assign(v.data(), v.size());
}

}  // namespace

PackedList::PackedList(int max_listpack_size, int compress_depth)
    : fill_(max_listpack_size), compress_depth_(compress_depth) {}

PackedList::~PackedList() {
  for (Node* n = head_; n != nullptr;) {
    Node* next = n->next;
    free(n);
    n = next;
  }
}

// ---- Node memory --------------------------------------------------------------------------

uint64_t PackedList::Defrag(allocator::DefragCounters& counters, uint64_t cursor, size_t budget) {
  // Where the last call stopped, if that node still exists (the list forgets it when it frees
  // the node, and follows it when a realloc moves it); else found again by its number, which a
  // write in between may have shifted (a node done twice or skipped: harmless).
  Node* n = cursor != 0 ? defrag_next_ : head_;
  if (cursor != 0 && n == nullptr) {
    n = head_;
    for (uint64_t i = 0; i < cursor && n != nullptr; ++i) n = n->next;
  }
  for (size_t done = 0; n != nullptr && done < budget; ++done, ++cursor) {
    // A node is a plain block (entries are offsets into it): moved bytewise, neighbours
    // relinked.
    if (Node* m = allocator::Defrag(n, counters)) {
      (m->prev != nullptr ? m->prev->next : head_) = m;
      (m->next != nullptr ? m->next->prev : tail_) = m;
      n = m;
    }
    n = n->next;
  }
  defrag_next_ = n;
  return n == nullptr ? 0 : cursor;
}

PackedList::Node* PackedList::NewNode(size_t payload) {
  void* mem = malloc(sizeof(Node) + payload);
  if (mem == nullptr) throw std::bad_alloc();
  size_t usable = malloc_usable_size(mem);
  bytes_ += usable;
  auto cap = static_cast<uint32_t>(usable - sizeof(Node));
  return new (mem) Node{nullptr, nullptr, 0, 0, cap, static_cast<uint32_t>(kLpEmptyBytes), 0};
}

void PackedList::FreeNode(Node* n) {
  if (n == defrag_next_) defrag_next_ = nullptr;
  bytes_ -= malloc_usable_size(n);
  free(n);
}

PackedList::Node* PackedList::Relayout(Node* n, size_t front, size_t back) {
  uint32_t old_front = n->front;
  // Entries move towards the start before a shrinking realloc and after a growing one, so
  // that realloc never cuts them off.
  if (front < old_front) memmove(n->base() + front, n->data(), n->used);
  size_t old_usable = malloc_usable_size(n);
  Node* m = static_cast<Node*>(realloc(n, sizeof(Node) + front + n->used + back));
  if (m == nullptr) throw std::bad_alloc();
  if (n == defrag_next_) defrag_next_ = m;
  size_t usable = malloc_usable_size(m);
  bytes_ = bytes_ - old_usable + usable;
  m->cap = static_cast<uint32_t>(usable - sizeof(Node));
  if (front > old_front) memmove(m->base() + front, m->base() + old_front, m->used);
  m->front = static_cast<uint32_t>(front);
  if (m != n) {
    (m->prev != nullptr ? m->prev->next : head_) = m;
    (m->next != nullptr ? m->next->prev : tail_) = m;
  }
  if (m == tail_ && tail_index_ != nullptr) tail_index_->Shift(old_front, m->front);
  return m;
}

// Room grows by a quarter (at most 4 KB) beyond the need, so a run of pushes reallocates a
// node O(log) times; a node is trimmed to fit once it stops being an end node.
PackedList::Node* PackedList::Reserve(Node* n, size_t extra) {
  if (n->cap - n->front - n->used >= extra) return n;
  return Relayout(n, 0, extra + std::min<size_t>(n->used / 4, 4096));
}

PackedList::Node* PackedList::ReserveFront(Node* n, size_t extra) {
  if (n->front >= extra) return n;
  return Relayout(n, extra + std::min<size_t>(n->used / 4, 4096), 0);
}

PackedList::Node* PackedList::ShrinkIfSparse(Node* n) {
  if (n->cap > 2 * static_cast<size_t>(n->used) + 64) return Relayout(n, 0, n->used / 8);
  return n;
}

// Inserts n after (or before) pos; pos == nullptr only for an empty list.
void PackedList::Link(Node* pos, Node* n, bool after) {
  ++node_count_;
  if (pos == nullptr) {
    head_ = tail_ = n;
    return;
  }
  if (after) {
    n->prev = pos;
    n->next = pos->next;
    (pos->next != nullptr ? pos->next->prev : tail_) = n;
    pos->next = n;
  } else {
    n->next = pos;
    n->prev = pos->prev;
    (pos->prev != nullptr ? pos->prev->next : head_) = n;
    pos->prev = n;
  }
}

void PackedList::UnlinkAndFree(Node* n) {
  if (n == tail_) InvalidateTailIndex();
  (n->prev != nullptr ? n->prev->next : head_) = n->next;
  (n->next != nullptr ? n->next->prev : tail_) = n->prev;
  --node_count_;
  FreeNode(n);
}

PackedList::Node* PackedList::InsertAt(Node* n, uint32_t off, const Elem& e) {
  size_t sz = e.EncodedSize();
  n = Reserve(n, sz);
  uint8_t* d = n->data();
  memmove(d + off + sz, d + off, n->used - off);
  e.Encode(d + off);
  n->used += static_cast<uint32_t>(sz);
  n->count++;
  n->lp += static_cast<uint32_t>(e.LpBytes());
  return n;
}

// Removes the bytes [from, to) holding `entries` entries; returns their listpack bytes.
size_t PackedList::EraseAt(Node* n, uint32_t from, uint32_t to, uint32_t entries) {
  uint8_t* d = n->data();
  size_t lp = 0;
  for (uint32_t off = from; off < to; off += static_cast<uint32_t>(EntrySize(d + off))) {
    lp += pl::EntryLpBytes(d + off);
  }
  if (from == 0) {
    n->front += to;  // a cut at the start just grows the front room
  } else {
    memmove(d + from, d + to, n->used - to);
  }
  n->used -= to - from;
  n->count -= entries;
  n->lp -= static_cast<uint32_t>(lp);
  return lp;
}

// ---- Positions ----------------------------------------------------------------------------

const PackedList::Node* PackedList::Seek(int64_t index, uint32_t* at) const {
  const Node* n;
  if (index < static_cast<int64_t>(size_ / 2)) {
    for (n = head_; index >= n->count; n = n->next) index -= n->count;
  } else {
    int64_t back = static_cast<int64_t>(size_) - 1 - index;
    for (n = tail_; back >= n->count; n = n->prev) back -= n->count;
    index = n->count - 1 - back;
  }
  *at = static_cast<uint32_t>(index);
  return n;
}

uint32_t PackedList::OffsetOf(const Node* n, uint32_t k) const {
  if (k == n->count) return n->used;
  if (n == tail_ && tail_index_ != nullptr) return (*tail_index_)[k] - n->front;
  const uint8_t* d = n->data();
  uint32_t off = 0;
  for (uint32_t i = 0; i < k; ++i) off += static_cast<uint32_t>(EntrySize(d + off));
  return off;
}

void PackedList::EntryOffsets(const Node* n, uint32_t k, std::vector<uint32_t>* out) const {
  out->resize(k);
  const uint8_t* d = n->data();
  uint32_t off = 0;
  for (uint32_t i = 0; i < k; ++i) {
    (*out)[i] = off;
    off += static_cast<uint32_t>(EntrySize(d + off));
  }
}

void PackedList::BuildTailIndex() {
  tail_index_ = std::make_unique<pl::OffsetDeque>();
  EntryOffsets(tail_, tail_->count, &tail_index_->v);
  tail_index_->Shift(0, tail_->front);
}

void PackedList::InvalidateTailIndex() { tail_index_.reset(); }

// ---- Redis's limits and encoding conversions ----------------------------------------------

// quicklistNodeExceedsLimit: negative fill limits bytes; a count limit also caps bytes at 8 KB.
bool PackedList::ExceedsLimit(size_t lp_bytes, size_t count) const {
  if (fill_ < 0) return lp_bytes > pl::NegFillLimit(fill_);
  if (lp_bytes > pl::kSizeSafetyLimit) return true;
  return count > static_cast<size_t>(fill_ == 0 ? 1 : fill_);
}

// _quicklistNodeAllowInsert: len is the element's string length.
bool PackedList::AllowInsert(const Node* n, size_t len) const {
  return n != nullptr && !ExceedsLimit(n->lp + len + pl::kSizeEstimateOverhead, n->count + 1);
}

// _quicklistNodeAllowMerge: the merged listpack saves one header and terminator.
bool PackedList::AllowMerge(const Node* a, const Node* b) const {
  return a != nullptr && b != nullptr &&
         !ExceedsLimit(a->lp + b->lp - kLpEmptyBytes, a->count + b->count);
}

// listTypeTryConvertListpack: only the added strings' lengths are counted, not their overhead.
void PackedList::GrowCheck(size_t add_bytes, size_t add_count) {
  if (!listpack_) return;
  size_t lp = head_ != nullptr ? head_->lp : kLpEmptyBytes;
  if (ExceedsLimit(lp + add_bytes, size_ + add_count)) listpack_ = false;
}

// listTypeTryConvertQuicklist: one node within the limits (half of them after a removal, so
// that a list at the threshold does not flip on every push and pop).
void PackedList::TryConvertToListpack(bool shrinking) {
  if (listpack_ || node_count_ != 1) return;
  size_t size_limit = std::numeric_limits<size_t>::max();
  size_t count_limit = std::numeric_limits<unsigned>::max();
  if (fill_ < 0) {
    size_limit = pl::NegFillLimit(fill_);
  } else {
    count_limit = fill_ == 0 ? 1 : fill_;
  }
  if (shrinking) {
    size_limit /= 2;
    count_limit /= 2;
  }
  if (head_->lp > size_limit || size_ > count_limit) return;
  listpack_ = true;
}

void PackedList::ConvertAuto() {
  if (listpack_) {
    GrowCheck(0, 0);
  } else {
    TryConvertToListpack(false);
  }
}

const char* PackedList::EncodingName() const { return listpack_ ? "listpack" : "quicklist"; }

size_t PackedList::ListpackBytes() const {
  size_t total = 0;
  for (const Node* n = head_; n != nullptr; n = n->next) total += n->lp;
  return total;
}

// ---- Push and pop -------------------------------------------------------------------------

void PackedList::PushFront(std::string_view v) {
  GrowCheck(v.size(), 1);
  PushFrontElem(Elem(v));
}

void PackedList::PushBack(std::string_view v) {
  GrowCheck(v.size(), 1);
  PushBackElem(Elem(v));
}

void PackedList::PushFrontMany(std::span<const std::string_view> values) { PushMany(values, true); }

void PackedList::PushBackMany(std::span<const std::string_view> values) { PushMany(values, false); }

void PackedList::PushMany(std::span<const std::string_view> values, bool front) {
  size_t bytes = 0;
  for (std::string_view v : values) bytes += v.size();
  GrowCheck(bytes, values.size());
  for (std::string_view v : values) front ? PushFrontElem(Elem(v)) : PushBackElem(Elem(v));
}

// A listpack-encoded list is one node that grows without limit; a quicklist starts a new end
// node when the current one is full (quicklistPushHead/Tail).
void PackedList::PushFrontElem(const Elem& e) {
  size_t sz = e.EncodedSize();
  Node* n = head_;
  if (n == nullptr || (!listpack_ && !AllowInsert(n, e.str.size()))) {
    if (n != nullptr) Relayout(n, 0, 0);  // no longer an end node: trim the slack
    n = NewNode(sz);
    Link(head_, n, false);
  }
  n = ReserveFront(n, sz);
  n->front -= static_cast<uint32_t>(sz);
  e.Encode(n->data());
  n->used += static_cast<uint32_t>(sz);
  n->count++;
  n->lp += static_cast<uint32_t>(e.LpBytes());
  if (n == tail_ && tail_index_ != nullptr) tail_index_->push_front(n->front);
  ++size_;
}

void PackedList::PushBackElem(const Elem& e) {
  Node* n = tail_;
  if (n == nullptr || (!listpack_ && !AllowInsert(n, e.str.size()))) {
    if (n != nullptr) Relayout(n, 0, 0);
    n = NewNode(e.EncodedSize());
    Link(tail_, n, true);
    InvalidateTailIndex();
  }
  uint32_t off = n->used;
  n = InsertAt(n, off, e);
  if (tail_index_ != nullptr) tail_index_->push_back(n->front + off);
  ++size_;
}

bool PackedList::PopFront(std::string* out, bool convert) {
  if (size_ == 0) return false;
  Node* n = head_;
  AssignEntry(n->data(), out);
  if (n->count == 1) {
    UnlinkAndFree(n);
  } else {
    EraseAt(n, 0, static_cast<uint32_t>(EntrySize(n->data())), 1);
    if (n == tail_ && tail_index_ != nullptr) tail_index_->pop_front();
    ShrinkIfSparse(n);
  }
  if (--size_ > 0 && convert) TryConvertToListpack(true);
  return true;
}

bool PackedList::PopBack(std::string* out, bool convert) {
  if (size_ == 0) return false;
  Node* n = tail_;
  if (n->count == 1) {
    AssignEntry(n->data(), out);
    UnlinkAndFree(n);
  } else {
    if (tail_index_ == nullptr) BuildTailIndex();
    uint32_t off = tail_index_->back() - n->front;
    tail_index_->pop_back();
    AssignEntry(n->data() + off, out);
    EraseAt(n, off, n->used, 1);
    ShrinkIfSparse(n);
  }
  if (--size_ > 0 && convert) TryConvertToListpack(true);
  return true;
}

// ---- Index access -------------------------------------------------------------------------

bool PackedList::Get(int64_t index, std::string* out) const {
  if (index < 0) index += static_cast<int64_t>(size_);
  if (index < 0 || index >= static_cast<int64_t>(size_)) return false;
  uint32_t at;
  const Node* n = Seek(index, &at);
  AssignEntry(n->data() + OffsetOf(n, at), out);
  return true;
}

// lsetCommand: growing check first (even when out of range), replace in place (quicklist
// nodes may exceed the limit this way, as in Redis), then the shrinking check.
bool PackedList::Set(int64_t index, std::string_view v) {
  GrowCheck(v.size(), 1);
  if (index < 0) index += static_cast<int64_t>(size_);
  if (index < 0 || index >= static_cast<int64_t>(size_)) return false;
  InvalidateTailIndex();
  Elem e(v);
  uint32_t at;
  Node* n = Seek(index, &at);
  uint32_t off = OffsetOf(n, at);
  size_t old_size = EntrySize(n->data() + off);
  size_t new_size = e.EncodedSize();
  n->lp -= static_cast<uint32_t>(pl::EntryLpBytes(n->data() + off));
  if (new_size > old_size) n = Reserve(n, new_size - old_size);
  uint8_t* d = n->data();
  memmove(d + off + new_size, d + off + old_size, n->used - off - old_size);
  e.Encode(d + off);
  n->used = static_cast<uint32_t>(n->used + new_size - old_size);
  n->lp += static_cast<uint32_t>(e.LpBytes());
  ShrinkIfSparse(n);
  TryConvertToListpack(true);
  return true;
}

// ---- LINSERT ------------------------------------------------------------------------------

int64_t PackedList::Insert(std::string_view pivot, std::string_view v, bool after) {
  // Redis converts before searching, so a missing pivot can still change the encoding.
  GrowCheck(v.size(), 1);
  Elem target(pivot);
  for (Node* n = head_; n != nullptr; n = n->next) {
    const uint8_t* d = n->data();
    uint32_t off = 0;
    for (uint32_t at = 0; at < n->count; ++at, off += static_cast<uint32_t>(EntrySize(d + off))) {
      if (!target.Matches(d + off)) continue;
      InvalidateTailIndex();
      Elem e(v);
      uint32_t pos = after ? off + static_cast<uint32_t>(EntrySize(d + off)) : off;
      if (listpack_) {
        InsertAt(n, pos, e);
      } else {
        InsertQuicklist(n, at, pos, e, after);
      }
      return static_cast<int64_t>(++size_);
    }
  }
  return -1;
}

// _quicklistInsert: into the pivot's node if it has room; else into the neighbour when the
// pivot is at the node's edge; else a new node at that edge; else split the node and merge
// around it.
void PackedList::InsertQuicklist(Node* n, uint32_t at, uint32_t off, const Elem& e, bool after) {
  size_t len = e.str.size();
  bool at_tail = after && at == n->count - 1;
  bool at_head = !after && at == 0;
  if (AllowInsert(n, len)) {
    InsertAt(n, off, e);
  } else if (at_tail && AllowInsert(n->next, len)) {
    InsertAt(n->next, 0, e);
  } else if (at_head && AllowInsert(n->prev, len)) {
    InsertAt(n->prev, n->prev->used, e);
  } else if (at_tail || at_head) {
    Node* fresh = NewNode(e.EncodedSize());
    Link(n, fresh, after);
    InsertAt(fresh, 0, e);
  } else {
    Node* part = Split(&n, at, after);
    InsertAt(part, after ? 0 : part->used, e);
    MergeAround(n);
  }
}

// _quicklistSplitNode: with `after`, a new node after *n takes the entries past `at`;
// otherwise a new node before *n takes the entries before `at`. *n may move.
PackedList::Node* PackedList::Split(Node** np, uint32_t at, bool after) {
  Node* n = *np;
  uint32_t k = after ? at + 1 : at;  // entries [0, k) | [k, count)
  uint32_t cut = OffsetOf(n, k);
  uint32_t from = after ? cut : 0;
  uint32_t to = after ? n->used : cut;
  uint32_t moved = after ? n->count - k : k;
  Node* part = NewNode(to - from);
  memcpy(part->data(), n->data() + from, to - from);
  part->used = to - from;
  part->count = moved;
  part->lp = static_cast<uint32_t>(kLpEmptyBytes + EraseAt(n, from, to, moved));
  Link(n, part, after);
  *np = Relayout(n, 0, 0);
  return part;
}

// Appends b's entries to a (a is just before b); returns the merged node.
PackedList::Node* PackedList::Merge(Node* a, Node* b) {
  if (a->cap - a->front - a->used < b->used) a = Relayout(a, 0, b->used);
  memcpy(a->data() + a->used, b->data(), b->used);
  a->used += b->used;
  a->count += b->count;
  a->lp += b->lp - static_cast<uint32_t>(kLpEmptyBytes);
  UnlinkAndFree(b);
  return a;
}

// _quicklistMergeNodes: the two nodes before center, the two after it, then center with each
// neighbour.
void PackedList::MergeAround(Node* center) {
  Node* prev = center->prev;
  Node* prev_prev = prev != nullptr ? prev->prev : nullptr;
  Node* next = center->next;
  Node* next_next = next != nullptr ? next->next : nullptr;
  if (AllowMerge(prev, prev_prev)) Merge(prev_prev, prev);
  if (AllowMerge(next, next_next)) Merge(next, next_next);
  Node* target = center;
  if (AllowMerge(center, center->prev)) target = Merge(center->prev, center);
  if (AllowMerge(target, target->next)) Merge(target, target->next);
}

// ---- LREM, LTRIM, LPOS --------------------------------------------------------------------

int64_t PackedList::Remove(std::string_view v, int64_t count) {
  Elem target(v);
  InvalidateTailIndex();
  bool from_tail = count < 0;
  uint64_t quota = count == 0  ? std::numeric_limits<uint64_t>::max()
                   : from_tail ? 0 - static_cast<uint64_t>(count)
                               : static_cast<uint64_t>(count);
  uint64_t removed = 0;
  std::vector<uint32_t> offsets;
  std::vector<uint8_t> drop;
  for (Node* n = from_tail ? tail_ : head_; n != nullptr && removed < quota;) {
    Node* following = from_tail ? n->prev : n->next;
    EntryOffsets(n, n->count, &offsets);
    offsets.push_back(n->used);
    drop.assign(n->count, 0);
    uint32_t dropped = 0;
    uint8_t* d = n->data();
    for (uint32_t i = 0; i < n->count && removed < quota; ++i) {
      uint32_t at = from_tail ? n->count - 1 - i : i;
      if (target.Matches(d + offsets[at])) {
        drop[at] = 1;
        ++dropped;
        ++removed;
      }
    }
    if (dropped == n->count) {
      UnlinkAndFree(n);
    } else if (dropped > 0) {
      // Slide the kept entries down over the dropped ones, in one pass.
      uint32_t w = 0;
      for (uint32_t i = 0; i < n->count; ++i) {
        uint32_t sz = offsets[i + 1] - offsets[i];
        if (drop[i]) {
          n->lp -= static_cast<uint32_t>(pl::EntryLpBytes(d + offsets[i]));
        } else {
          memmove(d + w, d + offsets[i], sz);
          w += sz;
        }
      }
      n->used = w;
      n->count -= dropped;
      ShrinkIfSparse(n);
    }
    n = following;
  }
  size_ -= removed;
  if (removed > 0 && size_ > 0) TryConvertToListpack(true);
  return static_cast<int64_t>(removed);
}

void PackedList::Trim(int64_t start, int64_t stop) {
  InvalidateTailIndex();
  int64_t len = static_cast<int64_t>(size_);
  if (start < 0) start = 0;
  if (start > stop || start >= len) {
    DropFront(len);
  } else {
    if (stop >= len) stop = len - 1;
    DropFront(start);
    DropBack(len - stop - 1);
  }
  if (size_ > 0) TryConvertToListpack(true);
}

// quicklistDelRange from either end: whole nodes are freed, the boundary node is cut.
void PackedList::DropFront(uint64_t k) {
  while (k > 0 && k >= head_->count) {
    k -= head_->count;
    size_ -= head_->count;
    UnlinkAndFree(head_);
  }
  if (k == 0) return;
  EraseAt(head_, 0, OffsetOf(head_, static_cast<uint32_t>(k)), static_cast<uint32_t>(k));
  size_ -= k;
  ShrinkIfSparse(head_);
}

void PackedList::DropBack(uint64_t k) {
  while (k > 0 && k >= tail_->count) {
    k -= tail_->count;
    size_ -= tail_->count;
    UnlinkAndFree(tail_);
  }
  if (k == 0) return;
  uint32_t keep = tail_->count - static_cast<uint32_t>(k);
  EraseAt(tail_, OffsetOf(tail_, keep), tail_->used, static_cast<uint32_t>(k));
  size_ -= k;
  ShrinkIfSparse(tail_);
}

std::vector<int64_t> PackedList::Positions(std::string_view v, int64_t rank, int64_t count,
                                           int64_t maxlen) const {
  std::vector<int64_t> out;
  if (rank == 0 || size_ == 0) return out;
  Elem target(v);
  bool reverse = rank < 0;
  uint64_t skip = (reverse ? 0 - static_cast<uint64_t>(rank) : static_cast<uint64_t>(rank)) - 1;
  int64_t len = static_cast<int64_t>(size_);
  int64_t scan = maxlen > 0 && maxlen < len ? maxlen : len;
  int64_t index = reverse ? len - 1 : 0;
  VisitRaw(reverse ? len - scan : 0, reverse ? len - 1 : scan - 1, reverse, [&](const uint8_t* p) {
    if (target.Matches(p)) {
      if (skip > 0) {
        --skip;
      } else {
        out.push_back(index);
        if (count > 0 && static_cast<int64_t>(out.size()) >= count) return false;
      }
    }
    index += reverse ? -1 : 1;
    return true;
  });
  return out;
}

bool PackedList::NormalizeRange(int64_t start, int64_t stop, int64_t len, int64_t* from,
                                int64_t* to) {
  if (start < 0) start += len;
  if (stop < 0) stop += len;
  if (start < 0) start = 0;
  if (start > stop || start >= len) return false;
  if (stop >= len) stop = len - 1;
  *from = start;
  *to = stop;
  return true;
}

// ---- Whole-list -----------------------------------------------------------------------------

size_t PackedList::MemoryUsage() const {
  size_t index = tail_index_ == nullptr
                     ? 0
                     : sizeof(*tail_index_) + tail_index_->v.capacity() * sizeof(uint32_t);
  return sizeof(*this) + bytes_ + index;
}

std::unique_ptr<HeapObject> PackedList::Clone() const { return CloneList(); }

std::unique_ptr<PackedList> PackedList::CloneList() const {
  auto copy = std::make_unique<PackedList>(fill_, compress_depth_);
  for (const Node* n = head_; n != nullptr; n = n->next) {
    Node* m = copy->NewNode(n->used);
    memcpy(m->data(), n->data(), n->used);
    m->used = n->used;
    m->count = n->count;
    m->lp = n->lp;
    copy->Link(copy->tail_, m, true);
  }
  copy->size_ = size_;
  copy->listpack_ = listpack_;
  return copy;
}

bool PackedList::Verify() const {
  size_t total = 0, nodes = 0, bytes = 0;
  const Node* prev = nullptr;
  for (const Node* n = head_; n != nullptr; prev = n, n = n->next) {
    if (n->prev != prev || n->count == 0 || n->front + n->used > n->cap) return false;
    bool indexed = n == tail_ && tail_index_ != nullptr;
    if (indexed && tail_index_->size() != n->count) return false;
    size_t lp = kLpEmptyBytes;
    uint32_t off = 0, entries = 0;
    for (; off < n->used; off += static_cast<uint32_t>(EntrySize(n->data() + off)), ++entries) {
      if (indexed && (*tail_index_)[entries] != n->front + off) return false;
      lp += pl::EntryLpBytes(n->data() + off);
    }
    if (off != n->used || entries != n->count || lp != n->lp) return false;
    total += n->count;
    bytes += malloc_usable_size(const_cast<Node*>(n));
    ++nodes;
  }
  if (prev != tail_ || total != size_ || nodes != node_count_ || bytes != bytes_) return false;
  return !(listpack_ && nodes > 1) && (tail_index_ == nullptr || tail_ != nullptr);
}

}  // namespace vireo
