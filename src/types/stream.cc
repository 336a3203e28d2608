#include "types/stream.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "types/stream_groups.h"
#include "types/stream_idmp.h"
#include "util/strings.h"

namespace vireo {

// ---------------------------------------------------------------------------------------------
// IDs

bool StreamID::Increment() {
  if (seq == UINT64_MAX) {
    if (ms == UINT64_MAX) return false;
    ++ms;
    seq = 0;
  } else {
    ++seq;
  }
  return true;
}

bool StreamID::Decrement() {
  if (seq == 0) {
    if (ms == 0) return false;
    --ms;
    seq = UINT64_MAX;
  } else {
    --seq;
  }
  return true;
}

std::string StreamID::ToString() const {
  char buf[48];
  auto r = fmt::format_to_n(buf, sizeof(buf), "{}-{}", ms, seq);
  return std::string(buf, r.size);
}

bool ParseStreamID(std::string_view s, StreamID* id, uint64_t missing_seq, bool strict,
                   bool* seq_star) {
  // Redis copies the argument into a 128-byte buffer first: longer ones are invalid.
  if (s.size() > 127) return false;
  if (!strict && s == "-") {
    *id = StreamID::Min();
    return true;
  }
  if (!strict && s == "+") {
    *id = StreamID::Max();
    return true;
  }
  size_t dash = s.find('-');
  uint64_t ms, seq;
  if (dash == std::string_view::npos) {
    if (!ParseUint64Lax(s, &ms)) return false;
    seq = missing_seq;
  } else {
    if (!ParseUint64Lax(s.substr(0, dash), &ms)) return false;
    std::string_view seq_part = s.substr(dash + 1);
    if (seq_star != nullptr && seq_part == "*") {
      seq = 0;
      *seq_star = true;
    } else if (!ParseUint64Lax(seq_part, &seq)) {
      return false;
    }
  }
  id->ms = ms;
  id->seq = seq;
  return true;
}

// ---------------------------------------------------------------------------------------------
// Block encoding

namespace {

constexpr uint8_t kFlagDeleted = 1;
constexpr uint8_t kFlagSameFields = 2;

size_t VarintSize(uint64_t v) {
  size_t n = 1;
  while (v >= 0x80) {
    v >>= 7;
    ++n;
  }
  return n;
}

char* PutVarint(char* p, uint64_t v) {
  while (v >= 0x80) {
    *p++ = static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  *p++ = static_cast<char>(v);
  return p;
}

uint64_t GetVarint(const char*& p) {
  uint64_t v = 0;
  int shift = 0;
  while (true) {
    auto b = static_cast<uint8_t>(*p++);
    v |= static_cast<uint64_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) return v;
    shift += 7;
  }
}

uint64_t ZigZag(int64_t v) {
  return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
}
int64_t UnZigZag(uint64_t v) { return static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1); }

// A string is stored as varint((len << 1)) + bytes, or, when it is a canonical integer whose
// zigzag form fits 63 bits, as varint((zigzag << 1) | 1) alone.
bool IntEncodable(std::string_view s, uint64_t* header) {
  if (s.empty() || s.size() > 20) return false;
  int64_t v;
  if (!ParseInt64(s, &v)) return false;
  uint64_t z = ZigZag(v);
  if (z >> 63) return false;
  *header = (z << 1) | 1;
  return true;
}

size_t EncodedStringSize(std::string_view s) {
  uint64_t header;
  if (IntEncodable(s, &header)) return VarintSize(header);
  return VarintSize(static_cast<uint64_t>(s.size()) << 1) + s.size();
}

char* PutString(char* p, std::string_view s) {
  uint64_t header;
  if (IntEncodable(s, &header)) return PutVarint(p, header);
  p = PutVarint(p, static_cast<uint64_t>(s.size()) << 1);
  memcpy(p, s.data(), s.size());
  return p + s.size();
}

void SkipString(const char*& p) {
  uint64_t h = GetVarint(p);
  if ((h & 1) == 0) p += h >> 1;
}

// Reads a string; integers are formatted into `scratch`, which must have room (21 bytes).
std::string_view GetString(const char*& p, std::string* scratch) {
  uint64_t h = GetVarint(p);
  if (h & 1) {
    int64_t v = UnZigZag(h >> 1);
    size_t at = scratch->size();
    char buf[24];
    auto r = fmt::format_to_n(buf, sizeof(buf), "{}", v);
    scratch->append(buf, r.size);
    return {scratch->data() + at, r.size};
  }
  size_t len = h >> 1;
  std::string_view out(p, len);
  p += len;
  return out;
}

// --- Redis listpack sizes -----------------------------------------------------------------
// When a new block starts is decided as Redis decides when its tail listpack node is full, so
// approximate trimming (which drops whole blocks) removes exactly what Redis removes. That needs
// the byte size Redis's listpack would have for the same entries: each element is an encoding
// (a 1-9 byte integer, or a 1/2/5-byte header plus the bytes) followed by a back-length of that
// encoding's size.
constexpr size_t kListpackHeaderAndEnd = 6 + 1;
// Redis's cap on a node (STREAM_LISTPACK_MAX_SIZE), also used when stream-node-max-bytes is 0.
constexpr size_t kListpackMaxSize = size_t{1} << 30;

size_t LpBacklenSize(size_t encoded) {
  if (encoded <= 127) return 1;
  if (encoded < 16383) return 2;
  if (encoded < 2097151) return 3;
  if (encoded < 268435455) return 4;
  return 5;
}

size_t LpElementSize(size_t encoded) { return encoded + LpBacklenSize(encoded); }

size_t LpIntSize(int64_t v) {
  size_t encoded;
  if (v >= 0 && v <= 127) {
    encoded = 1;
  } else if (v >= -4096 && v <= 4095) {
    encoded = 2;
  } else if (v >= -32768 && v <= 32767) {
    encoded = 3;
  } else if (v >= -8388608 && v <= 8388607) {
    encoded = 4;
  } else if (v >= INT32_MIN && v <= INT32_MAX) {
    encoded = 5;
  } else {
    encoded = 9;
  }
  return LpElementSize(encoded);
}

// A string argument: listpacks store canonical integers (string2ll's grammar) as integers.
size_t LpStringSize(std::string_view s) {
  int64_t v;
  if (ParseInt64(s, &v)) return LpIntSize(v);
  const size_t header = s.size() < 64 ? 1 : s.size() < 4096 ? 2 : 5;
  return LpElementSize(header + s.size());
}

// The master entry (count and deleted excluded: Block::LpBytes adds them as they change):
// num-fields, the field names (`fields_size`) and the zero terminator, plus the listpack's
// header and end byte.
size_t LpMasterSize(size_t nfields, size_t fields_size) {
  return kListpackHeaderAndEnd + LpIntSize(static_cast<int64_t>(nfields)) + fields_size +
         LpIntSize(0);
}

// One entry: flags, ms and seq deltas (as Redis's signed 64-bit integers), num-fields unless
// the fields are the master's, the strings (`strings_size`), and the lp-count trailer.
size_t LpEntrySize(StreamID id, StreamID master, bool same_fields, size_t nfields,
                   size_t strings_size) {
  size_t n = LpIntSize(0) + LpIntSize(static_cast<int64_t>(id.ms - master.ms)) +
             LpIntSize(static_cast<int64_t>(id.seq - master.seq)) + strings_size;
  int64_t lp_count = static_cast<int64_t>(nfields) + 3;
  if (!same_fields) {
    n += LpIntSize(static_cast<int64_t>(nfields));
    lp_count += static_cast<int64_t>(nfields) + 1;
  }
  return n + LpIntSize(lp_count);
}

}  // namespace

