// Small pieces every command family uses: typed lookups, keyspace bookkeeping and reply helpers.
// Arguments are read with ArgParser (commands/arg_parser.h).
#pragma once

#include <initializer_list>
#include <span>
#include <string_view>

#include "db/database.h"
#include "server/command_context.h"
#include "server/notify.h"

namespace vireo {

struct ServerConfig;

// A typed object (PackedList, HashObject...) or nullptr when missing or of another type;
// wrong_type says WRONGTYPE has been replied.
template <typename T>
struct TypedObject {
  T* object = nullptr;
  bool wrong_type = false;
};

// What a typed lookup found: the entry, nothing (missing), or a value of another type, in which
// case WRONGTYPE has already been replied and the handler just returns.
struct TypedLookup {
  DbEntry* entry = nullptr;
  bool wrong_type = false;

  bool missing() const { return entry == nullptr && !wrong_type; }
  bool found() const { return entry != nullptr; }
  // The typed object with the same three states (a family's ReadList, ReadHash...), so a
  // handler writes `auto [list, wrong_type] = ReadList(ctx, key); if (wrong_type) return;`.
  template <typename T>
  TypedObject<T> As() const {
    return {entry == nullptr ? nullptr : entry->value.As<T>(), wrong_type};
  }
};

// The entry for `key` if it exists and holds `type` (a writing command's lookup: not counted
// in keyspace hits/misses). On a type mismatch replies WRONGTYPE.
TypedLookup LookupTyped(CommandContext& ctx, std::string_view key, ValueType type);
// The same for a reading command: counts the hit or miss like LookupRead.
TypedLookup ReadTyped(CommandContext& ctx, std::string_view key, ValueType type);

// A lookup for a command that reads the key: counts a keyspace hit or miss (INFO stats), like
// Redis's lookupKeyRead. Lookups by writing commands are not counted.
// `touch` false: the lookup doesn't count as an access for LRU/LFU (TYPE, TTL, EXISTS, OBJECT).
DbEntry* LookupRead(CommandContext& ctx, Database& db, std::string_view key, bool touch = true);
inline DbEntry* LookupRead(CommandContext& ctx, std::string_view key) {
  return LookupRead(ctx, ctx.db, key);
}

// Redis's HELP reply: a usage line, `lines`, then HELP itself, all as status replies.
void ReplyHelp(CommandContext& ctx, std::string_view command,
               std::initializer_list<std::string_view> lines);
void ReplyHelp(CommandContext& ctx, std::string_view command,
               std::span<const std::string_view> lines);

// Case-insensitive equality of an argument with an upper-case keyword.
bool IsArg(std::string_view arg, std::string_view keyword);

// Bookkeeping after a successful write to `key`: WATCH invalidation and the dirty counter.
// Blocked-client wake-ups and keyspace notifications hook in here as they arrive.
void KeyWritten(CommandContext& ctx, std::string_view key, uint64_t dirty = 1);
// The same for a key of another database than the client's (MOVE, COPY ... DB n).
void KeyWritten(CommandContext& ctx, Database& db, std::string_view key, uint64_t dirty = 1);

// A keyspace notification for `key` of the client's current database (see server/notify.h),
// e.g. Notify(ctx, kNotifyHash, "hset", key).
void Notify(CommandContext& ctx, uint32_t event_class, std::string_view event,
            std::string_view key);
// The same for `key` of database `db`.
void Notify(CommandContext& ctx, uint32_t event_class, std::string_view event, std::string_view key,
            int db);

// Whether Redis would hold this value as one of its shared integers (refcount INT_MAX in
// OBJECT REFCOUNT and DEBUG OBJECT).
bool IsSharedInteger(const ServerConfig& cfg, const Value& value);

}  // namespace vireo
