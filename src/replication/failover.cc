// FAILOVER: a coordinated hand-over from this master to one of its replicas, as Redis 6.2+
// does it. Writes pause (the stream stands still); once the target (or, without TO, any
// replica) has acknowledged our whole stream, we become its replica and send it
// `PSYNC <replid> <offset> FAILOVER`, which makes it promote itself and accept us with
// +CONTINUE. A timeout without a caught-up replica aborts, unless FORCE; a refused PSYNC aborts
// too, and we are a master again.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "replication/replica_link.h"
#include "replication/replication.h"
#include "util/clock.h"
#include "util/strings.h"

namespace vireo {

std::string Replication::Failover(const FailoverRequest& request) {
  if (request.abort) {
    if (failover_state_ == FailoverState::kNone) return "ERR No failover in progress.";
    AbortFailover("Failover manually aborted");
    return "";
  }
  if (failover_state_ != FailoverState::kNone) return "ERR FAILOVER already in progress.";
  if (is_replica()) return "ERR FAILOVER is not valid when server is a replica.";
  if (replicas_.empty()) return "ERR FAILOVER requires connected replicas.";
  if (request.force && (request.timeout_ms == 0 || !request.to)) {
    return "ERR FAILOVER with force option requires both a timeout and target HOST and IP.";
  }
  if (request.to) {
    const ReplicaState* target = FindReplicaByAddress(request.host, static_cast<int>(request.port));
    if (target == nullptr) return "ERR FAILOVER target HOST and PORT is not a replica.";
    if (target->phase != ReplicaState::Phase::kOnline) {
      return "ERR FAILOVER target replica is not online.";
    }
    failover_host_ = request.host;
    failover_port_ = static_cast<int>(request.port);
    spdlog::info("FAILOVER requested to {}:{}.", request.host, request.port);
  } else {
    spdlog::info("FAILOVER requested to any replica.");
  }
  failover_end_ms_ = request.timeout_ms > 0 ? NowMs() + request.timeout_ms : 0;
  failover_force_ = request.force;
  failover_state_ = FailoverState::kWaitForSync;
  host_.PauseWritesForFailover(true);
  return "";
}

const ReplicaState* Replication::FindReplicaByAddress(std::string_view host, int port) {
  for (const auto& [id, replica] : replicas_) {
    if (host_.ClientExists(id) &&
        EqualsIgnoreCase(ReplicaAddress(host_.ClientAddress(id), replica), host) &&
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
      if (host_.ClientExists(id) && replica.phase == ReplicaState::Phase::kOnline &&
          replica.ack_offset == offset) {
        failover_host_ = ReplicaAddress(host_.ClientAddress(id), replica);
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
  host_.PauseWritesForFailover(false);
}

}  // namespace vireo
