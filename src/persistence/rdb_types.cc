// RDB codecs for hashes, sets and sorted sets (streams: rdb_stream.cc).
//
// Compact encodings are written in their compact RDB form where Redis 7.0 has one (hash and
// sorted-set listpacks, intsets), so a round trip through Redis keeps OBJECT ENCODING; a
// listpack set is written as a plain set, since RDB 10 has no set listpack (Redis 7.0 would
// refuse type 20).
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <unordered_set>
#include <vector>

#include "core/config.h"
#include "persistence/rdb_internal.h"
#include "types/hash_object.h"
#include "types/set_object.h"
#include "types/zset.h"
#include "util/strings.h"

namespace vireo::rdb {

namespace {

HashLimits HashLimitsOf(const ServerConfig& c) {
  return {static_cast<size_t>(c.hash_max_listpack_entries),
          static_cast<size_t>(c.hash_max_listpack_value)};
}

SetLimits SetLimitsOf(const ServerConfig& c) {
  return {static_cast<size_t>(c.set_max_intset_entries),
          static_cast<size_t>(c.set_max_listpack_entries),
          static_cast<size_t>(c.set_max_listpack_value)};
}

ZSet::Limits ZsetLimitsOf(const ServerConfig& c) {
  return {static_cast<size_t>(c.zset_max_listpack_entries),
          static_cast<size_t>(c.zset_max_listpack_value)};
}

// ---- writers ----------------------------------------------------------------------------------

// RDB_TYPE_HASH_METADATA: the earliest expiry, then per field its TTL as (when - earliest + 1),
// 0 for none, so most TTLs fit a short length encoding.
void AppendHashWithTtls(std::string* out, const HashObject& h, bool compress) {
  const int64_t min = h.NextFieldExpire();
  AppendMillis(out, min);
  AppendLength(out, h.size());
  h.ForEach([&](std::string_view f, std::string_view v) {
    int64_t when = h.FieldExpire(f);
    AppendLength(out, when == FieldTtls::kNoTtl ? 0 : static_cast<uint64_t>(when - min) + 1);
    AppendString(out, f, compress);
    AppendString(out, v, compress);
  });
}

void AppendHash(std::string* out, const HashObject& h, bool compress) {
  if (h.has_field_ttls()) {
    AppendHashWithTtls(out, h, compress);
    return;
  }
  if (h.is_listpack()) {
    ListpackWriter lp;
    h.ForEach([&](std::string_view f, std::string_view v) {
      lp.Add(f);
      lp.Add(v);
    });
    AppendString(out, lp.Finish(), compress);
    return;
  }
  AppendLength(out, h.size());
  h.ForEach([&](std::string_view f, std::string_view v) {
    AppendString(out, f, compress);
    AppendString(out, v, compress);
  });
}

std::string IntsetBlob(const SetObject& s) {
  std::vector<int64_t> v;
  v.reserve(s.size());
  s.ForEach([&](std::string_view m) {
    int64_t x = 0;
    ParseInt64(m, &x);
    v.push_back(x);
  });
  std::sort(v.begin(), v.end());
  uint32_t width = 2;
  for (int64_t x : v) {
    if (x < INT32_MIN || x > INT32_MAX) {
      width = 8;
      break;
    }
    if (x < INT16_MIN || x > INT16_MAX) width = 4;
  }
  std::string blob;
  auto put = [&](uint64_t x, uint32_t bytes) {
    for (uint32_t i = 0; i < bytes; ++i) blob.push_back(static_cast<char>((x >> (8 * i)) & 0xff));
  };
  put(width, 4);
  put(v.size(), 4);
  for (int64_t x : v) put(static_cast<uint64_t>(x), width);
  return blob;
}

void AppendSet(std::string* out, const SetObject& s, bool compress) {
  if (s.encoding() == SetObject::Encoding::kIntSet) {
    AppendString(out, IntsetBlob(s), compress);
    return;
  }
  if (s.may_repeat()) {
    // A listpack kept as an unsanitized payload gave it may repeat a member; the plain set
    // type written here can't (every loader refuses a repeat in it), so one of each goes out.
    std::vector<std::string_view> unique;
    std::unordered_set<std::string_view> seen;
    s.ForEach([&](std::string_view m) {
      if (seen.insert(m).second) unique.push_back(m);
    });
    AppendLength(out, unique.size());
    for (std::string_view m : unique) AppendString(out, m, compress);
    return;
  }
  AppendLength(out, s.size());
  s.ForEach([&](std::string_view m) { AppendString(out, m, compress); });
}

void AppendZset(std::string* out, const ZSet& z, bool compress) {
  if (z.packed()) {
    ListpackWriter lp;
    z.ForEach([&](std::string_view m, double score) {
      lp.Add(m);
      lp.Add(FormatDouble(score));
    });
    AppendString(out, lp.Finish(), compress);
    return;
  }
  // Highest score first, as Redis writes it (its loader then inserts at the head cheaply).
  AppendLength(out, z.size());
  for (ZSet::Iter it = z.At(z.size() - 1); it.Valid(); it.Prev()) {
    AppendString(out, it.member(), compress);
    AppendDoubleBinary(out, it.score());
  }
}

// ---- readers ----------------------------------------------------------------------------------

template <typename PackedReader>
bool ForEachPacked(std::string_view blob, bool deep, std::vector<std::string>* out) {
  PackedReader r;
  if (!r.Init(blob, deep)) return false;
  PackedElem e;
  char buf[32];
  while (r.Next(&e)) out->emplace_back(e.View(buf));
  return r.ok();
}

// Redis's words for a packed blob that fails validation, by RDB type.
const char* PackedIntegrityError(uint8_t type) {
  switch (type) {
    case kTypeHashZiplist:
      return "Hash ziplist integrity check failed.";
    case kTypeZsetZiplist:
      return "Zset ziplist integrity check failed.";
    case kTypeHashZipmap:
      return "Zipmap integrity check failed.";
    case kTypeSetIntset:
      return "Intset integrity check failed.";
    case kTypeSetListpack:
      return "Set listpack integrity check failed.";
    case kTypeZsetListpack:
      return "Zset listpack integrity check failed.";
    default:
      return "Hash listpack integrity check failed.";
  }
}

bool ReadPackedBlob(Reader& r, uint8_t type, std::vector<std::string>* elems) {
  std::string scratch;
  std::string_view blob;
  if (!r.ReadString(&blob, &scratch)) return false;
  // Ziplists and zipmaps are converted entry by entry, so Redis validates them deeply whatever
  // sanitize-dump-payload says; listpacks and intsets are kept, and checked deeply on request.
  switch (type) {
    case kTypeHashZiplist:
    case kTypeZsetZiplist:
      return ForEachPacked<ZiplistReader>(blob, true, elems);
    case kTypeHashZipmap:
      return ZipmapForEach(
          blob,
          [](void* arg, std::string_view f, std::string_view v) {
            auto* out = static_cast<std::vector<std::string>*>(arg);
            out->emplace_back(f);
            out->emplace_back(v);
          },
          elems);
    case kTypeSetIntset:
      return IntsetForEach(
          blob,
          [](void* arg, int64_t v) {
            static_cast<std::vector<std::string>*>(arg)->push_back(Int64ToString(v));
          },
          elems, r.deep());
    default: {
      if (ForEachPacked<ListpackReader>(blob, r.deep(), elems)) return true;
      // Without deep sanitization Redis checks only a listpack's header and end byte and
      // takes the rest on trust; vireo keeps the whole elements (fields with their values)
      // before the first entry it cannot read, and says so.
      const size_t group = type == kTypeSetListpack ? 1 : 2;
      if (r.deep() || elems->size() < group) return false;
      const size_t total = elems->size();
      elems->resize(total - total % group);
      spdlog::warn(
          "Listpack payload with unreadable entries loaded without them "
          "(sanitize-dump-payload no): {} elements kept",
          elems->size());
      return true;
    }
  }
}

// Redis caps field expiry times at 2^46 ms; anything above is corrupt.
constexpr uint64_t kMaxFieldExpire = 0x0000FFFFFFFFFFFFULL;

bool ReadHashWithTtls(Reader& r, uint8_t type, HashObject* hash, const HashLimits& limits,
                      std::string* error) {
  int64_t min = 0;
  if (!r.ReadMillis(&min)) return Fail(error, kShortReadDetail);
  if (static_cast<uint64_t>(min) > kMaxFieldExpire) return Fail(error, "bad hash min expire");
  if (type == kTypeHashListpackEx) {
    std::vector<std::string> elems;
    if (!ReadPackedBlob(r, kTypeHashListpack, &elems) || elems.size() % 3 != 0) {
      return Fail(error, "bad hash blob");
    }
    if (elems.size() / 3 > limits.max_listpack_entries) hash->ConvertToTable();
    for (size_t i = 0; i < elems.size(); i += 3) {
      int64_t when = 0;
      if (!ParseInt64(elems[i + 2], &when) || when < 0 ||
          static_cast<uint64_t>(when) > kMaxFieldExpire) {
        return Fail(error, "bad hash field ttl");
      }
      if (!hash->Set(elems[i], elems[i + 1], limits)) return Fail(error, "duplicate hash field");
      if (when != 0) hash->SetFieldExpire(elems[i], when);
    }
    return true;
  }
  uint64_t n;
  if (!r.ReadLength(&n)) return Fail(error, kShortReadDetail);
  if (n > limits.max_listpack_entries) hash->ConvertToTable();
  std::string f, v;
  for (uint64_t i = 0; i < n; ++i) {
    uint64_t ttl;
    if (!r.ReadLength(&ttl) || !r.ReadString(&f) || !r.ReadString(&v)) {
      return Fail(error, kShortReadDetail);
    }
    uint64_t when = ttl == 0 ? 0 : ttl + static_cast<uint64_t>(min) - 1;
    if (when > kMaxFieldExpire) return Fail(error, "bad hash field ttl");
    if (!hash->Set(f, v, limits)) return Fail(error, "duplicate hash field");
    if (when != 0) hash->SetFieldExpire(f, static_cast<int64_t>(when));
  }
  return true;
}

bool ReadHash(Reader& r, uint8_t type, const ServerConfig& config, Value* out, std::string* error) {
  auto hash = std::make_unique<HashObject>();
  HashLimits limits = HashLimitsOf(config);
  if (type == kTypeHashMetadata || type == kTypeHashListpackEx) {
    if (!ReadHashWithTtls(r, type, hash.get(), limits, error)) return false;
  } else if (type == kTypeHash) {
    uint64_t n;
    if (!r.ReadLength(&n)) return Fail(error, kShortReadDetail);
    if (n > limits.max_listpack_entries) hash->ConvertToTable();
    std::string f, v;
    for (uint64_t i = 0; i < n; ++i) {
      if (!r.ReadString(&f) || !r.ReadString(&v)) return Fail(error, kShortReadDetail);
      if (!hash->Set(f, v, limits)) return Fail(error, "Duplicate hash fields detected");
    }
  } else {
    // A duplicate field is part of the blob's integrity check (Redis: "Hash ziplist integrity
    // check failed.", a zipmap's "Hash zipmap with dup elements").
    std::vector<std::string> elems;
    if (!ReadPackedBlob(r, type, &elems) || elems.size() % 2 != 0) {
      return Fail(error, PackedIntegrityError(type));
    }
    if (elems.size() / 2 > limits.max_listpack_entries) hash->ConvertToTable();
    for (size_t i = 0; i < elems.size(); i += 2) {
      if (!hash->Set(elems[i], elems[i + 1], limits)) {
        // Without deep sanitization Redis only finds a listpack's duplicates when it converts
        // the hash, and logs "listpack with dup elements"; vireo finds them on load.
        if (type == kTypeHashZipmap) return Fail(error, "Hash zipmap with dup elements");
        if (type == kTypeHashListpack && !r.deep()) {
          return Fail(error, "Hash listpack with dup elements");
        }
        return Fail(error, PackedIntegrityError(type));
      }
    }
  }
  if (hash->empty()) return Fail(error, kEmptyKeyDetail);
  *out = Value::Object(ValueType::kHash, std::move(hash));
  return true;
}

bool ReadSet(Reader& r, uint8_t type, const ServerConfig& config, Value* out, std::string* error) {
  SetLimits limits = SetLimitsOf(config);
  std::vector<std::string> members;
  if (type == kTypeSet) {
    uint64_t n;
    if (!r.ReadLength(&n)) return Fail(error, kShortReadDetail);
    // The count is only a claim: memory grows with the members actually present.
    members.reserve(ReserveHint(r, n));
    for (uint64_t i = 0; i < n; ++i) {
      if (!r.ReadString(&members.emplace_back())) return Fail(error, kShortReadDetail);
    }
  } else if (!ReadPackedBlob(r, type, &members)) {
    return Fail(error, PackedIntegrityError(type));
  }
  if (members.empty()) return Fail(error, kEmptyKeyDetail);
  auto set = SetObject::Create(members[0], members.size(), limits);
  size_t duplicates = 0;
  for (const std::string& m : members) {
    if (set->Add(m, limits)) continue;
    // Redis without deep sanitization keeps a listpack's duplicates (and counts them in
    // SCARD): so does vireo while the set stays a listpack (below). A payload too big for one
    // would be converted to a table, where Redis stops on the repeat; vireo keeps one of each.
    if (type == kTypeSetListpack && !r.deep()) {
      ++duplicates;
      continue;
    }
    return Fail(error,
                type == kTypeSet ? "Duplicate set members detected" : PackedIntegrityError(type));
  }
  if (duplicates != 0 && members.size() <= limits.max_listpack_entries) {
    set = SetObject::ListpackAsGiven(members);
  } else if (duplicates != 0) {
    spdlog::warn("Set listpack payload with {} duplicate members loaded without them", duplicates);
  }
  *out = Value::Object(ValueType::kSet, std::move(set));
  return true;
}

bool ParseScore(std::string_view s, double* out) {
  if (s == "inf" || s == "+inf") {
    *out = INFINITY;
  } else if (s == "-inf") {
    *out = -INFINITY;
  } else if (!ParseDouble(s, out)) {
    return false;
  }
  return true;
}

bool ReadZset(Reader& r, uint8_t type, const ServerConfig& config, Value* out, std::string* error) {
  ZSet::Limits limits = ZsetLimitsOf(config);
  std::vector<std::pair<std::string, double>> items;
  if (type == kTypeZset || type == kTypeZset2) {
    uint64_t n;
    if (!r.ReadLength(&n)) return Fail(error, kShortReadDetail);
    items.reserve(ReserveHint(r, n));
    for (uint64_t i = 0; i < n; ++i) {
      auto& [member, score] = items.emplace_back();
      bool ok = r.ReadString(&member) &&
                (type == kTypeZset2 ? r.ReadDoubleBinary(&score) : r.ReadDoubleString(&score));
      if (!ok) return Fail(error, kShortReadDetail);
      if (std::isnan(score)) return Fail(error, "Zset with NAN score detected");
    }
  } else {
    std::vector<std::string> elems;
    if (!ReadPackedBlob(r, type, &elems) || elems.size() % 2 != 0) {
      return Fail(error, PackedIntegrityError(type));
    }
    items.resize(elems.size() / 2);
    for (size_t i = 0; i < items.size(); ++i) {
      items[i].first = std::move(elems[2 * i]);
      if (!ParseScore(elems[2 * i + 1], &items[i].second)) {
        return Fail(error, PackedIntegrityError(type));
      }
    }
  }
  if (items.empty()) return Fail(error, kEmptyKeyDetail);
  size_t max_len = 0;
  for (const auto& it : items) max_len = std::max(max_len, it.first.size());
  auto zset = std::make_unique<ZSet>(items.size(), max_len, limits);
  for (const auto& [member, score] : items) {
    double existing;
    if (zset->Score(member, &existing)) {
      return Fail(error, type == kTypeZset || type == kTypeZset2 ? "Duplicate zset fields detected"
                                                                 : PackedIntegrityError(type));
    }
    zset->Insert(member, score, limits);
  }
  *out = Value::Object(ValueType::kZSet, std::move(zset));
  return true;
}

}  // namespace

uint8_t OtherRdbType(const Value& value) {
  switch (value.type()) {
    case ValueType::kHash: {
      const auto* h = value.As<HashObject>();
      if (h->has_field_ttls()) return kTypeHashMetadata;
      return h->is_listpack() ? kTypeHashListpack : kTypeHash;
    }
    case ValueType::kSet:
      return value.As<SetObject>()->encoding() == SetObject::Encoding::kIntSet ? kTypeSetIntset
                                                                               : kTypeSet;
    case ValueType::kZSet:
      return value.As<ZSet>()->packed() ? kTypeZsetListpack : kTypeZset2;
    case ValueType::kStream:
      return StreamRdbType(value);
    default:
      return kTypeString;
  }
}

void AppendOtherType(std::string* out, const Value& value, bool compress, const Spill& spill) {
  switch (value.type()) {
    case ValueType::kHash:
      AppendHash(out, *value.As<HashObject>(), compress);
      return;
    case ValueType::kSet:
      AppendSet(out, *value.As<SetObject>(), compress);
      return;
    case ValueType::kZSet:
      AppendZset(out, *value.As<ZSet>(), compress);
      return;
    case ValueType::kStream:
      AppendStream(out, value, compress, spill);
      return;
    default:
      return;
  }
}

bool ReadOtherType(Reader& r, uint8_t type, const ServerConfig& config, Value* out,
                   std::string* error) {
  switch (type) {
    case kTypeHash:
    case kTypeHashZipmap:
    case kTypeHashZiplist:
    case kTypeHashListpack:
    case kTypeHashMetadata:
    case kTypeHashListpackEx:
      return ReadHash(r, type, config, out, error);
    case kTypeSet:
    case kTypeSetIntset:
    case kTypeSetListpack:
      return ReadSet(r, type, config, out, error);
    case kTypeZset:
    case kTypeZset2:
    case kTypeZsetZiplist:
    case kTypeZsetListpack:
      return ReadZset(r, type, config, out, error);
    case kTypeStreamListpacks:
    case kTypeStreamListpacks2:
    case kTypeStreamListpacks3:
    case kTypeStreamVireo:
      return ReadStream(r, type, config, out, error);
    default:
      *error = "unknown value type " + std::to_string(type);
      return false;
  }
}

}  // namespace vireo::rdb
