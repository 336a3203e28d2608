// Readiness notification for client sockets: a level-triggered epoll set nested in the asio loop.
//
// asio re-arms a descriptor with epoll_ctl on every async_wait, which for a busy server means a
// system call per read. Here every client socket is registered once; asio watches only the one
// epoll descriptor, and when it becomes readable we collect all ready clients with a
// non-blocking epoll_wait and hand each to the server. One re-arm per loop turn instead of one
// per client.
#pragma once

#include <sys/epoll.h>

#include <cstdint>

#include <asio.hpp>

namespace vireo {

class Poller {
 public:
  // Called for each ready descriptor with the token it was registered with and the events.
  using Dispatch = void (*)(void* ctx, uint64_t token, uint32_t events);

  Poller(asio::io_context& io, Dispatch dispatch, void* ctx);
  ~Poller();
  Poller(const Poller&) = delete;
  Poller& operator=(const Poller&) = delete;

  // Starts watching (call once the loop is set up).
  void Start();
  bool Add(int fd, uint64_t token);
  // Read interest stays on: the server keeps reading (into the query buffer) even while a
  // client is blocked, as Redis does. Write interest is only on while output is pending.
  void SetWriteInterest(int fd, uint64_t token, bool on);
  void Remove(int fd);

 private:
  void Arm();
  void OnReady();

  int epoll_fd_;
  asio::posix::stream_descriptor watcher_;
  Dispatch dispatch_;
  void* ctx_;
};

}  // namespace vireo
