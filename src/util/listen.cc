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
  const bool any_v4 = addr == "*";
  const bool any_v6 = addr == "::*";
  hints.ai_family = any_v4 ? AF_INET : any_v6 ? AF_INET6 : AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICHOST;
  addrinfo* res = nullptr;
  const std::string port_text = std::to_string(port);
  const char* host = any_v4 || any_v6 ? nullptr : addr.c_str();
  if (getaddrinfo(host, port_text.c_str(), &hints, &res) != 0) {
    return fmt::format("Invalid bind address '{}'", addr);
  }
  std::string error = fmt::format("Could not create server TCP listening socket {}:{}: {}", addr,
                                  port, "no usable address");
  for (addrinfo* ai = res; ai != nullptr; ai = ai->ai_next) {
    int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) continue;  // this family isn't available here: try the next resolution
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (ai->ai_family == AF_INET6) setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
    const char* failed = bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 ? "bind"
                         : listen(fd, backlog) != 0                 ? "listen"
                                                                    : nullptr;
    if (failed != nullptr) {
      error = fmt::format("Could not create server TCP listening socket {}:{}: {}: {}", addr, port,
                          failed, strerror(errno));
      close(fd);
    } else {
      on_listening(fd);
      error.clear();
    }
    break;  // the first address that gives a socket decides, as Redis's bind does
  }
  freeaddrinfo(res);
  return error;
}

}  // namespace vireo
