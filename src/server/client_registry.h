// The connected clients as command handlers and the server's parts see them: look one up, walk
// them all, close one, push bytes to one, and (embedding and tests) adopt a socket as a client
// and feed it input. Server implements it privately and hands it out through Server::clients(),
// so whoever needs the clients needs nothing else of the server.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string_view>

#include "security/tls.h"
#include "server/client.h"

namespace vireo {

class ClientRegistry {
 public:
  using ClientMap = std::map<uint64_t, std::unique_ptr<Client>>;

  // Every client, by id (ascending: the order of CLIENT LIST).
  virtual const ClientMap& All() const = 0;
  // nullptr if no client has `id`.
  virtual Client* FindClient(uint64_t id) = 0;
  // Marks a client to be closed once its pending output is written (QUIT, protocol errors).
  virtual void CloseAfterReply(Client& client) = 0;
  // Closes a client now (CLIENT KILL, errors).
  virtual void CloseClient(Client& client) = 0;
  // What RESET undoes beyond the client's own fields: ASKING/READONLY, pub/sub, tracking,
  // MONITOR.
  virtual void ResetClientState(Client& client) = 0;
  // The client whose request is running (nullptr between requests).
  virtual Client* current_client() const = 0;
  // Appends server-initiated bytes (a pub/sub message) to a client's output and schedules the
  // write, subject to client-output-buffer-limit (src/server/output_limits.cc).
  virtual void PushToClient(Client& client, std::string_view bytes) = 0;
  // Makes a connected socket a client (`flags`: kClient*; `tls`: nullptr for plain TCP).
  virtual Client& AdoptConnection(int fd, uint32_t flags, std::unique_ptr<TlsSession> tls) = 0;
  // Processes `input` as if it had been read from the client's socket.
  virtual void InjectInput(Client& client, std::string_view input) = 0;

 protected:
  ~ClientRegistry() = default;
};

}  // namespace vireo
