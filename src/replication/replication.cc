#include "replication/replication.h"

#include <fmt/format.h>

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
  backlog_.Reset(offset);
  stream_db_ = -1;
}

void Replication::FeedStream(std::string_view bytes) {
  // With nobody to stream to and no backlog there is no stream; with the AOF on the offset
  // still moves (by one per command, as in Redis), since WAITAOF counts fsyncs by it.
  if (!backlog_.created() && replicas_.empty()) {
    if (host_.AofOn()) backlog_.Append(std::string_view(" ", 1));
    return;
  }
  backlog_.Append(bytes);
  for (auto& [id, replica] : replicas_) {
    if (replica.rdb_only) continue;
    if (!host_.ClientOpen(id)) continue;
    // A replica waiting for its RDB child to start gets the stream from the fork on; until
    // then nothing is queued (its offset is the one the fork records).
    if (replica.phase == ReplicaState::Phase::kWaitBgsaveStart) continue;
    host_.SendToClient(id, bytes);
  }
}

bool Replication::Accepting() const {
  return !is_replica() && (backlog_.created() || host_.AofOn());
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
