// Lists: LPUSH ... LMPOP, LMOVEM and the blocking BLPOP, BRPOP, BRPOPLPUSH, BLMOVE, BLMPOP,
// BLMOVEM.
//
// Blocking commands try their non-blocking form first; only when every key is empty (and
// the client may block) do they hand the client to the blocking engine, which runs the
// whole command again once a key has data. So the served reply is exactly the
// non-blocking form's reply.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "commands/families.h"
#include "commands/helpers.h"
#include "commands/move_lookup.h"
#include "commands/mpop_args.h"
#include "core/arg_parser.h"
#include "core/command_table.h"
#include "core/config.h"
#include "server/blocking_service.h"
#include "server/client.h"
#include "server/command_context.h"
#include "types/packed_list.h"
#include "util/strings.h"

namespace vireo {
namespace {

enum class End { kLeft, kRight };

PackedList* ListOf(DbEntry* entry) { return entry->value.As<PackedList>(); }

// The list at `key` for a writing command (see TypedObject).
TypedObject<PackedList> ReadList(CommandContext& ctx, std::string_view key) {
  return LookupTyped(ctx, key, ValueType::kList).As<PackedList>();
}

// The same for commands that only read: a missing key counts as a keyspace miss (INFO, the
// keymiss event), as Redis's read lookups do.
TypedObject<PackedList> ReadOnlyList(CommandContext& ctx, std::string_view key) {
  return ReadTyped(ctx, key, ValueType::kList).As<PackedList>();
}

// Keyspace events of a pop: lpop/rpop, then del when it emptied the list.
void NotifyPop(CommandContext& ctx, std::string_view key, bool left, bool emptied) {
  Notify(ctx, kNotifyList, left ? "lpop" : "rpop", key);
  if (emptied) Notify(ctx, kNotifyGeneric, "del", key);
}

// Creates the list value with the configured node layout.
Value NewList(CommandContext& ctx) {
  const ServerConfig& c = ctx.cfg();
  return Value::Object(ValueType::kList,
                       std::make_unique<PackedList>(static_cast<int>(c.list_max_listpack_size),
                                                    static_cast<int>(c.list_compress_depth)));
}

// A list emptied by a command is deleted, as Redis never keeps empty lists.
void DeleteIfEmpty(CommandContext& ctx, std::string_view key, PackedList* list) {
  if (list->empty()) ctx.db.Delete(key);
}

// LEFT | RIGHT from `args`; a syntax error otherwise.
End ReadEnd(ArgParser& args) {
  return args.Keyword({"LEFT", "RIGHT"}) == 1 ? End::kRight : End::kLeft;
}

bool Pop(PackedList* list, End end, std::string* out, bool convert = true) {
  return end == End::kLeft ? list->PopFront(out, convert) : list->PopBack(out, convert);
}

// ---------------------------------------------------------------------------------------------
// Push

void PushGeneric(CommandContext& ctx, End end, bool only_if_exists) {
  std::string_view key = ctx.arg(1);
  auto [entry, wrong_type] = LookupTyped(ctx, key, ValueType::kList);
  if (wrong_type) return;
  if (entry == nullptr) {
    if (only_if_exists) {
      ctx.reply.Integer(0);
      return;
    }
    entry = ctx.db.Add(key, NewList(ctx));
  }
  PackedList* list = ListOf(entry);
  std::span<const std::string_view> values = ctx.argv.subspan(2);
  if (end == End::kLeft) {
    list->PushFrontMany(values);
  } else {
    list->PushBackMany(values);
  }
  KeyWritten(ctx, key, values.size());
  Notify(ctx, kNotifyList, end == End::kLeft ? "lpush" : "rpush", key);
  ctx.reply.Integer(static_cast<int64_t>(list->size()));
}

void LPushCommand(CommandContext& ctx) { PushGeneric(ctx, End::kLeft, false); }
void RPushCommand(CommandContext& ctx) { PushGeneric(ctx, End::kRight, false); }
void LPushXCommand(CommandContext& ctx) { PushGeneric(ctx, End::kLeft, true); }
void RPushXCommand(CommandContext& ctx) { PushGeneric(ctx, End::kRight, true); }

// ---------------------------------------------------------------------------------------------
// Pop

void PopGeneric(CommandContext& ctx, End end) {
  if (ctx.argc() > 3) {
    ctx.reply.Error(fmt::format("ERR wrong number of arguments for '{}' command", ctx.spec->name));
    return;
  }
  bool has_count = ctx.argc() == 3;
  int64_t count = 1;
  if (has_count) {
    ArgParser args(ctx, 2);
    count = args.NonNegative("ERR value is out of range, must be positive");
    if (!args.Check()) return;
  }
  std::string_view key = ctx.arg(1);
  auto [list, wrong_type] = ReadList(ctx, key);
  if (wrong_type) return;
  if (list == nullptr) {
    if (has_count) {
      ctx.reply.NullArray();
    } else {
      ctx.reply.Null();
    }
    return;
  }
  std::string element;
  int64_t popped = 1;
  if (!has_count) {
    Pop(list, end, &element);
    ctx.reply.Bulk(element);
  } else {
    popped = std::min<int64_t>(count, static_cast<int64_t>(list->size()));
    ctx.reply.Array(static_cast<size_t>(popped));
    for (int64_t i = 0; i < popped; ++i) {
      Pop(list, end, &element);
      ctx.reply.Bulk(element);
    }
    if (popped == 0) return;
  }
  const bool emptied = list->empty();
  DeleteIfEmpty(ctx, key, list);
  // Redis counts one change per element removed.
  KeyWritten(ctx, key, static_cast<uint64_t>(popped));
  NotifyPop(ctx, key, end == End::kLeft, emptied);
}

void LPopCommand(CommandContext& ctx) { PopGeneric(ctx, End::kLeft); }
void RPopCommand(CommandContext& ctx) { PopGeneric(ctx, End::kRight); }

// ---------------------------------------------------------------------------------------------
// Reads and in-place edits

void LLenCommand(CommandContext& ctx) {
  auto [list, wrong_type] = ReadOnlyList(ctx, ctx.arg(1));
  if (wrong_type) return;
  ctx.reply.Integer(list == nullptr ? 0 : static_cast<int64_t>(list->size()));
}

// LRANGE's and LTRIM's "start stop" (argv[2], argv[3]); replies the error on bad input.
bool ParseStartStop(CommandContext& ctx, int64_t* start, int64_t* stop) {
  ArgParser args(ctx, 2);
  *start = args.Int();
  *stop = args.Int();
  return args.Check();
}

void LRangeCommand(CommandContext& ctx) {
  int64_t start, stop;
  if (!ParseStartStop(ctx, &start, &stop)) return;
  auto [list, wrong_type] = ReadOnlyList(ctx, ctx.arg(1));
  if (wrong_type) return;
  int64_t from, to;
  if (list == nullptr ||
      !PackedList::NormalizeRange(start, stop, static_cast<int64_t>(list->size()), &from, &to)) {
    ctx.reply.EmptyArray();
    return;
  }
  ctx.reply.Array(static_cast<size_t>(to - from + 1));
  list->ForRange(from, to, [&](std::string_view v) {
    ctx.reply.Bulk(v);
    return true;
  });
}

void LIndexCommand(CommandContext& ctx) {
  // Redis looks the key up before parsing the index: a missing key is nil whatever the index.
  auto [list, wrong_type] = ReadOnlyList(ctx, ctx.arg(1));
  if (wrong_type) return;
  if (list == nullptr) {
    ctx.reply.Null();
    return;
  }
  ArgParser args(ctx, 2);
  int64_t index = args.Int();
  if (!args.Check()) return;
  std::string element;
  if (!list->Get(index, &element)) {
    ctx.reply.Null();
    return;
  }
  ctx.reply.Bulk(element);
}

void LSetCommand(CommandContext& ctx) {
  // As in LINDEX, the key is checked before the index.
  auto [list, wrong_type] = ReadList(ctx, ctx.arg(1));
  if (wrong_type) return;
  if (list == nullptr) {
    ctx.reply.Error(errors::kNoSuchKey);
    return;
  }
  ArgParser args(ctx, 2);
  const int64_t index = args.Int();
  // Only the write knows the index is out of range: it may convert the list's encoding first,
  // as Redis's does, so the range is not checked beforehand.
  if (args.ok() && !list->Set(index, ctx.arg(3))) args.Fail(errors::kOutOfRange);
  if (!args.Check()) return;
  KeyWritten(ctx, ctx.arg(1));
  Notify(ctx, kNotifyList, "lset", ctx.arg(1));
  ctx.reply.Ok();
}

void LInsertCommand(CommandContext& ctx) {
  ArgParser args(ctx, 2);
  int where = args.Keyword({"AFTER", "BEFORE"});
  if (!args.Check()) return;
  const bool after = where == 0;
  auto [list, wrong_type] = ReadList(ctx, ctx.arg(1));
  if (wrong_type) return;
  if (list == nullptr) {
    ctx.reply.Integer(0);
    return;
  }
  int64_t size = list->Insert(ctx.arg(3), ctx.arg(4), after);
  if (size > 0) {
    KeyWritten(ctx, ctx.arg(1));
    Notify(ctx, kNotifyList, "linsert", ctx.arg(1));
  }
  ctx.reply.Integer(size);
}

void LRemCommand(CommandContext& ctx) {
  ArgParser args(ctx, 2);
  int64_t count = args.Int();
  if (!args.Check()) return;
  auto [list, wrong_type] = ReadList(ctx, ctx.arg(1));
  if (wrong_type) return;
  if (list == nullptr) {
    ctx.reply.Integer(0);
    return;
  }
  int64_t removed = list->Remove(ctx.arg(3), count);
  if (removed > 0) {
    const bool emptied = list->empty();
    DeleteIfEmpty(ctx, ctx.arg(1), list);
    KeyWritten(ctx, ctx.arg(1), static_cast<uint64_t>(removed));
    Notify(ctx, kNotifyList, "lrem", ctx.arg(1));
    if (emptied) Notify(ctx, kNotifyGeneric, "del", ctx.arg(1));
  }
  ctx.reply.Integer(removed);
}

void LTrimCommand(CommandContext& ctx) {
  int64_t start, stop;
  if (!ParseStartStop(ctx, &start, &stop)) return;
  auto [list, wrong_type] = ReadList(ctx, ctx.arg(1));
  if (wrong_type) return;
  if (list != nullptr) {
    size_t before = list->size();
    int64_t from, to;
    if (PackedList::NormalizeRange(start, stop, static_cast<int64_t>(before), &from, &to)) {
      list->Trim(from, to);
    } else {
      list->Trim(1, 0);
    }
    uint64_t trimmed = before - list->size();
    const bool emptied = list->empty();
    DeleteIfEmpty(ctx, ctx.arg(1), list);
    // As in Redis, LTRIM touches the key (WATCH) even when it trims nothing, and counts one
    // change per element removed.
    KeyWritten(ctx, ctx.arg(1), trimmed);
    Notify(ctx, kNotifyList, "ltrim", ctx.arg(1));
    if (emptied) Notify(ctx, kNotifyGeneric, "del", ctx.arg(1));
  }
  ctx.reply.Ok();
}

struct LPosArgs {
  int64_t rank = 1;
  int64_t count = -1;  // -1: no COUNT, a single index (or nil) is the reply
  int64_t maxlen = 0;
};

// "[RANK rank] [COUNT num-matches] [MAXLEN len]": the option word decides first (an unknown
// word, or one missing its value, is a syntax error); COUNT and MAXLEN answer any bad value,
// not a number included, with their own "can't be negative" error, as Redis does.
bool ParseLPos(CommandContext& ctx, LPosArgs* out) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  ArgParser args(ctx, 3);
  while (args.HasNext()) {
    if (args.OptionName("RANK")) {
      out->rank = args.IntInRange(-kMax, kMax);
      if (args.ok() && out->rank == 0) {
        args.Fail(
            "ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... "
            "or use negative to start from the end of the list");
      }
    } else if (args.OptionName("COUNT")) {
      out->count = args.NonNegative("ERR COUNT can't be negative");
    } else if (args.OptionName("MAXLEN")) {
      out->maxlen = args.NonNegative("ERR MAXLEN can't be negative");
    } else {
      args.SyntaxError();
    }
  }
  return args.Check();
}

void LPosCommand(CommandContext& ctx) {
  LPosArgs args;
  if (!ParseLPos(ctx, &args)) return;
  int64_t rank = args.rank, count = args.count, maxlen = args.maxlen;
  auto [list, wrong_type] = ReadOnlyList(ctx, ctx.arg(1));
  if (wrong_type) return;
  bool want_array = count >= 0;
  if (list == nullptr) {
    if (want_array) {
      ctx.reply.EmptyArray();
    } else {
      ctx.reply.Null();
    }
    return;
  }
  std::vector<int64_t> positions =
      list->Positions(ctx.arg(2), rank, want_array ? count : 1, maxlen);
  if (!want_array) {
    if (positions.empty()) {
      ctx.reply.Null();
    } else {
      ctx.reply.Integer(positions[0]);
    }
    return;
  }
  ctx.reply.Array(positions.size());
  for (int64_t p : positions) ctx.reply.Integer(p);
}

// ---------------------------------------------------------------------------------------------
// Moves: LMOVE, RPOPLPUSH and their blocking forms

// The two lists of a move: the source (nullptr when missing) and the destination's entry
// (nullptr when missing). False after a WRONGTYPE reply; the destination's type is checked
// before anything is popped.
bool LookupMoveLists(CommandContext& ctx, std::string_view src, std::string_view dst,
                     PackedList** source, DbEntry** dst_entry) {
  return LookupMoveKeys(
      ctx, src, dst, ValueType::kList,
      [](CommandContext& c, std::string_view key) { return ReadList(c, key); }, source, dst_entry);
}

// After the elements moved: deletes an emptied source (or lets it shrink back to a listpack),
// touches both keys and announces the push, then the pop, as Redis does.
void FinishMove(CommandContext& ctx, std::string_view src, std::string_view dst, PackedList* source,
                End from, End to) {
  const bool emptied = source->empty();
  if (emptied) {
    ctx.db.Delete(src);
  } else {
    source->AfterRemoval();
  }
  // One change for the whole move, as in Redis; both keys are touched for WATCH.
  KeyWritten(ctx, src);
  if (src != dst) KeyWritten(ctx, dst, 0);
  Notify(ctx, kNotifyList, to == End::kLeft ? "lpush" : "rpush", dst);
  NotifyPop(ctx, src, from == End::kLeft, emptied);
}

void Push(PackedList* list, End end, std::string_view v) {
  if (end == End::kLeft) {
    list->PushFront(v);
  } else {
    list->PushBack(v);
  }
}

// The move itself. Returns false (nothing replied) when the source is empty; replies the
// element or an error otherwise.
bool MoveElement(CommandContext& ctx, std::string_view src, std::string_view dst, End from, End to,
                 bool* replied_error) {
  PackedList* source;
  DbEntry* dst_entry;
  *replied_error = !LookupMoveLists(ctx, src, dst, &source, &dst_entry);
  if (*replied_error || source == nullptr) return false;
  std::string element;
  // Redis pops, pushes, and only then deletes an emptied source or checks whether it shrank
  // back to a listpack; with source == destination that order decides the encoding.
  Pop(source, from, &element, false);
  if (dst_entry == nullptr) dst_entry = ctx.db.Add(dst, NewList(ctx));
  Push(ListOf(dst_entry), to, element);
  FinishMove(ctx, src, dst, source, from, to);
  ctx.reply.Bulk(element);
  return true;
}

void MoveGeneric(CommandContext& ctx, std::string_view src, std::string_view dst, End from, End to,
                 int64_t block_timeout_ms) {
  bool replied_error;
  if (MoveElement(ctx, src, dst, from, to, &replied_error)) {
    // BLMOVE / BRPOPLPUSH are logged in their non-blocking forms, as Redis does.
    if (block_timeout_ms >= 0) {
      if (ctx.argc() == 4) {
        ctx.PropagateInstead({"RPOPLPUSH", std::string(src), std::string(dst)});
      } else {
        // The directions as the client spelled them (Redis only renames the command).
        ctx.PropagateInstead({"LMOVE", std::string(src), std::string(dst), std::string(ctx.arg(3)),
                              std::string(ctx.arg(4))});
      }
    }
    return;
  }
  if (replied_error) return;
  if (block_timeout_ms < 0 || !ctx.may_block()) {
    // LMOVE, or a blocking move that can't block (MULTI, scripts): a nil bulk.
    ctx.reply.Null();
    return;
  }
  ctx.blocking().BlockClient(ctx, {std::string(src)}, block_timeout_ms, ValueType::kList, {});
}

void LMoveCommand(CommandContext& ctx) {
  ArgParser args(ctx, 3);
  End from = ReadEnd(args);
  End to = ReadEnd(args);
  if (!args.Check()) return;
  MoveGeneric(ctx, ctx.arg(1), ctx.arg(2), from, to, -1);
}

void RPopLPushCommand(CommandContext& ctx) {
  MoveGeneric(ctx, ctx.arg(1), ctx.arg(2), End::kRight, End::kLeft, -1);
}

void BLMoveCommand(CommandContext& ctx) {
  ArgParser args(ctx, 3);
  End from = ReadEnd(args);
  End to = ReadEnd(args);
  int64_t timeout = args.BlockTimeoutMs(ctx.db.now_ms());
  if (!args.Check()) return;
  MoveGeneric(ctx, ctx.arg(1), ctx.arg(2), from, to, timeout);
}

void BRPopLPushCommand(CommandContext& ctx) {
  ArgParser args(ctx, 3);
  int64_t timeout = args.BlockTimeoutMs(ctx.db.now_ms());
  if (!args.Check()) return;
  MoveGeneric(ctx, ctx.arg(1), ctx.arg(2), End::kRight, End::kLeft, timeout);
}

// ---------------------------------------------------------------------------------------------
// LMOVEM / BLMOVEM (Redis 8.10): several elements in one move

struct MultiMove {
  End from = End::kLeft;
  End to = End::kLeft;
  int64_t count = 1;
  bool exactly = false;  // all `count` or nothing (BLMOVEM waits for that many)
  bool bulk = false;     // BULK keeps the block's source order; OBO is repeated LMOVE
  bool has_how_many = false;
};

// `wherefrom whereto` (and, for BLMOVEM, the timeout in between) are read by the caller; this
// reads the optional how-many block, which must name both a selector and an ordering.
bool ReadHowMany(ArgParser& args, MultiMove* m) {
  if (!args.HasNext()) return args.Check();
  int selector = args.Keyword({"COUNT", "EXACTLY"});
  m->count = args.Positive("ERR count should be greater than 0");
  m->bulk = args.Keyword({"OBO", "BULK"}) == 1;
  m->exactly = selector == 1;
  m->has_how_many = true;
  args.ExpectEnd();
  return args.Check();
}

// A WaitCondition: BLMOVEM EXACTLY n is served only once the source holds n elements, so a
// shorter push leaves it (and whoever queues behind it) waiting.
class ListLengthAtLeast : public WaitCondition {
 public:
  explicit ListLengthAtLeast(size_t n) : n_(n) {}
  bool Ready(std::string_view, const Value* value) const override {
    return value != nullptr && value->type() == ValueType::kList &&
           value->As<PackedList>()->size() >= n_;
  }
  // A push onto an existing list only marks it changed (the ready signal is for new keys),
  // and that push may be the one that makes it long enough.
  bool WakeOnChange() const override { return true; }

