// Generic keyspace commands: DEL, UNLINK, EXISTS, TYPE, RENAME(NX), COPY, MOVE, TOUCH, KEYS,
// SCAN, RANDOMKEY, the EXPIRE/TTL family, PERSIST, OBJECT, DBSIZE, FLUSHDB, FLUSHALL, SWAPDB.
#include <fmt/format.h>

#include <charconv>
#include <climits>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "commands/collection_common.h"
#include "commands/families.h"
#include "commands/helpers.h"
#include "core/arg_parser.h"
#include "core/command_table.h"
#include "core/config.h"
#include "persistence/snapshot.h"
#include "server/blocking_service.h"
#include "server/client.h"
#include "server/command_context.h"
#include "server/memory_view.h"
#include "server/process_info.h"
#include "server/watched_keys.h"
#include "util/glob.h"
#include "util/strings.h"

namespace vireo {
namespace {

constexpr std::string_view kSameObject = "ERR source and destination objects are the same";

bool ValidDb(CommandContext& ctx, int index) { return index >= 0 && index < ctx.db_count(); }

// A database index argument naming an existing database (COPY ... DB, MOVE).
int ReadExistingDb(CommandContext& ctx, ArgParser& args) {
  int index = args.DbIndex();
  if (args.ok() && !ValidDb(ctx, index)) args.Fail(errors::kDbIndexOutOfRange);
  return index;
}

// ---------------------------------------------------------------------------------------------
// DEL, UNLINK, EXISTS, TOUCH, TYPE

void DeleteKeys(CommandContext& ctx, bool lazy) {
  int64_t deleted = 0;
  for (size_t i = 1; i < ctx.argc(); ++i) {
    DbEntry* entry = ctx.db.Find(ctx.arg(i));
    if (entry == nullptr) continue;
    ctx.db.DeleteEntry(entry, lazy);
    KeyWritten(ctx, ctx.arg(i));
    Notify(ctx, kNotifyGeneric, "del", ctx.arg(i));
    ++deleted;
  }
  ctx.reply.Integer(deleted);
}

void DelCommand(CommandContext& ctx) { DeleteKeys(ctx, ctx.cfg().lazyfree_lazy_user_del); }

void UnlinkCommand(CommandContext& ctx) { DeleteKeys(ctx, true); }

// EXISTS counts a key named twice twice; TOUCH likewise.
void CountExistingKeys(CommandContext& ctx, bool touch) {
  int64_t count = 0;
  for (size_t i = 1; i < ctx.argc(); ++i) {
    if (LookupRead(ctx, ctx.db, ctx.arg(i), touch) != nullptr) ++count;
  }
  ctx.reply.Integer(count);
}

void ExistsCommand(CommandContext& ctx) { CountExistingKeys(ctx, false); }
void TouchCommand(CommandContext& ctx) { CountExistingKeys(ctx, true); }

void TypeCommand(CommandContext& ctx) {
  DbEntry* entry = LookupRead(ctx, ctx.db, ctx.arg(1), false);
  ctx.reply.SimpleString(entry == nullptr ? "none" : ValueTypeName(entry->value.type()));
}

// ---------------------------------------------------------------------------------------------
// RENAME, RENAMENX, COPY, MOVE

// The value leaves `entry` for a new key `dst` of `dst_db`, keeping its access clock: the
// object moves, as in Redis, so its idle time / LFU counter go with it (COPY, which builds a
// new object, starts afresh instead).
DbEntry* MoveEntry(Database& src_db, DbEntry* entry, Database& dst_db, std::string_view dst) {
  const uint32_t clock = entry->value.access_clock();
  Value value = std::move(entry->value);
  src_db.DeleteEntry(entry);
  DbEntry* moved = dst_db.Add(dst, std::move(value));
  moved->value.set_access_clock(clock);
  return moved;
}

void Rename(CommandContext& ctx, bool nx) {
  std::string_view src = ctx.arg(1);
  std::string_view dst = ctx.arg(2);
  DbEntry* entry = ctx.db.Find(src);
  if (entry == nullptr) {
    ctx.reply.Error(errors::kNoSuchKey);
    return;
  }
  // Renaming a key onto itself changes nothing, but the key must still exist.
  if (src == dst) {
    if (nx) {
      ctx.reply.Integer(0);
    } else {
      ctx.reply.Ok();
    }
    return;
  }
  if (DbEntry* existing = ctx.db.Find(dst); existing != nullptr) {
    if (nx) {
      ctx.reply.Integer(0);
      return;
    }
    ctx.db.DeleteEntry(existing);
  }
  int64_t expire = ctx.db.GetExpire(entry);
  DbEntry* moved = MoveEntry(ctx.db, entry, ctx.db, dst);
  if (expire != -1) ctx.db.SetExpire(moved, expire);
  KeyWritten(ctx, src, 0);
  KeyWritten(ctx, dst);
  Notify(ctx, kNotifyGeneric, "rename_from", src);
  Notify(ctx, kNotifyGeneric, "rename_to", dst);
  if (nx) {
    ctx.reply.Integer(1);
  } else {
    ctx.reply.Ok();
  }
}

void RenameCommand(CommandContext& ctx) { Rename(ctx, false); }
void RenameNxCommand(CommandContext& ctx) { Rename(ctx, true); }

struct CopyArgs {
  int dst_db;
  bool replace = false;
};

void CopyCommand(CommandContext& ctx) {
  CopyArgs args{ctx.client.db_index()};
  ArgParser parser(ctx, 3);
  while (parser.HasNext()) {
    if (parser.Flag("REPLACE")) {
      args.replace = true;
    } else if (parser.OptionName("DB")) {
      args.dst_db = ReadExistingDb(ctx, parser);
    } else {
      parser.SyntaxError();
    }
  }
  if (!parser.Check()) return;
  // Redis 7.2 runs a cluster node with a single database, so any other index is out of range.
  if (ctx.cfg().cluster_enabled && args.dst_db != 0) {
    ctx.reply.Error(errors::kDbIndexOutOfRange);
    return;
  }
  std::string_view src = ctx.arg(1);
  std::string_view dst = ctx.arg(2);
  Database& dst_db = ctx.database(args.dst_db);
  if (&dst_db == &ctx.db && src == dst) {
    ctx.reply.Error(kSameObject);
    return;
  }
  DbEntry* entry = LookupRead(ctx, ctx.db, src);
  if (entry == nullptr) {
    ctx.reply.Integer(0);
    return;
  }
  int64_t expire = ctx.db.GetExpire(entry);
  if (DbEntry* existing = dst_db.Find(dst); existing != nullptr) {
    if (!args.replace) {
      ctx.reply.Integer(0);
      return;
    }
    dst_db.DeleteEntry(existing);
  }
  DbEntry* copy = dst_db.Add(dst, entry->value.Clone());
  if (expire != -1) dst_db.SetExpire(copy, expire);
  KeyWritten(ctx, dst_db, dst);
  Notify(ctx, kNotifyGeneric, "copy_to", dst, args.dst_db);
  ctx.reply.Integer(1);
}

void MoveCommand(CommandContext& ctx) {
  if (ctx.cfg().cluster_enabled) {
    ctx.reply.Error("ERR MOVE is not allowed in cluster mode");
    return;
  }
  std::string_view key = ctx.arg(1);
  ArgParser args(ctx, 2);
  const int index = ReadExistingDb(ctx, args);
  if (!args.Check()) return;
  Database& dst_db = ctx.database(index);
  if (&dst_db == &ctx.db) {
    ctx.reply.Error(kSameObject);
    return;
  }
  DbEntry* entry = ctx.db.Find(key);
  if (entry == nullptr || dst_db.Find(key) != nullptr) {
    ctx.reply.Integer(0);
    return;
  }
  int64_t expire = ctx.db.GetExpire(entry);
  DbEntry* moved = MoveEntry(ctx.db, entry, dst_db, key);
  if (expire != -1) dst_db.SetExpire(moved, expire);
  KeyWritten(ctx, key, 0);
  KeyWritten(ctx, dst_db, key);
  Notify(ctx, kNotifyGeneric, "move_from", key);
  Notify(ctx, kNotifyGeneric, "move_to", key, index);
  ctx.reply.Integer(1);
}

// ---------------------------------------------------------------------------------------------
// KEYS, SCAN, RANDOMKEY

void KeysCommand(CommandContext& ctx) {
  std::string_view pattern = ctx.arg(1);
  // "*" must also match the empty key, which GlobMatch doesn't.
  bool all_keys = pattern == "*";
  size_t mark = ctx.reply.DeferLength();
  size_t count = 0;
  // Expired keys are skipped but not deleted: the walk must not modify the table.
  ctx.db.ForEach([&](DbEntry* entry) {
    std::string_view key = entry->key.view();
    if (!all_keys && !GlobMatch(pattern, key)) return;
    if (entry->has_expire() && ctx.db.IsExpired(entry)) return;
    ctx.reply.Bulk(key);
    ++count;
  });
  ctx.reply.SetDeferredArray(mark, count);
}

struct ScanArgs {
  CollectionScanArgs options;
  std::optional<std::string_view> type;
};

bool ParseScanArgs(CommandContext& ctx, ScanArgs* args) {
  ArgParser parser(ctx, 1);
  args->options.cursor = parser.Cursor();
  ReadCollectionScanOptions(parser, &args->options, &args->type);
  return parser.Check();
}

void ScanCommand(CommandContext& ctx) {
  ScanArgs args;
  if (!ParseScanArgs(ctx, &args)) return;
  Database& db = ctx.db;
  std::vector<DbEntry*> found;
  const CollectionScanArgs& options = args.options;
  uint64_t cursor = ScanWithCountHint(
      options.cursor, options.count,
      [&](uint64_t c) { return db.Scan(c, [&](DbEntry* entry) { found.push_back(entry); }); },
      [&] { return found.size(); });

  // Filter after the walk: deleting an expired key changes the table, which the scan callback
  // must never do. Deleting one entry leaves the others collected here valid.
  std::vector<std::string_view> keys;
  keys.reserve(found.size());
  for (DbEntry* entry : found) {
    std::string_view key = entry->key.view();
    if (options.pattern && !GlobMatch(*options.pattern, key)) continue;
    if (entry->has_expire() && db.IsExpired(entry)) {
      // The lookup deletes it (and counts it as expired); copy the name, the entry dies.
      db.Find(std::string(key));
      continue;
    }
    if (args.type && !EqualsIgnoreCase(*args.type, ValueTypeName(entry->value.type()))) continue;
    keys.push_back(key);
  }
  char buf[kInt64BufSize];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), cursor);
  ctx.reply.Array(2);
  ctx.reply.Bulk(std::string_view(buf, static_cast<size_t>(end - buf)));
  ctx.reply.Array(keys.size());
  for (std::string_view key : keys) ctx.reply.Bulk(key);
}

