// Redis 8's compare-and-set string commands: DIGEST, DELEX (8.4) and Valkey's DELIFEQ, MSETEX
// (8.4) and INCREX (8.8). SET's IFEQ/IFNE/IFDEQ/IFDNE live with SET in strings.cc.
#include <cmath>
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
    args.Seek(time_at);
    const bool seconds = out->expire == MsetexExpire::kEx || out->expire == MsetexExpire::kExAt;
    const bool absolute = out->expire == MsetexExpire::kExAt || out->expire == MsetexExpire::kPxAt;
    out->when_ms = args.ExpireAtMs(seconds ? TimeUnit::kSeconds : TimeUnit::kMilliseconds, absolute,
                                   ctx.db.now_ms(), "msetex", /*positive_only=*/true);
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
