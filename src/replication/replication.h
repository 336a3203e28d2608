// Replication, Redis's PSYNC2 protocol on both sides, owned by the Server.
//
// Shared (replication.cc): the replication ID pair and the stream offset, the backlog, and
// FeedStream, which appends stream bytes to the backlog and to every replica's output. On a
// master the stream is the effect stream (this is an EffectSink of the Propagator, adding
// SELECTs); on a replica it is the master's stream, proxied byte for byte after each command
// is applied, so sub-replicas and the backlog see exactly what the master sent and offsets
// agree along the chain.
//
// Master side (master.cc): replicas are clients that sent SYNC/PSYNC; full resync forks an RDB
// child (to disk, or straight to the sockets: repl-diskless-sync), partial resync answers
// +CONTINUE from the backlog; REPLCONF, pings, WAIT, INFO's slaveN lines, ROLE.
//
// Replica side (replica_link.cc, ReplicaLink): REPLICAOF, the connection to the master, the
// handshake, loading the RDB, and the master client whose commands are applied.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/child_processes.h"
#include "core/config.h"
#include "core/propagator.h"
#include "replication/repl_buffer.h"
#include "replication/replication_host.h"

namespace vireo {

class ReplicaLink;

using InfoFieldList = std::vector<std::pair<std::string, std::string>>;

// A replica as its master sees it: one per client that sent SYNC or PSYNC.
struct ReplicaState {
  enum class Phase {
    kWaitBgsaveStart,  // waiting for an RDB child to start (diskless delay, a child busy)
    kWaitBgsaveEnd,    // the RDB child for this replica runs; the stream accumulates
    kSendBulk,         // disk sync: the RDB file is being sent, then the accumulated stream
    kOnline,           // receiving the stream
  };
  uint64_t client_id = 0;
  Phase phase = Phase::kWaitBgsaveStart;
  int listening_port = 0;    // REPLCONF listening-port
  std::string announced_ip;  // REPLCONF ip-address
  bool capa_eof = false;     // can read a diskless ($EOF:) payload
  bool capa_psync2 = false;
  bool rdb_only = false;   // REPLCONF rdb-only 1: no stream after the RDB
  int64_t ack_offset = 0;  // REPLCONF ACK
  int64_t ack_time_ms = 0;
  int64_t psync_offset = 0;  // stream offset the replica starts from (its FULLRESYNC offset)
  bool diskless = false;     // this replica's RDB goes over its socket (EOF framing)
  bool old_sync = false;     // came with SYNC: no +FULLRESYNC, no PSYNC later
  // REPLCONF rdb-filter-only: what its snapshot leaves out (kRdbExclude* bits,
  // src/persistence/rdb.h). A filtered
  // snapshot always goes over the socket, so dump.rdb never holds a partial image.
  uint8_t rdb_exclude = 0;
  int64_t aof_ack_offset = 0;  // REPLCONF ACK ... FACK <offset> (WAITAOF)
  int64_t wait_since_ms = 0;   // when it started waiting for a snapshot
  // Disk sync: the dump being sent (SendBulk), after "$<size>\r\n".
  int bulk_fd = -1;
  int64_t bulk_offset = 0;
  int64_t bulk_size = 0;
  std::string bulk_preamble;
  // Diskless sync: the child writes the image into a pipe the server relays to the replicas
  // (SnapshotRelay). relay_sent:
  // how much of the relay's current chunk this replica has taken.
  bool relay = false;
  size_t relay_sent = 0;
  // Since when the replica hasn't taken the rest of the chunk (0: it isn't behind);
  // repl-timeout applies, read at each cron, so a change during the transfer counts.
  int64_t relay_stuck_since_ms = 0;
};

// The address a replica is known by (INFO, ROLE, FAILOVER TO): what it announced with
// REPLCONF ip-address, else the IP of its peer address `peer` ("ip:port").
std::string ReplicaAddress(std::string_view peer, const ReplicaState& replica);

// SYNC or PSYNC from a client, as its handler read it.
struct SyncRequest {
  uint64_t client_id = 0;
  std::string_view client_addr;
  bool psync = false;         // PSYNC (else the old SYNC)
  std::string_view replid;    // PSYNC's replication ID
  bool failover = false;      // PSYNC <replid> <offset> FAILOVER: our master hands over
  bool tls = false;           // the client is connected over TLS
  size_t pending_output = 0;  // its output not written yet
};

// FAILOVER [TO host port [FORCE]] [ABORT] [TIMEOUT ms], parsed.
struct FailoverRequest {
  bool abort = false;
  bool to = false;
  std::string host;
  int64_t port = 0;
  bool force = false;
  int64_t timeout_ms = 0;  // 0: none
};

// What ROLE reports.
struct RoleInfo {
  struct Replica {
    std::string ip;
    int port = 0;
    int64_t ack_offset = 0;
  };
  bool replica = false;
  // A replica's: its master, the link's state, the offset processed (-1 while down).
  std::string master_host;
  int master_port = 0;
  std::string_view link_state;
  int64_t processed_offset = -1;
  // A master's: its offset and the replicas online.
  int64_t master_offset = 0;
  std::vector<Replica> replicas;
};

class Replication : public EffectSink {
 public:
  // `host`, `config`, `children` and `rng` belong to the server and outlive replication.
  Replication(ReplicationHost& host, Config& config, ChildProcesses& children,
              std::mt19937_64& rng);
  ~Replication() override;
  Replication(const Replication&) = delete;
  Replication& operator=(const Replication&) = delete;