struct Stream::Block {
  char* data = nullptr;
  uint32_t size = 0;
  uint32_t capacity = 0;
  uint32_t live = 0;
  uint32_t deleted = 0;
  uint32_t entries_start = 0;  // master fields end here
  uint32_t master_fields = 0;
  StreamID last_id;  // of the last entry appended, deleted or not
  // The bytes Redis's listpack node would take for these entries, less the count and deleted
  // elements of its master entry (see LpBytes).
  uint32_t lp_bytes = 0;

  Block() = default;
  Block(const Block&) = delete;
  ~Block() { free(data); }

  void Reserve(size_t extra) {
    size_t need = size + extra;
    if (need <= capacity) return;
    size_t cap = std::max<size_t>({need, capacity + capacity / 2, 64});
    data = static_cast<char*>(realloc(data, cap));
    capacity = static_cast<uint32_t>(cap);
  }
  void ShrinkToFit() {
    if (capacity == size || size == 0) return;
    data = static_cast<char*>(realloc(data, size));
    capacity = size;
  }
  uint32_t total() const { return live + deleted; }
  size_t LpBytes() const { return lp_bytes + LpIntSize(live) + LpIntSize(deleted); }

  // Walks the entry at `off`: its flags, ID and the offset of the next entry.
  struct Header {
    uint8_t flags;
    StreamID id;
    const char* body;  // the num-fields varint or the first value
    uint32_t next;
  };
  Header Decode(StreamID master, uint32_t off) const {
    Header h;
    const char* p = data + off;
    h.flags = static_cast<uint8_t>(*p++);
    h.id.ms = master.ms + GetVarint(p);
    h.id.seq = master.seq + static_cast<uint64_t>(UnZigZag(GetVarint(p)));
    h.body = p;
    size_t strings;
    if (h.flags & kFlagSameFields) {
      strings = master_fields;
    } else {
      strings = 2 * GetVarint(p);
    }
    for (size_t i = 0; i < strings; ++i) SkipString(p);
    h.next = static_cast<uint32_t>(p - data);
    return h;
  }
};

