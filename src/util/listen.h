// Listening TCP sockets, shared by the client listeners and the cluster bus.
#pragma once

#include <functional>
#include <string>

namespace vireo {

// Binds a non-blocking, close-on-exec listening socket on every address `addr` resolves to
// ("*": all), at `port`, and hands each to `on_listening`. IPv6 sockets are v6-only so an IPv4
// listener on the same port can coexist. Returns "" when at least the last resolved address
// listened, else the error ("Invalid bind address" when `addr` does not parse).
std::string ListenOnAddress(const std::string& addr, int port, int backlog,
                            const std::function<void(int fd)>& on_listening);

}  // namespace vireo
