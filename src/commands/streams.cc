// Streams: the log (XADD, XLEN, XRANGE, XREVRANGE, XDEL, XTRIM, XSETID) and the readers (XREAD,
// XREADGROUP), including their blocking forms. Consumer-group management, acknowledgement,
// claims and introspection are in stream_groups_cmd.cc.
//
// Blocking reads use the shared engine with a WaitCondition: an XREAD waiter is served when its
// stream has entries after the ID it waits after (every such reader, since reading consumes
// nothing), an XREADGROUP waiter when its group has undelivered entries — the first consumer
// served takes them, so each entry reaches one consumer — or when the key or group vanished,
// so that re-running the command gives the error Redis 7.2 gives.
#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "commands/families.h"
#include "commands/stream_common.h"
#include "core/arg_parser.h"
#include "core/config.h"
#include "server/blocking_service.h"
#include "server/client.h"
#include "server/command_context.h"
#include "server/process_info.h"
#include "types/stream_idmp.h"
#include "util/clock.h"
#include "util/strings.h"

namespace vireo {
namespace stream_cmd {

StreamID NextIntervalBound(ArgParser& args, bool start) {
  const uint64_t missing_seq = start ? 0 : UINT64_MAX;
  const std::string_view arg = args.Peek();
  const bool exclusive = arg.size() > 1 && arg[0] == '(';
  StreamID id = args.Parsed<StreamID>(
      [&](std::string_view text, StreamID* out) {
        // An exclusive bound names an entry: "-" and "+" are no IDs there.
        return exclusive ? ParseStreamID(text.substr(1), out, missing_seq, true)
                         : ParseStreamID(text, out, missing_seq, false);
      },
      kInvalidId);
  if (args.ok() && exclusive && !(start ? id.Increment() : id.Decrement())) {
    args.Fail(start ? "ERR invalid start ID for the interval"
                    : "ERR invalid end ID for the interval");
  }
  return id;
}

StreamID NextStreamID(ArgParser& args, uint64_t missing_seq, bool strict, bool* seq_star) {
  return args.Parsed<StreamID>(
      [&](std::string_view arg, StreamID* id) {
        return ParseStreamID(arg, id, missing_seq, strict, seq_star);
      },
      kInvalidId);
}

TypedObject<Stream> LookupStream(CommandContext& ctx, std::string_view key) {
  return LookupTyped(ctx, key, ValueType::kStream).As<Stream>();
}

Stream* LookupExistingStream(CommandContext& ctx, std::string_view key) {
  auto [s, wrong_type] = LookupStream(ctx, key);
  if (s == nullptr && !wrong_type) ctx.reply.Error(errors::kNoSuchKey);
  return s;
}

TypedObject<Stream> LookupStreamRead(CommandContext& ctx, std::string_view key) {
  return ReadTyped(ctx, key, ValueType::kStream).As<Stream>();
}

void ReplyId(ReplyBuilder& reply, StreamID id) {
  char buf[48];
  auto r = fmt::format_to_n(buf, sizeof(buf), "{}-{}", id.ms, id.seq);
  reply.Bulk({buf, r.size});
}

void ReplyEntry(ReplyBuilder& reply, const StreamEntryView& entry) {
  reply.Array(2);
  ReplyId(reply, entry.id);
  reply.Array(entry.field_values.size());
  for (std::string_view s : entry.field_values) reply.Bulk(s);
}

Stream::NodeLimits NodeLimits(CommandContext& ctx) {
  const ServerConfig& c = ctx.cfg();
  return {static_cast<size_t>(std::max<int64_t>(c.stream_node_max_bytes, 0)),
          static_cast<size_t>(std::max<int64_t>(c.stream_node_max_entries, 0))};
}

int64_t CommandTimeMs(const CommandContext& ctx) {
  // The AOF loader runs the log with the command clock at 0 (nothing expires mid-replay);
  // delivery and seen times then take the real clock, as Redis's replay does.
  int64_t now = ctx.db.now_ms();
  return now > 0 ? now : NowMs();
}

void GroupStateWritten(CommandContext& ctx, uint64_t dirty) { ctx.process().AddDirty(dirty); }

std::vector<std::string> XClaimPropagation(std::string_view key, std::string_view group,
                                           const ConsumerGroup& cg, const PendingEntry& pending,
                                           std::string_view id_arg) {
  // Idempotent on the replica: FORCE creates the PEL entry if missing, TIME and RETRYCOUNT
  // copy the delivery state, LASTID carries the group's last-delivered ID.
  return {"XCLAIM",
          std::string(key),
          std::string(group),
          pending.consumer != nullptr ? pending.consumer->name() : std::string(),
          "0",
          std::string(id_arg),
          "TIME",
          std::to_string(pending.delivery_time_ms),
          "RETRYCOUNT",
          std::to_string(pending.delivery_count),
          "FORCE",
          "JUSTID",
          "LASTID",
          cg.last_id.ToString()};
}

std::vector<std::string> SetIdPropagation(std::string_view key, std::string_view group,
                                          const ConsumerGroup& cg) {
  return {"XGROUP",
          "SETID",
          std::string(key),
          std::string(group),
          cg.last_id.ToString(),
          "ENTRIESREAD",
          std::to_string(cg.entries_read)};
}

std::vector<std::string> CreateConsumerPropagation(std::string_view key, std::string_view group,
                                                   std::string_view consumer) {
  return {"XGROUP", "CREATECONSUMER", std::string(key), std::string(group), std::string(consumer)};
}

}  // namespace stream_cmd

namespace {

using namespace stream_cmd;  // NOLINT: this file is the family's home

// ---------------------------------------------------------------------------------------------
// XADD / XTRIM arguments

struct TrimArgs {
  enum class Strategy { kNone, kMaxLen, kMinId } strategy = Strategy::kNone;
  bool approx = false;
  int64_t maxlen = 0;
  StreamID minid;
  int64_t limit = 0;
  bool limit_given = false;
  RefMode refs = RefMode::kKeepRef;
  size_t threshold_index = 0;  // argv index of the MAXLEN/MINID threshold
  size_t limit_index = 0;      // argv index of LIMIT, 0 if none
};

struct AddArgs {
  TrimArgs trim;
  bool nomkstream = false;
  bool id_given = false;
  bool seq_star = false;  // "<ms>-*"
  StreamID id;
  size_t id_index = 0;
  // IDMP / IDMPAUTO (Redis 8.6): the keyword's argv index (0 if absent) and the pair.
  size_t idmp_index = 0;
  bool idmp_auto = false;
  std::string_view pid;
  std::string_view iid;
};

// Parses XADD's options up to the ID (xadd) or XTRIM's options (all arguments). Returns false
// after replying an error.
bool ParseAddOrTrim(CommandContext& ctx, bool xadd, AddArgs* args) {
  TrimArgs& trim = args->trim;
  bool refs_given = false;
  ArgParser p(ctx, 2);
  while (p.HasNext()) {
    std::string_view opt = p.Peek();
    const size_t more = p.remaining() - 1;  // arguments after opt
    RefMode mode;
    if (xadd && opt == "*") {
      break;
    } else if ((IsArg(opt, "MAXLEN") || IsArg(opt, "MINID")) && more > 0) {
      p.Next();
      if (trim.strategy != TrimArgs::Strategy::kNone) {
        p.Fail("ERR syntax error, MAXLEN and MINID options at the same time are not compatible");
        break;
      }
      // "~" or "=" is an operator only when a threshold follows it.
      trim.approx = false;
      if (more >= 2) {
        if (p.Flag("~")) {
          trim.approx = true;
        } else {
          p.Flag("=");
        }
      }
      if (IsArg(opt, "MAXLEN")) {
        trim.maxlen = p.IntAtLeast(0, "ERR The MAXLEN argument must be >= 0.");
        trim.strategy = TrimArgs::Strategy::kMaxLen;
      } else {
        trim.minid = NextStreamID(p, 0, true);
        trim.strategy = TrimArgs::Strategy::kMinId;
      }
      trim.threshold_index = p.pos() - 1;
    } else if (p.OptionName("LIMIT")) {
      trim.limit_index = p.pos() - 1;
      trim.limit = p.IntAtLeast(0, "ERR The LIMIT argument must be >= 0.");
      trim.limit_given = true;
    } else if (ParseRefMode(opt, &mode)) {
      p.Next();
      // One strategy per command: naming a second, different one is an error.
      if (refs_given && mode != trim.refs) p.SyntaxError();
      refs_given = true;
      trim.refs = mode;
    } else if (xadd && p.Flag("NOMKSTREAM")) {
      args->nomkstream = true;
    } else if (xadd && ((IsArg(opt, "IDMP") && more > 1) || (IsArg(opt, "IDMPAUTO") && more > 0))) {
      const bool automatic = IsArg(opt, "IDMPAUTO");
      if (args->idmp_index != 0) {
        p.Fail("ERR IDMP/IDMPAUTO specified multiple times");
        break;
      }
      args->idmp_index = p.pos();
      args->idmp_auto = automatic;
      p.Next();
      args->pid = p.Next();
      if (args->pid.empty()) {
        p.Fail(automatic ? "ERR IDMPAUTO requires a non-empty producer ID"
                         : "ERR IDMP requires a non-empty producer ID");
      }
      if (!automatic) {
        args->iid = p.Next();
        if (args->iid.empty()) p.Fail("ERR IDMP requires a non-empty idempotent ID");
      }
    } else if (xadd) {
      args->id_index = p.pos();
      args->id = NextStreamID(p, 0, true, &args->seq_star);
      args->id_given = true;
      break;
    } else {
      p.SyntaxError();
    }
  }
  if (!p.Check()) return false;
  if (!args->id_given) args->id_index = p.pos();  // "*", or where the options ran out
  if (args->idmp_index != 0 && args->id_given) {
    p.Fail("ERR IDMP/IDMPAUTO can be used only with auto-generated IDs");
  }
  if (trim.limit != 0 && trim.strategy == TrimArgs::Strategy::kNone) {
    p.Fail("ERR syntax error, LIMIT cannot be used without specifying a trimming strategy");
  }
  if (!xadd && trim.strategy == TrimArgs::Strategy::kNone) {
    p.Fail("ERR syntax error, XTRIM must be called with a trimming strategy");
  }
  if (trim.limit_given && !trim.approx) {
    p.Fail("ERR syntax error, LIMIT cannot be used without the special ~ option");
  }
  if (!p.Check()) return false;
  if (!trim.limit_given && trim.approx) {
    // Bounds the work of one call: 100 nodes' worth by default.
    trim.limit = 100 * ctx.cfg().stream_node_max_entries;
    if (trim.limit <= 0) trim.limit = 10000;
    if (trim.limit > 1000000) trim.limit = 1000000;
  }
  return true;
}

// The outcome of a trim, as propagation needs it.
struct TrimResult {
  int64_t removed = 0;
  // References were checked (DELREF or ACKED on a stream with groups): an approximate trim
  // then replays as exact MINID = stop (or MAXLEN = 0 when it reached the end).
  bool with_refs = false;
  StreamID stop = StreamID::Max();
};

TrimResult ApplyTrim(Stream& s, const TrimArgs& trim) {
  TrimResult result;
  if (trim.strategy == TrimArgs::Strategy::kNone) return result;
  Stream::TrimRefs refs = TrimReferences(s, trim.refs);
  result.with_refs = refs.removable || refs.on_removed;
  const Stream::TrimRefs* r = result.with_refs ? &refs : nullptr;
  if (trim.strategy == TrimArgs::Strategy::kMaxLen) {
    result.removed = s.TrimByLength(static_cast<uint64_t>(trim.maxlen), trim.approx, trim.limit, r,
                                    &result.stop);
  } else {
    result.removed = s.TrimByMinId(trim.minid, trim.approx, trim.limit, r, &result.stop);
  }
  return result;
}

// The command as it must be replayed (AOF): a generated ID becomes the concrete one, LIMIT
// goes, and approximate trimming becomes exact trimming that removes exactly what was removed
// here whatever the node layout of the replaying server: MAXLEN = <length now> when references
// were not checked; when they were (ACKED may skip entries, so a length is not equivalent),
// MINID = <the ID where the trim stopped> with the same strategy word, which considers the
// same entries. IDMP / IDMPAUTO go too: the pair is recorded by a following XIDMPRECORD.
std::vector<std::string> RewriteForPropagation(CommandContext& ctx, const AddArgs& args,
                                               const Stream& s, const std::string* id,
                                               const TrimResult& trimmed) {
  std::vector<std::string> out;
  out.reserve(ctx.argc());
  const TrimArgs& trim = args.trim;
  size_t idmp_end = args.idmp_index + (args.idmp_auto ? 2 : 3);
  bool by_stop = trim.approx && trimmed.with_refs;
  bool stop_at_end = trimmed.stop == StreamID::Max();
  for (size_t i = 0; i < ctx.argc(); ++i) {
    if (trim.limit_index != 0 && (i == trim.limit_index || i == trim.limit_index + 1)) continue;
    if (args.idmp_index != 0 && i >= args.idmp_index && i < idmp_end) continue;
    if (trim.approx && i == trim.threshold_index - 2) {
      out.emplace_back(by_stop && !stop_at_end ? "MINID" : "MAXLEN");
    } else if (trim.approx && i == trim.threshold_index - 1) {
      out.emplace_back("=");
    } else if (trim.approx && i == trim.threshold_index) {
      if (!by_stop) {
        out.push_back(std::to_string(s.length()));
      } else {
        out.push_back(stop_at_end ? std::string("0") : trimmed.stop.ToString());
      }
    } else if (id != nullptr && i == args.id_index) {
      out.push_back(*id);
    } else {
      out.emplace_back(ctx.arg(i));
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// The log

void XAddCommand(CommandContext& ctx) {
  AddArgs args;
  if (!ParseAddOrTrim(ctx, true, &args)) return;
  size_t field_pos = args.id_index + 1;
  if (ctx.argc() < field_pos + 2 || (ctx.argc() - field_pos) % 2 == 1) {
    ctx.reply.Error("ERR wrong number of arguments for 'xadd' command");
    return;
  }
  if (args.id_given && !args.seq_star && args.id.is_zero()) {
    ctx.reply.Error("ERR The ID specified in XADD must be greater than 0-0");
    return;
  }
  std::string_view key = ctx.arg(1);
  auto [entry, wrong_type] = LookupTyped(ctx, key, ValueType::kStream);
  if (wrong_type) return;
  std::span<const std::string_view> fields = ctx.argv.subspan(field_pos);
  std::string auto_iid;
  if (args.idmp_auto) {
    auto_iid = StreamIdmp::AutoIid(fields);
    args.iid = auto_iid;
  }
  if (entry == nullptr) {
    if (args.nomkstream) {
      ctx.reply.Null();
      return;
    }
    entry = ctx.db.Add(key, Value::Object(ValueType::kStream, std::make_unique<Stream>()));
  } else if (args.idmp_index != 0 && entry->value.As<Stream>()->idmp() != nullptr) {
    // A retried add: the original ID, and nothing else happens (no entry, no trim, no
    // notification, nothing to propagate); only the duplicate counter moves.
    StreamIdmp& idmp = *entry->value.As<Stream>()->idmp();
    if (const StreamID* original = idmp.Find(args.pid, args.iid, CommandTimeMs(ctx))) {
      idmp.CountDuplicate();
      ReplyId(ctx.reply, *original);
      ctx.PropagateNothing();
      return;
    }
  }
  Stream& s = *entry->value.As<Stream>();
  if (s.last_id() == StreamID::Max()) {
    ctx.reply.Error("ERR The stream has exhausted the last possible ID, unable to add more items");
    return;
  }
  StreamID id;
  bool ok;
  if (!args.id_given) {
    ok = s.NextId(static_cast<uint64_t>(CommandTimeMs(ctx)), &id);
  } else if (args.seq_star) {
    ok = s.NextIdForMs(args.id.ms, &id);
  } else {
    id = args.id;
    ok = id > s.last_id();
  }
  if (!ok) {
    ctx.reply.Error(
        "ERR The ID specified in XADD is equal or smaller than the target stream top item");
    return;
  }
  s.Append(id, fields, NodeLimits(ctx));
  if (args.idmp_index != 0) {
    const ServerConfig& c = ctx.cfg();
    s.MutableIdmp(c.stream_idmp_duration, c.stream_idmp_maxsize).Record(args.pid, args.iid, id);
  }
  // Formatted once: the reply, the logged XADD and XIDMPRECORD all carry it.
  std::string id_text = id.ToString();
  ctx.reply.Bulk(id_text);
  Notify(ctx, kNotifyStream, "xadd", key);
  TrimResult trimmed = ApplyTrim(s, args.trim);
  if (trimmed.removed > 0) Notify(ctx, kNotifyStream, "xtrim", key);
  if (!args.id_given || args.seq_star || args.trim.approx) {
    ctx.PropagateInstead(RewriteForPropagation(
        ctx, args, s, !args.id_given || args.seq_star ? &id_text : nullptr, trimmed));
  }
  if (args.idmp_index != 0) {
    ctx.PropagateInstead({"XIDMPRECORD", std::string(key), std::string(args.pid),
                          std::string(args.iid), std::move(id_text)});
  }
  ctx.blocking().SignalKeyAsReady(ctx.client.db_index(), key);
  KeyWritten(ctx, key);
}

void XTrimCommand(CommandContext& ctx) {
  AddArgs args;
  if (!ParseAddOrTrim(ctx, false, &args)) return;
  std::string_view key = ctx.arg(1);
  auto [s, wrong_type] = LookupStream(ctx, key);
  if (wrong_type) return;
  if (s == nullptr) {
    ctx.reply.Integer(0);
    return;
  }
  TrimResult trimmed = ApplyTrim(*s, args.trim);
  if (trimmed.removed > 0) {
    Notify(ctx, kNotifyStream, "xtrim", key);
    if (args.trim.approx) {
      ctx.PropagateInstead(RewriteForPropagation(ctx, args, *s, nullptr, trimmed));
    }
    KeyWritten(ctx, key, static_cast<uint64_t>(trimmed.removed));
  }
  ctx.reply.Integer(trimmed.removed);
}

void XLenCommand(CommandContext& ctx) {
  auto [s, wrong_type] = LookupStreamRead(ctx, ctx.arg(1));
  if (wrong_type) return;
  ctx.reply.Integer(s == nullptr ? 0 : static_cast<int64_t>(s->length()));
}

void RangeGeneric(CommandContext& ctx, bool reverse) {
  ArgParser args(ctx, reverse ? 3 : 2);
  const StreamID start = NextIntervalBound(args, true);
  args.Seek(reverse ? 2 : 3);
  const StreamID end = NextIntervalBound(args, false);
  args.Seek(4);
  int64_t count = -1;
  while (args.HasNext()) {
    if (args.OptionName("COUNT")) {
      count = std::max<int64_t>(args.Int(), 0);
    } else {
      args.SyntaxError();
    }
  }
  if (!args.Check()) return;
  auto [s, wrong_type] = LookupStreamRead(ctx, ctx.arg(1));
  if (wrong_type) return;
  if (s == nullptr) {
    ctx.reply.EmptyArray();
    return;
  }
  if (count == 0) {
    ctx.reply.NullArray();
    return;
  }
  size_t mark = ctx.reply.DeferLength();
  size_t n = s->Range(start, end, reverse, count < 0 ? 0 : static_cast<size_t>(count),
                      [&](const StreamEntryView& e) {
                        ReplyEntry(ctx.reply, e);
                        return true;
                      });
  ctx.reply.SetDeferredArray(mark, n);
}

void XRangeCommand(CommandContext& ctx) { RangeGeneric(ctx, false); }
void XRevRangeCommand(CommandContext& ctx) { RangeGeneric(ctx, true); }

void XDelCommand(CommandContext& ctx) {
  std::string_view key = ctx.arg(1);
  auto [s, wrong_type] = LookupStream(ctx, key);
  if (wrong_type) return;
  if (s == nullptr) {
    ctx.reply.Integer(0);
    return;
  }
  // Every ID is checked before anything is deleted, so a bad one leaves the stream untouched.
  ArgParser args(ctx, 2);
  std::vector<StreamID> ids(args.remaining());
  for (StreamID& id : ids) id = NextStreamID(args, 0, true);
  if (!args.Check()) return;
  int64_t deleted = 0;
  for (StreamID id : ids) deleted += s->Delete(id) ? 1 : 0;
  if (deleted > 0) {
    Notify(ctx, kNotifyStream, "xdel", key);
    KeyWritten(ctx, key, static_cast<uint64_t>(deleted));
  }
  ctx.reply.Integer(deleted);
}

void XSetIdCommand(CommandContext& ctx) {
  ArgParser args(ctx, 2);
  const StreamID id = NextStreamID(args, 0, true);
  StreamID max_deleted;
  int64_t entries_added = -1;
  while (args.HasNext()) {
    if (args.OptionName("ENTRIESADDED")) {
      entries_added = args.IntAtLeast(0, "ERR entries_added must be positive");
    } else if (args.OptionName("MAXDELETEDID")) {
      max_deleted = NextStreamID(args, 0, true);
      if (args.ok() && id < max_deleted) {
        args.Fail(
            "ERR The ID specified in XSETID is smaller than the provided max_deleted_entry_id");
      }
    } else {
      args.SyntaxError();
    }
  }
  if (!args.Check()) return;
  std::string_view key = ctx.arg(1);
  Stream* s = LookupExistingStream(ctx, key);
  if (s == nullptr) return;
  if (id < s->max_deleted_id()) {
    ctx.reply.Error("ERR The ID specified in XSETID is smaller than current max_deleted_entry_id");
    return;
  }
  if (s->length() > 0) {
    StreamID top;
    s->LastEntryId(&top);
    if (id < top) {
      ctx.reply.Error("ERR The ID specified in XSETID is smaller than the target stream top item");
      return;
    }
    if (entries_added != -1 && static_cast<int64_t>(s->length()) > entries_added) {
      ctx.reply.Error(
          "ERR The entries_added specified in XSETID is smaller than the target stream length");
      return;
    }
  }
  s->set_last_id(id);
  if (entries_added != -1) s->set_entries_added(static_cast<uint64_t>(entries_added));
  if (!max_deleted.is_zero()) s->set_max_deleted_id(max_deleted);
  ctx.reply.Ok();
  Notify(ctx, kNotifyStream, "xsetid", key);
  GroupStateWritten(ctx);
}

}  // namespace

// The readers live in stream_read.cc.
void RegisterStreamReadCommands(CommandTable& table);

void RegisterStreamCommands(CommandTable& table) {
  constexpr const char* kGroup = "stream";
  table.Add({"xadd", -5, kCmdWrite | kCmdDenyOom | kCmdFast,
             Keys(KeyAt(1, kKeyRW | kKeyUpdate,
                        "UPDATE instead of INSERT because of the optional trimming feature")),
             kAclStream, kGroup, "5.0.0",
             "Appends a new message to a stream. Creates the key if it doesn't exist.",
             "key [NOMKSTREAM] [KEEPREF | DELREF | ACKED] [IDMPAUTO producer-id | IDMP "
             "producer-id idempotent-id] [trim=<strategy=<MAXLEN | MINID> "
             "[operator=<equal== | approximately=~>] threshold [LIMIT count]>] "
             "id-selector=<auto-id=* | id> data=<field value> ...",
             XAddCommand,
             "O(1) when adding a new entry, O(N) when trimming where N being the "
             "number of entries evicted."});
  table.Add({"xtrim", -4, kCmdWrite, Keys(KeyAt(1, kKeyRW | kKeyDelete)), kAclStream, kGroup,
             "5.0.0", "Deletes messages from the beginning of a stream.",
             "key trim=<strategy=<MAXLEN | MINID> [operator=<equal== | "
             "approximately=~>] threshold [LIMIT count]> [KEEPREF | DELREF | ACKED]",
             XTrimCommand,
             "O(N), with N being the number of evicted entries. Constant times are very small "
             "however, since entries are organized in macro nodes containing multiple entries "
             "that can be released with a single deallocation."});
  table.Add({"xlen", 2, kCmdReadonly | kCmdFast, Keys(KeyAt(1, kKeyRO)), kAclStream, kGroup,
             "5.0.0", "Return the number of messages in a stream.", "key", XLenCommand, "O(1)"});
  table.Add({"xrange", -4, kCmdReadonly, Keys(KeyAt(1, kKeyRO | kKeyAccess)), kAclStream, kGroup,
             "5.0.0", "Returns the messages from a stream within a range of IDs.",
             "key start:string end:string [COUNT count]", XRangeCommand,
             "O(N) with N being the number of elements being returned. If N is constant (e.g. "
             "always asking for the first 10 elements with COUNT), you can consider it O(1)."});
  table.Add({"xrevrange", -4, kCmdReadonly, Keys(KeyAt(1, kKeyRO | kKeyAccess)), kAclStream, kGroup,
             "5.0.0", "Returns the messages from a stream within a range of IDs in reverse order.",
             "key end:string start:string [COUNT count]", XRevRangeCommand,
             "O(N) with N being the number of elements returned. If N is constant (e.g. always "
             "asking for the first 10 elements with COUNT), you can consider it O(1)."});
  table.Add({"xdel", -3, kCmdWrite | kCmdFast, Keys(KeyAt(1, kKeyRW | kKeyDelete)), kAclStream,
             kGroup, "5.0.0", "Returns the number of messages after removing them from a stream.",
             "key id:string ...", XDelCommand,
             "O(1) for each single item to delete in the stream, regardless of the stream size."});
  table.Add({"xsetid", -3, kCmdWrite | kCmdDenyOom | kCmdFast, Keys(KeyAt(1, kKeyRW | kKeyUpdate)),
             kAclStream, kGroup, "5.0.0", "An internal command for replicating stream values.",
             "key last-id [ENTRIESADDED entries-added:integer] [MAXDELETEDID "
             "max-deleted-id]",
             XSetIdCommand, "O(1)"});
  RegisterStreamReadCommands(table);
  RegisterStreamGroupCommands(table);
  RegisterStreamDeleteCommands(table);
  RegisterStreamIdmpCommands(table);
}

}  // namespace vireo
