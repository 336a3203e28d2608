#include "replication/replica_link.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <spdlog/spdlog.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <initializer_list>

#include "db/database.h"
#include "persistence/rdb.h"
#include "protocol/resp_command.h"
#include "security/tls.h"
#include "util/clock.h"
#include "util/strings.h"

namespace vireo {
namespace {

std::vector<std::string_view> SplitWords(std::string_view s) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && s[i] == ' ') ++i;
    size_t j = s.find(' ', i);
    if (j == std::string_view::npos) j = s.size();
    if (j > i) out.push_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

RdbLoadOptions SyncLoadOptions(const ServerConfig& c) {
  RdbLoadOptions options;
  options.keep_expired = true;  // a replica's keys expire through its master's DELs
  options.deep_sanitize = c.sanitize_dump_payload == "yes";
  options.progress_interval = c.loading_process_events_interval_bytes;
  return options;
}

constexpr size_t kHandshakeRead = 16 * 1024;
constexpr size_t kTransferRead = 256 * 1024;
// Bytes of RDB read per readiness event, so clients are served while a big payload arrives.
constexpr size_t kTransferReadPerEvent = 4 * 1024 * 1024;

}  // namespace

ReplicaLink::ReplicaLink(ReplicationHost& server, Replication& replication, std::string host,
                         int port)
    : server_(server), replication_(replication), host_(std::move(host)), port_(port) {}

ReplicaLink::~ReplicaLink() {
  tls_.reset();
  if (fd_ >= 0) {
    server_.UnwatchLinkSocket(fd_);
    close(fd_);
  }
  DropTransfer();
  if (uint64_t id = master_client_id()) server_.CloseClientNow(id);
}

uint64_t ReplicaLink::master_client_id() const {
  if (master_client_id_ == 0 || !server_.ClientOpen(master_client_id_)) return 0;
  return master_client_id_;
}

int ReplicaLink::stream_db() const {
  uint64_t id = master_client_id();
  return id != 0 ? server_.ClientDb(id) : cached_db_;
}

std::string_view ReplicaLink::RoleState() const {
  switch (state_) {
    case State::kConnect:
      return "connect";
    case State::kConnecting:
      return "connecting";
    case State::kReceivePong:
    case State::kReceiveReplies:
    case State::kReceivePsync:
      return "handshake";
    case State::kTransfer:
      return "sync";
    case State::kConnected:
      return "connected";
  }
  return "unknown";
}

int64_t ReplicaLink::processed_offset() const {
  if (state_ == State::kConnected || have_cached_master_) return replication_.master_repl_offset();
  return -1;
}

bool ReplicaLink::link_up() const { return state_ == State::kConnected && master_client_id() != 0; }

void ReplicaLink::InfoFields(InfoFieldList* out) const {
  const int64_t now = NowMs();
  const ServerConfig& c = cfg();
  const uint64_t master = master_client_id();
  auto add = [out](std::string name, auto value) {
    if constexpr (std::is_convertible_v<decltype(value), std::string_view>) {
      out->emplace_back(std::move(name), std::string(value));
    } else {
      out->emplace_back(std::move(name), std::to_string(value));
    }
  };
  add("master_host", host_);
  add("master_port", port_);
  add("master_link_status", link_up() ? "up" : "down");
  add("master_last_io_seconds_ago",
      master != 0 ? (now - server_.ClientLastInteractionMs(master)) / 1000 : int64_t{-1});
  add("master_sync_in_progress", state_ == State::kTransfer ? 1 : 0);
  int64_t processed = processed_offset();
  int64_t read = processed;
  if (master != 0) {
    read += static_cast<int64_t>(partial_.size() + server_.ClientUnreadInput(master));
  }
  add("slave_read_repl_offset", read);
  add("slave_repl_offset", processed);
  if (state_ == State::kTransfer) {
    int64_t total = payload_.expected();
    int64_t got = payload_.received();
    add("master_sync_total_bytes", total);
    add("master_sync_read_bytes", got);
    add("master_sync_left_bytes", total < 0 ? int64_t{-1} : total - got);
    add("master_sync_perc",
        fmt::format("{:.2f}", total > 0 ? static_cast<double>(got) * 100.0 / total : 0.0));
    add("master_sync_last_io_seconds_ago", (now - last_io_ms_) / 1000);
  }
  if (!link_up()) {
    add("master_link_down_since_seconds",
        down_since_ms_ != 0 ? (now - down_since_ms_) / 1000 : int64_t{-1});
  }
  add("slave_priority", c.replica_priority);
  add("slave_read_only", c.replica_read_only ? 1 : 0);
  add("replica_announced", c.replica_announced ? 1 : 0);
}

// ---- Connecting and the handshake ----

