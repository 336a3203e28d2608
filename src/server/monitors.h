// MONITOR: the clients that see every command the server runs, as one line each
// (+<unix time>.<us> [<db> <address>] "arg" ...), with secrets redacted.
#pragma once

#include <functional>
#include <span>
#include <string_view>
#include <vector>

namespace vireo {

class Client;

class Monitors {
 public:
  // `schedule_write` makes sure a monitor's appended output gets written (the server's write
  // queue).
  explicit Monitors(std::function<void(Client&)> schedule_write)
      : schedule_write_(std::move(schedule_write)) {}
  Monitors(const Monitors&) = delete;
  Monitors& operator=(const Monitors&) = delete;

  // MONITOR: flags the client kClientMonitor and starts feeding it (once).
  void Add(Client& client);
  // Stops feeding the client (closed, RESET); its kClientMonitor flag is left to the caller.
  void Remove(Client& client);
  bool empty() const { return monitors_.empty(); }
  // Shows `client`'s command `argv` to every monitor but `client` itself. Cheap when nobody
  // monitors (commands that feed it themselves, EVAL and FCALL, call it unconditionally).
  void Feed(const Client& client, std::span<const std::string_view> argv) {
    if (!monitors_.empty()) FeedAll(client, argv);
  }

 private:
  void FeedAll(const Client& client, std::span<const std::string_view> argv);

  std::vector<Client*> monitors_;
  std::function<void(Client&)> schedule_write_;
};

}  // namespace vireo
