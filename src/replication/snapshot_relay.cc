// A diskless sync. The forked child writes the image into a pipe, and the server relays it to
// the replicas, as Redis does: one chunk at a time, the next read only when every replica has
// taken the last one, so the pipe (and the child) wait for the slowest replica instead of the
// server buffering the image. The server owns the sockets (and the TLS sessions, which the
// child couldn't write into), so it applies repl-timeout as it stands now.
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <vector>

#include "replication/replication.h"
#include "security/tls.h"
#include "util/clock.h"

namespace vireo {

namespace {

constexpr size_t kRelayChunk = 16 * 1024;  // what Redis reads from its pipe at a time

}  // namespace

void Replication::WatchRelayPipe(bool on) {
  if (relay_.fd < 0 || relay_.watched == on) return;
  relay_.watched = on;
  host_.WatchSnapshotPipe(relay_.fd, on);
}

void Replication::RelayNextChunk() {
  while (relay_.fd >= 0) {
    bool any = false;
    for (uint64_t id : relay_.ids) {
      ReplicaState* replica = FindReplica(id);
      if (replica == nullptr || !replica->relay || !host_.ClientOpen(id)) continue;
      // One replica still writes the chunk: the pipe waits (off the loop, or the level-
      // triggered event would spin) until that replica calls again.
      if (replica->relay_sent < relay_.chunk.size()) {
        WatchRelayPipe(false);
        return;
      }
      any = true;
    }
    relay_.chunk.resize(kRelayChunk);
    const ssize_t n = read(relay_.fd, relay_.chunk.data(), relay_.chunk.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) {
      relay_.chunk.clear();
      WatchRelayPipe(true);
      return;
    }
    if (n <= 0) {  // the child closed its end: the whole image went through (or it failed)
      WatchRelayPipe(false);
      close(relay_.fd);
      relay_.fd = -1;
      relay_.chunk.clear();
      FinishRelayIfDone();
      return;
    }
    relay_.chunk.resize(static_cast<size_t>(n));
    // No replica left to take it: read on, so the child can finish its other replicas.
    if (!any) continue;
    for (uint64_t id : relay_.ids) {
      ReplicaState* replica = FindReplica(id);
      if (replica == nullptr || !replica->relay) continue;
      replica->relay_sent = 0;
      host_.SetClientBulkPending(id, true);
      host_.SendToClient(id, "");  // schedules the write (SendBulk)
    }
  }
}

bool Replication::RelaySend(uint64_t client_id, ReplicaState& replica) {
  TlsSession* tls = host_.ClientTls(client_id);
  const int fd = host_.ClientSocket(client_id);
  while (replica.relay_sent < relay_.chunk.size()) {
    const char* data = relay_.chunk.data() + replica.relay_sent;
    const size_t size = relay_.chunk.size() - replica.relay_sent;
    const ssize_t n = tls != nullptr ? tls->Write(data, size) : write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (replica.relay_stuck_since_ms == 0) replica.relay_stuck_since_ms = NowMs();
      return true;
    }
    if (n <= 0) {
      spdlog::warn("Diskless rdb transfer, write error sending DB to replica: {}",
                   n < 0 ? strerror(errno) : "EOF");
      return false;
    }
    replica.relay_sent += static_cast<size_t>(n);
    host_.CountReplicationOutput(static_cast<uint64_t>(n));
  }
  replica.relay_stuck_since_ms = 0;
  host_.SetClientBulkPending(client_id, false);
  RelayNextChunk();
  return true;
}

void Replication::DropStuckRelayReplicas() {
  const int64_t now = NowMs();
  std::vector<uint64_t> stuck;
  for (const auto& [id, replica] : replicas_) {
    if (replica.relay && replica.relay_stuck_since_ms != 0 &&
        now - replica.relay_stuck_since_ms > cfg().repl_timeout * 1000) {
      stuck.push_back(id);
    }
  }
  for (uint64_t id : stuck) {
    spdlog::warn("Disconnecting timedout replica (full sync): {}", host_.ClientAddress(id));
    host_.CloseClientNow(id);
  }
}

void Replication::FinishRelayIfDone() {
  if (relay_.fd >= 0 || !relay_.child_done) return;
  std::vector<uint64_t> ids = std::move(relay_.ids);
  const bool ok = relay_.child_ok;
  const bool child_failed = relay_.child_failed;
  relay_ = SnapshotRelay{};
  for (uint64_t id : ids) {
    ReplicaState* replica = FindReplica(id);
    if (replica == nullptr || !replica->relay || !host_.ClientOpen(id)) continue;
    replica->relay = false;
    host_.SetClientBulkPending(id, false);
    if (child_failed) {
      spdlog::warn("SYNC failed. BGSAVE child returned an error");
      host_.CloseClientNow(id);
      continue;
    }
    if (!EndDisklessTransfer(id, *replica, ok)) host_.CloseClientNow(id);
  }
  StartRdbChildIfWaiting();
}

}  // namespace vireo
