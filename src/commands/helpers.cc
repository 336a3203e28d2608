#include "commands/helpers.h"

#include <fmt/format.h>

#include "core/config.h"
#include "server/client.h"
#include "server/command_context.h"
#include "server/process_info.h"
#include "server/pubsub.h"
#include "server/server_stats.h"
#include "util/strings.h"

namespace vireo {

namespace {

TypedLookup CheckType(CommandContext& ctx, DbEntry* entry, ValueType type) {
  if (entry == nullptr) return {};
  if (entry->value.type() != type) {
    ctx.reply.Error(errors::kWrongType);
    return {nullptr, true};
  }
  return {entry, false};
}

}  // namespace

TypedLookup LookupTyped(CommandContext& ctx, std::string_view key, ValueType type) {
  return CheckType(ctx, ctx.db.Find(key), type);
}

TypedLookup ReadTyped(CommandContext& ctx, std::string_view key, ValueType type) {
  return CheckType(ctx, LookupRead(ctx, key), type);
}

DbEntry* LookupRead(CommandContext& ctx, Database& db, std::string_view key, bool touch) {
  DbEntry* entry = touch ? db.Find(key) : db.FindNoTouch(key);
  ServerStats& stats = ctx.stats();
  if (entry != nullptr) {
    ++stats.keyspace_hits;
  } else {
    ++stats.keyspace_misses;
    Notify(ctx, kNotifyKeyMiss, "keymiss", key, db.index());
  }
  return entry;
}

void ReplyHelp(CommandContext& ctx, std::string_view command,
               std::initializer_list<std::string_view> lines) {
  ReplyHelp(ctx, command, std::span<const std::string_view>(lines.begin(), lines.size()));
}

void ReplyHelp(CommandContext& ctx, std::string_view command,
               std::span<const std::string_view> lines) {
  ctx.reply.Array(lines.size() + 3);
  ctx.reply.SimpleString(
      fmt::format("{} <subcommand> [<arg> [value] [opt] ...]. Subcommands are:", command));
  for (std::string_view line : lines) ctx.reply.SimpleString(line);
  ctx.reply.SimpleString("HELP");
  ctx.reply.SimpleString("    Prints this help.");
}

bool IsArg(std::string_view arg, std::string_view keyword) {
  return EqualsIgnoreCase(arg, keyword);
}

void KeyWritten(CommandContext& ctx, std::string_view key, uint64_t dirty) {
  KeyWritten(ctx, ctx.db, key, dirty);
}

void KeyWritten(CommandContext& ctx, Database& db, std::string_view key, uint64_t dirty) {
  db.NotifyModified(key);
  ctx.process().AddDirty(dirty);
}

void Notify(CommandContext& ctx, uint32_t event_class, std::string_view event,
            std::string_view key) {
  Notify(ctx, event_class, event, key, ctx.client.db_index());
}

void Notify(CommandContext& ctx, uint32_t event_class, std::string_view event, std::string_view key,
            int db) {
  NotifyKeyspaceEvent(ctx.pubsub(), ctx.cfg().notify_keyspace_flags, event_class, event, key, db);
}

// Redis shares one object for each small integer 0..9999 and reports its refcount as INT_MAX,
// unless an LRU/LFU policy with maxmemory needs per-key access data.
bool IsSharedInteger(const ServerConfig& cfg, const Value& value) {
  int64_t n;
  if (!value.GetInt(&n) || n < 0 || n >= 10000) return false;
  bool per_key_policy = cfg.maxmemory_policy.find("lru") != std::string::npos ||
                        cfg.maxmemory_policy.find("lfu") != std::string::npos;
  return cfg.maxmemory == 0 || !per_key_policy;
}

}  // namespace vireo
