#include "server/pubsub.h"

#include <fmt/format.h>

#include "server/client.h"
#include "server/client_registry.h"
#include "util/glob.h"
#include "util/strings.h"

namespace vireo {
namespace {

void AppendHeader(std::string* out, char type, size_t n) {
  char buf[24];
  size_t len = FormatInt64(static_cast<int64_t>(n), buf);
  out->push_back(type);
  out->append(buf, len);
  out->append("\r\n", 2);
}

// The message frame for one protocol, built on first use and then shared by every receiver
// speaking that protocol.
class SharedFrame {
 public:
  SharedFrame(std::string* resp2, std::string* resp3) : bufs_{resp2, resp3} {
    resp2->clear();
    resp3->clear();
  }
  template <typename... Parts>
  std::string_view For(const Client& client, Parts... parts) {
    const bool resp3 = client.resp() == 3;
    std::string* out = bufs_[resp3 ? 1 : 0];
    if (out->empty()) AppendPubsubFrame(out, resp3, {parts...});
    return *out;
  }

 private:
  std::string* bufs_[2];
};

}  // namespace

void AppendPubsubFrame(std::string* out, bool resp3,
                       std::initializer_list<std::string_view> parts) {
  size_t bytes = 16;
  for (std::string_view p : parts) bytes += p.size() + 16;
  out->reserve(out->size() + bytes);
  AppendHeader(out, resp3 ? '>' : '*', parts.size());
  for (std::string_view p : parts) {
    AppendHeader(out, '$', p.size());
    out->append(p);
    out->append("\r\n", 2);
  }
}

void PubsubEngine::UpdateFlag(Client& client, const ClientSubscriptions& subs) {
  if (subs.total() > 0) {
    client.set(kClientPubsub);
  } else {
    client.clear(kClientPubsub);
  }
}

bool PubsubEngine::Subscribe(Client& client, PubsubKind kind, std::string_view name) {
  ClientSubscriptions& subs = clients_[&client];
  StringMap<size_t>& mine = subs.names[static_cast<int>(kind)];
  if (mine.find(name) != mine.end()) return false;
  Subscribers& subscribers = registry(kind)[std::string(name)];
  mine.emplace(std::string(name), subscribers.size());
  subs.name_bytes += name.size();
  subscribers.push_back(&client);
  UpdateFlag(client, subs);
  return true;
}

bool PubsubEngine::Unsubscribe(Client& client, PubsubKind kind, std::string_view name) {
  auto cit = clients_.find(&client);
  if (cit == clients_.end()) return false;
  const int k = static_cast<int>(kind);
  StringMap<size_t>& mine = cit->second.names[k];
  auto mit = mine.find(name);
  if (mit == mine.end()) return false;
  const size_t index = mit->second;
  auto rit = registry(kind).find(name);
  mine.erase(mit);
  cit->second.name_bytes -= name.size();
  // Swap-remove: the last subscriber takes our slot, and its own index follows it.
  Subscribers& subscribers = rit->second;
  Client* moved = subscribers.back();
  subscribers[index] = moved;
  subscribers.pop_back();
  if (moved != &client) clients_.find(moved)->second.names[k].find(rit->first)->second = index;
  if (subscribers.empty()) registry(kind).erase(rit);
  UpdateFlag(client, cit->second);
  if (cit->second.total() == 0) clients_.erase(cit);
  return true;
}

size_t PubsubEngine::MemoryOf(const Client& client) const {
  auto it = clients_.find(&client);
  if (it == clients_.end()) return 0;
  // Per subscription: the client's map node (name string, index, next pointer, cached hash,
  // bucket slot) and its slot in the channel's subscriber vector; plus the name itself, which
  // each client keeps a copy of.
  constexpr size_t kPerSubscription =
      sizeof(std::string) + sizeof(size_t) + 3 * sizeof(void*) + sizeof(Client*);
  return it->second.total() * kPerSubscription + it->second.name_bytes;
}

void PubsubEngine::RemoveClient(Client& client) {
  auto cit = clients_.find(&client);
  if (cit == clients_.end()) return;
  for (int k = 0; k < 3; ++k) {
    auto& reg = registry_[k];
    for (const auto& [name, index] : cit->second.names[k]) {
      auto rit = reg.find(name);
      Subscribers& subscribers = rit->second;
      Client* moved = subscribers.back();
      subscribers[index] = moved;
      subscribers.pop_back();
      if (moved != &client) clients_.find(moved)->second.names[k].find(name)->second = index;
      if (subscribers.empty()) reg.erase(rit);
    }
  }
  clients_.erase(cit);
  client.clear(kClientPubsub);
}

std::vector<std::string> PubsubEngine::SubscriptionsOf(const Client& client,
                                                       PubsubKind kind) const {
  std::vector<std::string> out;
  auto cit = clients_.find(&client);
  if (cit == clients_.end()) return out;
  const StringMap<size_t>& mine = cit->second.names[static_cast<int>(kind)];
  out.reserve(mine.size());
  for (const auto& [name, index] : mine) out.push_back(name);
  return out;
}

size_t PubsubEngine::CountOf(const Client& client, PubsubKind kind) const {
  auto cit = clients_.find(&client);
  return cit == clients_.end() ? 0 : cit->second.names[static_cast<int>(kind)].size();
}

void PubsubEngine::Deliver(Client& client, std::string_view bytes) {
  client_registry_.PushToClient(client, bytes);
}

size_t PubsubEngine::Publish(std::string_view channel, std::string_view message) {
  size_t receivers = 0;
  auto& channels = registry_[static_cast<int>(PubsubKind::kChannel)];
  if (!channels.empty()) {
    auto it = channels.find(channel);
    if (it != channels.end()) {
      SharedFrame frame(&scratch_[0], &scratch_[1]);
      for (Client* client : it->second) {
        Deliver(*client, frame.For(*client, "message", channel, message));
      }
      receivers += it->second.size();
    }
  }
  for (const auto& [pattern, subscribers] : registry_[static_cast<int>(PubsubKind::kPattern)]) {
    if (!GlobMatch(pattern, channel)) continue;
    SharedFrame frame(&scratch_[0], &scratch_[1]);
    for (Client* client : subscribers) {
      Deliver(*client, frame.For(*client, "pmessage", pattern, channel, message));
    }
    receivers += subscribers.size();
  }
  return receivers;
}

size_t PubsubEngine::PublishShard(std::string_view channel, std::string_view message) {
  auto& shards = registry_[static_cast<int>(PubsubKind::kShard)];
  auto it = shards.find(channel);
  if (it == shards.end()) return 0;
  SharedFrame frame(&scratch_[0], &scratch_[1]);
  for (Client* client : it->second) {
    Deliver(*client, frame.For(*client, "smessage", channel, message));
  }
  return it->second.size();
}

void PubsubEngine::DropShardChannel(std::string_view channel) {
  auto& shards = registry_[static_cast<int>(PubsubKind::kShard)];
  auto it = shards.find(channel);
  if (it == shards.end()) return;
  const Subscribers subscribers = it->second;  // Unsubscribe edits the registry
  const std::string name(channel);
  for (Client* client : subscribers) {
    Unsubscribe(*client, PubsubKind::kShard, name);
    std::string frame;
    AppendHeader(&frame, client->resp() == 3 ? '>' : '*', 3);
    frame += fmt::format("$12\r\nsunsubscribe\r\n${}\r\n{}\r\n:{}\r\n", name.size(), name,
                         CountOf(*client, PubsubKind::kShard));
    Deliver(*client, frame);
  }
}

size_t PubsubEngine::SubscriberCount(PubsubKind kind, std::string_view name) const {
  const auto& reg = registry_[static_cast<int>(kind)];
  auto it = reg.find(name);
  return it == reg.end() ? 0 : it->second.size();
}

std::vector<std::string> PubsubEngine::ActiveNames(PubsubKind kind, std::string_view pattern,
                                                   bool match_all) const {
  std::vector<std::string> out;
  for (const auto& [name, subscribers] : registry_[static_cast<int>(kind)]) {
    if (match_all || GlobMatch(pattern, name)) out.push_back(name);
  }
  return out;
}

}  // namespace vireo