void RandomKeyCommand(CommandContext& ctx) {
  while (true) {
    DbEntry* entry = ctx.db.RandomEntry(ctx.rng()());
    if (entry == nullptr) {
      ctx.reply.Null();
      return;
    }
    if (entry->has_expire() && ctx.db.IsExpired(entry)) {
      // Delete it the lazy-expiry way and draw again.
      ctx.db.Find(std::string(entry->key.view()));
      continue;
    }
    ctx.reply.Bulk(entry->key.view());
    return;
  }
}

// ---------------------------------------------------------------------------------------------
// EXPIRE family, TTL family, PERSIST

enum ExpireCondition : uint8_t {
  kExpireAlways = 0,
  kExpireNx = 1,
  kExpireXx = 2,
  kExpireGt = 4,
  kExpireLt = 8,
};

struct ExpireArgs {
  int64_t when_ms = 0;
  uint8_t conditions = kExpireAlways;
};

// Redis checks the options before the time argument, so an option error wins.
bool ParseExpireArgs(CommandContext& ctx, bool seconds, bool absolute, ExpireArgs* args) {
  ArgParser parser(ctx, 3);
  while (parser.HasNext()) {
    int option = parser.OneOf({"NX", "XX", "GT", "LT"});
    if (option < 0) {
      parser.Fail(fmt::format("ERR Unsupported option {}", parser.Peek()));
    } else {
      args->conditions |= static_cast<uint8_t>(kExpireNx << option);
    }
  }
  const uint8_t c = args->conditions;
  parser.Exclusive({(c & kExpireNx) != 0, (c & ~kExpireNx) != 0},
                   "ERR NX and XX, GT or LT options at the same time are not compatible");
  parser.Exclusive({(c & kExpireGt) != 0, (c & kExpireLt) != 0},
                   "ERR GT and LT options at the same time are not compatible");
  parser.Seek(2);
  args->when_ms = parser.ExpireAtMs(seconds ? TimeUnit::kSeconds : TimeUnit::kMilliseconds,
                                    absolute, ctx.db.now_ms(), ctx.spec->name,
                                    /*positive_only=*/false);
  return parser.Check();
}