 private:
  size_t n_;
};

// The move. Returns false (nothing replied) when the source is missing or, with EXACTLY, too
// short; replies the moved elements (as they now lie in the destination, head to tail) or an
// error otherwise. `*moved` is how many were moved.
bool MoveElements(CommandContext& ctx, std::string_view src, std::string_view dst,
                  const MultiMove& m, bool* replied_error, size_t* moved) {
  PackedList* source;
  DbEntry* dst_entry;
  *replied_error = !LookupMoveLists(ctx, src, dst, &source, &dst_entry);
  if (*replied_error || source == nullptr) return false;
  if (m.exactly && source->size() < static_cast<uint64_t>(m.count)) return false;
  const size_t n = std::min<uint64_t>(source->size(), static_cast<uint64_t>(m.count));
  if (dst_entry == nullptr) dst_entry = ctx.db.Add(dst, NewList(ctx));
  PackedList* destination = ListOf(dst_entry);
  auto push = [&](std::string_view v) { Push(destination, m.to, v); };
  // Everything is popped before anything is pushed, so with source == destination BULK on
  // one end gives the list back unchanged and OBO reverses the block in place (redis.io).
  std::vector<std::string> popped(n);  // in pop order
  for (std::string& e : popped) Pop(source, m.from, &e, false);
  if (!m.bulk) {
    for (const std::string& e : popped) push(e);
  } else {
    // The block in its source order (head to tail), pushed so that it keeps that order.
    std::vector<std::string_view> block(popped.begin(), popped.end());
    if (m.from == End::kRight) std::reverse(block.begin(), block.end());
    if (m.to == End::kLeft) {
      for (auto it = block.rbegin(); it != block.rend(); ++it) push(*it);
    } else {
      for (std::string_view v : block) push(v);
    }
  }
  // One push and one pop event for the whole move, as LMOVE announces them.
  FinishMove(ctx, src, dst, source, m.from, m.to);
  // Destination order: the block as it now lies, head to tail.
  bool reversed;
  if (m.bulk) {
    reversed = m.from == End::kRight;
  } else {
    reversed = m.to == End::kLeft;
  }
  ctx.reply.Array(n);
  if (reversed) {
    for (auto it = popped.rbegin(); it != popped.rend(); ++it) ctx.reply.Bulk(*it);
  } else {
    for (const std::string& e : popped) ctx.reply.Bulk(e);
  }
  *moved = n;
  return true;
}

void MoveManyGeneric(CommandContext& ctx, const MultiMove& m, int64_t block_timeout_ms) {
  std::string_view src = ctx.arg(1);
  std::string_view dst = ctx.arg(2);
  bool replied_error;
  size_t moved = 0;
  if (MoveElements(ctx, src, dst, m, &replied_error, &moved)) {
    if (block_timeout_ms >= 0) {
      // A served BLMOVEM is logged as the LMOVEM that moves exactly what it moved, so a
      // replica never waits and never moves a different number.
      std::vector<std::string> cmd = {"LMOVEM", std::string(src), std::string(dst),
                                      std::string(ctx.arg(3)), std::string(ctx.arg(4))};
      if (m.has_how_many) {
        cmd.insert(cmd.end(), {"EXACTLY", std::to_string(moved), m.bulk ? "BULK" : "OBO"});
      }
      ctx.PropagateInstead(std::move(cmd));
    }
    return;
  }
  if (replied_error) return;
  if (block_timeout_ms < 0 && !m.exactly) {
    // LMOVEM on a missing source: nothing moved, an empty array (redis.io's LMOVEM page).
    ctx.reply.Array(0);
    return;
  }
  if (block_timeout_ms < 0 || !ctx.may_block()) {
    // EXACTLY unmet, or BLMOVEM where it can't block (MULTI, scripts): a nil.
    ctx.reply.Null();
    return;
  }
  BlockOptions options;
  if (m.exactly && m.count > 1) options.condition = std::make_shared<ListLengthAtLeast>(m.count);
  ctx.blocking().BlockClient(ctx, {std::string(src)}, block_timeout_ms, ValueType::kList,
                             std::move(options));
}

void LMoveMCommand(CommandContext& ctx) {
  ArgParser args(ctx, 3);
  MultiMove m;
  m.from = ReadEnd(args);
  m.to = ReadEnd(args);
  if (!ReadHowMany(args, &m)) return;
  MoveManyGeneric(ctx, m, -1);
}

void BLMoveMCommand(CommandContext& ctx) {
  ArgParser args(ctx, 3);
  MultiMove m;
  m.from = ReadEnd(args);
  m.to = ReadEnd(args);
  int64_t timeout = args.BlockTimeoutMs(ctx.db.now_ms());
  if (!ReadHowMany(args, &m)) return;
  MoveManyGeneric(ctx, m, timeout);
}

// ---------------------------------------------------------------------------------------------
// BLPOP / BRPOP

void BlockingPop(CommandContext& ctx, End end) {
  ArgParser args(ctx, ctx.argc() - 1);
  int64_t timeout = args.BlockTimeoutMs(ctx.db.now_ms());
  if (!args.Check()) return;
  std::span<const std::string_view> keys = ctx.argv.subspan(1, ctx.argc() - 2);
  for (std::string_view key : keys) {
    auto [list, wrong_type] = ReadList(ctx, key);
    if (wrong_type) return;
    if (list == nullptr) continue;
    std::string element;
    Pop(list, end, &element);
    ctx.reply.Array(2);
    ctx.reply.Bulk(key);
    ctx.reply.Bulk(element);
    const bool emptied = list->empty();
    DeleteIfEmpty(ctx, key, list);
    KeyWritten(ctx, key);
    NotifyPop(ctx, key, end == End::kLeft, emptied);
    // Logged in the non-blocking form, as Redis does.
    ctx.PropagateInstead({end == End::kLeft ? "LPOP" : "RPOP", std::string(key)});
    return;
  }
  if (!ctx.may_block()) {
    ctx.reply.NullArray();
    return;
  }
  ctx.blocking().BlockClient(ctx, std::vector<std::string>(keys.begin(), keys.end()), timeout,
                             ValueType::kList, {});
}

void BLPopCommand(CommandContext& ctx) { BlockingPop(ctx, End::kLeft); }
void BRPopCommand(CommandContext& ctx) { BlockingPop(ctx, End::kRight); }

// ---------------------------------------------------------------------------------------------
// LMPOP / BLMPOP

struct ListMpopArgs {
  std::span<const std::string_view> keys;
  End end;
  int64_t count = 1;
};

void ReadMpop(ArgParser& args, ListMpopArgs* out) {
  MpopArgs parsed = ReadMpopArgs(args, "LEFT", "RIGHT");
  out->keys = parsed.keys;
  out->end = parsed.second_end ? End::kRight : End::kLeft;
  out->count = parsed.count;
}

// Pops from the first non-empty list. False (nothing replied) when all are empty.
bool MpopFirstNonEmpty(CommandContext& ctx, const ListMpopArgs& args, bool* replied_error) {
  *replied_error = false;
  for (std::string_view key : args.keys) {
    auto [list, wrong_type] = ReadList(ctx, key);
    if (wrong_type) {
      *replied_error = true;
      return false;
    }
    if (list == nullptr) continue;
    int64_t n = std::min<int64_t>(args.count, static_cast<int64_t>(list->size()));
    ctx.reply.Array(2);
    ctx.reply.Bulk(key);
    ctx.reply.Array(static_cast<size_t>(n));
    std::string element;
    for (int64_t i = 0; i < n; ++i) {
      Pop(list, args.end, &element);
      ctx.reply.Bulk(element);
    }
    const bool emptied = list->empty();
    DeleteIfEmpty(ctx, key, list);
    KeyWritten(ctx, key, static_cast<uint64_t>(n));
    NotifyPop(ctx, key, args.end == End::kLeft, emptied);
    // [B]LMPOP is logged as [LR]POP key count, as Redis does.
    ctx.PropagateInstead(
        {args.end == End::kLeft ? "LPOP" : "RPOP", std::string(key), std::to_string(n)});
    return true;
  }
  return false;
}

void LMPopCommand(CommandContext& ctx) {
  ListMpopArgs args;
  ArgParser parser(ctx, 1);
  ReadMpop(parser, &args);
  if (!parser.Check()) return;
  bool replied_error;
  if (MpopFirstNonEmpty(ctx, args, &replied_error) || replied_error) return;
  ctx.reply.NullArray();
}

void BLMPopCommand(CommandContext& ctx) {
  // Redis parses the timeout last, after numkeys, the direction and COUNT.
  ListMpopArgs args;
  ArgParser parser(ctx, 2);
  ReadMpop(parser, &args);
  parser.Seek(1);
  int64_t timeout = parser.BlockTimeoutMs(ctx.db.now_ms());
  if (!parser.Check()) return;
  bool replied_error;
  if (MpopFirstNonEmpty(ctx, args, &replied_error) || replied_error) return;
  if (!ctx.may_block()) {
    ctx.reply.NullArray();
    return;
  }
  ctx.blocking().BlockClient(ctx, std::vector<std::string>(args.keys.begin(), args.keys.end()),
                             timeout, ValueType::kList, {});
}

// COMMAND GETKEYS for LMPOP / BLMPOP: the numkeys keys after argv[numkeys_at]. Like Redis's
// fallback (atoi), a leading number is enough ("2abc" is 2); no key when it is out of range.
std::vector<size_t> MpopKeys(std::span<const std::string_view> argv, size_t numkeys_at) {
  std::vector<size_t> out;
  if (numkeys_at >= argv.size()) return out;
  std::string_view arg = argv[numkeys_at];
  size_t i = 0;
  while (i < arg.size() && (arg[i] == ' ' || (arg[i] >= '\t' && arg[i] <= '\r'))) ++i;
  bool negative = false;
  if (i < arg.size() && (arg[i] == '-' || arg[i] == '+')) negative = arg[i++] == '-';
  int64_t n = 0;
  for (; i < arg.size() && arg[i] >= '0' && arg[i] <= '9' && n <= INT32_MAX; ++i) {
    n = n * 10 + (arg[i] - '0');
  }
  if (negative || n < 1 || n > static_cast<int64_t>(argv.size() - numkeys_at - 1)) return out;
  for (int64_t k = 1; k <= n; ++k) out.push_back(numkeys_at + static_cast<size_t>(k));
  return out;
}

std::vector<size_t> LMPopKeys(std::span<const std::string_view> argv) { return MpopKeys(argv, 1); }
std::vector<size_t> BLMPopKeys(std::span<const std::string_view> argv) { return MpopKeys(argv, 2); }

}  // namespace