  // ---- Identity and the stream (replication.cc) ----
  const std::string& replid() const { return replid_; }
  const std::string& replid2() const { return replid2_; }
  int64_t second_replid_offset() const { return second_replid_offset_; }
  int64_t master_repl_offset() const { return buffer_.end_offset(); }
  // The offset a cluster node announces (Redis's replicationGetSlaveOffset for a replica): a
  // replica that has no master stream to continue (a full sync loading) says 0, which hides
  // it from CLUSTER SLOTS and makes CLUSTER SHARDS say "loading".
  int64_t announced_offset() const;
  // A new random ID; the old one is forgotten (Redis's changeReplicationId + clearing ID2).
  void ChangeReplicationId();
  // Promotion (REPLICAOF NO ONE, failover): the old ID becomes ID2, valid up to the current
  // offset, so former siblings can partially resync with us.
  void ShiftReplicationId();
  // Adopts `replid` and stream offset `offset` (a replica after +FULLRESYNC, or a restart that
  // read repl-id/repl-offset from the RDB). Empties the backlog, which starts at offset + 1.
  void ResetStream(std::string replid, int64_t offset);
  ReplicationBuffer& buffer() { return buffer_; }
  const ReplicationBuffer& buffer() const { return buffer_; }
  // repl-backlog-size, but at least 16 KB (Redis's floor).
  size_t BacklogCapacity() const;
  // Appends stream bytes to the shared buffer the backlog and every replica read from
  // (replicas still waiting for their RDB read them once it has been sent).
  void FeedStream(std::string_view bytes);
  // The next effect written into the stream starts with a SELECT (a new replica attached).
  void ForceSelect() { stream_db_ = -1; }

  // Start-up from the RDB. Before the load: a master (no `replicaof`) opens its backlog, so
  // the DELs of keys found expired (FeedExpiredKey) go into the stream; true when it did.
  bool BeginStartupLoad();
  void FeedExpiredKey(int db, std::string_view key);
  // After it, with the image's replication fields (offset -1: none): a master continues the
  // stream the RDB was taken at under a new ID (the RDB's becomes ID2), so its replicas can
  // partially resync; without them, the backlog goes again.
  void EndStartupLoad(const RdbReplicationInfo& info);

  // EffectSink: a master with a backlog writes effects into the stream.
  bool Accepting() const override;
  uint8_t target() const override { return kEffectToReplicas; }
  void AppendEffect(int db, std::string_view resp) override;

