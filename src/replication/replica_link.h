// The replica side of replication: the link to our master (REPLICAOF host port).
// Owned by Replication; exists while this server follows a master.
//
// The link is a non-blocking socket on the server's loop (ReplicationHost::WatchLinkSocket): it
// connects, runs the handshake (PING, AUTH, REPLCONF listening-port / ip-address / capa,
// PSYNC) one reply at a time, and on +FULLRESYNC streams the RDB into a temporary file while
// the server keeps serving its clients (stale data). Once the data is in place the socket
// becomes a client flagged kClientMaster whose commands run through the dispatcher; the
// server reports the bytes of each applied command (OnMasterBytes), which advance our offset
// and go on to our own replicas and backlog unchanged. A failure at any step logs Redis's line,
// closes the socket and the cron (Cron) retries; the replication ID and offset we have are
// the "cached master" a later PSYNC continues from.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "replication/replication.h"
#include "replication/sync_payload.h"
#include "security/tls.h"

namespace vireo {

class ReplicaLink {
 public:
  enum class State {
    kConnect,         // to (re)connect at the next cron
    kConnecting,      // non-blocking connect in progress
    kReceivePong,     // PING sent
    kReceiveReplies,  // AUTH / REPLCONF sent, their replies are read in order
    kReceivePsync,    // PSYNC sent
    kTransfer,        // reading the RDB payload
    kConnected,       // the master client applies the stream
  };

  ReplicaLink(ReplicationHost& server, Replication& replication, std::string host, int port);
  ~ReplicaLink();
  ReplicaLink(const ReplicaLink&) = delete;
  ReplicaLink& operator=(const ReplicaLink&) = delete;

  const std::string& host() const { return host_; }
  int port() const { return port_; }
  State state() const { return state_; }
  // ROLE's state of the link: connect, connecting, handshake, sync or connected.
  std::string_view RoleState() const;
  // The master stream offset processed so far (ROLE, INFO slave_repl_offset), -1 if none.
  int64_t processed_offset() const;
  bool link_up() const;
  // INFO replication fields from master_host on (a replica's part), in Redis's order.
  void InfoFields(InfoFieldList* out) const;
  // From the server cron: connection attempts, timeouts, REPLCONF ACK once a second.
  void Cron();
  // Readiness of the link's socket (before it becomes the master client).
  void OnSocketEvent(uint32_t events);
  // See Replication::OnMasterBytes.
  void OnMasterBytes(uint64_t client_id, int db, std::string_view bytes, bool complete);
  // The master client is closing (Replication::OnClientClosed may call this for an immediate
  // reaction; otherwise the cron notices within a tick): cache the master state, reconnect.
  void OnMasterClientClosed(uint64_t client_id);
  // REPLCONF GETACK: the ACK goes out once the GETACK command itself has been applied.
  void RequestAck() { ack_requested_ = true; }
  // Our replication ID and offset are worth a PSYNC (the "cached master").
  void set_have_cached_master(bool have) { have_cached_master_ = have; }
  void set_cached_db(int db) { cached_db_ = db; }
  // Starts a connection attempt now (REPLICAOF); later attempts come from the cron.
  void Connect();
  // The master client's id (0 while not connected).
  uint64_t master_client_id() const;
  // The database the master's stream has selected (RDB aux repl-stream-db).
  int stream_db() const;
  // When the link went down (unix ms), 0 while it is up or was never up.
  int64_t down_since_ms() const { return down_since_ms_; }

 private:
  // tls-replication: the TLS handshake after the TCP connect (the link stays kConnecting).
  void StartTls();
  void ContinueTlsHandshake();
  ssize_t LinkRead(void* buf, size_t n);
  void OnConnected();
  void ReadHandshake();
  bool HandleLine(const std::string& line);
  void SendHandshake();
  void SendPsync();
  bool HandlePsyncReply(const std::string& line);
  void ReadPayload();
  void FeedPayload(std::string_view data);
  void DisconnectSubReplicas();
  void FinishFullSync(std::string_view rest);
  // repl-diskless-load on-empty-db / swapdb: the payload goes from the socket straight into
  // the databases (swapdb: into detached ones, swapped in once complete). `first_bytes` are
  // payload bytes already read; `stream_start` what followed a payload that ended with them.
  void LoadFromSocket(std::string first_bytes, std::string_view stream_start);
  // Both kinds of load: stops what must not run over the data being replaced (an RDB child,
  // the AOF) and takes the link's socket off the loop. Returns whether the AOF was on.
  bool PrepareToLoad(bool log_child_kill);
  // Serves clients between chunks of a load (they get -LOADING, or the old data with an
  // async load) and keeps the master from timing us out. False when the server shuts down.
  bool ServeWhileLoading(int wait_fd, int timeout_ms);
  void FinishLoad(bool aof_on, std::string_view stream_start);
  void BecomeConnected(std::string_view rest);
  void SendAck();
  void LostMaster();
  bool SendRaw(std::string_view bytes);
  // Closes the link socket (or the master client), discards a half-read payload; the cron
  // reconnects.
  void Drop();
  // A full sync failed in its transfer or load: drop, and connect again now rather than at
  // the next cron, as Redis does (a master that cuts transfers short gets tried again at once).
  void DropAndReconnect();
  void DropTransfer();

  const ServerConfig& cfg() const { return replication_.cfg(); }

  ReplicationHost& server_;  // the server, through what replication needs of it
  Replication& replication_;
  std::string host_;
  int port_;
  State state_ = State::kConnect;
  int fd_ = -1;
  std::unique_ptr<TlsSession> tls_;  // tls-replication; handed to the master client
  std::string inbuf_;                // handshake replies read so far
  // What the replies after PING answer, in order ("auth", "port", "ip", "capa").
  std::vector<std::string> expected_replies_;
  int64_t last_io_ms_ = 0;     // last byte from the master (handshake and transfer)
  int64_t down_since_ms_ = 0;  // master_link_down_since_seconds
  int64_t last_connect_try_ms_ = 0;
  int64_t last_ack_ms_ = 0;
  bool have_cached_master_ = false;
  bool ack_requested_ = false;
  uint64_t master_client_id_ = 0;
  int cached_db_ = 0;    // the database the master's stream had selected (PSYNC continues there)
  std::string partial_;  // bytes of a command the master client has not completed yet
  // +FULLRESYNC: the master's ID and offset, and the payload arriving.
  std::string sync_replid_;
  int64_t sync_offset_ = 0;
  SyncPayloadReader payload_;
  std::string temp_path_;
  int temp_fd_ = -1;
  // Bytes written to the temp file, and how many of them were handed to writeback already.
  uint64_t temp_written_ = 0;
  uint64_t temp_flushed_ = 0;
  bool diskless_load_ = false;     // chosen at +FULLRESYNC (repl-diskless-load)
  int64_t last_keepalive_ms_ = 0;  // the last newline sent to the master while loading
};

}  // namespace vireo
