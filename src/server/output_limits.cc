// client-output-buffer-limit: a client whose unsent output grows past its class's hard limit,
// or stays past the soft limit for longer than the soft seconds, is closed, so one slow reader
// (typically a pub/sub subscriber that stopped reading) can't take the server's memory with it.
#include <spdlog/spdlog.h>

#include <algorithm>

#include "server/info.h"
#include "server/server.h"
#include "util/clock.h"

namespace vireo {
namespace {

constexpr int64_t kUnauthenticatedOutputLimit = 16 * 1024 + 1024;

}  // namespace

void Server::PushToClient(Client& client, std::string_view bytes) {
  // A client scheduled to close gets nothing more: its buffer is what we are protecting.
  if (client.closed || client.has(kClientCloseAsap)) return;
  // The client's own command is running (its handler, not the checks before it, which may
  // evict and invalidate): its reply comes first, as Redis 7.2 defers pushes to the executing
  // client.
  if (client.collect_pushes && executing_depth_ > 0) {
    client.deferred_pushes.append(bytes);
    return;
  }
  client.output().append(bytes);
  QueueWrite(client);
}

bool Server::EnforceOutputLimit(Client& client) {
  if (client.has(kClientCloseAsap)) return true;
  auto used = static_cast<int64_t>(client.output().size() - client.output_written);
  // A client that has not authenticated yet gets at most a reply buffer's worth plus 1 KB
  // (Redis's 16 KB static buffer and its CVE-2025-21605 fix), whatever the class limits say:
  // otherwise a stranger who never reads could make us buffer NOAUTH errors without bound.
  if (!client.authenticated() && used > kUnauthenticatedOutputLimit) {
    return ScheduleCloseForOutputLimit(client);
  }
  // MONITOR clients count as normal ones, as in Redis; our master's link gets no replies, so
  // no limit.
  if (client.has(kClientMaster)) return false;
  const int cls = client.has(kClientReplica)  ? kObufReplica
                  : client.has(kClientPubsub) ? kObufPubsub
                                              : kObufNormal;
  const ClientBufferLimit& limit = cfg().client_obuf_limits[cls];
  if (limit.hard_bytes == 0 && limit.soft_bytes == 0) return false;
  int64_t hard_bytes = limit.hard_bytes;
  if (cls == kObufReplica) {
    // A replica's stream is in the shared replication buffer: it counts what it keeps alive
    // there. A hard limit below repl-backlog-size would drop replicas right after a partial
    // resync the backlog allowed, so (as Redis does) the backlog's size is the least it is.
    used += static_cast<int64_t>(replication_->ReplicaStreamHeld(client.id()));
    if (hard_bytes > 0) hard_bytes = std::max(hard_bytes, cfg().repl_backlog_size);
  }
  bool over = hard_bytes > 0 && used >= hard_bytes;
  if (limit.soft_bytes > 0 && used >= limit.soft_bytes) {
    // The soft limit only counts once it has been exceeded continuously for soft_seconds.
    // Whole seconds, as Redis counts them.
    int64_t now_s = FastNowMs() / 1000;
    if (client.obuf_soft_limit_since_s == 0) {
      client.obuf_soft_limit_since_s = now_s;
    } else if (now_s - client.obuf_soft_limit_since_s > limit.soft_seconds) {
      over = true;
    }
  } else {
    client.obuf_soft_limit_since_s = 0;
  }
  if (!over) return false;
  return ScheduleCloseForOutputLimit(client);
}

bool Server::ScheduleCloseForOutputLimit(Client& client) {
  client.set(kClientCloseAsap);
  ++stats_.client_output_buffer_limit_disconnections;
  spdlog::warn("Client {} scheduled to be closed ASAP for overcoming of output buffer limits.",
               ServerReports(*this).ClientLine(client));
  // The close happens in FlushPendingWrites, outside any command: a command may be walking
  // the subscriber list this client is on, or building a reply in this very buffer.
  if (!client.in_pending_writes) {
    client.in_pending_writes = true;
    pending_writes_.push_back(client.id());
  }
  return true;
}

bool Server::ReplicaStreamPending(const Client& client) const {
  return client.has(kClientReplica) && replication_->ReplicaStreamUnread(client.id()) > 0;
}

void Server::CloseOverLimitClient(Client& client) {
  // What it didn't read is dropped, not written: that is the point of the limit.
  std::string().swap(client.output());
  client.output_written = 0;
  CloseClient(client);
}

void Server::CompactOutput(Client& client) {
  // A reader that keeps up only partly never empties its buffer, so the written prefix would
  // otherwise accumulate forever. Dropping it once it is most of the buffer keeps the cost
  // linear in the bytes sent.
  std::string& out = client.output();
  if (client.output_written >= 1024 * 1024 && client.output_written * 2 >= out.size()) {
    out.erase(0, client.output_written);
    client.output_written = 0;
  }
}

}  // namespace vireo
