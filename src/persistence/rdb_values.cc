// Per-type RDB value codecs: what each value type is written as, and how every type and
// encoding Redis writes is read back.
#include <cstring>
#include <memory>

#include "core/config.h"
#include "persistence/rdb_internal.h"
#include "types/packed_list.h"
#include "util/strings.h"

namespace vireo::rdb {

namespace {

// Redis's quicklist node size limits for negative list-max-listpack-size values.
size_t ListNodeByteLimit(int fill) {
  static constexpr size_t kLimits[] = {4096, 8192, 16384, 32768, 65536};
  int i = -fill - 1;
  if (i < 0) i = 0;
  if (i > 4) i = 4;
  return kLimits[i];
}

// Lists are written as quicklist 2 with listpack nodes, split with the list's own node rule,
// so Redis gets nodes of the size it would have built itself.
void AppendList(std::string* out, const PackedList& list, bool compress) {
  std::vector<std::string> nodes;
  ListpackWriter lp;
  int fill = list.max_listpack_size();
  size_t byte_limit = fill < 0 ? ListNodeByteLimit(fill) : SIZE_MAX;
  size_t count_limit = fill > 0 ? static_cast<size_t>(fill) : SIZE_MAX;
  list.ForRange(0, static_cast<int64_t>(list.size()) - 1, [&](std::string_view v) {
    // A rough upper bound of the entry's size: enough to keep nodes within the limit.
    size_t entry = v.size() + 11;
    if (lp.count() > 0 && (lp.count() >= count_limit || lp.bytes() + entry > byte_limit)) {
      nodes.push_back(lp.Finish());
      lp = ListpackWriter();
    }
    lp.Add(v);
    return true;
  });
  if (lp.count() > 0) nodes.push_back(lp.Finish());
  AppendLength(out, nodes.size());
  for (const std::string& node : nodes) {
    AppendLength(out, kQuicklistNodePacked);
    AppendString(out, node, compress);
  }
}

std::unique_ptr<PackedList> NewList(const ServerConfig& c) {
  return std::make_unique<PackedList>(static_cast<int>(c.list_max_listpack_size),
                                      static_cast<int>(c.list_compress_depth));
}

// Pushes every element of a listpack or ziplist blob onto the list.
template <typename PackedReader>
bool PushPacked(std::string_view blob, bool deep, PackedList* list) {
  PackedReader r;
  if (!r.Init(blob, deep)) return false;
  PackedElem e;
  char buf[32];
  while (r.Next(&e)) list->PushBack(e.View(buf));
  return r.ok();
}

bool ReadList(Reader& r, uint8_t type, const ServerConfig& config, Value* out, std::string* error) {
  auto list = NewList(config);
  uint64_t n;
  if (!r.ReadLength(&n)) return Fail(error, kShortReadDetail);
  std::string scratch;
  std::string_view s;
  if (type == kTypeList) {
    for (uint64_t i = 0; i < n; ++i) {
      if (!r.ReadString(&s, &scratch)) return Fail(error, kShortReadDetail);
      list->PushBack(s);
    }
  } else {
    for (uint64_t i = 0; i < n; ++i) {
      uint64_t container = kQuicklistNodePacked;
      if (type == kTypeListQuicklist2 && !r.ReadLength(&container))
        return Fail(error, kShortReadDetail);
      if (container != kQuicklistNodePacked && container != kQuicklistNodePlain) {
        return Fail(error, "Quicklist integrity check failed.");
      }
      if (!r.ReadString(&s, &scratch)) return Fail(error, kShortReadDetail);
      // A zero-length node is no container at all (Redis fails it as a short read would).
      if (s.empty()) return Fail(error, "Quicklist node of length 0");
      if (container == kQuicklistNodePlain) {
        list->PushBack(s);
        continue;
      }
      // Ziplist nodes (quicklist 1) are converted entry by entry, so Redis validates them
      // deeply whatever sanitize-dump-payload says; listpack nodes only when asked.
      if (type == kTypeListQuicklist2) {
        if (!PushPacked<ListpackReader>(s, r.deep(), list.get())) {
          return Fail(error, "Listpack integrity check failed.");
        }
      } else if (!PushPacked<ZiplistReader>(s, true, list.get())) {
        return Fail(error, "Ziplist integrity check failed.");
      }
    }
  }
  if (list->empty()) return Fail(error, kEmptyKeyDetail);
  list->ConvertAuto();
  *out = Value::Object(ValueType::kList, std::move(list));
  return true;
}

bool ReadListZiplist(Reader& r, const ServerConfig& config, Value* out, std::string* error) {
  auto list = NewList(config);
  std::string scratch;
  std::string_view s;
  if (!r.ReadString(&s, &scratch)) return Fail(error, kShortReadDetail);
  if (!PushPacked<ZiplistReader>(s, true, list.get())) {
    return Fail(error, "List ziplist integrity check failed.");
  }
  if (list->empty()) return Fail(error, kEmptyKeyDetail);
  list->ConvertAuto();
  *out = Value::Object(ValueType::kList, std::move(list));
  return true;
}

}  // namespace

uint8_t ValueRdbType(const Value& value) {
  switch (value.type()) {
    case ValueType::kString:
      return kTypeString;
    case ValueType::kList:
      return kTypeListQuicklist2;
    default:
      return OtherRdbType(value);
  }
}

void AppendValue(std::string* out, const Value& value, bool compress, const Spill& spill) {
  switch (value.type()) {
    case ValueType::kString: {
      int64_t v;
      if (value.GetInt(&v)) {
        AppendIntegerString(out, v);
      } else {
        char scratch[24];
        AppendString(out, value.StringView(scratch), compress);
      }
      return;
    }
    case ValueType::kList:
      AppendList(out, *value.As<PackedList>(), compress);
      return;
    default:
      // Hashes, sets, sorted sets and streams: rdb_types.cc.
      AppendOtherType(out, value, compress, spill);
      return;
  }
}

bool ReadValue(Reader& r, uint8_t type, const ServerConfig& config, Value* out,
               std::string* error) {
  switch (type) {
    case kTypeString: {
      std::string scratch;
      std::string_view s;
      if (!r.ReadString(&s, &scratch)) return Fail(error, kShortReadDetail);
      *out = Value::String(s);
      return true;
    }
    case kTypeList:
    case kTypeListQuicklist:
    case kTypeListQuicklist2:
      return ReadList(r, type, config, out, error);
    case kTypeListZiplist:
      return ReadListZiplist(r, config, out, error);
    case kTypeModule:
    case kTypeModule2:
      return Fail(error, "module values are not supported");
    default:
      return ReadOtherType(r, type, config, out, error);
  }
}

}  // namespace vireo::rdb