Stream::Stream() = default;

Stream::~Stream() {
  for (auto& [id, block] : blocks_) delete block;
}

StreamGroups& Stream::MutableGroups() {
  if (!groups_) groups_ = std::make_unique<StreamGroups>();
  return *groups_;
}

StreamIdmp& Stream::MutableIdmp(int64_t duration_s, int64_t maxsize) {
  if (!idmp_) idmp_ = std::make_unique<StreamIdmp>(duration_s, maxsize);
  return *idmp_;
}

void Stream::set_idmp(std::unique_ptr<StreamIdmp> idmp) { idmp_ = std::move(idmp); }

size_t Stream::MemoryUsage() const {
  // A map node holds three pointers, a colour word, the key and the value.
  constexpr size_t kMapNode = 32 + sizeof(StreamID) + sizeof(Block*);
  size_t total = sizeof(Stream);
  for (const auto& [id, block] : blocks_) total += kMapNode + sizeof(Block) + block->capacity;
  if (groups_) total += groups_->MemoryUsage();
  if (idmp_) total += idmp_->MemoryUsage();
  return total;
}

std::unique_ptr<HeapObject> Stream::Clone() const {
  auto copy = std::make_unique<Stream>();
  for (const auto& [id, block] : blocks_) {
    auto* b = new Block;
    b->data = static_cast<char*>(malloc(std::max<uint32_t>(block->size, 1)));
    memcpy(b->data, block->data, block->size);
    b->size = block->size;
    b->capacity = std::max<uint32_t>(block->size, 1);
    b->live = block->live;
    b->deleted = block->deleted;
    b->entries_start = block->entries_start;
    b->master_fields = block->master_fields;
    b->last_id = block->last_id;
    b->lp_bytes = block->lp_bytes;
    copy->blocks_.emplace_hint(copy->blocks_.end(), id, b);
  }
  copy->length_ = length_;
  copy->last_id_ = last_id_;
  copy->first_id_ = first_id_;
  copy->max_deleted_id_ = max_deleted_id_;
  copy->entries_added_ = entries_added_;
  if (groups_) copy->groups_ = groups_->Clone();
  if (idmp_) copy->idmp_ = idmp_->Clone();
  return copy;
}

