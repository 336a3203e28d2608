// The asio half of the Server's loop: its io_context and the timers the server arms. Only the
// loop's own files include it, so the command families and everything else that includes
// server.h do not compile asio.
#pragma once

#include <asio.hpp>

namespace vireo {

struct ServerLoop {
  // Concurrency hint 1: one thread runs the loop, so asio skips cross-thread wake-ups.
  asio::io_context io{1};
  asio::steady_timer cron_timer{io};
  asio::steady_timer block_timer{io};
  asio::steady_timer fast_expire_timer{io};
  asio::steady_timer accept_pause_timer{io};
  asio::steady_timer pause_timer{io};
};

}  // namespace vireo
