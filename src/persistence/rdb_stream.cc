// RDB codec for streams (RDB_TYPE_STREAM_LISTPACKS 1-3), consumer groups and PELs, and vireo's
// extension type for the Redis 8.x state.
//
// We write type 19 (STREAM_LISTPACKS_2, what Redis 7.0 writes) byte for byte unless the stream
// has state Redis 7 cannot represent: IDMP history, counters or non-default settings, or
// NACKed (unowned) PEL entries. Such a stream is written as kTypeStreamVireo: the same layout
// (owned PEL entries only) followed by
//   length flags (1 = IDMP section follows, 2 = NACK section follows)
//   IDMP: length duration, length maxsize, length iids-added, length iids-duplicates,
//         length producers, then per producer: string pid, length n,
//         n x (string iid, length id-ms, length id-seq), oldest first
//   NACK: per group, in the order of the groups section: length n,
//         n x (16-byte raw ID, length delivery count), in NACK-zone order
// Entries are re-packed into
// Redis's node layout: a listpack per node, keyed by the node's first ID (16 bytes, big
// endian), holding a master entry (count, deleted, master fields, 0) followed by entries as
// flags, ms-delta, seq-delta, [field count, fields and values | values only when the fields
// equal the master's], and the entry's element count (for backward iteration). Only live
// entries are written; the stream's counters (max deleted ID, entries added) carry what
// deletions Redis needs to know about.
#include <cstring>
#include <map>
#include <memory>
#include <vector>

#include "persistence/rdb_internal.h"
#include "server/server.h"
#include "types/stream.h"
#include "types/stream_groups.h"
#include "types/stream_idmp.h"

namespace vireo::rdb {

namespace {

constexpr int64_t kFlagDeleted = 1;
constexpr int64_t kFlagSameFields = 2;

void AppendRawId(std::string* out, StreamID id) {
  for (int i = 7; i >= 0; --i) out->push_back(static_cast<char>((id.ms >> (8 * i)) & 0xff));
  for (int i = 7; i >= 0; --i) out->push_back(static_cast<char>((id.seq >> (8 * i)) & 0xff));
}

StreamID LoadRawId(const char* p) {
  StreamID id;
  for (int i = 0; i < 8; ++i) id.ms = (id.ms << 8) | static_cast<uint8_t>(p[i]);
  for (int i = 8; i < 16; ++i) id.seq = (id.seq << 8) | static_cast<uint8_t>(p[i]);
  return id;
}

void AppendIdLengths(std::string* out, StreamID id) {
  AppendLength(out, id.ms);
  AppendLength(out, id.seq);
}

// Buffers one node's entries (Redis's default node limits: 100 entries, ~4 KB) and writes it
// with its master entry.
class NodeBuilder {
 public:
  NodeBuilder(std::string* out, bool compress) : out_(out), compress_(compress) {}

  void Add(const StreamEntryView& e) {
    size_t nfields = e.field_values.size() / 2;
    if (count_ == 0) {
      master_ = e.id;
      master_fields_.clear();
      for (size_t i = 0; i < nfields; ++i) master_fields_.emplace_back(e.field_values[2 * i]);
    }
    bool same = nfields == master_fields_.size();
    for (size_t i = 0; same && i < nfields; ++i) same = e.field_values[2 * i] == master_fields_[i];
    items_.push_back(same ? kFlagSameFields : 0);
    items_.push_back(static_cast<int64_t>(e.id.ms - master_.ms));
    items_.push_back(static_cast<int64_t>(e.id.seq - master_.seq));
    if (same) {
      for (size_t i = 0; i < nfields; ++i) AddString(e.field_values[2 * i + 1]);
      items_.push_back(static_cast<int64_t>(nfields + 3));
    } else {
      items_.push_back(static_cast<int64_t>(nfields));
      for (std::string_view s : e.field_values) AddString(s);
      items_.push_back(static_cast<int64_t>(2 * nfields + 4));
    }
    ++count_;
    if (count_ >= 100 || bytes_ >= 4096) Flush();
  }

