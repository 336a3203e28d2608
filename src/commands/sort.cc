// SORT and SORT_RO over lists, sets and sorted sets: BY (with `key->field` hash lookups and
// patterns without '*' meaning "don't sort"), GET (with '#' for the element itself), LIMIT,
// ASC/DESC, ALPHA and STORE.
//
// Redis's rules kept here:
//  * Without sorting, lists and sorted sets keep their own order (DESC walks it backwards) and
//    only the LIMIT window is read; a set is sorted ALPHA anyway when the result is stored, so
//    the stored list does not depend on hash order.
//  * Numeric sorting parses each weight with strtod; one that is not a number fails the whole
//    command ("One or more scores can't be converted into double"). A missing BY key counts
//    as 0 (numeric) or sorts first (ALPHA). Equal numeric weights fall back to comparing the
//    elements as bytes, so the order is deterministic.
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <optional>

#include "commands/families.h"
#include "commands/helpers.h"
#include "core/arg_parser.h"
#include "core/command_table.h"
#include "core/config.h"
#include "scripting/scripting.h"
#include "server/acl_server.h"
#include "server/client.h"
#include "server/command_context.h"
#include "types/hash_object.h"
#include "types/packed_list.h"
#include "types/set_object.h"
#include "types/zset.h"
#include "util/strings.h"

