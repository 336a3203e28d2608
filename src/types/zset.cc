#include "types/zset.h"

#include <malloc.h>

#include <cstdlib>
#include <cstring>

namespace vireo {
namespace {

constexpr size_t kNpos = static_cast<size_t>(-1);

size_t LenSize(size_t len) { return len < 255 ? 1 : 5; }
size_t EntrySize(size_t len) { return 2 * LenSize(len) + len + sizeof(double); }

// Decodes the packed entry at p; returns its size.
size_t Decode(const uint8_t* p, std::string_view* member, double* score) {
  size_t len, h;
  if (p[0] != 0xff) {
    len = p[0];
    h = 1;
  } else {
    uint32_t l;
    memcpy(&l, p + 1, 4);
    len = l;
    h = 5;
  }
  *member = std::string_view(reinterpret_cast<const char*>(p + h), len);
  memcpy(score, p + h + len, sizeof(double));
  return 2 * h + len + sizeof(double);
}

void Encode(uint8_t* p, std::string_view member, double score) {
  size_t len = member.size();
  if (len < 255) {
    *p++ = static_cast<uint8_t>(len);
  } else {
    *p++ = 0xff;
    auto l = static_cast<uint32_t>(len);
    memcpy(p, &l, 4);
    p += 4;
  }
  if (len > 0) memcpy(p, member.data(), len);
  p += len;
  memcpy(p, &score, sizeof(double));
  p += sizeof(double);
  if (len < 255) {
    *p = static_cast<uint8_t>(len);
  } else {
    auto l = static_cast<uint32_t>(len);
    memcpy(p, &l, 4);
    p[4] = 0xff;
  }
}

// The start of the packed entry that ends at p.
const uint8_t* PrevEntry(const uint8_t* p) {
  if (p[-1] != 0xff) return p - EntrySize(p[-1]);
  uint32_t l;
  memcpy(&l, p - 5, 4);
  return p - EntrySize(l);
}

size_t ChunkSize(size_t n) { return (n + 8 + 15) & ~size_t{15}; }

}  // namespace

ZSet::ZSet(size_t size_hint, size_t max_len, const Limits& limits) {
  if (size_hint > limits.max_entries || max_len > limits.max_value) big_ = std::make_unique<Big>();
}

ZSet::~ZSet() {
  free(buf_);
  FreeTree();
}

void ZSet::FreeTree() {
  if (big_ == nullptr) return;
  // Every entry is in the tree; free them through the leaf chain.
  for (ScoreTree::Pos p = big_->tree.Begin(); p.valid(); p.Next()) ZEntry::Destroy(p.entry());
  big_.reset();
}

size_t ZSet::PackedFind(std::string_view member, double* score) const {
  size_t off = 0;
  while (off < bytes_) {
    std::string_view m;
    double s;
    size_t n = Decode(buf_ + off, &m, &s);
    if (m == member) {
      if (score != nullptr) *score = s;
      return off;
    }
    off += n;
  }
  return kNpos;
}

void ZSet::PackedInsertAt(size_t off, std::string_view member, double score) {
  // Redis stores integral listpack scores as integers, which turns -0 into 0.
  if (score == 0) score = 0;
  size_t n = EntrySize(member.size());
  buf_ = static_cast<uint8_t*>(realloc(buf_, bytes_ + n));
  memmove(buf_ + off + n, buf_ + off, bytes_ - off);
  Encode(buf_ + off, member, score);
  bytes_ += static_cast<uint32_t>(n);
  ++count_;
}

size_t ZSet::PackedEntrySize(size_t off) const {
  std::string_view m;
  double s;
  return Decode(buf_ + off, &m, &s);
}

void ZSet::PackedEraseAt(size_t off) {
  size_t n = PackedEntrySize(off);
  memmove(buf_ + off, buf_ + off + n, bytes_ - off - n);
  bytes_ -= static_cast<uint32_t>(n);
  --count_;
  if (bytes_ == 0) {
    free(buf_);
    buf_ = nullptr;
  }
}

bool ZSet::Score(std::string_view member, double* score) const {
  if (packed()) return PackedFind(member, score) != kNpos;
  const ZEntry* e = big_->index.Find(member);
  if (e == nullptr) return false;
  *score = e->score();
  return true;
}

void ZSet::TreeInsert(std::string_view member, double score) {
  ZEntry* e = ZEntry::Create(member, score);
  big_->entry_bytes += ChunkSize(sizeof(double) + LenSize(member.size()) + member.size());
  big_->index.Insert(e);
  big_->tree.Insert(e);
}

void ZSet::Insert(std::string_view member, double score, const Limits& limits) {
  if (packed()) {
    if (count_ + 1 > limits.max_entries || member.size() > limits.max_value) {
      ConvertToTree();
    } else {
      size_t off = 0;
      while (off < bytes_) {
        std::string_view m;
        double s;
        size_t n = Decode(buf_ + off, &m, &s);
        if (CompareScoreMember(s, m, score, member) > 0) break;
        off += n;
      }
      PackedInsertAt(off, member, score);
      return;
    }
  }
  TreeInsert(member, score);
}

void ZSet::Update(std::string_view member, double new_score) {
  if (packed()) {
    size_t off = PackedFind(member, nullptr);
    // Copy the member out: erasing moves the bytes it points into.
    std::string copy(member);
    PackedEraseAt(off);
    Limits unlimited{SIZE_MAX, SIZE_MAX};
    Insert(copy, new_score, unlimited);
    return;
  }
  ZEntry* e = big_->index.Find(member);
  big_->tree.Erase(e->score(), e->member());
  e->set_score(new_score);
  big_->tree.Insert(e);
}

bool ZSet::Erase(std::string_view member) {
  if (packed()) {
    size_t off = PackedFind(member, nullptr);
    if (off == kNpos) return false;
    PackedEraseAt(off);
    return true;
  }
  ZEntry* e = big_->index.Erase(member);
  if (e == nullptr) return false;
  big_->tree.Erase(e->score(), e->member());
  big_->entry_bytes -= ChunkSize(sizeof(double) + LenSize(e->member().size()) + e->member().size());
  ZEntry::Destroy(e);
  return true;
}

std::optional<size_t> ZSet::Rank(std::string_view member) const {
  if (packed()) {
    size_t off = 0, rank = 0;
    while (off < bytes_) {
      std::string_view m;
      double s;
      size_t n = Decode(buf_ + off, &m, &s);
      if (m == member) return rank;
      off += n;
      ++rank;
    }
    return std::nullopt;
  }
  const ZEntry* e = big_->index.Find(member);
  if (e == nullptr) return std::nullopt;
  return big_->tree.Rank(e->score(), e->member());
}

template <typename Less>
size_t ZSet::LowerBound(Less less) const {
  if (packed()) {
    size_t off = 0, rank = 0;
    while (off < bytes_) {
      std::string_view m;
      double s;
      size_t n = Decode(buf_ + off, &m, &s);
      if (!less(s, m)) break;
      off += n;
      ++rank;
    }
    return rank;
  }
  return big_->tree.LowerBound([&](const ZEntry* e) { return less(e->score(), e->member()); });
}

size_t ZSet::ScoreLowerBound(double min, bool exclusive) const {
  return LowerBound([&](double s, std::string_view) { return exclusive ? s <= min : s < min; });
}

size_t ZSet::ScoreRangeEnd(double max, bool exclusive) const {
  return LowerBound([&](double s, std::string_view) { return exclusive ? s < max : s <= max; });
}

size_t ZSet::LexLowerBound(const LexBound& min) const {
  return LowerBound([&](double, std::string_view m) {
    switch (min.kind) {
      case LexBound::Kind::kMin:
        return false;
      case LexBound::Kind::kMax:
        return true;
      case LexBound::Kind::kValue:
        break;
    }
    return min.exclusive ? m <= min.value : m < min.value;
  });
}

size_t ZSet::LexRangeEnd(const LexBound& max) const {
  return LowerBound([&](double, std::string_view m) {
    switch (max.kind) {
      case LexBound::Kind::kMin:
        return false;
      case LexBound::Kind::kMax:
        return true;
      case LexBound::Kind::kValue:
        break;
    }
    return max.exclusive ? m < max.value : m <= max.value;
  });
}

bool ZSet::Iter::Valid() const { return valid_; }

void ZSet::Iter::Load() {
  if (set_->packed()) {
    valid_ = off_ < set_->bytes_;
    if (valid_) Decode(set_->buf_ + off_, &member_, &score_);
  } else {
    valid_ = pos_.valid();
    if (valid_) {
      member_ = pos_.entry()->member();
      score_ = pos_.entry()->score();
    }
  }
}

void ZSet::Iter::Next() {
  if (set_->packed()) {
    off_ += set_->PackedEntrySize(off_);
  } else {
    pos_.Next();
  }
  Load();
}

void ZSet::Iter::Prev() {
  if (set_->packed()) {
    if (off_ == 0) {
      valid_ = false;
      return;
    }
    off_ = static_cast<size_t>(PrevEntry(set_->buf_ + off_) - set_->buf_);
  } else {
    pos_.Prev();
  }
  Load();
}

ZSet::Iter ZSet::At(size_t rank) const {
  Iter it;
  it.set_ = this;
  if (packed()) {
    size_t off = 0;
    // Walk from whichever end is nearer.
    if (rank >= count_) {
      off = bytes_;
    } else if (rank > count_ / 2) {
      off = bytes_;
      for (size_t i = count_; i > rank; --i) {
        off = static_cast<size_t>(PrevEntry(buf_ + off) - buf_);
      }
    } else {
      for (size_t i = 0; i < rank; ++i) off += PackedEntrySize(off);
    }
    it.off_ = off;
  } else {
    it.pos_ = big_->tree.Select(rank);
  }
  it.Load();
  return it;
}

void ZSet::EraseRanks(size_t from, size_t to) {
  if (to > size()) to = size();
  if (from >= to) return;
  if (packed()) {
    size_t begin = 0;
    for (size_t i = 0; i < from; ++i) begin += PackedEntrySize(begin);
    size_t end = begin;
    for (size_t i = from; i < to; ++i) end += PackedEntrySize(end);
    memmove(buf_ + begin, buf_ + end, bytes_ - end);
    bytes_ -= static_cast<uint32_t>(end - begin);
    count_ -= static_cast<uint32_t>(to - from);
    if (bytes_ == 0) {
      free(buf_);
      buf_ = nullptr;
    }
    return;
  }
  for (size_t i = from; i < to; ++i) {
    ZEntry* e = big_->tree.Select(from).entry();
    big_->index.Erase(e->member());
    big_->tree.Erase(e->score(), e->member());
    big_->entry_bytes -=
        ChunkSize(sizeof(double) + LenSize(e->member().size()) + e->member().size());
    ZEntry::Destroy(e);
  }
}

void ZSet::ConvertToTree() {
  if (!packed()) return;
  big_ = std::make_unique<Big>();
  big_->index.Reserve(count_);
  size_t off = 0;
  while (off < bytes_) {
    std::string_view m;
    double s;
    off += Decode(buf_ + off, &m, &s);
    TreeInsert(m, s);
  }
  free(buf_);
  buf_ = nullptr;
  bytes_ = count_ = 0;
}

void ZSet::ConvertToPackedIfFits(const Limits& limits) {
  if (packed() || size() > limits.max_entries) return;
  size_t total = 0;
  for (ScoreTree::Pos p = big_->tree.Begin(); p.valid(); p.Next()) {
    size_t len = p.entry()->member().size();
    if (len > limits.max_value) return;
    total += EntrySize(len);
  }
  auto* buf = static_cast<uint8_t*>(malloc(total == 0 ? 1 : total));
  size_t off = 0;
  for (ScoreTree::Pos p = big_->tree.Begin(); p.valid(); p.Next()) {
    Encode(buf + off, p.entry()->member(), p.entry()->score());
    off += EntrySize(p.entry()->member().size());
  }
  uint32_t count = static_cast<uint32_t>(size());
  FreeTree();
  if (total == 0) {
    free(buf);
    buf = nullptr;
  }
  buf_ = buf;
  bytes_ = static_cast<uint32_t>(total);
  count_ = count;
}

size_t ZSet::MemoryUsage() const {
  size_t total = sizeof(ZSet);
  if (packed()) {
    if (buf_ != nullptr) total += malloc_usable_size(buf_);
    return total;
  }
  return total + sizeof(Big) + big_->tree.MemoryUsage() + big_->index.MemoryUsage() +
         big_->entry_bytes;
}

std::unique_ptr<HeapObject> ZSet::Clone() const {
  std::unique_ptr<ZSet> copy(new ZSet());
  if (packed()) {
    if (bytes_ > 0) {
      copy->buf_ = static_cast<uint8_t*>(malloc(bytes_));
      memcpy(copy->buf_, buf_, bytes_);
    }
    copy->bytes_ = bytes_;
    copy->count_ = count_;
    return copy;
  }
  copy->big_ = std::make_unique<Big>();
  copy->big_->index.Reserve(size());
  ForEach([&](std::string_view m, double s) { copy->TreeInsert(m, s); });
  return copy;
}

bool ZSet::Validate() const {
  if (packed()) {
    size_t off = 0, n = 0;
    std::string_view prev_m;
    double prev_s = 0;
    while (off < bytes_) {
      std::string_view m;
      double s;
      off += Decode(buf_ + off, &m, &s);
      if (n > 0 && CompareScoreMember(prev_s, prev_m, s, m) >= 0) return false;
      prev_m = m;
      prev_s = s;
      ++n;
    }
    return off == bytes_ && n == count_;
  }
  if (!big_->tree.Validate() || big_->index.size() != big_->tree.size()) return false;
  for (ScoreTree::Pos p = big_->tree.Begin(); p.valid(); p.Next()) {
    if (big_->index.Find(p.entry()->member()) != p.entry()) return false;
  }
  return true;
}

}  // namespace vireo