  // ---- Master side (master.cc) ----
  // SYNC / PSYNC in two steps, so its handler can read the offset in between (as Redis checks
  // it after these): "" or the error refusing the request (a PSYNC ... FAILOVER from our
  // master promotes us here first).
  std::string SyncRefusal(const SyncRequest& request);
  // Then the sync itself: +CONTINUE from the backlog, or a full resync (`offset`: PSYNC's).
  void Sync(const SyncRequest& request, int64_t offset);
  // REPLCONF's settings of a client: the replica's, or those kept for its coming SYNC/PSYNC.
  ReplicaState& ReplicaSettings(uint64_t client_id);
  // REPLCONF ACK <offset> [FACK <aof offset>] from a replica (nothing from other clients).
  void Ack(uint64_t client_id, int64_t offset, std::optional<int64_t> aof_offset);
  // WAIT / WAITAOF blocked `client_id` until acknowledgements arrive: it runs again when they
  // do (BeforeSleep), and replicas are asked for them.
  void WaitForAcks(uint64_t client_id);
  // The client is going away: forget it as a replica (or as the master link).
  void OnClientClosed(uint64_t client_id, std::string_view client_addr);
  const std::map<uint64_t, ReplicaState>& replicas() const { return replicas_; }
  ReplicaState* FindReplica(uint64_t client_id);
  // What replicas hold beyond the backlog (their own output buffers with their room, and the
  // shared buffer past repl-backlog-size): memory maxmemory doesn't count.
  size_t ReplicaOutputBytes() const;
  // INFO memory: the shared buffer past repl-backlog-size while replicas keep it
  // (mem_clients_slaves' part), and the rest (mem_replication_backlog).
  size_t ReplicaBufferExcess() const;
  size_t BacklogMemory() const;
  // A replica's stream in the shared buffer: what it hasn't read, what it keeps alive (its
  // client-output-buffer-limit counts it), and reading on (up to `max` bytes into `out`).
  size_t ReplicaStreamUnread(uint64_t client_id) const { return buffer_.Unread(client_id); }
  size_t ReplicaStreamHeld(uint64_t client_id) const { return buffer_.Held(client_id); }
  size_t ReadReplicaStream(uint64_t client_id, size_t max, std::string* out);
  // Replicas online whose last ACK covers `offset` (FACK, the AOF-fsynced offset, for
  // WAITAOF).
  int ReplicasAckedAtLeast(int64_t offset) const;
  int ReplicasFsyncedAtLeast(int64_t offset) const;
  // Replicas online with lag <= min-replicas-max-lag (min-replicas-to-write).
  int GoodReplicas() const;
  // "" or the -NOREPLICAS error for a write while min-replicas-to-write isn't met.
  std::string_view MinReplicasError() const;
  // SHUTDOWN's wait for replicas: asks every replica for an ACK now (REPLCONF GETACK into
  // the stream); whether each has acknowledged the whole stream; the log lines Redis prints
  // when the wait ends (each lagging replica, then how many are in sync).
  void RequestAcks();
  bool ReplicasCaughtUp() const;
  void LogReplicasAtShutdown();
  // Once per loop turn: sends REPLCONF GETACK if WAIT clients asked, answers WAIT clients
  // whose replicas have acknowledged.
  void BeforeSleep();
  // Disk sync, from the server's write path: sends the next part of the dump to a replica
  // whose client has bulk_pending (then its held stream). False on a write error.
  bool SendBulk(uint64_t client_id);
  // The relay pipe of a diskless sync has bytes (or its end) to read
  // (ReplicationHost::WatchSnapshotPipe).
  void OnSnapshotPipeReadable() { RelayNextChunk(); }

  // ---- Both sides ----
  RoleInfo Role();
  // INFO replication, in Redis's order.
  InfoFieldList InfoFields();
  // From the server cron (every 100 ms): pings to replicas, timeouts, backlog TTL, the
  // replica link's reconnects and ACKs.
  void Cron();

  // ---- FAILOVER (failover.cc) ----
  // FAILOVER [TO host port [FORCE]] [ABORT] [TIMEOUT ms]: writes pause, the first (or the
  // named) replica to acknowledge our whole stream is told, through PSYNC ... FAILOVER, to take
  // over, and we become its replica.
  // Returns "" (started, or aborted with ABORT) or the error.
  std::string Failover(const FailoverRequest& request);
  enum class FailoverState { kNone, kWaitForSync, kInProgress };
  FailoverState failover_state() const { return failover_state_; }
  // From the replica link: the target answered our PSYNC FAILOVER (accepted), or refused it
  // (then we go back to being a master, from the cron).
  void FailoverPsyncAnswered(bool accepted);

  // ---- Replica side (replica_link.cc) ----
  // Whether this server follows a master (REPLICAOF host port given).
  bool is_replica() const { return link_ != nullptr; }
  // Cluster mode decides the role from the cluster's configuration, not REPLICAOF: follow
  // host:port (nothing when already following it), or become a master keeping the data.
  // `at_startup`: a replica in nodes.conf continues from the RDB it loaded, as with replicaof.
  void FollowForCluster(const std::string& host, int port, bool at_startup = false);
  void PromoteForCluster();
  ReplicaLink* link() { return link_.get(); }
  // REPLICAOF NO ONE: stop following our master, keeping the data (nothing on a master).
  // `requested_by` describes the client for the log.
  void PromoteByUser(std::string_view requested_by);
  // REPLICAOF host port: follow it; false (nothing done) when already following it.
  bool Follow(std::string host, int port, std::string_view requested_by);
  // REPLCONF GETACK from our master: answers REPLCONF ACK <offset> on the master link.
  void MasterRequestedAck();
  // Start-up: `replicaof` in the configuration makes this server a replica (with the
  // replication ID and offset of the RDB it loaded as the cached master, when there are).
  void StartFromConfig();
  // The RDB we started from records the stream it was taken at: the link continues from it.
  void CacheMasterFromRdb();
  // Bytes of our master's stream the server parsed: part of a command, or (`complete`) the
  // end of one that has just been applied. Advances the offset, proxies them to sub-replicas.
  // `db`: the database the master client has selected.
  void OnMasterBytes(uint64_t client_id, int db, std::string_view bytes, bool complete);

