// String commands: GET/SET and their variants, MGET/MSET, APPEND, ranges, counters and LCS.
#include "util/strings.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "commands/families.h"
#include "commands/helpers.h"
#include "core/arg_parser.h"
#include "core/command_table.h"
#include "core/config.h"
#include "server/client.h"
#include "server/command_context.h"
#include "types/lcs.h"
#include "types/value_digest.h"

namespace vireo {
namespace {

void ReplyString(CommandContext& ctx, const Value& value) {
  char scratch[24];
  ctx.reply.Bulk(value.StringView(scratch));
}

// Replies with the string at `key` (or null). Returns false after replying WRONGTYPE.
bool ReplyGet(CommandContext& ctx, std::string_view key, DbEntry** found) {
  DbEntry* entry = LookupRead(ctx, key);
  *found = entry;
  if (entry == nullptr) {
    ctx.reply.Null();
    return true;
  }
  if (!entry->value.is_string()) {
    ctx.reply.Error(errors::kWrongType);
    return false;
  }
  ReplyString(ctx, entry->value);
  return true;
}

// ---------------------------------------------------------------------------------------------
// SET / GETEX options

enum class ExpireKind : uint8_t { kNone, kEx, kPx, kExAt, kPxAt };
// NX, XX, and Redis 8.4's compare-and-set conditions on the current value or its digest.
enum class SetCondition : uint8_t { kNone, kNx, kXx, kIfEq, kIfNe, kIfDeq, kIfDne };

struct ExpireOptions {
  SetCondition condition = SetCondition::kNone;
  std::string_view compare;  // IFEQ/IFNE's value
  uint64_t digest = 0;       // IFDEQ/IFDNE's digest
  bool get = false;
  bool keep_ttl = false;
  bool persist = false;
  ExpireKind kind = ExpireKind::kNone;
  size_t expire_at = 0;  // argv index of the time
};

// SET's condition at the parser's position, if any: NX, XX, or IFEQ/IFNE value, IFDEQ/IFDNE
// digest. A second, different condition is a syntax error, as in Redis; a digest that is not
// 16 hex digits is refused before the key is looked at.
bool ParseSetCondition(ArgParser& args, ExpireOptions* out) {
  int which = args.OneOf({"NX", "XX"});
  if (which < 0 && args.remaining() >= 2) {
    which = args.OneOf({"IFEQ", "IFNE", "IFDEQ", "IFDNE"});
    if (which >= 0) which += 2;
  }
  if (which < 0) return false;
  const auto condition = static_cast<SetCondition>(which + 1);
  if (out->condition != SetCondition::kNone && out->condition != condition) args.SyntaxError();
  out->condition = condition;
  if (condition == SetCondition::kIfEq || condition == SetCondition::kIfNe) {
    out->compare = args.Next();
  } else if (condition == SetCondition::kIfDeq || condition == SetCondition::kIfDne) {
    std::optional<uint64_t> digest = ParseDigest(args.Next());
    if (!digest) args.Fail(errors::kBadDigest);
    out->digest = digest.value_or(0);
  }
  return true;
}

// Parses SET's options (for_set) or GETEX's, from argv[first] on. Redis accepts an option
// repeated (SET k v EX 1 EX 2: the last wins) but rejects conflicting ones with a syntax error.
// The time itself is read later (ResolveExpire): GETEX looks the key up first.
bool ParseExpireOptions(CommandContext& ctx, size_t first, bool for_set, ExpireOptions* out) {
  ArgParser args(ctx, first);
  while (args.HasNext()) {
    const size_t at = args.pos();
    // EX, PX, EXAT, PXAT in ExpireKind order, only with a time after it.
    int kind = args.remaining() >= 2 ? args.OneOf({"EX", "PX", "EXAT", "PXAT"}) : -1;
    auto expire = static_cast<ExpireKind>(kind + 1);
    if (kind >= 0) {
      if (out->keep_ttl || out->persist ||
          (out->kind != ExpireKind::kNone && out->kind != expire)) {
        args.SyntaxError();
      }
      out->kind = expire;
      out->expire_at = at + 1;
      args.Next();
    } else if (for_set && ParseSetCondition(args, out)) {
      // The one condition, or the same one repeated (the last value wins).
    } else if (for_set && args.Flag("GET")) {
      out->get = true;
    } else if (for_set && out->kind == ExpireKind::kNone && args.Flag("KEEPTTL")) {
      out->keep_ttl = true;
    } else if (!for_set && out->kind == ExpireKind::kNone && args.Flag("PERSIST")) {
      out->persist = true;
    } else {
      args.SyntaxError();
    }
  }
  return args.Check();
}

// Reads the expire time at argv[options.expire_at] as an absolute unix time in ms. Replies and
// returns false on a non-integer, a non-positive value, or one that overflows once scaled or
// offset by now.
bool ResolveExpire(CommandContext& ctx, const ExpireOptions& options, std::string_view command,
                   int64_t* when_ms) {
  const ExpireKind kind = options.kind;
  ArgParser args(ctx, options.expire_at);
  const bool seconds = kind == ExpireKind::kEx || kind == ExpireKind::kExAt;
  const bool absolute = kind == ExpireKind::kExAt || kind == ExpireKind::kPxAt;
  *when_ms = args.ExpireAtMs(seconds ? TimeUnit::kSeconds : TimeUnit::kMilliseconds, absolute,
                             ctx.db.now_ms(), command, /*positive_only=*/true);
  return args.Check();
}

// Whether IFEQ/IFNE/IFDEQ/IFDNE holds for `entry` (a string, or missing: only the "not equal"
// forms hold for a missing key, so they create it).
bool ConditionHolds(const ExpireOptions& options, DbEntry* entry) {
  const bool equal_form =
      options.condition == SetCondition::kIfEq || options.condition == SetCondition::kIfDeq;
  if (entry == nullptr) return !equal_form;
  char scratch[24];
  std::string_view current = entry->value.StringView(scratch);
  bool equal;
  if (options.condition == SetCondition::kIfEq || options.condition == SetCondition::kIfNe) {
    equal = current == options.compare;
  } else {
    equal = ValueDigest(current) == options.digest;
  }
  return equal == equal_form;
}

// What SET-like commands reply when they store the value, and when NX/XX prevents it.
enum class SetReply : uint8_t { kOkOrNull, kOneOrZero };

// The shared body of SET, SETNX, SETEX and PSETEX.
void SetGeneric(CommandContext& ctx, std::string_view key, std::string_view value,
                const ExpireOptions& options, std::string_view command, SetReply reply_kind) {
  int64_t when_ms = 0;
  const bool has_expire = options.kind != ExpireKind::kNone;
  if (has_expire && !ResolveExpire(ctx, options, command, &when_ms)) {
    return;
  }

  DbEntry* entry = nullptr;
  bool looked_up = false;
  if (options.get) {
    // SET ... GET replies with the old value first; a non-string old value aborts the SET.
    if (!ReplyGet(ctx, key, &entry)) return;
    looked_up = true;
  } else if (options.condition != SetCondition::kNone) {
    entry = ctx.db.Find(key);
    looked_up = true;
  }
  bool passes = true;
  if (options.condition >= SetCondition::kIfEq) {
    // The compare-and-set conditions read the value, so they need a string (GET has already
    // refused other types).
    if (entry != nullptr && !entry->value.is_string()) {
      ctx.reply.Error(errors::kWrongType);
      return;
    }
    passes = ConditionHolds(options, entry);
  } else {
    passes = !((options.condition == SetCondition::kNx && entry != nullptr) ||
               (options.condition == SetCondition::kXx && entry == nullptr));
  }
  if (!passes) {
    if (!options.get) {
      if (reply_kind == SetReply::kOneOrZero) {
        ctx.reply.Integer(0);
      } else {
        ctx.reply.Null();
      }
    }
    return;
  }

  // A new expire time overwrites the old one in place rather than dropping and re-adding it.
  const bool keep_ttl = options.keep_ttl || has_expire;
  if (!looked_up) {
    entry = ctx.db.Set(key, Value::String(value), keep_ttl);
  } else if (entry != nullptr) {
    // Through Set, like the path above, so the overwrite raises "overwritten"/"type_changed".
    entry = ctx.db.Set(key, Value::String(value), keep_ttl);
  } else {
    entry = ctx.db.Add(key, Value::String(value));
  }
  Notify(ctx, kNotifyString, "set", key);
  if (has_expire) {
    ctx.db.SetExpire(entry, when_ms);
    Notify(ctx, kNotifyGeneric, "expire", key);
    // A time already past leaves the key logically expired, as in Redis: looking it up now
    // removes it and counts it in expired_keys.
    if (when_ms <= ctx.db.now_ms()) {
      ctx.db.Find(key);
      // The expiry logged the DEL that is this command's whole effect.
      ctx.PropagateNothing();
    } else if (options.kind != ExpireKind::kPxAt || options.condition >= SetCondition::kIfEq) {
      // Relative (and second) times are logged as the absolute time in ms, as Redis 7 does.
      ctx.PropagateInstead(
          {"SET", std::string(key), std::string(value), "PXAT", std::to_string(when_ms)});
    }
  } else if (options.condition >= SetCondition::kIfEq) {
    // The condition held here; a replica or a replay applies the outcome unconditionally, so
    // a copy that drifted can't skip the write.
    std::vector<std::string> set{"SET", std::string(key), std::string(value)};
    if (options.keep_ttl) set.emplace_back("KEEPTTL");
    ctx.PropagateInstead(std::move(set));
  }
  KeyWritten(ctx, key);
  if (options.get) return;
  if (reply_kind == SetReply::kOneOrZero) {
    ctx.reply.Integer(1);
  } else {
    ctx.reply.Ok();
  }
}

void SetCommand(CommandContext& ctx) {
  if (ctx.argc() == 3) {
    // The common case, kept free of option handling.
    ctx.db.Set(ctx.arg(1), Value::String(ctx.arg(2)));
    KeyWritten(ctx, ctx.arg(1));
    Notify(ctx, kNotifyString, "set", ctx.arg(1));
    ctx.reply.Ok();
    return;
  }
  ExpireOptions options;
  if (!ParseExpireOptions(ctx, 3, true, &options)) return;
  SetGeneric(ctx, ctx.arg(1), ctx.arg(2), options, "set", SetReply::kOkOrNull);
}

void SetnxCommand(CommandContext& ctx) {
  ExpireOptions options;
  options.condition = SetCondition::kNx;
  SetGeneric(ctx, ctx.arg(1), ctx.arg(2), options, "setnx", SetReply::kOneOrZero);
}

void SetexCommand(CommandContext& ctx) {
  ExpireOptions options;
  options.kind = ExpireKind::kEx;
  options.expire_at = 2;
  SetGeneric(ctx, ctx.arg(1), ctx.arg(3), options, "setex", SetReply::kOkOrNull);
}

void PsetexCommand(CommandContext& ctx) {
  ExpireOptions options;
  options.kind = ExpireKind::kPx;
  options.expire_at = 2;
  SetGeneric(ctx, ctx.arg(1), ctx.arg(3), options, "psetex", SetReply::kOkOrNull);
}

// ---------------------------------------------------------------------------------------------
// GET and friends

void GetCommand(CommandContext& ctx) {
  DbEntry* entry = LookupRead(ctx, ctx.arg(1));
  if (entry == nullptr) {
    ctx.reply.Null();
  } else if (!entry->value.is_string()) {
    ctx.reply.Error(errors::kWrongType);
  } else {
    ReplyString(ctx, entry->value);
  }
}

void GetsetCommand(CommandContext& ctx) {
  DbEntry* entry;
  if (!ReplyGet(ctx, ctx.arg(1), &entry)) return;
  // Set replaces the value and drops the TTL; an existing key raises "overwritten".
  ctx.db.Set(ctx.arg(1), Value::String(ctx.arg(2)));
  KeyWritten(ctx, ctx.arg(1));
  Notify(ctx, kNotifyString, "set", ctx.arg(1));
  ctx.PropagateInstead({"SET", std::string(ctx.arg(1)), std::string(ctx.arg(2))});
}

void GetdelCommand(CommandContext& ctx) {
  DbEntry* entry;
  if (!ReplyGet(ctx, ctx.arg(1), &entry) || entry == nullptr) return;
  ctx.db.DeleteEntry(entry);
  KeyWritten(ctx, ctx.arg(1));
  Notify(ctx, kNotifyGeneric, "del", ctx.arg(1));
  ctx.PropagateInstead({"DEL", std::string(ctx.arg(1))});
}

void GetexCommand(CommandContext& ctx) {
  ExpireOptions options;
  if (!ParseExpireOptions(ctx, 2, false, &options)) return;
  // Redis looks the key up before validating the expire time: a missing key replies null
  // even when the time is invalid.
  DbEntry* entry = LookupRead(ctx, ctx.arg(1));
  if (entry == nullptr) {
    ctx.reply.Null();
    return;
  }
  if (!entry->value.is_string()) {
    ctx.reply.Error(errors::kWrongType);
    return;
  }
  int64_t when_ms = 0;
  if (options.kind != ExpireKind::kNone && !ResolveExpire(ctx, options, "getex", &when_ms)) {
    return;
  }
  ReplyString(ctx, entry->value);
  const bool absolute = options.kind == ExpireKind::kExAt || options.kind == ExpireKind::kPxAt;
  if (absolute && when_ms <= ctx.db.now_ms()) {
    // Unlike SET, GETEX deletes a key given a past time outright, as an expiry would be
    // (Redis propagates DEL, or UNLINK with lazyfree-lazy-expire).
    const bool lazy = ctx.cfg().lazyfree_lazy_expire;
    ctx.db.DeleteEntry(entry, lazy);
    KeyWritten(ctx, ctx.arg(1));
    Notify(ctx, kNotifyGeneric, "del", ctx.arg(1));
    ctx.PropagateInstead({lazy ? "UNLINK" : "DEL", std::string(ctx.arg(1))});
  } else if (options.kind != ExpireKind::kNone) {
    ctx.db.SetExpire(entry, when_ms);
    KeyWritten(ctx, ctx.arg(1));
    Notify(ctx, kNotifyGeneric, "expire", ctx.arg(1));
    ctx.PropagateInstead({"PEXPIREAT", std::string(ctx.arg(1)), std::to_string(when_ms)});
  } else if (options.persist && ctx.db.Persist(entry)) {
    KeyWritten(ctx, ctx.arg(1));
    Notify(ctx, kNotifyGeneric, "persist", ctx.arg(1));
    ctx.PropagateInstead({"PERSIST", std::string(ctx.arg(1))});
  }
}

void MgetCommand(CommandContext& ctx) {
  ctx.reply.Array(ctx.argc() - 1);
  for (size_t i = 1; i < ctx.argc(); ++i) {
    DbEntry* entry = LookupRead(ctx, ctx.arg(i));
    // MGET never fails: keys of other types read as missing.
    if (entry == nullptr || !entry->value.is_string()) {
      ctx.reply.Null();
    } else {
      ReplyString(ctx, entry->value);
    }
  }
}

bool CheckKeyValuePairs(CommandContext& ctx) {
  if (ctx.argc() % 2 == 0) {
    std::string message = "ERR wrong number of arguments for '";
    message.append(ctx.spec != nullptr ? ctx.spec->name : "mset");
    message.append("' command");
    ctx.reply.Error(message);
    return false;
  }
  return true;
}

void MsetCommand(CommandContext& ctx) {
  if (!CheckKeyValuePairs(ctx)) return;
  for (size_t i = 1; i < ctx.argc(); i += 2) {
    ctx.db.Set(ctx.arg(i), Value::String(ctx.arg(i + 1)));
    KeyWritten(ctx, ctx.arg(i));
    Notify(ctx, kNotifyString, "set", ctx.arg(i));
  }
  ctx.reply.Ok();
}

void MsetnxCommand(CommandContext& ctx) {
  if (!CheckKeyValuePairs(ctx)) return;
  for (size_t i = 1; i < ctx.argc(); i += 2) {
    if (ctx.db.Find(ctx.arg(i)) != nullptr) {
      ctx.reply.Integer(0);
      return;
    }
  }
  for (size_t i = 1; i < ctx.argc(); i += 2) {
    // A key repeated in the arguments exists by its second occurrence: Set, not Add.
    ctx.db.Set(ctx.arg(i), Value::String(ctx.arg(i + 1)));
    KeyWritten(ctx, ctx.arg(i));
    Notify(ctx, kNotifyString, "set", ctx.arg(i));
  }
  ctx.reply.Integer(1);
}

// ---------------------------------------------------------------------------------------------
// APPEND, STRLEN, ranges

// Redis's cap on string sizes: proto-max-bulk-len, with overflow of the sum caught too.
bool CheckStringLength(CommandContext& ctx, uint64_t size, uint64_t append) {
  uint64_t total = size + append;
  const auto limit = static_cast<uint64_t>(ctx.cfg().proto_max_bulk_len);
  if (total < size || total > limit) {
    ctx.reply.Error("ERR string exceeds maximum allowed size (proto-max-bulk-len)");
    return false;
  }
  return true;
}

void AppendCommand(CommandContext& ctx) {
  auto [entry, wrong_type] = LookupTyped(ctx, ctx.arg(1), ValueType::kString);
  if (wrong_type) return;
  std::string_view suffix = ctx.arg(2);
  if (entry == nullptr) {
    // A new key stores the argument as SET would, so APPEND k 12 is still int-encoded.
    ctx.db.Add(ctx.arg(1), Value::String(suffix));
    KeyWritten(ctx, ctx.arg(1));
    Notify(ctx, kNotifyString, "append", ctx.arg(1));
    ctx.reply.Integer(static_cast<int64_t>(suffix.size()));
    return;
  }
  if (!CheckStringLength(ctx, entry->value.StringLength(), suffix.size())) return;
  std::string* s = entry->value.MutableString();
  s->append(suffix);
  KeyWritten(ctx, ctx.arg(1));
  Notify(ctx, kNotifyString, "append", ctx.arg(1));
  ctx.reply.Integer(static_cast<int64_t>(s->size()));
}

void StrlenCommand(CommandContext& ctx) {
  DbEntry* entry = LookupRead(ctx, ctx.arg(1));
  if (entry == nullptr) {
    ctx.reply.Integer(0);
  } else if (!entry->value.is_string()) {
    ctx.reply.Error(errors::kWrongType);
  } else {
    ctx.reply.Integer(static_cast<int64_t>(entry->value.StringLength()));
  }
}

void GetrangeCommand(CommandContext& ctx) {
  ArgParser args(ctx, 2);
  const int64_t start = args.Int();
  const int64_t end = args.Int();
  if (!args.Check()) return;
  DbEntry* entry = LookupRead(ctx, ctx.arg(1));
  if (entry == nullptr) {
    ctx.reply.Bulk("");
    return;
  }
  if (!entry->value.is_string()) {
    ctx.reply.Error(errors::kWrongType);
    return;
  }
  char scratch[24];
  std::string_view s = entry->value.StringView(scratch);
  const auto len = static_cast<int64_t>(s.size());
  int64_t from = start;
  int64_t to = end;
  // Both negative with start after end selects nothing, before any clamping.
  if (from < 0 && to < 0 && from > to) {
    ctx.reply.Bulk("");
    return;
  }
  if (from < 0) from = std::max<int64_t>(len + from, 0);
  if (to < 0) to = std::max<int64_t>(len + to, 0);
  if (to >= len) to = len - 1;
  if (len == 0 || from > to) {
    ctx.reply.Bulk("");
    return;
  }
  ctx.reply.Bulk(s.substr(static_cast<size_t>(from), static_cast<size_t>(to - from + 1)));
}

void SetrangeCommand(CommandContext& ctx) {
  ArgParser args(ctx, 2);
  const int64_t offset_arg = args.IntAtLeast(0, "ERR offset is out of range");
  if (!args.Check()) return;
  const auto offset = static_cast<uint64_t>(offset_arg);
  std::string_view patch = ctx.arg(3);
  auto [entry, wrong_type] = LookupTyped(ctx, ctx.arg(1), ValueType::kString);
  if (wrong_type) return;
  if (entry == nullptr) {
    // Writing nothing to a missing key creates nothing.
    if (patch.empty()) {
      ctx.reply.Integer(0);
      return;
    }
    if (!CheckStringLength(ctx, offset, patch.size())) return;
    // Sized exactly: appending the patch to the zeros would double the allocation.
    std::string s;
    s.reserve(offset + patch.size());
    s.assign(offset, '\0');
    s.append(patch);
    ctx.db.Add(ctx.arg(1), Value::RawString(std::move(s)));
    KeyWritten(ctx, ctx.arg(1));
    Notify(ctx, kNotifyString, "setrange", ctx.arg(1));
    ctx.reply.Integer(static_cast<int64_t>(offset + patch.size()));
    return;
  }
  if (patch.empty()) {
    ctx.reply.Integer(static_cast<int64_t>(entry->value.StringLength()));
    return;
  }
  if (!CheckStringLength(ctx, offset, patch.size())) return;
  std::string* s = entry->value.MutableString();
  const size_t needed = offset + patch.size();
  if (s->size() < needed) s->resize(needed, '\0');
  memcpy(s->data() + offset, patch.data(), patch.size());
  KeyWritten(ctx, ctx.arg(1));
  Notify(ctx, kNotifyString, "setrange", ctx.arg(1));
  ctx.reply.Integer(static_cast<int64_t>(s->size()));
}

// ---------------------------------------------------------------------------------------------
// Counters

void IncrDecrBy(CommandContext& ctx, int64_t increment) {
  auto [entry, wrong_type] = LookupTyped(ctx, ctx.arg(1), ValueType::kString);
  if (wrong_type) return;
  int64_t current = 0;
  if (entry != nullptr && !entry->value.GetInt(&current)) {
    // A counter stored as text must read as an integer argument would.
    char scratch[24];
    ArgParser stored(ctx);
    current = stored.IntValue(entry->value.StringView(scratch));
    if (!stored.Check()) return;
  }
  int64_t result;
  if (__builtin_add_overflow(current, increment, &result)) {
    ctx.reply.Error(errors::kOverflow);
    return;
  }
  // The value is replaced in place, so the key keeps its TTL.
  if (entry != nullptr) {
    entry->value = Value::Integer(result);
  } else {
    ctx.db.Add(ctx.arg(1), Value::Integer(result));
  }
  KeyWritten(ctx, ctx.arg(1));
  Notify(ctx, kNotifyString, "incrby", ctx.arg(1));
  ctx.reply.Integer(result);
}

void IncrCommand(CommandContext& ctx) { IncrDecrBy(ctx, 1); }
void DecrCommand(CommandContext& ctx) { IncrDecrBy(ctx, -1); }

void IncrbyCommand(CommandContext& ctx) {
  ArgParser args(ctx, 2);
  const int64_t increment = args.Int();
  if (args.Check()) IncrDecrBy(ctx, increment);
}

void DecrbyCommand(CommandContext& ctx) {
  ArgParser args(ctx, 2);
  const int64_t decrement = args.Int();
  if (decrement == INT64_MIN) args.Fail("ERR decrement would overflow");
  if (args.Check()) IncrDecrBy(ctx, -decrement);
}

void IncrbyfloatCommand(CommandContext& ctx) {
  auto [entry, wrong_type] = LookupTyped(ctx, ctx.arg(1), ValueType::kString);
  if (wrong_type) return;
  // Redis reads the stored value before the increment, so its error wins.
  ArgParser args(ctx, 2);
  long double current = 0;
  if (entry != nullptr) {
    int64_t as_int;
    char scratch[24];
    if (entry->value.GetInt(&as_int)) {
      current = static_cast<long double>(as_int);
    } else {
      current = args.LongDoubleValue(entry->value.StringView(scratch));
    }
  }
  const long double increment = args.LongDouble();
  if (!args.Check()) return;
  const long double result = current + increment;
  if (std::isnan(result) || std::isinf(result)) {
    ctx.reply.Error("ERR increment would produce NaN or Infinity");
    return;
  }
  const std::string text = FormatLongDouble(result);
  // Stored as text, never int-encoded, as Redis does; the TTL is kept.
  if (entry != nullptr) {
    entry->value = Value::PlainString(text);
  } else {
    ctx.db.Add(ctx.arg(1), Value::PlainString(text));
  }
  KeyWritten(ctx, ctx.arg(1));
  Notify(ctx, kNotifyString, "incrbyfloat", ctx.arg(1));
  // Logged as the value it produced, so a replay can't round differently.
  ctx.PropagateInstead({"SET", std::string(ctx.arg(1)), text, "KEEPTTL"});
  ctx.reply.Bulk(text);
}

// ---------------------------------------------------------------------------------------------
// LCS

struct LcsArgs {
  bool len = false;
  bool idx = false;
  bool with_match_len = false;
  int64_t min_match_len = 0;
};

bool ParseLcsArgs(CommandContext& ctx, LcsArgs* out) {
  ArgParser args(ctx, 3);
  while (args.HasNext()) {
    if (args.Flag("IDX")) {
      out->idx = true;
    } else if (args.Flag("LEN")) {
      out->len = true;
    } else if (args.Flag("WITHMATCHLEN")) {
      out->with_match_len = true;
    } else if (args.OptionName("MINMATCHLEN")) {
      out->min_match_len = std::max<int64_t>(args.Int(), 0);
    } else {
      args.SyntaxError();
    }
  }
  if (out->idx && out->len) {
    args.Fail("ERR If you want both the length and indexes, please just use IDX.");
  }
  return args.Check();
}

void ReplyLcsMatches(CommandContext& ctx, const LcsResult& result, bool with_match_len) {
  ReplyBuilder& r = ctx.reply;
  r.Map(2);
  r.Bulk("matches");
  r.Array(result.matches.size());
  for (const LcsMatch& m : result.matches) {
    r.Array(with_match_len ? 3 : 2);
    r.Array(2);
    r.Integer(m.a_start);
    r.Integer(m.a_end);
    r.Array(2);
    r.Integer(m.b_start);
    r.Integer(m.b_end);
    if (with_match_len) r.Integer(m.length());
  }
  r.Bulk("len");
  r.Integer(result.length);
}

void LcsCommand(CommandContext& ctx) {
  // Both keys are looked up (and counted) before the options are parsed, as in Redis, so a
  // type error wins over a syntax error.
  DbEntry* entry_a = LookupRead(ctx, ctx.arg(1));
  DbEntry* entry_b = LookupRead(ctx, ctx.arg(2));
  if ((entry_a != nullptr && !entry_a->value.is_string()) ||
      (entry_b != nullptr && !entry_b->value.is_string())) {
    ctx.reply.Error("ERR The specified keys must contain string values");
    return;
  }
  LcsArgs args;
  if (!ParseLcsArgs(ctx, &args)) return;
  char scratch_a[24];
  char scratch_b[24];
  std::string_view a = entry_a != nullptr ? entry_a->value.StringView(scratch_a) : "";
  std::string_view b = entry_b != nullptr ? entry_b->value.StringView(scratch_b) : "";
  if (a.size() >= kLcsMaxInputLength || b.size() >= kLcsMaxInputLength) {
    ctx.reply.Error("ERR String too long for LCS");
    return;
  }
  // The table bound applies to LEN too, although LcsLength needs far less, so the same inputs
  // are accepted or refused whatever the options.
  if (LcsTableBytes(a.size(), b.size()) > static_cast<uint64_t>(ctx.cfg().proto_max_bulk_len)) {
    ctx.reply.Error("ERR Insufficient memory, transient memory for LCS exceeds proto-max-bulk-len");
    return;
  }
  if (args.len) {
    ctx.reply.Integer(LcsLength(a, b));
    return;
  }
  LcsOptions options;
  options.want_sequence = !args.idx;
  options.want_matches = args.idx;
  options.min_match_len = static_cast<uint64_t>(args.min_match_len);
  LcsResult result;
  if (!ComputeLcs(a, b, options, &result)) {
    ctx.reply.Error("ERR Insufficient memory, failed allocating transient memory for LCS");
    return;
  }
  if (args.idx) {
    ReplyLcsMatches(ctx, result, args.with_match_len);
  } else {
    ctx.reply.Bulk(result.sequence);
  }
}

}  // namespace

namespace {

// SET reads its key only when asked for the old value (GET) or to compare it (IF*); else it
// overwrites it.
uint32_t SetKeyFlags(std::span<const std::string_view> argv, const KeyRef& key) {
  for (size_t i = 3; i < argv.size(); ++i) {
    for (std::string_view reads : {"get", "ifeq", "ifne", "ifdeq", "ifdne"}) {
      if (EqualsIgnoreCase(argv[i], reads)) return kKeyRW | kKeyAccess | kKeyUpdate;
    }
  }
  return kKeyOW | kKeyUpdate;
}

}  // namespace

void RegisterStringCommands(CommandTable& table) {
  constexpr const char* kSetExpiry =
      "[EX seconds | PX milliseconds | EXAT unix-time-seconds | PXAT unix-time-milliseconds";
  static const std::string set_syntax =
      std::string(
          "key value [NX | XX | IFEQ ifeq-value | IFNE ifne-value | IFDEQ ifdeq-digest | "
          "IFDNE ifdne-digest] [GET] ") +
      kSetExpiry + " | KEEPTTL]";
  static const std::string getex_syntax = std::string("key ") + kSetExpiry + " | PERSIST]";

  table.Add({"get", 2, kCmdReadonly | kCmdFast, Keys(KeyAt(1, kKeyRO | kKeyAccess)), kAclString,
             "string", "1.0.0", "Returns the string value of a key.", "key", GetCommand, "O(1)"});
  table.Add({"set", -3, kCmdWrite | kCmdDenyOom,
             Keys(KeyAt(1, kKeyRW | kKeyAccess | kKeyUpdate | kKeyVariableFlags,
                        "RW and ACCESS due to the optional `GET` argument")),
             kAclString, "string", "1.0.0",
             "Sets the string value of a key, ignoring its type. The key is created if it "
             "doesn't exist.",
             set_syntax.c_str(), SetCommand, "O(1)", nullptr, SetKeyFlags});
  table.Add({"setnx", 3, kCmdWrite | kCmdDenyOom | kCmdFast, Keys(KeyAt(1, kKeyOW | kKeyInsert)),
             kAclString, "string", "1.0.0",
             "Set the string value of a key only when the key doesn't exist.", "key value",
             SetnxCommand, "O(1)"});
  table.Add({"setex", 4, kCmdWrite | kCmdDenyOom, Keys(KeyAt(1, kKeyOW | kKeyUpdate)), kAclString,
             "string", "2.0.0",
             "Sets the string value and expiration time of a key. Creates the key if it doesn't "
             "exist.",
             "key seconds value", SetexCommand, "O(1)"});
  table.Add({"psetex", 4, kCmdWrite | kCmdDenyOom, Keys(KeyAt(1, kKeyOW | kKeyUpdate)), kAclString,
             "string", "2.6.0",
             "Sets both string value and expiration time in milliseconds of a key. The key is "
             "created if it doesn't exist.",
             "key milliseconds value", PsetexCommand, "O(1)"});
  table.Add({"getset", 3, kCmdWrite | kCmdDenyOom | kCmdFast,
             Keys(KeyAt(1, kKeyRW | kKeyAccess | kKeyUpdate)), kAclString, "string", "1.0.0",
             "Returns the previous string value of a key after setting it to a new value.",
             "key value", GetsetCommand, "O(1)"});
  table.Add({"getdel", 2, kCmdWrite | kCmdFast, Keys(KeyAt(1, kKeyRW | kKeyAccess | kKeyDelete)),
             kAclString, "string", "6.2.0",
             "Returns the string value of a key after deleting the key.", "key", GetdelCommand,
             "O(1)"});
  table.Add(
      {"getex", -2, kCmdWrite | kCmdFast,
       Keys(KeyAt(1, kKeyRW | kKeyAccess | kKeyUpdate, "RW and UPDATE because it changes the TTL")),
       kAclString, "string", "6.2.0",
       "Returns the string value of a key after setting its expiration time.", getex_syntax.c_str(),
       GetexCommand, "O(1)"});
  table.Add({"mget", -2, kCmdReadonly | kCmdFast, Keys(KeysAt(1, -1, 1, kKeyRO | kKeyAccess, 0)),
             kAclString, "string", "1.0.0",
             "Atomically returns the string values of one or more keys.", "key ...", MgetCommand,
             "O(N) where N is the number of keys to retrieve."});
  table.Add({"mset", -3, kCmdWrite | kCmdDenyOom, Keys(KeysAt(1, -1, 2, kKeyOW | kKeyUpdate, 0)),
             kAclString, "string", "1.0.1",
             "Atomically creates or modifies the string values of one or more keys.",
             "data=<key value> ...", MsetCommand, "O(N) where N is the number of keys to set."});
  table.Add({"msetnx", -3, kCmdWrite | kCmdDenyOom, Keys(KeysAt(1, -1, 2, kKeyOW | kKeyInsert, 0)),
             kAclString, "string", "1.0.1",
             "Atomically modifies the string values of one or more keys only when all keys don't "
             "exist.",
             "data=<key value> ...", MsetnxCommand, "O(N) where N is the number of keys to set."});
  table.Add({"append", 3, kCmdWrite | kCmdDenyOom | kCmdFast, Keys(KeyAt(1, kKeyRW | kKeyInsert)),
             kAclString, "string", "2.0.0",
             "Appends a string to the value of a key. Creates the key if it doesn't exist.",
             "key value", AppendCommand,
             "O(1). The amortized time complexity is O(1) assuming the appended value is small "
             "and the already present value is of any size, since the dynamic string library "
             "used by Redis will double the free space available on every reallocation."});
  table.Add({"strlen", 2, kCmdReadonly | kCmdFast, Keys(KeyAt(1, kKeyRO)), kAclString, "string",
             "2.2.0", "Returns the length of a string value.", "key", StrlenCommand, "O(1)"});
  constexpr const char* kRangeComplexity =
      "O(N) where N is the length of the returned string. The complexity is ultimately "
      "determined by the returned length, but because creating a substring from an existing "
      "string is very cheap, it can be considered O(1) for small strings.";
  table.Add({"getrange", 4, kCmdReadonly, Keys(KeyAt(1, kKeyRO | kKeyAccess)), kAclString, "string",
             "2.4.0", "Returns a substring of the string stored at a key.", "key start end",
             GetrangeCommand, kRangeComplexity});
  table.Add({"substr", 4, kCmdReadonly, Keys(KeyAt(1, kKeyRO | kKeyAccess)), kAclString, "string",
             "1.0.0", "Returns a substring from a string value.", "key start end", GetrangeCommand,
             kRangeComplexity});
  table.Add({"setrange", 4, kCmdWrite | kCmdDenyOom, Keys(KeyAt(1, kKeyRW | kKeyUpdate)),
             kAclString, "string", "2.2.0",
             "Overwrites a part of a string value with another by an offset. Creates the key if "
             "it doesn't exist.",
             "key offset value", SetrangeCommand,
             "O(1), not counting the time taken to copy the new string in place. Usually, this "
             "string is very small so the amortized complexity is O(1). Otherwise, complexity "
             "is O(M) with M being the length of the value argument."});
  table.Add({"incr", 2, kCmdWrite | kCmdDenyOom | kCmdFast,
             Keys(KeyAt(1, kKeyRW | kKeyAccess | kKeyUpdate)), kAclString, "string", "1.0.0",
             "Increments the integer value of a key by one. Uses 0 as initial value if the key "
             "doesn't exist.",
             "key", IncrCommand, "O(1)"});
  table.Add({"decr", 2, kCmdWrite | kCmdDenyOom | kCmdFast,
             Keys(KeyAt(1, kKeyRW | kKeyAccess | kKeyUpdate)), kAclString, "string", "1.0.0",
             "Decrements the integer value of a key by one. Uses 0 as initial value if the key "
             "doesn't exist.",
             "key", DecrCommand, "O(1)"});
  table.Add({"incrby", 3, kCmdWrite | kCmdDenyOom | kCmdFast,
             Keys(KeyAt(1, kKeyRW | kKeyAccess | kKeyUpdate)), kAclString, "string", "1.0.0",
             "Increments the integer value of a key by a number. Uses 0 as initial value if the "
             "key doesn't exist.",
             "key increment:integer", IncrbyCommand, "O(1)"});
  table.Add({"decrby", 3, kCmdWrite | kCmdDenyOom | kCmdFast,
             Keys(KeyAt(1, kKeyRW | kKeyAccess | kKeyUpdate)), kAclString, "string", "1.0.0",
             "Decrements a number from the integer value of a key. Uses 0 as initial value if "
             "the key doesn't exist.",
             "key decrement", DecrbyCommand, "O(1)"});
  table.Add({"incrbyfloat", 3, kCmdWrite | kCmdDenyOom | kCmdFast,
             Keys(KeyAt(1, kKeyRW | kKeyAccess | kKeyUpdate)), kAclString, "string", "2.6.0",
             "Increment the floating point value of a key by a number. Uses 0 as initial value "
             "if the key doesn't exist.",
             "key increment:double", IncrbyfloatCommand, "O(1)"});
  table.Add({"lcs", -3, kCmdReadonly, Keys(KeysAt(1, 1, 1, kKeyRO | kKeyAccess, 0)), kAclString,
             "string", "7.0.0", "Finds the longest common substring.",
             "key1 key2 [LEN] [IDX] [MINMATCHLEN min-match-len] [WITHMATCHLEN]", LcsCommand,
             "O(N*M) where N and M are the lengths of s1 and s2, respectively"});
}

}  // namespace vireo
