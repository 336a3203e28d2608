// Server-assisted client-side caching (CLIENT TRACKING): which clients may hold a copy of
// which keys, and the invalidation messages sent when those keys change.
//
// Default mode remembers, per key, the clients that read it with a read-only command; the
// first change to the key sends each of them one invalidation and forgets the key (they must
// read it again to hear about the next change). BCAST mode remembers nothing per client:
// every change to a key under one of the client's prefixes is announced, batched once per
// event-loop turn. Messages go out as RESP3 `invalidate` pushes, or, for a client redirecting
// to a RESP2 connection, as `__redis__:invalidate` pub/sub messages on that connection.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/command_table.h"

namespace vireo {

class Client;
class ClientRegistry;
struct ServerConfig;

struct TrackingOptions {
  uint64_t redirect = 0;  // 0: none
  bool bcast = false;
  bool optin = false;
  bool optout = false;
  bool noloop = false;
  std::vector<std::string_view> prefixes;
};

// One tracking client's settings (CLIENT TRACKINGINFO).
struct TrackingState {
  uint64_t redirect = 0;
  bool bcast = false;
  bool optin = false;
  bool optout = false;
  bool noloop = false;
  bool caching = false;          // CLIENT CACHING given for the next command or transaction
  bool broken_redirect = false;  // the redirect target went away
  std::set<std::string> prefixes;
  size_t prefix_memory = 0;  // what `prefixes` holds here and in the prefix table
};

class Tracking {
 public:
  // `cfg` is the server's live configuration (tracking-table-max-keys).
  Tracking(ClientRegistry& clients, const ServerConfig& cfg)
      : client_registry_(clients), cfg_(cfg) {}

  // CLIENT TRACKING ON / OFF. Enable returns Redis's error text, or "" once enabled.
  std::string Enable(Client& client, const TrackingOptions& options);
  void Disable(Client& client);
  // CLIENT CACHING YES|NO: error text or "".
  std::string Caching(Client& client, bool yes);
  // CACHING covers only the next command (or the whole next transaction).
  void EndOfCommand(Client& client);
  // nullptr when the client isn't tracking.
  const TrackingState* StateOf(const Client& client) const;
  // The memory of a client's BCAST prefixes (maxmemory-clients counts it, as Redis does).
  size_t MemoryOf(const Client& client) const;

  // After a read-only command run for `caller` (the client whose request it is, also for the
  // commands a script runs): remember its keys for the caller.
  void RememberKeys(Client& caller, const CommandSpec& spec,
                    std::span<const std::string_view> argv);
  // A key changed. `current` is the client whose command is running (nullptr outside
  // commands); while it is `executing`, its own invalidations wait until after its reply.
  void InvalidateKey(std::string_view key, Client* current, bool executing);
  // FLUSHALL/FLUSHDB (and a replica's full sync): everything is invalid, which is said with a
  // null instead of a key list, once per command.
  void InvalidateAll(Client* current, bool executing);
  // After a command's reply: the running client's own invalidations.
  void FlushPending();
  // Once per event-loop turn: pending invalidations, BCAST batches, and the
  // tracking-table-max-keys limit.
  void BeforeSleep();
  // tracking-table-max-keys: forgets (and invalidates) keys while the table is over it, with
  // an effort that grows each turn it stays over.
  void EvictOverLimit();
  bool HasWork() const { return !pending_.empty() || bcast_dirty_ || OverLimit(); }

  size_t tracking_clients() const { return clients_.size(); }
  size_t total_keys() const { return table_.size(); }
  size_t total_items() const { return total_items_; }
  size_t total_prefixes() const { return prefixes_.size(); }

 private:
  struct Prefix {
    std::set<uint64_t> clients;
    // Keys changed this turn under the prefix, with the id of the client that changed them
    // (0: none), which NOLOOP clients don't hear about.
    std::map<std::string, uint64_t, std::less<>> keys;
  };
  struct Pending {
    uint64_t client_id;
    std::optional<std::string> key;  // nullopt: a flush
  };

  bool OverLimit() const;
  void Broadcast();
  void InvalidateForClient(uint64_t id, std::string_view key, Client* current, bool executing);
  // Sends `payload` (the RESP array of keys, or a null) to a tracking client, through its
  // redirect target if it has one.
  void Send(Client& client, std::string_view payload);
  void SendKey(Client& client, std::string_view key);
  void SendNull(Client& client);

  ClientRegistry& client_registry_;
  const ServerConfig& cfg_;
  std::unordered_map<uint64_t, TrackingState> clients_;
  StringMap<std::vector<uint64_t>> table_;
  size_t total_items_ = 0;
  std::map<std::string, Prefix, std::less<>> prefixes_;
  bool bcast_dirty_ = false;
  size_t evict_effort_ = 0;  // turns in a row the table stayed over its limit
  std::vector<Pending> pending_;
};

}  // namespace vireo