bool Stream::NextId(uint64_t now_ms, StreamID* out) const {
  if (now_ms > last_id_.ms) {
    *out = {now_ms, 0};
    return true;
  }
  *out = last_id_;
  return out->Increment();
}

bool Stream::NextIdForMs(uint64_t ms, StreamID* out) const {
  if (ms > last_id_.ms) {
    *out = {ms, 0};
    return true;
  }
  if (ms < last_id_.ms || last_id_.seq == UINT64_MAX) return false;
  *out = {ms, last_id_.seq + 1};
  return true;
}

void Stream::Append(StreamID id, std::span<const std::string_view> fv, const NodeLimits& limits) {
  size_t nfields = fv.size() / 2;
  Block* tail = blocks_.empty() ? nullptr : std::prev(blocks_.end())->second;
  StreamID master = tail != nullptr ? std::prev(blocks_.end())->first : id;

  // The entry's size with and without field names, here and in Redis's listpack.
  size_t values_size = 0, fields_size = 0, raw_size = 0;
  size_t lp_values = 0, lp_fields = 0;
  for (size_t i = 0; i < nfields; ++i) {
    fields_size += EncodedStringSize(fv[2 * i]);
    values_size += EncodedStringSize(fv[2 * i + 1]);
    raw_size += fv[2 * i].size() + fv[2 * i + 1].size();
    lp_fields += LpStringSize(fv[2 * i]);
    lp_values += LpStringSize(fv[2 * i + 1]);
  }

  if (tail != nullptr) {
    // Redis's test for a full tail node: its listpack bytes plus the entry's raw string bytes
    // reach stream-node-max-bytes, or it holds stream-node-max-entries entries (deleted ones
    // included).
    const size_t max_bytes = limits.max_bytes == 0 || limits.max_bytes > kListpackMaxSize
                                 ? kListpackMaxSize
                                 : limits.max_bytes;
    if (tail->LpBytes() + raw_size >= max_bytes ||
        (limits.max_entries != 0 && tail->total() >= limits.max_entries)) {
      tail->ShrinkToFit();
      tail = nullptr;
      master = id;
    }
  }
  bool same_fields = false;
  if (tail == nullptr) {
    tail = new Block;
    tail->master_fields = static_cast<uint32_t>(nfields);
    tail->Reserve(VarintSize(nfields) + fields_size);
    char* p = PutVarint(tail->data, nfields);
    for (size_t i = 0; i < nfields; ++i) p = PutString(p, fv[2 * i]);
    tail->size = tail->entries_start = static_cast<uint32_t>(p - tail->data);
    tail->lp_bytes = static_cast<uint32_t>(LpMasterSize(nfields, lp_fields));
    blocks_.emplace_hint(blocks_.end(), id, tail);
    same_fields = true;
  } else if (tail->master_fields == nfields) {
    std::string scratch;
    scratch.reserve(24);
    const char* p = tail->data;
    GetVarint(p);
    same_fields = true;
    for (size_t i = 0; i < nfields && same_fields; ++i) {
      scratch.clear();
      same_fields = GetString(p, &scratch) == fv[2 * i];
    }
  }

  uint64_t ms_delta = id.ms - master.ms;
  uint64_t seq_delta = ZigZag(static_cast<int64_t>(id.seq - master.seq));
  size_t need = 1 + VarintSize(ms_delta) + VarintSize(seq_delta) + values_size;
  if (!same_fields) need += VarintSize(nfields) + fields_size;
  tail->Reserve(need);
  char* p = tail->data + tail->size;
  *p++ = static_cast<char>(same_fields ? kFlagSameFields : 0);
  p = PutVarint(p, ms_delta);
  p = PutVarint(p, seq_delta);
  if (same_fields) {
    for (size_t i = 0; i < nfields; ++i) p = PutString(p, fv[2 * i + 1]);
  } else {
    p = PutVarint(p, nfields);
    for (size_t i = 0; i < 2 * nfields; ++i) p = PutString(p, fv[i]);
  }
  tail->size = static_cast<uint32_t>(p - tail->data);
  tail->lp_bytes += static_cast<uint32_t>(LpEntrySize(
      id, master, same_fields, nfields, same_fields ? lp_values : lp_fields + lp_values));
  ++tail->live;
  tail->last_id = id;
  if (length_ == 0) first_id_ = id;
  ++length_;
  last_id_ = id;
  ++entries_added_;
}

