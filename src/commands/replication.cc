// The replication family: SYNC, PSYNC, REPLCONF, REPLICAOF/SLAVEOF, ROLE, WAIT. The work is
// in src/replication/; these handlers route the command there.
#include "commands/families.h"
#include "core/command_table.h"
#include "replication/replication.h"
#include "server/command_context.h"
#include "server/server.h"

namespace vireo {

namespace {

void SyncCommand(CommandContext& ctx) { ctx.server.replication().SyncCommand(ctx); }
void ReplconfCommand(CommandContext& ctx) { ctx.server.replication().ReplconfCommand(ctx); }
void ReplicaofCommand(CommandContext& ctx) { ctx.server.replication().ReplicaofCommand(ctx); }
void RoleCommand(CommandContext& ctx) { ctx.server.replication().RoleReply(ctx.reply); }
void WaitCommand(CommandContext& ctx) { ctx.server.replication().WaitCommand(ctx); }
void WaitAofCommand(CommandContext& ctx) { ctx.server.replication().WaitAofCommand(ctx); }
void FailoverCommand(CommandContext& ctx) { ctx.server.replication().FailoverCommand(ctx); }

}  // namespace

void RegisterReplicationCommands(CommandTable& table) {
  table.Add({"sync", 1, kCmdAdmin | kCmdNoScript | kCmdNoAsyncLoading | kCmdNoMulti, Keys(), 0,
             "server", "1.0.0", "An internal command used in replication.", "", SyncCommand});
  table.Add({"psync", -3, kCmdAdmin | kCmdNoScript | kCmdNoAsyncLoading | kCmdNoMulti, Keys(), 0,
             "server", "2.8.0", "An internal command used in replication.", "replicationid offset",
             SyncCommand});
  table.Add({"replconf", -1, kCmdAdmin | kCmdNoScript | kCmdLoading | kCmdStale | kCmdAllowBusy,
             Keys(), 0, "server", "3.0.0",
             "An internal command for configuring the replication stream.", "", ReplconfCommand,
             "O(1)"});
  table.Add({"replicaof", 3, kCmdAdmin | kCmdNoScript | kCmdStale | kCmdNoAsyncLoading, Keys(), 0,
             "server", "5.0.0",
             "Configures a server as replica of another, or promotes it to a master.",
             "args=<host-port=<host port> | no-one=<NO ONE>>", ReplicaofCommand, "O(1)"});
  table.Add({"slaveof", 3, kCmdAdmin | kCmdNoScript | kCmdStale | kCmdNoAsyncLoading, Keys(), 0,
             "server", "1.0.0",
             "Sets a Redis server as a replica of another, or promotes it to being a master.",
             "args=<host-port=<host port> | no-one=<NO ONE>>", ReplicaofCommand, "O(1)"});
  table.Add({"role", 1, kCmdNoScript | kCmdLoading | kCmdStale | kCmdFast, Keys(),
             kAclAdmin | kAclDangerous, "server", "2.8.12", "Returns the replication role.", "",
             RoleCommand, "O(1)"});
  table.Add({"wait", 3, 0, Keys(), kAclConnection, "generic", "3.0.0",
             "Blocks until the asynchronous replication of all preceding write commands sent by "
             "the connection is completed.",
             "numreplicas timeout:integer", WaitCommand, "O(1)"});
  table.Add({"failover", -1, kCmdAdmin | kCmdNoScript | kCmdStale, Keys(), 0, "server", "6.2.0",
             "Starts a coordinated failover from a server to one of its replicas.",
             "[target=<TO host port [FORCE]>] [ABORT] [TIMEOUT milliseconds]", FailoverCommand,
             "O(1)"});
  table.Add({"waitaof", 4, kCmdNoScript, Keys(), kAclConnection, "generic", "7.2.0",
             "Blocks until all of the preceding write commands sent by the connection are "
             "written to the append-only file of the master and/or replicas.",
             "numlocal numreplicas timeout:integer", WaitAofCommand, "O(1)"});
}

}  // namespace vireo
