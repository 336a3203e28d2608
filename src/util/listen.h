// Listening TCP sockets, shared by the client listeners and the cluster bus.
#pragma once

#include <functional>
#include <string>

namespace vireo {

// Binds a non-blocking, close-on-exec listening socket at `port` on `addr`, as Redis's bind
// entries mean it: "*" is every IPv4 address, "::*" every IPv6 one, anything else a numeric
// address (its first usable resolution). The socket goes to `on_listening`. IPv6 sockets are
// v6-only so an IPv4 listener on the same port can coexist. Returns "" when it listens, else the
// error ("Invalid bind address" when `addr` does not parse); a port taken on IPv4 is an error
// even where IPv6 would be free, so nobody ends up listening on half of "* -::*".
std::string ListenOnAddress(const std::string& addr, int port, int backlog,
                            const std::function<void(int fd)>& on_listening);

}  // namespace vireo
