// The server's event loop as the code around it sees it: main.cc's signal handling, commands
// that arm their own timers (XREADGROUP's CLAIM wake-up), SHUTDOWN and CONFIG SET of the
// listening addresses. The server implements
// it and hands it out as Server::loop(); the asio half lives in server_loop.h, which only the
// loop's own files include.
#pragma once

#include <chrono>
#include <string>

namespace asio {
class io_context;
}  // namespace asio

namespace vireo {

class EventLoop {
 public:
  virtual ~EventLoop() = default;

  // asio runs timers and signals; client and listener sockets are on the server's own
  // level-triggered epoll set (see Server::Run). A timer armed on io() must be passed to
  // NoteTimer after each expires_at/expires_after so the loop wakes for it on time (otherwise
  // it fires at the next cron tick at the latest).
  virtual asio::io_context& io() = 0;
  template <typename Timer>
  void NoteTimer(const Timer& timer) {
    NoteTimerDeadline(&timer, timer.expiry());
  }
  // One turn of the loop: waits up to `timeout_ms` (0: don't wait, -1: until the next timer)
  // for ready sockets, reads and runs what arrived, runs due timers, then flushes replies.
  // Long-running work (scripts) may call it with 0 to keep serving other clients.
  virtual void PollEvents(int timeout_ms) = 0;
  // Takes a socket off the loop's epoll set.
  virtual void UnwatchSocket(int fd) = 0;
  // CONFIG SET bind/port/tls-port: replaces the TCP listeners (plain and TLS) with ones for
  // the configured bind addresses and ports. Returns "" or the error (then no TCP listener is
  // left open, and *tls_failed says whether a TLS one failed: the caller restores the old
  // configuration and calls it again).
  virtual std::string RebindTcp(bool* tls_failed = nullptr) = 0;

  // Ends the loop after the current turn (SHUTDOWN, main's signal handler on the loop
  // thread); Server::RequestShutdown is the thread-safe way in.
  virtual bool shutting_down() const = 0;
  virtual void Shutdown() = 0;

 protected:
  virtual void NoteTimerDeadline(const void* timer,
                                 std::chrono::steady_clock::time_point deadline) = 0;
};

}  // namespace vireo
