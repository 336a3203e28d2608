// The pub/sub engine: who listens to which channel, pattern and shard channel, and delivery of
// published messages to their output buffers.
//
// Both sides of every subscription are indexed: the channel lists its subscribers (a vector, so
// PUBLISH walks contiguous memory) and each client maps its channels to its position in those
// vectors, so unsubscribing is O(1) (swap with the last subscriber) however crowded the channel.
// A message is serialised at most once per protocol (RESP2 array, RESP3 push) and the same bytes
// are appended to every receiver's output.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/command_table.h"  // StringMap

namespace vireo {

class Client;
class ClientRegistry;

// The three subscription namespaces. Shard channels are separate from plain channels (PUBLISH
// and SPUBLISH on the same name reach different subscribers) and ignore patterns.
enum class PubsubKind { kChannel = 0, kPattern = 1, kShard = 2 };

class PubsubEngine {
 public:
  explicit PubsubEngine(ClientRegistry& clients) : client_registry_(clients) {}
  PubsubEngine(const PubsubEngine&) = delete;
  PubsubEngine& operator=(const PubsubEngine&) = delete;

  // Adds/removes one subscription; false when it already existed / didn't exist. Keeps the
  // client's pub/sub flag (CLIENT LIST "P", RESP2 subscribed mode) in step.
  bool Subscribe(Client& client, PubsubKind kind, std::string_view name);
  bool Unsubscribe(Client& client, PubsubKind kind, std::string_view name);
  // The client's subscriptions of one kind (for UNSUBSCRIBE with no arguments).
  std::vector<std::string> SubscriptionsOf(const Client& client, PubsubKind kind) const;
  size_t CountOf(const Client& client, PubsubKind kind) const;
  // Channels + patterns: the count SUBSCRIBE/UNSUBSCRIBE/PSUBSCRIBE/PUNSUBSCRIBE report.
  size_t ChannelAndPatternCount(const Client& client) const {
    return CountOf(client, PubsubKind::kChannel) + CountOf(client, PubsubKind::kPattern);
  }
  // Roughly what the client's subscriptions cost (client eviction): the names it holds and
  // its entries in both indexes. O(1).
  size_t MemoryOf(const Client& client) const;
  // Drops every subscription without notifying the client (disconnect, RESET).
  void RemoveClient(Client& client);

  // PUBLISH: channel subscribers get "message", subscribers of every matching pattern get
  // "pmessage". Returns the number of deliveries (a client on a channel and a matching pattern
  // counts twice, as in Redis).
  size_t Publish(std::string_view channel, std::string_view message);
  // SPUBLISH: shard channel subscribers get "smessage".
  size_t PublishShard(std::string_view channel, std::string_view message);
  // Cluster mode, the channel's slot left this shard: every subscriber is unsubscribed and
  // told so with a "sunsubscribe" push, as Redis 7 does.
  void DropShardChannel(std::string_view channel);

  // Introspection (PUBSUB, INFO).
  size_t channel_count() const { return registry_[0].size(); }
  size_t pattern_count() const { return registry_[1].size(); }
  size_t shard_channel_count() const { return registry_[2].size(); }
  size_t SubscriberCount(PubsubKind kind, std::string_view name) const;
  // Active channel names of `kind` matching `pattern` (all when pattern is empty).
  std::vector<std::string> ActiveNames(PubsubKind kind, std::string_view pattern,
                                       bool match_all) const;

 private:
  using Subscribers = std::vector<Client*>;
  // Per client and kind: name -> the client's index in that name's subscriber vector.
  struct ClientSubscriptions {
    std::array<StringMap<size_t>, 3> names;
    size_t name_bytes = 0;  // the names' lengths, for MemoryOf
    size_t total() const { return names[0].size() + names[1].size() + names[2].size(); }
  };

  StringMap<Subscribers>& registry(PubsubKind kind) { return registry_[static_cast<int>(kind)]; }
  void UpdateFlag(Client& client, const ClientSubscriptions& subs);
  void Deliver(Client& client, std::string_view bytes);

  ClientRegistry& client_registry_;
  std::array<StringMap<Subscribers>, 3> registry_;
  std::unordered_map<const Client*, ClientSubscriptions> clients_;
  std::string scratch_[2];  // the message being delivered, RESP2 and RESP3 framing
};

// Frames a pub/sub message or confirmation: a RESP2 array or a RESP3 push of bulk strings.
void AppendPubsubFrame(std::string* out, bool resp3, std::initializer_list<std::string_view> parts);

}  // namespace vireo