// Whether the conditions allow replacing `current` (-1: no TTL, i.e. infinite) with `when`.
bool ExpireConditionsHold(uint8_t conditions, int64_t current, int64_t when) {
  if ((conditions & kExpireNx) && current != -1) return false;
  if ((conditions & kExpireXx) && current == -1) return false;
  if ((conditions & kExpireGt) && (current == -1 || when <= current)) return false;
  if ((conditions & kExpireLt) && current != -1 && when >= current) return false;
  return true;
}

void Expire(CommandContext& ctx, bool seconds, bool absolute) {
  ExpireArgs args;
  if (!ParseExpireArgs(ctx, seconds, absolute, &args)) return;
  std::string_view key = ctx.arg(1);
  DbEntry* entry = ctx.db.Find(key);
  if (entry == nullptr ||
      !ExpireConditionsHold(args.conditions, ctx.db.GetExpire(entry), args.when_ms)) {
    ctx.reply.Integer(0);
    return;
  }
  // A time already past deletes the key right away (and is not counted as an expiry).
  // Logged with the absolute time (or as the DEL it became), as Redis 7 does.
  if (args.when_ms <= ctx.db.now_ms()) {
    ctx.db.DeleteEntry(entry, ctx.cfg().lazyfree_lazy_expire);
    // As an UNLINK when expired keys are freed lazily, as Redis does.
    ctx.PropagateInstead({ctx.cfg().lazyfree_lazy_expire ? "UNLINK" : "DEL", std::string(key)});
    Notify(ctx, kNotifyGeneric, "del", key);
  } else {
    ctx.db.SetExpire(entry, args.when_ms);
    ctx.PropagateInstead({"PEXPIREAT", std::string(key), std::to_string(args.when_ms)});
    Notify(ctx, kNotifyGeneric, "expire", key);
  }
  KeyWritten(ctx, key);
  ctx.reply.Integer(1);
}

