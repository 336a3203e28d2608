#include "util/listen.h"

#include <fmt/format.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace vireo {

std::string ListenOnAddress(const std::string& addr, int port, int backlog,
                            const std::function<void(int fd)>& on_listening) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICHOST;
  addrinfo* res = nullptr;
  const std::string port_text = std::to_string(port);
  if (getaddrinfo(addr == "*" ? nullptr : addr.c_str(), port_text.c_str(), &hints, &res) != 0) {
    return fmt::format("Invalid bind address '{}'", addr);
  }
  std::string error;
  for (addrinfo* ai = res; ai != nullptr; ai = ai->ai_next) {
    int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) continue;
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (ai->ai_family == AF_INET6) setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
    if (bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || listen(fd, backlog) != 0) {
      error = fmt::format("Could not create server TCP listening socket {}:{}: {}", addr, port,
                          strerror(errno));
      close(fd);
      continue;
    }
    on_listening(fd);
    error.clear();
  }
  freeaddrinfo(res);
  return error;
}

}  // namespace vireo
