// The connection-level cluster commands: ASKING (serve the next command on a slot being
// imported, after -ASK) and READONLY / READWRITE (reads of a replica's master's slots served
// by the replica). They set client flags the redirection check reads (src/cluster/redirect.h).
#include "commands/families.h"
#include "core/command_table.h"
#include "core/config.h"
#include "server/client.h"
#include "server/command_context.h"

namespace vireo {
namespace {

bool ClusterEnabledOrReply(CommandContext& ctx) {
  if (ctx.cfg().cluster_enabled) return true;
  ctx.reply.Error("ERR This instance has cluster support disabled");
  return false;
}

void AskingCommand(CommandContext& ctx) {
  if (!ClusterEnabledOrReply(ctx)) return;
  ctx.client.set(kClientAsking);
  ctx.reply.Ok();
}

void ReadonlyCommand(CommandContext& ctx) {
  if (!ClusterEnabledOrReply(ctx)) return;
  ctx.client.set(kClientReadonly);
  ctx.reply.Ok();
}

void ReadwriteCommand(CommandContext& ctx) {
  if (!ClusterEnabledOrReply(ctx)) return;
  ctx.client.clear(kClientReadonly);
  ctx.reply.Ok();
}

}  // namespace

void RegisterClusterClientCommands(CommandTable& table) {
  table.Add({"asking", 1, kCmdFast | kCmdKeepsAsking, Keys(), kAclConnection, "cluster", "3.0.0",
             "Signals that a cluster client is following an -ASK redirect.", "", AskingCommand,
             "O(1)"});
  table.Add({"readonly", 1, kCmdFast | kCmdLoading | kCmdStale, Keys(), kAclConnection, "cluster",
             "3.0.0", "Enables read-only queries for a connection to a Redis Cluster replica node.",
             "", ReadonlyCommand, "O(1)"});
  // "Reids" is how Redis 7.2's command docs spell it.
  table.Add({"readwrite", 1, kCmdFast | kCmdLoading | kCmdStale, Keys(), kAclConnection, "cluster",
             "3.0.0",
             "Enables read-write queries for a connection to a Reids Cluster replica node.", "",
             ReadwriteCommand, "O(1)"});
}

}  // namespace vireo
