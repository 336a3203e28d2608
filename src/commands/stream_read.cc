// XREAD and XREADGROUP, and their blocking forms, including XREADGROUP ... CLAIM (Redis 8.4):
// a reader that first takes over idle pending entries of its group, then reads new ones, and
// MAXCOUNT / MAXSIZE (Redis 8.10): one budget of entries and reply bytes for the whole command.
#include <fmt/format.h>

#include <algorithm>
#include <asio.hpp>  // XREADGROUP CLAIM arms its own wake-up timer
#include <limits>

#include "commands/stream_common.h"
#include "core/arg_parser.h"
#include "scripting/scripting.h"
#include "server/blocking_service.h"
#include "server/client.h"
#include "server/command_clock.h"
#include "server/command_context.h"
#include "server/event_loop.h"
#include "util/clock.h"
#include "util/strings.h"

namespace vireo {
namespace {

using namespace stream_cmd;  // NOLINT

struct ReadArgs {
  bool group_mode = false;  // XREADGROUP
  int64_t timeout_ms = -1;  // -1: no BLOCK
  int64_t count = 0;        // 0: no limit
  int64_t max_count = 0;    // MAXCOUNT; 0: none
  int64_t max_size = 0;     // MAXSIZE; 0: none
  bool noack = false;
  int64_t claim_min_idle = -1;  // -1: no CLAIM
  std::string_view group;
  std::string_view consumer;
  size_t streams_at = 0;  // argv index of the first key
  size_t nstreams = 0;
};

bool ParseReadArgs(CommandContext& ctx, bool group_mode, ReadArgs* args) {
  args->group_mode = group_mode;
  bool has_group = false;
  ArgParser p(ctx, 1);
  // An option valid only for XREADGROUP, given to XREAD.
  auto group_only = [&](std::string_view option) {
    if (group_mode) return true;
    return p.Fail(fmt::format(
        "ERR The {} option is only supported by XREADGROUP. You called XREAD instead.", option));
  };
  while (p.HasNext()) {
    if (p.OptionName("BLOCK")) {
      // Redis 7.2 refuses BLOCK from scripts (7.4 lets it run non-blocking).
      if (ctx.scripting().running() != nullptr) {
        // The name as the script spelled it, as Redis prints argv[0].
        p.Fail(fmt::format("ERR {} command is not allowed with BLOCK option from scripts",
                           ctx.arg(0)));
      }
      args->timeout_ms = p.TimeoutMs(ctx.db.now_ms());
    } else if (p.OptionName("COUNT")) {
      args->count = std::max<int64_t>(p.Int(), 0);
    } else if (p.OptionName("MAXCOUNT")) {
      args->max_count = p.Int();
      if (args->max_count <= 0) p.Fail("ERR MAXCOUNT must be a positive integer");
    } else if (p.OptionName("MAXSIZE")) {
      args->max_size = p.Int();
      if (args->max_size <= 0) p.Fail("ERR MAXSIZE must be a positive integer");
    } else if (p.OptionName("STREAMS")) {
      args->streams_at = p.pos();
      size_t n = p.remaining();
      if (n % 2 != 0) {
        p.Fail(fmt::format(
            "ERR Unbalanced '{}' list of streams: for each stream key an ID or '{}' must be "
            "specified.",
            group_mode ? "xreadgroup" : "xread", group_mode ? '>' : '$'));
      }
      args->nstreams = n / 2;
      break;
    } else if (p.remaining() >= 3 && p.Flag("GROUP")) {
      if (!group_only("GROUP")) break;
      args->group = p.Next();
      args->consumer = p.Next();
      has_group = true;
    } else if (p.OptionName("CLAIM")) {
      if (!group_only("CLAIM")) break;
      int64_t t = p.Int("ERR min-idle-time is not an integer");
      if (t < 0) p.Fail("ERR min-idle-time must be a positive integer");
      args->claim_min_idle = t;  // repeated: the last one counts
    } else if (p.Flag("NOACK")) {
      if (!group_only("NOACK")) break;
      args->noack = true;
    } else {
      p.SyntaxError();
    }
  }
  if (args->streams_at == 0) p.SyntaxError();
  if (group_mode && !has_group) p.Fail("ERR Missing GROUP option for XREADGROUP");
  // MAXCOUNT caps the sum of per-stream COUNTs, so a smaller one is a contradiction.
  if (args->max_count > 0 && args->count > args->max_count) {
    p.Fail("ERR MAXCOUNT must be greater than or equal to COUNT");
  }
  return p.Check();
}

// What is left of MAXCOUNT / MAXSIZE while the streams are served in order. MAXSIZE is checked
// before each entry against the reply bytes already written, and only once an entry is out, so
// one entry larger than MAXSIZE is still returned rather than an empty reply.
class ReadBudget {
 public:
  static constexpr size_t kUnlimited = std::numeric_limits<size_t>::max();
  ReadBudget(const ReadArgs& args, ReplyBuilder& reply)
      : max_count_(args.max_count > 0 ? static_cast<size_t>(args.max_count) : kUnlimited),
        max_size_(args.max_size > 0 ? static_cast<size_t>(args.max_size) : kUnlimited),
        reply_(reply),
        start_(reply.DeferLength()) {}
  bool Exhausted() const {
    if (entries_ >= max_count_) return true;
    return entries_ > 0 && max_size_ != kUnlimited && reply_.DeferLength() - start_ >= max_size_;
  }
  // How many more entries MAXCOUNT allows, within `limit` (kUnlimited: none).
  size_t Cap(size_t limit) const { return std::min(limit, max_count_ - entries_); }
  void Took() { ++entries_; }