void ExpireCommand(CommandContext& ctx) { Expire(ctx, true, false); }
void PExpireCommand(CommandContext& ctx) { Expire(ctx, false, false); }
void ExpireAtCommand(CommandContext& ctx) { Expire(ctx, true, true); }
void PExpireAtCommand(CommandContext& ctx) { Expire(ctx, false, true); }

void Ttl(CommandContext& ctx, bool milliseconds, bool absolute) {
  DbEntry* entry = LookupRead(ctx, ctx.db, ctx.arg(1), false);
  if (entry == nullptr) {
    ctx.reply.Integer(-2);
    return;
  }
  int64_t expire = ctx.db.GetExpire(entry);
  if (expire == -1) {
    ctx.reply.Integer(-1);
    return;
  }
  int64_t value = absolute ? expire : expire - ctx.db.now_ms();
  if (value < 0) value = 0;
  // Seconds are rounded to the nearest, as Redis does. value >= 0 here, and unsigned
  // arithmetic keeps the rounding exact up to INT64_MAX without signed overflow.
  int64_t seconds = static_cast<int64_t>((static_cast<uint64_t>(value) + 500) / 1000);
  ctx.reply.Integer(milliseconds ? value : seconds);
}

void TtlCommand(CommandContext& ctx) { Ttl(ctx, false, false); }
void PTtlCommand(CommandContext& ctx) { Ttl(ctx, true, false); }
void ExpireTimeCommand(CommandContext& ctx) { Ttl(ctx, false, true); }
void PExpireTimeCommand(CommandContext& ctx) { Ttl(ctx, true, true); }

void PersistCommand(CommandContext& ctx) {
  DbEntry* entry = ctx.db.Find(ctx.arg(1));
  if (entry == nullptr || !ctx.db.Persist(entry)) {
    ctx.reply.Integer(0);
    return;
  }
  KeyWritten(ctx, ctx.arg(1));
  Notify(ctx, kNotifyGeneric, "persist", ctx.arg(1));
  ctx.reply.Integer(1);
}

// ---------------------------------------------------------------------------------------------
// OBJECT

bool LfuPolicy(const ServerConfig& cfg) {
  return cfg.maxmemory_policy.find("lfu") != std::string::npos;
}

// Redis's objectCommandLookup: a read lookup that counts for keyspace statistics.
DbEntry* ObjectLookup(CommandContext& ctx) {
  DbEntry* entry = LookupRead(ctx, ctx.db, ctx.arg(2), false);
  if (entry == nullptr) ctx.reply.Null();
  return entry;
}