  void Flush() {
    if (count_ == 0) return;
    ListpackWriter lp;
    lp.AddInt(static_cast<int64_t>(count_));
    lp.AddInt(0);
    lp.AddInt(static_cast<int64_t>(master_fields_.size()));
    for (const std::string& f : master_fields_) lp.Add(f);
    lp.AddInt(0);
    size_t si = 0;
    for (const Item& it : items_) {
      if (it.is_string) {
        lp.Add(strings_[si++]);
      } else {
        lp.AddInt(it.value);
      }
    }
    std::string key;
    AppendRawId(&key, master_);
    AppendString(&nodes_, key, false);
    AppendString(&nodes_, lp.Finish(), compress_);
    ++node_count_;
    items_.clear();
    strings_.clear();
    count_ = 0;
    bytes_ = 0;
  }

  void Emit() {
    Flush();
    AppendLength(out_, node_count_);
    out_->append(nodes_);
  }

 private:
  struct Item {
    Item(int64_t v) : value(v) {}  // NOLINT: implicit on purpose (items_.push_back(int))
    static Item String() {
      Item i(0);
      i.is_string = true;
      return i;
    }
    int64_t value;
    bool is_string = false;
  };
  void AddString(std::string_view s) {
    items_.push_back(Item::String());
    strings_.emplace_back(s);
    bytes_ += s.size() + 2;
  }