 private:
  size_t max_count_;
  size_t max_size_;
  ReplyBuilder& reply_;
  size_t start_;
  size_t entries_ = 0;
};

// Serves an XREAD waiter once its stream has an entry after the ID it reads after.
class XReadCondition : public WaitCondition {
 public:
  void Add(std::string_view key, StreamID after) { after_.emplace_back(std::string(key), after); }
  bool Ready(std::string_view key, const Value* value) const override {
    if (value == nullptr || value->type() != ValueType::kStream) return false;
    const Stream* s = value->As<Stream>();
    if (s->empty()) return false;
    StreamID last;
    bool have_last = false;
    for (const auto& [k, after] : after_) {
      if (k != key || s->last_id() <= after) continue;
      if (!have_last) {
        s->LastEntryId(&last);
        have_last = true;
      }
      if (last > after) return true;
    }
    return false;
  }

 private:
  std::vector<std::pair<std::string, StreamID>> after_;
};

// Serves an XREADGROUP waiter when its group has entries it never delivered, or when the key
// or the group is gone (running the command again then gives the error).
class XReadGroupCondition : public WaitCondition {
 public:
  explicit XReadGroupCondition(std::string_view group) : group_(group) {}
  bool Ready(std::string_view key, const Value* value) const override {
    if (value == nullptr || value->type() != ValueType::kStream) return true;
    const Stream* s = value->As<Stream>();
    const ConsumerGroup* g = s->groups() == nullptr ? nullptr : s->groups()->Find(group_);
    if (g == nullptr) return true;
    if (s->empty() || s->last_id() <= g->last_id) return false;
    StreamID last;
    return s->LastEntryId(&last) && last > g->last_id;
  }
  bool WakeOnChange() const override { return true; }

 protected:
  std::string group_;
};

// When a pending entry of `g` that nobody released becomes claimable by a reader with
// `min_idle` (unix ms), or INT64_MAX if none ever will (empty PEL, or a huge min-idle).
int64_t NextClaimableAt(const ConsumerGroup& g, int64_t min_idle) {
  int64_t due = std::numeric_limits<int64_t>::max();
  for (const auto& [id, p] : g.pel()) {
    if (p.nacked() || p.delivery_time_ms > std::numeric_limits<int64_t>::max() - min_idle) {
      continue;
    }
    due = std::min(due, p.delivery_time_ms + min_idle);
  }
  return due;
}

// An XREADGROUP ... CLAIM waiter is also served when its group has NACKed entries (XNACK signals
// the key) or when a pending entry has been idle for min-idle-time. Nothing signals the latter,
// so the condition keeps a timer for the earliest such moment and signals its keys then; the
// timer goes with the condition when the client stops waiting.
class XReadGroupClaimCondition : public XReadGroupCondition {
 public:
  XReadGroupClaimCondition(std::string_view group, int64_t min_idle, const CommandContext& ctx,
                           std::vector<std::string> keys)
      : XReadGroupCondition(group),
        min_idle_(min_idle),
        wake_(std::make_shared<WakeTarget>(WakeTarget{&ctx.command_clock(), &ctx.loop(),
                                                      &ctx.blocking(), ctx.client.db_index(),
                                                      std::move(keys)})),
        timer_(ctx.loop().io()) {}