void RegisterListCommands(CommandTable& table) {
  constexpr const char* kGroup = "list";

  table.Add({"lpush", -3, kCmdWrite | kCmdDenyOom | kCmdFast, Keys(KeyAt(1, kKeyRW | kKeyInsert)),
             kAclList, kGroup, "1.0.0",
             "Prepends one or more elements to a list. Creates the key if it doesn't exist.",
             "key element [element ...]", LPushCommand,
             "O(1) for each element added, so O(N) to add N elements when the command is called "
             "with multiple arguments."});
  table.Add({"rpush", -3, kCmdWrite | kCmdDenyOom | kCmdFast, Keys(KeyAt(1, kKeyRW | kKeyInsert)),
             kAclList, kGroup, "1.0.0",
             "Appends one or more elements to a list. Creates the key if it doesn't exist.",
             "key element [element ...]", RPushCommand,
             "O(1) for each element added, so O(N) to add N elements when the command is called "
             "with multiple arguments."});
  table.Add({"lpushx", -3, kCmdWrite | kCmdDenyOom | kCmdFast, Keys(KeyAt(1, kKeyRW | kKeyInsert)),
             kAclList, kGroup, "2.2.0",
             "Prepends one or more elements to a list only when the list exists.",
             "key element [element ...]", LPushXCommand,
             "O(1) for each element added, so O(N) to add N elements when the command is called "
             "with multiple arguments."});
  table.Add({"rpushx", -3, kCmdWrite | kCmdDenyOom | kCmdFast, Keys(KeyAt(1, kKeyRW | kKeyInsert)),
             kAclList, kGroup, "2.2.0", "Appends an element to a list only when the list exists.",
             "key element [element ...]", RPushXCommand,
             "O(1) for each element added, so O(N) to add N elements when the command is called "
             "with multiple arguments."});
  table.Add({"lpop", -2, kCmdWrite | kCmdFast, Keys(KeyAt(1, kKeyRW | kKeyAccess | kKeyDelete)),
             kAclList, kGroup, "1.0.0",
             "Returns the first elements in a list after removing it. Deletes the list if the "
             "last element was popped.",
             "key [count]", LPopCommand, "O(N) where N is the number of elements returned"});
  table.Add({"rpop", -2, kCmdWrite | kCmdFast, Keys(KeyAt(1, kKeyRW | kKeyAccess | kKeyDelete)),
             kAclList, kGroup, "1.0.0",
             "Returns and removes the last elements of a list. Deletes the list if the last "
             "element was popped.",
             "key [count]", RPopCommand, "O(N) where N is the number of elements returned"});
  table.Add({"llen", 2, kCmdReadonly | kCmdFast, Keys(KeyAt(1, kKeyRO)), kAclList, kGroup, "1.0.0",
             "Returns the length of a list.", "key", LLenCommand, "O(1)"});
  table.Add({"lrange", 4, kCmdReadonly, Keys(KeyAt(1, kKeyRO | kKeyAccess)), kAclList, kGroup,
             "1.0.0", "Returns a range of elements from a list.", "key start stop", LRangeCommand,
             "O(S+N) where S is the distance of start offset from HEAD for small lists, from "
             "nearest end (HEAD or TAIL) for large lists; and N is the number of elements in the "
             "specified range."});
  table.Add({"lindex", 3, kCmdReadonly, Keys(KeyAt(1, kKeyRO | kKeyAccess)), kAclList, kGroup,
             "1.0.0", "Returns an element from a list by its index.", "key index", LIndexCommand,
             "O(N) where N is the number of elements to traverse to get to the element at index."});
  table.Add({"lset", 4, kCmdWrite | kCmdDenyOom, Keys(KeyAt(1, kKeyRW | kKeyUpdate)), kAclList,
             kGroup, "1.0.0", "Sets the value of an element in a list by its index.",
             "key index element", LSetCommand, "O(N) where N is the length of the list."});
  table.Add({"linsert", 5, kCmdWrite | kCmdDenyOom, Keys(KeyAt(1, kKeyRW | kKeyInsert)), kAclList,
             kGroup, "2.2.0", "Inserts an element before or after another element in a list.",
             "key where=<BEFORE | AFTER> pivot:string element", LInsertCommand,
             "O(N) where N is the number of elements to traverse before seeing the value pivot."});
  table.Add({"lrem", 4, kCmdWrite, Keys(KeyAt(1, kKeyRW | kKeyDelete)), kAclList, kGroup, "1.0.0",
             "Removes elements from a list. Deletes the list if the last element was removed.",
             "key count element", LRemCommand,
             "O(N+M) where N is the length of the list and M is the number of elements removed."});
  table.Add({"ltrim", 4, kCmdWrite, Keys(KeyAt(1, kKeyRW | kKeyDelete)), kAclList, kGroup, "1.0.0",
             "Removes elements from both ends a list. Deletes the list if all elements were "
             "trimmed.",
             "key start stop", LTrimCommand,
             "O(N) where N is the number of elements to be removed by the operation."});
  table.Add({"lpos", -3, kCmdReadonly, Keys(KeyAt(1, kKeyRO | kKeyAccess)), kAclList, kGroup,
             "6.0.6", "Returns the index of matching elements in a list.",
             "key element [RANK rank] [COUNT num-matches:integer] [MAXLEN len]", LPosCommand,
             "O(N) where N is the number of elements in the list, for the average case."});
  table.Add({"lmove", 5, kCmdWrite | kCmdDenyOom,
             Keys(KeyAt(1, kKeyRW | kKeyAccess | kKeyDelete), KeyAt(2, kKeyRW | kKeyInsert)),
             kAclList, kGroup, "6.2.0",
             "Returns an element after popping it from one list and pushing it to another. "
             "Deletes the list if the last element was moved.",
             "source destination wherefrom=<LEFT | RIGHT> whereto=<LEFT | RIGHT>", LMoveCommand,
             "O(1)"});
  table.Add({"rpoplpush", 3, kCmdWrite | kCmdDenyOom,
             Keys(KeyAt(1, kKeyRW | kKeyAccess | kKeyDelete), KeyAt(2, kKeyRW | kKeyInsert)),
             kAclList, kGroup, "1.2.0",
             "Returns the last element of a list after removing and pushing it to another list. "
             "Deletes the list if the last element was popped.",
             "source destination", RPopLPushCommand, "O(1)"});
  table.Add({"lmpop", -4, kCmdWrite, Keys(KeyNum(1, 0, 1, 1, kKeyRW | kKeyAccess | kKeyDelete)),
             kAclList, kGroup, "7.0.0",
             "Returns multiple elements from a list after removing them. Deletes the list if the "
             "last element was popped.",
             "numkeys key ... where=<LEFT | RIGHT> [COUNT count]", LMPopCommand,
             "O(N+M) where N is the number of provided keys and M is the number of elements "
             "returned.",
             LMPopKeys});
  table.Add({"blpop", -3, kCmdWrite | kCmdBlocking,
             Keys(KeysAt(1, -2, 1, kKeyRW | kKeyAccess | kKeyDelete, 0)), kAclList, kGroup, "2.0.0",
             "Removes and returns the first element in a list. Blocks until an element is "
             "available otherwise. Deletes the list if the last element was popped.",
             "key [key ...] timeout", BLPopCommand,
             "O(N) where N is the number of provided keys."});
  table.Add({"brpop", -3, kCmdWrite | kCmdBlocking,
             Keys(KeysAt(1, -2, 1, kKeyRW | kKeyAccess | kKeyDelete, 0)), kAclList, kGroup, "2.0.0",
             "Removes and returns the last element in a list. Blocks until an element is "
             "available otherwise. Deletes the list if the last element was popped.",
             "key [key ...] timeout", BRPopCommand,
             "O(N) where N is the number of provided keys."});
  table.Add({"brpoplpush", 4, kCmdWrite | kCmdDenyOom | kCmdBlocking,
             Keys(KeyAt(1, kKeyRW | kKeyAccess | kKeyDelete), KeyAt(2, kKeyRW | kKeyInsert)),
             kAclList, kGroup, "2.2.0",
             "Pops an element from a list, pushes it to another list and returns it. Block until "
             "an element is available otherwise. Deletes the list if the last element was "
             "popped.",
             "source destination timeout", BRPopLPushCommand, "O(1)"});
  table.Add({"blmove", 6, kCmdWrite | kCmdDenyOom | kCmdBlocking,
             Keys(KeyAt(1, kKeyRW | kKeyAccess | kKeyDelete), KeyAt(2, kKeyRW | kKeyInsert)),
             kAclList, kGroup, "6.2.0",
             "Pops an element from a list, pushes it to another list and returns it. Blocks "
             "until an element is available otherwise. Deletes the list if the last element was "
             "moved.",
             "source destination wherefrom=<LEFT | RIGHT> whereto=<LEFT | RIGHT> "
             "timeout",
             BLMoveCommand, "O(1)"});
  table.Add({"lmovem", -5, kCmdWrite | kCmdDenyOom,
             Keys(KeyAt(1, kKeyRW | kKeyAccess | kKeyDelete), KeyAt(2, kKeyRW | kKeyInsert)),
             kAclList, kGroup, "8.10.0",
             "Moves up to (or exactly) a number of elements from one list to another and returns "
             "them. Deletes the source list if it becomes empty.",
             "source destination wherefrom=<LEFT | RIGHT> whereto=<LEFT | RIGHT> "
             "[how-many=<selector=<COUNT count:integer | EXACTLY exactly:integer> "
             "ordering=<OBO | BULK>>]",
             LMoveMCommand, "O(N) where N is the number of elements moved."});
  table.Add({"blmovem", -6, kCmdWrite | kCmdDenyOom | kCmdBlocking,
             Keys(KeyAt(1, kKeyRW | kKeyAccess | kKeyDelete), KeyAt(2, kKeyRW | kKeyInsert)),
             kAclList, kGroup, "8.10.0",
             "Moves up to (or exactly) a number of elements from one list to another and returns "
             "them. Blocks until the elements are available otherwise. Deletes the source list "
             "if it becomes empty.",
             "source destination wherefrom=<LEFT | RIGHT> whereto=<LEFT | RIGHT> timeout "
             "[how-many=<selector=<COUNT count:integer | EXACTLY exactly:integer> "
             "ordering=<OBO | BULK>>]",
             BLMoveMCommand, "O(N) where N is the number of elements moved."});
  table.Add({"blmpop", -5, kCmdWrite | kCmdBlocking,
             Keys(KeyNum(2, 0, 1, 1, kKeyRW | kKeyAccess | kKeyDelete)), kAclList, kGroup, "7.0.0",
             "Pops the first element from one of multiple lists. Blocks until an element is "
             "available otherwise. Deletes the list if the last element was popped.",
             "timeout numkeys key ... where=<LEFT | RIGHT> [COUNT count]", BLMPopCommand,
             "O(N+M) where N is the number of provided keys and M is the number of elements "
             "returned.",
             BLMPopKeys});
}

}  // namespace vireo