void ObjectEncodingCommand(CommandContext& ctx) {
  if (DbEntry* entry = ObjectLookup(ctx)) ctx.reply.Bulk(entry->value.EncodingName());
}

void ObjectRefcountCommand(CommandContext& ctx) {
  if (DbEntry* entry = ObjectLookup(ctx)) {
    ctx.reply.Integer(IsSharedInteger(ctx.cfg(), entry->value) ? INT_MAX : 1);
  }
}

void ObjectIdletimeCommand(CommandContext& ctx) {
  DbEntry* entry = ObjectLookup(ctx);
  if (entry == nullptr) return;
  if (LfuPolicy(ctx.cfg())) {
    ctx.reply.Error(
        "ERR An LFU maxmemory policy is selected, idle time not tracked. Please note that when "
        "switching between policies at runtime LRU and LFU data will take some time to adjust.");
    return;
  }
  ctx.reply.Integer(LruIdleMs(entry->value.access_clock(), ctx.db.now_ms()) / 1000);
}

void ObjectFreqCommand(CommandContext& ctx) {
  DbEntry* entry = ObjectLookup(ctx);
  if (entry == nullptr) return;
  if (!LfuPolicy(ctx.cfg())) {
    ctx.reply.Error(
        "ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note "
        "that when switching between policies at runtime LRU and LFU data will take some time "
        "to adjust.");
    return;
  }
  // The counter with the decay owed so far, without storing it (reading is not an access).
  ctx.reply.Integer(LfuDecayed(entry->value.access_clock(), ctx.db.now_ms(),
                               static_cast<int>(ctx.cfg().lfu_decay_time)));
}

void ObjectHelpCommand(CommandContext& ctx) {
  static constexpr std::string_view kLines[] = {
      "OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "ENCODING <key>",
      "    Return the kind of internal representation used in order to store the value",
      "    associated with a <key>.",
      "FREQ <key>",
      "    Return the access frequency index of the <key>. The returned integer is",
      "    proportional to the logarithm of the recent access frequency of the key.",
      "IDLETIME <key>",
      "    Return the idle time of the <key>, that is the approximated number of",
      "    seconds elapsed since the last access to the key.",
      "REFCOUNT <key>",
      "    Return the number of references of the value associated with the specified",
      "    <key>.",
      "HELP",
      "    Prints this help.",
  };
  ctx.reply.Array(std::size(kLines));
  for (std::string_view line : kLines) ctx.reply.SimpleString(line);
}

// Only reached if dispatch didn't resolve a subcommand.
void ObjectContainerCommand(CommandContext& ctx) {
  ctx.reply.Error(
      fmt::format("ERR unknown subcommand or wrong number of arguments for '{}'. Try OBJECT HELP.",
                  ctx.argc() > 1 ? ctx.arg(1).substr(0, 128) : ""));
}

// ---------------------------------------------------------------------------------------------
// DBSIZE, FLUSHDB, FLUSHALL, SWAPDB

void DbSizeCommand(CommandContext& ctx) { ctx.reply.Integer(static_cast<int64_t>(ctx.db.size())); }

// FLUSHDB/FLUSHALL's optional [ASYNC | SYNC]; without it the lazyfree-lazy-user-flush config
// decides. Returns false (after replying) on a bad argument.
bool ParseFlushMode(CommandContext& ctx, bool* async) {
  *async = ctx.cfg().lazyfree_lazy_user_flush;
  ArgParser args(ctx, 1);
  if (args.HasNext()) {
    *async = args.Keyword({"ASYNC", "SYNC"}) == 0;
    args.ExpectEnd();
  }
  return args.Check();
}

// Empties database `index`, returning how many keys it held. Watchers of its keys fail first.
size_t EmptyDb(const CommandContext& ctx, int index, bool async) {
  Database& db = ctx.database(index);
  ctx.watched_keys().TouchAllInDb(index);
  size_t removed = db.size();
  if (async && removed > 0) {
    auto doomed = std::make_unique<Database>(-1, nullptr);
    doomed->SwapContents(db);
    ctx.memory().lazy_freer().Free(std::move(doomed));
  } else {
    db.Clear();
  }
  ctx.blocking().SignalFlushedDb(index);
  return removed;
}

