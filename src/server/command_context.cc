// Out of line so that command_context.h needs no more of the server than its name.
#include "server/command_context.h"

#include "server/server.h"

namespace vireo {

BlockingService& CommandContext::blocking() const { return server.blocking(); }
ClientRegistry& CommandContext::clients() const { return server.clients(); }
ClientPause& CommandContext::client_pause() const { return server.client_pause(); }

}  // namespace vireo
