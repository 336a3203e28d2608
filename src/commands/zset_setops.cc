// Sorted-set algebra: ZUNION, ZINTER, ZDIFF, their STORE forms and ZINTERCARD. Plain sets are
// accepted as inputs, each member scoring 1.
//
// As in Redis, the inputs are visited smallest first (a stable sort by cardinality), which also
// fixes the order in which SUM adds the weighted scores up; a weighted score or a sum that is
// NaN (inf * 0, inf + -inf) counts as 0.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "commands/families.h"
#include "commands/zset_common.h"
#include "core/arg_parser.h"
#include "core/command_table.h"
#include "server/client.h"
#include "server/command_context.h"
#include "types/set_object.h"
#include "util/strings.h"

namespace vireo {
namespace {

enum class SetOp { kUnion, kInter, kDiff };
// kCount (Redis 8.8) ignores the input scores: each input counts its weight (1 by default), so
// unweighted the score is the number of inputs holding the member.
enum class Aggregate { kSum, kMin, kMax, kCount };

// One input: a sorted set, a set, or a missing key (empty).
struct Source {
  const ZSet* zset = nullptr;
  const SetObject* set = nullptr;
  double weight = 1;

  size_t size() const { return zset ? zset->size() : set ? set->size() : 0; }
  bool Score(std::string_view member, double* score) const {
    if (zset != nullptr) return zset->Score(member, score);
    if (set != nullptr && set->Contains(member)) {
      *score = 1;
      return true;
    }
    return false;
  }
  template <typename F>
  void ForEach(F&& fn) const {
    if (zset != nullptr) {
      zset->ForEach(fn);
    } else if (set != nullptr) {
      set->ForEach([&](std::string_view m) { fn(m, 1.0); });
    }
  }
};

double Weighted(double score, double weight) {
  double v = score * weight;
  return std::isnan(v) ? 0 : v;
}

void Combine(double* target, double value, Aggregate agg) {
  switch (agg) {
    case Aggregate::kSum:
    case Aggregate::kCount:
      *target += value;
      if (std::isnan(*target)) *target = 0;
      break;
    case Aggregate::kMin:
      *target = std::min(*target, value);
      break;
    case Aggregate::kMax:
      *target = std::max(*target, value);
      break;
  }
}

struct SetOpArgs {
  SetOp op = SetOp::kUnion;
  std::string_view dst;
  bool store = false;
  std::vector<Source> sources;
  Aggregate agg = Aggregate::kSum;
  bool withscores = false;
};

// Reads "numkeys key [key ...] [WEIGHTS ...] [AGGREGATE ...] [WITHSCORES]" from argv[at]. The
// keys are looked up (and type-checked) before the options are parsed, as Redis does.
// The inputs of a set operation: each key's sorted set or set (a missing key is an empty
// input). Fails `args` with WRONGTYPE on another type.
std::vector<Source> LookupSources(CommandContext& ctx, ArgParser& args,
                                  std::span<const std::string_view> keys) {
  std::vector<Source> out;
  for (std::string_view key : keys) {
    Source src;
    DbEntry* entry = ctx.db.Find(key);
    if (entry != nullptr) {
      if (entry->value.type() == ValueType::kZSet) {
        src.zset = entry->value.As<ZSet>();
      } else if (entry->value.type() == ValueType::kSet) {
        src.set = entry->value.As<SetObject>();
      } else {
        args.Fail(errors::kWrongType);
        break;
      }
    }
    out.push_back(src);
  }
  return out;
}

bool ParseSetOp(CommandContext& ctx, size_t at, SetOpArgs* a) {
  ArgParser args(ctx, at);
  auto keys = args.NumKeys(
      fmt::format("ERR at least 1 input key is needed for '{}' command", ctx.spec->name));
  if (!args.Check()) return false;
  a->sources = LookupSources(ctx, args, keys);
  size_t n = a->sources.size();
  while (args.HasNext()) {
    if (a->op != SetOp::kDiff && args.remaining() >= n + 1 && args.Flag("WEIGHTS")) {
      for (size_t i = 0; i < n; ++i) {
        a->sources[i].weight = args.Double("ERR weight value is not a float");
      }
    } else if (a->op != SetOp::kDiff && args.remaining() >= 2 && args.Flag("AGGREGATE")) {
      static constexpr Aggregate kAggregates[] = {Aggregate::kSum, Aggregate::kMin, Aggregate::kMax,
                                                  Aggregate::kCount};
      int agg = args.Keyword({"SUM", "MIN", "MAX", "COUNT"});
      if (agg >= 0) a->agg = kAggregates[agg];
    } else if (!a->store && args.Flag("WITHSCORES")) {
      a->withscores = true;
    } else {
      args.SyntaxError();
    }
  }
  return args.Check();
}

std::vector<std::pair<std::string, double>> Compute(SetOpArgs& a) {
  std::vector<std::pair<std::string, double>> out;
  std::vector<Source>& src = a.sources;
  if (a.op == SetOp::kDiff) {
    // The first input stays first; only the others are reordered for lookups.
    if (src[0].size() == 0) return out;
    src[0].ForEach([&](std::string_view m, double s) {
      double unused;
      for (size_t j = 1; j < src.size(); ++j) {
        if (src[j].Score(m, &unused)) return;
      }
      out.emplace_back(std::string(m), s);
    });
  } else {
    std::stable_sort(src.begin(), src.end(),
                     [](const Source& x, const Source& y) { return x.size() < y.size(); });
    const bool count = a.agg == Aggregate::kCount;
    if (a.op == SetOp::kInter) {
      if (src[0].size() == 0) return out;
      src[0].ForEach([&](std::string_view m, double s) {
        double score = Weighted(count ? 1 : s, src[0].weight);
        for (size_t j = 1; j < src.size(); ++j) {
          double v;
          if (!src[j].Score(m, &v)) return;
          Combine(&score, Weighted(count ? 1 : v, src[j].weight), a.agg);
        }
        out.emplace_back(std::string(m), score);
      });
    } else {
      std::unordered_map<std::string, double> acc;
      for (const Source& s : src) {
        s.ForEach([&](std::string_view m, double score) {
          double v = Weighted(count ? 1 : score, s.weight);
          auto [it, inserted] = acc.try_emplace(std::string(m), v);
          if (!inserted) Combine(&it->second, v, a.agg);
        });
      }
      out.reserve(acc.size());
      for (auto& [m, s] : acc) out.emplace_back(m, s);
    }
  }
  std::sort(out.begin(), out.end(), [](const auto& x, const auto& y) {
    return CompareScoreMember(x.second, x.first, y.second, y.first) < 0;
  });
  return out;
}

void SetOpGeneric(CommandContext& ctx, SetOp op, bool store) {
  SetOpArgs a;
  a.op = op;
  a.store = store;
  if (store) a.dst = ctx.arg(1);
  if (!ParseSetOp(ctx, store ? 2 : 1, &a)) return;
  auto items = Compute(a);
  if (!store) {
    ReplyMembers(ctx, items, a.withscores);
    return;
  }
  const char* event = op == SetOp::kUnion   ? "zunionstore"
                      : op == SetOp::kInter ? "zinterstore"
                                            : "zdiffstore";
  StoreZsetResult(ctx, a.dst, event, items);
}

void ZunionCommand(CommandContext& ctx) { SetOpGeneric(ctx, SetOp::kUnion, false); }
void ZinterCommand(CommandContext& ctx) { SetOpGeneric(ctx, SetOp::kInter, false); }
void ZdiffCommand(CommandContext& ctx) { SetOpGeneric(ctx, SetOp::kDiff, false); }
void ZunionstoreCommand(CommandContext& ctx) { SetOpGeneric(ctx, SetOp::kUnion, true); }
void ZinterstoreCommand(CommandContext& ctx) { SetOpGeneric(ctx, SetOp::kInter, true); }
void ZdiffstoreCommand(CommandContext& ctx) { SetOpGeneric(ctx, SetOp::kDiff, true); }

void ZintercardCommand(CommandContext& ctx) {
  ArgParser args(ctx, 1);
  auto keys = args.NumKeys("ERR at least 1 input key is needed for 'zintercard' command");
  if (!args.Check()) return;
  // The inputs are type-checked before LIMIT is parsed, as Redis does.
  std::vector<Source> src = LookupSources(ctx, args, keys);
  int64_t limit = 0;
  while (args.HasNext()) {
    if (args.OptionName("LIMIT")) {
      // Redis words a non-integer limit like a negative one.
      limit = args.NonNegative("ERR LIMIT can't be negative");
    } else {
      args.SyntaxError();
    }
  }
  if (!args.Check()) return;
  std::stable_sort(src.begin(), src.end(),
                   [](const Source& x, const Source& y) { return x.size() < y.size(); });
  int64_t count = 0;
  if (src[0].size() > 0) {
    // A full walk even past the limit would be wasted: stop there.
    struct Stop {};
    try {
      src[0].ForEach([&](std::string_view m, double) {
        double unused;
        for (size_t k = 1; k < src.size(); ++k) {
          if (!src[k].Score(m, &unused)) return;
        }
        if (++count == limit) throw Stop{};
      });
    } catch (const Stop&) {
    }
  }
  ctx.reply.Integer(count);
}

std::vector<size_t> KeysFrom1(std::span<const std::string_view> argv) {
  return ZsetNumkeysKeys(argv, 1);
}
// Destination first, then the inputs.
std::vector<size_t> StoreKeys(std::span<const std::string_view> argv) {
  std::vector<size_t> out;
  if (argv.size() > 1) out.push_back(1);
  for (size_t k : ZsetNumkeysKeys(argv, 2)) out.push_back(k);
  return out;
}

}  // namespace

void RegisterZsetSetOpCommands(CommandTable& table) {
  constexpr const char* kGroup = "sorted-set";
  const char* kUnionCx =
      "O(N)+O(M*log(M)) with N being the sum of the sizes of the input sorted sets, and M being "
      "the number of elements in the resulting sorted set.";
  const char* kInterCx =
      "O(N*K)+O(M*log(M)) worst case with N being the smallest input sorted set, K being the "
      "number of input sorted sets and M being the number of elements in the resulting sorted "
      "set.";
  const char* kDiffCx =
      "O(L + (N-K)log(N)) worst case where L is the total number of elements in all the sets, N "
      "is the size of the first set, and K is the size of the result set.";

  table.Add({"zunion", -3, kCmdReadonly, Keys(KeyNum(1, 0, 1, 1, kKeyRO | kKeyAccess)),
             kAclSortedSet, kGroup, "6.2.0", "Returns the union of multiple sorted sets.",
             "numkeys key ... [WEIGHTS weight:integer ...] [AGGREGATE aggregate=<SUM | "
             "MIN | MAX | COUNT>] [WITHSCORES]",
             ZunionCommand, kUnionCx, KeysFrom1});
  table.Add({"zinter", -3, kCmdReadonly, Keys(KeyNum(1, 0, 1, 1, kKeyRO | kKeyAccess)),
             kAclSortedSet, kGroup, "6.2.0", "Returns the intersect of multiple sorted sets.",
             "numkeys key ... [WEIGHTS weight:integer ...] [AGGREGATE aggregate=<SUM | "
             "MIN | MAX | COUNT>] [WITHSCORES]",
             ZinterCommand, kInterCx, KeysFrom1});
  table.Add({"zdiff", -3, kCmdReadonly, Keys(KeyNum(1, 0, 1, 1, kKeyRO | kKeyAccess)),
             kAclSortedSet, kGroup, "6.2.0", "Returns the difference between multiple sorted sets.",
             "numkeys key [key ...] [WITHSCORES]", ZdiffCommand, kDiffCx, KeysFrom1});
  table.Add({"zunionstore", -4, kCmdWrite | kCmdDenyOom,
             Keys(KeyAt(1, kKeyOW | kKeyUpdate), KeyNum(2, 0, 1, 1, kKeyRO | kKeyAccess)),
             kAclSortedSet, kGroup, "2.0.0", "Stores the union of multiple sorted sets in a key.",
             "destination numkeys key ... [WEIGHTS weight:integer ...] [AGGREGATE "
             "aggregate=<SUM | MIN | MAX | COUNT>]",
             ZunionstoreCommand, kUnionCx, StoreKeys});
  table.Add({"zinterstore", -4, kCmdWrite | kCmdDenyOom,
             Keys(KeyAt(1, kKeyOW | kKeyUpdate), KeyNum(2, 0, 1, 1, kKeyRO | kKeyAccess)),
             kAclSortedSet, kGroup, "2.0.0",
             "Stores the intersect of multiple sorted sets in a key.",
             "destination numkeys key ... [WEIGHTS weight:integer ...] [AGGREGATE "
             "aggregate=<SUM | MIN | MAX | COUNT>]",
             ZinterstoreCommand, kInterCx, StoreKeys});
  table.Add({"zdiffstore", -4, kCmdWrite | kCmdDenyOom,
             Keys(KeyAt(1, kKeyOW | kKeyUpdate), KeyNum(2, 0, 1, 1, kKeyRO | kKeyAccess)),
             kAclSortedSet, kGroup, "6.2.0",
             "Stores the difference of multiple sorted sets in a key.",
             "destination numkeys key [key ...]", ZdiffstoreCommand, kDiffCx, StoreKeys});
  table.Add({"zintercard", -3, kCmdReadonly, Keys(KeyNum(1, 0, 1, 1, kKeyRO | kKeyAccess)),
             kAclSortedSet, kGroup, "7.0.0",
             "Returns the number of members of the intersect of multiple sorted sets.",
             "numkeys key ... [LIMIT limit:integer]", ZintercardCommand,
             "O(N*K) worst case with N being the smallest input sorted set, K being the number of "
             "input sorted sets.",
             KeysFrom1});
}

}  // namespace vireo
