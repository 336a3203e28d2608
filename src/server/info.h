// What the server reports about itself: INFO's text and CLIENT LIST / CLIENT INFO lines, in
// Redis's field names and layout, since monitoring tools and client libraries parse both.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "core/version.h"

namespace vireo {

class Server;
class Client;

// The memory figures INFO's memory section and MEMORY STATS share. Reading them also raises the
// recorded peak.
struct MemoryFigures {
  size_t used = 0;             // used_memory: what the allocator holds for us
  size_t peak = 0;             // used_memory_peak
  size_t rss = 0;              // resident set size
  size_t clients = 0;          // client structs and their query/output buffers
  size_t replica_clients = 0;  // the same for replicas (mem_clients_slaves)
  size_t overhead = 0;         // used_memory_overhead (clients; capped at `used`)
};

// The reports, read from the server they are made for; command handlers get one from their
// context (CommandContext::reports()).
class ServerReports {
 public:
  explicit ServerReports(Server& server) : server_(server) {}

  // INFO's reply text for the requested sections (any case). "default", "all" and
  // "everything" expand; unknown names contribute nothing; no names means "default". Sections
  // always come in Redis's fixed order, whatever order they were asked in.
  std::string Info(std::span<const std::string_view> sections) const;
  // One CLIENT LIST / CLIENT INFO line, without the trailing newline. `argv_mem`: the bytes of
  // the command the client is running (only the caller of CLIENT LIST has one).
  std::string ClientLine(Client& client, size_t argv_mem = 0) const;
  // The memory figures above; reading them also raises the recorded peak.
  MemoryFigures Memory() const;

 private:
  Server& server_;
};

// Redis's *_human formatting: "512B", "1.50K", "3.25M"...
std::string BytesToHuman(uint64_t bytes);

}  // namespace vireo