void FlushDbCommand(CommandContext& ctx) {
  bool async;
  if (!ParseFlushMode(ctx, &async)) return;
  size_t removed = EmptyDb(ctx, ctx.client.db_index(), async);
  ctx.process().AddDirty(removed);
  // Redis logs every FLUSHDB, even of an empty database (nothing is dirty then).
  if (removed == 0) ctx.PropagateInstead({ctx.argv.begin(), ctx.argv.end()});
  ctx.reply.Ok();
}

void FlushAllCommand(CommandContext& ctx) {
  bool async;
  if (!ParseFlushMode(ctx, &async)) return;
  size_t removed = 0;
  for (int i = 0; i < ctx.db_count(); ++i) removed += EmptyDb(ctx, i, async);
  // A snapshot in progress would save data that no longer exists: Redis stops it.
  RdbKillChild(ctx.persistence());
  // Redis counts one more change for FLUSHALL itself (it also resets the snapshot).
  ctx.process().AddDirty(removed + 1);
  // With save points configured Redis saves the now empty dataset in the foreground, so the
  // dump on disk can't bring the flushed keys back and no save point fires for them.
  if (!ctx.cfg().save_params.empty()) RdbSaveNow(ctx.persistence());
  ctx.reply.Ok();
}

void SwapDbCommand(CommandContext& ctx) {
  if (ctx.cfg().cluster_enabled) {
    ctx.reply.Error("ERR SWAPDB is not allowed in cluster mode");
    return;
  }
  ArgParser args(ctx, 1);
  const int first = args.DbIndex("ERR invalid first DB index");
  const int second = args.DbIndex("ERR invalid second DB index");
  if (args.ok() && (!ValidDb(ctx, first) || !ValidDb(ctx, second))) {
    args.Fail(errors::kDbIndexOutOfRange);
  }
  if (!args.Check()) return;
  if (first != second) {
    Database& a = ctx.database(first);
    Database& b = ctx.database(second);
    // A watched key that exists on either side changes value (or vanishes) with the swap.
    ctx.watched_keys().TouchAllInDb(first, &b);
    ctx.watched_keys().TouchAllInDb(second, &a);
    a.SwapContents(b);
    // Clients blocked in either database may find their key there now.
    ctx.blocking().SignalSwappedDbs(first, second);
  }
  ctx.process().AddDirty(1);
  ctx.reply.Ok();
}

}  // namespace

