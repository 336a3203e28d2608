#include "net/poller.h"

#include <unistd.h>

#include <cerrno>
#include <stdexcept>

namespace vireo {

Poller::Poller(asio::io_context& io, Dispatch dispatch, void* ctx)
    : epoll_fd_(epoll_create1(EPOLL_CLOEXEC)), watcher_(io), dispatch_(dispatch), ctx_(ctx) {
  if (epoll_fd_ < 0) throw std::runtime_error("epoll_create1 failed");
  // The watcher owns a duplicate so closing it can't close our epoll set under us.
  watcher_.assign(dup(epoll_fd_));
}

Poller::~Poller() {
  asio::error_code ec;
  watcher_.close(ec);
  close(epoll_fd_);
}

void Poller::Start() { Arm(); }

void Poller::Arm() {
  watcher_.async_wait(asio::posix::stream_descriptor::wait_read,
                      [this](const asio::error_code& ec) {
                        if (ec) return;
                        OnReady();
                        Arm();
                      });
}

void Poller::OnReady() {
  epoll_event events[512];
  int n = epoll_wait(epoll_fd_, events, 512, 0);
  for (int i = 0; i < n; ++i) dispatch_(ctx_, events[i].data.u64, events[i].events);
}

bool Poller::Add(int fd, uint64_t token) {
  epoll_event ev{};
  ev.events = EPOLLIN | EPOLLRDHUP;
  ev.data.u64 = token;
  return epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev) == 0;
}

void Poller::SetWriteInterest(int fd, uint64_t token, bool on) {
  epoll_event ev{};
  ev.events = EPOLLIN | EPOLLRDHUP | (on ? EPOLLOUT : 0);
  ev.data.u64 = token;
  epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, fd, &ev);
}

void Poller::Remove(int fd) {
  epoll_event ev{};
  epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, &ev);
}

}  // namespace vireo