namespace {

// bind-source-addr: the address the link to the master leaves from ("" lets the kernel pick).
// Only an address of the same family as the master's can be used for it.
bool BindSourceAddress(int fd, int family, const std::string& source, std::string* error) {
  if (source.empty()) return true;
  addrinfo hints{};
  hints.ai_family = family;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICHOST;
  addrinfo* res = nullptr;
  if (int rc = getaddrinfo(source.c_str(), nullptr, &hints, &res); rc != 0) {
    *error = std::string("bind-source-addr: ") + gai_strerror(rc);
    return false;
  }
  bool ok = bind(fd, res->ai_addr, res->ai_addrlen) == 0;
  if (!ok) *error = std::string("bind-source-addr: ") + strerror(errno);
  freeaddrinfo(res);
  return ok;
}

}  // namespace

void ReplicaLink::Connect() {
  last_connect_try_ms_ = NowMs();
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  std::string port = std::to_string(port_);
  int rc = getaddrinfo(host_.c_str(), port.c_str(), &hints, &res);
  if (rc != 0) {
    spdlog::warn("Unable to connect to MASTER: {}", gai_strerror(rc));
    return;
  }
  std::string error = "no address";
  for (addrinfo* ai = res; ai != nullptr; ai = ai->ai_next) {
    int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) continue;
    if (!BindSourceAddress(fd, ai->ai_family, cfg().bind_source_addr, &error)) {
      close(fd);
      continue;
    }
    if (connect(fd, ai->ai_addr, ai->ai_addrlen) != 0 && errno != EINPROGRESS) {
      error = strerror(errno);
      close(fd);
      continue;
    }
    fd_ = fd;
    break;
  }
  freeaddrinfo(res);
  if (fd_ < 0) {
    spdlog::warn("Unable to connect to MASTER: {}", error);
    return;
  }
  if (!cfg().repl_disable_tcp_nodelay) {
    int one = 1;
    setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  }
  server_.WatchLinkSocket(fd_, EPOLLOUT);
  state_ = State::kConnecting;
  last_io_ms_ = NowMs();
  spdlog::info("MASTER <-> REPLICA sync started");
}

void ReplicaLink::OnSocketEvent(uint32_t events) {
  switch (state_) {
    case State::kConnecting: {
      if (tls_) {
        ContinueTlsHandshake();
        return;
      }
      int err = 0;
      socklen_t len = sizeof(err);
      getsockopt(fd_, SOL_SOCKET, SO_ERROR, &err, &len);
      if (err != 0 || (events & EPOLLERR) != 0) {
        spdlog::warn("Error condition on socket for SYNC: {}", strerror(err != 0 ? err : EIO));
        Drop();
        return;
      }
      if (cfg().tls_replication) {
        StartTls();
      } else {
        OnConnected();
      }
      return;
    }
    case State::kReceivePong:
    case State::kReceiveReplies:
    case State::kReceivePsync:
      ReadHandshake();
      return;
    case State::kTransfer:
      ReadPayload();
      return;
    default:
      return;
  }
}

void ReplicaLink::StartTls() {
  tls_ = server_.ConnectTls(fd_);
  if (!tls_) {
    spdlog::warn("Error condition on socket for SYNC: TLS is not configured");
    Drop();
    return;
  }
  ContinueTlsHandshake();
}

void ReplicaLink::ContinueTlsHandshake() {
  switch (tls_->Handshake()) {
    case TlsSession::Step::kDone:
      OnConnected();
      return;
    case TlsSession::Step::kWantRead:
      server_.WatchLinkSocket(fd_, EPOLLIN);
      return;
    case TlsSession::Step::kWantWrite:
      server_.WatchLinkSocket(fd_, EPOLLOUT);
      return;
    case TlsSession::Step::kFailed:
      spdlog::warn("Error condition on socket for SYNC: TLS handshake: {}", tls_->error());
      Drop();
      return;
  }
}

ssize_t ReplicaLink::LinkRead(void* buf, size_t n) {
  return tls_ ? tls_->Read(buf, n) : read(fd_, buf, n);
}

void ReplicaLink::OnConnected() {
  spdlog::info("Non blocking connect for SYNC fired the event.");
  server_.WatchLinkSocket(fd_, EPOLLIN);
  state_ = State::kReceivePong;
  last_io_ms_ = NowMs();
  SendRaw(RespCommand({"PING"}));
}

