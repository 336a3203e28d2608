// The replication family: SYNC, PSYNC, REPLCONF, REPLICAOF/SLAVEOF, ROLE, WAIT, WAITAOF,
// FAILOVER. Each handler reads its arguments here and runs an operation of Replication
// (src/replication/), which takes plain values and says what happened.
#include "replication/replication.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <optional>
#include <string>
#include <vector>

#include "commands/families.h"
#include "core/arg_parser.h"
#include "core/command_table.h"
#include "core/config.h"
#include "persistence/aof.h"
#include "persistence/rdb.h"
#include "server/blocking_service.h"
#include "server/client.h"
#include "server/command_context.h"
#include "util/strings.h"

namespace vireo {

namespace {

// Redis's client description in the REPLICAOF log lines.
std::string ClientInfo(const Client& client) {
  return fmt::format("id={} addr={} laddr={} fd={} name={}", client.id(), client.addr, client.laddr,
                     client.fd(), client.name);
}

// SYNC, and PSYNC replid offset [FAILOVER].
void SyncCommand(CommandContext& ctx) {
  Client& client = ctx.client;
  // A replica repeating SYNC is ignored, as in Redis.
  if (client.has(kClientReplica)) return;
  Replication& replication = ctx.replication();
  SyncRequest request;
  request.client_id = client.id();
  request.client_addr = client.addr;
  request.psync = EqualsIgnoreCase(ctx.arg(0), "psync");
  if (request.psync) request.replid = ctx.arg(1);
  request.failover = request.psync && ctx.argc() > 3 && EqualsIgnoreCase(ctx.arg(3), "failover");
  request.tls = client.tls != nullptr;
  request.pending_output = client.output().size() - client.output_written;
  if (std::string err = replication.SyncRefusal(request); !err.empty()) {
    ctx.reply.Error(err);
    return;
  }
  int64_t offset = 0;
  if (request.psync) {
    ArgParser args(ctx, 2);
    offset = args.Int();
    if (!args.Check()) {
      spdlog::warn("Replica {} asks for synchronization but with a wrong offset", client.addr);
      return;
    }
  }
  replication.Sync(request, offset);
}

// REPLCONF ACK <offset> [FACK <aof offset>] from a replica (never answered), or REPLCONF
// <option> <value> ... settings before (or after) SYNC/PSYNC, or GETACK from our master.
void ReplconfCommand(CommandContext& ctx) {
  ArgParser args(ctx, 1);
  if (ctx.argc() % 2 == 0) args.SyntaxError();
  if (!args.Check()) return;
  Replication& replication = ctx.replication();
  if (ctx.argc() >= 3 && EqualsIgnoreCase(ctx.arg(1), "ack")) {
    // A malformed ACK is ignored: the replica gets no reply to it either way.
    int64_t offset = 0;
    if (!ParseInt64(ctx.arg(2), &offset)) return;
    std::optional<int64_t> aof_offset;
    int64_t fack = 0;
    if (ctx.argc() >= 5 && EqualsIgnoreCase(ctx.arg(3), "fack") && ParseInt64(ctx.arg(4), &fack)) {
      aof_offset = fack;
    }
    replication.Ack(ctx.client.id(), offset, aof_offset);
    return;
  }
  ReplicaState& settings = replication.ReplicaSettings(ctx.client.id());
  while (args.HasNext()) {
    switch (args.OneOf(
        {"listening-port", "ip-address", "capa", "getack", "rdb-only", "rdb-filter-only"})) {
      case 0: {
        const int64_t port = args.Int();
        if (args.ok()) settings.listening_port = static_cast<int>(port);
        break;
      }
      case 1: {
        std::string_view ip = args.Next();
        if (ip.size() >= 256) {  // NET_HOST_STR_LEN
          args.Fail(fmt::format(
              "ERR REPLCONF ip-address provided by replica instance is too long: {} bytes",
              ip.size()));
        } else {
          settings.announced_ip = std::string(ip);
        }
        break;
      }
      case 2: {
        std::string_view capa = args.Next();
        if (EqualsIgnoreCase(capa, "eof")) settings.capa_eof = true;
        if (EqualsIgnoreCase(capa, "psync2")) settings.capa_psync2 = true;
        break;
      }
      case 3:
        // Our master asks where we are: answered on the master link, nothing here.
        if (replication.is_replica() && ctx.client.has(kClientMaster)) {
          replication.MasterRequestedAck();
        }
        return;
      case 4: {
        const int64_t only = args.IntInRange(0, 1);
        if (args.ok()) settings.rdb_only = only == 1;
        break;
      }
      case 5: {
        // What the snapshot includes: nothing unless listed, and "functions" is all there is
        // to list ("" asks for an empty snapshot, as redis-cli --replica does).
        bool ok = true;
        std::vector<std::string> filters = SplitArgs(args.Next(), &ok);
        if (!ok) {
          args.Fail("ERR Missing rdb-filter-only values");
          break;
        }
        uint8_t exclude = kRdbExcludeData | kRdbExcludeFunctions;
        for (const std::string& filter : filters) {
          if (!EqualsIgnoreCase(filter, "functions")) {
            args.Fail(fmt::format("ERR Unsupported rdb-filter-only option: {}", filter));
            break;
          }
          exclude &= static_cast<uint8_t>(~kRdbExcludeFunctions);
        }
        if (args.ok()) settings.rdb_exclude = exclude;
        break;
      }
      default:
        args.Fail(fmt::format("ERR Unrecognized REPLCONF option: {}", args.Peek()));
        break;
    }
  }
  if (!args.Check()) return;
  ctx.reply.Ok();
}

// REPLICAOF / SLAVEOF host port | NO ONE.
void ReplicaofCommand(CommandContext& ctx) {
  Replication& replication = ctx.replication();
  // A cluster node replicates whichever master the cluster gives it (CLUSTER REPLICATE).
  if (ctx.cfg().cluster_enabled) {
    ctx.reply.Error("ERR REPLICAOF not allowed in cluster mode.");
    return;
  }
  if (replication.failover_state() != Replication::FailoverState::kNone) {
    ctx.reply.Error("ERR REPLICAOF not allowed while failing over.");
    return;
  }
  if (EqualsIgnoreCase(ctx.arg(1), "no") && EqualsIgnoreCase(ctx.arg(2), "one")) {
    replication.PromoteByUser(ClientInfo(ctx.client));
    ctx.reply.Ok();
    return;
  }
  if (ctx.client.has(kClientReplica)) {
    ctx.reply.Error("ERR Command is not valid when client is a replica.");
    return;
  }
  ArgParser args(ctx, 2);
  const int64_t port = args.IntInRange(0, 65535, "ERR Invalid master port");
  if (!args.Check()) return;
  if (!replication.Follow(std::string(ctx.arg(1)), static_cast<int>(port),
                          ClientInfo(ctx.client))) {
    ctx.reply.Raw("+OK Already connected to specified master\r\n");
    return;
  }
  ctx.reply.Ok();
}

void RoleCommand(CommandContext& ctx) {
  const RoleInfo role = ctx.replication().Role();
  ReplyBuilder& reply = ctx.reply;
  if (role.replica) {
    reply.Array(5);
    reply.Bulk("slave");
    reply.Bulk(role.master_host);
    reply.Integer(role.master_port);
    reply.Bulk(role.link_state);
    reply.Integer(role.processed_offset);
    return;
  }
  reply.Array(3);
  reply.Bulk("master");
  reply.Integer(role.master_offset);
  reply.Array(role.replicas.size());
  for (const RoleInfo::Replica& replica : role.replicas) {
    reply.Array(3);
    reply.Bulk(replica.ip);
    reply.Bulk(std::to_string(replica.port));
    reply.Bulk(std::to_string(replica.ack_offset));
  }
}

// WAIT / WAITAOF: blocks the client until acknowledgements arrive (it then runs again) or the
// timeout passes (it runs again without blocking and replies with the counts then).
void BlockForAcks(CommandContext& ctx, int64_t timeout_ms) {
  BlockOptions options;
  options.rerun_on_timeout = true;
  ctx.blocking().BlockClient(ctx, {}, timeout_ms, ValueType::kString, std::move(options));
  ctx.replication().WaitForAcks(ctx.client.id());
}

// WAIT numreplicas timeout
void WaitCommand(CommandContext& ctx) {
  Replication& replication = ctx.replication();
  if (replication.is_replica()) {
    ctx.reply.Error(
        "ERR WAIT cannot be used with replica instances. Please also note that since Redis 4.0 "
        "if a replica is configured to be writable (which is not the default) writes to "
        "replicas are just local and are not propagated.");
    return;
  }
  ArgParser args(ctx, 1);
  const int64_t wanted = args.Int();
  const int64_t timeout_ms = args.TimeoutMs(ctx.db.now_ms());
  if (!args.Check()) return;
  const int acked = replication.ReplicasAckedAtLeast(ctx.client.woff);
  if (acked >= wanted || !ctx.may_block()) {
    ctx.reply.Integer(acked);
    return;
  }
  BlockForAcks(ctx, timeout_ms);
}

// WAITAOF numlocal numreplicas timeout
void WaitAofCommand(CommandContext& ctx) {
  ArgParser args(ctx, 1);
  const int64_t numlocal = args.IntInRange(0, 1);
  const int64_t numreplicas = args.NonNegative();
  const int64_t timeout_ms = args.TimeoutMs(ctx.db.now_ms());
  if (!args.Check()) return;
  Replication& replication = ctx.replication();
  if (replication.is_replica()) {
    ctx.reply.Error(
        "ERR WAITAOF cannot be used with replica instances. Please also note that writes to "
        "replicas are just local and are not propagated.");
    return;
  }
  const int64_t fsynced = ctx.aof().fsynced_reploff();
  if (numlocal > 0 && !ctx.cfg().appendonly) {
    ctx.reply.Error("ERR WAITAOF cannot be used when numlocal is set but appendonly is disabled.");
    return;
  }
  const int64_t offset = ctx.client.woff;
  const int local = fsynced >= offset ? 1 : 0;
  const int replicas = replication.ReplicasFsyncedAtLeast(offset);
  if ((local >= numlocal && replicas >= numreplicas) || !ctx.may_block()) {
    ctx.reply.Array(2);
    ctx.reply.Integer(local);
    ctx.reply.Integer(replicas);
    return;
  }
  BlockForAcks(ctx, timeout_ms);
}

// FAILOVER [TO host port [FORCE]] [ABORT] [TIMEOUT milliseconds]
void FailoverCommand(CommandContext& ctx) {
  if (ctx.cfg().cluster_enabled) {
    ctx.reply.Error(
        "ERR FAILOVER not allowed in cluster mode. Use CLUSTER FAILOVER command instead.");
    return;
  }
  FailoverRequest request;
  ArgParser args(ctx, 1);
  if (ctx.argc() == 2 && EqualsIgnoreCase(ctx.arg(1), "abort")) {
    request.abort = true;
    args.Next();
  }
  while (args.HasNext()) {
    if (request.timeout_ms == 0 && args.OptionName("timeout")) {
      request.timeout_ms = args.Int();
      if (args.ok() && request.timeout_ms <= 0) {
        args.Fail("ERR FAILOVER timeout must be greater than 0");
      }
    } else if (!request.to && args.OptionName("to", 2)) {
      request.host = std::string(args.Next());
      request.port = args.Int();
      request.to = true;
    } else if (!request.force && args.Flag("force")) {
      request.force = true;
    } else {
      args.SyntaxError();
    }
  }
  if (!args.Check()) return;
  if (std::string err = ctx.replication().Failover(request); !err.empty()) {
    ctx.reply.Error(err);
    return;
  }
  ctx.reply.Ok();
}

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
