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
// Each of the stream's blocks is written as one of Redis's listpack nodes, keyed by the block's
// master ID (16 bytes, big endian): a master entry (live count, deleted count, master fields,
// 0) followed by entries as flags, ms-delta, seq-delta, [field count, fields and values |
// values only when the fields equal the master's], and the entry's element count (for
// backward iteration). Blocks have that layout already, so both directions translate element
// by element (Stream::VisitBlocks, Stream::BlockLoader); deleted entries travel too, as in
// Redis's nodes.
#include <spdlog/spdlog.h>

#include <cstring>
#include <map>
#include <memory>
#include <vector>

#include "persistence/rdb_internal.h"
#include "types/stream.h"
#include "types/stream_groups.h"
#include "types/stream_idmp.h"

namespace vireo::rdb {

namespace {

constexpr int64_t kFlagDeleted = 1;
constexpr int64_t kFlagSameFields = 2;

void StoreRawId(StreamID id, char* p) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<char>((id.ms >> (8 * (7 - i))) & 0xff);
  for (int i = 0; i < 8; ++i) p[8 + i] = static_cast<char>((id.seq >> (8 * (7 - i))) & 0xff);
}

void AppendRawId(std::string* out, StreamID id) {
  char raw[16];
  StoreRawId(id, raw);
  out->append(raw, 16);
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

// Writes each block as one listpack node, element by element: the master entry (live count,
// deleted count, master fields, 0), then each entry (flags, ID deltas, [field count], strings,
// element count). Blocks keep deleted entries, as Redis's nodes do.
class NodeWriter : public Stream::BlockVisitor {
 public:
  NodeWriter(std::string* out, bool compress, const Spill& spill)
      : out_(out), compress_(compress), spill_(spill) {}

  void BeginBlock(StreamID master, uint32_t live, uint32_t deleted,
                  std::span<const Stream::RawString> master_fields) override {
    master_ = master;
    lp_.Reset();
    lp_.AddInt(live);
    lp_.AddInt(deleted);
    lp_.AddInt(static_cast<int64_t>(master_fields.size()));
    for (const Stream::RawString& f : master_fields) Add(f);
    lp_.AddInt(0);
  }

  void Entry(bool deleted, bool same_fields, StreamID id,
             std::span<const Stream::RawString> items) override {
    lp_.AddInt((deleted ? kFlagDeleted : 0) | (same_fields ? kFlagSameFields : 0));
    lp_.AddInt(static_cast<int64_t>(id.ms - master_.ms));
    lp_.AddInt(static_cast<int64_t>(id.seq - master_.seq));
    if (!same_fields) lp_.AddInt(static_cast<int64_t>(items.size() / 2));
    for (const Stream::RawString& r : items) Add(r);
    // The entry's element count, for backward iteration: flags, two deltas, [field count],
    // the strings, and this count itself.
    lp_.AddInt(static_cast<int64_t>(items.size() + (same_fields ? 3 : 4)));
  }

  void EndBlock() override {
    char key[16];
    StoreRawId(master_, key);
    AppendString(out_, std::string_view(key, 16), false);
    AppendString(out_, lp_.FinishView(), compress_, &lzf_scratch_);
    if (spill_) spill_();
  }

 private:
  void Add(const Stream::RawString& r) {
    if (r.is_int) {
      lp_.AddInt(r.ival);
    } else {
      lp_.Add(r.sval);  // a string that reads as an integer is stored as one, as Redis does
    }
  }

  std::string* out_;
  bool compress_;
  const Spill& spill_;
  StreamID master_;
  ListpackWriter lp_;
  std::string lzf_scratch_;
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
// One listpack node into the stream's block of the same layout. `elems` is scratch space.
// Without `deep` (sanitize-dump-payload no, where Redis keeps the node as it is and walks it
// only later), an entry that can't be read ends the node: the entries before it are kept and
// *salvaged says so, so that a payload Redis takes is taken (its RESTORE answers OK) without
// vireo ever reading past what is there.
bool LoadNode(std::string_view key, std::string_view blob, bool deep, Stream::BlockLoader& loader,
              std::vector<Stream::RawString>& elems, bool* salvaged) {
  if (key.size() != 16) return false;
  StreamID master = LoadRawId(key.data());
  ListpackReader r;
  if (!r.Init(blob, deep)) return false;
  elems.clear();
  PackedElem e;
  while (r.Next(&e)) elems.push_back({e.is_int, e.ival, e.sval});
  if (elems.empty() || (!r.ok() && deep)) return false;
  if (!r.ok()) *salvaged = true;
  size_t pos = 0;
  auto next_int = [&](int64_t* v) {
    if (pos >= elems.size()) return false;
    const Stream::RawString& x = elems[pos++];
    if (x.is_int) {
      *v = x.ival;
      return true;
    }
    return StringToInt64Strict(x.sval, v);
  };
  int64_t count, deleted, nmaster;
  if (!next_int(&count) || !next_int(&deleted) || !next_int(&nmaster) || nmaster < 0 ||
      static_cast<size_t>(nmaster) > elems.size() - pos) {
    return false;
  }
  std::span<const Stream::RawString> all(elems);
  auto master_fields = all.subspan(pos, static_cast<size_t>(nmaster));
  pos += static_cast<size_t>(nmaster);
  int64_t zero;
  if (!next_int(&zero) || zero != 0) return false;
  if (!loader.BeginBlock(master, master_fields, blob.size())) return false;
  int64_t live = 0, dead = 0;
  // One entry; false when it is malformed.
  auto load_entry = [&]() {
    int64_t flags, ms_delta, seq_delta;
    if (!next_int(&flags) || !next_int(&ms_delta) || !next_int(&seq_delta)) return false;
    StreamID id{master.ms + static_cast<uint64_t>(ms_delta),
                master.seq + static_cast<uint64_t>(seq_delta)};
    const bool same = (flags & kFlagSameFields) != 0;
    size_t strings = master_fields.size();
    if (!same) {
      int64_t n;
      if (!next_int(&n) || n < 0 || static_cast<size_t>(n) > (elems.size() - pos) / 2) {
        return false;
      }
      strings = 2 * static_cast<size_t>(n);
    }
    if (strings > elems.size() - pos) return false;
    auto items = all.subspan(pos, strings);
    pos += strings;
    int64_t lp_count;
    if (!next_int(&lp_count)) return false;
    if (deep && ((flags & ~(kFlagDeleted | kFlagSameFields)) != 0 ||
                 lp_count != static_cast<int64_t>(strings + (same ? 3 : 4)) || ms_delta < 0)) {
      return false;
    }
    const bool is_deleted = (flags & kFlagDeleted) != 0;
    if (!loader.Entry(is_deleted, same, id, items)) return false;
    ++(is_deleted ? dead : live);
    return true;
  };
  while (pos < elems.size()) {
    if (load_entry()) continue;
    if (deep) return false;
    *salvaged = true;
    break;
  }
  loader.EndBlock();
  return !deep || (live == count && dead == deleted && live + dead > 0);
}

bool ReadExtensions(Reader& r, Stream* stream, const std::vector<ConsumerGroup*>& groups,
                    std::string* error) {
  uint64_t flags;
  if (!r.ReadLength(&flags)) return Fail(error, kShortReadDetail);
  if ((flags & ~(kExtIdmp | kExtNack)) != 0) return Fail(error, "unknown stream extension");
  if (flags & kExtIdmp) {
    uint64_t duration, maxsize, added, duplicates, producers;
    if (!r.ReadLength(&duration) || !r.ReadLength(&maxsize) || !r.ReadLength(&added) ||
        !r.ReadLength(&duplicates) || !r.ReadLength(&producers)) {
      return Fail(error, kShortReadDetail);
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
      if (!r.ReadString(&pid) || !r.ReadLength(&n)) return Fail(error, kShortReadDetail);
      for (uint64_t i = 0; i < n; ++i) {
        uint64_t ms, seq;
        if (!r.ReadString(&iid) || !r.ReadLength(&ms) || !r.ReadLength(&seq)) {
          return Fail(error, kShortReadDetail);
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
      if (!r.ReadLength(&n)) return Fail(error, kShortReadDetail);
      for (uint64_t i = 0; i < n; ++i) {
        uint64_t count;
        if (!r.Read(raw, 16) || !r.ReadLength(&count)) return Fail(error, kShortReadDetail);
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

void AppendStream(std::string* out, const Value& value, bool compress, const Spill& spill) {
  const auto& s = *value.As<Stream>();
  uint64_t ext = ExtensionFlags(s);
  AppendLength(out, s.block_count());
  NodeWriter nodes(out, compress, spill);
  s.VisitBlocks(nodes);
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

bool ReadStream(Reader& r, uint8_t rdb_type, const ServerConfig& /*config*/, Value* out,
                std::string* error) {
  // The extension type carries the STREAM_LISTPACKS_2 layout.
  const uint8_t type =
      rdb_type == kTypeStreamVireo ? static_cast<uint8_t>(kTypeStreamListpacks2) : rdb_type;
  std::vector<ConsumerGroup*> loaded_groups;
  auto stream = std::make_unique<Stream>();
  uint64_t nodes;
  if (!r.ReadLength(&nodes)) return Fail(error, kShortReadDetail);
  std::string key, blob;
  std::vector<Stream::RawString> elems;
  bool salvaged = false;
  {
    Stream::BlockLoader loader(stream.get());
    for (uint64_t i = 0; i < nodes; ++i) {
      if (!r.ReadString(&key) || !r.ReadString(&blob)) return Fail(error, kShortReadDetail);
      if (key.size() != 16) {
        return Fail(error, "Stream node key entry is not the size of a stream ID");
      }
      if (!LoadNode(key, blob, r.deep(), loader, elems, &salvaged)) {
        return Fail(error, "Stream listpack integrity check failed.");
      }
    }
  }
  uint64_t length, last_ms, last_seq;
  if (!r.ReadLength(&length) || !r.ReadLength(&last_ms) || !r.ReadLength(&last_seq)) {
    return Fail(error, kShortReadDetail);
  }
  if (salvaged) {
    spdlog::warn(
        "Stream payload with unreadable entries loaded without them (sanitize-dump-payload no): "
        "{} of {} entries kept",
        stream->length(), length);
  } else if (length != stream->length()) {
    return Fail(error, "Stream length inconsistent with rax entries");
  }
  StreamID last{last_ms, last_seq};
  if (!stream->empty() && last < stream->last_id()) return Fail(error, "bad last ID");
  stream->set_last_id(last);
  if (type >= kTypeStreamListpacks2) {
    uint64_t v[5];
    for (uint64_t& x : v) {
      if (!r.ReadLength(&x)) return Fail(error, kShortReadDetail);
    }
    // v[0..1] is the recorded first ID: the stream derives it from its entries.
    stream->set_max_deleted_id({v[2], v[3]});
    stream->set_entries_added(v[4]);
  } else {
    stream->set_entries_added(length);
  }
  uint64_t ngroups;
  if (!r.ReadLength(&ngroups)) return Fail(error, kShortReadDetail);
  for (uint64_t g = 0; g < ngroups; ++g) {
    std::string name;
    uint64_t gms, gseq;
    if (!r.ReadString(&name) || !r.ReadLength(&gms) || !r.ReadLength(&gseq)) {
      return Fail(error, kShortReadDetail);
    }
    StreamID gid{gms, gseq};
    int64_t entries_read;
    if (type >= kTypeStreamListpacks2) {
      uint64_t v;
      if (!r.ReadLength(&v)) return Fail(error, kShortReadDetail);
      entries_read = static_cast<int64_t>(v);
    } else {
      entries_read = stream->EstimateDistanceFromFirstEver(gid);
    }
    ConsumerGroup* group = stream->MutableGroups().Create(name, gid, entries_read);
    if (group == nullptr) return Fail(error, "Duplicated consumer group name");
    loaded_groups.push_back(group);
    struct Pel {
      int64_t time;
      uint64_t count;
      bool owned = false;
    };
    std::map<StreamID, Pel> pel;
    uint64_t npel;
    if (!r.ReadLength(&npel)) return Fail(error, kShortReadDetail);
    char raw[16];
    for (uint64_t i = 0; i < npel; ++i) {
      Pel p;
      if (!r.Read(raw, 16) || !r.ReadMillis(&p.time) || !r.ReadLength(&p.count)) {
        return Fail(error, kShortReadDetail);
      }
      if (!SaneMillis(p.time)) return Fail(error, "bad PEL delivery time");
      if (!pel.emplace(LoadRawId(raw), p).second)
        return Fail(error, "Duplicated global PEL entry loading stream consumer group");
    }
    uint64_t nconsumers;
    if (!r.ReadLength(&nconsumers)) return Fail(error, kShortReadDetail);
    for (uint64_t c = 0; c < nconsumers; ++c) {
      std::string cname;
      int64_t seen, active;
      if (!r.ReadString(&cname) || !r.ReadMillis(&seen)) return Fail(error, kShortReadDetail);
      active = seen;  // the best estimate before STREAM_LISTPACKS_3, as Redis 7.2 says
      if (type >= kTypeStreamListpacks3 && !r.ReadMillis(&active)) {
        return Fail(error, kShortReadDetail);
      }
      if (!SaneMillis(seen) || (active != -1 && !SaneMillis(active))) {
        return Fail(error, "bad consumer time");
      }
      bool created;
      StreamConsumer* consumer = group->GetOrCreateConsumer(cname, seen, &created);
      if (!created) return Fail(error, "Duplicate stream consumer detected.");
      consumer->seen_time_ms = seen;
      consumer->active_time_ms = active;
      uint64_t n;
      if (!r.ReadLength(&n)) return Fail(error, kShortReadDetail);
      for (uint64_t i = 0; i < n; ++i) {
        if (!r.Read(raw, 16)) return Fail(error, kShortReadDetail);
        auto it = pel.find(LoadRawId(raw));
        if (it == pel.end() || it->second.owned)
          return Fail(error, "Consumer entry not found in group global PEL");
        it->second.owned = true;
        group->AddPending(it->first, consumer, it->second.time, it->second.count);
      }
    }
    // Every PEL entry of these formats has an owner (unowned, NACKed entries travel in the
    // extension section); the group code relies on it, so this is checked in every mode.
    for (const auto& [id, p] : pel) {
      if (!p.owned) return Fail(error, "Stream CG PEL entry without consumer");
    }
  }
  if (rdb_type == kTypeStreamVireo && !ReadExtensions(r, stream.get(), loaded_groups, error)) {
    return false;
  }
  *out = Value::Object(ValueType::kStream, std::move(stream));
  return true;
}

}  // namespace vireo::rdb