// ---------------------------------------------------------------------------------------------
// Raw blocks

namespace {

Stream::RawString GetRaw(const char*& p) {
  Stream::RawString out;
  uint64_t h = GetVarint(p);
  if (h & 1) {
    out.is_int = true;
    out.ival = UnZigZag(h >> 1);
  } else {
    out.sval = {p, static_cast<size_t>(h >> 1)};
    p += h >> 1;
  }
  return out;
}

// The most PutRaw writes for `r`: a 10-byte varint header and the bytes (or a formatted
// integer, for the few integers whose zigzag form needs all 64 bits).
size_t RawBound(const Stream::RawString& r) { return 10 + (r.is_int ? 21 : r.sval.size()); }

size_t LpRawSize(const Stream::RawString& r) {
  return r.is_int ? LpIntSize(r.ival) : LpStringSize(r.sval);
}

char* PutRaw(char* p, const Stream::RawString& r) {
  if (!r.is_int) return PutString(p, r.sval);
  uint64_t z = ZigZag(r.ival);
  if ((z >> 63) == 0) return PutVarint(p, (z << 1) | 1);
  char buf[24];
  auto res = fmt::format_to_n(buf, sizeof(buf), "{}", r.ival);
  return PutString(p, std::string_view(buf, res.size));
}

}  // namespace

void Stream::VisitBlocks(BlockVisitor& visitor) const {
  std::vector<RawString> master, items;
  for (const auto& [key, b] : blocks_) {
    const char* p = b->data;
    size_t n = GetVarint(p);
    master.clear();
    for (size_t i = 0; i < n; ++i) master.push_back(GetRaw(p));
    visitor.BeginBlock(key, b->live, b->deleted, master);
    for (uint32_t off = b->entries_start; off < b->size;) {
      const char* q = b->data + off;
      auto flags = static_cast<uint8_t>(*q++);
      StreamID id;
      id.ms = key.ms + GetVarint(q);
      id.seq = key.seq + static_cast<uint64_t>(UnZigZag(GetVarint(q)));
      size_t strings = (flags & kFlagSameFields) ? b->master_fields : 2 * GetVarint(q);
      items.clear();
      for (size_t i = 0; i < strings; ++i) items.push_back(GetRaw(q));
      visitor.Entry((flags & kFlagDeleted) != 0, (flags & kFlagSameFields) != 0, id, items);
      off = static_cast<uint32_t>(q - b->data);
    }
    visitor.EndBlock();
  }
}

Stream::BlockLoader::~BlockLoader() { EndBlock(); }

bool Stream::BlockLoader::BeginBlock(StreamID master, std::span<const RawString> master_fields,
                                     size_t size_hint) {
  EndBlock();
  // Block keys must order the blocks as their entries: above everything loaded so far.
  if (seen_any_ && master <= last_seen_) return false;
  size_t bound = 10;
  for (const RawString& f : master_fields) bound += RawBound(f);
  block_ = new Block;
  block_->Reserve(std::max(bound, size_hint));
  char* p = PutVarint(block_->data, master_fields.size());
  for (const RawString& f : master_fields) p = PutRaw(p, f);
  block_->size = block_->entries_start = static_cast<uint32_t>(p - block_->data);
  block_->master_fields = static_cast<uint32_t>(master_fields.size());
  size_t lp_fields = 0;
  for (const RawString& f : master_fields) lp_fields += LpRawSize(f);
  block_->lp_bytes = static_cast<uint32_t>(LpMasterSize(master_fields.size(), lp_fields));
  master_ = master;
  return true;
}

