#include "replication/replication.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <random>

#include "replication/replica_link.h"
#include "util/clock.h"

namespace vireo {

namespace {

// 40 random hex characters, like a run ID.
std::string RandomReplicationId(std::mt19937_64& rng) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string id(40, '0');
  for (char& c : id) c = kHex[rng() & 15];
  return id;
}

constexpr std::string_view kSelectPrefix = "*2\r\n$6\r\nSELECT\r\n";

}  // namespace

Replication::Replication(ReplicationHost& host, Config& config, ChildProcesses& children,
                         std::mt19937_64& rng)
    : host_(host), config_(config), children_(children), rng_(rng) {
  replid_ = RandomReplicationId(rng_);
  replid2_ = std::string(40, '0');
  last_ping_ms_ = NowMs();
}

Replication::~Replication() = default;

size_t Replication::BacklogCapacity() const {
  constexpr size_t kMinBacklog = 16 * 1024;
  return std::max(static_cast<size_t>(cfg().repl_backlog_size), kMinBacklog);
}

void Replication::ChangeReplicationId() {
  replid_ = RandomReplicationId(rng_);
  replid2_ = std::string(40, '0');
  second_replid_offset_ = -1;
}

void Replication::ShiftReplicationId() {
  replid2_ = replid_;
  // The former master's stream is valid up to our offset; a sibling asking for the byte after
  // it continues with us.
  second_replid_offset_ = master_repl_offset() + 1;
  replid_ = RandomReplicationId(rng_);
}

void Replication::ResetStream(std::string replid, int64_t offset) {
  replid_ = std::move(replid);
  replid2_ = std::string(40, '0');
  second_replid_offset_ = -1;
  buffer_.Reset(offset);
  stream_db_ = -1;
}

void Replication::FeedStream(std::string_view bytes) {
  // With nobody to stream to and no backlog there is no stream; with the AOF on the offset
  // still moves (by one per command, as in Redis), since WAITAOF counts fsyncs by it.
  if (!buffer_.created() && replicas_.empty()) {
    if (host_.AofOn()) buffer_.Append(std::string_view(" ", 1));
    return;
  }
  buffer_.Append(bytes);
  // Replicas read it from the shared buffer (a replica waiting for its RDB child to start
  // reads from the fork on): they are only told there is more, which also checks their
  // client-output-buffer-limit.
  for (auto& [id, replica] : replicas_) {
    if (buffer_.HasReader(id) && host_.ClientOpen(id)) host_.SendToClient(id, "");
  }
}

bool Replication::BeginStartupLoad() {
  const ServerConfig& c = cfg();
  // A replica (or a cluster node, whose role comes later) leaves expiry to its master.
  if (!c.replicaof.empty() || c.cluster_enabled) return false;
  startup_master_ = true;
  buffer_.Create(BacklogCapacity());
  return true;
}

void Replication::FeedExpiredKey(int db, std::string_view key) {
  AppendEffect(db, fmt::format("*2\r\n$3\r\nDEL\r\n${}\r\n{}\r\n", key.size(), key));
}

void Replication::EndStartupLoad(const RdbReplicationInfo& info) {
  if (!startup_master_) return;
  startup_master_ = false;
  if (info.offset < 0 || info.replid.size() != 40) {
    // Nothing to continue: no backlog until a replica comes.
    buffer_.Free();
    return;
  }
  // Our own new ID, the RDB's as ID2 valid up to its offset: replicas of the stream the RDB
  // was taken at continue with us, from the DELs written while loading on.
  replid2_ = info.replid;
  second_replid_offset_ = info.offset + 1;
  buffer_.Rebase(info.offset);
  no_replicas_since_ms_ = NowMs();
  spdlog::info("Replication ID {} and offset {} of the RDB kept as the secondary ID", info.replid,
               info.offset);
}

bool Replication::Accepting() const {
  return !is_replica() && (buffer_.created() || host_.AofOn());
}

void Replication::AppendEffect(int db, std::string_view resp) {
  if (db != kNoDb && db != stream_db_) {
    std::string select =
        fmt::format("{}${}\r\n{}\r\n", kSelectPrefix, std::to_string(db).size(), db);
    FeedStream(select);
    stream_db_ = db;
  }
  FeedStream(resp);
}

}  // namespace vireo