  bool Ready(std::string_view key, const Value* value) const override {
    if (XReadGroupCondition::Ready(key, value)) return true;
    // The base class answered true for a missing key or group: both exist here.
    const ConsumerGroup& g = *value->As<Stream>()->groups()->Find(group_);
    if (g.nacked_count() > 0) return true;
    int64_t due = NextClaimableAt(g, min_idle_);
    if (due <= wake_->clock->ms()) return true;
    WakeAt(due);
    return false;
  }

  // Arms the timer for `due_ms` (unix ms) unless it is already armed for an earlier time.
  void WakeAt(int64_t due_ms) const {
    if (due_ms == std::numeric_limits<int64_t>::max()) return;
    if (wake_->armed_for != 0 && wake_->armed_for <= due_ms) return;
    wake_->armed_for = due_ms;
    // Far-off times are re-checked daily rather than fed to the clock as they are.
    constexpr int64_t kMaxDelayMs = 24 * 3600 * 1000;
    // One more ms: the wall clock is read in whole ms, and waking early only means re-arming.
    int64_t delay = std::clamp<int64_t>(due_ms - NowMs() + 1, 0, kMaxDelayMs);
    timer_.expires_after(std::chrono::milliseconds(delay));
    wake_->loop->NoteTimer(timer_);
    // A handler asio has already queued still runs, with success, after the timer is re-armed
    // or destroyed (e.g. the client timed out in the same loop turn): it must not touch the
    // condition, only the target it can tell is gone.
    timer_.async_wait([target = std::weak_ptr<WakeTarget>(wake_)](const asio::error_code& ec) {
      std::shared_ptr<WakeTarget> wake = target.lock();
      if (ec || wake == nullptr) return;
      wake->armed_for = 0;
      // The ready-keys pass asks Ready again, which serves the client or re-arms.
      for (const std::string& k : wake->keys) wake->blocking->SignalKeyAsReady(wake->db, k);
    });
  }

 private:
  struct WakeTarget {
    // The server's components the timer reaches after the command has returned.
    CommandClock* clock;
    EventLoop* loop;
    BlockingService* blocking;
    int db;
    std::vector<std::string> keys;
    int64_t armed_for = 0;  // unix ms the timer is armed for; 0 = not armed
  };

