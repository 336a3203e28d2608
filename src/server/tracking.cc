#include "server/tracking.h"

#include <fmt/format.h>

#include "core/config.h"
#include "server/client.h"
#include "server/client_registry.h"
#include "util/strings.h"

namespace vireo {
namespace {

// Prefixes of one client must not overlap: one being a prefix of the other would announce the
// same key twice.
bool Overlap(std::string_view a, std::string_view b) {
  size_t n = std::min(a.size(), b.size());
  return a.substr(0, n) == b.substr(0, n);
}

void AppendBulk(std::string* out, std::string_view s) {
  fmt::format_to(std::back_inserter(*out), "${}\r\n", s.size());
  out->append(s);
  out->append("\r\n");
}

constexpr std::string_view kInvalidateChannel = "__redis__:invalidate";

// One prefix of one client: its node in the client's set and its id in the prefix table's
// entry (estimated node sizes), and the name's heap copy beyond the inline 15 bytes.
size_t PrefixMemory(std::string_view prefix) {
  constexpr size_t kNodes = 64 + 40;
  return kNodes + (prefix.size() > 15 ? prefix.size() + 1 : 0);
}

}  // namespace

std::string Tracking::Enable(Client& client, const TrackingOptions& o) {
  if (!o.bcast && !o.prefixes.empty()) return "ERR PREFIX option requires BCAST mode to be enabled";
  auto it = clients_.find(client.id());
  TrackingState* old = it == clients_.end() ? nullptr : &it->second;
  if (old != nullptr && old->bcast != o.bcast) {
    return "ERR You can't switch BCAST mode on/off before disabling tracking for this client, "
           "and then re-enabling it with a different mode.";
  }
  if (o.bcast && (o.optin || o.optout)) return "ERR OPTIN and OPTOUT are not compatible with BCAST";
  if (o.optin && o.optout) return "ERR You can't specify both OPTIN mode and OPTOUT mode";
  if (old != nullptr && ((o.optin && old->optout) || (o.optout && old->optin))) {
    return "ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for this client, "
           "and then re-enabling it with a different mode.";
  }
  if (o.bcast) {
    for (size_t i = 0; i < o.prefixes.size(); ++i) {
      if (old != nullptr) {
        for (const std::string& existing : old->prefixes) {
          if (Overlap(existing, o.prefixes[i])) {
            return fmt::format(
                "ERR Prefix '{}' overlaps with an existing prefix '{}'. Prefixes for a single "
                "client must not overlap.",
                o.prefixes[i], existing);
          }
        }
      }
      for (size_t j = i + 1; j < o.prefixes.size(); ++j) {
        if (Overlap(o.prefixes[i], o.prefixes[j])) {
          return fmt::format(
              "ERR Prefix '{}' overlaps with another provided prefix '{}'. Prefixes for a single "
              "client must not overlap.",
              o.prefixes[i], o.prefixes[j]);
        }
      }
    }
  }
  TrackingState& s = clients_[client.id()];
  client.set(kClientTracking);
  s.redirect = o.redirect;
  s.bcast = o.bcast;
  s.optin = o.optin;
  s.optout = o.optout;
  s.noloop = o.noloop;
  s.broken_redirect = false;
  if (o.bcast) {
    auto add = [&](std::string_view prefix) {
      prefixes_[std::string(prefix)].clients.insert(client.id());
      if (s.prefixes.emplace(prefix).second) s.prefix_memory += PrefixMemory(prefix);
    };
    if (o.prefixes.empty()) add("");
    for (std::string_view p : o.prefixes) add(p);
  }
  return {};
}

void Tracking::Disable(Client& client) {
  client.clear(kClientTracking);
  auto it = clients_.find(client.id());
  if (it == clients_.end()) return;
  for (const std::string& p : it->second.prefixes) {
    auto pit = prefixes_.find(p);
    if (pit == prefixes_.end()) continue;
    pit->second.clients.erase(client.id());
    if (pit->second.clients.empty()) prefixes_.erase(pit);
  }
  // Its entries in the key table stay until those keys change: finding them would cost a walk
  // of the whole table, and a stale id is skipped when met.
  clients_.erase(it);
}

size_t Tracking::MemoryOf(const Client& client) const {
  if (!client.has(kClientTracking)) return 0;
  auto it = clients_.find(client.id());
  return it == clients_.end() ? 0 : it->second.prefix_memory;
}

std::string Tracking::Caching(Client& client, bool yes) {
  auto it = clients_.find(client.id());
  if (it == clients_.end()) {
    return "ERR CLIENT CACHING can be called only when the client is in tracking mode with "
           "OPTIN or OPTOUT mode enabled";
  }
  TrackingState& s = it->second;
  if (yes && !s.optin) {
    return "ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode.";
  }
  if (!yes && !s.optout) {
    return "ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode.";
  }
  s.caching = true;
  return {};
}

void Tracking::EndOfCommand(Client& client) {
  auto it = clients_.find(client.id());
  if (it != clients_.end()) it->second.caching = false;
}

const TrackingState* Tracking::StateOf(const Client& client) const {
  if (!client.has(kClientTracking)) return nullptr;
  auto it = clients_.find(client.id());
  return it == clients_.end() ? nullptr : &it->second;
}

void Tracking::RememberKeys(Client& caller, const CommandSpec& spec,
                            std::span<const std::string_view> argv) {
  auto it = clients_.find(caller.id());
  if (it == clients_.end()) return;
  const TrackingState& s = it->second;
  if (s.bcast || (s.optin && !s.caching) || (s.optout && s.caching)) return;
  // Shard channels are keys for cluster routing only; nothing caches them.
  if (spec.has(kCmdPubsub)) return;
  for (size_t pos : spec.KeyPositions(argv)) {
    if (pos >= argv.size()) continue;
    std::string_view key = argv[pos];
    auto kit = table_.find(key);
    if (kit == table_.end()) kit = table_.emplace(std::string(key), std::vector<uint64_t>{}).first;
    std::vector<uint64_t>& ids = kit->second;
    if (std::find(ids.begin(), ids.end(), caller.id()) != ids.end()) continue;
    ids.push_back(caller.id());
    ++total_items_;
  }
}

void Tracking::InvalidateKey(std::string_view key, Client* current, bool executing) {
  if (!prefixes_.empty()) {
    for (auto& [prefix, state] : prefixes_) {
      if (!key.starts_with(prefix)) continue;
      state.keys[std::string(key)] = current != nullptr ? current->id() : 0;
      bcast_dirty_ = true;
    }
  }
  if (table_.empty()) return;
  auto it = table_.find(key);
  if (it == table_.end()) return;
  std::vector<uint64_t> ids = std::move(it->second);
  table_.erase(it);
  total_items_ -= ids.size();
  for (uint64_t id : ids) InvalidateForClient(id, key, current, executing);
}

void Tracking::InvalidateForClient(uint64_t id, std::string_view key, Client* current,
                                   bool executing) {
  Client* target = client_registry_.FindClient(id);
  if (target == nullptr || target->closed) return;
  auto it = clients_.find(id);
  // Keys read before switching to BCAST (or before tracking was turned off) are not announced.
  if (it == clients_.end() || it->second.bcast) return;
  if (it->second.noloop && target == current) return;
  // The running client's own invalidations follow its reply, never split it.
  if (target == current && executing) {
    pending_.push_back({id, std::string(key)});
    return;
  }
  SendKey(*target, key);
}

void Tracking::InvalidateAll(Client* current, bool executing) {
  table_.clear();
  total_items_ = 0;
  if (clients_.empty()) return;
  if (executing) {
    // FLUSHALL empties every database; the clients hear about it once.
    if (pending_.empty() || pending_.back().key.has_value()) {
      pending_.push_back({current != nullptr ? current->id() : 0, std::nullopt});
    }
    return;
  }
  for (auto& [id, state] : clients_) {
    if (Client* c = client_registry_.FindClient(id); c != nullptr && !c->closed) SendNull(*c);
  }
}

void Tracking::FlushPending() {
  if (pending_.empty()) return;
  std::vector<Pending> pending;
  pending.swap(pending_);
  for (const Pending& p : pending) {
    if (!p.key) {
      std::vector<uint64_t> ids;
      for (const auto& [id, state] : clients_) ids.push_back(id);
      for (uint64_t id : ids) {
        if (Client* c = client_registry_.FindClient(id); c != nullptr && !c->closed) SendNull(*c);
      }
      continue;
    }
    Client* c = client_registry_.FindClient(p.client_id);
    if (c != nullptr && !c->closed && c->has(kClientTracking)) SendKey(*c, *p.key);
  }
}

void Tracking::BeforeSleep() {
  FlushPending();
  if (bcast_dirty_) Broadcast();
  EvictOverLimit();
}

bool Tracking::OverLimit() const {
  int64_t max = cfg_.tracking_table_max_keys;
  return max > 0 && table_.size() > static_cast<size_t>(max);
}

void Tracking::EvictOverLimit() {
  if (!OverLimit()) {
    evict_effort_ = 0;
    return;
  }
  // Bounded work per turn, growing while the table stays over the limit.
  const size_t max = static_cast<size_t>(cfg_.tracking_table_max_keys);
  size_t budget = 100 * (++evict_effort_);
  while (table_.size() > max && budget-- > 0) {
    auto it = table_.begin();
    std::string key = it->first;
    std::vector<uint64_t> ids = std::move(it->second);
    table_.erase(it);
    total_items_ -= ids.size();
    for (uint64_t id : ids) InvalidateForClient(id, key, nullptr, false);
  }
  if (table_.size() <= max) evict_effort_ = 0;
}

void Tracking::Broadcast() {
  bcast_dirty_ = false;
  for (auto& [prefix, state] : prefixes_) {
    if (state.keys.empty()) continue;
    auto build = [&](uint64_t skip) {
      std::string out;
      size_t n = 0;
      for (const auto& [key, by] : state.keys) {
        if (skip != 0 && by == skip) continue;
        ++n;
        AppendBulk(&out, key);
      }
      return n == 0 ? std::string() : fmt::format("*{}\r\n", n) + out;
    };
    const std::string common = build(0);
    for (uint64_t id : state.clients) {
      Client* c = client_registry_.FindClient(id);
      auto sit = clients_.find(id);
      if (c == nullptr || c->closed || sit == clients_.end()) continue;
      if (sit->second.noloop) {
        std::string own = build(id);
        if (!own.empty()) Send(*c, own);
      } else {
        Send(*c, common);
      }
    }
    state.keys.clear();
  }
}

void Tracking::SendKey(Client& client, std::string_view key) {
  std::string payload = "*1\r\n";
  AppendBulk(&payload, key);
  Send(client, payload);
}

// The null is in the tracking client's protocol, even when it goes to a redirect target (as
// in Redis).
void Tracking::SendNull(Client& client) { Send(client, client.resp() == 3 ? "_\r\n" : "$-1\r\n"); }

void Tracking::Send(Client& client, std::string_view payload) {
  auto it = clients_.find(client.id());
  if (it == clients_.end()) return;
  TrackingState& s = it->second;
  Client* target = &client;
  bool redirected = false;
  if (s.redirect != 0) {
    Client* r = client_registry_.FindClient(s.redirect);
    if (r == nullptr || r->closed) {
      s.broken_redirect = true;
      if (client.resp() == 3) {
        client_registry_.PushToClient(
            client, fmt::format(">2\r\n$21\r\ntracking-redir-broken\r\n:{}\r\n", s.redirect));
      }
      return;
    }
    target = r;
    redirected = true;
  }
  std::string frame;
  if (target->resp() == 3) {
    frame = ">2\r\n$10\r\ninvalidate\r\n";
  } else if (redirected && target->has(kClientPubsub)) {
    frame = "*3\r\n$7\r\nmessage\r\n";
    AppendBulk(&frame, kInvalidateChannel);
  } else {
    return;  // RESP2 has no pushes on the client's own connection
  }
  frame.append(payload);
  client_registry_.PushToClient(*target, frame);
}

}  // namespace vireo
