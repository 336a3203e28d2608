// Sorted sets: ZADD, ZINCRBY, ZREM, ZCARD, ZSCORE, ZMSCORE, ZRANK, ZREVRANK, the pops
// (ZPOPMIN, ZPOPMAX, ZMPOP and the blocking BZPOPMIN, BZPOPMAX, BZMPOP), ZRANDMEMBER and
// ZSCAN. Ranges live in zset_ranges.cc, ZUNION & co. in zset_setops.cc.
//
// Blocking pops try the non-blocking form first and hand the client to the blocking engine
// only when every key is empty; the engine re-runs the whole command once a key has data, so a
// served BZPOPMIN replies exactly as the non-blocking form and is logged as ZPOPMIN.
#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <random>

#include "commands/collection_common.h"
#include "commands/families.h"
#include "commands/mpop_args.h"
#include "commands/numkeys.h"
#include "commands/zset_common.h"
#include "core/arg_parser.h"
#include "core/command_table.h"
#include "core/config.h"
#include "server/blocking_service.h"
#include "server/client.h"
#include "server/command_context.h"
#include "util/glob.h"
#include "util/strings.h"

namespace vireo {

ZSet::Limits ZsetLimits(CommandContext& ctx) {
  const ServerConfig& c = ctx.cfg();
  return ZSet::Limits{static_cast<size_t>(c.zset_max_listpack_entries),
                      static_cast<size_t>(c.zset_max_listpack_value)};
}

ZSet* ZsetOf(DbEntry* entry) { return entry->value.As<ZSet>(); }

TypedObject<ZSet> LookupZset(CommandContext& ctx, std::string_view key) {
  return LookupTyped(ctx, key, ValueType::kZSet).As<ZSet>();
}

ZSet* CreateZset(CommandContext& ctx, std::string_view key, size_t size_hint, size_t max_len) {
  auto zset = std::make_unique<ZSet>(size_hint, max_len, ZsetLimits(ctx));
  ZSet* raw = zset.get();
  ctx.db.Add(key, Value::Object(ValueType::kZSet, std::move(zset)));
  return raw;
}

void DeleteZsetIfEmpty(CommandContext& ctx, std::string_view key, ZSet* zset) {
  if (!zset->empty()) return;
  ctx.db.Delete(key);
  Notify(ctx, kNotifyGeneric, "del", key);
}

void ReplyMembers(CommandContext& ctx, const std::vector<std::pair<std::string, double>>& items,
                  bool withscores) {
  bool resp3 = ctx.reply.resp3();
  ctx.reply.Array(withscores && !resp3 ? items.size() * 2 : items.size());
  for (const auto& [member, score] : items) {
    if (withscores && resp3) ctx.reply.Array(2);
    ctx.reply.Bulk(member);
    if (withscores) ctx.reply.Double(score);
  }
}

namespace {

// ---------------------------------------------------------------------------------------------
// ZADD / ZINCRBY

struct ZaddArgs {
  bool nx = false, xx = false, gt = false, lt = false, ch = false, incr = false;
  std::vector<std::pair<double, std::string_view>> items;
  size_t max_len = 0;
};

bool ParseZadd(CommandContext& ctx, ZaddArgs* args) {
  ArgParser parser(ctx, 2);
  for (;;) {
    int flag = parser.OneOf({"NX", "XX", "GT", "LT", "CH", "INCR"});
    if (flag < 0) break;
    bool* flags[] = {&args->nx, &args->xx, &args->gt, &args->lt, &args->ch, &args->incr};
    *flags[flag] = true;
  }
  size_t elements = parser.remaining();
  parser.ExpectGroupsOf(2);  // score member pairs
  parser.Exclusive({args->nx, args->xx},
                   "ERR XX and NX options at the same time are not compatible");
  parser.Exclusive({args->gt, args->lt, args->nx},
                   "ERR GT, LT, and/or NX options at the same time are not compatible");
  if (args->incr && elements > 2) {
    parser.Fail("ERR INCR option supports a single increment-element pair");
  }
  while (parser.HasNext()) {
    double score = parser.Double();
    std::string_view member = parser.Next();
    args->items.emplace_back(score, member);
    args->max_len = std::max(args->max_len, member.size());
  }
  return parser.Check();
}

void ZaddGeneric(CommandContext& ctx, ZaddArgs& args) {
  std::string_view key = ctx.arg(1);
  auto [z, wrong_type] = LookupZset(ctx, key);
  if (wrong_type) return;
  bool existed = z != nullptr;
  if (z == nullptr) {
    if (args.xx) {
      if (args.incr) {
        ctx.reply.Null();
      } else {
        ctx.reply.Integer(0);
      }
      return;
    }
    z = CreateZset(ctx, key, args.items.size(), args.max_len);
  }
  ZSet::Limits limits = ZsetLimits(ctx);
  int64_t added = 0, updated = 0, processed = 0;
  double last_score = 0;
  bool nan_error = false;
  for (auto& [score, member] : args.items) {
    double current;
    if (z->Score(member, &current)) {
      if (args.nx) continue;
      double s = score;
      if (args.incr) {
        s += current;
        if (std::isnan(s)) {
          nan_error = true;
          break;
        }
      }
      if ((args.lt && s >= current) || (args.gt && s <= current)) continue;
      last_score = s;
      ++processed;
      if (s != current) {
        z->Update(member, s);
        ++updated;
      }
    } else {
      if (args.xx) continue;
      z->Insert(member, score, limits);
      last_score = score;
      ++added;
      ++processed;
    }
  }
  if (added + updated > 0) {
    KeyWritten(ctx, key, static_cast<uint64_t>(added + updated));
    Notify(ctx, kNotifyZset, args.incr ? "zincr" : "zadd", key);
    if (existed && added > 0) ctx.blocking().SignalKeyAsReady(ctx.db.index(), key);
  }
  if (nan_error) {
    ctx.reply.Error("ERR resulting score is not a number (NaN)");
    return;
  }
  if (args.incr) {
    if (processed > 0) {
      ctx.reply.Double(last_score);
    } else {
      ctx.reply.Null();
    }
  } else {
    ctx.reply.Integer(args.ch ? added + updated : added);
  }
}

void ZaddCommand(CommandContext& ctx) {
  ZaddArgs args;
  if (!ParseZadd(ctx, &args)) return;
  ZaddGeneric(ctx, args);
}

void ZincrbyCommand(CommandContext& ctx) {
  ZaddArgs args;
  args.incr = true;
  ArgParser parser(ctx, 2);
  double score = parser.Double();
  if (!parser.Check()) return;
  args.items.emplace_back(score, ctx.arg(3));
  args.max_len = ctx.arg(3).size();
  ZaddGeneric(ctx, args);
}

// ---------------------------------------------------------------------------------------------
// ZREM, ZCARD, ZSCORE, ZMSCORE, ZRANK

void ZremCommand(CommandContext& ctx) {
  std::string_view key = ctx.arg(1);
  auto [z, wrong_type] = LookupZset(ctx, key);
  if (wrong_type) return;
  int64_t removed = 0;
  if (z != nullptr) {
    for (size_t i = 2; i < ctx.argc() && !z->empty(); ++i) removed += z->Erase(ctx.arg(i));
    if (removed > 0) {
      Notify(ctx, kNotifyZset, "zrem", key);
      DeleteZsetIfEmpty(ctx, key, z);
      KeyWritten(ctx, key, static_cast<uint64_t>(removed));
    }
  }
  ctx.reply.Integer(removed);
}

void ZcardCommand(CommandContext& ctx) {
  auto [z, wrong_type] = LookupZset(ctx, ctx.arg(1));
  if (wrong_type) return;
  ctx.reply.Integer(z == nullptr ? 0 : static_cast<int64_t>(z->size()));
}

void ZscoreCommand(CommandContext& ctx) {
  auto [z, wrong_type] = LookupZset(ctx, ctx.arg(1));
  if (wrong_type) return;
  double score;
  if (z == nullptr || !z->Score(ctx.arg(2), &score)) {
    ctx.reply.Null();
    return;
  }
  ctx.reply.Double(score);
}

void ZmscoreCommand(CommandContext& ctx) {
  auto [z, wrong_type] = LookupZset(ctx, ctx.arg(1));
  if (wrong_type) return;
  ctx.reply.Array(ctx.argc() - 2);
  for (size_t i = 2; i < ctx.argc(); ++i) {
    double score;
    if (z != nullptr && z->Score(ctx.arg(i), &score)) {
      ctx.reply.Double(score);
    } else {
      ctx.reply.Null();
    }
  }
}

void RankGeneric(CommandContext& ctx, bool reverse) {
  if (ctx.argc() > 4) {
    ctx.reply.Error(fmt::format("ERR wrong number of arguments for '{}' command", ctx.spec->name));
    return;
  }
  ArgParser args(ctx, 3);
  const bool withscore = args.Flag("WITHSCORE");
  args.ExpectEnd();
  if (!args.Check()) return;
  auto [z, wrong_type] = LookupZset(ctx, ctx.arg(1));
  if (wrong_type) return;
  std::optional<size_t> rank;
  double score = 0;
  if (z != nullptr && z->Score(ctx.arg(2), &score)) rank = z->Rank(ctx.arg(2));
  if (!rank) {
    if (withscore) {
      ctx.reply.NullArray();
    } else {
      ctx.reply.Null();
    }
    return;
  }
  size_t r = reverse ? z->size() - 1 - *rank : *rank;
  if (withscore) {
    ctx.reply.Array(2);
    ctx.reply.Integer(static_cast<int64_t>(r));
    ctx.reply.Double(score);
  } else {
    ctx.reply.Integer(static_cast<int64_t>(r));
  }
}

void ZrankCommand(CommandContext& ctx) { RankGeneric(ctx, false); }
void ZrevrankCommand(CommandContext& ctx) { RankGeneric(ctx, true); }

// ---------------------------------------------------------------------------------------------
// Pops

enum class Which { kMin, kMax };

// Removes up to `count` members from the low or high end, lowest/highest first.
std::vector<std::pair<std::string, double>> PopMembers(ZSet* z, Which which, size_t count) {
  size_t n = std::min(count, z->size());
  std::vector<std::pair<std::string, double>> out;
  out.reserve(n);
  if (which == Which::kMin) {
    for (ZSet::Iter it = z->At(0); it.Valid() && out.size() < n; it.Next()) {
      out.emplace_back(std::string(it.member()), it.score());
    }
    z->EraseRanks(0, n);
  } else {
    size_t size = z->size();
    for (ZSet::Iter it = z->At(size - 1); it.Valid() && out.size() < n; it.Prev()) {
      out.emplace_back(std::string(it.member()), it.score());
    }
    z->EraseRanks(size - n, size);
  }
  return out;
}

// Bookkeeping after popping `n` members from `key`.
void AfterPop(CommandContext& ctx, std::string_view key, ZSet* z, Which which, size_t n) {
  Notify(ctx, kNotifyZset, which == Which::kMin ? "zpopmin" : "zpopmax", key);
  DeleteZsetIfEmpty(ctx, key, z);
  KeyWritten(ctx, key, n);
}

void PopCommand(CommandContext& ctx, Which which) {
  ArgParser args(ctx, 2);
  args.ExpectRemaining(0, 1);  // [count]
  const bool has_count = args.HasNext();
  int64_t count = 1;
  if (has_count) count = args.NonNegative("ERR value is out of range, must be positive");
  if (!args.Check()) return;
  std::string_view key = ctx.arg(1);
  auto [z, wrong_type] = LookupZset(ctx, key);
  if (wrong_type) return;
  if (z == nullptr || count == 0) {
    ctx.reply.EmptyArray();
    return;
  }
  auto items = PopMembers(z, which, static_cast<size_t>(count));
  // Without a count the reply is one flat pair even in RESP3; with one, RESP3 nests pairs.
  if (has_count) {
    ReplyMembers(ctx, items, true);
  } else {
    ctx.reply.Array(2);
    ctx.reply.Bulk(items[0].first);
    ctx.reply.Double(items[0].second);
  }
  AfterPop(ctx, key, z, which, items.size());
}

void ZpopminCommand(CommandContext& ctx) { PopCommand(ctx, Which::kMin); }
void ZpopmaxCommand(CommandContext& ctx) { PopCommand(ctx, Which::kMax); }

void BlockingPop(CommandContext& ctx, Which which) {
  ArgParser args(ctx, ctx.argc() - 1);
  int64_t timeout = args.BlockTimeoutMs(ctx.db.now_ms());
  if (!args.Check()) return;
  std::span<const std::string_view> keys = ctx.argv.subspan(1, ctx.argc() - 2);
  for (std::string_view key : keys) {
    auto [z, wrong_type] = LookupZset(ctx, key);
    if (wrong_type) return;
    if (z == nullptr) continue;
    auto items = PopMembers(z, which, 1);
    ctx.reply.Array(3);
    ctx.reply.Bulk(key);
    ctx.reply.Bulk(items[0].first);
    ctx.reply.Double(items[0].second);
    ctx.PropagateInstead({which == Which::kMin ? "ZPOPMIN" : "ZPOPMAX", std::string(key)});
    AfterPop(ctx, key, z, which, 1);
    return;
  }
  if (!ctx.may_block()) {
    ctx.reply.NullArray();
    return;
  }
  ctx.blocking().BlockClient(ctx, std::vector<std::string>(keys.begin(), keys.end()), timeout,
                             ValueType::kZSet, {});
}

void BzpopminCommand(CommandContext& ctx) { BlockingPop(ctx, Which::kMin); }
void BzpopmaxCommand(CommandContext& ctx) { BlockingPop(ctx, Which::kMax); }

struct ZsetMpopArgs {
  std::span<const std::string_view> keys;
  Which which;
  int64_t count = 1;
};

void ReadMpop(ArgParser& parser, ZsetMpopArgs* out) {
  MpopArgs parsed = ReadMpopArgs(parser, "MIN", "MAX");
  out->keys = parsed.keys;
  out->which = parsed.second_end ? Which::kMax : Which::kMin;
  out->count = parsed.count;
}

// Pops from the first non-empty set; false (nothing replied) when all are empty.
bool MpopFirstNonEmpty(CommandContext& ctx, const ZsetMpopArgs& args, bool* replied_error) {
  *replied_error = false;
  for (std::string_view key : args.keys) {
    auto [z, wrong_type] = LookupZset(ctx, key);
    if (wrong_type) {
      *replied_error = true;
      return false;
    }
    if (z == nullptr) continue;
    auto items = PopMembers(z, args.which, static_cast<size_t>(args.count));
    ctx.reply.Array(2);
    ctx.reply.Bulk(key);
    ctx.reply.Array(items.size());
    for (const auto& [member, score] : items) {
      ctx.reply.Array(2);
      ctx.reply.Bulk(member);
      ctx.reply.Double(score);
    }
    ctx.PropagateInstead({args.which == Which::kMin ? "ZPOPMIN" : "ZPOPMAX", std::string(key),
                          std::to_string(items.size())});
    AfterPop(ctx, key, z, args.which, items.size());
    return true;
  }
  return false;
}

void ZmpopCommand(CommandContext& ctx) {
  ZsetMpopArgs args;
  ArgParser parser(ctx, 1);
  ReadMpop(parser, &args);
  if (!parser.Check()) return;
  bool replied_error;
  if (MpopFirstNonEmpty(ctx, args, &replied_error) || replied_error) return;
  ctx.reply.NullArray();
}

void BzmpopCommand(CommandContext& ctx) {
  // Unlike BLMPOP, BZMPOP reads the timeout first.
  ArgParser parser(ctx, 1);
  int64_t timeout = parser.BlockTimeoutMs(ctx.db.now_ms());
  ZsetMpopArgs args;
  ReadMpop(parser, &args);
  if (!parser.Check()) return;
  bool replied_error;
  if (MpopFirstNonEmpty(ctx, args, &replied_error) || replied_error) return;
  if (!ctx.may_block()) {
    ctx.reply.NullArray();
    return;
  }
  ctx.blocking().BlockClient(ctx, std::vector<std::string>(args.keys.begin(), args.keys.end()),
                             timeout, ValueType::kZSet, {});
}

// COMMAND GETKEYS for ZMPOP / BZMPOP / ZUNION & co.: numkeys keys after argv[numkeys_at].
std::vector<size_t> ZmpopKeys(std::span<const std::string_view> argv) {
  return NumkeysKeys(argv, 1);
}
std::vector<size_t> BzmpopKeys(std::span<const std::string_view> argv) {
  return NumkeysKeys(argv, 2);
}

// ---------------------------------------------------------------------------------------------
// ZRANDMEMBER, ZSCAN

void ZrandmemberCommand(CommandContext& ctx) {
  bool has_count = ctx.argc() >= 3;
  int64_t count = 1;
  // Redis's order: the count first (its range is symmetric, so -count can't overflow), then
  // the syntax, then the WITHSCORES range (two replies per member must stay countable).
  ArgParser args(ctx, 2);
  bool withscores = false;
  if (has_count) count = ReadRandomCount(args, "WITHSCORES", &withscores);
  if (!args.Check()) return;
  auto [z, wrong_type] = LookupZset(ctx, ctx.arg(1));
  if (wrong_type) return;
  if (!has_count) {
    if (z == nullptr) {
      ctx.reply.Null();
      return;
    }
    ZSet::Iter it = z->At(CollectionRng(ctx)() % z->size());
    ctx.reply.Bulk(it.member());
    return;
  }
  if (z == nullptr || count == 0) {
    ctx.reply.EmptyArray();
    return;
  }
  size_t size = z->size();
  if (count < 0) {
    // Repeats allowed: independent picks, written as they are drawn.
    auto n = static_cast<uint64_t>(-count);
    bool resp3 = ctx.reply.resp3();
    ReplyRepeatedDraws(ctx, n, withscores && !resp3 ? n * 2 : n, [&] {
      ZSet::Iter it = z->At(CollectionRng(ctx)() % size);
      if (withscores && resp3) ctx.reply.Array(2);
      ctx.reply.Bulk(it.member());
      if (withscores) ctx.reply.Double(it.score());
    });
    return;
  }
  std::vector<std::pair<std::string, double>> items;
  if (static_cast<uint64_t>(count) >= size) {
    z->ForEach([&](std::string_view m, double s) { items.emplace_back(std::string(m), s); });
  } else {
    for (size_t rank : SampleIndexes(CollectionRng(ctx), size, static_cast<size_t>(count))) {
      ZSet::Iter it = z->At(rank);
      items.emplace_back(std::string(it.member()), it.score());
    }
    std::shuffle(items.begin(), items.end(), CollectionRng(ctx));
  }
  ReplyMembers(ctx, items, withscores);
}

void ZscanCommand(CommandContext& ctx) {
  CollectionScanArgs args;
  ArgParser parser(ctx, 2);
  args.cursor = parser.Cursor();
  if (!parser.Check()) return;
  // Redis looks the key up before the options: a missing key answers an empty scan whatever
  // follows.
  auto [z, wrong_type] = LookupZset(ctx, ctx.arg(1));
  if (wrong_type) return;
  if (z != nullptr) {
    ReadCollectionScanOptions(parser, &args, nullptr, "NOSCORES");
    if (!parser.Check()) return;
  }
  std::vector<std::pair<std::string, double>> found;
  uint64_t next = 0;
  if (z != nullptr) {
    next = z->Scan(args.cursor, static_cast<size_t>(args.count), [&](std::string_view m, double s) {
      if (args.pattern && !GlobMatch(*args.pattern, m)) return;
      found.emplace_back(std::string(m), s);
    });
  }
  ctx.reply.Array(2);
  ReplyScanCursor(ctx, next);
  ctx.reply.Array(found.size() * (args.omit_values ? 1 : 2));
  char buf[kDoubleBufSize];
  for (const auto& [member, score] : found) {
    ctx.reply.Bulk(member);
    if (!args.omit_values) ctx.reply.Bulk(std::string_view(buf, FormatDouble(score, buf)));
  }
}

}  // namespace

std::vector<size_t> ZsetNumkeysKeys(std::span<const std::string_view> argv, size_t numkeys_at) {
  return NumkeysKeys(argv, numkeys_at);
}

void RegisterZsetCommands(CommandTable& table) {
  constexpr const char* kGroup = "sorted-set";
  constexpr const char* kWriteSlow = "@write @sortedset @slow";

  table.Add({"zadd", -4, kCmdWrite | kCmdDenyOom | kCmdFast, Keys(KeyAt(1, kKeyRW | kKeyUpdate)),
             kAclSortedSet, kGroup, "1.2.0",
             "Adds one or more members to a sorted set, or updates their scores. Creates the key "
             "if it doesn't exist.",
             "key [NX | XX] [GT | LT] [change=CH] [increment=INCR] data=<score member> "
             "...",
             ZaddCommand,
             "O(log(N)) for each item added, where N is the number of elements in the sorted "
             "set."});
  table.Add({"zincrby", 4, kCmdWrite | kCmdDenyOom | kCmdFast,
             Keys(KeyAt(1, kKeyRW | kKeyAccess | kKeyUpdate)), kAclSortedSet, kGroup, "1.2.0",
             "Increments the score of a member in a sorted set.", "key increment:integer member",
             ZincrbyCommand, "O(log(N)) where N is the number of elements in the sorted set."});
  table.Add({"zrem", -3, kCmdWrite | kCmdFast, Keys(KeyAt(1, kKeyRW | kKeyDelete)), kAclSortedSet,
             kGroup, "1.2.0",
             "Removes one or more members from a sorted set. Deletes the sorted set if all "
             "members were removed.",
             "key member [member ...]", ZremCommand,
             "O(M*log(N)) with N being the number of elements in the sorted set and M the number "
             "of elements to be removed."});
  table.Add({"zcard", 2, kCmdReadonly | kCmdFast, Keys(KeyAt(1, kKeyRO)), kAclSortedSet, kGroup,
             "1.2.0", "Returns the number of members in a sorted set.", "key", ZcardCommand,
             "O(1)"});
  table.Add({"zscore", 3, kCmdReadonly | kCmdFast, Keys(KeyAt(1, kKeyRO | kKeyAccess)),
             kAclSortedSet, kGroup, "1.2.0", "Returns the score of a member in a sorted set.",
             "key member", ZscoreCommand, "O(1)"});
  table.Add({"zmscore", -3, kCmdReadonly | kCmdFast, Keys(KeyAt(1, kKeyRO | kKeyAccess)),
             kAclSortedSet, kGroup, "6.2.0",
             "Returns the score of one or more members in a sorted set.", "key member [member ...]",
             ZmscoreCommand, "O(N) where N is the number of members being requested."});
  table.Add({"zrank", -3, kCmdReadonly | kCmdFast, Keys(KeyAt(1, kKeyRO | kKeyAccess)),
             kAclSortedSet, kGroup, "2.0.0",
             "Returns the index of a member in a sorted set ordered by ascending scores.",
             "key member [WITHSCORE]", ZrankCommand, "O(log(N))"});
  table.Add({"zrevrank", -3, kCmdReadonly | kCmdFast, Keys(KeyAt(1, kKeyRO | kKeyAccess)),
             kAclSortedSet, kGroup, "2.0.0",
             "Returns the index of a member in a sorted set ordered by descending scores.",
             "key member [WITHSCORE]", ZrevrankCommand, "O(log(N))"});
  table.Add({"zpopmin", -2, kCmdWrite | kCmdFast, Keys(KeyAt(1, kKeyRW | kKeyAccess | kKeyDelete)),
             kAclSortedSet, kGroup, "5.0.0",
             "Returns the lowest-scoring members from a sorted set after removing them. Deletes "
             "the sorted set if the last member was popped.",
             "key [count]", ZpopminCommand,
             "O(log(N)*M) with N being the number of elements in the sorted set, and M being the "
             "number of elements popped."});
  table.Add({"zpopmax", -2, kCmdWrite | kCmdFast, Keys(KeyAt(1, kKeyRW | kKeyAccess | kKeyDelete)),
             kAclSortedSet, kGroup, "5.0.0",
             "Returns the highest-scoring members from a sorted set after removing them. Deletes "
             "the sorted set if the last member was popped.",
             "key [count]", ZpopmaxCommand,
             "O(log(N)*M) with N being the number of elements in the sorted set, and M being the "
             "number of elements popped."});
  table.Add({"bzpopmin", -3, kCmdWrite | kCmdBlocking | kCmdFast,
             Keys(KeysAt(1, -2, 1, kKeyRW | kKeyAccess | kKeyDelete, 0)), kAclSortedSet, kGroup,
             "5.0.0",
             "Removes and returns the member with the lowest score from one or more sorted sets. "
             "Blocks until a member is available otherwise. Deletes the sorted set if the last "
             "element was popped.",
             "key [key ...] timeout", BzpopminCommand,
             "O(log(N)) with N being the number of elements in the sorted set."});
  table.Add({"bzpopmax", -3, kCmdWrite | kCmdBlocking | kCmdFast,
             Keys(KeysAt(1, -2, 1, kKeyRW | kKeyAccess | kKeyDelete, 0)), kAclSortedSet, kGroup,
             "5.0.0",
             "Removes and returns the member with the highest score from one or more sorted "
             "sets. Blocks until a member available otherwise.  Deletes the sorted set if the "
             "last element was popped.",
             "key [key ...] timeout", BzpopmaxCommand,
             "O(log(N)) with N being the number of elements in the sorted set."});
  table.Add({"zmpop", -4, kCmdWrite, Keys(KeyNum(1, 0, 1, 1, kKeyRW | kKeyAccess | kKeyDelete)),
             kAclSortedSet, kGroup, "7.0.0",
             "Returns the highest- or lowest-scoring members from one or more sorted sets after "
             "removing them. Deletes the sorted set if the last member was popped.",
             "numkeys key ... where=<MIN | MAX> [COUNT count]", ZmpopCommand,
             "O(K) + O(M*log(N)) where K is the number of provided keys, N being the number of "
             "elements in the sorted set, and M being the number of elements popped.",
             ZmpopKeys});
  table.Add({"bzmpop", -5, kCmdWrite | kCmdBlocking,
             Keys(KeyNum(2, 0, 1, 1, kKeyRW | kKeyAccess | kKeyDelete)), kAclSortedSet, kGroup,
             "7.0.0",
             "Removes and returns a member by score from one or more sorted sets. Blocks until a "
             "member is available otherwise. Deletes the sorted set if the last element was "
             "popped.",
             "timeout numkeys key ... where=<MIN | MAX> [COUNT count]", BzmpopCommand,
             "O(K) + O(M*log(N)) where K is the number of provided keys, N being the number of "
             "elements in the sorted set, and M being the number of elements popped.",
             BzmpopKeys});
  table.Add({"zrandmember", -2, kCmdReadonly, Keys(KeyAt(1, kKeyRO | kKeyAccess)), kAclSortedSet,
             kGroup, "6.2.0", "Returns one or more random members from a sorted set.",
             "key [options=<count [WITHSCORES]>]", ZrandmemberCommand,
             "O(N) where N is the number of members returned"});
  table.Add({"zscan", -3, kCmdReadonly, Keys(KeyAt(1, kKeyRO | kKeyAccess)), kAclSortedSet, kGroup,
             "2.8.0", "Iterates over members and scores of a sorted set.",
             "key cursor [MATCH pattern] [COUNT count] [NOSCORES]", ZscanCommand,
             "O(1) for every call. O(N) for a complete iteration, including enough command calls "
             "for the cursor to return back to 0. N is the number of elements inside the "
             "collection."});
  RegisterZsetRangeCommands(table);
  RegisterZsetSetOpCommands(table);
  RegisterZsetMoveCommands(table);
  (void)kWriteSlow;
}

}  // namespace vireo
