// Serving clients while a dataset loads (at start-up, a replica's full sync) or a script runs
// long. Kept apart from the event loop (server.cc): the loader steps that loop between chunks
// of its work.
#include <poll.h>
#include <sys/epoll.h>

#include <algorithm>
#include <ctime>

#include "replication/replica_link.h"
#include "server/server.h"
#include "util/clock.h"

namespace vireo {

void Server::StartLoading(LoadingMode mode, int64_t total_bytes) {
  loading_.mode = mode;
  loading_.start_unix = time(nullptr);
  loading_.start_ms = NowMs();
  loading_.total_bytes = total_bytes;
  loading_.loaded_bytes = 0;
}

void Server::StartupLoadBegan(int64_t total_bytes) {
  StartLoading(LoadingMode::kSync, total_bytes);
}

bool Server::StartupLoadProgressed(int64_t loaded_bytes) {
  loading_.loaded_bytes = loaded_bytes;
  ProcessEventsWhileLoading(-1, 0);
  // A shutdown signal ends the load (the shutdown saves nothing while loading).
  if (!debug_settings_.pause_cron) ShutdownCron();
  return !shutdown_requested_;
}

bool Server::ProcessEventsWhileLoading(int wait_fd, int timeout_ms) {
  // The epoll set is itself pollable: wait for it, the loader's descriptor, or the next timer.
  pollfd fds[2] = {{epoll_fd_, POLLIN, 0}, {wait_fd, POLLIN, 0}};
  const int nfds = wait_fd >= 0 ? 2 : 1;
  int ready = poll(fds, nfds, std::min(timeout_ms, MsUntilNextTimer()));
  ++nested_loops_;
  PollEvents(0);
  --nested_loops_;
  return ready > 0 && nfds == 2 && (fds[1].revents & (POLLIN | POLLHUP | POLLERR)) != 0;
}

std::vector<std::pair<std::string, std::string>> Server::LoadingInfoFields() const {
  if (loading_.mode == LoadingMode::kNone) return {};
  auto num = [](int64_t v) { return std::to_string(v); };
  const int64_t elapsed_s = (NowMs() - loading_.start_ms) / 1000;
  double perc = 0;
  int64_t eta = 1;
  if (loading_.total_bytes > 0) {
    perc = 100.0 * static_cast<double>(loading_.loaded_bytes) /
           static_cast<double>(loading_.total_bytes);
    if (loading_.loaded_bytes > 0 && elapsed_s > 0) {
      const double per_second =
          static_cast<double>(loading_.loaded_bytes) / static_cast<double>(elapsed_s);
      eta = static_cast<int64_t>(static_cast<double>(loading_.total_bytes - loading_.loaded_bytes) /
                                 per_second);
    }
  }
  char perc_text[32];
  snprintf(perc_text, sizeof(perc_text), "%.2f", perc);
  return {
      {"loading_start_time", num(loading_.start_unix)},
      {"loading_total_bytes", num(loading_.total_bytes)},
      {"loading_rdb_used_mem", "0"},
      {"loading_loaded_bytes", num(loading_.loaded_bytes)},
      {"loading_loaded_perc", perc_text},
      {"loading_eta_seconds", num(eta)},
  };
}

// Serving other clients while a script runs past busy-reply-threshold: the loop is stepped
// once with the script's caller, and our master's link, masked.
void Server::ProcessEventsWhileBusy(Client& caller) {
  // The caller's socket leaves the poll set for this turn: its next commands wait for the
  // script to finish, and its read buffer (which the script's arguments point into) must not
  // move or be consumed meanwhile. Our master's stream waits too, as in Redis: its commands
  // would get -BUSY, and the offset would pass writes this replica never applied. (Polling is
  // level-triggered: what arrived meanwhile is read once the socket is back.)
  uint64_t master_id = 0;
  if (const ReplicaLink* link = replication_->link()) master_id = link->master_client_id();
  Client* master = master_id != 0 ? FindClient(master_id) : nullptr;
  if (master == &caller) master = nullptr;
  const bool caller_masked = caller.fd() >= 0 && !caller.closed;
  for (Client* c : {&caller, master}) {
    if (c != nullptr && c->fd() >= 0 && !c->closed) {
      epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, c->fd(), nullptr);
    } else if (c == master) {
      master = nullptr;
    }
  }
  ++nested_loops_;
  PollEvents(0);
  --nested_loops_;
  // The master's link may have been dropped meanwhile: look it up again.
  if (master != nullptr) master = FindClient(master_id);
  for (Client* c : {caller_masked ? &caller : nullptr, master}) {
    if (c == nullptr || c->closed) continue;
    epoll_event ev{};
    ev.events = c->write_pending ? (EPOLLIN | EPOLLOUT) : EPOLLIN;
    ev.data.u64 = c->id();
    epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, c->fd(), &ev);
  }
}

}  // namespace vireo
