// Redis 8's compare-and-set string commands: DIGEST, DELEX (8.4) and Valkey's DELIFEQ, MSETEX
// (8.4) and INCREX (8.8). SET's IFEQ/IFNE/IFDEQ/IFDNE live with SET in strings.cc.
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "commands/families.h"
#include "commands/helpers.h"
#include "core/arg_parser.h"
#include "core/command_table.h"
#include "core/config.h"
#include "server/command_context.h"
#include "types/value_digest.h"
#include "util/strings.h"

namespace vireo {
namespace {

// ---------------------------------------------------------------------------------------------
// DIGEST, DELEX, DELIFEQ

void DigestCommand(CommandContext& ctx) {
  auto [entry, wrong_type] = ReadTyped(ctx, ctx.arg(1), ValueType::kString);
  if (wrong_type) return;
  if (entry == nullptr) {
    ctx.reply.Null();
    return;
  }
  char scratch[24];
  ctx.reply.Bulk(FormatDigest(ValueDigest(entry->value.StringView(scratch))));
}

enum class DelCondition : uint8_t { kNone, kIfEq, kIfNe, kIfDeq, kIfDne };

// Deletes `entry` (found at ctx.arg(1)) as DEL does, and logs it as DEL: the condition held
// here, so a replica or a replay deletes unconditionally.
void DeleteFound(CommandContext& ctx, DbEntry* entry) {
  ctx.db.DeleteEntry(entry, ctx.cfg().lazyfree_lazy_user_del);
  KeyWritten(ctx, ctx.arg(1));
  Notify(ctx, kNotifyGeneric, "del", ctx.arg(1));
  ctx.PropagateInstead({"DEL", std::string(ctx.arg(1))});
}

// The shared body of DELEX and DELIFEQ: the condition's operand is ctx.arg(3) (DELEX) or
// ctx.arg(2) (DELIFEQ).
void DeleteIf(CommandContext& ctx, DelCondition condition, std::string_view operand) {
  uint64_t digest = 0;
  if (condition == DelCondition::kIfDeq || condition == DelCondition::kIfDne) {
    std::optional<uint64_t> parsed = ParseDigest(operand);
    if (!parsed) {
      ctx.reply.Error(errors::kBadDigest);
      return;
    }
    digest = *parsed;
  }
  DbEntry* entry = ctx.db.Find(ctx.arg(1));
  if (entry == nullptr) {
    ctx.reply.Integer(0);
    return;
  }
  if (condition != DelCondition::kNone) {
    // A condition reads the value: only strings have one to compare.
    if (!entry->value.is_string()) {
      ctx.reply.Error(errors::kWrongType);
      return;
    }
    char scratch[24];
    std::string_view current = entry->value.StringView(scratch);
    bool holds;
    switch (condition) {
      case DelCondition::kIfEq:
        holds = current == operand;
        break;
      case DelCondition::kIfNe:
        holds = current != operand;
        break;
      case DelCondition::kIfDeq:
        holds = ValueDigest(current) == digest;
        break;
      default:
        holds = ValueDigest(current) != digest;
        break;
    }
    if (!holds) {
      ctx.reply.Integer(0);
      return;
    }
  }
  DeleteFound(ctx, entry);
  ctx.reply.Integer(1);
}

void DelexCommand(CommandContext& ctx) {
  if (ctx.argc() == 2) {
    DeleteIf(ctx, DelCondition::kNone, {});
    return;
  }
  ArgParser args(ctx, 2);
  int which = ctx.argc() == 4 ? args.OneOf({"IFEQ", "IFNE", "IFDEQ", "IFDNE"}) : -1;
  if (which < 0) {
    ctx.reply.Error(errors::kSyntax);
    return;
  }
  DeleteIf(ctx, static_cast<DelCondition>(which + 1), ctx.arg(3));
}

void DelifeqCommand(CommandContext& ctx) { DeleteIf(ctx, DelCondition::kIfEq, ctx.arg(2)); }

// The time at argv[at] after EX, PX, EXAT or PXAT (`kind` 0 to 3, in that order) as an
// absolute unix time in ms, with SET's rules (positive, no overflow).
int64_t ExpireArgMs(CommandContext& ctx, ArgParser& args, size_t at, int kind,
                    std::string_view command) {
  args.Seek(at);
  const bool seconds = kind == 0 || kind == 2;
  return args.ExpireAtMs(seconds ? TimeUnit::kSeconds : TimeUnit::kMilliseconds, kind >= 2,
                         ctx.db.now_ms(), command, /*positive_only=*/true);
}

// ---------------------------------------------------------------------------------------------
// MSETEX numkeys key value [key value ...] [NX | XX] [EX s | PX ms | EXAT s | PXAT ms | KEEPTTL]

enum class MsetexExpire : uint8_t { kNone, kEx, kPx, kExAt, kPxAt, kKeepTtl };

struct MsetexArgs {
  std::span<const std::string_view> pairs;
  bool nx = false;
  bool xx = false;
  MsetexExpire expire = MsetexExpire::kNone;
  int64_t when_ms = 0;
};

bool ParseMsetex(CommandContext& ctx, MsetexArgs* out) {
  ArgParser args(ctx, 1);
  const int64_t numkeys = args.Int("ERR invalid numkeys value");
  if (args.ok() && numkeys < 1) args.Fail("ERR invalid numkeys value");
  if (args.ok() && static_cast<uint64_t>(numkeys) > args.remaining() / 2) {
    args.Fail("ERR wrong number of key-value pairs");
  }
  if (!args.Check()) return false;
  out->pairs = args.Take(static_cast<size_t>(numkeys) * 2);
  size_t time_at = 0;
  while (args.HasNext()) {
    // Options may come in any order; a second, different condition or expiry is a syntax
    // error, the same one repeated is not (as SET).
    int expire = args.remaining() >= 2 ? args.OneOf({"EX", "PX", "EXAT", "PXAT"}) : -1;
    if (expire >= 0) {
      auto kind = static_cast<MsetexExpire>(expire + 1);
      if (out->expire != MsetexExpire::kNone && out->expire != kind) args.SyntaxError();
      out->expire = kind;
      time_at = args.pos();
      args.Next();
    } else if (!out->xx && args.Flag("NX")) {
      out->nx = true;
    } else if (!out->nx && args.Flag("XX")) {
      out->xx = true;
    } else if ((out->expire == MsetexExpire::kNone || out->expire == MsetexExpire::kKeepTtl) &&
               args.Flag("KEEPTTL")) {
      out->expire = MsetexExpire::kKeepTtl;
    } else {
      args.SyntaxError();
    }
  }
  if (args.ok() && time_at != 0) {
    out->when_ms = ExpireArgMs(ctx, args, time_at, static_cast<int>(out->expire) - 1, "msetex");
  }
  return args.Check();
}

void MsetexCommand(CommandContext& ctx) {
  MsetexArgs a;
  if (!ParseMsetex(ctx, &a)) return;
  if (a.nx || a.xx) {
    for (size_t i = 0; i < a.pairs.size(); i += 2) {
      const bool exists = ctx.db.Find(a.pairs[i]) != nullptr;
      if (exists == a.nx) {
        ctx.reply.Integer(0);
        return;
      }
    }
  }
  const bool timed = a.expire != MsetexExpire::kNone && a.expire != MsetexExpire::kKeepTtl;
  const bool keep_ttl = a.expire == MsetexExpire::kKeepTtl || timed;
  const bool past = timed && a.when_ms <= ctx.db.now_ms();
  for (size_t i = 0; i < a.pairs.size(); i += 2) {
    std::string_view key = a.pairs[i];
    DbEntry* entry = ctx.db.Set(key, Value::String(a.pairs[i + 1]), keep_ttl);
    Notify(ctx, kNotifyString, "set", key);
    if (timed) {
      ctx.db.SetExpire(entry, a.when_ms);
      Notify(ctx, kNotifyGeneric, "expire", key);
    }
    KeyWritten(ctx, key);
    // A time already past leaves the key logically expired, as SET does: the lookup removes
    // it, counts it in expired_keys and logs its DEL.
    if (past) ctx.db.Find(key);
  }
  if (past) {
    ctx.PropagateNothing();
  } else {
    // Logged without NX/XX (they held here) and with the absolute time in ms, so a replay
    // writes exactly what this did.
    std::vector<std::string> logged{"MSETEX", std::to_string(a.pairs.size() / 2)};
    for (std::string_view part : a.pairs) logged.emplace_back(part);
    if (timed) {
      logged.emplace_back("PXAT");
      logged.emplace_back(std::to_string(a.when_ms));
    } else if (a.expire == MsetexExpire::kKeepTtl) {
      logged.emplace_back("KEEPTTL");
    }
    ctx.PropagateInstead(std::move(logged));
  }
  ctx.reply.Integer(1);
}

// ---------------------------------------------------------------------------------------------
// INCREX key [BYFLOAT f | BYINT i] [SATURATE] [LBOUND lb] [UBOUND ub]
//            [EX s | PX ms | EXAT s | PXAT ms | PERSIST] [ENX]

enum class IncrexTtl : uint8_t { kKeep, kEx, kPx, kExAt, kPxAt, kPersist };

struct IncrexArgs {
  bool by_float = false;
  int64_t by_int = 1;
  long double by_ld = 0;
  bool saturate = false;
  // The bounds as given; read once the mode is known.
  std::optional<std::string_view> lower, upper;
  IncrexTtl ttl = IncrexTtl::kKeep;
  bool enx = false;
  int64_t when_ms = 0;
};

bool ParseIncrex(CommandContext& ctx, IncrexArgs* out) {
  ArgParser args(ctx, 2);
  bool by_given = false;
  size_t by_at = 0, time_at = 0;
  while (args.HasNext()) {
    std::string_view value;
    int ttl = args.remaining() >= 2 ? args.OneOf({"EX", "PX", "EXAT", "PXAT"}) : -1;
    if (ttl >= 0) {
      auto kind = static_cast<IncrexTtl>(ttl + 1);
      if (out->ttl != IncrexTtl::kKeep && out->ttl != kind) args.SyntaxError();
      out->ttl = kind;
      time_at = args.pos();
      args.Next();
    } else if (int by = args.remaining() >= 2 ? args.OneOf({"BYINT", "BYFLOAT"}) : -1; by >= 0) {
      if (by_given && out->by_float != (by == 1)) args.SyntaxError();
      by_given = true;
      out->by_float = by == 1;
      by_at = args.pos();
      args.Next();
    } else if (args.Option("LBOUND", &value)) {
      out->lower = value;
    } else if (args.Option("UBOUND", &value)) {
      out->upper = value;
    } else if (args.Flag("SATURATE")) {
      out->saturate = true;
    } else if (args.Flag("ENX")) {
      out->enx = true;
    } else if ((out->ttl == IncrexTtl::kKeep || out->ttl == IncrexTtl::kPersist) &&
               args.Flag("PERSIST")) {
      out->ttl = IncrexTtl::kPersist;
    } else {
      args.SyntaxError();
    }
  }
  if (args.ok() && out->enx && out->ttl == IncrexTtl::kPersist) args.SyntaxError();
  if (args.ok() && out->enx && out->ttl == IncrexTtl::kKeep) {
    args.Fail("ERR ENX flag requires an expiration");
  }
  if (args.ok() && by_at != 0) {
    args.Seek(by_at);
    if (out->by_float) {
      out->by_ld = args.LongDouble();
    } else {
      out->by_int = args.Int();
    }
  }
  if (args.ok() && time_at != 0) {
    out->when_ms = ExpireArgMs(ctx, args, time_at, static_cast<int>(out->ttl) - 1, "increx");
  }
  return args.Check();
}

// The new value and the applied increment, in the mode's number type; `skip` when the result
// is out of bounds and not saturated.
template <typename T>
struct IncrexStep {
  T value{};
  T delta{};
  bool skip = false;
};

// The step from `current` by `by` within [lo, hi]: `add` and `sub` give nullopt where the
// number type can't hold the result (out of bounds too); `overflow` is the error when the
// saturated delta can't be held.
template <typename T, typename Add, typename Sub>
bool BoundedStep(ArgParser& args, const IncrexArgs& a, T current, T by, T lo, T hi, Add add,
                 Sub sub, std::string_view overflow, IncrexStep<T>* out) {
  if (args.ok() && lo > hi) args.Fail("ERR LBOUND can't be greater than UBOUND");
  if (!args.ok()) return false;
  std::optional<T> result = add(current, by);
  T target;
  if (!result) {
    target = by > 0 ? hi : lo;
  } else if (*result > hi) {
    target = hi;
  } else if (*result < lo) {
    target = lo;
  } else {
    *out = {*result, by};
    return true;
  }
  if (!a.saturate) {
    *out = {current, 0, true};
    return true;
  }
  std::optional<T> delta = sub(target, current);
  if (!delta) return args.Fail(overflow);
  *out = {target, *delta};
  return true;
}

bool IncrexInt(ArgParser& args, const IncrexArgs& a, int64_t current, IncrexStep<int64_t>* out) {
  const int64_t lo = a.lower ? args.IntValue(*a.lower) : INT64_MIN;
  const int64_t hi = a.upper ? args.IntValue(*a.upper) : INT64_MAX;
  return BoundedStep<int64_t>(
      args, a, current, a.by_int, lo, hi,
      [](int64_t x, int64_t y) -> std::optional<int64_t> {
        int64_t r;
        if (__builtin_add_overflow(x, y, &r)) return std::nullopt;
        return r;
      },
      [](int64_t x, int64_t y) -> std::optional<int64_t> {
        int64_t r;
        if (__builtin_sub_overflow(x, y, &r)) return std::nullopt;
        return r;
      },
      errors::kOverflow, out);
}

bool IncrexFloat(ArgParser& args, const IncrexArgs& a, long double current,
                 IncrexStep<long double>* out) {
  constexpr long double kMax = std::numeric_limits<long double>::max();
  const long double lo = a.lower ? args.LongDoubleValue(*a.lower) : -kMax;
  const long double hi = a.upper ? args.LongDoubleValue(*a.upper) : kMax;
  // Infinite bounds would let a saturated result become infinite.
  if (args.ok() && (std::isinf(lo) || std::isinf(hi))) args.Fail(errors::kNotFloat);
  auto finite = [](long double v) {
    return std::isfinite(v) ? std::optional<long double>(v) : std::nullopt;
  };
  return BoundedStep<long double>(
      args, a, current, a.by_ld, lo, hi,
      [&](long double x, long double y) { return finite(x + y); },
      [&](long double x, long double y) { return finite(x - y); },
      "ERR increment would produce NaN or Infinity", out);
}

void IncrexCommand(CommandContext& ctx) {
  IncrexArgs a;
  if (!ParseIncrex(ctx, &a)) return;
  auto [entry, wrong_type] = LookupTyped(ctx, ctx.arg(1), ValueType::kString);
  if (wrong_type) return;
  ArgParser args(ctx);
  char scratch[24];
  std::string stored_text;
  bool skip;
  if (a.by_float) {
    long double current = 0;
    int64_t as_int;
    if (entry != nullptr) {
      current = entry->value.GetInt(&as_int)
                    ? static_cast<long double>(as_int)
                    : args.LongDoubleValue(entry->value.StringView(scratch));
    }
    IncrexStep<long double> step;
    if (!args.ok() || !IncrexFloat(args, a, current, &step)) {
      args.Check();
      return;
    }
    skip = step.skip;
    stored_text = FormatLongDouble(step.value);
    ctx.reply.Array(2);
    ctx.reply.Bulk(stored_text);
    ctx.reply.Bulk(FormatLongDouble(step.delta));
    if (!skip) {
      if (entry != nullptr) {
        entry->value = Value::PlainString(stored_text);
      } else {
        entry = ctx.db.Add(ctx.arg(1), Value::PlainString(stored_text));
      }
      Notify(ctx, kNotifyString, "incrbyfloat", ctx.arg(1));
    }
  } else {
    int64_t current = 0;
    if (entry != nullptr && !entry->value.GetInt(&current)) {
      current = args.IntValue(entry->value.StringView(scratch));
    }
    IncrexStep<int64_t> step;
    if (!args.ok() || !IncrexInt(args, a, current, &step)) {
      args.Check();
      return;
    }
    skip = step.skip;
    stored_text = std::to_string(step.value);
    ctx.reply.Array(2);
    ctx.reply.Integer(step.value);
    ctx.reply.Integer(step.delta);
    if (!skip) {
      if (entry != nullptr) {
        entry->value = Value::Integer(step.value);
      } else {
        entry = ctx.db.Add(ctx.arg(1), Value::Integer(step.value));
      }
      Notify(ctx, kNotifyString, "incrby", ctx.arg(1));
    }
  }
  // Out of bounds and not saturated: the key and its TTL stay as they were.
  if (skip) return;
  std::vector<std::string> logged{"SET", std::string(ctx.arg(1)), stored_text};
  const bool timed = a.ttl != IncrexTtl::kKeep && a.ttl != IncrexTtl::kPersist;
  if (timed && !(a.enx && ctx.db.GetExpire(entry) >= 0)) {
    ctx.db.SetExpire(entry, a.when_ms);
    Notify(ctx, kNotifyGeneric, "expire", ctx.arg(1));
    logged.emplace_back("PXAT");
    logged.emplace_back(std::to_string(a.when_ms));
  } else if (a.ttl == IncrexTtl::kPersist) {
    // A plain SET drops the TTL, as PERSIST does here.
    if (ctx.db.Persist(entry)) Notify(ctx, kNotifyGeneric, "persist", ctx.arg(1));
  } else {
    logged.emplace_back("KEEPTTL");
  }
  KeyWritten(ctx, ctx.arg(1));
  // Logged as the value it produced (as INCRBYFLOAT is), with the TTL it left.
  if (timed && a.when_ms <= ctx.db.now_ms() && ctx.db.GetExpire(entry) == a.when_ms) {
    ctx.db.Find(ctx.arg(1));  // already past: the lookup expires it and logs its DEL
    ctx.PropagateNothing();
  } else {
    ctx.PropagateInstead(std::move(logged));
  }
}

}  // namespace

void RegisterStringCasCommands(CommandTable& table) {
  constexpr const char* kGroup = "string";
  table.Add({"digest", 2, kCmdReadonly | kCmdFast, Keys(KeyAt(1, kKeyRO | kKeyAccess)), kAclString,
             kGroup, "8.4.0", "Returns the XXH3 hash of a string value.", "key", DigestCommand,
             "O(N) where N is the length of the string value."});
  table.Add({"delex", -2, kCmdWrite | kCmdFast,
             Keys(KeyAt(1, kKeyRW | kKeyDelete | kKeyVariableFlags)), kAclString, kGroup, "8.4.0",
             "Conditionally removes the specified key based on value or digest comparison.",
             "key [condition=<IFEQ ifeq-value | IFNE ifne-value | IFDEQ ifdeq-digest | IFDNE "
             "ifdne-digest>]",
             DelexCommand,
             "O(1) for IFEQ/IFNE, O(N) for IFDEQ/IFDNE where N is the length of the string "
             "value."});
  table.Add({"delifeq", 3, kCmdWrite | kCmdFast, Keys(KeyAt(1, kKeyRW | kKeyDelete)), kAclString,
             kGroup, "9.0.0", "Delete key if value matches string.", "key value", DelifeqCommand,
             "O(1)"});
  table.Add({"increx", -2, kCmdWrite | kCmdDenyOom | kCmdFast,
             Keys(KeyAt(1, kKeyRW | kKeyAccess | kKeyUpdate)), kAclString, kGroup, "8.8.0",
             "Increments the numeric value of a key by a number and sets its expiration time. Uses "
             "0 as initial value if the key doesn't exist.",
             "key [increment=<BYFLOAT float:double | BYINT integer:integer>] [SATURATE] "
             "[LBOUND lowerbound:string] [UBOUND upperbound:string] [EX seconds | PX milliseconds "
             "| EXAT unix-time-seconds | PXAT unix-time-milliseconds | PERSIST] [ENX]",
             IncrexCommand, "O(1)"});
  table.Add({"msetex", -4, kCmdWrite | kCmdDenyOom, Keys(KeyNum(1, 0, 1, 2, kKeyOW | kKeyUpdate)),
             kAclString, kGroup, "8.4.0",
             "Atomically sets multiple string keys with a shared expiration in a single "
             "operation. Supports flexible argument parsing where condition and expiration "
             "flags can appear in any order.",
             "numkeys data=<key value> ... [condition=<NX | XX>] [EX seconds | PX milliseconds "
             "| EXAT unix-time-seconds | PXAT unix-time-milliseconds | KEEPTTL]",
             MsetexCommand, "O(N) where N is the number of keys to set."});
}

}  // namespace vireo
