// Pieces shared by the sorted-set command files (zsets.cc, zset_ranges.cc, zset_setops.cc) and
// SORT: typed lookups, the configured encoding limits, range parsing and the WITHSCORES reply
// shapes.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "commands/helpers.h"
#include "types/zset.h"

namespace vireo {

class CommandTable;

// zset-max-listpack-entries / -value as the type wants them.
ZSet::Limits ZsetLimits(CommandContext& ctx);

// The sorted set at `key` (see TypedObject).
TypedObject<ZSet> LookupZset(CommandContext& ctx, std::string_view key);
ZSet* ZsetOf(DbEntry* entry);

// Creates the key with a new set whose encoding suits `size_hint` members of `max_len` bytes.
ZSet* CreateZset(CommandContext& ctx, std::string_view key, size_t size_hint, size_t max_len);

// Deletes the key (with a "del" notification) when the set is empty.
void DeleteZsetIfEmpty(CommandContext& ctx, std::string_view key, ZSet* zset);

// A score range as ZRANGEBYSCORE & co. take it: strtod's grammar (so "" is 0 and " 1" is 1,
// as in Redis), a leading '(' for an exclusive bound, NaN refused.
struct ScoreRange {
  double min = 0, max = 0;
  bool minex = false, maxex = false;
};
bool ParseScoreRange(std::string_view min, std::string_view max, ScoreRange* out);
bool ParseLexBound(std::string_view arg, LexBound* out);

// [from, to) ranks of the members inside a range (from >= to when none).
std::pair<size_t, size_t> RanksInRange(const ZSet& z, const ScoreRange& r);
std::pair<size_t, size_t> RanksInRange(const ZSet& z, const LexBound& min, const LexBound& max);

// Replies a list of (member, score) pairs as Redis does for WITHSCORES: a flat array in RESP2,
// an array of [member, score] pairs in RESP3. Without scores: an array of members.
void ReplyMembers(CommandContext& ctx, const std::vector<std::pair<std::string, double>>& items,
                  bool withscores);

// Replaces dst with a new sorted set of the (distinct) members, or deletes it when there are
// none; notifies `event`, counts `dirty` changes and replies the count (ZRANGESTORE,
// ZUNIONSTORE, GEOSEARCHSTORE...).
void StoreZsetResult(CommandContext& ctx, std::string_view dst, std::string_view event,
                     const std::vector<std::pair<std::string, double>>& items, uint64_t dirty = 1);

// COMMAND GETKEYS for commands with a numkeys argument at argv[numkeys_at].
std::vector<size_t> ZsetNumkeysKeys(std::span<const std::string_view> argv, size_t numkeys_at);

// Registration of the commands defined outside zsets.cc.
void RegisterZsetRangeCommands(CommandTable& table);
void RegisterZsetSetOpCommands(CommandTable& table);
void RegisterZsetMoveCommands(CommandTable& table);  // zset_moves.cc (ZMOVE, BZMOVE...)

}  // namespace vireo