bool Stream::BlockLoader::Entry(bool deleted, bool same_fields, StreamID id,
                                std::span<const RawString> items) {
  if (block_ == nullptr || id < master_ || (seen_any_ && id <= last_seen_)) return false;
  if (items.empty()) return false;
  if (same_fields ? items.size() != block_->master_fields : items.size() % 2 != 0) return false;
  size_t bound = 1 + 10 + 10 + 10;
  for (const RawString& r : items) bound += RawBound(r);
  block_->Reserve(bound);
  char* p = block_->data + block_->size;
  *p++ = static_cast<char>((deleted ? kFlagDeleted : 0) | (same_fields ? kFlagSameFields : 0));
  p = PutVarint(p, id.ms - master_.ms);
  p = PutVarint(p, ZigZag(static_cast<int64_t>(id.seq - master_.seq)));
  if (!same_fields) p = PutVarint(p, items.size() / 2);
  for (const RawString& r : items) p = PutRaw(p, r);
  block_->size = static_cast<uint32_t>(p - block_->data);
  size_t lp_items = 0;
  for (const RawString& r : items) lp_items += LpRawSize(r);
  block_->lp_bytes += static_cast<uint32_t>(LpEntrySize(
      id, master_, same_fields, same_fields ? items.size() : items.size() / 2, lp_items));
  block_->last_id = id;
  last_seen_ = id;
  seen_any_ = true;
  // Deleted entries count for the last ID too: a later XADD must land above them.
  stream_->last_id_ = id;
  if (deleted) {
    ++block_->deleted;
  } else {
    ++block_->live;
    if (stream_->length_ == 0) stream_->first_id_ = id;
    ++stream_->length_;
  }
  return true;
}

void Stream::BlockLoader::EndBlock() {
  if (block_ == nullptr) return;
  if (block_->live == 0) {
    delete block_;
  } else {
    block_->ShrinkToFit();
    stream_->blocks_.emplace_hint(stream_->blocks_.end(), master_, block_);
  }
  block_ = nullptr;
}

void Stream::RemoveBlock(BlockMap::iterator it) {
  delete it->second;
  blocks_.erase(it);
}

void Stream::UpdateFirstId() {
  if (length_ == 0 || blocks_.empty()) {
    first_id_ = StreamID::Min();
    return;
  }
  auto it = blocks_.begin();
  const Block* b = it->second;
  for (uint32_t off = b->entries_start; off < b->size;) {
    Block::Header h = b->Decode(it->first, off);
    if ((h.flags & kFlagDeleted) == 0) {
      first_id_ = h.id;
      return;
    }
    off = h.next;
  }
}

bool Stream::Delete(StreamID id) {
  auto it = blocks_.upper_bound(id);
  if (it == blocks_.begin()) return false;
  --it;
  Block* b = it->second;
  if (id > b->last_id) return false;
  for (uint32_t off = b->entries_start; off < b->size;) {
    Block::Header h = b->Decode(it->first, off);
    if (h.id == id) {
      if (h.flags & kFlagDeleted) return false;
      b->data[off] = static_cast<char>(h.flags | kFlagDeleted);
      --b->live;
      ++b->deleted;
      --length_;
      if (b->live == 0) RemoveBlock(it);
      if (id > max_deleted_id_) max_deleted_id_ = id;
      if (length_ == 0) {
        first_id_ = StreamID::Min();
      } else if (id == first_id_) {
        UpdateFirstId();
      }
      return true;
    }
    if (h.id > id) return false;
    off = h.next;
  }
  return false;
}

int64_t Stream::TrimByLength(uint64_t maxlen, bool approx, int64_t limit, const TrimRefs* refs,
                             StreamID* stop_id) {
  return Trim(true, maxlen, StreamID::Min(), approx, limit, refs, stop_id);
}

