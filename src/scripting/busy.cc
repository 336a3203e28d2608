// Serving other clients while a script runs past busy-reply-threshold. Kept apart from the
// event loop (server.cc): it only steps that loop once, with the script's caller masked.
#include <sys/epoll.h>

#include "server/server.h"

namespace vireo {

void Server::ProcessEventsWhileBusy(Client& caller) {
  // The caller's socket leaves the poll set for this turn: its next commands wait for the
  // script to finish, and its read buffer (which the script's arguments point into) must not
  // move or be consumed meanwhile.
  bool masked = caller.fd() >= 0 && !caller.closed;
  if (masked) epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, caller.fd(), nullptr);
  PollEvents(0);
  if (masked && !caller.closed) {
    epoll_event ev{};
    ev.events = caller.write_pending ? (EPOLLIN | EPOLLOUT) : EPOLLIN;
    ev.data.u64 = caller.id();
    epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, caller.fd(), &ev);
  }
}

}  // namespace vireo
