// Sets: SADD ... SSCAN over SetObject (types/set_object.h).
//
// Results of SINTER/SUNION/SDIFF are built as Redis 7.2 builds them (a new set receiving the
// members through the ordinary add rules), so both their member order for small sets and the
// encoding of a *STORE destination match Redis.
#include <fmt/format.h>

#include <algorithm>
#include <unordered_set>

#include "commands/collection_common.h"
#include "commands/families.h"
#include "commands/helpers.h"
#include "commands/numkeys.h"
#include "core/arg_parser.h"
#include "core/command_table.h"
#include "core/config.h"
#include "server/client.h"
#include "server/command_context.h"
#include "types/hyperloglog.h"
#include "types/set_object.h"
#include "util/glob.h"
#include "util/strings.h"

namespace vireo {
namespace {

using Encoding = SetObject::Encoding;

SetLimits Limits(CommandContext& ctx) {
  const ServerConfig& c = ctx.cfg();
  return {static_cast<size_t>(c.set_max_intset_entries),
          static_cast<size_t>(c.set_max_listpack_entries),
          static_cast<size_t>(c.set_max_listpack_value)};
}

Value SetValue(std::unique_ptr<SetObject> set) {
  return Value::Object(ValueType::kSet, std::move(set));
}

// The set at `key` for a reading command (counts a keyspace hit or miss; see TypedObject).
TypedObject<SetObject> ReadSet(CommandContext& ctx, std::string_view key) {
  return ReadTyped(ctx, key, ValueType::kSet).As<SetObject>();
}

TypedObject<SetObject> WriteSet(CommandContext& ctx, std::string_view key) {
  return LookupTyped(ctx, key, ValueType::kSet).As<SetObject>();
}

// Looks every key up (missing keys as nullptr); false after replying WRONGTYPE.
bool ReadSets(CommandContext& ctx, std::span<const std::string_view> keys,
              std::vector<SetObject*>* sets) {
  for (std::string_view key : keys) {
    auto [set, wrong_type] = ReadSet(ctx, key);
    if (wrong_type) return false;
    sets->push_back(set);
  }
  return true;
}

void ReplyMembers(CommandContext& ctx, const SetObject& set) {
  ctx.reply.Set(set.size());
  set.ForEach([&](std::string_view m) { ctx.reply.Bulk(m); });
}

// Stores `result` at dst for the *STORE commands, or deletes dst when the result is empty;
// replies the cardinality.
void StoreResult(CommandContext& ctx, std::string_view dst, std::unique_ptr<SetObject> result,
                 std::string_view event) {
  if (result->size() > 0) {
    auto size = static_cast<int64_t>(result->size());
    ctx.db.Set(dst, SetValue(std::move(result)));
    ctx.reply.Integer(size);
    Notify(ctx, kNotifySet, event, dst);
    KeyWritten(ctx, dst);
    return;
  }
  ctx.reply.Integer(0);
  if (ctx.db.Delete(dst)) {
    KeyWritten(ctx, dst);
    Notify(ctx, kNotifyGeneric, "del", dst);
  }
}

// ---------------------------------------------------------------------------------------------
// Single-key writes

void SAddCommand(CommandContext& ctx) {
  std::string_view key = ctx.arg(1);
  auto [set, wrong_type] = WriteSet(ctx, key);
  if (wrong_type) return;
  SetLimits limits = Limits(ctx);
  const size_t hint = ctx.argc() - 2;
  if (set == nullptr) {
    DbEntry* entry = ctx.db.Add(key, SetValue(SetObject::Create(ctx.arg(2), hint, limits)));
    set = entry->value.As<SetObject>();
  } else {
    set->MaybeConvert(hint, limits);
  }
  int64_t added = 0;
  for (size_t i = 2; i < ctx.argc(); ++i) {
    if (set->Add(ctx.arg(i), limits)) ++added;
  }
  if (added > 0) {
    KeyWritten(ctx, key, static_cast<uint64_t>(added));
    Notify(ctx, kNotifySet, "sadd", key);
  }
  ctx.reply.Integer(added);
}

void SRemCommand(CommandContext& ctx) {
  std::string_view key = ctx.arg(1);
  auto [set, wrong_type] = WriteSet(ctx, key);
  if (wrong_type) return;
  if (set == nullptr) {
    ctx.reply.Integer(0);
    return;
  }
  RemoveMembersAndReply(
      ctx, key, kNotifySet, "srem", [&](std::string_view member) { return set->Remove(member); },
      [&] { return set->empty(); });
}

void SMoveCommand(CommandContext& ctx) {
  std::string_view src_key = ctx.arg(1);
  std::string_view dst_key = ctx.arg(2);
  std::string_view member = ctx.arg(3);
  DbEntry* src_entry = ctx.db.Find(src_key);
  DbEntry* dst_entry = ctx.db.Find(dst_key);
  if (src_entry == nullptr) {
    ctx.reply.Integer(0);
    return;
  }
  if (src_entry->value.type() != ValueType::kSet ||
      (dst_entry != nullptr && dst_entry->value.type() != ValueType::kSet)) {
    ctx.reply.Error(errors::kWrongType);
    return;
  }
  auto* src = src_entry->value.As<SetObject>();
  if (src_entry == dst_entry) {
    ctx.reply.Integer(src->Contains(member) ? 1 : 0);
    return;
  }
  if (!src->Remove(member)) {
    ctx.reply.Integer(0);
    return;
  }
  Notify(ctx, kNotifySet, "srem", src_key);
  if (src->empty()) {
    ctx.db.Delete(src_key);
    Notify(ctx, kNotifyGeneric, "del", src_key);
  }
  SetLimits limits = Limits(ctx);
  if (dst_entry == nullptr) {
    dst_entry = ctx.db.Add(dst_key, SetValue(SetObject::Create(member, 1, limits)));
  }
  KeyWritten(ctx, src_key);
  if (dst_entry->value.As<SetObject>()->Add(member, limits)) {
    KeyWritten(ctx, dst_key);
    Notify(ctx, kNotifySet, "sadd", dst_key);
  }
  ctx.reply.Integer(1);
}

// ---------------------------------------------------------------------------------------------
// Single-key reads

void SCardCommand(CommandContext& ctx) {
  auto [set, wrong_type] = ReadSet(ctx, ctx.arg(1));
  if (wrong_type) return;
  ctx.reply.Integer(set == nullptr ? 0 : static_cast<int64_t>(set->size()));
}

void SIsMemberCommand(CommandContext& ctx) {
  auto [set, wrong_type] = ReadSet(ctx, ctx.arg(1));
  if (wrong_type) return;
  ctx.reply.Integer(set != nullptr && set->Contains(ctx.arg(2)) ? 1 : 0);
}

void SMIsMemberCommand(CommandContext& ctx) {
  auto [set, wrong_type] = ReadSet(ctx, ctx.arg(1));
  if (wrong_type) return;
  ctx.reply.Array(ctx.argc() - 2);
  for (size_t i = 2; i < ctx.argc(); ++i) {
    ctx.reply.Integer(set != nullptr && set->Contains(ctx.arg(i)) ? 1 : 0);
  }
}

// ---------------------------------------------------------------------------------------------
// SPOP

// Collects popped members and logs them as SREM commands of at most 1024 members, as Redis
// propagates SPOP with a count.
class SRemPropagation {
 public:
  SRemPropagation(CommandContext& ctx, std::string_view key) : ctx_(ctx), key_(key) {}
  ~SRemPropagation() { Flush(); }
  void Add(std::string_view member) {
    if (batch_.empty()) {
      batch_.push_back("SREM");
      batch_.emplace_back(key_);
    }
    batch_.emplace_back(member);
    if (batch_.size() == 2 + kBatch) Flush();
  }

