// The master side of replication: replicas are clients that sent SYNC or PSYNC.
//
// A full resync forks one RDB child for every replica waiting at that moment. With
// repl-diskless-sync (and replicas that announced `capa eof`) the child writes the snapshot,
// framed as `$EOF:<mark>` ... `<mark>`, into a pipe the server relays to their sockets
// (snapshot_relay.cc); otherwise it writes the dump file, which the parent then sends as
// `$<length>` + bytes, from the write path (SendBulk), without reading it into memory (read in
// chunks for a TLS replica instead of sendfile). Either way the stream from the fork on
// accumulates in the replica's output buffer, held back until the snapshot has been sent, so
// the replica applies the stream from exactly the offset it was told in +FULLRESYNC.
#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <spdlog/spdlog.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>

#include "persistence/rdb.h"
#include "replication/replica_link.h"
#include "replication/replication.h"
#include "security/tls.h"
#include "util/clock.h"
#include "util/strings.h"

namespace vireo {

namespace {

constexpr size_t kEofMarkSize = 40;
constexpr std::string_view kPing = "*1\r\n$4\r\nPING\r\n";
// A replica sending its snapshot gets at most this much per loop turn, so others are served.
constexpr size_t kBulkBytesPerTurn = 4 << 20;

std::string_view PhaseName(ReplicaState::Phase phase) {
  switch (phase) {
    case ReplicaState::Phase::kWaitBgsaveStart:
    case ReplicaState::Phase::kWaitBgsaveEnd:
      return "wait_bgsave";
    case ReplicaState::Phase::kSendBulk:
      return "send_bulk";
    case ReplicaState::Phase::kOnline:
      return "online";
  }
  return "online";
}

// A client's connection: write(2) semantics, through its TLS session when it has one.
ssize_t WriteSocket(int fd, TlsSession* tls, const void* buf, size_t n) {
  return tls != nullptr ? tls->Write(buf, n) : write(fd, buf, n);
}

// Writes all of `bytes` to a non-blocking socket, waiting up to `timeout_ms` for room each
// time it is full. For the forked child (which owns nothing else) and tiny control replies.
// `tls`: write through the client's TLS session rather than to the bare `fd`.
bool WriteFully(int fd, std::string_view bytes, int timeout_ms, TlsSession* tls = nullptr) {
  while (!bytes.empty()) {
    ssize_t n = WriteSocket(fd, tls, bytes.data(), bytes.size());
    if (n > 0) {
      bytes.remove_prefix(static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      // A TLS write can wait for the socket to be readable (never with renegotiation off).
      const bool read = tls != nullptr && !tls->wants_write();
      pollfd p{fd, static_cast<short>(read ? POLLIN : POLLOUT), 0};
      if (poll(&p, 1, timeout_ms) <= 0) return false;
      continue;
    }
    return false;
  }
  return true;
}

// sendfile(2) for a TLS connection: the file's bytes at *offset, encrypted. A write that
// would block is retried later with the same bytes, as OpenSSL requires.
ssize_t SendFileTls(TlsSession& tls, int file_fd, off_t* offset, size_t count) {
  char buf[64 * 1024];
  ssize_t got = pread(file_fd, buf, std::min(count, sizeof(buf)), *offset);
  if (got <= 0) return got;
  ssize_t n = tls.Write(buf, static_cast<size_t>(got));
  if (n > 0) *offset += n;
  return n;
}

}  // namespace

// The replica's address for INFO and ROLE: what it announced, else its peer IP.
std::string ReplicaAddress(std::string_view peer, const ReplicaState& replica) {
  if (!replica.announced_ip.empty()) return replica.announced_ip;
  std::string_view addr = peer;
  size_t colon = addr.rfind(':');
  if (colon != std::string_view::npos) addr = addr.substr(0, colon);
  if (addr.size() >= 2 && addr.front() == '[' && addr.back() == ']') {
    addr = addr.substr(1, addr.size() - 2);
  }
  return std::string(addr);
}

ReplicaState* Replication::FindReplica(uint64_t client_id) {
  auto it = replicas_.find(client_id);
  return it == replicas_.end() ? nullptr : &it->second;
}

// ---- SYNC / PSYNC ----------------------------------------------------------------------------

std::string Replication::SyncRefusal(const SyncRequest& request) {
  if (is_replica() && !link_->link_up()) {
    return "NOMASTERLINK Can't SYNC while not connected with my master";
  }
  if (request.pending_output > 0) return "ERR SYNC and PSYNC are invalid with pending output";
  // A filtered snapshot is made for the socket only (never the dump file everyone shares).
  if (auto it = handshakes_.find(request.client_id);
      it != handshakes_.end() && it->second.rdb_exclude != 0) {
    if (!it->second.capa_eof) return "ERR Filtered replica requires EOF capability";
  }
  // Our master hands over to us (its FAILOVER): we take over, then it continues as our replica.
  if (request.psync && request.failover) {
    if (request.replid != replid_) return "ERR PSYNC FAILOVER replid must match my replid.";
    UnsetMaster();
    spdlog::info("MASTER MODE enabled (failover request from '{}')", request.client_addr);
  }
  // Replicas don't sync with us while we hand over.
  if (failover_state_ != FailoverState::kNone) return "NOMASTERLINK Can't SYNC while failing over";
  return "";
}

void Replication::Sync(const SyncRequest& request, int64_t offset) {
  const uint64_t id = request.client_id;
  spdlog::info("Replica {} asks for synchronization", request.client_addr);
  ReplicaState replica;
  if (auto it = handshakes_.find(id); it != handshakes_.end()) {
    replica = it->second;
    handshakes_.erase(it);
  }
  replica.client_id = id;
  replica.old_sync = !request.psync;
  if (request.psync) {
    if (TryPartialResync(id, request.client_addr, replica, request.replid, offset)) {
      host_.CountPartialSync(true);
      return;
    }
    if (request.replid != "?") host_.CountPartialSync(false);
  }
  host_.CountFullSync();
  host_.MarkReplicaClient(id);
  replica.phase = ReplicaState::Phase::kWaitBgsaveStart;
  replica.wait_since_ms = NowMs();
  // The first replica ever (or after the backlog was freed) starts a new history: a replica
  // of an older one of ours must not think it can continue.
  if (!buffer_.created()) {
    ChangeReplicationId();
    buffer_.Create(BacklogCapacity());
    spdlog::info("Replication backlog created, my new replication IDs are '{}' and '{}'", replid_,
                 replid2_);
  }
  replicas_[id] = std::move(replica);
  // Disk syncs (and diskless ones without a delay) start now if nothing else is forked; the
  // cron starts the rest.
  StartRdbChildIfWaiting();
}

bool Replication::TryPartialResync(uint64_t client_id, std::string_view client_addr,
                                   ReplicaState& replica, std::string_view want_id,
                                   int64_t offset) {
  const bool same_history = want_id == replid_;
  const bool former_history = want_id == replid2_ && offset <= second_replid_offset_;
  if (!same_history && !former_history) {
    if (want_id != "?") {
      if (want_id != replid_ && want_id != replid2_) {
        spdlog::info(
            "Partial resynchronization not accepted: Replication ID mismatch (Replica asked for "
            "'{}', my replication IDs are '{}' and '{}')",
            want_id, replid_, replid2_);
      } else {
        spdlog::info(
            "Partial resynchronization not accepted: Requested offset for second ID was {}, but "
            "I can reply up to {}",
            offset, second_replid_offset_);
      }
    } else {
      spdlog::info("Full resync requested by replica {}", client_addr);
    }
    return false;
  }
  if (!buffer_.CanContinueFrom(offset)) {
    spdlog::info(
        "Unable to partial resync with replica {} for lack of backlog (Replica request was: "
        "{}).",
        client_addr, offset);
    if (offset > master_repl_offset()) {
      spdlog::warn(
          "Warning: replica {} tried to PSYNC with an offset that is greater than the master "
          "replication offset.",
          client_addr);
    }
    return false;
  }
  host_.MarkReplicaClient(client_id);
  replica.phase = ReplicaState::Phase::kOnline;
  replica.ack_time_ms = NowMs();
  replica.psync_offset = offset;
  // A replica that understands PSYNC2 learns our current ID (it may have asked with the old).
  std::string reply =
      replica.capa_psync2 ? fmt::format("+CONTINUE {}\r\n", replid_) : std::string("+CONTINUE\r\n");
  // The missing bytes are not copied: the replica reads them from the shared buffer, after
  // the reply.
  buffer_.AddReader(client_id, offset);
  spdlog::info(
      "Partial resynchronization request from {} accepted. Sending {} bytes of backlog "
      "starting from offset {}.",
      client_addr, buffer_.Unread(client_id), offset);
  replicas_[client_id] = std::move(replica);
  host_.SendToClient(client_id, reply);
  return true;
}

// ---- The RDB child of a full sync ------------------------------------------------------------

void Replication::StartRdbChildIfWaiting() {
  // (A relay still sending the last image counts as the child's work.)
  if (children_.active() || relay_.active()) return;
  std::vector<uint64_t> waiting;
  bool all_eof = true;
  int64_t oldest_ms = 0;
  // One snapshot serves replicas that want the same parts of the dataset (REPLCONF
  // rdb-filter-only): those of the first waiting one now, the others with the next child.
  std::optional<uint8_t> exclude;
  for (auto& [id, replica] : replicas_) {
    if (replica.phase != ReplicaState::Phase::kWaitBgsaveStart) continue;
    if (!exclude) exclude = replica.rdb_exclude;
    if (replica.rdb_exclude != *exclude) continue;
    waiting.push_back(id);
    // (A SYNC client gets the EOF form only when filtered: redis-cli --functions-rdb.)
    all_eof = all_eof && replica.capa_eof && (!replica.old_sync || replica.rdb_exclude != 0);
    if (oldest_ms == 0 || replica.wait_since_ms < oldest_ms) oldest_ms = replica.wait_since_ms;
  }
  if (waiting.empty()) return;
  const ServerConfig& c = cfg();
  // A filtered snapshot goes over the socket whatever repl-diskless-sync says (SYNC refused
  // those that can't take it).
  const bool diskless = (c.repl_diskless_sync || *exclude != 0) && all_eof;
  if (diskless && c.repl_diskless_sync && c.repl_diskless_sync_delay > 0) {
    // Wait a little for more replicas to arrive, so one child serves them all.
    const bool full = c.repl_diskless_sync_max_replicas > 0 &&
                      static_cast<int64_t>(waiting.size()) >= c.repl_diskless_sync_max_replicas;
    if (!full && NowMs() - oldest_ms < c.repl_diskless_sync_delay * 1000) return;
  }
  const int64_t offset = master_repl_offset();
  // The stream after the fork starts with a SELECT: a replica knows no database yet.
  ForceSelect();
  std::vector<int> fds;
  std::vector<uint64_t> relayed;  // diskless: the image goes through the relay pipe
  for (uint64_t id : waiting) {
    ReplicaState& replica = replicas_[id];
    if (!host_.ClientOpen(id)) continue;
    const int fd = host_.ClientSocket(id);
    if (!replica.old_sync) {
      // Written now, before the child can start writing to the same socket.
      std::string line = fmt::format("+FULLRESYNC {} {}\r\n", replid_, offset);
      if (!WriteFully(fd, line, 1000, host_.ClientTls(id))) {
        host_.CloseClientNow(id);
        continue;
      }
    }
    replica.phase = ReplicaState::Phase::kWaitBgsaveEnd;
    replica.psync_offset = offset;
    replica.diskless = diskless;
    // The stream from the fork on waits in the shared buffer until the snapshot is sent.
    if (!replica.rdb_only) buffer_.AddReader(id, offset + 1);
    host_.HoldClientOutput(id, true);
    if (diskless) {
      replica.relay = true;
      replica.relay_sent = 0;
      relayed.push_back(id);
    } else {
      fds.push_back(fd);
    }
  }
  int relay_pipe[2] = {-1, -1};
  if (!relayed.empty()) {
    if (pipe2(relay_pipe, O_CLOEXEC | O_NONBLOCK) != 0) {
      spdlog::warn("Can't create the pipe for the diskless sync child: {}", strerror(errno));
      for (uint64_t id : relayed) host_.CloseClientNow(id);
      relayed.clear();
    } else {
      // To the child the pipe is one more socket to write the image to.
      relay_ = SnapshotRelay{};
      relay_.fd = relay_pipe[0];
      relay_.report_index = fds.size();
      relay_.ids = relayed;
      fds.push_back(relay_pipe[1]);
    }
  }
  if (fds.empty()) return;

  RdbSaveOptions options;
  options.compress = c.rdbcompression;
  options.checksum = c.rdbchecksum;
  options.exclude = diskless ? *exclude : 0;
  int results_pipe[2] = {-1, -1};
  ChildProcesses::Body body;
  if (diskless) {
    std::string mark(kEofMarkSize, '0');
    static constexpr char kHex[] = "0123456789abcdef";
    for (char& ch : mark) ch = kHex[rng_() & 15];
    if (pipe2(results_pipe, O_CLOEXEC) != 0) {
      spdlog::warn("Can't create the pipe for the diskless sync child: {}", strerror(errno));
      return;
    }
    const int timeout_ms = static_cast<int>(std::min<int64_t>(c.repl_timeout, 3600) * 1000);
    const int report_fd = results_pipe[1];
    body = [this, fds, mark, options, timeout_ms, report_fd]() mutable {
      // Each replica's socket gets the whole image; one that stops reading is dropped, the
      // others go on.
      std::vector<bool> ok(fds.size(), true);
      auto send_all = [&](std::string_view bytes) {
        bool any = false;
        for (size_t i = 0; i < fds.size(); ++i) {
          if (ok[i]) ok[i] = WriteFully(fds[i], bytes, timeout_ms);
          any = any || ok[i];
        }
        return any ? std::string() : std::string("all replicas failed");
      };
      options.sink = send_all;
      std::string err = send_all("$EOF:" + mark + "\r\n");
      if (err.empty()) err = host_.SaveRdbToSink(options);
      if (err.empty()) err = send_all(mark);
      std::string report(fds.size(), '0');
      for (size_t i = 0; i < fds.size(); ++i) report[i] = err.empty() && ok[i] ? '1' : '0';
      [[maybe_unused]] ssize_t w = write(report_fd, report.data(), report.size());
      return err.empty() ? 0 : 1;
    };
    results_pipe_read_ = results_pipe[0];
  } else {
    const std::string path = host_.RdbFilePath();
    body = [this, path, options]() { return host_.SaveRdbFile(path, options).empty() ? 0 : 1; };
  }
  child_fds_ = fds;
  pid_t pid = children_.Start(ChildKind::kRdb, std::move(body),
                              [this](const ChildExit& exit) { OnRdbChildDone(exit); });
  if (results_pipe[1] >= 0) close(results_pipe[1]);
  if (relay_pipe[1] >= 0) {
    close(relay_pipe[1]);  // the pipe ends when the child's copy closes
    WatchRelayPipe(true);
  }
  if (pid < 0) {
    spdlog::warn("Can't save in background: fork: {}", strerror(errno));
    OnRdbChildDone(ChildExit{});
    return;
  }
  spdlog::info("Starting BGSAVE for SYNC with target: {}", diskless ? "replicas sockets" : "disk");
  spdlog::info("Background RDB transfer started by pid {}", pid);
}

void Replication::OnRdbChildDone(const ChildExit& exit) {
  std::string report;
  if (results_pipe_read_ >= 0) {
    char buf[4096];
    ssize_t n;
    while ((n = read(results_pipe_read_, buf, sizeof(buf))) > 0) report.append(buf, n);
    close(results_pipe_read_);
    results_pipe_read_ = -1;
  }
  std::vector<int> fds = std::move(child_fds_);
  child_fds_.clear();
  const std::string path = host_.RdbFilePath();
  if (!report.empty()) {
    // Redis's line for the end of a transfer to sockets (it reads the child's output through
    // a pipe; here the child writes to the sockets itself and reports who got it all).
    int still_up = 0;
    for (auto& [id, replica] : replicas_) {
      still_up += replica.phase == ReplicaState::Phase::kWaitBgsaveEnd && replica.diskless &&
                  host_.ClientOpen(id);
    }
    if (exit.ok() || still_up > 0) {
      spdlog::info("Diskless rdb transfer, done reading from pipe, {} replicas still up.",
                   still_up);
    }
  }
  // Closing a replica removes it from replicas_: done after the walk.
  std::vector<uint64_t> to_close;
  for (auto& [id, replica] : replicas_) {
    if (replica.phase != ReplicaState::Phase::kWaitBgsaveEnd || replica.relay) continue;
    if (!host_.ClientOpen(id)) continue;
    size_t index = std::find(fds.begin(), fds.end(), host_.ClientSocket(id)) - fds.begin();
    if (!exit.ok() && (!replica.diskless || index >= report.size() || report[index] != '1')) {
      spdlog::warn("SYNC failed. BGSAVE child returned an error");
      to_close.push_back(id);
      continue;
    }
    if (replica.diskless) {
      if (!EndDisklessTransfer(id, replica, index < report.size() && report[index] == '1')) {
        to_close.push_back(id);
      }
      continue;
    }
    int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    struct stat st {};
    if (fd < 0 || fstat(fd, &st) != 0) {
      spdlog::warn("SYNC failed. Can't open/stat DB after BGSAVE: {}", strerror(errno));
      if (fd >= 0) close(fd);
      to_close.push_back(id);
      continue;
    }
    replica.phase = ReplicaState::Phase::kSendBulk;
    replica.bulk_fd = fd;
    replica.bulk_offset = 0;
    replica.bulk_size = st.st_size;
    replica.bulk_preamble = fmt::format("${}\r\n", st.st_size);
    host_.SetClientBulkPending(id, true);
    host_.SendToClient(id, "");
  }
  for (uint64_t id : to_close) host_.CloseClientNow(id);
  if (relay_.active()) {
    relay_.child_done = true;
    relay_.child_failed = !exit.ok();
    relay_.child_ok =
        exit.ok() && relay_.report_index < report.size() && report[relay_.report_index] == '1';
    FinishRelayIfDone();
  }
  // Replicas that arrived while this child ran get the next one.
  StartRdbChildIfWaiting();
}

bool Replication::EndDisklessTransfer(uint64_t client_id, ReplicaState& replica, bool ok) {
  if (!ok) {
    spdlog::warn("Diskless rdb transfer to replica {} failed", host_.ClientAddress(client_id));
    return false;
  }
  spdlog::info(
      "Streamed RDB transfer with replica {} succeeded (socket). Waiting for REPLCONF ACK from "
      "replica to enable streaming",
      host_.ClientAddress(client_id));
  PutOnline(client_id, replica);
  return true;
}

void Replication::PutOnline(uint64_t client_id, ReplicaState& replica) {
  replica.phase = ReplicaState::Phase::kOnline;
  replica.ack_time_ms = NowMs();
  host_.HoldClientOutput(client_id, false);
  host_.SetClientBulkPending(client_id, false);
  if (replica.rdb_only) {
    // redis-cli --rdb and friends only wanted the snapshot.
    host_.CloseClientAfterReply(client_id);
  }
  spdlog::info("Synchronization with replica {} succeeded", host_.ClientAddress(client_id));
  host_.SendToClient(client_id, "");
}

bool Replication::SendBulk(uint64_t client_id) {
  ReplicaState* replica = FindReplica(client_id);
  if (replica != nullptr && replica->relay) return RelaySend(client_id, *replica);
  if (replica == nullptr || replica->bulk_fd < 0) {
    host_.SetClientBulkPending(client_id, false);
    return true;
  }
  const int fd = host_.ClientSocket(client_id);
  TlsSession* tls = host_.ClientTls(client_id);
  size_t budget = kBulkBytesPerTurn;
  while (!replica->bulk_preamble.empty()) {
    ssize_t n = WriteSocket(fd, tls, replica->bulk_preamble.data(), replica->bulk_preamble.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
    if (n <= 0) return false;
    replica->bulk_preamble.erase(0, static_cast<size_t>(n));
  }
  while (replica->bulk_offset < replica->bulk_size && budget > 0) {
    off_t off = replica->bulk_offset;
    size_t want = std::min<size_t>(budget, static_cast<size_t>(replica->bulk_size - off));
    ssize_t n = tls != nullptr ? SendFileTls(*tls, replica->bulk_fd, &off, want)
                               : sendfile(fd, replica->bulk_fd, &off, want);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
    if (n <= 0) {
      spdlog::warn("Write error sending DB to replica: {}", n < 0 ? strerror(errno) : "EOF");
      return false;
    }
    replica->bulk_offset = off;
    budget -= static_cast<size_t>(n);
    host_.CountReplicationOutput(static_cast<uint64_t>(n));
  }
  if (replica->bulk_offset < replica->bulk_size) return true;
  close(replica->bulk_fd);
  replica->bulk_fd = -1;
  PutOnline(client_id, *replica);
  return true;
}

// ---- REPLCONF ----------------------------------------------------------------------------------

ReplicaState& Replication::ReplicaSettings(uint64_t client_id) {
  ReplicaState* replica = FindReplica(client_id);
  return replica != nullptr ? *replica : handshakes_[client_id];
}

void Replication::Ack(uint64_t client_id, int64_t offset, std::optional<int64_t> aof_offset) {
  ReplicaState* replica = FindReplica(client_id);
  if (replica == nullptr) return;
  replica->ack_offset = std::max(replica->ack_offset, offset);
  replica->ack_time_ms = NowMs();
  if (aof_offset) replica->aof_ack_offset = std::max(replica->aof_ack_offset, *aof_offset);
  acks_changed_ = true;
  // A replica acknowledging the snapshot it waited for has loaded it, so its child is done or
  // about to be: reap it now rather than at the next cron tick, as Redis does, so the replica
  // is online (and the child gone) by the time it reports its link up. Until then a BGSAVE or
  // an AOF rewrite asked for would only be scheduled, and WAITAOF would count no local fsync.
  if (replica->phase == ReplicaState::Phase::kWaitBgsaveEnd && children_.active(ChildKind::kRdb)) {
    children_.Reap();  // may close replicas: `replica` is not used after this
  }
}

void Replication::OnClientClosed(uint64_t client_id, std::string_view client_addr) {
  if (link_) link_->OnMasterClientClosed(client_id);
  handshakes_.erase(client_id);
  auto it = replicas_.find(client_id);
  if (it == replicas_.end()) return;
  if (it->second.bulk_fd >= 0) close(it->second.bulk_fd);
  spdlog::info("Connection with replica {} lost.", client_addr);
  const bool was_waiting = it->second.phase == ReplicaState::Phase::kWaitBgsaveEnd;
  const bool was_diskless = it->second.diskless;
  buffer_.RemoveReader(client_id);
  replicas_.erase(it);
  // The relay may have waited for this one alone to take its chunk: look at the pipe again.
  if (relay_.fd >= 0) WatchRelayPipe(true);
  // The last replica a snapshot was made for is gone: the child works for nobody (a disk
  // snapshot is kept when save points want it anyway), as in Redis.
  if (was_waiting && !child_fds_.empty() &&
      std::none_of(replicas_.begin(), replicas_.end(), [](const auto& entry) {
        return entry.second.phase == ReplicaState::Phase::kWaitBgsaveEnd;
      })) {
    if (was_diskless) {
      spdlog::warn("Diskless rdb transfer, last replica dropped, killing fork child.");
      host_.KillRdbChild();
    } else if (cfg().save_params.empty()) {
      spdlog::info(
          "Background saving, persistence disabled, last replica dropped, killing fork "
          "child.");
      host_.KillRdbChild();
    }
  }
  if (replicas_.empty()) no_replicas_since_ms_ = NowMs();
}

// ---- WAIT, min-replicas --------------------------------------------------------------------

size_t Replication::ReplicaOutputBytes() const {
  size_t bytes = ReplicaBufferExcess();
  for (const auto& [id, replica] : replicas_) bytes += host_.ClientOutputMemory(id);
  return bytes;
}

size_t Replication::ReplicaBufferExcess() const {
  // As Redis counts it: the shared buffer is the backlog's up to its size, and what replicas
  // keep beyond that is theirs.
  const size_t mem = buffer_.memory();
  return !replicas_.empty() && mem > BacklogCapacity() ? mem - BacklogCapacity() : 0;
}

size_t Replication::BacklogMemory() const { return buffer_.memory() - ReplicaBufferExcess(); }

size_t Replication::ReadReplicaStream(uint64_t client_id, size_t max, std::string* out) {
  return buffer_.Read(client_id, max, out);
}

int Replication::ReplicasAckedAtLeast(int64_t offset) const {
  int count = 0;
  for (const auto& [id, replica] : replicas_) {
    if (replica.phase == ReplicaState::Phase::kOnline && replica.ack_offset >= offset) ++count;
  }
  return count;
}

int Replication::ReplicasFsyncedAtLeast(int64_t offset) const {
  int count = 0;
  for (const auto& [id, replica] : replicas_) {
    if (replica.phase == ReplicaState::Phase::kOnline && replica.aof_ack_offset >= offset) {
      ++count;
    }
  }
  return count;
}

int Replication::GoodReplicas() const {
  const int64_t now = NowMs();
  const int64_t max_lag_ms = cfg().min_replicas_max_lag * 1000;
  int count = 0;
  for (const auto& [id, replica] : replicas_) {
    if (replica.phase == ReplicaState::Phase::kOnline && now - replica.ack_time_ms <= max_lag_ms) {
      ++count;
    }
  }
  return count;
}

std::string_view Replication::MinReplicasError() const {
  const ServerConfig& c = cfg();
  if (is_replica() || c.min_replicas_to_write == 0 || c.min_replicas_max_lag == 0) return "";
  if (GoodReplicas() >= c.min_replicas_to_write) return "";
  return "NOREPLICAS Not enough good replicas to write.";
}

void Replication::WaitForAcks(uint64_t client_id) {
  waiting_clients_.push_back(client_id);
  getack_pending_ = true;
}

void Replication::BeforeSleep() {
  // The AOF's fsynced offset moved: WAITAOF clients may be done.
  if (host_.AofFsyncedOffset() != last_fsynced_reploff_) {
    last_fsynced_reploff_ = host_.AofFsyncedOffset();
    acks_changed_ = true;
  }
  // WAIT clients blocked this turn: ask every replica where it is, once.
  // (Not during a write pause: the stream must stand still; the replicas' own once-a-second
  // ACKs still come, and the GETACK goes out when the pause ends.)
  if (getack_pending_ && !host_.ReplicationStreamPaused()) {
    getack_pending_ = false;
    RequestAcks();
  }
  if (!acks_changed_) return;
  acks_changed_ = false;
  UpdateFailoverStatus();
  std::vector<uint64_t> waiting;
  waiting.swap(waiting_clients_);
  // WAIT runs again: it replies if enough replicas are there now, else blocks again
  // (re-registering itself here) with its original deadline.
  for (uint64_t id : waiting) host_.RerunBlockedClient(id);
}

void Replication::RequestAcks() {
  static constexpr std::string_view kGetAck = "*3\r\n$8\r\nREPLCONF\r\n$6\r\nGETACK\r\n$1\r\n*\r\n";
  if (!is_replica()) FeedStream(kGetAck);
}

bool Replication::ReplicasCaughtUp() const {
  for (const auto& [id, replica] : replicas_) {
    if (replica.ack_offset != master_repl_offset()) return false;
  }
  return true;
}

void Replication::LogReplicasAtShutdown() {
  if (replicas_.empty()) return;
  int lagging = 0;
  const int64_t now_s = NowMs() / 1000;
  for (const auto& [id, replica] : replicas_) {
    if (replica.ack_offset == master_repl_offset()) continue;
    ++lagging;
    const int64_t lag =
        replica.phase == ReplicaState::Phase::kOnline ? now_s - replica.ack_time_ms / 1000 : 0;
    spdlog::info("Lagging replica {}:{} reported offset {} behind master, lag={}, state={}.",
                 ReplicaAddress(host_.ClientAddress(id), replica), replica.listening_port,
                 master_repl_offset() - replica.ack_offset, lag, PhaseName(replica.phase));
  }
  const int total = static_cast<int>(replicas_.size());
  spdlog::info("{} of {} replicas are in sync when shutting down.", total - lagging, total);
}

// ---- ROLE, INFO, cron ----------------------------------------------------------------------

RoleInfo Replication::Role() {
  RoleInfo role;
  role.replica = is_replica();
  if (role.replica) {
    role.master_host = link_->host();
    role.master_port = link_->port();
    role.link_state = link_->RoleState();
    // -1 while the link is down, as Redis (INFO still shows the offset we would continue from).
    role.processed_offset = link_->link_up() ? link_->processed_offset() : -1;
    return role;
  }
  role.master_offset = master_repl_offset();
  for (const auto& [id, replica] : replicas_) {
    if (!host_.ClientExists(id) || replica.phase != ReplicaState::Phase::kOnline) continue;
    role.replicas.push_back({ReplicaAddress(host_.ClientAddress(id), replica),
                             replica.listening_port, replica.ack_offset});
  }
  return role;
}

InfoFieldList Replication::InfoFields() {
  InfoFieldList out;
  auto num = [](int64_t v) { return std::to_string(v); };
  out.emplace_back("role", is_replica() ? "slave" : "master");
  if (is_replica()) link_->InfoFields(&out);
  out.emplace_back("connected_slaves", num(static_cast<int64_t>(replicas_.size())));
  if (!is_replica() && cfg().min_replicas_to_write > 0 && cfg().min_replicas_max_lag > 0) {
    out.emplace_back("min_slaves_good_slaves", num(GoodReplicas()));
  }
  int index = 0;
  const int64_t now = NowMs();
  for (const auto& [id, replica] : replicas_) {
    if (!host_.ClientExists(id)) continue;
    out.emplace_back(fmt::format("slave{}", index++),
                     fmt::format("ip={},port={},state={},offset={},lag={}",
                                 ReplicaAddress(host_.ClientAddress(id), replica),
                                 replica.listening_port, PhaseName(replica.phase),
                                 replica.ack_offset, (now - replica.ack_time_ms) / 1000));
  }
  out.emplace_back("master_failover_state", failover_state_ == FailoverState::kNone ? "no-failover"
                                            : failover_state_ == FailoverState::kWaitForSync
                                                ? "waiting-for-sync"
                                                : "failover-in-progress");
  out.emplace_back("master_replid", replid_);
  out.emplace_back("master_replid2", replid2_);
  out.emplace_back("master_repl_offset", num(master_repl_offset()));
  out.emplace_back("second_repl_offset", num(second_replid_offset_));
  out.emplace_back("repl_backlog_active", buffer_.created() ? "1" : "0");
  out.emplace_back("repl_backlog_size", num(static_cast<int64_t>(BacklogCapacity())));
  out.emplace_back("repl_backlog_first_byte_offset",
                   num(buffer_.created() ? buffer_.first_offset() : 0));
  out.emplace_back("repl_backlog_histlen", num(static_cast<int64_t>(buffer_.histlen())));
  return out;
}

void Replication::Cron() {
  const ServerConfig& c = cfg();
  const int64_t now = NowMs();
  UpdateFailoverStatus();
  if (link_) link_->Cron();
  // Once a second is enough for the rest.
  if (now - last_cron_ms_ < 1000) {
    StartRdbChildIfWaiting();
    return;
  }
  last_cron_ms_ = now;
  // Pings keep replicas' links alive and let them detect a dead master. A replica forwards
  // its master's pings instead of sending its own.
  // As in Redis the pings keep a fixed schedule from start-up (every period, replicas or
  // not), so a replica that attaches is not pinged at once (tests read the stream verbatim).
  if (now - last_ping_ms_ >= c.repl_ping_replica_period * 1000) {
    last_ping_ms_ = now;
    if (!is_replica() && !replicas_.empty() && !host_.ReplicationStreamPaused()) FeedStream(kPing);
  }
  DropStuckRelayReplicas();
  // Replicas waiting for a snapshot to start, or for a disk snapshot to be written, get a
  // newline a second so they don't time out (they skip newlines before the payload).
  for (auto& [id, replica] : replicas_) {
    if (!host_.ClientOpen(id)) continue;
    const bool idle_wait =
        replica.phase == ReplicaState::Phase::kWaitBgsaveStart ||
        (replica.phase == ReplicaState::Phase::kWaitBgsaveEnd && !replica.diskless);
    if (idle_wait) {
      [[maybe_unused]] ssize_t w =
          WriteSocket(host_.ClientSocket(id), host_.ClientTls(id), "\n", 1);
    }
    if (replica.phase == ReplicaState::Phase::kOnline && !replica.old_sync && !replica.rdb_only &&
        now - replica.ack_time_ms > c.repl_timeout * 1000) {
      spdlog::warn("Disconnecting timedout replica (streaming sync): {}", host_.ClientAddress(id));
      host_.CloseClientNow(id);
    }
  }
  // With no replica for repl-backlog-ttl, a master frees its backlog (and starts a new
  // history when one attaches again). A replica keeps it: it may be promoted.
  if (!is_replica() && replicas_.empty() && buffer_.created() && c.repl_backlog_ttl > 0 &&
      now - no_replicas_since_ms_ >= c.repl_backlog_ttl * 1000) {
    ChangeReplicationId();
    buffer_.Free();
    spdlog::info("Replication backlog freed after {} seconds without connected replicas.",
                 c.repl_backlog_ttl);
  }
  StartRdbChildIfWaiting();
}

}  // namespace vireo
