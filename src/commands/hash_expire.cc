// Hash field expiration (Redis 7.4 / 8.0): HEXPIRE, HPEXPIRE, HEXPIREAT, HPEXPIREAT, HTTL,
// HPTTL, HEXPIRETIME, HPEXPIRETIME, HPERSIST, and the 8.0 HGETEX, HSETEX, HGETDEL.
//
// TTLs live in the hash's FieldTtls (types/field_ttl.h). Expired fields are deleted by the
// keyspace on lookup (Database::FindNoTouch) and by its active cycle, which propagate an HDEL
// and publish `hexpired`; so a command here never sees a field whose TTL has passed on a
// master. Every TTL change propagates as an absolute HPEXPIREAT (or HSETEX ... PXAT), and a
// time already in the past deletes the field and propagates an HDEL, as Redis does.
#include <fmt/format.h>

#include <climits>
#include <optional>
#include <string>
#include <vector>

#include "commands/families.h"
#include "commands/helpers.h"
#include "core/arg_parser.h"
#include "core/command_table.h"
#include "core/config.h"
#include "server/client.h"
#include "server/command_context.h"
#include "server/memory_view.h"
#include "server/server_stats.h"
#include "types/hash_object.h"
#include "util/strings.h"

namespace vireo {
namespace {

// Redis keeps field expiry times below 2^46 ms (its ebuckets' limit).
constexpr int64_t kMaxFieldExpireMs = static_cast<int64_t>(0x0000FFFFFFFFFFFFULL >> 2);

constexpr std::string_view kFieldsMissing =
    "ERR Mandatory argument FIELDS is missing or not at the right position";
constexpr std::string_view kNumFieldsMismatch =
    "ERR The `numfields` parameter must match the number of arguments";
constexpr std::string_view kNumFieldsPositive = "ERR Number of fields must be a positive integer";

// Per-field reply codes (HEXPIRE, HTTL, HPERSIST).
constexpr int64_t kNoField = -2;
constexpr int64_t kNoTtl = -1;
constexpr int64_t kConditionNotMet = 0;
constexpr int64_t kSet = 1;
constexpr int64_t kDeletedNow = 2;

enum class Condition { kNone, kNx, kXx, kGt, kLt };

HashLimits Limits(CommandContext& ctx) {
  const ServerConfig& c = ctx.cfg();
  return {static_cast<size_t>(c.hash_max_listpack_entries),
          static_cast<size_t>(c.hash_max_listpack_value)};
}

// "FIELDS numfields field..." at the parser's position: the field arguments, or nullopt with
// the error recorded in `args`. The fields must fill the rest of the command (HSETEX's
// field/value pairs have their own parser).
std::optional<std::span<const std::string_view>> ReadFields(ArgParser& args,
                                                            std::string_view count_error) {
  if (!args.Flag("FIELDS")) {
    args.Fail(kFieldsMissing);
    return std::nullopt;
  }
  int64_t n = args.IntInRange(1, LONG_MAX, count_error);
  if (!args.ok()) return std::nullopt;
  if (static_cast<uint64_t>(n) != args.remaining()) {
    args.Fail(kNumFieldsMismatch);
    return std::nullopt;
  }
  return args.Rest();
}

// "key FIELDS numfields field...": the hash (null when missing) and the fields, or nullopt
// when an error (WRONGTYPE first, then the argument errors) has been replied.
struct HashFields {
  DbEntry* entry = nullptr;
  HashObject* hash = nullptr;
  std::span<const std::string_view> fields;
};

std::optional<HashFields> LookupWithFields(CommandContext& ctx, bool reading) {
  TypedLookup found = reading ? ReadTyped(ctx, ctx.arg(1), ValueType::kHash)
                              : LookupTyped(ctx, ctx.arg(1), ValueType::kHash);
  if (found.wrong_type) return std::nullopt;
  ArgParser args(ctx, 2);
  auto fields = ReadFields(args, kNumFieldsPositive);
  if (!args.Check()) return std::nullopt;
  return HashFields{
      found.entry, found.entry == nullptr ? nullptr : found.entry->value.As<HashObject>(), *fields};
}

// An expire-time argument as Redis's hash commands read it: an integer >= 0 in `unit`, plus
// `base_ms` (now for relative forms, 0 for *AT), at most kMaxFieldExpireMs.
int64_t ReadFieldExpire(ArgParser& args, CommandContext& ctx, TimeUnit unit, int64_t base_ms) {
  int64_t v = args.Int();
  if (!args.ok()) return 0;
  if (v < 0) return args.Fail("ERR invalid expire time, must be >= 0"), 0;
  std::string overflow = fmt::format("ERR invalid expire time in '{}' command", ctx.spec->name);
  if (unit == TimeUnit::kSeconds) {
    if (v > kMaxFieldExpireMs / 1000) return args.Fail(overflow), 0;
    v *= 1000;
  }
  if (v > kMaxFieldExpireMs - base_ms) return args.Fail(overflow), 0;
  return v + base_ms;
}

// What a batch of TTL changes did, for notifications and propagation.
struct TtlChanges {
  std::vector<std::string> updated;  // fields whose TTL was set
  std::vector<std::string> deleted;  // fields deleted because the time had passed
};

// Sets one field's TTL under `cond`; returns the per-field reply code.
int64_t SetOneFieldExpire(CommandContext& ctx, HashObject* hash, std::string_view field,
                          int64_t when, Condition cond, TtlChanges* changes) {
  if (!hash->Contains(field)) return kNoField;
  const int64_t prev = hash->FieldExpire(field);
  if (prev == FieldTtls::kNoTtl) {
    // No TTL counts as an infinite one: GT never holds, LT always does.
    if (cond == Condition::kXx || cond == Condition::kGt) return kConditionNotMet;
  } else if (cond == Condition::kNx || (cond == Condition::kGt && prev >= when) ||
             (cond == Condition::kLt && prev <= when)) {
    return kConditionNotMet;
  }
  // A replica applies its master's times as they are; the master sends the HDEL.
  if (when <= ctx.db.now_ms() &&
      ctx.memory().keyspace_options().expiry_view == ExpiryView::kMaster) {
    hash->Delete(field);
    changes->deleted.emplace_back(field);
    ++ctx.stats().expired_subkeys;
    return kDeletedNow;
  }
  hash->SetFieldExpire(field, when);
  changes->updated.emplace_back(field);
  return kSet;
}

// After a batch of TTL changes on `key`: propagation (HDEL for deleted fields, then
// HPEXPIREAT for the rest), dirty, and the key's removal when it emptied. Returns whether the
// key was deleted. The caller publishes its own events first.
bool FinishTtlChanges(CommandContext& ctx, std::string_view key, DbEntry* entry,
                      const TtlChanges& changes, std::optional<int64_t> expire_at) {
  ctx.PropagateNothing();
  if (!changes.deleted.empty()) {
    std::vector<std::string> hdel{"HDEL", std::string(key)};
    hdel.insert(hdel.end(), changes.deleted.begin(), changes.deleted.end());
    ctx.PropagateInstead(std::move(hdel));
  }
  if (!changes.updated.empty()) {
    std::vector<std::string> cmd;
    if (expire_at) {
      cmd = {"HPEXPIREAT", std::string(key), std::to_string(*expire_at)};
    } else {
      cmd = {"HPERSIST", std::string(key)};
    }
    cmd.push_back("FIELDS");
    cmd.push_back(std::to_string(changes.updated.size()));
    cmd.insert(cmd.end(), changes.updated.begin(), changes.updated.end());
    ctx.PropagateInstead(std::move(cmd));
  }
  size_t n = changes.deleted.size() + changes.updated.size();
  if (n == 0) return false;
  ctx.db.NoteFieldTtls(entry);
  bool key_deleted = entry->value.As<HashObject>()->empty();
  if (key_deleted) ctx.db.DeleteEntry(entry);
  KeyWritten(ctx, key, n);
  return key_deleted;
}

// ---------------------------------------------------------------------------------------------
// HEXPIRE key time [NX | XX | GT | LT] FIELDS numfields field [field ...] (and the P/AT forms)

void HExpireGeneric(CommandContext& ctx, TimeUnit unit, bool absolute) {
  std::string_view key = ctx.arg(1);
  auto [entry, wrong_type] = LookupTyped(ctx, key, ValueType::kHash);
  if (wrong_type) return;
  ArgParser args(ctx, 2);
  const int64_t when = ReadFieldExpire(args, ctx, unit, absolute ? 0 : ctx.db.now_ms());
  Condition cond = Condition::kNone;
  switch (args.OneOf({"NX", "XX", "GT", "LT"})) {
    case 0:
      cond = Condition::kNx;
      break;
    case 1:
      cond = Condition::kXx;
      break;
    case 2:
      cond = Condition::kGt;
      break;
    case 3:
      cond = Condition::kLt;
      break;
    default:
      break;
  }
  auto fields = ReadFields(args, "ERR Parameter `numFields` should be greater than 0");
  if (!args.Check()) return;
  ctx.reply.Array(fields->size());
  if (entry == nullptr) {
    for (size_t i = 0; i < fields->size(); ++i) ctx.reply.Integer(kNoField);
    return;
  }
  auto* hash = entry->value.As<HashObject>();
  TtlChanges changes;
  for (std::string_view f : *fields) {
    ctx.reply.Integer(SetOneFieldExpire(ctx, hash, f, when, cond, &changes));
  }
  if (changes.deleted.empty() && changes.updated.empty()) {
    ctx.PropagateNothing();
    return;
  }
  Notify(ctx, kNotifyHash, changes.deleted.empty() ? "hexpire" : "hdel", key);
  if (FinishTtlChanges(ctx, key, entry, changes, when)) Notify(ctx, kNotifyGeneric, "del", key);
}

void HExpireCommand(CommandContext& ctx) { HExpireGeneric(ctx, TimeUnit::kSeconds, false); }
void HPExpireCommand(CommandContext& ctx) { HExpireGeneric(ctx, TimeUnit::kMilliseconds, false); }
void HExpireAtCommand(CommandContext& ctx) { HExpireGeneric(ctx, TimeUnit::kSeconds, true); }
void HPExpireAtCommand(CommandContext& ctx) { HExpireGeneric(ctx, TimeUnit::kMilliseconds, true); }

// ---------------------------------------------------------------------------------------------
// HTTL / HPTTL / HEXPIRETIME / HPEXPIRETIME key FIELDS numfields field [field ...]

void HTtlGeneric(CommandContext& ctx, TimeUnit unit, bool relative) {
  auto found = LookupWithFields(ctx, /*reading=*/true);
  if (!found) return;
  const HashObject* hash = found->hash;
  const auto* fields = &found->fields;
  const int64_t now = ctx.db.now_ms();
  const int64_t base = relative ? now : 0;
  ctx.reply.Array(fields->size());
  for (std::string_view f : *fields) {
    if (hash == nullptr || !hash->Contains(f)) {
      ctx.reply.Integer(kNoField);
      continue;
    }
    int64_t when = hash->FieldExpire(f);
    if (when == FieldTtls::kNoTtl) {
      ctx.reply.Integer(kNoTtl);
    } else if (when <= now) {
      ctx.reply.Integer(kNoField);  // a replica's field its master hasn't deleted yet
    } else if (unit == TimeUnit::kSeconds) {
      ctx.reply.Integer((when + 999 - base) / 1000);
    } else {
      ctx.reply.Integer(when - base);
    }
  }
}

void HTtlCommand(CommandContext& ctx) { HTtlGeneric(ctx, TimeUnit::kSeconds, true); }
void HPTtlCommand(CommandContext& ctx) { HTtlGeneric(ctx, TimeUnit::kMilliseconds, true); }
void HExpireTimeCommand(CommandContext& ctx) { HTtlGeneric(ctx, TimeUnit::kSeconds, false); }
void HPExpireTimeCommand(CommandContext& ctx) { HTtlGeneric(ctx, TimeUnit::kMilliseconds, false); }

// ---------------------------------------------------------------------------------------------
// HPERSIST key FIELDS numfields field [field ...]

void HPersistCommand(CommandContext& ctx) {
  std::string_view key = ctx.arg(1);
  auto found = LookupWithFields(ctx, /*reading=*/false);
  if (!found) return;
  HashObject* hash = found->hash;
  const auto* fields = &found->fields;
  int64_t changed = 0;
  ctx.reply.Array(fields->size());
  for (std::string_view f : *fields) {
    if (hash == nullptr || !hash->Contains(f)) {
      ctx.reply.Integer(kNoField);
    } else if (!hash->PersistField(f)) {
      ctx.reply.Integer(kNoTtl);
    } else {
      ++changed;
      ctx.reply.Integer(kSet);
    }
  }
  if (changed == 0) return;
  KeyWritten(ctx, key, changed);
  Notify(ctx, kNotifyHash, "hpersist", key);
}

// ---------------------------------------------------------------------------------------------
// HGETDEL key FIELDS numfields field [field ...]

void HGetDelCommand(CommandContext& ctx) {
  std::string_view key = ctx.arg(1);
  auto found = LookupWithFields(ctx, /*reading=*/false);
  if (!found) return;
  HashObject* hash = found->hash;
  const auto* fields = &found->fields;
  std::vector<std::string> hdel{"HDEL", std::string(key)};
  ctx.reply.Array(fields->size());
  for (std::string_view f : *fields) {
    std::optional<std::string_view> v;
    if (hash != nullptr) v = hash->Find(f);
    if (!v) {
      ctx.reply.Null();
      continue;
    }
    ctx.reply.Bulk(*v);
    hash->Delete(f);
    hdel.emplace_back(f);
  }
  if (hdel.size() == 2) {
    ctx.PropagateNothing();
    return;
  }
  const bool key_deleted = hash->empty();
  if (key_deleted) ctx.db.DeleteEntry(found->entry);
  KeyWritten(ctx, key, hdel.size() - 2);
  ctx.PropagateInstead(std::move(hdel));
  Notify(ctx, kNotifyHash, "hdel", key);
  if (key_deleted) Notify(ctx, kNotifyGeneric, "del", key);
}

// ---------------------------------------------------------------------------------------------
// HGETEX key [EX s | PX ms | EXAT s | PXAT ms | PERSIST] FIELDS numfields field [field ...]

void HGetExCommand(CommandContext& ctx) {
  std::string_view key = ctx.arg(1);
  auto [entry, wrong_type] = LookupTyped(ctx, key, ValueType::kHash);
  if (wrong_type) return;
  ArgParser args(ctx, 2);
  std::optional<int64_t> when;
  bool persist = false;
  switch (args.OneOf({"EX", "PX", "EXAT", "PXAT", "PERSIST"})) {
    case 0:
      when = ReadFieldExpire(args, ctx, TimeUnit::kSeconds, ctx.db.now_ms());
      break;
    case 1:
      when = ReadFieldExpire(args, ctx, TimeUnit::kMilliseconds, ctx.db.now_ms());
      break;
    case 2:
      when = ReadFieldExpire(args, ctx, TimeUnit::kSeconds, 0);
      break;
    case 3:
      when = ReadFieldExpire(args, ctx, TimeUnit::kMilliseconds, 0);
      break;
    case 4:
      persist = true;
      break;
    default:
      break;
  }
  auto fields = ReadFields(args, kNumFieldsPositive);
  if (!args.Check()) return;
  ctx.reply.Array(fields->size());
  if (entry == nullptr) {
    for (size_t i = 0; i < fields->size(); ++i) ctx.reply.Null();
    return;
  }
  auto* hash = entry->value.As<HashObject>();
  TtlChanges changes;
  for (std::string_view f : *fields) {
    std::optional<std::string_view> v = hash->Find(f);
    if (!v) {
      ctx.reply.Null();
      continue;
    }
    ctx.reply.Bulk(*v);
    if (persist) {
      if (hash->PersistField(f)) changes.updated.emplace_back(f);
    } else if (when) {
      SetOneFieldExpire(ctx, hash, f, *when, Condition::kNone, &changes);
    }
  }
  if (changes.deleted.empty() && changes.updated.empty()) {
    ctx.PropagateNothing();
    return;
  }
  if (!changes.updated.empty()) {
    Notify(ctx, kNotifyHash, persist ? "hpersist" : "hexpire", key);
  } else {
    Notify(ctx, kNotifyHash, "hdel", key);
  }
  if (FinishTtlChanges(ctx, key, entry, changes, persist ? std::nullopt : when)) {
    Notify(ctx, kNotifyGeneric, "del", key);
  }
}

// ---------------------------------------------------------------------------------------------
// HSETEX key [FNX | FXX] [EX s | PX ms | EXAT s | PXAT ms | KEEPTTL]
//        FIELDS numfields field value [field value ...]

struct HSetExArgs {
  bool fnx = false;
  bool fxx = false;
  bool keep_ttl = false;
  std::optional<int64_t> when;
  std::span<const std::string_view> pairs;
};

void ReplyArity(CommandContext& ctx) {
  ctx.reply.Error(fmt::format("ERR wrong number of arguments for '{}' command", ctx.spec->name));
}

// Redis 8.0's order: options in any order up to FIELDS, each checked as it comes.
bool ParseHSetEx(CommandContext& ctx, HSetExArgs* out) {
  ArgParser args(ctx, 2);
  auto expiry_taken = [&] {
    if (out->when || out->keep_ttl) {
      args.Fail("ERR Only one of EX, PX, EXAT, PXAT or KEEPTTL arguments can be specified");
      return true;
    }
    return false;
  };
  while (args.HasNext()) {
    const size_t at = args.pos();
    if (args.Flag("FIELDS")) {
      if (at + 3 >= ctx.argc()) {
        ReplyArity(ctx);
        return false;
      }
      int64_t n = args.IntInRange(1, INT_MAX, "ERR invalid number of fields");
      if (!args.Check()) return false;
      if (args.remaining() % 2 != 0 || static_cast<uint64_t>(n) != args.remaining() / 2) {
        ReplyArity(ctx);
        return false;
      }
      out->pairs = args.Rest();
      return true;
    }
    // EX, PX, EXAT, PXAT: seconds at even indexes, absolute times from 2 on.
    if (const int time = args.OneOf({"EX", "PX", "EXAT", "PXAT"}); time >= 0) {
      if (expiry_taken()) break;
      if (!args.HasNext()) {
        args.Fail("ERR missing expire time");
        break;
      }
      const TimeUnit unit = time % 2 == 0 ? TimeUnit::kSeconds : TimeUnit::kMilliseconds;
      out->when = ReadFieldExpire(args, ctx, unit, time < 2 ? ctx.db.now_ms() : 0);
    } else if (args.Flag("KEEPTTL")) {
      if (expiry_taken()) break;
      out->keep_ttl = true;
    } else if (const int cond = args.OneOf({"FNX", "FXX"}); cond >= 0) {
      if (out->fnx || out->fxx) {
        args.Fail("ERR Only one of FXX or FNX arguments can be specified");
        break;
      }
      (cond == 0 ? out->fnx : out->fxx) = true;
    } else {
      args.Fail(fmt::format("ERR unknown argument: {}", args.Peek()));
      break;
    }
  }
  if (args.Check()) ReplyArity(ctx);  // ran out of arguments before FIELDS
  return false;
}

void HSetExCommand(CommandContext& ctx) {
  HSetExArgs a;
  if (!ParseHSetEx(ctx, &a)) return;
  std::string_view key = ctx.arg(1);
  auto [entry, wrong_type] = LookupTyped(ctx, key, ValueType::kHash);
  if (wrong_type) return;
  if (a.fnx || a.fxx) {
    size_t found = 0;
    const size_t n = a.pairs.size() / 2;
    if (entry != nullptr) {
      const auto* hash = entry->value.As<HashObject>();
      for (size_t i = 0; i < a.pairs.size(); i += 2) found += hash->Contains(a.pairs[i]) ? 1 : 0;
    }
    if ((a.fnx && found != 0) || (a.fxx && found != n)) {
      ctx.reply.Integer(0);
      return;
    }
  }
  if (entry == nullptr) {
    entry = ctx.db.Add(key, Value::Object(ValueType::kHash, std::make_unique<HashObject>()));
  }
  auto* hash = entry->value.As<HashObject>();
  HashLimits limits = Limits(ctx);
  hash->PrepareForArgs(a.pairs, limits);
  TtlChanges changes;
  const bool keep = a.keep_ttl || a.when.has_value();
  for (size_t i = 0; i < a.pairs.size(); i += 2) {
    hash->Set(a.pairs[i], a.pairs[i + 1], limits, keep);
    if (a.when) SetOneFieldExpire(ctx, hash, a.pairs[i], *a.when, Condition::kNone, &changes);
  }
  Notify(ctx, kNotifyHash, "hset", key);
  if (!changes.deleted.empty() || !changes.updated.empty()) {
    Notify(ctx, kNotifyHash, changes.deleted.empty() ? "hexpire" : "hdel", key);
  }
  ctx.db.NoteFieldTtls(entry);
  const bool key_deleted = hash->empty();
  if (key_deleted) ctx.db.DeleteEntry(entry);
  KeyWritten(ctx, key, a.pairs.size() / 2);
  if (key_deleted) Notify(ctx, kNotifyGeneric, "del", key);
  // What to replay: a relative time becomes PXAT; the FNX/FXX decision was taken here.
  if (!changes.deleted.empty()) {
    // One time for all fields: if one was already past, all were, and the net effect of
    // setting then deleting them is their deletion.
    std::vector<std::string> hdel{"HDEL", std::string(key)};
    hdel.insert(hdel.end(), changes.deleted.begin(), changes.deleted.end());
    ctx.PropagateInstead(std::move(hdel));
  } else {
    std::vector<std::string> cmd{"HSETEX", std::string(key)};
    if (a.when) {
      cmd.push_back("PXAT");
      cmd.push_back(std::to_string(*a.when));
    } else if (a.keep_ttl) {
      cmd.push_back("KEEPTTL");
    }
    cmd.push_back("FIELDS");
    cmd.push_back(std::to_string(a.pairs.size() / 2));
    cmd.insert(cmd.end(), a.pairs.begin(), a.pairs.end());
    ctx.PropagateInstead(std::move(cmd));
  }
  ctx.reply.Integer(1);
}

}  // namespace

void RegisterHashExpireCommands(CommandTable& table) {
  constexpr const char* kGroup = "hash";
  constexpr uint64_t kWriteFast = kCmdWrite | kCmdDenyOom | kCmdFast;
  constexpr const char* kPerField = "O(N) where N is the number of specified fields";
  constexpr const char* kFieldsSyntax = "key FIELDS numfields field [field ...]";
  struct ExpireForm {
    const char* name;
    const char* syntax;
    const char* summary;
    void (*handler)(CommandContext&);
  };
  const ExpireForm expire_forms[] = {
      {"hexpire", "key seconds [NX | XX | GT | LT] FIELDS numfields field [field ...]",
       "Set expiry for hash field using relative time to expire (seconds)", HExpireCommand},
      {"hpexpire", "key milliseconds [NX | XX | GT | LT] FIELDS numfields field [field ...]",
       "Set expiry for hash field using relative time to expire (milliseconds)", HPExpireCommand},
      {"hexpireat", "key unix-time-seconds [NX | XX | GT | LT] FIELDS numfields field [field ...]",
       "Set expiry for hash field using an absolute Unix timestamp (seconds)", HExpireAtCommand},
      {"hpexpireat",
       "key unix-time-milliseconds [NX | XX | GT | LT] FIELDS numfields field [field ...]",
       "Set expiry for hash field using an absolute Unix timestamp (milliseconds)",
       HPExpireAtCommand},
  };
  for (const ExpireForm& f : expire_forms) {
    table.Add({f.name, -6, kCmdWrite | kCmdDenyOom | kCmdFast, Keys(KeyAt(1, kKeyRW | kKeyUpdate)),
               kAclHash, kGroup, "7.4.0", f.summary, f.syntax, f.handler, kPerField});
  }
  const ExpireForm ttl_forms[] = {
      {"httl", kFieldsSyntax, "Returns the TTL in seconds of a hash field.", HTtlCommand},
      {"hpttl", kFieldsSyntax, "Returns the TTL in milliseconds of a hash field.", HPTtlCommand},
      {"hexpiretime", kFieldsSyntax,
       "Returns the expiration time of a hash field as a Unix timestamp, in "
       "seconds.",
       HExpireTimeCommand},
      {"hpexpiretime", kFieldsSyntax,
       "Returns the expiration time of a hash field as a Unix timestamp, in "
       "msec.",
       HPExpireTimeCommand},
  };
  for (const ExpireForm& f : ttl_forms) {
    table.Add({f.name, -5, kCmdReadonly | kCmdFast, Keys(KeyAt(1, kKeyRO | kKeyAccess)), kAclHash,
               kGroup, "7.4.0", f.summary, f.syntax, f.handler, kPerField});
  }
  table.Add({"hpersist", -5, kCmdWrite | kCmdFast, Keys(KeyAt(1, kKeyRW | kKeyUpdate)), kAclHash,
             kGroup, "7.4.0", "Removes the expiration time for each specified field", kFieldsSyntax,
             HPersistCommand, kPerField});
  table.Add({"hgetdel", -5, kCmdWrite | kCmdFast, Keys(KeyAt(1, kKeyRW | kKeyAccess | kKeyDelete)),
             kAclHash, kGroup, "8.0.0",
             "Returns the value of a field and deletes it from the hash.", kFieldsSyntax,
             HGetDelCommand, "O(N) where N is the number of specified fields"});
  table.Add({"hgetex", -5, kCmdWrite | kCmdFast, Keys(KeyAt(1, kKeyRW | kKeyAccess | kKeyUpdate)),
             kAclHash, kGroup, "8.0.0",
             "Get the value of one or more fields of a given hash key, and "
             "optionally set their expiration.",
             "key [EX seconds | PX milliseconds | EXAT unix-time-seconds | PXAT "
             "unix-time-milliseconds | PERSIST] FIELDS numfields field [field ...]",
             HGetExCommand, kPerField});
  table.Add({"hsetex", -6, kWriteFast, Keys(KeyAt(1, kKeyRW | kKeyUpdate)), kAclHash, kGroup,
             "8.0.0",
             "Set the value of one or more fields of a given hash key, and optionally "
             "set their expiration.",
             "key [FNX | FXX] [EX seconds | PX milliseconds | EXAT unix-time-seconds | PXAT "
             "unix-time-milliseconds | KEEPTTL] FIELDS numfields field value [field value ...]",
             HSetExCommand, "O(N) where N is the number of fields being set."});
}

}  // namespace vireo
