// Idempotent production commands (Redis 8.6/8.8): XCFGSET, the internal XIDMPRECORD, and the
// IDMP fields of XINFO STREAM. XADD IDMP / IDMPAUTO itself is in streams.cc; the state is
// types/stream_idmp.h.
//
// XIDMPRECORD key pid iid id records that (pid, iid) produced entry `id`. XADD with IDMP
// propagates as a plain XADD with the concrete ID followed by XIDMPRECORD, so the AOF replays
// the same pair -> ID mapping without accepting an explicit ID together with IDMP.
#include <fmt/format.h>

#include "commands/families.h"
#include "commands/stream_common.h"
#include "core/arg_parser.h"
#include "core/config.h"
#include "server/client.h"
#include "server/command_context.h"
#include "types/stream_idmp.h"
#include "util/strings.h"

namespace vireo {
namespace stream_cmd {

void ReplyIdmpInfo(CommandContext& ctx, Stream& s) {
  ReplyBuilder& r = ctx.reply;
  StreamIdmp* idmp = s.idmp();
  if (idmp != nullptr) idmp->Expire(CommandTimeMs(ctx));
  const ServerConfig& c = ctx.cfg();
  r.Bulk("idmp-duration");
  r.Integer(idmp != nullptr ? idmp->duration() : c.stream_idmp_duration);
  r.Bulk("idmp-maxsize");
  r.Integer(idmp != nullptr ? idmp->maxsize() : c.stream_idmp_maxsize);
  r.Bulk("pids-tracked");
  r.Integer(idmp != nullptr ? static_cast<int64_t>(idmp->pids_tracked()) : 0);
  r.Bulk("iids-tracked");
  r.Integer(idmp != nullptr ? static_cast<int64_t>(idmp->iids_tracked()) : 0);
  r.Bulk("iids-added");
  r.Integer(idmp != nullptr ? static_cast<int64_t>(idmp->iids_added()) : 0);
  r.Bulk("iids-duplicates");
  r.Integer(idmp != nullptr ? static_cast<int64_t>(idmp->iids_duplicates()) : 0);
}

}  // namespace stream_cmd

namespace {

using namespace stream_cmd;  // NOLINT: part of the stream family

// One XCFGSET value: an integer (Redis's strict grammar) within [min, max].
int64_t NextSetting(ArgParser& args, std::string_view name, int64_t min, int64_t max) {
  return args.IntBetween(min, max, fmt::format("ERR {} must be between {} and {}", name, min, max));
}

void XCfgSetCommand(CommandContext& ctx) {
  int64_t duration = -1, maxsize = -1;
  if (ctx.argc() == 2) {
    ctx.reply.Error("ERR At least one parameter must be specified");
    return;
  }
  ArgParser args(ctx, 2);
  while (args.HasNext()) {
    if (args.OptionName("IDMP-DURATION")) {
      duration =
          NextSetting(args, "IDMP-DURATION", StreamIdmp::kMinDuration, StreamIdmp::kMaxDuration);
    } else if (args.OptionName("IDMP-MAXSIZE")) {
      maxsize = NextSetting(args, "IDMP-MAXSIZE", StreamIdmp::kMinMaxsize, StreamIdmp::kMaxMaxsize);
    } else {
      args.SyntaxError();
    }
  }
  if (!args.Check()) return;
  std::string_view key = ctx.arg(1);
  Stream* s = LookupExistingStream(ctx, key);
  if (s == nullptr) return;
  const ServerConfig& c = ctx.cfg();
  StreamIdmp& idmp = s->MutableIdmp(c.stream_idmp_duration, c.stream_idmp_maxsize);
  idmp.Configure(duration != -1 ? duration : idmp.duration(),
                 maxsize != -1 ? maxsize : idmp.maxsize());
  ctx.reply.Ok();
  Notify(ctx, kNotifyStream, "xcfgset", key);
  KeyWritten(ctx, key);
}

void XIdmpRecordCommand(CommandContext& ctx) {
  std::string_view key = ctx.arg(1), pid = ctx.arg(2), iid = ctx.arg(3);
  ArgParser args(ctx, 4);
  const StreamID id = NextStreamID(args, 0, true);
  if (!args.Check()) return;
  if (pid.empty() || iid.empty()) {
    ctx.reply.Error("ERR XIDMPRECORD requires a non-empty producer ID and idempotent ID");
    return;
  }
  Stream* s = LookupExistingStream(ctx, key);
  if (s == nullptr) return;
  const ServerConfig& c = ctx.cfg();
  StreamIdmp& idmp = s->MutableIdmp(c.stream_idmp_duration, c.stream_idmp_maxsize);
  if (const StreamID* known = idmp.Find(pid, iid, CommandTimeMs(ctx))) {
    if (*known != id) {
      ctx.reply.Error("ERR the producer ID and idempotent ID are recorded with another entry ID");
      return;
    }
    ctx.reply.Ok();
    return;
  }
  // Records are kept oldest first and expire from the front; a pair that is already too old
  // (an AOF replayed long after it was written) only counts.
  if (idmp.Expired(id, CommandTimeMs(ctx))) {
    idmp.CountAdded();
  } else {
    idmp.Record(pid, iid, id);
  }
  ctx.reply.Ok();
  GroupStateWritten(ctx);
}

}  // namespace

void RegisterStreamIdmpCommands(CommandTable& table) {
  constexpr const char* kGroup = "stream";
  table.Add({"xcfgset", -2, kCmdWrite | kCmdFast, Keys(KeyAt(1, kKeyRW | kKeyUpdate)), kAclStream,
             kGroup, "8.6.0", "Sets the IDMP configuration parameters for a stream.",
             "key [IDMP-DURATION idmp-duration] [IDMP-MAXSIZE idmp-maxsize]", XCfgSetCommand,
             "O(1)"});
  table.Add({"xidmprecord", 5, kCmdWrite | kCmdDenyOom | kCmdFast,
             Keys(KeyAt(1, kKeyRW | kKeyUpdate)), kAclStream, kGroup, "8.8.0",
             "An internal command for replicating IDMP tracking of stream entries.",
             "key producer-id idempotent-id stream-id", XIdmpRecordCommand, "O(1)"});
}

}  // namespace vireo