 private:
  friend class ReplicaLink;
  // Master side helpers.
  bool TryPartialResync(uint64_t client_id, std::string_view client_addr, ReplicaState& replica,
                        std::string_view replid, int64_t offset);
  void StartRdbChildIfWaiting();
  void OnRdbChildDone(const ChildExit& exit);
  void PutOnline(uint64_t client_id, ReplicaState& replica);
  // A diskless image was sent to the replica (`ok`) or not: online, or false (the caller
  // drops it).
  bool EndDisklessTransfer(uint64_t client_id, ReplicaState& replica, bool ok);
  // The relay of a diskless image (snapshot_relay.cc): reads the next chunk from the pipe once
  // every replica took the last one; writes a replica's part of the chunk; ends the
  // transfer when both the pipe and the child are done.
  void RelayNextChunk();
  bool RelaySend(uint64_t client_id, ReplicaState& replica);
  void FinishRelayIfDone();
  // From the cron: drops relayed replicas stuck for repl-timeout.
  void DropStuckRelayReplicas();
  void WatchRelayPipe(bool on);
  const ServerConfig& cfg() const { return config_.values(); }
  // Replica side: follow host:port from now on (REPLICAOF host port).
  void SetMaster(std::string host, int port, bool from_rdb = false);
  // Promotion (REPLICAOF NO ONE, PSYNC FAILOVER, an aborted failover): drop the link, shift the
  // replication ID, make sub-replicas resync with the new one.
  void UnsetMaster();
  // FAILOVER's progress, from the cron and when acknowledgements arrive.
  void UpdateFailoverStatus();
  const ReplicaState* FindReplicaByAddress(std::string_view host, int port);
  void AbortFailover(std::string_view reason);
  void ClearFailoverState();

  ReplicationHost& host_;
  Config& config_;
  ChildProcesses& children_;
  std::mt19937_64& rng_;
  std::string replid_;
  std::string replid2_;
  int64_t second_replid_offset_ = -1;
  ReplicationBuffer buffer_;
  int stream_db_ = -1;                           // the database the stream last SELECTed
  std::map<uint64_t, ReplicaState> replicas_;    // by client id
  std::map<uint64_t, ReplicaState> handshakes_;  // REPLCONF settings before SYNC/PSYNC
  std::vector<int> child_fds_;                   // the sockets a diskless child writes to
  int results_pipe_read_ = -1;  // the diskless child reports which replicas got it all
  // A diskless image relayed to the replicas, as Redis sends it (the child writes a pipe, the
  // server the sockets).
  struct SnapshotRelay {
    int fd = -1;              // the pipe's read end (-1: read to its end, or none)
    bool watched = false;     // fd is on the loop
    size_t report_index = 0;  // the pipe's place in the child's report
    std::string chunk;        // what the replicas are being sent now
    std::vector<uint64_t> ids;
    bool child_done = false;
    bool child_ok = false;      // the child wrote the whole image into the pipe
    bool child_failed = false;  // it exited with an error (or a signal)
    bool active() const { return fd >= 0 || !ids.empty(); }
  };
  SnapshotRelay relay_;
  bool acks_changed_ = false;              // an ACK arrived: WAIT clients may be done
  std::vector<uint64_t> waiting_clients_;  // blocked in WAIT
  int64_t last_fsynced_reploff_ = -1;      // the AOF's, when WAIT clients last looked
  int64_t last_cron_ms_ = 0;
  FailoverState failover_state_ = FailoverState::kNone;
  std::string failover_host_;  // the target ("" until one is chosen)
  int failover_port_ = 0;
  int64_t failover_end_ms_ = 0;  // 0: no timeout
  bool failover_force_ = false;
  bool failover_abort_pending_ = false;  // the target refused: abort from the cron
  int64_t last_ping_ms_ = 0;
  int64_t no_replicas_since_ms_ = 0;  // repl-backlog-ttl
  bool getack_pending_ = false;       // WAIT asked: send REPLCONF GETACK before sleeping
  bool startup_master_ = false;       // BeginStartupLoad opened the backlog
  std::unique_ptr<ReplicaLink> link_;
};

}  // namespace vireo
