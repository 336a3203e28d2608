// Hashes: HSET ... HSCAN over HashObject (types/hash_object.h).
//
// Each handler parses its arguments, runs the operation on the hash and writes the reply.
// Lookups and error order follow Redis 7.2 (arguments that Redis parses before looking the
// key up are parsed first here too, so the same error wins).
#include <fmt/format.h>

#include <cmath>
#include <unordered_set>

#include "commands/collection_common.h"
#include "commands/families.h"
#include "commands/helpers.h"
#include "core/arg_parser.h"
#include "core/command_table.h"
#include "core/config.h"
#include "server/client.h"
#include "server/command_context.h"
#include "types/hash_object.h"
#include "util/glob.h"
#include "util/strings.h"

namespace vireo {
namespace {

HashLimits Limits(CommandContext& ctx) {
  const ServerConfig& c = ctx.cfg();
  return {static_cast<size_t>(c.hash_max_listpack_entries),
          static_cast<size_t>(c.hash_max_listpack_value)};
}

// The hash at `key` for a reading command (counts a keyspace hit or miss; see TypedObject).
TypedObject<HashObject> ReadHash(CommandContext& ctx, std::string_view key) {
  return ReadTyped(ctx, key, ValueType::kHash).As<HashObject>();
}

// The hash at `key` for a writing command, created empty (and added) when missing.
TypedObject<HashObject> WriteHash(CommandContext& ctx, std::string_view key) {
  auto [entry, wrong_type] = LookupTyped(ctx, key, ValueType::kHash);
  if (wrong_type) return {nullptr, true};
  if (entry == nullptr) {
    entry = ctx.db.Add(key, Value::Object(ValueType::kHash, std::make_unique<HashObject>()));
  }
  return {entry->value.As<HashObject>(), false};
}

void ReplyArity(CommandContext& ctx) {
  ctx.reply.Error(fmt::format("ERR wrong number of arguments for '{}' command", ctx.spec->name));
}

// ---------------------------------------------------------------------------------------------
// Writes

void HSetGeneric(CommandContext& ctx, bool reply_ok) {
  if (ctx.argc() % 2 == 1) {
    ReplyArity(ctx);
    return;
  }
  std::string_view key = ctx.arg(1);
  auto [hash, wrong_type] = WriteHash(ctx, key);
  if (wrong_type) return;
  HashLimits limits = Limits(ctx);
  hash->PrepareForArgs(ctx.argv.subspan(2), limits);
  int64_t created = 0;
  for (size_t i = 2; i < ctx.argc(); i += 2) {
    if (hash->Set(ctx.arg(i), ctx.arg(i + 1), limits)) ++created;
  }
  KeyWritten(ctx, key, (ctx.argc() - 2) / 2);
  Notify(ctx, kNotifyHash, "hset", key);
  if (reply_ok) {
    ctx.reply.Ok();
  } else {
    ctx.reply.Integer(created);
  }
}

void HSetCommand(CommandContext& ctx) { HSetGeneric(ctx, false); }
void HMSetCommand(CommandContext& ctx) { HSetGeneric(ctx, true); }

void HSetNxCommand(CommandContext& ctx) {
  std::string_view key = ctx.arg(1);
  auto [entry, wrong_type] = LookupTyped(ctx, key, ValueType::kHash);
  if (wrong_type) return;
  if (entry != nullptr && entry->value.As<HashObject>()->Contains(ctx.arg(2))) {
    ctx.reply.Integer(0);
    return;
  }
  HashObject* hash = WriteHash(ctx, key).object;
  HashLimits limits = Limits(ctx);
  hash->PrepareForArgs(ctx.argv.subspan(2, 2), limits);
  hash->Set(ctx.arg(2), ctx.arg(3), limits);
  KeyWritten(ctx, key);
  Notify(ctx, kNotifyHash, "hset", key);
  ctx.reply.Integer(1);
}

void HDelCommand(CommandContext& ctx) {
  std::string_view key = ctx.arg(1);
  auto [entry, wrong_type] = LookupTyped(ctx, key, ValueType::kHash);
  if (wrong_type) return;
  if (entry == nullptr) {
    ctx.reply.Integer(0);
    return;
  }
  auto* hash = entry->value.As<HashObject>();
  RemoveMembersAndReply(
      ctx, key, kNotifyHash, "hdel", [&](std::string_view field) { return hash->Delete(field); },
      [&] { return hash->empty(); });
}

void HIncrByCommand(CommandContext& ctx) {
  ArgParser args(ctx, 3);
  const int64_t incr = args.Int();
  if (!args.Check()) return;
  std::string_view key = ctx.arg(1);
  std::string_view field = ctx.arg(2);
  auto [entry, wrong_type] = LookupTyped(ctx, key, ValueType::kHash);
  if (wrong_type) return;
  int64_t value = 0;
  if (entry != nullptr) {
    if (auto current = entry->value.As<HashObject>()->Find(field)) {
      value = args.IntValue(*current, "ERR hash value is not an integer");
      if (!args.Check()) return;
    }
  }
  if ((incr < 0 && value < 0 && incr < INT64_MIN - value) ||
      (incr > 0 && value > 0 && incr > INT64_MAX - value)) {
    ctx.reply.Error(errors::kOverflow);
    return;
  }
  value += incr;
  char buf[kInt64BufSize];
  std::string_view text(buf, FormatInt64(value, buf));
  HashObject* hash = WriteHash(ctx, key).object;
  // An increment alters the value without replacing the field: its TTL stays (Redis 7.4).
  hash->Set(field, text, Limits(ctx), /*keep_ttl=*/true);
  KeyWritten(ctx, key);
  Notify(ctx, kNotifyHash, "hincrby", key);
  ctx.reply.Integer(value);
}

void HIncrByFloatCommand(CommandContext& ctx) {
  ArgParser args(ctx, 3);
  const long double incr = args.LongDouble();
  if (args.ok() && (std::isnan(incr) || std::isinf(incr)))
    args.Fail("ERR value is NaN or Infinity");
  if (!args.Check()) return;
  std::string_view key = ctx.arg(1);
  std::string_view field = ctx.arg(2);
  auto [entry, wrong_type] = LookupTyped(ctx, key, ValueType::kHash);
  if (wrong_type) return;
  long double value = 0;
  if (entry != nullptr) {
    if (auto current = entry->value.As<HashObject>()->Find(field)) {
      value = args.LongDoubleValue(*current, "ERR hash value is not a float");
      if (!args.Check()) return;
    }
  }
  value += incr;
  if (std::isnan(value) || std::isinf(value)) {
    ctx.reply.Error("ERR increment would produce NaN or Infinity");
    return;
  }
  std::string text = FormatLongDouble(value);
  HashObject* hash = WriteHash(ctx, key).object;
  hash->Set(field, text, Limits(ctx), /*keep_ttl=*/true);
  KeyWritten(ctx, key);
  Notify(ctx, kNotifyHash, "hincrbyfloat", key);
  // Replicas and the AOF get the result, not the increment, so float formatting can't drift.
  // A field with a TTL keeps it there too (HSET would drop it): HSETEX KEEPTTL, as Redis 8.
  if (hash->FieldExpire(field) != FieldTtls::kNoTtl) {
    ctx.PropagateInstead(
        {"HSETEX", std::string(key), "KEEPTTL", "FIELDS", "1", std::string(field), text});
  } else {
    ctx.PropagateInstead({"HSET", std::string(key), std::string(field), text});
  }
  ctx.reply.Bulk(text);
}

// ---------------------------------------------------------------------------------------------
// Reads

void HGetCommand(CommandContext& ctx) {
  auto [hash, wrong_type] = ReadHash(ctx, ctx.arg(1));
  if (wrong_type) return;
  std::optional<std::string_view> value;
  if (hash != nullptr) value = hash->Find(ctx.arg(2));
  if (value) {
    ctx.reply.Bulk(*value);
  } else {
    ctx.reply.Null();
  }
}

void HMGetCommand(CommandContext& ctx) {
  auto [hash, wrong_type] = ReadHash(ctx, ctx.arg(1));
  if (wrong_type) return;
  ctx.reply.Array(ctx.argc() - 2);
  for (size_t i = 2; i < ctx.argc(); ++i) {
    std::optional<std::string_view> value;
    if (hash != nullptr) value = hash->Find(ctx.arg(i));
    if (value) {
      ctx.reply.Bulk(*value);
    } else {
      ctx.reply.Null();
    }
  }
}

void HLenCommand(CommandContext& ctx) {
  auto [hash, wrong_type] = ReadHash(ctx, ctx.arg(1));
  if (wrong_type) return;
  ctx.reply.Integer(hash == nullptr ? 0 : static_cast<int64_t>(hash->size()));
}

void HStrLenCommand(CommandContext& ctx) {
  auto [hash, wrong_type] = ReadHash(ctx, ctx.arg(1));
  if (wrong_type) return;
  std::optional<std::string_view> value;
  if (hash != nullptr) value = hash->Find(ctx.arg(2));
  ctx.reply.Integer(value ? static_cast<int64_t>(value->size()) : 0);
}

void HExistsCommand(CommandContext& ctx) {
  auto [hash, wrong_type] = ReadHash(ctx, ctx.arg(1));
  if (wrong_type) return;
  ctx.reply.Integer(hash != nullptr && hash->Contains(ctx.arg(2)) ? 1 : 0);
}

enum HashPart { kFields = 1, kValues = 2 };

void HGetAllGeneric(CommandContext& ctx, int parts) {
  auto [hash, wrong_type] = ReadHash(ctx, ctx.arg(1));
  if (wrong_type) return;
  size_t n = hash == nullptr ? 0 : hash->size();
  if (parts == (kFields | kValues)) {
    ctx.reply.Map(n);
  } else {
    ctx.reply.Array(n);
  }
  if (hash == nullptr) return;
  hash->ForEach([&](std::string_view f, std::string_view v) {
    if (parts & kFields) ctx.reply.Bulk(f);
    if (parts & kValues) ctx.reply.Bulk(v);
  });
}

void HKeysCommand(CommandContext& ctx) { HGetAllGeneric(ctx, kFields); }
void HValsCommand(CommandContext& ctx) { HGetAllGeneric(ctx, kValues); }
void HGetAllCommand(CommandContext& ctx) { HGetAllGeneric(ctx, kFields | kValues); }

// ---------------------------------------------------------------------------------------------
// HRANDFIELD

// One field (and value) of a HRANDFIELD reply: RESP3 nests each pair in an array.
void ReplyPair(CommandContext& ctx, std::string_view f, std::string_view v, bool with_values) {
  if (with_values && ctx.reply.resp3()) ctx.reply.Array(2);
  ctx.reply.Bulk(f);
  if (with_values) ctx.reply.Bulk(v);
}

void HRandFieldWithCount(CommandContext& ctx, int64_t l, bool with_values) {
  auto [hash, wrong_type] = ReadHash(ctx, ctx.arg(1));
  if (wrong_type) return;
  if (hash == nullptr || l == 0) {
    ctx.reply.EmptyArray();
    return;
  }
  const bool unique = l > 0;
  const uint64_t count = unique ? static_cast<uint64_t>(l) : 0 - static_cast<uint64_t>(l);
  const size_t size = hash->size();
  std::mt19937_64& rng = CollectionRng(ctx);
  auto header = [&](uint64_t n) { ctx.reply.Array(with_values && !ctx.reply.resp3() ? n * 2 : n); };

  // Repeats allowed (or a single field): independent draws.
  if (!unique || count == 1) {
    ReplyRepeatedDraws(ctx, count, with_values && !ctx.reply.resp3() ? count * 2 : count, [&] {
      auto [f, v] = hash->Random(rng());
      ReplyPair(ctx, f, v, with_values);
    });
    return;
  }
  // Everything.
  if (count >= size) {
    header(size);
    hash->ForEach(
        [&](std::string_view f, std::string_view v) { ReplyPair(ctx, f, v, with_values); });
    return;
  }
  header(count);
  // A listpack: one ordered pass choosing count positions.
  if (hash->is_listpack()) {
    for (size_t i : SampleIndexes(CollectionRng(ctx), size, count)) {
      auto [f, v] = hash->PackedAt(i);
      ReplyPair(ctx, f, v, with_values);
    }
    return;
  }
  // Asking for most of a large hash: pick the subset from the full list.
  if (count * 3 > size) {
    std::vector<std::pair<std::string_view, std::string_view>> all;
    all.reserve(size);
    hash->ForEach([&](std::string_view f, std::string_view v) { all.emplace_back(f, v); });
    for (size_t i = 0; i < count; ++i) {
      size_t j = i + rng() % (size - i);
      std::swap(all[i], all[j]);
    }
    for (size_t i = 0; i < count; ++i) ReplyPair(ctx, all[i].first, all[i].second, with_values);
    return;
  }
  // A few fields of a large hash: draw until enough distinct ones turned up.
  std::unordered_set<const char*> seen;
  while (seen.size() < count) {
    auto [f, v] = hash->Random(rng());
    if (seen.insert(f.data()).second) ReplyPair(ctx, f, v, with_values);
  }
}

void HRandFieldCommand(CommandContext& ctx) {
  if (ctx.argc() >= 3) {
    ArgParser args(ctx, 2);
    bool with_values;
    int64_t l = ReadRandomCount(args, "WITHVALUES", &with_values);
    if (!args.Check()) return;
    HRandFieldWithCount(ctx, l, with_values);
    return;
  }
  auto [hash, wrong_type] = ReadHash(ctx, ctx.arg(1));
  if (wrong_type) return;
  if (hash == nullptr) {
    ctx.reply.Null();
    return;
  }
  ctx.reply.Bulk(hash->Random(CollectionRng(ctx)()).first);
}

// ---------------------------------------------------------------------------------------------
// HSCAN

void HScanCommand(CommandContext& ctx) {
  CollectionScanArgs args;
  ArgParser parser(ctx, 2);
  args.cursor = parser.Cursor();
  if (!parser.Check()) return;
  auto [hash, wrong_type] = ReadHash(ctx, ctx.arg(1));
  if (wrong_type) return;
  if (hash == nullptr) {
    ReplyEmptyScan(ctx);
    return;
  }
  ReadCollectionScanOptions(parser, &args, nullptr, "NOVALUES");
  if (!parser.Check()) return;
  std::vector<std::pair<std::string_view, std::string_view>> found;
  uint64_t cursor = 0;
  auto collect = [&](std::string_view f, std::string_view v) {
    if (args.pattern && !GlobMatch(*args.pattern, f)) return;
    found.emplace_back(f, v);
  };
  if (hash->is_listpack()) {
    // Small encodings are returned whole in one call, as Redis does.
    hash->ForEach(collect);
  } else {
    // COUNT is in fields visited (a field and its value are one sample), as Redis 7.2 counts.
    size_t visited = 0;
    cursor = ScanWithCountHint(
        args.cursor, args.count,
        [&](uint64_t c) {
          return hash->ScanTable(c, [&](std::string_view f, std::string_view v) {
            ++visited;
            collect(f, v);
          });
        },
        [&] { return visited; });
  }
  ctx.reply.Array(2);
  ReplyScanCursor(ctx, cursor);
  ctx.reply.Array(found.size() * (args.omit_values ? 1 : 2));
  for (auto& [f, v] : found) {
    ctx.reply.Bulk(f);
    if (!args.omit_values) ctx.reply.Bulk(v);
  }
}

}  // namespace

void RegisterHashCommands(CommandTable& table) {
  constexpr const char* kGroup = "hash";

  table.Add({"hset", -4, kCmdWrite | kCmdDenyOom | kCmdFast, Keys(KeyAt(1, kKeyRW | kKeyUpdate)),
             kAclHash, kGroup, "2.0.0", "Creates or modifies the value of a field in a hash.",
             "key data=<field value> ...", HSetCommand,
             "O(1) for each field/value pair added, so O(N) to add N field/value pairs when the "
             "command is called with multiple field/value pairs."});
  table.Add({"hmset", -4, kCmdWrite | kCmdDenyOom | kCmdFast, Keys(KeyAt(1, kKeyRW | kKeyUpdate)),
             kAclHash, kGroup, "2.0.0", "Sets the values of multiple fields.",
             "key data=<field value> ...", HMSetCommand,
             "O(N) where N is the number of fields being set."});
  table.Add({"hsetnx", 4, kCmdWrite | kCmdDenyOom | kCmdFast, Keys(KeyAt(1, kKeyRW | kKeyInsert)),
             kAclHash, kGroup, "2.0.0",
             "Sets the value of a field in a hash only when the field doesn't exist.",
             "key field value", HSetNxCommand, "O(1)"});
  table.Add({"hget", 3, kCmdReadonly | kCmdFast, Keys(KeyAt(1, kKeyRO | kKeyAccess)), kAclHash,
             kGroup, "2.0.0", "Returns the value of a field in a hash.", "key field", HGetCommand,
             "O(1)"});
  table.Add({"hmget", -3, kCmdReadonly | kCmdFast, Keys(KeyAt(1, kKeyRO | kKeyAccess)), kAclHash,
             kGroup, "2.0.0", "Returns the values of all fields in a hash.",
             "key field [field ...]", HMGetCommand,
             "O(N) where N is the number of fields being requested."});
  table.Add({"hdel", -3, kCmdWrite | kCmdFast, Keys(KeyAt(1, kKeyRW | kKeyDelete)), kAclHash,
             kGroup, "2.0.0",
             "Deletes one or more fields and their values from a hash. Deletes the hash if no "
             "fields remain.",
             "key field [field ...]", HDelCommand,
             "O(N) where N is the number of fields to be removed."});
  table.Add({"hexists", 3, kCmdReadonly | kCmdFast, Keys(KeyAt(1, kKeyRO)), kAclHash, kGroup,
             "2.0.0", "Determines whether a field exists in a hash.", "key field", HExistsCommand,
             "O(1)"});
  table.Add({"hlen", 2, kCmdReadonly | kCmdFast, Keys(KeyAt(1, kKeyRO)), kAclHash, kGroup, "2.0.0",
             "Returns the number of fields in a hash.", "key", HLenCommand, "O(1)"});
  table.Add({"hstrlen", 3, kCmdReadonly | kCmdFast, Keys(KeyAt(1, kKeyRO)), kAclHash, kGroup,
             "3.2.0", "Returns the length of the value of a field.", "key field", HStrLenCommand,
             "O(1)"});
  table.Add({"hkeys", 2, kCmdReadonly, Keys(KeyAt(1, kKeyRO | kKeyAccess)), kAclHash, kGroup,
             "2.0.0", "Returns all fields in a hash.", "key", HKeysCommand,
             "O(N) where N is the size of the hash."});
  table.Add({"hvals", 2, kCmdReadonly, Keys(KeyAt(1, kKeyRO | kKeyAccess)), kAclHash, kGroup,
             "2.0.0", "Returns all values in a hash.", "key", HValsCommand,
             "O(N) where N is the size of the hash."});
  table.Add({"hgetall", 2, kCmdReadonly, Keys(KeyAt(1, kKeyRO | kKeyAccess)), kAclHash, kGroup,
             "2.0.0", "Returns all fields and values in a hash.", "key", HGetAllCommand,
             "O(N) where N is the size of the hash."});
  table.Add({"hincrby", 4, kCmdWrite | kCmdDenyOom | kCmdFast,
             Keys(KeyAt(1, kKeyRW | kKeyAccess | kKeyUpdate)), kAclHash, kGroup, "2.0.0",
             "Increments the integer value of a field in a hash by a number. Uses 0 as initial "
             "value if the field doesn't exist.",
             "key field increment:integer", HIncrByCommand, "O(1)"});
  table.Add({"hincrbyfloat", 4, kCmdWrite | kCmdDenyOom | kCmdFast,
             Keys(KeyAt(1, kKeyRW | kKeyAccess | kKeyUpdate)), kAclHash, kGroup, "2.6.0",
             "Increments the floating point value of a field by a number. Uses 0 as initial "
             "value if the field doesn't exist.",
             "key field increment:double", HIncrByFloatCommand, "O(1)"});
  table.Add({"hrandfield", -2, kCmdReadonly, Keys(KeyAt(1, kKeyRO | kKeyAccess)), kAclHash, kGroup,
             "6.2.0", "Returns one or more random fields from a hash.",
             "key [options=<count [WITHVALUES]>]", HRandFieldCommand,
             "O(N) where N is the number of fields returned"});
  table.Add({"hscan", -3, kCmdReadonly, Keys(KeyAt(1, kKeyRO | kKeyAccess)), kAclHash, kGroup,
             "2.8.0", "Iterates over fields and values of a hash.",
             "key cursor [MATCH pattern] [COUNT count] [NOVALUES]", HScanCommand,
             "O(1) for every call. O(N) for a complete iteration, including enough command calls "
             "for the cursor to return back to 0. N is the number of elements inside the "
             "collection."});
}

}  // namespace vireo
