// XNACK (Redis 8.8): a consumer hands pending entries back to its group without acknowledging
// them. Released entries stay in the group PEL but belong to nobody; they wait in the group's
// NACK zone (see ConsumerGroup), where every claim (XCLAIM, XAUTOCLAIM, XREADGROUP ... CLAIM)
// takes them first and regardless of min-idle-time.
//
// XNACK is propagated as received: its effect depends only on the PEL and the stream, which
// replicas and the AOF reproduce exactly (FORCE creates an entry only for an ID the stream holds,
// and the stream is the same there).
#include <fmt/format.h>

#include <limits>

#include "commands/stream_common.h"
#include "core/arg_parser.h"
#include "server/blocking_service.h"
#include "server/client.h"
#include "server/command_context.h"
#include "util/strings.h"

namespace vireo {
namespace {

using namespace stream_cmd;  // NOLINT

enum class NackMode { kSilent, kFail, kFatal };

struct NackArgs {
  NackMode mode = NackMode::kFail;
  std::vector<StreamID> ids;
  int64_t retry_count = -1;  // -1: the mode decides
  bool force = false;
};

constexpr uint64_t kFatalCount = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());

// Everything is parsed (and every ID checked) before the key is looked up, so a bad call never
// releases part of its IDs.
bool ParseNackArgs(CommandContext& ctx, NackArgs* args) {
  ArgParser p(ctx, 3);
  constexpr NackMode kModes[] = {NackMode::kSilent, NackMode::kFail, NackMode::kFatal};
  const int mode =
      p.Keyword({"SILENT", "FAIL", "FATAL"}, "ERR mode must be SILENT, FAIL, or FATAL");
  if (!p.Check()) return false;
  args->mode = kModes[mode];
  size_t ids_at = 0, numids = 0;
  while (p.HasNext()) {
    if (ids_at == 0 && p.OptionName("IDS")) {
      numids = p.CountedList("ERR numids must be a positive integer",
                             "ERR number of IDs doesn't match numids")
                   .size();
      ids_at = p.pos() - numids;
    } else if (p.OptionName("RETRYCOUNT")) {
      args->retry_count = p.IntAtLeast(0, "ERR Invalid RETRYCOUNT value, must be >= 0");
    } else if (p.Flag("FORCE")) {
      args->force = true;
    } else {
      p.Fail(fmt::format("ERR Unrecognized XNACK option '{}'", p.Peek()));
    }
  }
  if (ids_at == 0) p.Fail("ERR syntax error, expected IDS keyword");
  // The IDs are checked after every option.
  p.Seek(ids_at);
  args->ids.resize(numids);
  for (StreamID& id : args->ids) id = NextStreamID(p, 0, true);
  return p.Check();
}

// The delivery count a released entry keeps: RETRYCOUNT if given, else what the mode says.
uint64_t NackedCount(const NackArgs& args, uint64_t current) {
  if (args.retry_count >= 0) return static_cast<uint64_t>(args.retry_count);
  switch (args.mode) {
    case NackMode::kSilent:
      return current > 0 ? current - 1 : 0;
    case NackMode::kFail:
      return current;
    case NackMode::kFatal:
      return kFatalCount;
  }
  return current;
}

void XNackCommand(CommandContext& ctx) {
  NackArgs args;
  if (!ParseNackArgs(ctx, &args)) return;
  std::string_view key = ctx.arg(1), group = ctx.arg(2);
  auto [s, wrong_type] = LookupStream(ctx, key);
  if (wrong_type) return;
  ConsumerGroup* g = s == nullptr || s->groups() == nullptr ? nullptr : s->groups()->Find(group);
  if (g == nullptr) {
    ctx.reply.Error(fmt::format("NOGROUP No such key '{}' or consumer group '{}'", key, group));
    return;
  }
  int64_t released = 0;
  for (StreamID id : args.ids) {
    if (PendingEntry* p = g->FindPending(id); p != nullptr) {
      g->AddNacked(id, NackedCount(args, p->delivery_count));
      ++released;
    } else if (args.force && s->Contains(id)) {
      // A never-delivered (or already acknowledged) entry becomes claimable as if released.
      g->AddNacked(id, NackedCount(args, 0));
      ++released;
    }
  }
  if (released == 0) {
    ctx.PropagateNothing();
  } else {
    GroupStateWritten(ctx, static_cast<uint64_t>(released));
    // Readers blocked in XREADGROUP ... CLAIM can take the released entries now.
    ctx.blocking().SignalKeyAsReady(ctx.client.db_index(), key);
  }
  ctx.reply.Integer(released);
}

}  // namespace

void RegisterStreamNackCommands(CommandTable& table) {
  table.Add({"xnack", -7, kCmdWrite | kCmdFast, Keys(KeyAt(1, kKeyRW | kKeyUpdate)), kAclStream,
             "stream", "8.8.0",
             "Releases pending messages of a consumer group back to the group without "
             "acknowledging them, so that other consumers can claim them.",
             "key group <SILENT | FAIL | FATAL> IDS numids id [id ...] [RETRYCOUNT count] [FORCE]",
             XNackCommand, "O(1) for each message ID processed."});
}

}  // namespace vireo
