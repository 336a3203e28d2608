// Reference-aware deletion (Redis 8.2): XDELEX, XACKDEL, and the KEEPREF | DELREF | ACKED
// helpers XADD/XTRIM share.
//
// An entry is "referenced" while some consumer group still needs it: the group has not been
// delivered it yet (its last-delivered ID is below the entry) or holds it in its PEL. ACKED
// deletes only unreferenced entries; DELREF deletes and also drops the ID from every PEL;
// KEEPREF deletes and leaves PELs alone (XDEL's behaviour).
//
// Per-ID reply codes: 1 deleted (XACKDEL: acknowledged, and the entry is gone), 2 not deleted
// because still referenced (ACKED), -1 no such ID (XACKDEL: not pending in the group).
#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "commands/families.h"
#include "commands/stream_common.h"
#include "core/arg_parser.h"
#include "server/client.h"
#include "server/command_context.h"
#include "util/strings.h"

namespace vireo {
namespace stream_cmd {

bool ParseRefMode(std::string_view arg, RefMode* mode) {
  if (IsArg(arg, "KEEPREF")) {
    *mode = RefMode::kKeepRef;
  } else if (IsArg(arg, "DELREF")) {
    *mode = RefMode::kDelRef;
  } else if (IsArg(arg, "ACKED")) {
    *mode = RefMode::kAcked;
  } else {
    return false;
  }
  return true;
}

bool EntryReferenced(const Stream& s, StreamID id) {
  const StreamGroups* groups = s.groups();
  if (groups == nullptr) return false;
  for (const auto& [name, g] : groups->all()) {
    if (g->last_id < id || g->FindPending(id) != nullptr) return true;
  }
  return false;
}

uint64_t RemoveReferences(Stream& s, StreamID id) {
  StreamGroups* groups = s.groups();
  if (groups == nullptr) return 0;
  uint64_t removed = 0;
  for (const auto& [name, g] : groups->all()) removed += g->Ack(id) ? 1 : 0;
  return removed;
}

Stream::TrimRefs TrimReferences(Stream& s, RefMode mode) {
  Stream::TrimRefs refs;
  StreamGroups* groups = s.groups();
  if (mode == RefMode::kKeepRef || groups == nullptr || groups->size() == 0) return refs;
  if (mode == RefMode::kDelRef) {
    bool any_pending = std::any_of(groups->all().begin(), groups->all().end(),
                                   [](const auto& g) { return !g.second->pel().empty(); });
    if (any_pending) {
      refs.on_removed = [groups](StreamID id) {
        for (const auto& [name, g] : groups->all()) g->Ack(id);
      };
    }
    return refs;
  }
  // ACKED: nothing past the least advanced group was delivered to it, so the trim may stop
  // there; below it an entry is removable unless some PEL holds it.
  StreamID until = StreamID::Max();
  for (const auto& [name, g] : groups->all()) until = std::min(until, g->last_id);
  refs.removable_until = until;
  refs.removable = [groups](StreamID id) {
    for (const auto& [name, g] : groups->all()) {
      if (g->FindPending(id) != nullptr) return false;
    }
    return true;
  };
  return refs;
}

}  // namespace stream_cmd

namespace {

using namespace stream_cmd;  // NOLINT: part of the stream family

constexpr int64_t kDeleted = 1;
constexpr int64_t kStillReferenced = 2;
constexpr int64_t kNoId = -1;

struct DeleteArgs {
  RefMode mode = RefMode::kKeepRef;
  std::vector<StreamID> ids;
};

// Parses `[KEEPREF | DELREF | ACKED] IDS numids id...` from argv[first] on; the IDS block may
// come anywhere. Returns false after replying an error.
bool ParseDeleteArgs(CommandContext& ctx, size_t first, DeleteArgs* args) {
  bool mode_given = false;
  bool ids_given = false;
  ArgParser p(ctx, first);
  while (p.HasNext()) {
    RefMode mode;
    if (!ids_given && p.OptionName("IDS")) {
      const size_t count_at = p.pos();
      const size_t numids = p.CountedList("ERR Number of IDs must be a positive integer",
                                          "ERR The `numids` parameter must match the number of "
                                          "arguments")
                                .size();
      // The IDs are checked where they stand, before any later option.
      p.Seek(count_at + 1);
      args->ids.resize(numids);
      for (StreamID& id : args->ids) id = NextStreamID(p, 0, true);
      ids_given = true;
    } else if (ParseRefMode(p.Peek(), &mode) && (!mode_given || mode == args->mode)) {
      p.Next();
      mode_given = true;
      args->mode = mode;
    } else {
      p.SyntaxError();
    }
  }
  if (!ids_given) p.SyntaxError();
  return p.Check();
}

void ReplyAllMissing(CommandContext& ctx, size_t n) {
  ctx.reply.Array(n);
  for (size_t i = 0; i < n; ++i) ctx.reply.Integer(kNoId);
}

// Bookkeeping shared by both commands: deletions are a key write (WATCH, `xdel` event); PEL
// changes alone are group state (dirty only, as XACK).
void Finish(CommandContext& ctx, std::string_view key, uint64_t deleted, uint64_t pel_changes) {
  if (deleted > 0) {
    Notify(ctx, kNotifyStream, "xdel", key);
    KeyWritten(ctx, key, deleted + pel_changes);
  } else if (pel_changes > 0) {
    GroupStateWritten(ctx, pel_changes);
  }
}

void XDelExCommand(CommandContext& ctx) {
  DeleteArgs args;
  if (!ParseDeleteArgs(ctx, 2, &args)) return;
  std::string_view key = ctx.arg(1);
  auto [s, wrong_type] = LookupStream(ctx, key);
  if (wrong_type) return;
  if (s == nullptr) {
    ReplyAllMissing(ctx, args.ids.size());
    return;
  }
  uint64_t deleted = 0, pel_changes = 0;
  ctx.reply.Array(args.ids.size());
  for (StreamID id : args.ids) {
    int64_t result = kNoId;
    if (args.mode == RefMode::kAcked) {
      if (s->Contains(id)) {
        if (EntryReferenced(*s, id)) {
          result = kStillReferenced;
        } else if (s->Delete(id)) {
          result = kDeleted;
        }
      }
    } else {
      // DELREF drops dangling PEL references even when the entry itself is already gone.
      if (args.mode == RefMode::kDelRef) pel_changes += RemoveReferences(*s, id);
      if (s->Delete(id)) result = kDeleted;
    }
    deleted += result == kDeleted;
    ctx.reply.Integer(result);
  }
  Finish(ctx, key, deleted, pel_changes);
}

void XAckDelCommand(CommandContext& ctx) {
  DeleteArgs args;
  if (!ParseDeleteArgs(ctx, 3, &args)) return;
  std::string_view key = ctx.arg(1);
  auto [s, wrong_type] = LookupStream(ctx, key);
  if (wrong_type) return;
  ConsumerGroup* group =
      s == nullptr || s->groups() == nullptr ? nullptr : s->groups()->Find(ctx.arg(2));
  // No NOGROUP error: a missing key or group just has nothing to acknowledge.
  if (group == nullptr) {
    ReplyAllMissing(ctx, args.ids.size());
    return;
  }
  uint64_t deleted = 0, pel_changes = 0;
  ctx.reply.Array(args.ids.size());
  for (StreamID id : args.ids) {
    int64_t result = kNoId;
    if (group->Ack(id)) {
      ++pel_changes;
      if (args.mode == RefMode::kAcked && EntryReferenced(*s, id)) {
        result = kStillReferenced;
      } else {
        if (args.mode == RefMode::kDelRef) pel_changes += RemoveReferences(*s, id);
        // Acknowledged: 1 whether the entry is deleted now or was already gone.
        deleted += s->Delete(id) ? 1 : 0;
        result = kDeleted;
      }
    }
    ctx.reply.Integer(result);
  }
  Finish(ctx, key, deleted, pel_changes);
}

}  // namespace

void RegisterStreamDeleteCommands(CommandTable& table) {
  constexpr const char* kGroup = "stream";
  table.Add({"xackdel", -6, kCmdWrite | kCmdFast, Keys(KeyAt(1, kKeyRW | kKeyDelete)), kAclStream,
             kGroup, "8.2.0",
             "Acknowledges and conditionally deletes one or multiple entries (messages) for a "
             "stream consumer group at the specified key.",
             "key group [KEEPREF | DELREF | ACKED] IDS numids id [id ...]", XAckDelCommand,
             "O(1) for each entry ID processed."});
  table.Add({"xdelex", -5, kCmdWrite | kCmdFast, Keys(KeyAt(1, kKeyRW | kKeyDelete)), kAclStream,
             kGroup, "8.2.0", "Deletes one or multiple entries from the stream.",
             "key [KEEPREF | DELREF | ACKED] IDS numids id [id ...]", XDelExCommand,
             "O(1) for each single item to delete in the stream, regardless of the stream size."});
}

}  // namespace vireo