  std::string* out_;
  bool compress_;
  std::string nodes_;
  size_t node_count_ = 0;
  StreamID master_;
  std::vector<std::string> master_fields_;
  std::vector<Item> items_;
  std::vector<std::string> strings_;
  size_t count_ = 0;
  size_t bytes_ = 0;
};

constexpr uint64_t kExtIdmp = 1;
constexpr uint64_t kExtNack = 2;

bool HasNacked(const ConsumerGroup& g) {
  size_t owned = 0;
  for (const auto& [name, c] : g.consumers()) owned += c->pel.size();
  return owned < g.pel().size();
}

// Which extension sections the stream needs (0: plain Redis 7 format).
uint64_t ExtensionFlags(const Stream& s) {
  uint64_t flags = 0;
  const StreamIdmp* idmp = s.idmp();
  if (idmp != nullptr &&
      !idmp->IsTrivial(StreamIdmp::kDefaultDuration, StreamIdmp::kDefaultMaxsize)) {
    flags |= kExtIdmp;
  }
  if (const StreamGroups* groups = s.groups()) {
    for (const auto& [name, g] : groups->all()) {
      if (HasNacked(*g)) {
        flags |= kExtNack;
        break;
      }
    }
  }
  return flags;
}

void AppendExtensions(std::string* out, const Stream& s, uint64_t flags, bool compress) {
  AppendLength(out, flags);
  if (flags & kExtIdmp) {
    const StreamIdmp& idmp = *s.idmp();
    AppendLength(out, static_cast<uint64_t>(idmp.duration()));
    AppendLength(out, static_cast<uint64_t>(idmp.maxsize()));
    AppendLength(out, idmp.iids_added());
    AppendLength(out, idmp.iids_duplicates());
    AppendLength(out, idmp.pids_tracked());
    idmp.ForEachProducer(
        [&](std::string_view pid, size_t count) {
          AppendString(out, pid, compress);
          AppendLength(out, count);
        },
        [&](std::string_view iid, StreamID id) {
          AppendString(out, iid, compress);
          AppendIdLengths(out, id);
        });
  }
  if (flags & kExtNack) {
    for (const auto& [name, g] : s.groups()->all()) {
      std::vector<const PendingEntry*> nacked = g->NackedInOrder();
      AppendLength(out, nacked.size());
      for (const PendingEntry* pe : nacked) {
        AppendRawId(out, pe->id);
        AppendLength(out, pe->delivery_count);
      }
    }
  }
}

bool Fail(std::string* error, std::string_view what) {
  *error = std::string(what);
  return false;
}

// Delivery, seen and active times are Unix milliseconds that commands subtract from the clock
// (idle times). Redis and vireo only ever store times in [0, now] (XCLAIM clamps TIME and IDLE
// to that), so anything negative or absurdly far ahead is corrupt, and refusing it keeps
// `now - time` from overflowing in every command that reads it.
constexpr int64_t kMaxMillis = int64_t{1} << 53;
bool SaneMillis(int64_t ms) { return ms >= 0 && ms <= kMaxMillis; }

// Appends the live entries of one node's listpack to the stream. Whatever the mode, every
// index stays within the node and live IDs strictly increase (the stream's invariant);
// `deep` also checks the node's bookkeeping as Redis's deep sanitization does: the master
// entry's live and deleted counts, each entry's flags and back-count, and that deleted
// entries' IDs are in order too. `*last_seen` is the last ID of the previous node (any entry).
bool LoadNode(std::string_view key, std::string_view blob, bool deep, Stream* stream,
              const Stream::NodeLimits& limits, StreamID* last_seen, bool* seen_any) {
  if (key.size() != 16) return false;
  StreamID master = LoadRawId(key.data());
  ListpackReader r;
  if (!r.Init(blob, deep)) return false;
  std::vector<std::string> elems;
  PackedElem e;
  char buf[32];
  while (r.Next(&e)) elems.emplace_back(e.View(buf));
  if (!r.ok() || elems.empty()) return false;
  size_t pos = 0;
  auto next_int = [&](int64_t* v) {
    return pos < elems.size() && StringToInt64Strict(elems[pos++], v);
  };
  int64_t count, deleted, nmaster;
  if (!next_int(&count) || !next_int(&deleted) || !next_int(&nmaster) || nmaster < 0 ||
      static_cast<size_t>(nmaster) > elems.size() - pos) {
    return false;
  }
  std::vector<std::string_view> master_fields;
  for (int64_t i = 0; i < nmaster; ++i) master_fields.push_back(elems[pos++]);
  int64_t zero;
  if (!next_int(&zero) || zero != 0) return false;
  std::vector<std::string_view> fv;
  int64_t live = 0, dead = 0;
  while (pos < elems.size()) {
    int64_t flags, ms_delta, seq_delta;
    if (!next_int(&flags) || !next_int(&ms_delta) || !next_int(&seq_delta)) return false;
    StreamID id{master.ms + static_cast<uint64_t>(ms_delta),
                master.seq + static_cast<uint64_t>(seq_delta)};
    fv.clear();
    int64_t expected_count;
    if (flags & kFlagSameFields) {
      if (master_fields.size() > elems.size() - pos) return false;
      for (std::string_view f : master_fields) {
        fv.push_back(f);
        fv.push_back(elems[pos++]);
      }
      expected_count = static_cast<int64_t>(master_fields.size()) + 3;
    } else {
      int64_t n;
      if (!next_int(&n) || n < 0 || static_cast<size_t>(n) > (elems.size() - pos) / 2) {
        return false;
      }
      for (int64_t i = 0; i < 2 * n; ++i) fv.push_back(elems[pos++]);
      expected_count = 2 * n + 4;
    }
    int64_t lp_count;
    if (!next_int(&lp_count)) return false;
    if (deep) {
      if ((flags & ~(kFlagDeleted | kFlagSameFields)) != 0 || lp_count != expected_count ||
          ms_delta < 0 || id < master || (*seen_any && id <= *last_seen) || fv.empty()) {
        return false;
      }
      *last_seen = id;
      *seen_any = true;
    }
    if (flags & kFlagDeleted) {
      ++dead;
      continue;
    }
    if (fv.empty() || (!stream->empty() && id <= stream->last_id())) return false;
    ++live;
    stream->Append(id, fv, limits);
  }
  return !deep || (live == count && dead == deleted && live + dead > 0);
}

bool ReadExtensions(Reader& r, Stream* stream, const std::vector<ConsumerGroup*>& groups,
                    std::string* error) {
  uint64_t flags;
  if (!r.ReadLength(&flags)) return Fail(error, "short read");
  if ((flags & ~(kExtIdmp | kExtNack)) != 0) return Fail(error, "unknown stream extension");
  if (flags & kExtIdmp) {
    uint64_t duration, maxsize, added, duplicates, producers;
    if (!r.ReadLength(&duration) || !r.ReadLength(&maxsize) || !r.ReadLength(&added) ||
        !r.ReadLength(&duplicates) || !r.ReadLength(&producers)) {
      return Fail(error, "short read");
    }
    if (duration < StreamIdmp::kMinDuration || duration > StreamIdmp::kMaxDuration ||
        maxsize < StreamIdmp::kMinMaxsize || maxsize > StreamIdmp::kMaxMaxsize) {
      return Fail(error, "bad IDMP settings");
    }
    auto idmp =
        std::make_unique<StreamIdmp>(static_cast<int64_t>(duration), static_cast<int64_t>(maxsize));
    std::string pid, iid;
    for (uint64_t p = 0; p < producers; ++p) {
      uint64_t n;
      if (!r.ReadString(&pid) || !r.ReadLength(&n)) return Fail(error, "short read");
      for (uint64_t i = 0; i < n; ++i) {
        uint64_t ms, seq;
        if (!r.ReadString(&iid) || !r.ReadLength(&ms) || !r.ReadLength(&seq)) {
          return Fail(error, "short read");
        }
        idmp->Restore(pid, iid, {ms, seq});
      }
    }
    idmp->set_counters(added, duplicates);
    stream->set_idmp(std::move(idmp));
  }
  if (flags & kExtNack) {
    char raw[16];
    for (ConsumerGroup* g : groups) {
      uint64_t n;
      if (!r.ReadLength(&n)) return Fail(error, "short read");
      for (uint64_t i = 0; i < n; ++i) {
        uint64_t count;
        if (!r.Read(raw, 16) || !r.ReadLength(&count)) return Fail(error, "short read");
        StreamID id = LoadRawId(raw);
        if (g->FindPending(id) != nullptr) return Fail(error, "NACKed entry also owned");
        g->AddNacked(id, count);
      }
    }
  }
  return true;
}

}  // namespace

uint8_t StreamRdbType(const Value& value) {
  return ExtensionFlags(*value.As<Stream>()) != 0 ? kTypeStreamVireo : kTypeStreamListpacks2;
}

void AppendStream(std::string* out, const Value& value, bool compress) {
  const auto& s = *value.As<Stream>();
  uint64_t ext = ExtensionFlags(s);
  NodeBuilder nodes(out, compress);
  Stream::Iterator it(s, StreamID::Min(), StreamID::Max(), false);
  StreamEntryView e;
  while (it.Next(&e)) nodes.Add(e);
  nodes.Emit();
  AppendLength(out, s.length());
  AppendIdLengths(out, s.last_id());
  AppendIdLengths(out, s.first_id());
  AppendIdLengths(out, s.max_deleted_id());
  AppendLength(out, s.entries_added());
  const StreamGroups* groups = s.groups();
  if (groups == nullptr) {
    AppendLength(out, 0);
    if (ext != 0) AppendExtensions(out, s, ext, compress);
    return;
  }
  AppendLength(out, groups->size());
  for (const auto& [name, group] : groups->all()) {
    AppendString(out, name, compress);
    AppendIdLengths(out, group->last_id);
    AppendLength(out, static_cast<uint64_t>(group->entries_read));
    // Entries nobody owns can't be represented in Redis's format (every PEL entry has an
    // owner there), so only owned ones are written.
    size_t owned = 0;
    for (const auto& [id, pe] : group->pel()) owned += pe.consumer != nullptr;
    AppendLength(out, owned);
    for (const auto& [id, pe] : group->pel()) {
      if (pe.consumer == nullptr) continue;
      AppendRawId(out, id);
      AppendMillis(out, pe.delivery_time_ms);
      AppendLength(out, pe.delivery_count);
    }
    AppendLength(out, group->consumers().size());
    for (const auto& [cname, consumer] : group->consumers()) {
      AppendString(out, cname, compress);
      AppendMillis(out, consumer->seen_time_ms);
      AppendLength(out, consumer->pel.size());
      for (const auto& [id, pe] : consumer->pel) AppendRawId(out, id);
    }
  }
  if (ext != 0) AppendExtensions(out, s, ext, compress);
}

bool ReadStream(Reader& r, uint8_t rdb_type, Server& server, Value* out, std::string* error) {
  // The extension type carries the STREAM_LISTPACKS_2 layout.
  const uint8_t type =
      rdb_type == kTypeStreamVireo ? static_cast<uint8_t>(kTypeStreamListpacks2) : rdb_type;
  std::vector<ConsumerGroup*> loaded_groups;
  auto stream = std::make_unique<Stream>();
  Stream::NodeLimits limits{static_cast<size_t>(server.cfg().stream_node_max_bytes),
                            static_cast<size_t>(server.cfg().stream_node_max_entries)};
  uint64_t nodes;
  if (!r.ReadLength(&nodes)) return Fail(error, "short read");
  std::string key, blob;
  StreamID last_seen;
  bool seen_any = false;
  for (uint64_t i = 0; i < nodes; ++i) {
    if (!r.ReadString(&key) || !r.ReadString(&blob)) return Fail(error, "short read");
    if (!LoadNode(key, blob, r.deep(), stream.get(), limits, &last_seen, &seen_any)) {
      return Fail(error, "bad stream node");
    }
  }
  uint64_t length, last_ms, last_seq;
  if (!r.ReadLength(&length) || !r.ReadLength(&last_ms) || !r.ReadLength(&last_seq)) {
    return Fail(error, "short read");
  }
  if (length != stream->length()) return Fail(error, "stream length mismatch");
  StreamID last{last_ms, last_seq};
  if (!stream->empty() && last < stream->last_id()) return Fail(error, "bad last ID");
  stream->set_last_id(last);
  if (type >= kTypeStreamListpacks2) {
    uint64_t v[5];
    for (uint64_t& x : v) {
      if (!r.ReadLength(&x)) return Fail(error, "short read");
    }
    // v[0..1] is the recorded first ID: the stream derives it from its entries.
    stream->set_max_deleted_id({v[2], v[3]});
    stream->set_entries_added(v[4]);
  } else {
    stream->set_entries_added(length);
  }
  uint64_t ngroups;
  if (!r.ReadLength(&ngroups)) return Fail(error, "short read");
  for (uint64_t g = 0; g < ngroups; ++g) {
    std::string name;
    uint64_t gms, gseq;
    if (!r.ReadString(&name) || !r.ReadLength(&gms) || !r.ReadLength(&gseq)) {
      return Fail(error, "short read");
    }
    StreamID gid{gms, gseq};
    int64_t entries_read;
    if (type >= kTypeStreamListpacks2) {
      uint64_t v;
      if (!r.ReadLength(&v)) return Fail(error, "short read");
      entries_read = static_cast<int64_t>(v);
    } else {
      entries_read = stream->EstimateDistanceFromFirstEver(gid);
    }
    ConsumerGroup* group = stream->MutableGroups().Create(name, gid, entries_read);
    if (group == nullptr) return Fail(error, "duplicate consumer group");
    loaded_groups.push_back(group);
    struct Pel {
      int64_t time;
      uint64_t count;
      bool owned = false;
    };
    std::map<StreamID, Pel> pel;
    uint64_t npel;
    if (!r.ReadLength(&npel)) return Fail(error, "short read");
    char raw[16];
    for (uint64_t i = 0; i < npel; ++i) {
      Pel p;
      if (!r.Read(raw, 16) || !r.ReadMillis(&p.time) || !r.ReadLength(&p.count)) {
        return Fail(error, "short read");
      }
      if (!SaneMillis(p.time)) return Fail(error, "bad PEL delivery time");
      if (!pel.emplace(LoadRawId(raw), p).second) return Fail(error, "duplicate PEL entry");
    }
    uint64_t nconsumers;
    if (!r.ReadLength(&nconsumers)) return Fail(error, "short read");
    for (uint64_t c = 0; c < nconsumers; ++c) {
      std::string cname;
      int64_t seen, active;
      if (!r.ReadString(&cname) || !r.ReadMillis(&seen)) return Fail(error, "short read");
      active = seen;  // the best estimate before STREAM_LISTPACKS_3, as Redis 7.2 says
      if (type >= kTypeStreamListpacks3 && !r.ReadMillis(&active)) {
        return Fail(error, "short read");
      }
      if (!SaneMillis(seen) || (active != -1 && !SaneMillis(active))) {
        return Fail(error, "bad consumer time");
      }
      bool created;
      StreamConsumer* consumer = group->GetOrCreateConsumer(cname, seen, &created);
      if (!created) return Fail(error, "duplicate consumer");
      consumer->seen_time_ms = seen;
      consumer->active_time_ms = active;
      uint64_t n;
      if (!r.ReadLength(&n)) return Fail(error, "short read");
      for (uint64_t i = 0; i < n; ++i) {
        if (!r.Read(raw, 16)) return Fail(error, "short read");
        auto it = pel.find(LoadRawId(raw));
        if (it == pel.end() || it->second.owned)
          return Fail(error, "consumer PEL entry not in group PEL");
        it->second.owned = true;
        group->AddPending(it->first, consumer, it->second.time, it->second.count);
      }
    }
    // Every PEL entry of these formats has an owner (unowned, NACKed entries travel in the
    // extension section); the group code relies on it, so this is checked in every mode.
    for (const auto& [id, p] : pel) {
      if (!p.owned) return Fail(error, "stream PEL entry without consumer");
    }
  }
  if (rdb_type == kTypeStreamVireo && !ReadExtensions(r, stream.get(), loaded_groups, error)) {
    return false;
  }
  *out = Value::Object(ValueType::kStream, std::move(stream));
  return true;
}

}  // namespace vireo::rdb
