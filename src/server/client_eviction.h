// Client eviction (maxmemory-clients): what each connection costs in memory, and disconnecting
// the biggest connections when all evictable ones together cost more than the limit.
//
// Design. Measuring a client is O(1) (every variable-sized part keeps a running byte count), so
// the server re-measures a client at the points where its memory changes: after its input was
// read and run (query buffer, arguments, MULTI queue, WATCH and SUBSCRIBE state, its own
// replies), after its output was written (which also catches replies other clients pushed to
// it: pub/sub messages, MONITOR lines, served blocking commands) and, for anything missed, in a
// cron pass that visits every client about once a second (Redis's clientsCron does the same).
// Each measured evictable client is filed in a bucket by the power of two of its size, like
// Redis's client_mem_usage_buckets, and a running total is kept; checking the limit is then a
// comparison, and evicting starts at the top bucket. Inside the bucket being evicted from,
// clients go biggest first (the bucket is sorted once when eviction reaches it), so the order
// is exact rather than Redis's "roughly by size". With maxmemory-clients 0 nothing is tracked:
// the hooks return at once and no per-command work is done.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace vireo {

class Server;
class Client;
class PubsubEngine;
class Tracking;

// The memory one client holds, split as CLIENT LIST reports it. These are the client's own
// allocations: the arguments of the command it is running or still receiving are views into
// its query buffer, so they are inside query_buffer and not counted twice.
struct ClientMemory {
  size_t query_buffer = 0;   // the read buffer's allocation
  size_t output_buffer = 0;  // the reply buffer's allocation (written or not)
  size_t multi = 0;          // commands queued by MULTI
  size_t watched = 0;        // WATCHed keys
  size_t pubsub = 0;         // channels, patterns and shard channels subscribed to
  size_t tracking = 0;       // CLIENT TRACKING BCAST prefixes
  size_t other = 0;          // the Client object, parser scratch, a blocked command's copy, OpenSSL
  size_t total() const {
    return query_buffer + output_buffer + multi + watched + pubsub + tracking + other;
  }
};

// O(1) whatever the client holds.
ClientMemory MeasureClient(PubsubEngine& pubsub, Tracking& tracking, const Client& client);

class ClientEviction {
 public:
  explicit ClientEviction(Server& server) : server_(server) {}
  ClientEviction(const ClientEviction&) = delete;
  ClientEviction& operator=(const ClientEviction&) = delete;

  // maxmemory-clients is set (bytes, or a percentage, even of a maxmemory of 0).
  bool enabled() const;
  // The limit in bytes now, or 0 for none: a percentage of maxmemory (none while maxmemory is
  // 0), never below 128 KB so a mistaken tiny value can't cut off every connection.
  size_t Limit() const;

  // Re-measures `client` and files it in its bucket, or takes it out when it may not be
  // evicted (CLIENT NO-EVICT, closing, limit off).
  void Update(Client& client);
  // The client is closing: it no longer counts.
  void Remove(Client& client);
  // maxmemory-clients changed: start or stop tracking every client.
  void OnConfigChange();
  // Cron: re-measures the next slice of clients (all of them about once a second) and
  // releases big buffers of idle ones.
  void CronStep(bool inside_command);
  // Disconnects the biggest evictable clients while their total is at or over the limit.
  void EvictIfOver();

  size_t tracked_total() const { return total_; }

 private:
  // Bucket b holds clients of [2^(b+kMinLog-1), 2^(b+kMinLog)) bytes; the first and last also
  // take everything below and above.
  static constexpr int kMinLog = 15;  // 32 KB: every small client shares the first bucket
  static constexpr int kMaxLog = 33;  // 8 GB
  static constexpr int kBuckets = kMaxLog - kMinLog + 1;
  static int BucketFor(size_t bytes);
  void File(Client& client, int bucket);
  void Unfile(Client& client);
  void Evict(Client& client);

  Server& server_;
  std::array<std::vector<Client*>, kBuckets> buckets_;
  size_t total_ = 0;  // sum of the filed clients' memory
  bool tracking_ = false;
  uint64_t cron_cursor_ = 0;  // the client id the next cron slice starts at
};

}  // namespace vireo
