// Embedding API: run a vireo server inside another process (tests, applications).
//
//   vireo::EmbeddedServer server({.port = 0});   // 0 picks a free port
//   if (std::string err = server.Start(); !err.empty()) { ... }
//   connect to 127.0.0.1:server.port() ...
//   server.Stop();
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace vireo {

struct EmbeddedOptions {
  int port = 0;  // 0: pick a free loopback port
  std::string bind = "127.0.0.1";
  std::string unix_socket;  // also listen on this unix socket path when non-empty
  bool tcp = true;          // false: unix socket only
  // Further redis.conf-style options, as on the command line: {"--databases", "4"}.
  std::vector<std::string> args;
};

class EmbeddedServer {
 public:
  explicit EmbeddedServer(EmbeddedOptions options = {});
  ~EmbeddedServer();
  EmbeddedServer(const EmbeddedServer&) = delete;
  EmbeddedServer& operator=(const EmbeddedServer&) = delete;

  // Starts the server on its own thread. Returns "" or the error.
  std::string Start();
  // Stops the server and joins its thread. Safe to call twice.
  void Stop();
  // The TCP port it listens on (0 when tcp is false).
  int port() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace vireo