int64_t Stream::TrimByMinId(StreamID minid, bool approx, int64_t limit, const TrimRefs* refs,
                            StreamID* stop_id) {
  return Trim(false, 0, minid, approx, limit, refs, stop_id);
}

int64_t Stream::Trim(bool by_length, uint64_t maxlen, StreamID minid, bool approx, int64_t limit,
                     const TrimRefs* refs, StreamID* stop_id) {
  if (refs != nullptr && !refs->removable && !refs->on_removed) refs = nullptr;
  StreamID stop = StreamID::Max();
  int64_t removed = 0;
  auto it = blocks_.begin();
  while (it != blocks_.end()) {
    Block* b = it->second;
    // Every entry of the block is at or above its key, so these end the trim here.
    if ((by_length && length_ <= maxlen) || (!by_length && it->first >= minid) ||
        (refs != nullptr && it->first > refs->removable_until)) {
      stop = it->first;
      break;
    }
    bool whole = by_length ? length_ - b->live >= maxlen : b->last_id < minid;
    if ((!whole && approx) || (limit != 0 && removed + b->live > limit)) {
      stop = it->first;
      break;
    }
    if (whole && refs == nullptr) {
      length_ -= b->live;
      removed += b->live;
      auto next = std::next(it);
      RemoveBlock(it);
      it = next;
      continue;
    }
    // Entry by entry: the block straddles the threshold, or references must be checked. An
    // entry ACKED keeps is skipped, not a reason to stop.
    bool stopped = false;
    for (uint32_t off = b->entries_start; off < b->size;) {
      Block::Header h = b->Decode(it->first, off);
      if ((by_length && length_ <= maxlen) || (!by_length && h.id >= minid) ||
          (refs != nullptr && h.id > refs->removable_until)) {
        stop = h.id;
        stopped = true;
        break;
      }
      if ((h.flags & kFlagDeleted) == 0 &&
          (refs == nullptr || !refs->removable || refs->removable(h.id))) {
        b->data[off] = static_cast<char>(h.flags | kFlagDeleted);
        --b->live;
        ++b->deleted;
        --length_;
        ++removed;
        if (refs != nullptr && refs->on_removed) refs->on_removed(h.id);
      }
      off = h.next;
    }
    auto next = std::next(it);
    if (b->live == 0) RemoveBlock(it);
    if (stopped) break;
    it = next;
  }
  if (removed > 0) UpdateFirstId();
  if (stop_id != nullptr) *stop_id = stop;
  return removed;
}

bool Stream::Contains(StreamID id) const {
  auto it = blocks_.upper_bound(id);
  if (it == blocks_.begin()) return false;
  --it;
  const Block* b = it->second;
  if (id > b->last_id) return false;
  for (uint32_t off = b->entries_start; off < b->size;) {
    Block::Header h = b->Decode(it->first, off);
    if (h.id == id) return (h.flags & kFlagDeleted) == 0;
    if (h.id > id) return false;
    off = h.next;
  }
  return false;
}

bool Stream::FirstEntryId(StreamID* id) const {
  if (length_ == 0) return false;
  *id = first_id_;
  return true;
}

bool Stream::LastEntryId(StreamID* id) const {
  if (length_ == 0) return false;
  auto it = std::prev(blocks_.end());
  const Block* b = it->second;
  bool found = false;
  for (uint32_t off = b->entries_start; off < b->size;) {
    Block::Header h = b->Decode(it->first, off);
    if ((h.flags & kFlagDeleted) == 0) {
      *id = h.id;
      found = true;
    }
    off = h.next;
  }
  return found;
}

bool Stream::RangeHasTombstones(StreamID start, StreamID end) const {
  if (length_ == 0 || max_deleted_id_.is_zero()) return false;
  if (first_id_ > max_deleted_id_) return false;
  return start <= max_deleted_id_ && max_deleted_id_ <= end;
}