namespace vireo {
namespace {

struct SortArgs {
  std::optional<std::string_view> by;
  std::vector<std::string_view> gets;
  int64_t offset = 0, count = -1;
  bool desc = false, alpha = false, dontsort = false;
  std::optional<std::string_view> store;
};

bool ParseSort(CommandContext& ctx, bool readonly, SortArgs* a) {
  ArgParser args(ctx, 2);
  while (args.HasNext()) {
    std::string_view value;
    if (args.Flag("ASC")) {
      a->desc = false;
    } else if (args.Flag("DESC")) {
      a->desc = true;
    } else if (args.Flag("ALPHA")) {
      a->alpha = true;
    } else if (args.remaining() >= 3 && args.Flag("LIMIT")) {
      a->offset = args.Int();
      a->count = args.Int();
    } else if (!readonly && args.Option("STORE", &value)) {
      a->store = value;
    } else if (args.Option("BY", &value)) {
      a->by = value;
      // A pattern without '*' can't name per-element keys: it only means "don't sort".
      if (value.find('*') == std::string_view::npos) {
        a->dontsort = true;
        continue;
      }
      // The keys a pattern names may live in any slot, on any node.
      if (ctx.cfg().cluster_enabled) {
        args.Fail("ERR BY option of SORT denied in Cluster mode.");
        break;
      }
      if (!ctx.acl_service().MayReadAnyKey(ctx.client, *ctx.spec, ctx.argv)) {
        args.Fail("ERR BY option of SORT denied due to insufficient ACL permissions.");
        break;
      }
    } else if (args.Option("GET", &value)) {
      if (ctx.cfg().cluster_enabled) {
        args.Fail("ERR GET option of SORT denied in Cluster mode.");
        break;
      }
      if (!ctx.acl_service().MayReadAnyKey(ctx.client, *ctx.spec, ctx.argv)) {
        args.Fail("ERR GET option of SORT denied due to insufficient ACL permissions.");
        break;
      }
      a->gets.push_back(value);
    } else {
      args.SyntaxError();
    }
  }
  return args.Check();
}

// The value a BY/GET pattern names for `element`: '#' is the element itself; otherwise the first
// '*' is replaced by the element, and "->field" after it reads a hash field instead of a string.
std::optional<std::string> LookupByPattern(CommandContext& ctx, std::string_view pattern,
                                           std::string_view element) {
  if (pattern == "#") return std::string(element);
  size_t star = pattern.find('*');
  if (star == std::string_view::npos) return std::nullopt;
  std::string_view field;
  size_t arrow = pattern.find("->", star + 1);
  size_t key_end = pattern.size();
  if (arrow != std::string_view::npos && arrow + 2 < pattern.size()) {
    field = pattern.substr(arrow + 2);
    key_end = arrow;
  }
  std::string key;
  key.reserve(key_end + element.size());
  key.append(pattern.substr(0, star));
  key.append(element);
  key.append(pattern.substr(star + 1, key_end - star - 1));
  DbEntry* entry = ctx.db.Find(key);
  if (entry == nullptr) return std::nullopt;
  if (!field.empty()) {
    if (entry->value.type() != ValueType::kHash) return std::nullopt;
    std::optional<std::string_view> v = entry->value.As<HashObject>()->Find(field);
    if (!v) return std::nullopt;
    return std::string(*v);
  }
  if (!entry->value.is_string()) return std::nullopt;
  char scratch[24];
  return std::string(entry->value.StringView(scratch));
}

struct Item {
  std::string element;
  double score = 0;
  std::optional<std::string> cmp;  // ALPHA with BY: the weight string, if any
};

Item MakeItem(std::string_view element) {
  Item item;
  item.element.assign(element);
  return item;
}

void SortGeneric(CommandContext& ctx, bool readonly) {
  SortArgs a;
  if (!ParseSort(ctx, readonly, &a)) return;
  std::string_view key = ctx.arg(1);
  DbEntry* entry = ctx.db.Find(key);
  ValueType type = ValueType::kList;
  if (entry != nullptr) {
    type = entry->value.type();
    if (type != ValueType::kList && type != ValueType::kSet && type != ValueType::kZSet) {
      ctx.reply.Error(errors::kWrongType);
      return;
    }
  }
  // A stored result, or one a script sees, must not depend on a set's hash order: Redis
  // sorts it lexicographically then.
  if (a.dontsort && type == ValueType::kSet && (a.store || ctx.scripting().running() != nullptr)) {
    a.dontsort = false;
    a.alpha = true;
    a.by.reset();
  }
  size_t len = 0;
  if (entry != nullptr) {
    if (type == ValueType::kList) len = entry->value.As<PackedList>()->size();
    if (type == ValueType::kSet) len = entry->value.As<SetObject>()->size();
    if (type == ValueType::kZSet) len = entry->value.As<ZSet>()->size();
  }
  auto vlen = static_cast<int64_t>(len);
  // Both LIMIT numbers are clamped to the value's length first, so `start + count` can't
  // overflow whatever the client sent (INT64_MAX included).
  int64_t start = std::clamp<int64_t>(a.offset, 0, vlen);
  int64_t count = std::clamp<int64_t>(a.count, -1, vlen);
  int64_t end = count < 0 ? vlen - 1 : start + count - 1;
  if (start >= vlen) {
    start = vlen - 1;
    end = vlen - 2;
  }
  if (end >= vlen) end = vlen - 1;

  std::vector<Item> items;
  bool windowed = false;  // only [start, end] was loaded
  if (entry != nullptr) {
    if (type == ValueType::kList) {
      auto* list = entry->value.As<PackedList>();
      if (a.dontsort) {
        windowed = true;
        if (end >= start) {
          auto push = [&](std::string_view v) {
            items.push_back(MakeItem(v));
            return true;
          };
          if (a.desc) {
            list->ForRangeReverse(vlen - 1 - end, vlen - 1 - start, push);
          } else {
            list->ForRange(start, end, push);
          }
        }
      } else {
        list->ForRange(0, vlen - 1, [&](std::string_view v) {
          items.push_back(MakeItem(v));
          return true;
        });
      }
    } else if (type == ValueType::kSet) {
      entry->value.As<SetObject>()->ForEach(
          [&](std::string_view m) { items.push_back(MakeItem(m)); });
    } else {
      auto* z = entry->value.As<ZSet>();
      // Redis converts a listpack sorted set to a skiplist here, visibly to OBJECT ENCODING.
      z->ConvertToTree();
      if (a.dontsort) {
        windowed = true;
        if (end >= start) {
          auto n = static_cast<size_t>(end - start + 1);
          if (a.desc) {
            for (ZSet::Iter it = z->At(len - 1 - static_cast<size_t>(start));
                 it.Valid() && items.size() < n; it.Prev()) {
              items.push_back(MakeItem(it.member()));
            }
          } else {
            for (ZSet::Iter it = z->At(static_cast<size_t>(start)); it.Valid() && items.size() < n;
                 it.Next()) {
              items.push_back(MakeItem(it.member()));
            }
          }
        }
      } else {
        z->ForEach([&](std::string_view m, double) { items.push_back(MakeItem(m)); });
      }
    }
  }
  if (windowed) {
    end -= start;
    start = 0;
  }

  bool conversion_error = false;
  if (!a.dontsort) {
    for (Item& item : items) {
      std::optional<std::string> weight;
      if (a.by) {
        weight = LookupByPattern(ctx, *a.by, item.element);
        if (!weight) continue;
      }
      if (a.alpha) {
        if (a.by) item.cmp = std::move(weight);
      } else {
        const std::string& text = weight ? *weight : item.element;
        char* eptr;
        errno = 0;
        item.score = strtod(text.c_str(), &eptr);
        if (*eptr != '\0' || errno == ERANGE || std::isnan(item.score)) conversion_error = true;
      }
    }
    bool by = a.by.has_value();
    auto cmp = [&](const Item& x, const Item& y) {
      int c;
      if (!a.alpha) {
        c = x.score > y.score ? 1 : x.score < y.score ? -1 : x.element.compare(y.element);
      } else if (by) {
        if (!x.cmp || !y.cmp) {
          c = x.cmp.has_value() == y.cmp.has_value() ? 0 : !x.cmp ? -1 : 1;
        } else {
          c = x.cmp->compare(*y.cmp);
        }
      } else {
        c = x.element.compare(y.element);
      }
      return a.desc ? c > 0 : c < 0;
    };
    std::stable_sort(items.begin(), items.end(), cmp);
  }

  if (conversion_error) {
    ctx.reply.Error("ERR One or more scores can't be converted into double");
    return;
  }
  int64_t rows = end >= start ? end - start + 1 : 0;
  size_t per_row = a.gets.empty() ? 1 : a.gets.size();
  auto output_len = static_cast<size_t>(rows) * per_row;
  if (!a.store) {
    ctx.reply.Array(output_len);
    for (int64_t j = start; j <= end; ++j) {
      const std::string& element = items[static_cast<size_t>(j)].element;
      if (a.gets.empty()) ctx.reply.Bulk(element);
      for (std::string_view pattern : a.gets) {
        std::optional<std::string> v = LookupByPattern(ctx, pattern, element);
        if (v) {
          ctx.reply.Bulk(*v);
        } else {
          ctx.reply.Null();
        }
      }
    }
    return;
  }
  std::string_view dst = *a.store;
  if (output_len == 0) {
    if (ctx.db.Delete(dst)) {
      KeyWritten(ctx, dst);
      Notify(ctx, kNotifyGeneric, "del", dst);
    }
    ctx.reply.Integer(0);
    return;
  }
  const ServerConfig& c = ctx.cfg();
  auto list = std::make_unique<PackedList>(static_cast<int>(c.list_max_listpack_size),
                                           static_cast<int>(c.list_compress_depth));
  for (int64_t j = start; j <= end; ++j) {
    const std::string& element = items[static_cast<size_t>(j)].element;
    if (a.gets.empty()) list->PushBack(element);
    for (std::string_view pattern : a.gets) {
      std::optional<std::string> v = LookupByPattern(ctx, pattern, element);
      list->PushBack(v ? std::string_view(*v) : std::string_view());
    }
  }
  list->ConvertAuto();
  ctx.db.Set(dst, Value::Object(ValueType::kList, std::move(list)));
  KeyWritten(ctx, dst, output_len);
  Notify(ctx, kNotifyList, "sortstore", dst);
  ctx.reply.Integer(static_cast<int64_t>(output_len));
}

void SortCommand(CommandContext& ctx) { SortGeneric(ctx, false); }
void SortRoCommand(CommandContext& ctx) { SortGeneric(ctx, true); }

// The sorted key, plus STORE's destination (the last one given wins, as when executing).
std::vector<size_t> SortKeys(std::span<const std::string_view> argv) {
  std::vector<size_t> out{1};
  size_t store = 0;
  // Only the options' shapes matter here: bad values are the command's to report.
  ArgParser args(argv, nullptr, 2);
  while (args.HasNext()) {
    if (args.Flag("LIMIT")) {
      args.Seek(args.pos() + 2);
    } else if (args.OneOf({"GET", "BY"}) >= 0) {
      args.Seek(args.pos() + 1);
    } else if (args.OptionName("STORE")) {
      store = args.pos();
      args.Next();
    } else {
      args.Next();
    }
  }
  if (store != 0) out.push_back(store);
  return out;
}

}  // namespace

void RegisterSortCommands(CommandTable& table) {
  table.Add(
      {"sort", -2, kCmdWrite | kCmdDenyOom,
       Keys(KeyAt(1, kKeyRO | kKeyAccess),
            UnknownKeys(kKeyRO | kKeyAccess,
                        "For the optional BY/GET keyword. It is marked 'unknown' because the key "
                        "names derive from the content of the key we sort"),
            UnknownKeys(kKeyOW | kKeyUpdate,
                        "For the optional STORE keyword. It is marked 'unknown' because the "
                        "keyword can appear anywhere in the argument array")),
       kAclSet | kAclSortedSet | kAclList | kAclDangerous, "generic", "1.0.0",
       "Sorts the elements in a list, a set, or a sorted set, optionally storing the "
       "result.",
       "key [BY by-pattern=pattern#1] [LIMIT offset count] [GET "
       "get-pattern=pattern#1 [GET get-pattern=pattern#1 ...]] [order=<ASC | "
       "DESC>] [sorting=ALPHA] [STORE destination]",
       SortCommand,
       "O(N+M*log(M)) where N is the number of elements in the list or set to sort, and M "
       "the number of returned elements. When the elements are not sorted, complexity is "
       "O(N).",
       SortKeys});
  table.Add(
      {"sort_ro", -2, kCmdReadonly,
       Keys(KeyAt(1, kKeyRO | kKeyAccess),
            UnknownKeys(kKeyRO | kKeyAccess,
                        "For the optional BY/GET keyword. It is marked 'unknown' because the key "
                        "names derive from the content of the key we sort")),
       kAclSet | kAclSortedSet | kAclList | kAclDangerous, "generic", "7.0.0",
       "Returns the sorted elements of a list, a set, or a sorted set.",
       "key [BY by-pattern=pattern#1] [LIMIT offset count] [GET "
       "get-pattern=pattern#1 [GET get-pattern=pattern#1 ...]] [order=<ASC | "
       "DESC>] [sorting=ALPHA]",
       SortRoCommand,
       "O(N+M*log(M)) where N is the number of elements in the list or set to sort, and M "
       "the number of returned elements. When the elements are not sorted, complexity is "
       "O(N)."});
}

}  // namespace vireo
