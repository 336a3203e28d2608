// Consumer groups: XGROUP, XACK, XPENDING, XCLAIM, XAUTOCLAIM and XINFO.
//
// Claims are logged as XCLAIM ... FORCE JUSTID with the entry's delivery time and count, which
// a replica or AOF replay applies idempotently, as Redis does.
#include <fmt/format.h>

#include <limits>

#include "commands/stream_common.h"
#include "core/arg_parser.h"
#include "server/blocking_service.h"
#include "server/client.h"
#include "server/command_context.h"
#include "server/process_info.h"
#include "util/clock.h"
#include "util/strings.h"

namespace vireo {
namespace {

using namespace stream_cmd;  // NOLINT

std::string NoGroupError(std::string_view key, std::string_view group) {
  return fmt::format("NOGROUP No such key '{}' or consumer group '{}'", key, group);
}

// The stream and group for commands that need both; replies NOGROUP / WRONGTYPE otherwise.
bool LookupGroup(CommandContext& ctx, std::string_view key, std::string_view group, Stream** s,
                 ConsumerGroup** g) {
  auto [stream, wrong_type] = LookupStream(ctx, key);
  if (wrong_type) return false;
  *s = stream;
  *g = *s == nullptr || (*s)->groups() == nullptr ? nullptr : (*s)->groups()->Find(group);
  if (*g == nullptr) {
    ctx.reply.Error(NoGroupError(key, group));
    return false;
  }
  return true;
}

// Replies with the stream entry `id` (it must exist).
void ReplyEntryById(CommandContext& ctx, const Stream& s, StreamID id) {
  s.Range(id, id, false, 1, [&](const StreamEntryView& e) {
    ReplyEntry(ctx.reply, e);
    return true;
  });
}

StreamConsumer* TouchConsumer(CommandContext& ctx, ConsumerGroup& g, std::string_view key,
                              std::string_view group, std::string_view name) {
  bool created;
  StreamConsumer* c = g.GetOrCreateConsumer(name, CommandTimeMs(ctx), &created);
  if (created) {
    Notify(ctx, kNotifyStream, "xgroup-createconsumer", key);
    ctx.PropagateInstead(CreateConsumerPropagation(key, group, name));
    ctx.process().AddDirty(1);
  }
  c->seen_time_ms = CommandTimeMs(ctx);
  return c;
}

// ---------------------------------------------------------------------------------------------
// XGROUP

std::string SubcommandSyntax(const CommandContext& ctx) {
  return fmt::format(
      "ERR unknown subcommand or wrong number of arguments for '{}'. Try XGROUP HELP.", ctx.arg(1));
}

void ReplySubcommandSyntax(CommandContext& ctx) { ctx.reply.Error(SubcommandSyntax(ctx)); }

// The key (which must exist unless `may_create`) and the group (which must exist when
// `need_group`). Replies the error and returns false otherwise.
bool GroupTarget(CommandContext& ctx, bool may_create, bool need_group, Stream** s,
                 ConsumerGroup** g) {
  std::string_view key = ctx.arg(2), group = ctx.arg(3);
  auto [stream, wrong_type] = LookupStream(ctx, key);
  if (wrong_type) return false;
  *s = stream;
  *g = nullptr;
  if (may_create) return true;
  if (*s == nullptr) {
    ctx.reply.Error(
        "ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want "
        "to use the MKSTREAM option to create an empty stream automatically.");
    return false;
  }
  *g = (*s)->groups() == nullptr ? nullptr : (*s)->groups()->Find(group);
  if (*g == nullptr && need_group) {
    ctx.reply.Error(
        fmt::format("NOGROUP No such consumer group '{}' for key name '{}'", group, key));
    return false;
  }
  return true;
}

// The options of CREATE (MKSTREAM, ENTRIESREAD) and SETID (ENTRIESREAD only), parsed before the
// key is looked up: Redis reports a bad option before WRONGTYPE or NOGROUP.
bool ParseGroupOptions(CommandContext& ctx, bool allow_mkstream, bool* mkstream,
                       int64_t* entries_read) {
  ArgParser args(ctx, 5);
  while (args.HasNext()) {
    if (allow_mkstream && args.Flag("MKSTREAM")) {
      *mkstream = true;
    } else if (args.OptionName("ENTRIESREAD")) {
      // A non-negative integer or -1 (unknown).
      *entries_read = args.IntAtLeast(ConsumerGroup::kInvalidEntriesRead,
                                      "ERR value for ENTRIESREAD must be positive or -1");
    } else {
      args.Fail(SubcommandSyntax(ctx));
    }
  }
  return args.Check();
}

void XGroupCreateCommand(CommandContext& ctx) {
  bool mkstream = false;
  int64_t entries_read = ConsumerGroup::kInvalidEntriesRead;
  if (!ParseGroupOptions(ctx, true, &mkstream, &entries_read)) return;
  Stream* s;
  ConsumerGroup* g;
  if (!GroupTarget(ctx, mkstream, false, &s, &g)) return;
  if (ctx.argc() > 8) {  // repeated options: each parses, but CREATE takes at most three words
    ReplySubcommandSyntax(ctx);
    return;
  }
  std::string_view key = ctx.arg(2), group = ctx.arg(3);
  StreamID id;
  if (ctx.arg(4) == "$") {
    id = s != nullptr ? s->last_id() : StreamID::Min();
  } else {
    ArgParser args(ctx, 4);
    id = NextStreamID(args, 0, true);
    if (!args.Check()) return;
  }
  if (s != nullptr && s->groups() != nullptr && s->groups()->Find(group) != nullptr) {
    ctx.reply.Error("BUSYGROUP Consumer Group name already exists");
    return;
  }
  bool created_key = s == nullptr;
  if (created_key) {
    DbEntry* entry = ctx.db.Add(key, Value::Object(ValueType::kStream, std::make_unique<Stream>()));
    s = entry->value.As<Stream>();
  }
  s->MutableGroups().Create(group, id, entries_read);
  ctx.reply.Ok();
  Notify(ctx, kNotifyStream, "xgroup-create", key);
  if (created_key) {
    KeyWritten(ctx, key);
  } else {
    GroupStateWritten(ctx);
  }
}

void XGroupSetIdCommand(CommandContext& ctx) {
  bool mkstream = false;
  int64_t entries_read = ConsumerGroup::kInvalidEntriesRead;
  if (!ParseGroupOptions(ctx, false, &mkstream, &entries_read)) return;
  Stream* s;
  ConsumerGroup* g;
  if (!GroupTarget(ctx, false, true, &s, &g)) return;
  if (ctx.argc() != 5 && ctx.argc() != 7) {  // a repeated ENTRIESREAD: valid options, bad form
    ReplySubcommandSyntax(ctx);
    return;
  }
  StreamID id;
  if (ctx.arg(4) == "$") {
    id = s->last_id();
  } else {
    ArgParser args(ctx, 4);
    id = NextStreamID(args, 0, false);
    if (!args.Check()) return;
  }
  g->last_id = id;
  g->entries_read = entries_read;
  ctx.reply.Ok();
  Notify(ctx, kNotifyStream, "xgroup-setid", ctx.arg(2));
  GroupStateWritten(ctx);
}

void XGroupDestroyCommand(CommandContext& ctx) {
  Stream* s;
  ConsumerGroup* g;
  if (!GroupTarget(ctx, false, false, &s, &g)) return;
  if (g == nullptr) {
    ctx.reply.Integer(0);
    return;
  }
  s->MutableGroups().Destroy(ctx.arg(3));
  ctx.reply.Integer(1);
  Notify(ctx, kNotifyStream, "xgroup-destroy", ctx.arg(2));
  GroupStateWritten(ctx);
  // Consumers blocked on the group run again and get NOGROUP.
  ctx.blocking().SignalKeyAsReady(ctx.client.db_index(), ctx.arg(2));
}

void XGroupCreateConsumerCommand(CommandContext& ctx) {
  Stream* s;
  ConsumerGroup* g;
  if (!GroupTarget(ctx, false, true, &s, &g)) return;
  bool created;
  g->GetOrCreateConsumer(ctx.arg(4), CommandTimeMs(ctx), &created);
  if (created) {
    Notify(ctx, kNotifyStream, "xgroup-createconsumer", ctx.arg(2));
    GroupStateWritten(ctx);
  }
  ctx.reply.Integer(created ? 1 : 0);
}

void XGroupDelConsumerCommand(CommandContext& ctx) {
  Stream* s;
  ConsumerGroup* g;
  if (!GroupTarget(ctx, false, true, &s, &g)) return;
  int64_t pending = g->DeleteConsumer(ctx.arg(4));
  if (pending >= 0) {
    Notify(ctx, kNotifyStream, "xgroup-delconsumer", ctx.arg(2));
    GroupStateWritten(ctx);
  }
  ctx.reply.Integer(std::max<int64_t>(pending, 0));
}

void XGroupHelpCommand(CommandContext& ctx) {
  ReplyHelp(
      ctx, "XGROUP",
      {"CREATE <key> <groupname> <id|$> [option]",
       "    Create a new consumer group. Options are:", "    * MKSTREAM",
       "      Create the empty stream if it does not exist.", "    * ENTRIESREAD entries_read",
       "      Set the group's entries_read counter (internal use).",
       "CREATECONSUMER <key> <groupname> <consumer>",
       "    Create a new consumer in the specified group.",
       "DELCONSUMER <key> <groupname> <consumer>", "    Remove the specified consumer.",
       "DESTROY <key> <groupname>", "    Remove the specified group.",
       "SETID <key> <groupname> <id|$> [ENTRIESREAD entries_read]",
       "    Set the current group ID and entries_read counter."});
}

void XGroupCommand(CommandContext& ctx) { ReplySubcommandSyntax(ctx); }

// ---------------------------------------------------------------------------------------------
// XACK

void XAckCommand(CommandContext& ctx) {
  std::string_view key = ctx.arg(1);
  auto [s, wrong_type] = LookupStream(ctx, key);
  if (wrong_type) return;
  ConsumerGroup* g =
      s == nullptr || s->groups() == nullptr ? nullptr : s->groups()->Find(ctx.arg(2));
  if (g == nullptr) {
    ctx.reply.Integer(0);
    return;
  }
  // All IDs are parsed first: an error must not follow a partial acknowledgement.
  ArgParser args(ctx, 3);
  std::vector<StreamID> ids(args.remaining());
  for (StreamID& id : ids) id = NextStreamID(args, 0, true);
  if (!args.Check()) return;
  int64_t acked = 0;
  for (StreamID id : ids) acked += g->Ack(id) ? 1 : 0;
  if (acked > 0) GroupStateWritten(ctx, static_cast<uint64_t>(acked));
  ctx.reply.Integer(acked);
}

// ---------------------------------------------------------------------------------------------
// XPENDING

void XPendingCommand(CommandContext& ctx) {
  size_t argc = ctx.argc();
  bool summary = argc == 3;
  StreamID start, end;
  int64_t count = 0, min_idle = 0;
  std::string_view consumer_name;
  bool has_consumer = false;
  ArgParser args(ctx, 3);
  if (!summary && args.ExpectRemaining(3, 6)) {
    if (args.Flag("IDLE")) {
      min_idle = args.Int();
      if (argc < 8) args.SyntaxError();
    }
    // COUNT is checked before the IDs, as in Redis.
    const size_t at = args.pos();
    args.Seek(at + 2);
    count = std::max<int64_t>(args.Int(), 0);
    args.Seek(at);
    start = NextIntervalBound(args, true);
    end = NextIntervalBound(args, false);
    if (at + 3 < argc) {
      consumer_name = ctx.arg(at + 3);
      has_consumer = true;
      // Redis ignores anything after the consumer name.
    }
  }
  if (!args.Check()) return;
  std::string_view key = ctx.arg(1);
  auto [s, wrong_type] = LookupStreamRead(ctx, key);
  if (wrong_type) return;
  ConsumerGroup* g =
      s == nullptr || s->groups() == nullptr ? nullptr : s->groups()->Find(ctx.arg(2));
  if (g == nullptr) {
    ctx.reply.Error(NoGroupError(key, ctx.arg(2)));
    return;
  }
  const auto& pel = g->pel();
  if (summary) {
    ctx.reply.Array(4);
    ctx.reply.Integer(static_cast<int64_t>(pel.size()));
    if (pel.empty()) {
      ctx.reply.Null();
      ctx.reply.Null();
      ctx.reply.NullArray();
      return;
    }
    ReplyId(ctx.reply, pel.begin()->first);
    ReplyId(ctx.reply, std::prev(pel.end())->first);
    size_t mark = ctx.reply.DeferLength();
    size_t n = 0;
    for (const auto& [name, consumer] : g->consumers()) {
      if (consumer->pel.empty()) continue;
      ctx.reply.Array(2);
      ctx.reply.Bulk(name);
      ctx.reply.Bulk(std::to_string(consumer->pel.size()));
      ++n;
    }
    ctx.reply.SetDeferredArray(mark, n);
    return;
  }
  int64_t now = CommandTimeMs(ctx);
  auto emit = [&](const PendingEntry& p) {
    ctx.reply.Array(4);
    ReplyId(ctx.reply, p.id);
    ctx.reply.Bulk(p.consumer != nullptr ? std::string_view(p.consumer->name()) : "");
    // A NACKed entry has no delivery time: Redis 8.8 shows its idle time as -1.
    ctx.reply.Integer(p.nacked() ? -1 : std::max<int64_t>(ElapsedMs(now, p.delivery_time_ms), 0));
    ctx.reply.Integer(static_cast<int64_t>(p.delivery_count));
  };
  size_t mark = ctx.reply.DeferLength();
  size_t n = 0;
  auto visit = [&](const PendingEntry& p) {
    // NACKed entries are claimable at any idle time, so the IDLE filter keeps them.
    if (min_idle != 0 && !p.nacked() && ElapsedMs(now, p.delivery_time_ms) < min_idle) return;
    emit(p);
    ++n;
    --count;
  };
  if (has_consumer) {
    StreamConsumer* c = g->FindConsumer(consumer_name);
    if (c == nullptr) {
      ctx.reply.EmptyArray();
      return;
    }
    for (auto it = c->pel.lower_bound(start); count > 0 && it != c->pel.end() && it->first <= end;
         ++it) {
      visit(*it->second);
    }
  } else {
    for (auto it = pel.lower_bound(start); count > 0 && it != pel.end() && it->first <= end; ++it) {
      visit(it->second);
    }
  }
  ctx.reply.SetDeferredArray(mark, n);
}

// ---------------------------------------------------------------------------------------------
// XCLAIM / XAUTOCLAIM

void XClaimCommand(CommandContext& ctx) {
  std::string_view key = ctx.arg(1), group = ctx.arg(2);
  Stream* s;
  ConsumerGroup* g;
  if (!LookupGroup(ctx, key, group, &s, &g)) return;
  ArgParser args(ctx, 4);
  int64_t minidle = std::max<int64_t>(args.Int("ERR Invalid min-idle-time argument for XCLAIM"), 0);
  if (!args.Check()) return;
  // IDs run until the first argument that isn't one; options follow.
  std::vector<StreamID> ids;
  std::vector<std::string_view> id_args;
  size_t j = 5;
  for (; j < ctx.argc(); ++j) {
    StreamID id;
    if (!ParseStreamID(ctx.arg(j), &id, 0, true)) break;
    ids.push_back(id);
    id_args.push_back(ctx.arg(j));
  }
  int64_t now = CommandTimeMs(ctx);
  int64_t retry_count = -1;
  int64_t delivery_time = -1;
  bool force = false, justid = false;
  StreamID last_id;
  args.Seek(j);
  while (args.HasNext()) {
    if (args.Flag("FORCE")) {
      force = true;
    } else if (args.Flag("JUSTID")) {
      justid = true;
    } else if (args.OptionName("IDLE")) {
      delivery_time = ElapsedMs(now, args.Int("ERR Invalid IDLE option argument for XCLAIM"));
    } else if (args.OptionName("TIME")) {
      delivery_time = args.Int("ERR Invalid TIME option argument for XCLAIM");
    } else if (args.OptionName("RETRYCOUNT")) {
      retry_count = args.Int("ERR Invalid RETRYCOUNT option argument for XCLAIM");
    } else if (args.OptionName("LASTID")) {
      last_id = NextStreamID(args, 0, true);
    } else {
      args.Fail(fmt::format("ERR Unrecognized XCLAIM option '{}'", args.Peek()));
    }
  }
  if (!args.Check()) return;
  ctx.PropagateNothing();
  bool propagate_last_id = false;
  if (last_id > g->last_id) {
    g->last_id = last_id;
    propagate_last_id = true;
  }
  // A bogus time (future, negative) means "now": clients compute it from their own clocks.
  // While the AOF loads, the command clock reads 0 (see aof_loader.cc): the logged TIME of a
  // delivery is then compared with the real clock, or every replayed delivery would be at 0.
  int64_t clock_now = now > 0 ? now : NowMs();
  if (delivery_time < 0 || delivery_time > clock_now) delivery_time = clock_now;

  StreamConsumer* consumer = TouchConsumer(ctx, *g, key, group, ctx.arg(3));
  size_t mark = ctx.reply.DeferLength();
  size_t n = 0;
  uint64_t dirty = 0;
  for (size_t i = 0; i < ids.size(); ++i) {
    StreamID id = ids[i];
    PendingEntry* p = g->FindPending(id);
    if (!s->Contains(id)) {
      // Gone from the stream: drop it from the PEL instead of claiming it.
      if (p != nullptr) {
        ctx.PropagateInstead(GhostDropPropagation(key, group, *g, *p, id_args[i]));
        propagate_last_id = false;
        g->Ack(id);
        ++dirty;
      }
      continue;
    }
    bool forced = false;
    if (p == nullptr) {
      if (!force) continue;
      p = g->AddPending(id, nullptr, now, 0);
      forced = true;
    }
    if (!forced && p->consumer != nullptr && minidle != 0 &&
        ElapsedMs(now, p->delivery_time_ms) < minidle) {
      continue;
    }
    g->Reassign(p, consumer);
    p->delivery_time_ms = delivery_time;
    if (retry_count >= 0) {
      p->delivery_count = static_cast<uint64_t>(retry_count);
    } else if (!justid) {
      p->CountDelivery();
    }
    if (justid) {
      ReplyId(ctx.reply, id);
    } else {
      ReplyEntryById(ctx, *s, id);
    }
    ++n;
    consumer->active_time_ms = now;
    ctx.PropagateInstead(XClaimPropagation(key, group, *g, *p, id_args[i]));
    propagate_last_id = false;
    ++dirty;
  }
  if (propagate_last_id) {
    ctx.PropagateInstead(SetIdPropagation(key, group, *g));
    ++dirty;
  }
  ctx.reply.SetDeferredArray(mark, n);
  GroupStateWritten(ctx, dirty);
}

void XAutoClaimCommand(CommandContext& ctx) {
  std::string_view key = ctx.arg(1), group = ctx.arg(2);
  ArgParser args(ctx, 4);
  int64_t minidle =
      std::max<int64_t>(args.Int("ERR Invalid min-idle-time argument for XAUTOCLAIM"), 0);
  const StreamID start = NextIntervalBound(args, true);
  if (!args.Check()) return;
  constexpr int64_t kAttemptsFactor = 10;
  int64_t count = 100;
  bool justid = false;
  while (args.HasNext()) {
    if (args.OptionName("COUNT")) {
      constexpr int64_t kMax = std::numeric_limits<int64_t>::max() / 16;
      count = args.IntInRange(1, kMax, "ERR COUNT must be > 0");
    } else if (args.Flag("JUSTID")) {
      justid = true;
    } else {
      args.SyntaxError();
    }
  }
  if (!args.Check()) return;
  Stream* s;
  ConsumerGroup* g;
  if (!LookupGroup(ctx, key, group, &s, &g)) return;
  ctx.PropagateNothing();
  StreamConsumer* consumer = TouchConsumer(ctx, *g, key, group, ctx.arg(3));
  int64_t now = CommandTimeMs(ctx);
  int64_t attempts = count * kAttemptsFactor;
  std::vector<StreamID> deleted;
  ctx.reply.Array(3);
  // The cursor comes first but is known last: build the claimed entries aside.
  std::string claimed;
  ReplyBuilder entries(&claimed);
  entries.set_resp3(ctx.reply.resp3());
  size_t n = 0;
  uint64_t dirty = 0;
  const auto& pel = g->pel();
  // NACKed entries come first, in NACK order, whatever the cursor and min-idle-time say; the
  // PEL scan after them only ever meets owned entries.
  PendingEntry* nacked = nullptr;
  auto it = pel.lower_bound(start);
  while (attempts-- > 0 && count > 0 &&
         ((nacked = g->FirstNacked()) != nullptr || it != pel.end())) {
    PendingEntry* p = nacked;
    if (p == nullptr) {
      p = g->FindPending(it->first);
      ++it;
    } else if (it != pel.end() && it->first == p->id) {
      ++it;  // the cursor must not point at an entry about to be acknowledged
    }
    StreamID id = p->id;
    if (!s->Contains(id)) {
      ctx.PropagateInstead(GhostDropPropagation(key, group, *g, *p, id.ToString()));
      g->Ack(id);
      deleted.push_back(id);
      --count;
      ++dirty;
      continue;
    }
    if (nacked == nullptr && minidle != 0 && ElapsedMs(now, p->delivery_time_ms) < minidle)
      continue;
    g->Reassign(p, consumer);
    p->delivery_time_ms = now;
    if (!justid) p->CountDelivery();
    if (justid) {
      ReplyId(entries, id);
    } else {
      s->Range(id, id, false, 1, [&](const StreamEntryView& e) {
        ReplyEntry(entries, e);
        return true;
      });
    }
    ++n;
    --count;
    consumer->active_time_ms = now;
    ctx.PropagateInstead(XClaimPropagation(key, group, *g, *p, id.ToString()));
    ++dirty;
  }
  ReplyId(ctx.reply, it == pel.end() ? StreamID::Min() : it->first);
  ctx.reply.Array(n);
  ctx.reply.Raw(claimed);
  ctx.reply.Array(deleted.size());
  for (StreamID id : deleted) ReplyId(ctx.reply, id);
  GroupStateWritten(ctx, dirty);
}

// ---------------------------------------------------------------------------------------------
// XINFO

void ReplyLag(CommandContext& ctx, const Stream& s, const ConsumerGroup& g) {
  int64_t entries_read;
  if (s.entries_added() == 0) {
    ctx.reply.Integer(0);
    return;
  }
  if (g.entries_read != ConsumerGroup::kInvalidEntriesRead &&
      !s.RangeHasTombstones(g.last_id, StreamID::Max())) {
    ctx.reply.Integer(static_cast<int64_t>(s.entries_added()) - g.entries_read);
    return;
  }
  entries_read = s.EstimateDistanceFromFirstEver(g.last_id);
  if (entries_read < 0) {
    ctx.reply.Null();
  } else {
    ctx.reply.Integer(static_cast<int64_t>(s.entries_added()) - entries_read);
  }
}

void ReplyEntriesRead(CommandContext& ctx, const ConsumerGroup& g) {
  if (g.entries_read == ConsumerGroup::kInvalidEntriesRead) {
    ctx.reply.Null();
  } else {
    ctx.reply.Integer(g.entries_read);
  }
}

Stream* XInfoStream(CommandContext& ctx) {
  auto [s, wrong_type] = LookupStreamRead(ctx, ctx.arg(2));
  if (wrong_type) return nullptr;
  if (s == nullptr) ctx.reply.Error(errors::kNoSuchKey);
  return s;
}

std::string XInfoSyntaxError(const CommandContext& ctx) {
  return fmt::format(
      "ERR unknown subcommand or wrong number of arguments for '{}'. Try XINFO HELP.", ctx.arg(1));
}

void XInfoSyntax(CommandContext& ctx) { ctx.reply.Error(XInfoSyntaxError(ctx)); }

void XInfoStreamCommand(CommandContext& ctx) {
  // The key first: Redis answers WRONGTYPE / no such key before it reads FULL and COUNT.
  Stream* s = XInfoStream(ctx);
  if (s == nullptr) return;
  bool full = false;
  int64_t count = 10;
  ArgParser args(ctx, 3);
  // Nothing, FULL, or FULL COUNT n.
  if (args.HasNext()) {
    const size_t optc = args.remaining();
    if ((optc != 1 && optc != 3) || !args.Flag("FULL") || (optc == 3 && !args.Flag("COUNT"))) {
      args.Fail(XInfoSyntaxError(ctx));
    }
    full = true;
    if (args.HasNext()) {
      const int64_t n = args.Int();
      count = n < 0 ? 10 : n;
    }
  }
  if (!args.Check()) return;
  ReplyBuilder& r = ctx.reply;
  // Redis 8.6's IDMP fields come with a stream that has IDMP state (XADD IDMP/IDMPAUTO,
  // XCFGSET); any other stream answers in Redis 7.2's shape, which 7.x clients and tests count.
  const bool idmp = s->idmp() != nullptr;
  r.Map((full ? 9 : 10) + (idmp ? 6 : 0));
  r.Bulk("length");
  r.Integer(static_cast<int64_t>(s->length()));
  r.Bulk("radix-tree-keys");
  r.Integer(static_cast<int64_t>(s->block_count()));
  r.Bulk("radix-tree-nodes");
  // A radix tree of N 128-bit keys has roughly 2N nodes; blocks are in a balanced tree here.
  r.Integer(static_cast<int64_t>(s->block_count() * 2 + 1));
  r.Bulk("last-generated-id");
  ReplyId(r, s->last_id());
  r.Bulk("max-deleted-entry-id");
  ReplyId(r, s->max_deleted_id());
  r.Bulk("entries-added");
  r.Integer(static_cast<int64_t>(s->entries_added()));
  r.Bulk("recorded-first-entry-id");
  ReplyId(r, s->first_id());
  if (idmp) ReplyIdmpInfo(ctx, *s);  // Redis 8.6: idmp-duration ... iids-duplicates
  const StreamGroups* groups = s->groups();
  if (!full) {
    r.Bulk("groups");
    r.Integer(groups == nullptr ? 0 : static_cast<int64_t>(groups->size()));
    r.Bulk("first-entry");
    if (s->Range(StreamID::Min(), StreamID::Max(), false, 1, [&](const StreamEntryView& e) {
          ReplyEntry(r, e);
          return true;
        }) == 0) {
      r.Null();
    }
    r.Bulk("last-entry");
    if (s->Range(StreamID::Min(), StreamID::Max(), true, 1, [&](const StreamEntryView& e) {
          ReplyEntry(r, e);
          return true;
        }) == 0) {
      r.Null();
    }
    return;
  }
  size_t limit = static_cast<size_t>(count);
  r.Bulk("entries");
  size_t mark = r.DeferLength();
  size_t n =
      s->Range(StreamID::Min(), StreamID::Max(), false, limit, [&](const StreamEntryView& e) {
        ReplyEntry(r, e);
        return true;
      });
  r.SetDeferredArray(mark, n);
  r.Bulk("groups");
  if (groups == nullptr) {
    r.EmptyArray();
    return;
  }
  r.Array(groups->size());
  for (const auto& [name, g] : groups->all()) {
    r.Map(8);
    r.Bulk("name");
    r.Bulk(name);
    r.Bulk("last-delivered-id");
    ReplyId(r, g->last_id);
    r.Bulk("entries-read");
    ReplyEntriesRead(ctx, *g);
    r.Bulk("lag");
    ReplyLag(ctx, *s, *g);
    r.Bulk("pel-count");
    r.Integer(static_cast<int64_t>(g->pel().size()));
    r.Bulk("pending");
    size_t pel_n = limit == 0 ? g->pel().size() : std::min(limit, g->pel().size());
    r.Array(pel_n);
    size_t i = 0;
    for (auto it = g->pel().begin(); i < pel_n; ++it, ++i) {
      const PendingEntry& p = it->second;
      r.Array(4);
      ReplyId(r, p.id);
      r.Bulk(p.consumer != nullptr ? std::string_view(p.consumer->name()) : "");
      r.Integer(p.delivery_time_ms);
      r.Integer(static_cast<int64_t>(p.delivery_count));
    }
    r.Bulk("consumers");
    r.Array(g->consumers().size());
    for (const auto& [cname, c] : g->consumers()) {
      r.Map(5);
      r.Bulk("name");
      r.Bulk(cname);
      r.Bulk("seen-time");
      r.Integer(c->seen_time_ms);
      r.Bulk("active-time");
      r.Integer(c->active_time_ms);
      r.Bulk("pel-count");
      r.Integer(static_cast<int64_t>(c->pel.size()));
      r.Bulk("pending");
      size_t cn = limit == 0 ? c->pel.size() : std::min(limit, c->pel.size());
      r.Array(cn);
      size_t k = 0;
      for (auto it = c->pel.begin(); k < cn; ++it, ++k) {
        r.Array(3);
        ReplyId(r, it->first);
        r.Integer(it->second->delivery_time_ms);
        r.Integer(static_cast<int64_t>(it->second->delivery_count));
      }
    }
    // Redis 8.8: how many of the group's pending entries sit in the NACK zone.
    r.Bulk("nacked-count");
    r.Integer(static_cast<int64_t>(g->nacked_count()));
  }
}

void XInfoGroupsCommand(CommandContext& ctx) {
  Stream* s = XInfoStream(ctx);
  if (s == nullptr) return;
  const StreamGroups* groups = s->groups();
  if (groups == nullptr) {
    ctx.reply.EmptyArray();
    return;
  }
  ctx.reply.Array(groups->size());
  for (const auto& [name, g] : groups->all()) {
    ctx.reply.Map(6);
    ctx.reply.Bulk("name");
    ctx.reply.Bulk(name);
    ctx.reply.Bulk("consumers");
    ctx.reply.Integer(static_cast<int64_t>(g->consumers().size()));
    ctx.reply.Bulk("pending");
    ctx.reply.Integer(static_cast<int64_t>(g->pel().size()));
    ctx.reply.Bulk("last-delivered-id");
    ReplyId(ctx.reply, g->last_id);
    ctx.reply.Bulk("entries-read");
    ReplyEntriesRead(ctx, *g);
    ctx.reply.Bulk("lag");
    ReplyLag(ctx, *s, *g);
  }
}

void XInfoConsumersCommand(CommandContext& ctx) {
  Stream* s = XInfoStream(ctx);
  if (s == nullptr) return;
  const ConsumerGroup* g = s->groups() == nullptr ? nullptr : s->groups()->Find(ctx.arg(3));
  if (g == nullptr) {
    ctx.reply.Error(fmt::format("NOGROUP No such consumer group '{}' for key name '{}'", ctx.arg(3),
                                ctx.arg(2)));
    return;
  }
  int64_t now = CommandTimeMs(ctx);
  ctx.reply.Array(g->consumers().size());
  for (const auto& [name, c] : g->consumers()) {
    ctx.reply.Map(4);
    ctx.reply.Bulk("name");
    ctx.reply.Bulk(name);
    ctx.reply.Bulk("pending");
    ctx.reply.Integer(static_cast<int64_t>(c->pel.size()));
    ctx.reply.Bulk("idle");
    ctx.reply.Integer(std::max<int64_t>(ElapsedMs(now, c->seen_time_ms), 0));
    ctx.reply.Bulk("inactive");
    ctx.reply.Integer(c->active_time_ms != -1 ? ElapsedMs(now, c->active_time_ms) : -1);
  }
}

void XInfoHelpCommand(CommandContext& ctx) {
  ReplyHelp(ctx, "XINFO",
            {"CONSUMERS <key> <groupname>", "    Show consumers of <groupname>.", "GROUPS <key>",
             "    Show the stream consumer groups.", "STREAM <key> [FULL [COUNT <count>]",
             "    Show information about the stream."});
}

void XInfoCommand(CommandContext& ctx) { XInfoSyntax(ctx); }

}  // namespace

namespace stream_cmd {

// A NACKed entry has no owner, and an XCLAIM to "" would create a consumer with an empty name
// on the replica: it is logged as the XACK that dropping it amounts to.
std::vector<std::string> GhostDropPropagation(std::string_view key, std::string_view group,
                                              const ConsumerGroup& cg, const PendingEntry& pending,
                                              std::string_view id_arg) {
  if (pending.consumer == nullptr) {
    return {"XACK", std::string(key), std::string(group), std::string(id_arg)};
  }
  return XClaimPropagation(key, group, cg, pending, id_arg);
}

}  // namespace stream_cmd

// XNACK lives in stream_nack.cc.
void RegisterStreamNackCommands(CommandTable& table);

void RegisterStreamGroupCommands(CommandTable& table) {
  constexpr const char* kGroup = "stream";
  constexpr const char* kHelpSummary = "Returns helpful text about the different subcommands.";
  table.Add({"xgroup", -2, 0, Keys(), 0, kGroup, "5.0.0",
             "A container for consumer groups commands.", "", XGroupCommand,
             "Depends on subcommand."});
  table.AddSubcommand("xgroup",
                      {"create", -5, kCmdWrite | kCmdDenyOom, Keys(KeyAt(2, kKeyRW | kKeyInsert)),
                       kAclStream, kGroup, "5.0.0", "Creates a consumer group.",
                       "key group id-selector=<id | new-id=$> [MKSTREAM] [ENTRIESREAD "
                       "entries-read:integer]",
                       XGroupCreateCommand, "O(1)"});
  table.AddSubcommand(
      "xgroup", {"setid", -5, kCmdWrite, Keys(KeyAt(2, kKeyRW | kKeyUpdate)), kAclStream, kGroup,
                 "5.0.0", "Sets the last-delivered ID of a consumer group.",
                 "key group id-selector=<id | new-id=$> [ENTRIESREAD "
                 "entriesread=entries-read:integer]",
                 XGroupSetIdCommand, "O(1)"});
  table.AddSubcommand(
      "xgroup", {"destroy", 4, kCmdWrite, Keys(KeyAt(2, kKeyRW | kKeyDelete)), kAclStream, kGroup,
                 "5.0.0", "Destroys a consumer group.", "key group", XGroupDestroyCommand,
                 "O(N) where N is the number of entries in the group's pending entries list "
                 "(PEL)."});
  table.AddSubcommand(
      "xgroup", {"createconsumer", 5, kCmdWrite | kCmdDenyOom, Keys(KeyAt(2, kKeyRW | kKeyInsert)),
                 kAclStream, kGroup, "6.2.0", "Creates a consumer in a consumer group.",
                 "key group consumer", XGroupCreateConsumerCommand, "O(1)"});
  table.AddSubcommand(
      "xgroup", {"delconsumer", 5, kCmdWrite, Keys(KeyAt(2, kKeyRW | kKeyDelete)), kAclStream,
                 kGroup, "5.0.0", "Deletes a consumer from a consumer group.", "key group consumer",
                 XGroupDelConsumerCommand, "O(1)"});
  table.AddSubcommand("xgroup", {"help", 2, kCmdLoading | kCmdStale, Keys(), kAclStream, kGroup,
                                 "5.0.0", kHelpSummary, "", XGroupHelpCommand, "O(1)"});
  table.Add({"xack", -4, kCmdWrite | kCmdFast, Keys(KeyAt(1, kKeyRW | kKeyUpdate)), kAclStream,
             kGroup, "5.0.0",
             "Returns the number of messages that were successfully acknowledged by the consumer "
             "group member of a stream.",
             "key group id:string ...", XAckCommand, "O(1) for each message ID processed."});
  table.Add({"xpending", -3, kCmdReadonly, Keys(KeyAt(1, kKeyRO | kKeyAccess)), kAclStream, kGroup,
             "5.0.0",
             "Returns the information and entries from a stream consumer group's pending entries "
             "list.",
             "key group [filters=<[IDLE min-idle-time:integer] start:string end:string "
             "count [consumer]>]",
             XPendingCommand,
             "O(N) with N being the number of elements returned, so asking for a small fixed "
             "number of entries per call is O(1). O(M), where M is the total number of entries "
             "scanned when used with the IDLE filter. When the command returns just the summary "
             "and the list of consumers is small, it runs in O(1) time; otherwise, an additional "
             "O(N) time for iterating every consumer."});
  table.Add({"xclaim", -6, kCmdWrite | kCmdFast, Keys(KeyAt(1, kKeyRW | kKeyUpdate)), kAclStream,
             kGroup, "5.0.0",
             "Changes, or acquires, ownership of a message in a consumer group, as if the message "
             "was delivered a consumer group member.",
             "key group consumer min-idle-time id:string ... [IDLE ms:integer] [TIME "
             "unix-time-milliseconds] [RETRYCOUNT count] [FORCE] [JUSTID] [LASTID "
             "lastid]",
             XClaimCommand,
             "O(log N) with N being the number of messages in the PEL of the "
             "consumer group."});
  table.Add({"xautoclaim", -6, kCmdWrite | kCmdFast, Keys(KeyAt(1, kKeyRW | kKeyDelete)),
             kAclStream, kGroup, "6.2.0",
             "Changes, or acquires, ownership of messages in a consumer group, as if the messages "
             "were delivered to as consumer group member.",
             "key group consumer min-idle-time start:string [COUNT count] [JUSTID]",
             XAutoClaimCommand, "O(1) if COUNT is small."});
  table.Add({"xinfo", -2, 0, Keys(), 0, kGroup, "5.0.0",
             "A container for stream introspection commands.", "", XInfoCommand,
             "Depends on subcommand."});
  table.AddSubcommand(
      "xinfo", {"consumers", 4, kCmdReadonly, Keys(KeyAt(2, kKeyRO | kKeyAccess)), kAclStream,
                kGroup, "5.0.0", "Returns a list of the consumers in a consumer group.",
                "key group", XInfoConsumersCommand, "O(1)"});
  table.AddSubcommand(
      "xinfo",
      {"groups", 3, kCmdReadonly, Keys(KeyAt(2, kKeyRO | kKeyAccess)), kAclStream, kGroup, "5.0.0",
       "Returns a list of the consumer groups of a stream.", "key", XInfoGroupsCommand, "O(1)"});
  table.AddSubcommand(
      "xinfo", {"stream", -3, kCmdReadonly, Keys(KeyAt(2, kKeyRO | kKeyAccess)), kAclStream, kGroup,
                "5.0.0", "Returns information about a stream.",
                "key [full-block=<FULL [COUNT count]>]", XInfoStreamCommand, "O(1)"});
  table.AddSubcommand("xinfo", {"help", 2, kCmdLoading | kCmdStale, Keys(), kAclStream, kGroup,
                                "5.0.0", kHelpSummary, "", XInfoHelpCommand, "O(1)"});
  RegisterStreamNackCommands(table);
}

}  // namespace vireo