int64_t Stream::EstimateDistanceFromFirstEver(StreamID id) const {
  if (entries_added_ == 0) return 0;
  if (length_ == 0 && id <= last_id_) return static_cast<int64_t>(entries_added_);
  if (id == last_id_) return static_cast<int64_t>(entries_added_);
  if (id > last_id_) return -1;
  if (max_deleted_id_.is_zero() || max_deleted_id_ < first_id_) {
    if (id < first_id_) return static_cast<int64_t>(entries_added_ - length_);
    if (id == first_id_) return static_cast<int64_t>(entries_added_ - length_ + 1);
  }
  return -1;
}

// ---------------------------------------------------------------------------------------------
// Iteration

Stream::Iterator::Iterator(const Stream& stream, StreamID start, StreamID end, bool reverse)
    : stream_(stream), start_(start), end_(end), reverse_(reverse) {
  if (start > end || stream.blocks_.empty()) {
    done_ = true;
    return;
  }
  const BlockMap& blocks = stream.blocks_;
  // The block that may hold the first ID to visit: the last one starting at or before it.
  StreamID from = reverse ? end : start;
  auto it = blocks.upper_bound(from);
  if (it == blocks.begin()) {
    if (reverse) {
      done_ = true;
      return;
    }
  } else {
    --it;
  }
  block_ = it;
  LoadBlock();
}

bool Stream::Iterator::LoadBlock() {
  offsets_.clear();
  pos_ = 0;
  const Block* b = block_->second;
  for (uint32_t off = b->entries_start; off < b->size;) {
    Block::Header h = b->Decode(block_->first, off);
    if ((h.flags & kFlagDeleted) == 0 && h.id >= start_ && h.id <= end_) offsets_.push_back(off);
    off = h.next;
  }
  if (reverse_) std::reverse(offsets_.begin(), offsets_.end());
  return true;
}

bool Stream::Iterator::Next(StreamEntryView* out) {
  while (!done_) {
    if (pos_ < offsets_.size()) {
      const Block* b = block_->second;
      uint32_t off = offsets_[pos_++];
      const char* p = b->data + off;
      auto flags = static_cast<uint8_t>(*p++);
      out->id.ms = block_->first.ms + GetVarint(p);
      out->id.seq = block_->first.seq + static_cast<uint64_t>(UnZigZag(GetVarint(p)));
      out->field_values.clear();
      scratch_.clear();
      if (flags & kFlagSameFields) {
        size_t n = b->master_fields;
        // Room for every string to be a formatted integer, so views never move.
        scratch_.reserve(n * 2 * 21);
        const char* m = b->data;
        GetVarint(m);
        for (size_t i = 0; i < n; ++i) {
          out->field_values.push_back(GetString(m, &scratch_));
          out->field_values.push_back(GetString(p, &scratch_));
        }
      } else {
        size_t n = GetVarint(p);
        scratch_.reserve(n * 2 * 21);
        for (size_t i = 0; i < 2 * n; ++i) out->field_values.push_back(GetString(p, &scratch_));
      }
      return true;
    }
    // Next block in walk order, unless it lies wholly outside the range.
    const BlockMap& blocks = stream_.blocks_;
    if (reverse_) {
      if (block_ == blocks.begin()) break;
      --block_;
      if (block_->second->last_id < start_) break;
    } else {
      ++block_;
      if (block_ == blocks.end() || block_->first > end_) break;
    }
    LoadBlock();
  }
  done_ = true;
  return false;
}

size_t Stream::Range(StreamID start, StreamID end, bool reverse, size_t count,
                     const std::function<bool(const StreamEntryView&)>& fn) const {
  Iterator it(*this, start, end, reverse);
  StreamEntryView entry;
  size_t n = 0;
  while ((count == 0 || n < count) && it.Next(&entry)) {
    ++n;
    if (!fn(entry)) break;
  }
  return n;
}

}  // namespace vireo