 private:
  static constexpr size_t kBatch = 1024;
  void Flush() {
    if (batch_.empty()) return;
    ctx_.PropagateInstead(std::move(batch_));
    batch_.clear();
  }
  CommandContext& ctx_;
  std::string_view key_;
  std::vector<std::string> batch_;
};

// SPOP key count
void SPopWithCount(CommandContext& ctx) {
  // Redis words a non-number and a negative count the same way here.
  ArgParser args(ctx, 2);
  const int64_t count = args.NonNegative("ERR value is out of range, must be positive");
  if (!args.Check()) return;
  std::string_view key = ctx.arg(1);
  auto [entry, wrong_type] = LookupTyped(ctx, key, ValueType::kSet);
  if (wrong_type) return;
  if (entry == nullptr || count == 0) {
    ctx.reply.Set(0);
    return;
  }
  auto* set = entry->value.As<SetObject>();
  const size_t size = set->size();
  Notify(ctx, kNotifySet, "spop", key);
  const auto n = static_cast<uint64_t>(count);

  // Everything: the reply is the whole set, as SUNION of it would list it.
  if (n >= size) {
    SetObject all(Encoding::kIntSet);
    SetLimits limits = Limits(ctx);
    set->ForEach([&](std::string_view m) { all.Add(m, limits); });
    ReplyMembers(ctx, all);
    ctx.db.Delete(key);
    Notify(ctx, kNotifyGeneric, "del", key);
    // Logged as the deletion this server made (lazyfree-lazy-server-del), as Redis does.
    ctx.PropagateInstead({ctx.cfg().lazyfree_lazy_server_del ? "UNLINK" : "DEL", std::string(key)});
    KeyWritten(ctx, key, size);
    return;
  }

  ctx.reply.Set(n);
  SRemPropagation propagation(ctx, key);
  const size_t remaining = size - n;
  std::mt19937_64& rng = CollectionRng(ctx);
  if (remaining * 5 > n) {
    // Popping a minority.
    if (set->encoding() == Encoding::kListpack) {
      std::vector<size_t> picked = SampleIndexes(CollectionRng(ctx), size, n);
      for (size_t i : picked) {
        std::string m = set->At(i);
        ctx.reply.Bulk(m);
        propagation.Add(m);
      }
      set->EraseIndexes(picked);
    } else {
      for (uint64_t i = 0; i < n; ++i) {
        std::string m = set->PopRandom(rng());
        ctx.reply.Bulk(m);
        propagation.Add(m);
      }
    }
  } else if (set->encoding() == Encoding::kListpack) {
    // Popping most of a listpack: choose the survivors instead.
    std::vector<size_t> kept = SampleIndexes(CollectionRng(ctx), size, remaining);
    size_t next = 0;
    size_t index = 0;
    set->ForEach([&](std::string_view m) {
      if (next < kept.size() && kept[next] == index) {
        ++next;
      } else {
        ctx.reply.Bulk(m);
        propagation.Add(m);
      }
      ++index;
    });
    std::vector<size_t> popped;
    popped.reserve(n);
    next = 0;
    for (size_t i = 0; i < size; ++i) {
      if (next < kept.size() && kept[next] == i) {
        ++next;
      } else {
        popped.push_back(i);
      }
    }
    set->EraseIndexes(popped);
  } else {
    // Popping most of a set: move the survivors to a new set (which may take a smaller
    // encoding, as in Redis), then reply with what is left in the old one.
    SetLimits limits = Limits(ctx);
    auto survivors = std::make_unique<SetObject>(
        set->encoding() == Encoding::kIntSet ? Encoding::kIntSet : Encoding::kListpack);
    for (size_t i = 0; i < remaining; ++i) survivors->Add(set->PopRandom(rng()), limits);
    set->ForEach([&](std::string_view m) {
      ctx.reply.Bulk(m);
      propagation.Add(m);
    });
    // Replacing the value in place keeps the key's TTL.
    entry->value = SetValue(std::move(survivors));
  }
  KeyWritten(ctx, key, n);
}

void SPopCommand(CommandContext& ctx) {
  ArgParser args(ctx, 2);
  args.ExpectRemaining(0, 1);  // [count]
  if (!args.Check()) return;
  if (args.HasNext()) {
    SPopWithCount(ctx);
    return;
  }
  std::string_view key = ctx.arg(1);
  auto [set, wrong_type] = WriteSet(ctx, key);
  if (wrong_type) return;
  if (set == nullptr) {
    ctx.reply.Null();
    return;
  }
  std::string member = set->PopRandom(CollectionRng(ctx)());
  Notify(ctx, kNotifySet, "spop", key);
  ctx.PropagateInstead({"SREM", std::string(key), member});
  ctx.reply.Bulk(member);
  if (set->empty()) {
    ctx.db.Delete(key);
    Notify(ctx, kNotifyGeneric, "del", key);
  }
  KeyWritten(ctx, key);
}

// ---------------------------------------------------------------------------------------------
// SRANDMEMBER

void SRandMemberWithCount(CommandContext& ctx) {
  ArgParser args(ctx, 2);
  const int64_t l = args.IntInRange(-INT64_MAX, INT64_MAX);
  if (!args.Check()) return;
  auto [set, wrong_type] = ReadSet(ctx, ctx.arg(1));
  if (wrong_type) return;
  if (set == nullptr || l == 0) {
    ctx.reply.EmptyArray();
    return;
  }
  const bool unique = l > 0;
  const uint64_t count = unique ? static_cast<uint64_t>(l) : static_cast<uint64_t>(-l);
  const size_t size = set->size();
  std::mt19937_64& rng = CollectionRng(ctx);
  if (!unique || count == 1) {
    ReplyRepeatedDraws(ctx, count, count, [&] { ctx.reply.Bulk(set->Random(rng())); });
    return;
  }
  if (count >= size) {
    ctx.reply.Array(size);
    set->ForEach([&](std::string_view m) { ctx.reply.Bulk(m); });
    return;
  }
  ctx.reply.Array(count);
  if (set->encoding() == Encoding::kListpack) {
    for (size_t i : SampleIndexes(CollectionRng(ctx), size, count)) ctx.reply.Bulk(set->At(i));
    return;
  }
  if (count * 3 > size) {
    std::vector<std::string> all;
    all.reserve(size);
    set->ForEach([&](std::string_view m) { all.emplace_back(m); });
    for (size_t i = 0; i < count; ++i) std::swap(all[i], all[i + rng() % (size - i)]);
    for (size_t i = 0; i < count; ++i) ctx.reply.Bulk(all[i]);
    return;
  }
  std::unordered_set<std::string> seen;
  while (seen.size() < count) {
    std::string m = set->Random(rng());
    if (seen.insert(m).second) ctx.reply.Bulk(m);
  }
}

void SRandMemberCommand(CommandContext& ctx) {
  ArgParser args(ctx, 2);
  args.ExpectRemaining(0, 1);  // [count]
  if (!args.Check()) return;
  if (args.HasNext()) {
    SRandMemberWithCount(ctx);
    return;
  }
  auto [set, wrong_type] = ReadSet(ctx, ctx.arg(1));
  if (wrong_type) return;
  if (set == nullptr) {
    ctx.reply.Null();
    return;
  }
  ctx.reply.Bulk(set->Random(CollectionRng(ctx)()));
}

// ---------------------------------------------------------------------------------------------
// SINTER, SINTERCARD, SINTERSTORE, SMEMBERS

struct InterArgs {
  std::span<const std::string_view> keys;
  std::optional<std::string_view> dst = std::nullopt;  // SINTERSTORE
  bool cardinality_only = false;                       // SINTERCARD
  uint64_t limit = 0;                                  // SINTERCARD LIMIT; 0 = none
};

void SInterGeneric(CommandContext& ctx, const InterArgs& args) {
  std::vector<SetObject*> sets;
  if (!ReadSets(ctx, args.keys, &sets)) return;
  // A missing key is an empty set, and so is the intersection.
  if (std::find(sets.begin(), sets.end(), nullptr) != sets.end()) {
    if (args.dst) {
      if (ctx.db.Delete(*args.dst)) {
        KeyWritten(ctx, *args.dst);
        Notify(ctx, kNotifyGeneric, "del", *args.dst);
      }
      ctx.reply.Integer(0);
    } else if (args.cardinality_only) {
      ctx.reply.Integer(0);
    } else {
      ctx.reply.Set(0);
    }
    return;
  }
  // Walk the smallest set, probing the others.
  std::stable_sort(sets.begin(), sets.end(),
                   [](const SetObject* a, const SetObject* b) { return a->size() < b->size(); });
  SetObject* first = sets[0];
  SetLimits limits = Limits(ctx);
  std::unique_ptr<SetObject> result;
  if (args.dst) {
    result = std::make_unique<SetObject>(
        first->encoding() == Encoding::kIntSet ? Encoding::kIntSet : Encoding::kListpack);
  }
  std::vector<std::string> members;
  uint64_t cardinality = 0;
  bool done = false;
  first->ForEach([&](std::string_view m) {
    if (done) return;
    for (size_t j = 1; j < sets.size(); ++j) {
      if (sets[j] != first && !sets[j]->Contains(m)) return;
    }
    if (args.cardinality_only) {
      ++cardinality;
      if (args.limit != 0 && cardinality >= args.limit) done = true;
    } else if (result) {
      result->Add(m, limits);
    } else {
      members.emplace_back(m);
    }
  });
  if (args.cardinality_only) {
    ctx.reply.Integer(static_cast<int64_t>(cardinality));
  } else if (result) {
    result->MaybeConvertToIntSet(limits);
    StoreResult(ctx, *args.dst, std::move(result), "sinterstore");
  } else {
    ctx.reply.Set(members.size());
    for (const std::string& m : members) ctx.reply.Bulk(m);
  }
}

void SInterCommand(CommandContext& ctx) { SInterGeneric(ctx, {.keys = ctx.argv.subspan(1)}); }

void SMembersCommand(CommandContext& ctx) {
  auto [set, wrong_type] = ReadSet(ctx, ctx.arg(1));
  if (wrong_type) return;
  if (set == nullptr) {
    ctx.reply.Set(0);
    return;
  }
  ReplyMembers(ctx, *set);
}

void SInterStoreCommand(CommandContext& ctx) {
  SInterGeneric(ctx, {.keys = ctx.argv.subspan(2), .dst = ctx.arg(1)});
}

void SInterCardCommand(CommandContext& ctx) {
  ArgParser parser(ctx, 1);
  const int64_t numkeys = parser.Positive("ERR numkeys should be greater than 0");
  if (parser.ok() && static_cast<uint64_t>(numkeys) > parser.remaining()) {
    parser.Fail("ERR Number of keys can't be greater than number of args");
  }
  InterArgs args{.keys = parser.Take(static_cast<size_t>(numkeys)), .cardinality_only = true};
  while (parser.HasNext()) {
    int64_t limit = 0;
    if (parser.OptionName("LIMIT")) {
      limit = parser.NonNegative("ERR LIMIT can't be negative");
      args.limit = static_cast<uint64_t>(limit);
    } else {
      parser.SyntaxError();
    }
  }
  if (!parser.Check()) return;
  SInterGeneric(ctx, args);
}

// COMMAND GETKEYS for SINTERCARD: the numkeys keys after argv[1] (none when out of range).
std::vector<size_t> SInterCardKeys(std::span<const std::string_view> argv) {
  return NumkeysKeys(argv, 1);
}

// ---------------------------------------------------------------------------------------------
// SUNIONCARD, SDIFFCARD (8.10): the cardinalities without building the result

// "numkeys key ... [APPROX] [LIMIT limit]" (APPROX: SUNIONCARD only), with SINTERCARD's errors.
struct CardArgs {
  std::span<const std::string_view> keys;
  bool approx = false;
  uint64_t limit = 0;  // 0 = none
};

bool ParseCardArgs(CommandContext& ctx, bool allow_approx, CardArgs* out) {
  ArgParser parser(ctx, 1);
  const int64_t numkeys = parser.Positive("ERR numkeys should be greater than 0");
  if (parser.ok() && static_cast<uint64_t>(numkeys) > parser.remaining()) {
    parser.Fail("ERR Number of keys can't be greater than number of args");
  }
  out->keys = parser.Take(static_cast<size_t>(numkeys));
  while (parser.HasNext()) {
    if (parser.OptionName("LIMIT")) {
      out->limit = static_cast<uint64_t>(parser.NonNegative("ERR LIMIT can't be negative"));
    } else if (allow_approx && parser.Flag("APPROX")) {
      out->approx = true;
    } else {
      parser.SyntaxError();
    }
  }
  return parser.Check();
}

uint64_t CapAt(uint64_t count, uint64_t limit) {
  return limit != 0 && count > limit ? limit : count;
}

void SUnionCardCommand(CommandContext& ctx) {
  CardArgs args;
  if (!ParseCardArgs(ctx, true, &args)) return;
  std::vector<SetObject*> sets;
  if (!ReadSets(ctx, args.keys, &sets)) return;
  std::erase(sets, nullptr);
  if (args.approx) {
    // One HyperLogLog's registers over every member: an estimate in fixed memory.
    std::vector<uint8_t> registers(hll::kRegisters, 0);
    for (SetObject* set : sets) {
      set->ForEach([&](std::string_view m) {
        uint32_t index;
        const uint8_t count = hll::PatternLength(m, &index);
        registers[index] = std::max(registers[index], count);
      });
    }
    ctx.reply.Integer(
        static_cast<int64_t>(CapAt(hll::EstimateRegisters(registers.data()), args.limit)));
    return;
  }
  // A hash-table set counts whole and the others add only the members it lacks (an O(1) probe
  // each); a small (packed) largest set would be probed linearly, so then every member goes
  // through one hash set instead.
  auto largest = std::max_element(sets.begin(), sets.end(),
                                  [](SetObject* a, SetObject* b) { return a->size() < b->size(); });
  const bool probe =
      largest != sets.end() && (*largest)->encoding() == SetObject::Encoding::kHashtable;
  uint64_t count = probe ? (*largest)->size() : 0;
  std::unordered_set<std::string> seen;
  for (SetObject* set : sets) {
    if (args.limit != 0 && count >= args.limit) break;
    if (probe && set == *largest) continue;
    set->ForEach([&](std::string_view m) {
      if (args.limit != 0 && count >= args.limit) return;
      if (probe && (*largest)->Contains(m)) return;
      if (seen.emplace(m).second) ++count;
    });
  }
  ctx.reply.Integer(static_cast<int64_t>(CapAt(count, args.limit)));
}

void SDiffCardCommand(CommandContext& ctx) {
  CardArgs args;
  if (!ParseCardArgs(ctx, false, &args)) return;
  std::vector<SetObject*> sets;
  if (!ReadSets(ctx, args.keys, &sets)) return;
  uint64_t count = 0;
  if (sets[0] != nullptr) {
    sets[0]->ForEach([&](std::string_view m) {
      if (args.limit != 0 && count >= args.limit) return;
      for (size_t j = 1; j < sets.size(); ++j) {
        if (sets[j] != nullptr && sets[j]->Contains(m)) return;
      }
      ++count;
    });
  }
  ctx.reply.Integer(static_cast<int64_t>(count));
}

// ---------------------------------------------------------------------------------------------
// SUNION, SDIFF and their STORE forms

enum class SetOp { kUnion, kDiff };

void SUnionDiffGeneric(CommandContext& ctx, std::span<const std::string_view> keys,
                       std::optional<std::string_view> dst, SetOp op) {
  std::vector<SetObject*> sets;
  if (!ReadSets(ctx, keys, &sets)) return;
  // The first key named again later makes the difference empty.
  bool same_set = false;
  for (size_t j = 1; j < sets.size(); ++j) same_set |= sets[j] == sets[0];

  // Redis picks between two difference algorithms by estimated work; which one runs shows
  // in the result's encoding (algorithm 2 holds all of the first set for a while), so the
  // choice is the same here.
  int diff_algo = 1;
  if (op == SetOp::kDiff && sets[0] != nullptr && !same_set) {
    uint64_t one = 0, two = 0;
    for (SetObject* s : sets) {
      if (s == nullptr) continue;
      one += sets[0]->size();
      two += s->size();
    }
    one /= 2;
    diff_algo = one <= two ? 1 : 2;
    if (diff_algo == 1 && sets.size() > 1) {
      std::stable_sort(sets.begin() + 1, sets.end(), [](const SetObject* a, const SetObject* b) {
        return (a ? a->size() : 0) > (b ? b->size() : 0);
      });
    }
  }

  SetLimits limits = Limits(ctx);
  auto result = std::make_unique<SetObject>(Encoding::kIntSet);
  if (op == SetOp::kUnion) {
    for (SetObject* s : sets) {
      if (s != nullptr) s->ForEach([&](std::string_view m) { result->Add(m, limits); });
    }
  } else if (same_set || sets[0] == nullptr) {
    // Empty.
  } else if (diff_algo == 1) {
    sets[0]->ForEach([&](std::string_view m) {
      for (size_t j = 1; j < sets.size(); ++j) {
        if (sets[j] == nullptr) continue;
        if (sets[j] == sets[0] || sets[j]->Contains(m)) return;
      }
      result->Add(m, limits);
    });
  } else {
    for (size_t j = 0; j < sets.size(); ++j) {
      if (sets[j] == nullptr) continue;
      if (j == 0) {
        sets[j]->ForEach([&](std::string_view m) { result->Add(m, limits); });
      } else {
        sets[j]->ForEach([&](std::string_view m) { result->Remove(m); });
      }
      if (result->empty()) break;
    }
  }
  if (!dst) {
    ReplyMembers(ctx, *result);
    return;
  }
  StoreResult(ctx, *dst, std::move(result), op == SetOp::kUnion ? "sunionstore" : "sdiffstore");
}

void SUnionCommand(CommandContext& ctx) {
  SUnionDiffGeneric(ctx, ctx.argv.subspan(1), std::nullopt, SetOp::kUnion);
}
void SUnionStoreCommand(CommandContext& ctx) {
  SUnionDiffGeneric(ctx, ctx.argv.subspan(2), ctx.arg(1), SetOp::kUnion);
}
void SDiffCommand(CommandContext& ctx) {
  SUnionDiffGeneric(ctx, ctx.argv.subspan(1), std::nullopt, SetOp::kDiff);
}
void SDiffStoreCommand(CommandContext& ctx) {
  SUnionDiffGeneric(ctx, ctx.argv.subspan(2), ctx.arg(1), SetOp::kDiff);
}

// ---------------------------------------------------------------------------------------------
// SSCAN

void SScanCommand(CommandContext& ctx) {
  CollectionScanArgs args;
  ArgParser parser(ctx, 2);
  args.cursor = parser.Cursor();
  if (!parser.Check()) return;
  auto [set, wrong_type] = ReadSet(ctx, ctx.arg(1));
  if (wrong_type) return;
  if (set == nullptr) {
    ReplyEmptyScan(ctx);
    return;
  }
  ReadCollectionScanOptions(parser, &args);
  if (!parser.Check()) return;
  std::vector<std::string> found;
  uint64_t cursor = 0;
  auto collect = [&](std::string_view m) {
    if (args.pattern && !GlobMatch(*args.pattern, m)) return;
    found.emplace_back(m);
  };
  if (set->encoding() != Encoding::kHashtable) {
    // Small encodings are returned whole in one call, as Redis does.
    set->ForEach(collect);
  } else {
    size_t visited = 0;
    cursor = ScanWithCountHint(
        args.cursor, args.count,
        [&](uint64_t c) {
          return set->ScanTable(c, [&](std::string_view m) {
            ++visited;
            collect(m);
          });
        },
        [&] { return visited; });
  }
  ctx.reply.Array(2);
  ReplyScanCursor(ctx, cursor);
  ctx.reply.Array(found.size());
  for (const std::string& m : found) ctx.reply.Bulk(m);
}

}  // namespace

void RegisterSetCommands(CommandTable& table) {
  constexpr const char* kGroup = "set";

  table.Add({"sadd", -3, kCmdWrite | kCmdDenyOom | kCmdFast, Keys(KeyAt(1, kKeyRW | kKeyInsert)),
             kAclSet, kGroup, "1.0.0",
             "Adds one or more members to a set. Creates the key if it doesn't exist.",
             "key member [member ...]", SAddCommand,
             "O(1) for each element added, so O(N) to add N elements when the command is called "
             "with multiple arguments."});
  table.Add({"srem", -3, kCmdWrite | kCmdFast, Keys(KeyAt(1, kKeyRW | kKeyDelete)), kAclSet, kGroup,
             "1.0.0",
             "Removes one or more members from a set. Deletes the set if the last member was "
             "removed.",
             "key member [member ...]", SRemCommand,
             "O(N) where N is the number of members to be removed."});
  table.Add({"scard", 2, kCmdReadonly | kCmdFast, Keys(KeyAt(1, kKeyRO)), kAclSet, kGroup, "1.0.0",
             "Returns the number of members in a set.", "key", SCardCommand, "O(1)"});
  table.Add({"sismember", 3, kCmdReadonly | kCmdFast, Keys(KeyAt(1, kKeyRO)), kAclSet, kGroup,
             "1.0.0", "Determines whether a member belongs to a set.", "key member",
             SIsMemberCommand, "O(1)"});
  table.Add({"smismember", -3, kCmdReadonly | kCmdFast, Keys(KeyAt(1, kKeyRO | kKeyAccess)),
             kAclSet, kGroup, "6.2.0", "Determines whether multiple members belong to a set.",
             "key member [member ...]", SMIsMemberCommand,
             "O(N) where N is the number of elements being checked for membership"});
  table.Add({"smembers", 2, kCmdReadonly, Keys(KeyAt(1, kKeyRO | kKeyAccess)), kAclSet, kGroup,
             "1.0.0", "Returns all members of a set.", "key", SMembersCommand,
             "O(N) where N is the set cardinality."});
  table.Add({"spop", -2, kCmdWrite | kCmdFast, Keys(KeyAt(1, kKeyRW | kKeyAccess | kKeyDelete)),
             kAclSet, kGroup, "1.0.0",
             "Returns one or more random members from a set after removing them. Deletes the set "
             "if the last member was popped.",
             "key [count]", SPopCommand,
             "Without the count argument O(1), otherwise O(N) where N is the value of the passed "
             "count."});
  table.Add({"srandmember", -2, kCmdReadonly, Keys(KeyAt(1, kKeyRO | kKeyAccess)), kAclSet, kGroup,
             "1.0.0", "Get one or multiple random members from a set", "key [count]",
             SRandMemberCommand,
             "Without the count argument O(1), otherwise O(N) where N is the absolute value of "
             "the passed count."});
  table.Add({"smove", 4, kCmdWrite | kCmdFast,
             Keys(KeyAt(1, kKeyRW | kKeyAccess | kKeyDelete), KeyAt(2, kKeyRW | kKeyInsert)),
             kAclSet, kGroup, "1.0.0", "Moves a member from one set to another.",
             "source destination member", SMoveCommand, "O(1)"});
  table.Add({"sinter", -2, kCmdReadonly, Keys(KeysAt(1, -1, 1, kKeyRO | kKeyAccess, 0)), kAclSet,
             kGroup, "1.0.0", "Returns the intersect of multiple sets.", "key [key ...]",
             SInterCommand,
             "O(N*M) worst case where N is the cardinality of the smallest set and M is the "
             "number of sets."});
  table.Add({"sintercard", -3, kCmdReadonly, Keys(KeyNum(1, 0, 1, 1, kKeyRO | kKeyAccess)), kAclSet,
             kGroup, "7.0.0", "Returns the number of members of the intersect of multiple sets.",
             "numkeys key ... [LIMIT limit:integer]", SInterCardCommand,
             "O(N*M) worst case where N is the cardinality of the smallest set and M is the "
             "number of sets.",
             SInterCardKeys});
  table.Add({"sinterstore", -3, kCmdWrite | kCmdDenyOom,
             Keys(KeyAt(1, kKeyRW | kKeyUpdate), KeysAt(2, -1, 1, kKeyRO | kKeyAccess, 0)), kAclSet,
             kGroup, "1.0.0", "Stores the intersect of multiple sets in a key.",
             "destination key [key ...]", SInterStoreCommand,
             "O(N*M) worst case where N is the cardinality of the smallest set and M is the "
             "number of sets."});
  table.Add({"sunioncard", -3, kCmdReadonly, Keys(KeyNum(1, 0, 1, 1, kKeyRO | kKeyAccess)), kAclSet,
             kGroup, "8.10.0", "Returns the number of members of the union of multiple sets.",
             "numkeys key ... [APPROX] [LIMIT limit:integer]", SUnionCardCommand,
             "O(N) where N is the total number of elements in all given sets.", SInterCardKeys});
  table.Add({"sdiffcard", -3, kCmdReadonly, Keys(KeyNum(1, 0, 1, 1, kKeyRO | kKeyAccess)), kAclSet,
             kGroup, "8.10.0",
             "Returns the number of members of the difference between the first set and all "
             "successive sets.",
             "numkeys key ... [LIMIT limit:integer]", SDiffCardCommand,
             "O(N) where N is the total number of elements in all given sets.", SInterCardKeys});
  table.Add({"sunion", -2, kCmdReadonly, Keys(KeysAt(1, -1, 1, kKeyRO | kKeyAccess, 0)), kAclSet,
             kGroup, "1.0.0", "Returns the union of multiple sets.", "key [key ...]", SUnionCommand,
             "O(N) where N is the total number of elements in all given sets."});
  table.Add({"sunionstore", -3, kCmdWrite | kCmdDenyOom,
             Keys(KeyAt(1, kKeyOW | kKeyUpdate), KeysAt(2, -1, 1, kKeyRO | kKeyAccess, 0)), kAclSet,
             kGroup, "1.0.0", "Stores the union of multiple sets in a key.",
             "destination key [key ...]", SUnionStoreCommand,
             "O(N) where N is the total number of elements in all given sets."});
  table.Add({"sdiff", -2, kCmdReadonly, Keys(KeysAt(1, -1, 1, kKeyRO | kKeyAccess, 0)), kAclSet,
             kGroup, "1.0.0", "Returns the difference of multiple sets.", "key [key ...]",
             SDiffCommand, "O(N) where N is the total number of elements in all given sets."});
  table.Add({"sdiffstore", -3, kCmdWrite | kCmdDenyOom,
             Keys(KeyAt(1, kKeyOW | kKeyUpdate), KeysAt(2, -1, 1, kKeyRO | kKeyAccess, 0)), kAclSet,
             kGroup, "1.0.0", "Stores the difference of multiple sets in a key.",
             "destination key [key ...]", SDiffStoreCommand,
             "O(N) where N is the total number of elements in all given sets."});
  table.Add({"sscan", -3, kCmdReadonly, Keys(KeyAt(1, kKeyRO | kKeyAccess)), kAclSet, kGroup,
             "2.0.0", "Iterates over members of a set.", "key cursor [MATCH pattern] [COUNT count]",
             SScanCommand,
             "O(1) for every call. O(N) for a complete iteration, including enough command calls "
             "for the cursor to return back to 0. N is the number of elements inside the "
             "collection."});
}

}  // namespace vireo
