// Sorted-set ranges: ZRANGE (by rank, BYSCORE, BYLEX, REV, LIMIT, WITHSCORES), ZRANGESTORE,
// the legacy ZREVRANGE / Z[REV]RANGEBYSCORE / Z[REV]RANGEBYLEX, ZCOUNT, ZLEXCOUNT and
// ZREMRANGEBYRANK / BYSCORE / BYLEX.
//
// Every range is first turned into a [from, to) span of ascending ranks; REV, LIMIT and the
// reply shape are then applied to that span, so all forms share one path.
#include <cmath>
#include <cstdlib>

#include "commands/families.h"
#include "commands/zset_common.h"
#include "core/arg_parser.h"
#include "core/command_table.h"
#include "server/client.h"
#include "server/command_context.h"
#include "util/strings.h"

namespace vireo {

namespace {

// strtod over the whole argument, as Redis's zslParseRange: it stops at a NUL like C does.
bool ParseRangeDouble(std::string_view text, double* out) {
  std::string copy(text);
  char* end;
  *out = strtod(copy.c_str(), &end);
  return *end == '\0' && !std::isnan(*out);
}

bool ParseScoreBound(std::string_view arg, double* value, bool* exclusive) {
  *exclusive = !arg.empty() && arg[0] == '(';
  return ParseRangeDouble(*exclusive ? arg.substr(1) : arg, value);
}

}  // namespace

bool ParseScoreRange(std::string_view min, std::string_view max, ScoreRange* out) {
  return ParseScoreBound(min, &out->min, &out->minex) &&
         ParseScoreBound(max, &out->max, &out->maxex);
}

bool ParseLexBound(std::string_view arg, LexBound* out) {
  if (arg.empty()) return false;
  switch (arg[0]) {
    case '+':
      if (arg.size() != 1) return false;
      out->kind = LexBound::Kind::kMax;
      return true;
    case '-':
      if (arg.size() != 1) return false;
      out->kind = LexBound::Kind::kMin;
      return true;
    case '(':
    case '[':
      out->kind = LexBound::Kind::kValue;
      out->exclusive = arg[0] == '(';
      out->value.assign(arg.substr(1));
      return true;
    default:
      return false;
  }
}

std::pair<size_t, size_t> RanksInRange(const ZSet& z, const ScoreRange& r) {
  return {z.ScoreLowerBound(r.min, r.minex), z.ScoreRangeEnd(r.max, r.maxex)};
}

std::pair<size_t, size_t> RanksInRange(const ZSet& z, const LexBound& min, const LexBound& max) {
  return {z.LexLowerBound(min), z.LexRangeEnd(max)};
}

namespace {

constexpr std::string_view kBadScoreBound = "ERR min or max is not a float";
constexpr std::string_view kBadLexBound = "ERR min or max not valid string range item";

enum class RangeType { kAuto, kRank, kScore, kLex };
enum class Direction { kAuto, kForward, kReverse };

struct RangeArgs {
  std::string_view key;
  std::string_view dst;  // ZRANGESTORE's destination
  bool store = false;
  RangeType type = RangeType::kAuto;
  Direction dir = Direction::kAuto;
  bool withscores = false;
  int64_t offset = 0;
  int64_t limit = -1;
  int64_t start = 0, end = 0;
  ScoreRange score;
  LexBound lex_min, lex_max;
};

// The two bounds of a range from `args` (min then max, or max then min when `swapped`), read
// as ranks, scores or lex bounds; a bad bound fails `args` with the type's error.
void ReadBounds(ArgParser& args, RangeType type, bool swapped, int64_t* start, int64_t* end,
                ScoreRange* score, LexBound* lex_min, LexBound* lex_max) {
  if (type == RangeType::kRank || type == RangeType::kAuto) {
    *start = args.Int();
    *end = args.Int();
    return;
  }
  std::string_view min = args.Next(), max = args.Next();
  if (!args.ok()) return;
  if (swapped) std::swap(min, max);
  if (type == RangeType::kScore) {
    if (!ParseScoreRange(min, max, score)) args.Fail(kBadScoreBound);
  } else if (!ParseLexBound(min, lex_min) || !ParseLexBound(max, lex_max)) {
    args.Fail(kBadLexBound);
  }
}

// Parses "key min max [options]" with the key at argv[at]; `type` / `dir` are fixed by the
// legacy commands (which then refuse BYSCORE, REV... as syntax errors, as Redis does).
bool ParseRange(CommandContext& ctx, size_t at, RangeType type, Direction dir, RangeArgs* a) {
  a->key = ctx.arg(at);
  a->type = type;
  a->dir = dir;
  ArgParser args(ctx, at + 3);
  while (args.HasNext()) {
    if (!a->store && args.Flag("WITHSCORES")) {
      a->withscores = true;
    } else if (args.remaining() >= 3 && args.Flag("LIMIT")) {
      a->offset = args.Int();
      a->limit = args.Int();
    } else if (a->dir == Direction::kAuto && args.Flag("REV")) {
      a->dir = Direction::kReverse;
    } else if (a->type == RangeType::kAuto && args.Flag("BYLEX")) {
      a->type = RangeType::kLex;
    } else if (a->type == RangeType::kAuto && args.Flag("BYSCORE")) {
      a->type = RangeType::kScore;
    } else {
      args.SyntaxError();
    }
  }
  if (!args.ok()) return args.Check();
  if (a->dir == Direction::kAuto) a->dir = Direction::kForward;
  if (a->type == RangeType::kAuto) a->type = RangeType::kRank;
  if (a->limit != -1 && a->type == RangeType::kRank) {
    args.Fail(
        "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or "
        "BYLEX");
  }
  if (a->withscores && a->type == RangeType::kLex) {
    args.Fail("ERR syntax error, WITHSCORES not supported in combination with BYLEX");
  }
  // Reversed score and lex ranges are given as max, min.
  const bool swapped = a->dir == Direction::kReverse && a->type != RangeType::kRank;
  args.Seek(at + 1);
  ReadBounds(args, a->type, swapped, &a->start, &a->end, &a->score, &a->lex_min, &a->lex_max);
  return args.Check();
}

// Normalizes Redis's inclusive rank range (negative = from the end) to [from, to).
std::pair<size_t, size_t> RankSpan(int64_t start, int64_t end, size_t size) {
  auto llen = static_cast<int64_t>(size);
  if (start < 0) start += llen;
  if (end < 0) end += llen;
  if (start < 0) start = 0;
  if (start > end || start >= llen) return {0, 0};
  if (end >= llen) end = llen - 1;
  return {static_cast<size_t>(start), static_cast<size_t>(end) + 1};
}

// The members a parsed range selects, in reply order.
std::vector<std::pair<std::string, double>> Collect(const ZSet& z, const RangeArgs& a) {
  std::vector<std::pair<std::string, double>> out;
  size_t from, to;
  bool reverse = a.dir == Direction::kReverse;
  if (a.type == RangeType::kRank) {
    auto [f, t] = RankSpan(a.start, a.end, z.size());
    if (f >= t) return out;
    // REV counts ranks from the top.
    if (reverse) {
      size_t n = z.size();
      from = n - t;
      to = n - f;
    } else {
      from = f;
      to = t;
    }
  } else {
    std::tie(from, to) = a.type == RangeType::kScore ? RanksInRange(z, a.score)
                                                     : RanksInRange(z, a.lex_min, a.lex_max);
    if (from >= to || a.offset < 0) return out;
    auto skip = static_cast<uint64_t>(a.offset);
    if (skip >= to - from) return out;
    size_t span = to - from - static_cast<size_t>(skip);
    if (a.limit >= 0 && static_cast<uint64_t>(a.limit) < span) span = static_cast<size_t>(a.limit);
    if (reverse) {
      to -= static_cast<size_t>(skip);
      from = to - span;
    } else {
      from += static_cast<size_t>(skip);
      to = from + span;
    }
  }
  if (from >= to) return out;
  out.reserve(to - from);
  if (reverse) {
    for (ZSet::Iter it = z.At(to - 1); it.Valid() && out.size() < to - from; it.Prev()) {
      out.emplace_back(std::string(it.member()), it.score());
    }
  } else {
    for (ZSet::Iter it = z.At(from); it.Valid() && out.size() < to - from; it.Next()) {
      out.emplace_back(std::string(it.member()), it.score());
    }
  }
  return out;
}

void RangeGeneric(CommandContext& ctx, size_t at, RangeType type, Direction dir, bool store) {
  RangeArgs a;
  a.store = store;
  if (store) a.dst = ctx.arg(1);
  if (!ParseRange(ctx, at, type, dir, &a)) return;
  auto [z, wrong_type] = LookupZset(ctx, a.key);
  if (wrong_type) return;
  std::vector<std::pair<std::string, double>> items;
  if (z != nullptr) items = Collect(*z, a);
  if (store) {
    StoreZsetResult(ctx, a.dst, "zrangestore", items);
  } else {
    ReplyMembers(ctx, items, a.withscores);
  }
}

void ZrangeCommand(CommandContext& ctx) {
  RangeGeneric(ctx, 1, RangeType::kAuto, Direction::kAuto, false);
}
void ZrangestoreCommand(CommandContext& ctx) {
  RangeGeneric(ctx, 2, RangeType::kAuto, Direction::kAuto, true);
}
void ZrevrangeCommand(CommandContext& ctx) {
  RangeGeneric(ctx, 1, RangeType::kRank, Direction::kReverse, false);
}
void ZrangebyscoreCommand(CommandContext& ctx) {
  RangeGeneric(ctx, 1, RangeType::kScore, Direction::kForward, false);
}
void ZrevrangebyscoreCommand(CommandContext& ctx) {
  RangeGeneric(ctx, 1, RangeType::kScore, Direction::kReverse, false);
}
void ZrangebylexCommand(CommandContext& ctx) {
  RangeGeneric(ctx, 1, RangeType::kLex, Direction::kForward, false);
}
void ZrevrangebylexCommand(CommandContext& ctx) {
  RangeGeneric(ctx, 1, RangeType::kLex, Direction::kReverse, false);
}

// ---------------------------------------------------------------------------------------------
// ZCOUNT, ZLEXCOUNT, ZREMRANGEBYRANK / BYSCORE / BYLEX: the rank span that argv[2] and argv[3]
// select in the set at argv[1].

enum class SpanKind { kRank, kScore, kLex };

// Parses the bounds, looks the set up and returns it with the span [from, to). nullptr when
// a reply was already written: an error, or 0 for a missing key.
ZSet* SelectedSpan(CommandContext& ctx, SpanKind kind, size_t* from, size_t* to) {
  int64_t start = 0, end = 0;
  ScoreRange score;
  LexBound min, max;
  ArgParser args(ctx, 2);
  const RangeType type = kind == SpanKind::kRank    ? RangeType::kRank
                         : kind == SpanKind::kScore ? RangeType::kScore
                                                    : RangeType::kLex;
  ReadBounds(args, type, false, &start, &end, &score, &min, &max);
  if (!args.Check()) return nullptr;
  auto [z, wrong_type] = LookupZset(ctx, ctx.arg(1));
  if (wrong_type) return nullptr;
  if (z == nullptr) {
    ctx.reply.Integer(0);
    return nullptr;
  }
  switch (kind) {
    case SpanKind::kRank:
      std::tie(*from, *to) = RankSpan(start, end, z->size());
      break;
    case SpanKind::kScore:
      std::tie(*from, *to) = RanksInRange(*z, score);
      break;
    case SpanKind::kLex:
      std::tie(*from, *to) = RanksInRange(*z, min, max);
      break;
  }
  return z;
}

void CountSpan(CommandContext& ctx, SpanKind kind) {
  size_t from, to;
  if (SelectedSpan(ctx, kind, &from, &to) == nullptr) return;
  ctx.reply.Integer(from < to ? static_cast<int64_t>(to - from) : 0);
}

void ZcountCommand(CommandContext& ctx) { CountSpan(ctx, SpanKind::kScore); }
void ZlexcountCommand(CommandContext& ctx) { CountSpan(ctx, SpanKind::kLex); }

void RemoveSpan(CommandContext& ctx, SpanKind kind, std::string_view event) {
  size_t from, to;
  ZSet* z = SelectedSpan(ctx, kind, &from, &to);
  if (z == nullptr) return;
  std::string_view key = ctx.arg(1);
  int64_t removed = from < to ? static_cast<int64_t>(to - from) : 0;
  if (removed > 0) {
    z->EraseRanks(from, to);
    Notify(ctx, kNotifyZset, event, key);
    DeleteZsetIfEmpty(ctx, key, z);
    KeyWritten(ctx, key, static_cast<uint64_t>(removed));
  }
  ctx.reply.Integer(removed);
}

void ZremrangebyrankCommand(CommandContext& ctx) {
  RemoveSpan(ctx, SpanKind::kRank, "zremrangebyrank");
}
void ZremrangebyscoreCommand(CommandContext& ctx) {
  RemoveSpan(ctx, SpanKind::kScore, "zremrangebyscore");
}
void ZremrangebylexCommand(CommandContext& ctx) {
  RemoveSpan(ctx, SpanKind::kLex, "zremrangebylex");
}

}  // namespace

void StoreZsetResult(CommandContext& ctx, std::string_view dst, std::string_view event,
                     const std::vector<std::pair<std::string, double>>& items, uint64_t dirty) {
  if (items.empty()) {
    if (ctx.db.Delete(dst)) {
      KeyWritten(ctx, dst);
      Notify(ctx, kNotifyGeneric, "del", dst);
    }
    ctx.reply.Integer(0);
    return;
  }
  size_t max_len = 0;
  for (const auto& item : items) max_len = std::max(max_len, item.first.size());
  ZSet::Limits limits = ZsetLimits(ctx);
  auto z = std::make_unique<ZSet>(items.size(), max_len, limits);
  for (const auto& [member, score] : items) z->Insert(member, score, limits);
  ctx.db.Set(dst, Value::Object(ValueType::kZSet, std::move(z)));
  KeyWritten(ctx, dst, dirty);
  Notify(ctx, kNotifyZset, event, dst);
  ctx.reply.Integer(static_cast<int64_t>(items.size()));
}

void RegisterZsetRangeCommands(CommandTable& table) {
  constexpr const char* kGroup = "sorted-set";

  table.Add({"zrange", -4, kCmdReadonly, Keys(KeyAt(1, kKeyRO | kKeyAccess)), kAclSortedSet, kGroup,
             "1.2.0", "Returns members in a sorted set within a range of indexes.",
             "key start:string stop:string [sortby=<BYSCORE | BYLEX>] [REV] [LIMIT "
             "offset count] [WITHSCORES]",
             ZrangeCommand,
             "O(log(N)+M) with N being the number of elements in the sorted set and M the number "
             "of elements returned."});
  table.Add({"zrangestore", -5, kCmdWrite | kCmdDenyOom,
             Keys(KeyAt(1, kKeyOW | kKeyUpdate), KeyAt(2, kKeyRO | kKeyAccess)), kAclSortedSet,
             kGroup, "6.2.0", "Stores a range of members from sorted set in a key.",
             "dst:key src:key min max [sortby=<BYSCORE | BYLEX>] [REV] [LIMIT offset "
             "count]",
             ZrangestoreCommand,
             "O(log(N)+M) with N being the number of elements in the sorted set and M the number "
             "of elements stored into the destination key."});
  table.Add({"zrevrange", -4, kCmdReadonly, Keys(KeyAt(1, kKeyRO | kKeyAccess)), kAclSortedSet,
             kGroup, "1.2.0",
             "Returns members in a sorted set within a range of indexes in reverse order.",
             "key start stop [WITHSCORES]", ZrevrangeCommand,
             "O(log(N)+M) with N being the number of elements in the sorted set and M the number "
             "of elements returned."});
  table.Add({"zrangebyscore", -4, kCmdReadonly, Keys(KeyAt(1, kKeyRO | kKeyAccess)), kAclSortedSet,
             kGroup, "1.0.5", "Returns members in a sorted set within a range of scores.",
             "key min:double max:double [WITHSCORES] [LIMIT offset count]", ZrangebyscoreCommand,
             "O(log(N)+M) with N being the number of elements in the sorted set and M the number "
             "of elements being returned. If M is constant (e.g. always asking for the first 10 "
             "elements with LIMIT), you can consider it O(log(N))."});
  table.Add({"zrevrangebyscore", -4, kCmdReadonly, Keys(KeyAt(1, kKeyRO | kKeyAccess)),
             kAclSortedSet, kGroup, "2.2.0",
             "Returns members in a sorted set within a range of scores in reverse order.",
             "key max:double min:double [WITHSCORES] [LIMIT offset count]", ZrevrangebyscoreCommand,
             "O(log(N)+M) with N being the number of elements in the sorted set and M the number "
             "of elements being returned. If M is constant (e.g. always asking for the first 10 "
             "elements with LIMIT), you can consider it O(log(N))."});
  table.Add({"zrangebylex", -4, kCmdReadonly, Keys(KeyAt(1, kKeyRO | kKeyAccess)), kAclSortedSet,
             kGroup, "2.8.9", "Returns members in a sorted set within a lexicographical range.",
             "key min max [LIMIT offset count]", ZrangebylexCommand,
             "O(log(N)+M) with N being the number of elements in the sorted set and M the number "
             "of elements being returned. If M is constant (e.g. always asking for the first 10 "
             "elements with LIMIT), you can consider it O(log(N))."});
  table.Add({"zrevrangebylex", -4, kCmdReadonly, Keys(KeyAt(1, kKeyRO | kKeyAccess)), kAclSortedSet,
             kGroup, "2.8.9",
             "Returns members in a sorted set within a lexicographical range in reverse order.",
             "key max min [LIMIT offset count]", ZrevrangebylexCommand,
             "O(log(N)+M) with N being the number of elements in the sorted set and M the number "
             "of elements being returned. If M is constant (e.g. always asking for the first 10 "
             "elements with LIMIT), you can consider it O(log(N))."});
  table.Add({"zcount", 4, kCmdReadonly | kCmdFast, Keys(KeyAt(1, kKeyRO | kKeyAccess)),
             kAclSortedSet, kGroup, "2.0.0",
             "Returns the count of members in a sorted set that have scores within a range.",
             "key min:double max:double", ZcountCommand,
             "O(log(N)) with N being the number of elements in the sorted set."});
  table.Add({"zlexcount", 4, kCmdReadonly | kCmdFast, Keys(KeyAt(1, kKeyRO | kKeyAccess)),
             kAclSortedSet, kGroup, "2.8.9",
             "Returns the number of members in a sorted set within a lexicographical range.",
             "key min max", ZlexcountCommand,
             "O(log(N)) with N being the number of elements in the sorted set."});
  table.Add({"zremrangebyrank", 4, kCmdWrite, Keys(KeyAt(1, kKeyRW | kKeyDelete)), kAclSortedSet,
             kGroup, "2.0.0",
             "Removes members in a sorted set within a range of indexes. Deletes the sorted set "
             "if all members were removed.",
             "key start stop", ZremrangebyrankCommand,
             "O(log(N)+M) with N being the number of elements in the sorted set and M the number "
             "of elements removed by the operation."});
  table.Add({"zremrangebyscore", 4, kCmdWrite, Keys(KeyAt(1, kKeyRW | kKeyDelete)), kAclSortedSet,
             kGroup, "1.2.0",
             "Removes members in a sorted set within a range of scores. Deletes the sorted set "
             "if all members were removed.",
             "key min:double max:double", ZremrangebyscoreCommand,
             "O(log(N)+M) with N being the number of elements in the sorted set and M the number "
             "of elements removed by the operation."});
  table.Add({"zremrangebylex", 4, kCmdWrite, Keys(KeyAt(1, kKeyRW | kKeyDelete)), kAclSortedSet,
             kGroup, "2.8.9",
             "Removes members in a sorted set within a lexicographical range. Deletes the sorted "
             "set if all members were removed.",
             "key min max", ZremrangebylexCommand,
             "O(N+M) with N being the number of elements in the sorted set and M the number of "
             "elements removed by the operation."});
}

}  // namespace vireo