  int64_t min_idle_;
  std::shared_ptr<WakeTarget> wake_;
  mutable asio::steady_timer timer_;
};

// [id, [field, value, ...], idle-ms, previous-deliveries]: an entry as XREADGROUP ... CLAIM
// returns it.
void ReplyClaimEntry(ReplyBuilder& reply, const StreamEntryView& e, int64_t idle_ms,
                     uint64_t previous_deliveries) {
  reply.Array(4);
  ReplyId(reply, e.id);
  reply.Array(e.field_values.size());
  for (std::string_view f : e.field_values) reply.Bulk(f);
  reply.Integer(idle_ms);
  reply.Integer(static_cast<int64_t>(previous_deliveries));
}

// Delivers up to `limit` entries after the group's last ID to `consumer`, as XREADGROUP ... >
// does: the group advances, entries enter the PEL (unless NOACK), each delivery is propagated
// as an XCLAIM (whose LASTID carries the group's new last ID) and, with NOACK, the new last ID
// as XGROUP SETID: exactly Redis 7.2's propagation. The caller opens the reply array.
size_t ReplyNewForGroup(CommandContext& ctx, Stream& s, ConsumerGroup& g, StreamConsumer& consumer,
                        std::string_view key, std::string_view group, size_t limit, bool noack,
                        bool claim_format, ReadBudget& budget) {
  StreamID start = g.last_id;
  size_t n = 0;
  bool moved = false;
  int64_t now = CommandTimeMs(ctx);
  if (limit > 0 && start.Increment()) {
    Stream::Iterator it(s, start, StreamID::Max(), false);
    StreamEntryView e;
    // The budget is checked before taking an entry: one not sent stays undelivered.
    while (n < limit && !budget.Exhausted() && it.Next(&e)) {
      budget.Took();
      if (e.id > g.last_id) {
        if (g.entries_read != ConsumerGroup::kInvalidEntriesRead &&
            !s.RangeHasTombstones(e.id, StreamID::Max())) {
          ++g.entries_read;
        } else if (s.entries_added() != 0) {
          g.entries_read = s.EstimateDistanceFromFirstEver(e.id);
        }
        g.last_id = e.id;
        moved = true;
      }
      if (claim_format) {
        ReplyClaimEntry(ctx.reply, e, 0, 0);
      } else {
        ReplyEntry(ctx.reply, e);
      }
      if (!noack) {
        PendingEntry* pending = g.Deliver(e.id, &consumer, now);
        consumer.active_time_ms = now;
        ctx.PropagateInstead(XClaimPropagation(key, group, g, *pending, e.id.ToString()));
      }
      ++n;
    }
  }
  if (moved && noack) ctx.PropagateInstead(SetIdPropagation(key, group, g));
  return n;
}

// The pending entries a CLAIM reader takes, in order: the NACK zone (in NACK order), then owned
// entries idle for at least `min_idle`, longest idle first; at most `limit`. Entries whose
// stream entry is gone are dropped from the PEL on the way, as XCLAIM does, and not returned.
std::vector<PendingEntry*> CollectClaimable(CommandContext& ctx, Stream& s, ConsumerGroup& g,
                                            std::string_view key, std::string_view group,
                                            int64_t min_idle, size_t limit, int64_t now) {
  std::vector<PendingEntry*> out;
  if (limit == 0) return out;
  uint64_t dropped = 0;
  auto take = [&](PendingEntry* p) {
    if (s.Contains(p->id)) {
      out.push_back(p);
      return;
    }
    ctx.PropagateInstead(GhostDropPropagation(key, group, g, *p, p->id.ToString()));
    g.Ack(p->id);
    ++dropped;
  };
  for (const PendingEntry* nacked : g.NackedInOrder()) {
    if (out.size() == limit) break;
    take(g.FindPending(nacked->id));
  }
  if (out.size() < limit) {
    std::vector<PendingEntry*> idle;
    for (const auto& [id, p] : g.pel()) {
      if (!p.nacked() && ElapsedMs(now, p.delivery_time_ms) >= min_idle) {
        idle.push_back(g.FindPending(id));
      }
    }
    auto longest_idle_first = [](const PendingEntry* a, const PendingEntry* b) {
      return a->delivery_time_ms != b->delivery_time_ms ? a->delivery_time_ms < b->delivery_time_ms
                                                        : a->id < b->id;
    };
    // Usually only COUNT of them are wanted: order just those, and the rest only if deleted
    // entries among the first ones leave room.
    size_t want = limit - out.size();
    auto sorted_end = idle.size() > want ? idle.begin() + static_cast<ptrdiff_t>(want) : idle.end();
    std::partial_sort(idle.begin(), sorted_end, idle.end(), longest_idle_first);
    for (auto it = idle.begin(); it != idle.end() && out.size() < limit; ++it) {
      if (it == sorted_end) {
        std::sort(sorted_end, idle.end(), longest_idle_first);
        sorted_end = idle.end();
      }
      take(*it);
    }
  }
  if (dropped > 0) GroupStateWritten(ctx, dropped);
  return out;
}

// Claims `entries` for `consumer` and replies them in the CLAIM format; the idle time and count
// shown are the ones before this delivery (a NACKed entry has no delivery time: -1).
size_t ReplyClaimed(CommandContext& ctx, Stream& s, ConsumerGroup& g, StreamConsumer& consumer,
                    std::string_view key, std::string_view group,
                    const std::vector<PendingEntry*>& entries, int64_t now, ReadBudget& budget) {
  size_t n = 0;
  for (PendingEntry* p : entries) {
    // Over MAXSIZE: the rest stay pending as they were.
    if (budget.Exhausted()) break;
    budget.Took();
    ++n;
    int64_t idle = p->nacked() ? -1 : std::max<int64_t>(ElapsedMs(now, p->delivery_time_ms), 0);
    uint64_t previous = p->delivery_count;
    s.Range(p->id, p->id, false, 1, [&](const StreamEntryView& e) {
      ReplyClaimEntry(ctx.reply, e, idle, previous);
      return true;
    });
    g.Reassign(p, &consumer);
    p->delivery_time_ms = now;
    p->CountDelivery();
    consumer.active_time_ms = now;
    ctx.PropagateInstead(XClaimPropagation(key, group, g, *p, p->id.ToString()));
  }
  return n;
}

// XREADGROUP with an ID: the consumer's own pending entries after `after`; entries deleted from
// the stream meanwhile show as [id, nil].
void ReplyConsumerHistory(CommandContext& ctx, Stream& s, StreamConsumer& consumer, StreamID after,
                          size_t count, ReadBudget& budget) {
  size_t mark = ctx.reply.DeferLength();
  size_t n = 0;
  if (after.Increment()) {
    int64_t now = CommandTimeMs(ctx);
    for (auto it = consumer.pel.lower_bound(after);
         it != consumer.pel.end() && (count == 0 || n < count) && !budget.Exhausted(); ++it) {
      budget.Took();
      PendingEntry* pending = it->second;
      size_t found = s.Range(it->first, it->first, false, 1, [&](const StreamEntryView& e) {
        ReplyEntry(ctx.reply, e);
        return true;
      });
      if (found == 0) {
        ctx.reply.Array(2);
        ReplyId(ctx.reply, it->first);
        ctx.reply.NullArray();
      } else {
        pending->delivery_time_ms = now;
        pending->CountDelivery();
      }
      ++n;
    }
  }
  ctx.reply.SetDeferredArray(mark, n);
}

void ReadGeneric(CommandContext& ctx, bool group_mode) {
  ReadArgs args;
  if (!ParseReadArgs(ctx, group_mode, &args)) return;
  // Redis never logs XREADGROUP itself: its effects are logged as XCLAIM / XGROUP commands.
  if (group_mode) ctx.PropagateNothing();

  // Resolve every key's ID (and group) before serving anything.
  constexpr StreamID kNewOnly = StreamID::Max();  // ">"
  std::vector<StreamID> ids(args.nstreams);
  std::vector<ConsumerGroup*> groups(args.nstreams, nullptr);
  std::vector<bool> dollar(args.nstreams, false);
  for (size_t i = 0; i < args.nstreams; ++i) {
    std::string_view key = ctx.arg(args.streams_at + i);
    std::string_view id_arg = ctx.arg(args.streams_at + args.nstreams + i);
    auto [s, wrong_type] = LookupStreamRead(ctx, key);
    if (wrong_type) return;
    if (group_mode) {
      ConsumerGroup* g =
          s == nullptr || s->groups() == nullptr ? nullptr : s->groups()->Find(args.group);
      if (g == nullptr) {
        ctx.reply.Error(fmt::format(
            "NOGROUP No such key '{}' or consumer group '{}' in XREADGROUP with GROUP option", key,
            args.group));
        return;
      }
      groups[i] = g;
    }
    if (id_arg == "$") {
      if (group_mode) {
        ctx.reply.Error(
            "ERR The $ ID is meaningless in the context of XREADGROUP: you want to read the "
            "history of this consumer by specifying a proper ID, or use the > ID to get new "
            "messages. The $ ID would just return an empty result set.");
        return;
      }
      ids[i] = s != nullptr ? s->last_id() : StreamID::Min();
      dollar[i] = true;
      continue;
    }
    if (id_arg == ">") {
      if (!group_mode) {
        ctx.reply.Error(
            "ERR The > ID can be specified only when calling XREADGROUP using the GROUP <group> "
            "<consumer> option.");
        return;
      }
      ids[i] = kNewOnly;
      continue;
    }
    if (!group_mode && id_arg == "+") {
      // The last entry: read after the ID just before it.
      StreamID last;
      if (s != nullptr && s->LastEntryId(&last)) {
        last.Decrement();
        ids[i] = last;
      } else {
        ids[i] = StreamID::Min();
      }
      continue;
    }
    ArgParser id_parser(ctx, args.streams_at + args.nstreams + i);
    ids[i] = NextStreamID(id_parser, 0, true);
    if (!id_parser.Check()) return;
  }

  // Serve what can be served now. With CLAIM, every stream read with ">" takes from one budget
  // of COUNT entries (claimed and new together, across the streams in order); other streams
  // keep the per-stream COUNT of a plain read.
  bool claim = group_mode && args.claim_min_idle >= 0;
  constexpr size_t kUnlimited = ReadBudget::kUnlimited;
  ReadBudget budget(args, ctx.reply);
  size_t per_stream = args.count == 0 ? kUnlimited : static_cast<size_t>(args.count);
  size_t claim_budget = per_stream;
  size_t served = 0;
  size_t mark = 0;
  int64_t now = CommandTimeMs(ctx);
  for (size_t i = 0; i < args.nstreams; ++i) {
    std::string_view key = ctx.arg(args.streams_at + i);
    DbEntry* entry = ctx.db.Find(key);
    if (entry == nullptr) continue;
    Stream& s = *entry->value.As<Stream>();
    StreamID after = ids[i];
    bool serve = false;
    bool history = false;
    bool claim_here = false;
    std::vector<PendingEntry*> claimable;
    StreamConsumer* consumer = nullptr;
    if (group_mode) {
      ConsumerGroup& g = *groups[i];
      bool created;
      consumer = g.GetOrCreateConsumer(args.consumer, now, &created);
      if (created) {
        Notify(ctx, kNotifyStream, "xgroup-createconsumer", key);
        // Without NOACK the XCLAIMs of its deliveries create the consumer where they replay;
        // Redis 7.2 propagates the creation only for NOACK (a consumer that got nothing is
        // not propagated there either).
        if (args.noack) {
          ctx.PropagateInstead(CreateConsumerPropagation(key, args.group, args.consumer));
        }
        GroupStateWritten(ctx);
      }
      consumer->seen_time_ms = now;
      if (after != kNewOnly) {
        serve = history = true;
      } else {
        if (!s.empty() && s.last_id() > g.last_id) {
          StreamID last;
          serve = s.LastEntryId(&last) && last > g.last_id;
        }
        if (claim) {
          claim_here = true;
          claimable = CollectClaimable(ctx, s, g, key, args.group, args.claim_min_idle,
                                       budget.Cap(claim_budget), now);
          serve = claim_budget > 0 && (serve || !claimable.empty());
        }
      }
    } else if (!s.empty() && s.last_id() > after) {
      StreamID last;
      serve = s.LastEntryId(&last) && last > after;
    }
    // Streams after the budget ran out are left out of the reply, as streams with nothing new.
    if (!serve || budget.Exhausted()) continue;
    if (served++ == 0) mark = ctx.reply.DeferLength();
    if (ctx.reply.resp3()) {
      ctx.reply.Bulk(key);
    } else {
      ctx.reply.Array(2);
      ctx.reply.Bulk(key);
    }
    if (!group_mode) {
      StreamID start = after;
      size_t m = ctx.reply.DeferLength();
      size_t n = 0;
      if (start.Increment()) {
        Stream::Iterator it(s, start, StreamID::Max(), false);
        StreamEntryView e;
        while (n < per_stream && !budget.Exhausted() && it.Next(&e)) {
          ReplyEntry(ctx.reply, e);
          budget.Took();
          ++n;
        }
      }
      ctx.reply.SetDeferredArray(m, n);
    } else if (history) {
      ReplyConsumerHistory(ctx, s, *consumer, after, static_cast<size_t>(args.count), budget);
      GroupStateWritten(ctx);
    } else {
      size_t m = ctx.reply.DeferLength();
      size_t limit = claim_here ? claim_budget : per_stream;
      size_t n =
          ReplyClaimed(ctx, s, *groups[i], *consumer, key, args.group, claimable, now, budget);
      n += ReplyNewForGroup(ctx, s, *groups[i], *consumer, key, args.group,
                            limit == kUnlimited ? kUnlimited : limit - n, args.noack, claim_here,
                            budget);
      if (claim_here && claim_budget != kUnlimited) claim_budget -= n;
      ctx.reply.SetDeferredArray(m, n);
      GroupStateWritten(ctx);
    }
  }
  if (served > 0) {
    if (ctx.reply.resp3()) {
      ctx.reply.SetDeferredMap(mark, served);
    } else {
      ctx.reply.SetDeferredArray(mark, served);
    }
    return;
  }
  if (args.timeout_ms < 0 || !ctx.may_block()) {
    ctx.reply.NullArray();
    return;
  }
  std::vector<std::string> keys;
  keys.reserve(args.nstreams);
  for (size_t i = 0; i < args.nstreams; ++i) keys.emplace_back(ctx.arg(args.streams_at + i));
  BlockOptions options;
  std::shared_ptr<XReadGroupClaimCondition> claim_condition;
  if (claim) {
    claim_condition =
        std::make_shared<XReadGroupClaimCondition>(args.group, args.claim_min_idle, ctx, keys);
    options.condition = claim_condition;
  } else if (group_mode) {
    options.condition = std::make_shared<XReadGroupCondition>(args.group);
  } else {
    // `$` means "after the last ID now": pin it, or the command run again on wake-up would
    // wait after the new entry.
    auto condition = std::make_shared<XReadCondition>();
    options.argv.assign(ctx.argv.begin(), ctx.argv.end());
    for (size_t i = 0; i < args.nstreams; ++i) {
      condition->Add(keys[i], ids[i]);
      if (dollar[i]) options.argv[args.streams_at + args.nstreams + i] = ids[i].ToString();
    }
    options.condition = std::move(condition);
  }
  ctx.blocking().BlockClient(ctx, std::move(keys), args.timeout_ms, ValueType::kStream,
                             std::move(options));
  if (claim_condition != nullptr) {
    // Nothing is claimable yet: wake when the first pending entry will be.
    int64_t due = std::numeric_limits<int64_t>::max();
    for (ConsumerGroup* g : groups) due = std::min(due, NextClaimableAt(*g, args.claim_min_idle));
    claim_condition->WakeAt(due);
  }
}

void XReadCommand(CommandContext& ctx) { ReadGeneric(ctx, false); }
void XReadGroupCommand(CommandContext& ctx) { ReadGeneric(ctx, true); }

// COMMAND GETKEYS for XREAD / XREADGROUP: the first half of the arguments after STREAMS.
std::vector<size_t> ReadKeys(std::span<const std::string_view> argv) {
  std::vector<size_t> out;
  for (size_t i = 1; i < argv.size(); ++i) {
    if (IsArg(argv[i], "STREAMS")) {
      size_t n = (argv.size() - i - 1) / 2;
      for (size_t k = 0; k < n; ++k) out.push_back(i + 1 + k);
      break;
    }
    if (IsArg(argv[i], "GROUP")) {
      i += 2;
    } else if (IsArg(argv[i], "BLOCK") || IsArg(argv[i], "COUNT") || IsArg(argv[i], "CLAIM") ||
               IsArg(argv[i], "MAXCOUNT") || IsArg(argv[i], "MAXSIZE")) {
      ++i;
    }
  }
  return out;
}

}  // namespace

void RegisterStreamReadCommands(CommandTable& table) {
  constexpr const char* kGroup = "stream";
  table.Add({"xread", -4, kCmdReadonly | kCmdBlocking,
             Keys(KeysAfter("STREAMS", 1, -1, 1, 2, kKeyRO | kKeyAccess | kKeyIncomplete)),
             kAclStream, kGroup, "5.0.0",
             "Returns messages from multiple streams with IDs greater than the ones requested. "
             "Blocks until a message is available otherwise.",
             "[COUNT count] [MAXCOUNT maxcount:integer] [MAXSIZE maxsize:integer] [BLOCK "
             "milliseconds] <STREAMS "
             "key [key ...] id:string [id:string ...]>",
             XReadCommand, "", ReadKeys});
  table.Add(
      {"xreadgroup", -7, kCmdWrite | kCmdBlocking,
       Keys(KeysAfter("STREAMS", 4, -1, 1, 2, kKeyRO | kKeyAccess | kKeyIncomplete)), kAclStream,
       kGroup, "5.0.0",
       "Returns new or historical messages from a stream for a consumer in a group. Blocks "
       "until a message is available otherwise.",
       "group-block=<GROUP group consumer> [COUNT count] [MAXCOUNT maxcount:integer] "
       "[MAXSIZE maxsize:integer] "
       "[BLOCK milliseconds] "
       "[CLAIM min-idle-time:integer] [NOACK] <STREAMS key [key ...] id:string [id:string ...]>",
       XReadGroupCommand,
       "For each stream mentioned: O(M) with M being the number of elements returned. If M "
       "is constant (e.g. always asking for the first 10 elements with COUNT), you can "
       "consider it O(1). On the other side when XREADGROUP blocks, XADD will pay the O(N) "
       "time in order to serve the N clients blocked on the stream getting new data.",
       ReadKeys});
}

}  // namespace vireo