void RegisterKeyCommands(CommandTable& table) {
  constexpr const char* kGeneric = "generic";
  table.Add({"del", -2, kCmdWrite, Keys(KeysAt(1, -1, 1, kKeyRM | kKeyDelete, 0)), kAclKeyspace,
             kGeneric, "1.0.0", "Deletes one or more keys.", "key ...", DelCommand,
             "O(N) where N is the number of keys that will be removed. When a key to remove "
             "holds a value other than a string, the individual complexity for this key is O(M) "
             "where M is the number of elements in the list, set, sorted set or hash. Removing a "
             "single key that holds a string value is O(1)."});
  table.Add({"unlink", -2, kCmdWrite | kCmdFast, Keys(KeysAt(1, -1, 1, kKeyRM | kKeyDelete, 0)),
             kAclKeyspace, kGeneric, "4.0.0", "Asynchronously deletes one or more keys.", "key ...",
             UnlinkCommand,
             "O(1) for each key removed regardless of its size. Then the command does O(N) work "
             "in a different thread in order to reclaim memory, where N is the number of "
             "allocations the deleted objects where composed of."});
  table.Add({"exists", -2, kCmdReadonly | kCmdFast, Keys(KeysAt(1, -1, 1, kKeyRO, 0)), kAclKeyspace,
             kGeneric, "1.0.0", "Determines whether one or more keys exist.", "key ...",
             ExistsCommand, "O(N) where N is the number of keys to check."});
  table.Add({"touch", -2, kCmdReadonly | kCmdFast | kCmdIgnoresNoTouch,
             Keys(KeysAt(1, -1, 1, kKeyRO, 0)), kAclKeyspace, kGeneric, "3.2.1",
             "Returns the number of existing keys out of those specified after updating the time "
             "they were last accessed.",
             "key ...", TouchCommand, "O(N) where N is the number of keys that will be touched."});
  table.Add({"type", 2, kCmdReadonly | kCmdFast, Keys(KeyAt(1, kKeyRO)), kAclKeyspace, kGeneric,
             "1.0.0", "Determines the type of value stored at a key.", "key", TypeCommand, "O(1)"});
  table.Add({"rename", 3, kCmdWrite,
             Keys(KeyAt(1, kKeyRW | kKeyAccess | kKeyDelete), KeyAt(2, kKeyOW | kKeyUpdate)),
             kAclKeyspace, kGeneric, "1.0.0", "Renames a key and overwrites the destination.",
             "key newkey", RenameCommand, "O(1)"});
  table.Add({"renamenx", 3, kCmdWrite | kCmdFast,
             Keys(KeyAt(1, kKeyRW | kKeyAccess | kKeyDelete), KeyAt(2, kKeyOW | kKeyInsert)),
             kAclKeyspace, kGeneric, "1.0.0",
             "Renames a key only when the target key name doesn't exist.", "key newkey",
             RenameNxCommand, "O(1)"});
  table.Add({"copy", -3, kCmdWrite | kCmdDenyOom,
             Keys(KeyAt(1, kKeyRO | kKeyAccess), KeyAt(2, kKeyOW | kKeyUpdate)), kAclKeyspace,
             kGeneric, "6.2.0", "Copies the value of a key to a new key.",
             "source destination [DB destination-db] [REPLACE]", CopyCommand,
             "O(N) worst case for collections, where N is the number of nested items. O(1) for "
             "string values."});
  table.Add({"move", 3, kCmdWrite | kCmdFast, Keys(KeyAt(1, kKeyRW | kKeyAccess | kKeyUpdate)),
             kAclKeyspace, kGeneric, "1.0.0", "Moves a key to another database.", "key db",
             MoveCommand, "O(1)"});
  table.Add({"keys", 2, kCmdReadonly, Keys(), kAclKeyspace | kAclDangerous, kGeneric, "1.0.0",
             "Returns all key names that match a pattern.", "pattern", KeysCommand,
             "O(N) with N being the number of keys in the database, under the assumption that "
             "the key names in the database and the given pattern have limited length."});
  table.Add({"scan", -2, kCmdReadonly | kCmdTouchesArbitraryKeys, Keys(), kAclKeyspace, kGeneric,
             "2.8.0", "Iterates over the key names in the database.",
             "cursor [MATCH pattern] [COUNT count] [TYPE type]", ScanCommand,
             "O(1) for every call. O(N) for a complete iteration, including enough command calls "
             "for the cursor to return back to 0. N is the number of elements inside the "
             "collection."});
  table.Add({"randomkey", 1, kCmdReadonly | kCmdTouchesArbitraryKeys, Keys(), kAclKeyspace,
             kGeneric, "1.0.0", "Returns a random key name from the database.", "",
             RandomKeyCommand, "O(1)"});

  table.Add({"expire", -3, kCmdWrite | kCmdFast, Keys(KeyAt(1, kKeyRW | kKeyUpdate)), kAclKeyspace,
             kGeneric, "1.0.0", "Sets the expiration time of a key in seconds.",
             "key seconds [NX | XX | GT | LT]", ExpireCommand, "O(1)"});
  table.Add({"pexpire", -3, kCmdWrite | kCmdFast, Keys(KeyAt(1, kKeyRW | kKeyUpdate)), kAclKeyspace,
             kGeneric, "2.6.0", "Sets the expiration time of a key in milliseconds.",
             "key milliseconds [NX | XX | GT | LT]", PExpireCommand, "O(1)"});
  table.Add({"expireat", -3, kCmdWrite | kCmdFast, Keys(KeyAt(1, kKeyRW | kKeyUpdate)),
             kAclKeyspace, kGeneric, "1.2.0",
             "Sets the expiration time of a key to a Unix timestamp.",
             "key unix-time-seconds [NX | XX | GT | LT]", ExpireAtCommand, "O(1)"});
  table.Add({"pexpireat", -3, kCmdWrite | kCmdFast, Keys(KeyAt(1, kKeyRW | kKeyUpdate)),
             kAclKeyspace, kGeneric, "2.6.0",
             "Sets the expiration time of a key to a Unix milliseconds timestamp.",
             "key unix-time-milliseconds [NX | XX | GT | LT]", PExpireAtCommand, "O(1)"});
  table.Add({"ttl", 2, kCmdReadonly | kCmdFast, Keys(KeyAt(1, kKeyRO | kKeyAccess)), kAclKeyspace,
             kGeneric, "1.0.0", "Returns the expiration time in seconds of a key.", "key",
             TtlCommand, "O(1)"});
  table.Add({"pttl", 2, kCmdReadonly | kCmdFast, Keys(KeyAt(1, kKeyRO | kKeyAccess)), kAclKeyspace,
             kGeneric, "2.6.0", "Returns the expiration time in milliseconds of a key.", "key",
             PTtlCommand, "O(1)"});
  table.Add({"expiretime", 2, kCmdReadonly | kCmdFast, Keys(KeyAt(1, kKeyRO | kKeyAccess)),
             kAclKeyspace, kGeneric, "7.0.0",
             "Returns the expiration time of a key as a Unix timestamp.", "key", ExpireTimeCommand,
             "O(1)"});
  table.Add({"pexpiretime", 2, kCmdReadonly | kCmdFast, Keys(KeyAt(1, kKeyRO | kKeyAccess)),
             kAclKeyspace, kGeneric, "7.0.0",
             "Returns the expiration time of a key as a Unix milliseconds timestamp.", "key",
             PExpireTimeCommand, "O(1)"});
  table.Add({"persist", 2, kCmdWrite | kCmdFast, Keys(KeyAt(1, kKeyRW | kKeyUpdate)), kAclKeyspace,
             kGeneric, "2.2.0", "Removes the expiration time of a key.", "key", PersistCommand,
             "O(1)"});

  table.Add({"object", -2, 0, Keys(), 0, kGeneric, "2.2.3",
             "A container for object introspection commands.", "", ObjectContainerCommand,
             "Depends on subcommand."});
  table.AddSubcommand(
      "object",
      {"encoding", 3, kCmdReadonly, Keys(KeyAt(2, kKeyRO)), kAclKeyspace, kGeneric, "2.2.3",
       "Returns the internal encoding of a Redis object.", "key", ObjectEncodingCommand, "O(1)"});
  table.AddSubcommand(
      "object", {"freq", 3, kCmdReadonly, Keys(KeyAt(2, kKeyRO)), kAclKeyspace, kGeneric, "4.0.0",
                 "Returns the logarithmic access frequency counter of a Redis object.", "key",
                 ObjectFreqCommand, "O(1)"});
  table.AddSubcommand("object", {"idletime", 3, kCmdReadonly, Keys(KeyAt(2, kKeyRO)), kAclKeyspace,
                                 kGeneric, "2.2.3",
                                 "Returns the time since the last access to a Redis "
                                 "object.",
                                 "key", ObjectIdletimeCommand, "O(1)"});
  table.AddSubcommand(
      "object",
      {"refcount", 3, kCmdReadonly, Keys(KeyAt(2, kKeyRO)), kAclKeyspace, kGeneric, "2.2.3",
       "Returns the reference count of a value of a key.", "key", ObjectRefcountCommand, "O(1)"});
  table.AddSubcommand("object", {"help", 2, kCmdLoading | kCmdStale, Keys(), kAclKeyspace, kGeneric,
                                 "6.2.0", "Returns helpful text about the different subcommands.",
                                 "", ObjectHelpCommand, "O(1)"});

  table.Add({"dbsize", 1, kCmdReadonly | kCmdFast, Keys(), kAclKeyspace, "server", "1.0.0",
             "Returns the number of keys in the database.", "", DbSizeCommand, "O(1)"});
  table.Add({"flushdb", -1, kCmdWrite, Keys(), kAclKeyspace | kAclDangerous, "server", "1.0.0",
             "Remove all keys from the current database.", "[ASYNC | SYNC]", FlushDbCommand,
             "O(N) where N is the number of keys in the selected database"});
  table.Add({"flushall", -1, kCmdWrite, Keys(), kAclKeyspace | kAclDangerous, "server", "1.0.0",
             "Removes all keys from all databases.", "[ASYNC | SYNC]", FlushAllCommand,
             "O(N) where N is the total number of keys in all databases"});
  table.Add({"swapdb", 3, kCmdWrite | kCmdFast, Keys(), kAclKeyspace | kAclDangerous, "server",
             "4.0.0", "Swaps two Redis databases.", "index1 index2", SwapDbCommand,
             "O(N) where N is the count of clients watching or blocking on keys from both "
             "databases."});
}

}  // namespace vireo
