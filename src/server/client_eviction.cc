// maxmemory-clients: see client_eviction.h for the design.
#include "server/client_eviction.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <bit>

#include "security/tls.h"
#include "server/client.h"
#include "server/info.h"
#include "server/server.h"
#include "util/clock.h"

namespace vireo {
namespace {

// Redis's floor: a limit this small would leave no room to even talk to the server.
constexpr size_t kMinLimit = 128 * 1024;
// An idle client keeps at most this much buffer between cron visits (Redis's clientsCron
// resizes idle query and reply buffers too); bigger ones are released.
constexpr size_t kIdleBufferKeep = 64 * 1024;
// A client that sent nothing for longer than this gives back its whole query buffer (Redis).
constexpr int64_t kQueryBufferIdleMs = 2000;
// Each cron tick re-measures at least this many clients (Redis: CLIENTS_CRON_MIN_ITERATIONS).
constexpr size_t kMinCronVisits = 5;

}  // namespace

ClientMemory MeasureClient(PubsubEngine& pubsub, Tracking& tracking, const Client& c) {
  ClientMemory m;
  m.query_buffer = c.read_buffer.capacity;
  m.output_buffer = c.output().capacity();
  m.multi = c.multi_queue_memory();
  // Per key: its entry here, the name, and the client's slot in the server's watcher list.
  m.watched = c.watched_keys.capacity() * sizeof(Client::WatchedKey) + c.watched_key_bytes +
              c.watched_keys.size() * sizeof(Client*);
  m.pubsub = pubsub.MemoryOf(c);
  m.tracking = tracking.MemoryOf(c);
  m.other = sizeof(Client) + c.parser().MemoryUsage();
  if (c.tls) m.other += c.tls->MemoryUsage();
  // A blocked client keeps a copy of its command to run it again; rarely more than a few keys.
  for (const std::string& arg : c.blocked.argv) m.other += sizeof(std::string) + arg.size();
  return m;
}

bool ClientEviction::enabled() const { return server_.cfg().maxmemory_clients != 0; }

size_t ClientEviction::Limit() const {
  const ServerConfig& c = server_.cfg();
  size_t limit = 0;
  if (c.maxmemory_clients < 0) {
    // A percentage of maxmemory; with no maxmemory there is nothing to take a share of.
    if (c.maxmemory <= 0) return 0;
    limit = static_cast<size_t>(static_cast<double>(c.maxmemory) *
                                static_cast<double>(-c.maxmemory_clients) / 100.0);
  } else if (c.maxmemory_clients > 0) {
    limit = static_cast<size_t>(c.maxmemory_clients);
  } else {
    return 0;
  }
  return std::max(limit, kMinLimit);
}

int ClientEviction::BucketFor(size_t bytes) {
  int log = static_cast<int>(std::bit_width(bytes));  // bytes < 2^log
  return std::clamp(log, kMinLog, kMaxLog) - kMinLog;
}

void ClientEviction::File(Client& client, int bucket) {
  std::vector<Client*>& clients = buckets_[bucket];
  client.memory_bucket = bucket;
  client.memory_bucket_pos = clients.size();
  clients.push_back(&client);
}

void ClientEviction::Unfile(Client& client) {
  // Swap-remove: the last client of the bucket takes this one's slot.
  std::vector<Client*>& clients = buckets_[client.memory_bucket];
  Client* moved = clients.back();
  clients[client.memory_bucket_pos] = moved;
  moved->memory_bucket_pos = client.memory_bucket_pos;
  clients.pop_back();
  client.memory_bucket = -1;
}

void ClientEviction::Update(Client& client) {
  if (!tracking_) return;
  // A client on its way out (closing, or over its output buffer limit, which takes
  // precedence) doesn't count, nor does one that asked not to be evicted. Replication links
  // will join these once they exist.
  bool evictable = !client.closed && !client.has(kClientCloseAsap) && !client.has(kClientNoEvict) &&
                   client.fd() >= 0;
  if (!evictable) {
    Remove(client);
    return;
  }
  size_t memory = MeasureClient(server_.pubsub(), server_.tracking(), client).total();
  if (client.memory_bucket >= 0) total_ -= client.tracked_memory;
  client.tracked_memory = memory;
  total_ += memory;
  int bucket = BucketFor(memory);
  if (bucket == client.memory_bucket) return;
  if (client.memory_bucket >= 0) Unfile(client);
  File(client, bucket);
}

void ClientEviction::Remove(Client& client) {
  if (client.memory_bucket < 0) return;
  total_ -= client.tracked_memory;
  client.tracked_memory = 0;
  Unfile(client);
}

void ClientEviction::OnConfigChange() {
  bool want = enabled();
  if (want == tracking_) return;
  tracking_ = want;
  // One pass over every client when the limit is switched on or off, as Redis does; nothing
  // per command while it stays off.
  for (const auto& [id, client] : server_.clients().All()) {
    if (want) {
      Update(*client);
    } else {
      client->memory_bucket = -1;
      client->tracked_memory = 0;
    }
  }
  if (!want) {
    for (auto& bucket : buckets_) std::vector<Client*>().swap(bucket);
    total_ = 0;
  }
}

void ClientEviction::CronStep(bool inside_command) {
  const auto& clients = server_.clients().All();
  if (clients.empty()) return;
  // Every client about once a second, whatever hz is.
  int hz = std::clamp(server_.cfg().hz, 1, 500);
  size_t visits = std::max(kMinCronVisits, clients.size() / static_cast<size_t>(hz));
  visits = std::min(visits, clients.size());
  auto it = clients.lower_bound(cron_cursor_);
  for (size_t i = 0; i < visits; ++i) {
    if (it == clients.end()) it = clients.begin();
    Client& client = *it->second;
    ++it;
    if (client.closed) continue;
    // A soft limit exceeded long enough closes the client even when no more output comes
    // (a pub/sub subscriber that stopped reading after the last message), as Redis's cron does.
    if (client.output().size() > client.output_written && server_.OutputOverLimit(client)) {
      continue;
    }
    // Inside a command (a long script serving the loop) a buffer may be in use: only measure.
    if (!inside_command && !client.in_pending_writes) {
      const bool idle = FastNowMs() - client.last_interaction_ms > kQueryBufferIdleMs;
      client.read_buffer.CronResize(idle, client.parser().bytes_wanted());
      std::string& out = client.output();
      if (out.empty() && out.capacity() > kIdleBufferKeep) std::string().swap(out);
      const DebugSettings& debug = server_.debug_settings();
      if (debug.reply_buffer_resizing) {
        client.CronResizeReplyBuffer(FastNowMs(), debug.reply_buffer_peak_reset_ms);
      }
    }
    Update(client);
  }
  cron_cursor_ = it == clients.end() ? 0 : it->first;
}

void ClientEviction::Evict(Client& client) {
  spdlog::info("Evicting client: {}", ServerReports(server_).ClientLine(client));
  ++server_.stats().evicted_clients;
  server_.clients().CloseClient(client);  // which calls Remove
}

void ClientEviction::EvictIfOver() {
  if (!tracking_) return;
  size_t limit = Limit();
  if (limit == 0 || total_ < limit) return;
  for (int b = kBuckets - 1; b >= 0 && total_ >= limit; --b) {
    if (buckets_[b].empty()) continue;
    // Biggest first within the bucket too. A copy: evicting edits the bucket.
    std::vector<Client*> order = buckets_[b];
    std::sort(order.begin(), order.end(), [](const Client* x, const Client* y) {
      return x->tracked_memory > y->tracked_memory;
    });
    for (Client* client : order) {
      if (total_ < limit) break;
      if (client->memory_bucket >= 0) Evict(*client);
    }
  }
}

}  // namespace vireo
