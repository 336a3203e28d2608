// The shutdown sequence as Redis 7.2 runs it, for SHUTDOWN and the shutdown signals: unless
// NOW (or shutdown-timeout 0), a master with replicas that haven't acknowledged its whole
// stream pauses writes, asks them for an ACK and waits up to shutdown-timeout seconds for them
// (SHUTDOWN's client stays blocked meanwhile); then the final steps (AOF fsync, the last RDB
// save, closing the listeners). A failing step stops the shutdown unless FORCE, and the
// blocked SHUTDOWN clients get the error. SHUTDOWN ABORT cancels a pending shutdown.
//
// Server implements it (src/server/shutdown.cc) and hands it to command handlers as
// CommandContext::shutdown().
#pragma once

#include <cstdint>

namespace vireo {

class CommandContext;

class ShutdownControl {
 public:
  // SHUTDOWN with kShutdown* flags (core/config.h) from the client running `ctx`: the server
  // exits after this turn (the client gets no reply: its connection closes), or the client
  // blocks while replicas catch up, or it gets Redis's error because a step failed.
  virtual void ShutdownFromCommand(CommandContext& ctx, uint32_t flags) = 0;
  // SHUTDOWN ABORT: false when no shutdown is pending (neither waiting for replicas nor a
  // signal not yet acted on).
  virtual bool AbortShutdown() = 0;

 protected:
  ~ShutdownControl() = default;
};

}  // namespace vireo