bool ReplicaLink::SendRaw(std::string_view bytes) {
  // Handshake commands are small and the socket's buffer is empty: a write takes them whole.
  while (!bytes.empty()) {
    ssize_t n =
        tls_ ? tls_->Write(bytes.data(), bytes.size()) : write(fd_, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      spdlog::warn("Failed to write to MASTER: {}", n < 0 ? strerror(errno) : "short write");
      Drop();
      return false;
    }
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

void ReplicaLink::ReadHandshake() {
  char buf[kHandshakeRead];
  // A TLS record is at most 16 KB, this buffer's size: nothing decrypted stays in OpenSSL.
  ssize_t n = LinkRead(buf, sizeof(buf));
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return;
  if (n <= 0) {
    spdlog::warn("Master closed the connection during the handshake: {}",
                 n < 0 ? strerror(errno) : "connection lost");
    Drop();
    return;
  }
  last_io_ms_ = NowMs();
  inbuf_.append(buf, static_cast<size_t>(n));
  while (state_ == State::kReceivePong || state_ == State::kReceiveReplies ||
         state_ == State::kReceivePsync) {
    size_t nl = inbuf_.find('\n');
    if (nl == std::string::npos) {
      if (inbuf_.size() > kHandshakeRead) {
        spdlog::warn("Bad protocol from MASTER: reply line too long");
        Drop();
      }
      return;
    }
    std::string line = inbuf_.substr(0, nl);
    inbuf_.erase(0, nl + 1);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    // A master busy preparing its reply sends newlines to show it is alive.
    if (line.empty()) continue;
    if (!HandleLine(line)) break;
  }
  // +FULLRESYNC: what followed the reply line is the payload's start.
  if (state_ == State::kTransfer && !inbuf_.empty()) {
    std::string rest = std::move(inbuf_);
    inbuf_.clear();
    FeedPayload(rest);
  }
}

bool ReplicaLink::HandleLine(const std::string& line) {
  const bool error = line[0] == '-';
  if (state_ == State::kReceivePong) {
    // Without AUTH a master with a password answers -NOAUTH: AUTH comes next anyway.
    if (error && !line.starts_with("-NOAUTH") && !line.starts_with("-NOPERM") &&
        !line.starts_with("-ERR operation not permitted")) {
      spdlog::warn("Error reply to PING from master: '{}'", line);
      Drop();
      return false;
    }
    spdlog::info("Master replied to PING, replication can continue...");
    SendHandshake();
    return state_ != State::kConnect;
  }
  if (state_ == State::kReceiveReplies) {
    std::string what = expected_replies_.front();
    expected_replies_.erase(expected_replies_.begin());
    if (error) {
      if (what == "auth") {
        spdlog::warn("Unable to AUTH to MASTER: {}", line);
        Drop();
        return false;
      }
      spdlog::info("(Non critical) Master does not understand REPLCONF {}: {}", what, line);
    }
    if (expected_replies_.empty()) SendPsync();
    return state_ != State::kConnect;
  }
  return HandlePsyncReply(line);
}

void ReplicaLink::SendHandshake() {
  const ServerConfig& c = cfg();
  std::string out;
  expected_replies_.clear();
  if (!c.masterauth.empty()) {
    out += c.masteruser.empty() ? RespCommand({"AUTH", c.masterauth})
                                : RespCommand({"AUTH", c.masteruser, c.masterauth});
    expected_replies_.push_back("auth");
  }
  // A TLS replica announces the port its own replicas (and the master's INFO) should use.
  int listening_port = c.tls_replication && c.tls_port != 0 ? c.tls_port : server_.ListeningPort();
  if (c.replica_announce_port != 0) listening_port = static_cast<int>(c.replica_announce_port);
  std::string port = std::to_string(listening_port);
  out += RespCommand({"REPLCONF", "listening-port", port});
  expected_replies_.push_back("listening-port");
  if (!c.replica_announce_ip.empty()) {
    out += RespCommand({"REPLCONF", "ip-address", c.replica_announce_ip});
    expected_replies_.push_back("ip-address");
  }
  out += RespCommand({"REPLCONF", "capa", "eof", "capa", "psync2"});
  expected_replies_.push_back("capa");
  state_ = State::kReceiveReplies;
  SendRaw(out);
}

void ReplicaLink::SendPsync() {
  std::string replid = "?";
  std::string offset = "-1";
  if (have_cached_master_) {
    replid = replication_.replid();
    offset = std::to_string(replication_.master_repl_offset() + 1);
    spdlog::info("Trying a partial resynchronization (request {}:{}).", replid, offset);
  } else {
    spdlog::info("Partial resynchronization not possible (no cached master)");
  }
  state_ = State::kReceivePsync;
  // A master handing over (FAILOVER) tells its target to take over with this PSYNC.
  if (replication_.failover_state() == Replication::FailoverState::kInProgress) {
    SendRaw(RespCommand({"PSYNC", replid, offset, "FAILOVER"}));
  } else {
    SendRaw(RespCommand({"PSYNC", replid, offset}));
  }
}

bool ReplicaLink::HandlePsyncReply(const std::string& line) {
  // A full resync is unexpected after FAILOVER but not wrong; anything else refused it.
  if (replication_.failover_state() == Replication::FailoverState::kInProgress) {
    replication_.FailoverPsyncAnswered(line.starts_with("+FULLRESYNC") ||
                                       line.starts_with("+CONTINUE"));
  }
  if (line.starts_with("+FULLRESYNC")) {
    std::vector<std::string_view> parts = SplitWords(line);
    int64_t offset = 0;
    if (parts.size() != 3 || parts[1].size() != 40 || !ParseInt64(parts[2], &offset)) {
      spdlog::warn("Master replied with wrong +FULLRESYNC syntax.");
      Drop();
      return false;
    }
    sync_replid_ = std::string(parts[1]);
    sync_offset_ = offset;
    spdlog::info("Full resync from master: {}:{}", sync_replid_, sync_offset_);
    // Our own ID and offset describe data about to be replaced: no PSYNC from them again.
    have_cached_master_ = false;
    // repl-diskless-load: straight from the socket with swapdb, or with on-empty-db while we
    // hold no keys; otherwise through a temporary file.
    const std::string& load_mode = cfg().repl_diskless_load;
    diskless_load_ =
        load_mode == "swapdb" || (load_mode == "on-empty-db" && server_.TotalKeys() == 0);
    payload_ = SyncPayloadReader();
    temp_written_ = temp_flushed_ = 0;
    state_ = State::kTransfer;
    last_io_ms_ = NowMs();
    if (diskless_load_) return false;
    temp_path_ = fmt::format("temp-{}.{}.rdb", time(nullptr), getpid());
    temp_fd_ = open(temp_path_.c_str(), O_CREAT | O_WRONLY | O_TRUNC | O_EXCL | O_CLOEXEC, 0644);
    if (temp_fd_ < 0) {
      spdlog::warn("Opening the temp file needed for MASTER <-> REPLICA synchronization: {}",
                   strerror(errno));
      temp_path_.clear();
      Drop();
      return false;
    }
    return false;
  }
  if (line.starts_with("+CONTINUE")) {
    std::string_view new_id = std::string_view(line).substr(9);
    while (!new_id.empty() && new_id.front() == ' ') new_id.remove_prefix(1);
    spdlog::info("Successful partial resynchronization with master.");
    if (new_id.size() == 40 && new_id != replication_.replid()) {
      // The master's history got a new ID (it was promoted): ours continues as its ID2.
      replication_.replid2_ = replication_.replid_;
      replication_.second_replid_offset_ = replication_.master_repl_offset() + 1;
      replication_.replid_ = std::string(new_id);
      spdlog::info("Master replication ID changed to {}", new_id);
      DisconnectSubReplicas();
    }
    spdlog::info("MASTER <-> REPLICA sync: Master accepted a Partial Resynchronization.");
    if (!replication_.buffer().created()) {
      replication_.buffer().Create(replication_.BacklogCapacity());
    }
    std::string rest = std::move(inbuf_);
    inbuf_.clear();
    BecomeConnected(rest);
    return false;
  }
  if (line.starts_with("-NOMASTERLINK") || line.starts_with("-LOADING")) {
    spdlog::info("Master is currently unable to PSYNC but should be in the future: {}", line);
  } else {
    spdlog::warn("Unexpected reply to PSYNC from master: {}", line);
  }
  Drop();
  return false;
}

// ---- Full resync: the RDB payload ----

void ReplicaLink::ReadPayload() {
  std::string buf;
  size_t total = 0;
  while (state_ == State::kTransfer && total < kTransferReadPerEvent) {
    buf.resize(kTransferRead);
    ssize_t n = LinkRead(buf.data(), buf.size());
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return;
    if (n <= 0) {
      spdlog::warn("I/O error trying to sync with MASTER: {}",
                   n < 0 ? strerror(errno) : "connection lost");
      DropAndReconnect();
      return;
    }
    last_io_ms_ = NowMs();
    total += static_cast<size_t>(n);
    buf.resize(static_cast<size_t>(n));
    FeedPayload(buf);
  }
}

void ReplicaLink::FeedPayload(std::string_view data) {
  const bool had_header = payload_.state() != SyncPayloadReader::State::kPreamble;
  std::string bytes;
  size_t used = payload_.Feed(data, &bytes);
  if (!had_header && payload_.state() != SyncPayloadReader::State::kPreamble &&
      payload_.state() != SyncPayloadReader::State::kError) {
    const char* to = diskless_load_ ? "parser" : "disk";
    if (payload_.eof_mode()) {
      spdlog::info("MASTER <-> REPLICA sync: receiving streamed RDB from master with EOF to {}",
                   to);
    } else {
      spdlog::info("MASTER <-> REPLICA sync: receiving {} bytes from master to {}",
                   payload_.expected(), to);
    }
  }
  if (payload_.state() == SyncPayloadReader::State::kError) {
    spdlog::warn("{}", payload_.error());
    DropAndReconnect();
    return;
  }
  if (diskless_load_) {
    if (payload_.state() == SyncPayloadReader::State::kPreamble) return;
    const bool done = payload_.state() == SyncPayloadReader::State::kDone;
    LoadFromSocket(std::move(bytes), done ? data.substr(used) : std::string_view());
    return;
  }
  std::string_view out = bytes;
  while (!out.empty()) {
    ssize_t n = write(temp_fd_, out.data(), out.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      spdlog::warn(
          "Write error or short write writing to the DB dump file needed for MASTER <-> REPLICA "
          "synchronization: {}",
          n < 0 ? strerror(errno) : "short write");
      DropAndReconnect();
      return;
    }
    out.remove_prefix(static_cast<size_t>(n));
    temp_written_ += static_cast<uint64_t>(n);
  }
  // Start writeback every few MB, as Redis does, so the fsync before loading has little left
  // to do (one fsync of a whole big payload stalled the loop for a good part of the sync).
  constexpr uint64_t kWritebackEvery = 8 << 20;
  if (temp_written_ - temp_flushed_ >= kWritebackEvery) {
    sync_file_range(temp_fd_, static_cast<off64_t>(temp_flushed_),
                    static_cast<off64_t>(temp_written_ - temp_flushed_), SYNC_FILE_RANGE_WRITE);
    temp_flushed_ = temp_written_;
  }
  if (payload_.state() == SyncPayloadReader::State::kDone) FinishFullSync(data.substr(used));
}

// repl-diskless-load disabled (or on-empty-db with keys): the payload went to a temporary
// file, which becomes the dump file once it has loaded.
void ReplicaLink::FinishFullSync(std::string_view rest) {
  fsync(temp_fd_);
  close(temp_fd_);
  temp_fd_ = -1;
  // Our replicas hold data about to be replaced: they must resync with us.
  DisconnectSubReplicas();
  const bool aof_on = PrepareToLoad(true);
  spdlog::info("MASTER <-> REPLICA sync: Flushing old data");
  server_.FlushAllData(cfg().replica_lazy_flush);
  spdlog::info("MASTER <-> REPLICA sync: Loading DB in memory");
  RdbLoadOptions options = SyncLoadOptions(cfg());
  options.progress = [this](int64_t bytes) {
    server_.LoadingProgressed(bytes);
    return ServeWhileLoading(-1, 0);
  };
  RdbLoadStats stats;
  server_.LoadingStarted(false, static_cast<int64_t>(temp_written_));
  std::string err = server_.LoadRdbFile(temp_path_, options, &stats);
  server_.LoadingEnded();
  if (!err.empty()) {
    spdlog::warn("{}", err);
    spdlog::warn(
        "Failed trying to load the MASTER synchronization DB from disk, check server logs.");
    server_.FlushAllData(false);
    // Our ID and offset no longer describe our (empty) data.
    replication_.ChangeReplicationId();
    if (aof_on) replication_.config_.Set({{"appendonly", "yes"}});
    DropAndReconnect();
    return;
  }
  if (rename(temp_path_.c_str(), cfg().dbfilename.c_str()) != 0) {
    spdlog::warn(
        "Failed trying to rename the temp DB into {} in MASTER <-> REPLICA synchronization: {}",
        cfg().dbfilename, strerror(errno));
    unlink(temp_path_.c_str());
  }
  temp_path_.clear();
  FinishLoad(aof_on, rest);
}

void ReplicaLink::LoadFromSocket(std::string first_bytes, std::string_view stream_start) {
  const bool swap = cfg().repl_diskless_load == "swapdb";
  // The old data is a point of the same history as the new (a resync with our own master
  // that couldn't continue): it may be read while the new loads, as Redis's async loading.
  const bool async = swap && sync_replid_ == replication_.replid();
  const bool aof_on = PrepareToLoad(false);
  RdbLoadOptions options = SyncLoadOptions(cfg());
  std::vector<std::unique_ptr<Database>> loaded;
  std::vector<Database*> targets;
  std::vector<std::string> libraries;
  if (swap) {
    loaded = server_.NewDetachedDatabases();
    for (auto& db : loaded) targets.push_back(db.get());
    options.target_dbs = targets;
    options.deferred_libraries = &libraries;
  } else {
    DisconnectSubReplicas();
    spdlog::info("MASTER <-> REPLICA sync: Flushing old data");
    server_.FlushAllData(cfg().replica_lazy_flush);
  }
  spdlog::info("MASTER <-> REPLICA sync: Loading DB in memory");
  options.progress = [this](int64_t) {
    server_.LoadingProgressed(payload_.received());
    return ServeWhileLoading(-1, 0);
  };
  // The image's bytes: those already read, then the socket through the payload framing. While
  // the master is slow the loop serves clients (Redis reads with a blocking socket and a
  // repl-timeout; it's the same wait, with the loop kept alive).
  std::string pending = std::move(first_bytes);
  size_t pending_at = 0;
  std::string rest(stream_start);
  std::string read_buf;
  const int64_t timeout_ms = std::max<int64_t>(1, cfg().repl_timeout) * 1000;
  RdbByteSource source = [&](char* dst, size_t cap) -> ssize_t {
    while (true) {
      if (pending_at < pending.size()) {
        size_t n = std::min(cap, pending.size() - pending_at);
        memcpy(dst, pending.data() + pending_at, n);
        pending_at += n;
        return static_cast<ssize_t>(n);
      }
      if (payload_.state() == SyncPayloadReader::State::kDone) return 0;
      read_buf.resize(kTransferRead);
      ssize_t n = LinkRead(read_buf.data(), read_buf.size());
      if (n > 0) {
        last_io_ms_ = NowMs();
        pending.clear();
        pending_at = 0;
        std::string_view in(read_buf.data(), static_cast<size_t>(n));
        size_t used = payload_.Feed(in, &pending);
        if (payload_.state() == SyncPayloadReader::State::kError) {
          spdlog::warn("{}", payload_.error());
          return -1;
        }
        if (payload_.state() == SyncPayloadReader::State::kDone) rest.assign(in.substr(used));
        continue;
      }
      if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
        spdlog::warn("I/O error trying to sync with MASTER: {}",
                     n < 0 ? strerror(errno) : "connection lost");
        return -1;
      }
      if (NowMs() - last_io_ms_ > timeout_ms) {
        spdlog::warn(
            "Timeout receiving bulk data from MASTER... If the problem persists try to set the "
            "'repl-timeout' parameter in redis.conf to a larger value.");
        return -1;
      }
      if (!ServeWhileLoading(fd_, 100)) return -1;
    }
  };
  RdbLoadStats stats;
  server_.LoadingStarted(async, std::max<int64_t>(0, payload_.expected()));
  std::string err = server_.LoadRdbFromSource(source, options, &stats);
  if (err == kRdbTrailingBytes && payload_.eof_mode()) {
    err = "Replication stream EOF marker is broken";
  } else if (err.empty()) {
    // The image ended: the framing must end with it (with EOF framing, anything but the mark
    // comes out as payload bytes).
    char extra[64];
    ssize_t n = source(extra, sizeof(extra));
    if (n > 0) {
      err = payload_.eof_mode() ? "Replication stream EOF marker is broken"
                                : "Payload bytes after the end of the MASTER synchronization DB";
    }
    if (n < 0) err = "Replication stream ended badly after the MASTER synchronization DB";
  }
  server_.LoadingEnded();
  if (!err.empty()) {
    spdlog::warn("{}", err);
    spdlog::warn(
        "Failed trying to load the MASTER synchronization DB from socket, check server logs.");
    if (swap) {
      server_.DiscardDatabases(std::move(loaded));
      spdlog::info("MASTER <-> REPLICA sync: Discarding temporary DB in background");
    } else {
      server_.FlushAllData(false);
      replication_.ChangeReplicationId();
    }
    if (aof_on) replication_.config_.Set({{"appendonly", "yes"}});
    DropAndReconnect();
    return;
  }
  if (swap) {
    DisconnectSubReplicas();
    spdlog::info("MASTER <-> REPLICA sync: Swapping active DB with loaded DB");
    server_.SwapInLoadedData(loaded, libraries);
    spdlog::info("MASTER <-> REPLICA sync: Discarding old DB in background");
  }
  // The data changed without a save (nothing was written to disk).
  server_.MarkDirty(1);
  FinishLoad(aof_on, rest);
}

bool ReplicaLink::PrepareToLoad(bool log_child_kill) {
  // The link's socket leaves the loop while the data loads: the loader reads it itself (a
  // diskless load), or it waits until the link becomes the master client.
  server_.UnwatchLinkSocket(fd_);
  // A snapshot child still writing the old data would otherwise rename it over the dump file
  // after we loaded the new one.
  if (replication_.children_.active(ChildKind::kRdb)) {
    if (log_child_kill) {
      spdlog::warn(
          "Replica is about to load the RDB file received from the master, but there is a "
          "pending RDB child running. Killing process {} and removing its temp file to avoid "
          "any race",
          replication_.children_.pid());
    }
    server_.KillRdbChild();
  }
  // The AOF must end up describing the new data: stop it now and restart it afterwards, which
  // starts with a rewrite (as Redis's restartAOFAfterSYNC).
  const bool aof_on = cfg().appendonly;
  if (aof_on) replication_.config_.Set({{"appendonly", "no"}});
  last_keepalive_ms_ = NowMs();
  return aof_on;
}

bool ReplicaLink::ServeWhileLoading(int wait_fd, int timeout_ms) {
  // A newline a second tells the master we're alive, as Redis's replica does while loading.
  const int64_t now = NowMs();
  if (now - last_keepalive_ms_ >= 1000) {
    last_keepalive_ms_ = now;
    // A full socket just skips this one (the master has a whole repl-timeout to hear one).
    [[maybe_unused]] ssize_t w = tls_ ? tls_->Write("\n", 1) : write(fd_, "\n", 1);
  }
  server_.ServeClientsWhileLoading(wait_fd, timeout_ms);
  return !server_.ShuttingDown();
}

void ReplicaLink::FinishLoad(bool aof_on, std::string_view rest) {
  replication_.ResetStream(sync_replid_, sync_offset_);
  if (!replication_.buffer().created()) {
    replication_.buffer().Create(replication_.BacklogCapacity());
  }
  cached_db_ = 0;
  if (aof_on) replication_.config_.Set({{"appendonly", "yes"}});
  spdlog::info("MASTER <-> REPLICA sync: Finished with success");
  BecomeConnected(rest);
}

void ReplicaLink::BecomeConnected(std::string_view rest) {
  server_.UnwatchLinkSocket(fd_);
  master_client_id_ = server_.AdoptMasterConnection(fd_, std::move(tls_), cached_db_);
  fd_ = -1;
  state_ = State::kConnected;
  have_cached_master_ = true;
  down_since_ms_ = 0;
  partial_.clear();
  // Right away: a diskless master starts the stream only after this first ACK.
  SendAck();
  server_.InjectClientInput(master_client_id_, rest);
}

void ReplicaLink::DisconnectSubReplicas() {
  std::vector<uint64_t> ids;
  for (const auto& [id, replica] : replication_.replicas()) ids.push_back(id);
  for (uint64_t id : ids) server_.CloseClientNow(id);
}

// ---- Connected: the stream ----

void ReplicaLink::OnMasterBytes(uint64_t client_id, int db, std::string_view bytes, bool complete) {
  if (client_id != master_client_id_) return;
  partial_.append(bytes);
  if (!complete) return;
  replication_.FeedStream(partial_);
  partial_.clear();
  cached_db_ = db;
  if (ack_requested_) {
    ack_requested_ = false;
    SendAck();
  }
}

void ReplicaLink::OnMasterClientClosed(uint64_t client_id) {
  if (state_ == State::kConnected && client_id == master_client_id_) LostMaster();
}

void ReplicaLink::LostMaster() {
  spdlog::info("Connection with master lost.");
  spdlog::info("Caching the disconnected master state.");
  Drop();
}

void ReplicaLink::SendAck() {
  const uint64_t master = master_client_id();
  if (master == 0) return;
  // FACK: how far our AOF is fsynced (WAITAOF on the master), when our AOF is on.
  const int64_t fsynced = server_.AofFsyncedOffset();
  std::vector<std::string> ack = {"REPLCONF", "ACK",
                                  std::to_string(replication_.master_repl_offset())};
  if (fsynced >= 0) {
    ack.push_back("FACK");
    ack.push_back(std::to_string(fsynced));
  }
  server_.SendToClient(master, RespCommand(ack));
  last_ack_ms_ = NowMs();
}

void ReplicaLink::DropTransfer() {
  if (temp_fd_ >= 0) close(temp_fd_);
  temp_fd_ = -1;
  if (!temp_path_.empty()) unlink(temp_path_.c_str());
  temp_path_.clear();
  payload_ = SyncPayloadReader();
}

void ReplicaLink::Drop() {
  tls_.reset();
  if (fd_ >= 0) {
    server_.UnwatchLinkSocket(fd_);
    // A forked child holds a copy of the socket: shut it down so the master sees us go now.
    if (replication_.children_.active()) shutdown(fd_, SHUT_RDWR);
    close(fd_);
    fd_ = -1;
  }
  DropTransfer();
  if (uint64_t master = master_client_id()) server_.CloseClientNow(master);
  if (state_ == State::kConnected) {
    down_since_ms_ = NowMs();
    have_cached_master_ = true;
  }
  master_client_id_ = 0;
  partial_.clear();
  inbuf_.clear();
  expected_replies_.clear();
  ack_requested_ = false;
  state_ = State::kConnect;
}

void ReplicaLink::DropAndReconnect() {
  Drop();
  if (server_.ShuttingDown()) return;
  spdlog::info("Reconnecting to MASTER {}:{} after failure", host_, port_);
  Connect();
}

void ReplicaLink::Cron() {
  const int64_t now = NowMs();
  const int64_t timeout_ms = std::max<int64_t>(1, cfg().repl_timeout) * 1000;
  switch (state_) {
    case State::kConnect:
      if (now - last_connect_try_ms_ >= 1000) {
        spdlog::info("Connecting to MASTER {}:{}", host_, port_);
        Connect();
      }
      return;
    case State::kConnecting:
    case State::kReceivePong:
    case State::kReceiveReplies:
    case State::kReceivePsync:
      if (now - last_io_ms_ > timeout_ms) {
        spdlog::warn("Timeout connecting to the MASTER...");
        DropAndReconnect();
      }
      return;
    case State::kTransfer:
      if (now - last_io_ms_ > timeout_ms) {
        spdlog::warn(
            "Timeout receiving bulk data from MASTER... If the problem persists try to set the "
            "'repl-timeout' parameter in redis.conf to a larger value.");
        DropAndReconnect();
      }
      return;
    case State::kConnected: {
      const uint64_t master = master_client_id();
      if (master == 0) {
        LostMaster();
        return;
      }
      if (now - server_.ClientLastInteractionMs(master) > timeout_ms) {
        spdlog::warn("MASTER timeout: no data nor PING received...");
        Drop();
        return;
      }
      if (now - last_ack_ms_ >= 1000) SendAck();
      return;
    }
  }
}

// ---- Replication's replica-side commands ----

void Replication::PromoteByUser(std::string_view requested_by) {
  if (link_ == nullptr) return;
  UnsetMaster();
  spdlog::info("MASTER MODE enabled (user request from '{}')", requested_by);
}

bool Replication::Follow(std::string host, int port, std::string_view requested_by) {
  if (link_ != nullptr && EqualsIgnoreCase(link_->host(), host) && link_->port() == port) {
    spdlog::info(
        "REPLICAOF would result into synchronization with the master we are already connected "
        "with. No operation performed.");
    return false;
  }
  SetMaster(std::move(host), port);
  spdlog::info("REPLICAOF {}:{} enabled (user request from '{}')", link_->host(), link_->port(),
               requested_by);
  return true;
}

void Replication::UnsetMaster() {
  if (link_ == nullptr) return;
  link_.reset();
  // Our history continues under a new ID; the old one stays valid as ID2 up to here, so
  // former siblings (and our replicas, which must hear of the change) can continue.
  ShiftReplicationId();
  spdlog::info(
      "Setting secondary replication ID to {}, valid up to offset: {}. New replication ID is {}",
      replid2_, second_replid_offset_, replid_);
  std::vector<uint64_t> ids;
  for (const auto& [id, replica] : replicas_) ids.push_back(id);
  for (uint64_t id : ids) host_.CloseClientNow(id);
  ForceSelect();
  config_.values().replicaof.clear();
  host_.SetExpiryView(ExpiryView::kMaster);
  no_replicas_since_ms_ = NowMs();
}

void Replication::SetMaster(std::string host, int port, bool from_rdb) {
  const bool was_master = link_ == nullptr;
  // A replica moving to another master continues (PSYNC) in the database the stream it
  // applied last selected: the stream only says SELECT again when it changes.
  const int db = was_master ? 0 : link_->stream_db();
  link_.reset();
  // Clients blocked on keys wait for writes that will now come only from the master.
  host_.UnblockClientsForRoleChange();
  config_.values().replicaof = fmt::format("{} {}", host, port);
  link_ = std::make_unique<ReplicaLink>(host_, *this, std::move(host), port);
  // Our own ID and offset are the "cached master": the new master may continue from them.
  // Just started, they are those of the RDB we loaded.
  if (from_rdb) {
    CacheMasterFromRdb();
  } else if (was_master) {
    spdlog::info(
        "Before turning into a replica, using my own master parameters to synthesize a cached "
        "master: I may be able to synchronize with the new master with just a partial "
        "transfer.");
  }
  if (!from_rdb) link_->set_have_cached_master(true);
  link_->set_cached_db(db);
  host_.SetExpiryView(ExpiryView::kReplicaClient);
  spdlog::info("Connecting to MASTER {}:{}", link_->host(), link_->port());
  link_->Connect();
}

void Replication::FollowForCluster(const std::string& host, int port, bool at_startup) {
  if (link_ != nullptr && link_->host() == host && link_->port() == port) return;
  SetMaster(host, port, at_startup && link_ == nullptr);
}

void Replication::PromoteForCluster() {
  if (link_ == nullptr) return;
  spdlog::info("Discarding previously cached master state.");
  UnsetMaster();
}

void Replication::StartFromConfig() {
  const std::string& replicaof = cfg().replicaof;
  if (replicaof.empty() || link_ != nullptr) return;
  size_t space = replicaof.rfind(' ');
  int64_t port = 0;
  if (space == std::string::npos || !ParseInt64(replicaof.substr(space + 1), &port)) return;
  link_ = std::make_unique<ReplicaLink>(host_, *this, replicaof.substr(0, space),
                                        static_cast<int>(port));
  host_.SetExpiryView(ExpiryView::kReplicaClient);
  CacheMasterFromRdb();
}

void Replication::CacheMasterFromRdb() {
  RdbReplicationInfo info;
  if (!host_.AofLoadedAtStartup() && RdbReadReplicationInfo(cfg().dbfilename, &info) &&
      info.offset >= 0 && info.replid.size() == 40) {
    ResetStream(info.replid, info.offset);
    if (!buffer_.created()) buffer_.Create(BacklogCapacity());
    link_->set_have_cached_master(true);
    link_->set_cached_db(info.stream_db);
    spdlog::info("Using the replication ID {} and offset {} of the RDB as the cached master",
                 info.replid, info.offset);
  }
}

int64_t Replication::announced_offset() const {
  if (link_ == nullptr) return master_repl_offset();
  return std::max<int64_t>(0, link_->processed_offset());
}

void Replication::MasterRequestedAck() {
  if (link_ != nullptr) link_->RequestAck();
}

void Replication::OnMasterBytes(uint64_t client_id, int db, std::string_view bytes, bool complete) {
  if (link_ != nullptr) link_->OnMasterBytes(client_id, db, bytes, complete);
}

}  // namespace vireo
