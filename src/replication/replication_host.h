// What replication needs from the server that hosts it. The replication layer declares it; the
// server implements it (src/server/replication_host.cc), as it implements scripting's
// ScriptHost. The configuration, the child processes and the random generator reach
// Replication directly (see its constructor); what lives in the server's clients, loop,
// databases and persistence state goes through here.
//
// Clients are named by id: a replica is a client that sent SYNC/PSYNC, the master link becomes
// a client once the handshake is done. Replication never holds a client itself, so a call
// about a client that has gone is a harmless no-op (or answers "nothing": 0, "", nullptr).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "persistence/rdb.h"

namespace vireo {

class Database;
class TlsSession;
enum class ExpiryView : uint8_t;

class ReplicationHost {
 public:
  virtual ~ReplicationHost() = default;

  // ---- clients, by id ----
  // The client exists (it may be closing).
  virtual bool ClientExists(uint64_t id) = 0;
  // The client exists and is not closing.
  virtual bool ClientOpen(uint64_t id) = 0;
  // Its peer address, "ip:port" ("" if gone).
  virtual std::string ClientAddress(uint64_t id) = 0;
  // Its socket (-1 if gone) and TLS session (nullptr: plain socket), for the snapshot bytes
  // replication writes itself.
  virtual int ClientSocket(uint64_t id) = 0;
  virtual TlsSession* ClientTls(uint64_t id) = 0;
  // Memory its output buffer holds: what is queued and the room reserved for more (which
  // used_memory counts too, so leaving it out of eviction must leave all of it out).
  virtual size_t ClientOutputMemory(uint64_t id) = 0;
  // The database its commands run in.
  virtual int ClientDb(uint64_t id) = 0;
  // When it last sent or received anything (unix ms).
  virtual int64_t ClientLastInteractionMs(uint64_t id) = 0;
  // Bytes read from it and not parsed yet.
  virtual size_t ClientUnreadInput(uint64_t id) = 0;
  // Appends bytes to its output and schedules the write (client-output-buffer-limit applies).
  virtual void SendToClient(uint64_t id, std::string_view bytes) = 0;
  virtual void CloseClientNow(uint64_t id) = 0;
  virtual void CloseClientAfterReply(uint64_t id) = 0;
  // The client is a replica from now on (SYNC/PSYNC accepted).
  virtual void MarkReplicaClient(uint64_t id) = 0;
  // A replica waiting for its snapshot: its output (the stream) is held back until then.
  virtual void HoldClientOutput(uint64_t id, bool held) = 0;
  // Disk sync: the write path sends the dump (Replication::SendBulk) before its output.
  virtual void SetClientBulkPending(uint64_t id, bool pending) = 0;
  // The pipe a diskless sync child writes for TLS replicas: on the loop (readable, calls
  // Replication::OnSnapshotPipeReadable) or off it.
  virtual void WatchSnapshotPipe(int fd, bool on) = 0;
  // WAIT / WAITAOF: a blocked client runs its command again (it replies or blocks again with
  // its original deadline); nothing if it is gone or no longer blocked.
  virtual void RerunBlockedClient(uint64_t id) = 0;
  // Becoming a replica: clients blocked on keys are unblocked with Redis's role-change error.
  virtual void UnblockClientsForRoleChange() = 0;

  // ---- the link to our master ----
  // The link's socket on the loop (adds it, or changes its events), and off it again.
  virtual void WatchLinkSocket(int fd, uint32_t events) = 0;
  virtual void UnwatchLinkSocket(int fd) = 0;
  // tls-replication: a client TLS session on a connected socket.
  virtual std::unique_ptr<TlsSession> ConnectTls(int fd) = 0;
  // Turns the connected link into the master client (selected `db`); returns its id.
  virtual uint64_t AdoptMasterConnection(int fd, std::unique_ptr<TlsSession> tls, int db) = 0;
  // Runs bytes already read for that client (read past the RDB payload) as if from its socket.
  virtual void InjectClientInput(uint64_t id, std::string_view input) = 0;
  // The port this server listens on (REPLCONF listening-port).
  virtual int ListeningPort() = 0;

  // ---- loading a master's data ----
  // The dataset loads while the loop keeps serving: `async` serves the old data meanwhile,
  // otherwise commands get -LOADING.
  virtual void LoadingStarted(bool async, int64_t total_bytes) = 0;
  virtual void LoadingProgressed(int64_t loaded_bytes) = 0;
  virtual void LoadingEnded() = 0;
  // Serves other clients for one loop turn, waiting up to timeout_ms for them or `wait_fd`.
  virtual void ServeClientsWhileLoading(int wait_fd, int timeout_ms) = 0;
  // SHUTDOWN was asked: a load in progress gives up.
  virtual bool ShuttingDown() = 0;
  // Keys in all databases.
  virtual size_t TotalKeys() = 0;
  // Removes every key and function library (freed in the background with `async`), as
  // FLUSHALL does for watchers and waiters.
  virtual void FlushAllData(bool async) = 0;
  // Empty databases outside the keyspace, one per database (a swapdb load fills them).
  virtual std::vector<std::unique_ptr<Database>> NewDetachedDatabases() = 0;
  // Swaps the loaded databases' contents in (watchers and waiters notified), replaces the
  // function libraries with `libraries`, and frees the old data in the background.
  virtual void SwapInLoadedData(std::vector<std::unique_ptr<Database>>& loaded,
                                const std::vector<std::string>& libraries) = 0;
  // Frees databases in the background.
  virtual void DiscardDatabases(std::vector<std::unique_ptr<Database>> dbs) = 0;
  // The data changed without a save.
  virtual void MarkDirty(uint64_t changes) = 0;
  // How keys past their TTL look (a replica leaves expiry to its master).
  virtual void SetExpiryView(ExpiryView view) = 0;

  // ---- persistence ----
  // The AOF is on (the stream offset then moves even without replicas), how far it is
  // fsynced (stream offset, -1 if off), and whether start-up loaded it (not the RDB).
  virtual bool AofOn() = 0;
  virtual int64_t AofFsyncedOffset() = 0;
  virtual bool AofLoadedAtStartup() = 0;
  // The dump file's path, a snapshot to it, a snapshot through options.sink (in the forked
  // child), loads from a file or a byte source, and killing a running RDB child.
  virtual std::string RdbFilePath() = 0;
  virtual std::string SaveRdbFile(const std::string& path, const RdbSaveOptions& options) = 0;
  virtual std::string SaveRdbToSink(const RdbSaveOptions& options) = 0;
  virtual std::string LoadRdbFile(const std::string& path, const RdbLoadOptions& options,
                                  RdbLoadStats* stats) = 0;
  virtual std::string LoadRdbFromSource(RdbByteSource source, const RdbLoadOptions& options,
                                        RdbLoadStats* stats) = 0;
  virtual void KillRdbChild() = 0;

  // ---- statistics and pauses ----
  // INFO stats: sync_full, sync_partial_ok / sync_partial_err, total_net_repl_output_bytes.
  virtual void CountFullSync() = 0;
  virtual void CountPartialSync(bool accepted) = 0;
  virtual void CountReplicationOutput(uint64_t bytes) = 0;
  // FAILOVER: writes pause (no end) while it waits for a replica to catch up, and resume.
  virtual void PauseWritesForFailover(bool on) = 0;
  // A pause holds the stream still (no pings, no GETACK).
  virtual bool ReplicationStreamPaused() = 0;
};

}  // namespace vireo
