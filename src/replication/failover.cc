// FAILOVER: a coordinated hand-over from this master to one of its replicas, as Redis 6.2+
// does it. Writes pause (the stream stands still); once the target (or, without TO, any
// replica) has acknowledged our whole stream, we become its replica and send it
// `PSYNC <replid> <offset> FAILOVER`, which makes it promote itself and accept us with
// +CONTINUE. A timeout without a caught-up replica aborts, unless FORCE; a refused PSYNC aborts
// too, and we are a master again.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <climits>

#include "replication/replica_link.h"
#include "replication/replication.h"
#include "server/command_context.h"
#include "server/server.h"
#include "util/clock.h"
#include "util/strings.h"

namespace vireo {

namespace {

struct FailoverArgs {
  bool abort = false;
  std::string host;
  int64_t port = 0;
  bool to = false;
  bool force = false;
  int64_t timeout_ms = 0;
};

// Returns "" or the error reply.
std::string ParseFailoverArgs(const CommandContext& ctx, FailoverArgs* out) {
  if (ctx.argc() == 2 && EqualsIgnoreCase(ctx.arg(1), "abort")) {
    out->abort = true;
    return "";
  }
  for (size_t j = 1; j < ctx.argc(); ++j) {
    std::string_view word = ctx.arg(j);
    if (EqualsIgnoreCase(word, "timeout") && j + 1 < ctx.argc() && out->timeout_ms == 0) {
      if (!ParseInt64(ctx.arg(j + 1), &out->timeout_ms)) return std::string(errors::kNotInteger);
      if (out->timeout_ms <= 0) return "ERR FAILOVER timeout must be greater than 0";
      ++j;
    } else if (EqualsIgnoreCase(word, "to") && j + 2 < ctx.argc() && !out->to) {
      if (!ParseInt64(ctx.arg(j + 2), &out->port)) return std::string(errors::kNotInteger);
      out->host = std::string(ctx.arg(j + 1));
      out->to = true;
      j += 2;
    } else if (EqualsIgnoreCase(word, "force") && !out->force) {
      out->force = true;
    } else {
      return std::string(errors::kSyntax);
    }
  }
  return "";
}

}  // namespace

void Replication::FailoverCommand(CommandContext& ctx) {
  if (server_.cfg().cluster_enabled) {
    ctx.reply.Error(
        "ERR FAILOVER not allowed in cluster mode. Use CLUSTER FAILOVER command instead.");
    return;
  }
  FailoverArgs args;
  if (std::string err = ParseFailoverArgs(ctx, &args); !err.empty()) {
    ctx.reply.Error(err);
    return;
  }
  if (args.abort) {
    if (failover_state_ == FailoverState::kNone) {
      ctx.reply.Error("ERR No failover in progress.");
      return;
    }
    AbortFailover("Failover manually aborted");
    ctx.reply.Ok();
    return;
  }
  if (failover_state_ != FailoverState::kNone) {
    ctx.reply.Error("ERR FAILOVER already in progress.");
    return;
  }
  if (is_replica()) {
    ctx.reply.Error("ERR FAILOVER is not valid when server is a replica.");
    return;
  }
  if (replicas_.empty()) {
    ctx.reply.Error("ERR FAILOVER requires connected replicas.");
    return;
  }
  if (args.force && (args.timeout_ms == 0 || !args.to)) {
    ctx.reply.Error(
        "ERR FAILOVER with force option requires both a timeout and target HOST and IP.");
    return;
  }
  if (args.to) {
    const ReplicaState* target = FindReplicaByAddress(args.host, static_cast<int>(args.port));
    if (target == nullptr) {
      ctx.reply.Error("ERR FAILOVER target HOST and PORT is not a replica.");
      return;
    }
    if (target->phase != ReplicaState::Phase::kOnline) {
      ctx.reply.Error("ERR FAILOVER target replica is not online.");
      return;
    }
    failover_host_ = args.host;
    failover_port_ = static_cast<int>(args.port);
    spdlog::info("FAILOVER requested to {}:{}.", args.host, args.port);
  } else {
    spdlog::info("FAILOVER requested to any replica.");
  }
  failover_end_ms_ = args.timeout_ms > 0 ? NowMs() + args.timeout_ms : 0;
  failover_force_ = args.force;
  failover_state_ = FailoverState::kWaitForSync;
  server_.client_pause().Pause(PausePurpose::kFailover, INT64_MAX, kPauseWrite);
  server_.PauseChanged();
  ctx.reply.Ok();
}

const ReplicaState* Replication::FindReplicaByAddress(std::string_view host, int port) {
  for (const auto& [id, replica] : replicas_) {
    Client* client = server_.FindClient(id);
    if (client != nullptr && EqualsIgnoreCase(ReplicaAddress(*client, replica), host) &&
        replica.listening_port == port) {
      return &replica;
    }
  }
  return nullptr;
}

void Replication::UpdateFailoverStatus() {
  if (failover_abort_pending_) {
    failover_abort_pending_ = false;
    AbortFailover("Failover target rejected psync request");
    return;
  }
  if (failover_state_ != FailoverState::kWaitForSync) return;
  if (failover_end_ms_ != 0 && failover_end_ms_ <= NowMs()) {
    if (failover_force_) {
      spdlog::info("FAILOVER to {}:{} time out exceeded, failing over.", failover_host_,
                   failover_port_);
      failover_state_ = FailoverState::kInProgress;
      SetMaster(failover_host_, failover_port_);
    } else {
      AbortFailover("Replica never caught up before timeout");
    }
    return;
  }
  const int64_t offset = master_repl_offset();
  const ReplicaState* caught_up = nullptr;
  if (!failover_host_.empty()) {
    const ReplicaState* target = FindReplicaByAddress(failover_host_, failover_port_);
    if (target != nullptr && target->ack_offset == offset) caught_up = target;
  } else {
    for (const auto& [id, replica] : replicas_) {
      Client* client = server_.FindClient(id);
      if (client != nullptr && replica.phase == ReplicaState::Phase::kOnline &&
          replica.ack_offset == offset) {
        failover_host_ = ReplicaAddress(*client, replica);
        failover_port_ = replica.listening_port;
        caught_up = &replica;
        break;
      }
    }
  }
  if (caught_up == nullptr) return;
  failover_state_ = FailoverState::kInProgress;
  spdlog::info("Failover target {}:{} is synced, failing over.", failover_host_, failover_port_);
  SetMaster(failover_host_, failover_port_);
}

void Replication::FailoverPsyncAnswered(bool accepted) {
  if (accepted) {
    ClearFailoverState();
  } else {
    // The link is in the middle of its own work: go back to master from the cron.
    failover_abort_pending_ = true;
  }
}

void Replication::AbortFailover(std::string_view reason) {
  if (failover_state_ == FailoverState::kNone) return;
  if (!failover_host_.empty()) {
    spdlog::info("FAILOVER to {}:{} aborted: {}", failover_host_, failover_port_, reason);
  } else {
    spdlog::info("FAILOVER to any replica aborted: {}", reason);
  }
  if (failover_state_ == FailoverState::kInProgress) UnsetMaster();
  ClearFailoverState();
}

void Replication::ClearFailoverState() {
  failover_state_ = FailoverState::kNone;
  failover_host_.clear();
  failover_port_ = 0;
  failover_end_ms_ = 0;
  failover_force_ = false;
  server_.client_pause().Unpause(PausePurpose::kFailover);
  server_.PauseChanged();
}

}  // namespace vireo
