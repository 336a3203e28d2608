// Sorted-set moves (Redis 8.12): ZMOVE, the blocking BZMOVE and ZMOVEMEMBER. Members keep their
// scores; one that is already in the destination takes the source's score.
//
// BZMOVE tries ZMOVE first and hands the client to the blocking engine only when the source is
// missing; the engine runs the whole command again once the source has members, and a served
// BZMOVE is logged as the ZMOVE that moves what it moved.
#include <algorithm>
#include <unordered_set>

#include "commands/families.h"
#include "commands/move_lookup.h"
#include "commands/zset_common.h"
#include "core/arg_parser.h"
#include "core/command_table.h"
#include "server/blocking_service.h"
#include "server/client.h"
#include "server/command_context.h"
#include "util/strings.h"

namespace vireo {
namespace {

using Members = std::vector<std::pair<std::string, double>>;

constexpr const char* kCountError = "ERR count should be greater than 0";

// The two sets of a move: the source (nullptr when missing) and the destination's entry
// (nullptr when missing). False after a WRONGTYPE reply; the destination's type counts only
// when the source exists (redis.io: "If source exists and either key holds another type").
bool LookupMoveSets(CommandContext& ctx, std::string_view src, std::string_view dst, ZSet** source,
                    DbEntry** dst_entry) {
  return LookupMoveKeys(ctx, src, dst, ValueType::kZSet, LookupZset, source, dst_entry);
}

// Adds the moved members to the destination (creating it when needed), deletes an emptied
// source, notifies and replies them with their scores (ZPOPMIN's shape with a count).
void FinishMove(CommandContext& ctx, std::string_view src, std::string_view dst, ZSet* source,
                DbEntry* dst_entry, const Members& moved) {
  ZSet* destination;
  if (dst_entry != nullptr) {
    destination = ZsetOf(dst_entry);
  } else {
    size_t max_len = 0;
    for (const auto& [m, s] : moved) max_len = std::max(max_len, m.size());
    destination = CreateZset(ctx, dst, moved.size(), max_len);
  }
  const ZSet::Limits limits = ZsetLimits(ctx);
  for (const auto& [member, score] : moved) {
    double old;
    if (destination->Score(member, &old)) {
      if (old != score) destination->Update(member, score);
    } else {
      destination->Insert(member, score, limits);
    }
  }
  Notify(ctx, kNotifyZset, "zrem", src);
  DeleteZsetIfEmpty(ctx, src, source);
  Notify(ctx, kNotifyZset, "zadd", dst);
  KeyWritten(ctx, src, moved.size());
  KeyWritten(ctx, dst, 0);
  ReplyMembers(ctx, moved, true);
}

enum class Select { kMin, kMax, kByScore };

struct ZmoveArgs {
  Select select = Select::kMin;
  ScoreRange range;
  int64_t count = 1;
};

// "[COUNT count]" at the end of the command.
void ReadCount(ArgParser& args, int64_t* count) {
  if (args.HasNext()) {
    if (!args.OptionName("COUNT")) {
      args.SyntaxError();
      return;
    }
    *count = args.Positive(kCountError);
  }
  args.ExpectEnd();
}

// The members ZMOVE takes, removed from `z`: the lowest or highest first, or a score range in
// ascending order, at most `count`.
Members TakeMembers(ZSet* z, const ZmoveArgs& a) {
  size_t from = 0, to = z->size();
  if (a.select == Select::kByScore) std::tie(from, to) = RanksInRange(*z, a.range);
  if (from >= to) return {};
  const size_t n = std::min<uint64_t>(to - from, static_cast<uint64_t>(a.count));
  Members out;
  out.reserve(n);
  if (a.select == Select::kMax) {
    for (ZSet::Iter it = z->At(to - 1); it.Valid() && out.size() < n; it.Prev()) {
      out.emplace_back(std::string(it.member()), it.score());
    }
    z->EraseRanks(to - n, to);
  } else {
    for (ZSet::Iter it = z->At(from); it.Valid() && out.size() < n; it.Next()) {
      out.emplace_back(std::string(it.member()), it.score());
    }
    z->EraseRanks(from, from + n);
  }
  return out;
}

// The move. False (nothing replied) when nothing moved; replies the members or an error
// otherwise. `*moved` is how many moved.
bool ZmoveOnce(CommandContext& ctx, const ZmoveArgs& a, bool* replied_error, size_t* moved) {
  std::string_view src = ctx.arg(1), dst = ctx.arg(2);
  ZSet* source;
  DbEntry* dst_entry;
  *replied_error = !LookupMoveSets(ctx, src, dst, &source, &dst_entry);
  // Onto itself: nothing to do, and the members are not even visited (redis.io).
  if (*replied_error || source == nullptr || src == dst) return false;
  Members items = TakeMembers(source, a);
  if (items.empty()) return false;
  FinishMove(ctx, src, dst, source, dst_entry, items);
  *moved = items.size();
  return true;
}

void ZmoveCommand(CommandContext& ctx) {
  ArgParser args(ctx, 3);
  ZmoveArgs a;
  int select = args.Keyword({"MIN", "MAX", "BYSCORE"});
  if (select == 2) {
    a.select = Select::kByScore;
    std::string_view min = args.Next(), max = args.Next();
    if (args.ok() && !ParseScoreRange(min, max, &a.range)) {
      args.Fail("ERR min or max is not a float");
    }
  } else {
    a.select = select == 1 ? Select::kMax : Select::kMin;
  }
  ReadCount(args, &a.count);
  if (!args.Check()) return;
  bool replied_error;
  size_t moved;
  if (ZmoveOnce(ctx, a, &replied_error, &moved) || replied_error) return;
  ctx.reply.NullArray();
}

void BzmoveCommand(CommandContext& ctx) {
  ArgParser args(ctx, 3);
  ZmoveArgs a;
  a.select = args.Keyword({"MIN", "MAX"}) == 1 ? Select::kMax : Select::kMin;
  int64_t timeout = args.BlockTimeoutMs(ctx.db.now_ms());
  ReadCount(args, &a.count);
  if (!args.Check()) return;
  bool replied_error;
  size_t moved = 0;
  if (ZmoveOnce(ctx, a, &replied_error, &moved)) {
    // Logged as the ZMOVE that moves what was moved, so a replica never waits.
    ctx.PropagateInstead({"ZMOVE", std::string(ctx.arg(1)), std::string(ctx.arg(2)),
                          a.select == Select::kMax ? "MAX" : "MIN", "COUNT",
                          std::to_string(moved)});
    return;
  }
  if (replied_error) return;
  // The same key (even a missing one) never blocks: the move could never do anything.
  if (!ctx.may_block() || ctx.arg(1) == ctx.arg(2)) {
    ctx.reply.NullArray();
    return;
  }
  ctx.blocking().BlockClient(ctx, {std::string(ctx.arg(1))}, timeout, ValueType::kZSet, {});
}

void ZmovememberCommand(CommandContext& ctx) {
  ArgParser args(ctx, 3);
  int condition = -1;  // 0 = NX, 1 = XX
  if (EqualsIgnoreCase(args.Peek(), "NX") || EqualsIgnoreCase(args.Peek(), "XX")) {
    condition = args.Keyword({"NX", "XX"});
  }
  if (!args.Flag("MEMBERS")) args.SyntaxError();
  int64_t n = args.ok() ? args.Positive("ERR num-members should be greater than 0") : 0;
  if (args.ok() && static_cast<uint64_t>(n) != args.remaining()) args.SyntaxError();
  if (!args.Check()) return;
  std::span<const std::string_view> requested = args.Rest();
  std::string_view src = ctx.arg(1), dst = ctx.arg(2);
  ZSet* source;
  DbEntry* dst_entry;
  if (!LookupMoveSets(ctx, src, dst, &source, &dst_entry)) return;
  if (source == nullptr || src == dst) {
    ctx.reply.NullArray();
    return;
  }
  const ZSet* destination = dst_entry ? ZsetOf(dst_entry) : nullptr;
  Members moved;
  std::unordered_set<std::string_view> seen;
  for (std::string_view member : requested) {
    if (!seen.insert(member).second) continue;  // a duplicate moves once
    double score, unused;
    if (!source->Score(member, &score)) continue;
    const bool in_dst = destination != nullptr && destination->Score(member, &unused);
    if ((condition == 0 && in_dst) || (condition == 1 && !in_dst)) continue;
    moved.emplace_back(std::string(member), score);
  }
  if (moved.empty()) {
    ctx.reply.NullArray();
    return;
  }
  for (const auto& [member, score] : moved) source->Erase(member);
  FinishMove(ctx, src, dst, source, dst_entry, moved);
}

}  // namespace

void RegisterZsetMoveCommands(CommandTable& table) {
  constexpr const char* kGroup = "sorted-set";
  auto keys = [] {
    return Keys(KeyAt(1, kKeyRW | kKeyAccess | kKeyDelete), KeyAt(2, kKeyRW | kKeyInsert));
  };
  table.Add({"zmove", -4, kCmdWrite | kCmdDenyOom, keys(), kAclSortedSet, kGroup, "8.12.0",
             "Moves highest- or lowest-scoring members, or a score range of members, from one "
             "sorted set to another, preserving scores. Deletes the source sorted set if the "
             "last member was moved.",
             "source destination selection=<MIN | MAX | score-range=<byscore=BYSCORE "
             "score-min:double score-max:double>> [COUNT count:integer]",
             ZmoveCommand,
             "O(log(N) + K*(log(N)+log(M))) where N and M are the source and destination sizes "
             "and K is the number of moved members."});
  table.Add({"bzmove", -5, kCmdWrite | kCmdDenyOom | kCmdBlocking, keys(), kAclSortedSet, kGroup,
             "8.12.0",
             "Moves highest- or lowest-scoring members from one sorted set to another, preserving "
             "scores. Blocks until a member is available otherwise. Deletes the source sorted set "
             "if the last member was moved.",
             "source destination selection=<MIN | MAX> timeout:double [COUNT count:integer]",
             BzmoveCommand,
             "O(K*(log(N)+log(M))) where K is the number of moved members and N and M are the "
             "source and destination sizes."});
  table.Add({"zmovemember", -6, kCmdWrite | kCmdDenyOom, keys(), kAclSortedSet, kGroup, "8.12.0",
             "Moves specified members from one sorted set to another, preserving scores. Can "
             "restrict moves to members absent from or present in the destination. Deletes the "
             "source sorted set if the last member was moved.",
             "source destination [condition=<NX | XX>] members=<MEMBERS num-members:integer "
             "member [member ...]>",
             ZmovememberCommand,
             "O(K*(log(N)+log(M))) where K is the number of given members and N and M are the "
             "source and destination sizes."});
}

}  // namespace vireo
