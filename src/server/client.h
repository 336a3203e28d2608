// A connected client: its socket, buffers, protocol state and per-connection settings.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "protocol/reply_builder.h"
#include "protocol/resp_parser.h"

namespace vireo {

class Server;
class AclUser;
struct CommandSpec;

enum ClientFlag : uint32_t {
  kClientMulti = 1u << 0,      // inside MULTI
  kClientDirtyCas = 1u << 1,   // a WATCHed key changed: EXEC fails
  kClientDirtyExec = 1u << 2,  // a command failed to queue: EXEC aborts
  kClientCloseAfterReply = 1u << 3,
  kClientCloseAsap = 1u << 4,
  kClientMonitor = 1u << 5,
  kClientBlocked = 1u << 6,
  kClientPubsub = 1u << 7,
  kClientUnixSocket = 1u << 8,
  kClientNoEvict = 1u << 9,
  kClientNoTouch = 1u << 10,
  kClientReplyOff = 1u << 11,
  kClientReplySkipNext = 1u << 12,
  kClientReplySkip = 1u << 13,
  kClientPendingCommand = 1u << 14,  // has parsed input waiting to run (after an unblock)
  kClientReplica = 1u << 15,         // a replica connected to us (sent SYNC/PSYNC): CLIENT LIST "S"
  kClientMaster = 1u << 16,          // our master's link, whose commands we apply: CLIENT LIST "M"
  kClientPostponed = 1u << 17,       // its command waits for a pause to end (also kClientBlocked)
  kClientTracking = 1u << 18,        // CLIENT TRACKING ON (state in Server::tracking())
  kClientAsking = 1u << 19,          // cluster: ASKING, for the next command (or transaction)
  kClientReadonly = 1u << 20,        // cluster: READONLY, reads served by replicas: CLIENT LIST "r"
  // SCRIPT DEBUG YES|SYNC: its next EVAL is debugged. A forked session owns the socket, so
  // closing the client in the server must not shut the connection down.
  kClientLuaDebug = 1u << 21,
  kClientLuaDebugSync = 1u << 22,  // SCRIPT DEBUG SYNC: the session runs in the server
};

struct QueuedCommand {
  std::vector<std::string> argv;
  const CommandSpec* spec;
};

class TlsSession;  // src/security/tls.h

class Client {
 public:
  // Takes ownership of the socket `fd` (closed with the client); -1 for a client with no
  // connection (scripts).
  Client(Server* server, uint64_t id, int fd);
  ~Client();

  uint64_t id() const { return id_; }
  Server* server() const { return server_; }
  int fd() const { return fd_; }
  // The connection's bytes, through TLS when it has a session: read(2)/write(2) semantics
  // (TlsSession's). One predictable branch keeps the plain path as it was.
  ssize_t ReadSocket(void* buf, size_t n) { return tls ? ReadTls(buf, n) : ::read(fd_, buf, n); }
  ssize_t WriteSocket(const void* buf, size_t n) {
    return tls ? WriteTls(buf, n) : ::write(fd_, buf, n);
  }
  // Set for a connection on the tls-port (or an outgoing TLS link adopted as a client).
  std::unique_ptr<TlsSession> tls;
  // A TLS connection accepted only to be refused (maxclients, protected mode): this error
  // is sent through the session when the handshake completes, then the connection closes.
  std::string_view refuse_after_handshake;

  bool has(ClientFlag f) const { return (flags_ & f) != 0; }
  void set(ClientFlag f) { flags_ |= f; }
  void clear(ClientFlag f) { flags_ &= ~f; }
  uint32_t flags() const { return flags_; }

  ReplyBuilder& reply() { return reply_; }
  std::string& output() { return output_; }
  const std::string& output() const { return output_; }
  int resp() const { return resp_; }
  void set_resp(int resp) {
    resp_ = resp;
    reply_.set_resp3(resp == 3);
  }

  int db_index() const { return db_index_; }
  void set_db_index(int db) { db_index_ = db; }

  bool authenticated() const { return authenticated_; }
  void set_authenticated(bool a) {
    authenticated_ = a;
    parser_.set_authenticated(a);
  }
  // The ACL user (src/security/acl.h); nullptr for internal clients (scripts' own client,
  // the AOF loader), which run anything, as Redis's user-less clients do.
  const std::string& user() const;
  AclUser* acl_user() const { return acl_user_; }
  void set_acl_user(AclUser* user) { acl_user_ = user; }

  std::string name;
  std::string lib_name;
  std::string lib_ver;
  std::string addr;   // "ip:port" or "path:0" for unix sockets
  std::string laddr;  // local address
  // Connected over loopback or a unix socket: what the enable-* "local" settings allow.
  bool local = false;
  int64_t created_ms = 0;
  int64_t last_interaction_ms = 0;
  std::string last_command = "NULL";
  uint64_t commands_processed = 0;
  uint64_t net_input_bytes = 0;
  uint64_t net_output_bytes = 0;

  // The command a blocked client is waiting to run again once a key is ready.
  struct BlockedCommand {
    std::vector<std::string> argv;
    const CommandSpec* spec = nullptr;
    int64_t deadline_ms = 0;        // monotonic; 0 = none
    bool skip_reply = false;        // it ran under CLIENT REPLY SKIP: its eventual reply is dropped
    bool rerun_on_timeout = false;  // see BlockOptions (blocking_service.h)
  };
  BlockedCommand blocked;

  // MULTI state.
  std::vector<QueuedCommand> multi_queue;
  // Queues a command for EXEC, keeping count of its bytes (client-query-buffer-limit).
  void QueueForExec(QueuedCommand command) {
    if (multi_queue.empty()) multi_queue_bytes_ = multi_queue_argv_bytes_ = 0;  // cleared
    for (const std::string& arg : command.argv) multi_queue_bytes_ += arg.size();
    multi_queue_argv_bytes_ += command.argv.capacity() * sizeof(std::string);
    multi_queue.push_back(std::move(command));
  }
  // The argument bytes MULTI holds, as Redis's mstate.argv_len_sums.
  size_t multi_queue_bytes() const { return multi_queue.empty() ? 0 : multi_queue_bytes_; }
  // Everything the MULTI queue holds (client eviction): the arguments, their string objects
  // and the queue's own slots.
  size_t multi_queue_memory() const {
    size_t slots = multi_queue.capacity() * sizeof(QueuedCommand);
    return multi_queue.empty() ? slots : slots + multi_queue_bytes_ + multi_queue_argv_bytes_;
  }
  // WATCHed keys. A key already past its TTL when watched doesn't fail EXEC by expiring.
  struct WatchedKey {
    int db;
    std::string key;
    bool expired_at_watch;
  };
  std::vector<WatchedKey> watched_keys;
  size_t watched_key_bytes = 0;  // the names' bytes, kept by WatchedKeys (watched_keys.h)

  // Read side: bytes [start, end) of `data` are received but not yet consumed.
  struct ReadBuffer {
    std::unique_ptr<char[]> data;
    size_t start = 0;
    size_t end = 0;
    size_t capacity = 0;
    std::string_view unconsumed() const { return {data.get() + start, end - start}; }
    size_t size() const { return end - start; }
    // Makes room for `n` more bytes after `end`, moving unconsumed bytes to the front first
    // and growing geometrically, so a large bulk costs linear copying overall; never beyond
    // `known_total` unconsumed bytes when that is given (the size of the request arriving).
    void EnsureWritable(size_t n, size_t known_total = 0);
    // Drops a very large buffer once it is empty (a huge command is done with).
    void ShrinkIfIdle();
    // The clients cron's resize, Redis's model: a buffer idle for more than 2 s gives back all
    // its free room; one much bigger than its recent peak shrinks to that peak (never below
    // what is buffered or `pending_bulk`, the bytes the current argument still needs).
    void CronResize(bool idle, size_t pending_bulk);
    // The most bytes the buffer was asked to hold since the last cron (what a read expected).
    size_t peak = 0;

   private:
    void Reallocate(size_t new_capacity);
  };
  ReadBuffer read_buffer;
  RespParser& parser() { return parser_; }
  const RespParser& parser() const { return parser_; }

  // Write side: bytes of output_ already written.
  size_t output_written = 0;
  // Redis's reply buffer (CLIENT LIST rbs / rbp): the output capacity kept once everything
  // is written, resized by the client cron between 1 KB and 16 KB after the most the client
  // had queued (the peak) since the peak was last reset. Memory past it is released after
  // each full write, as Redis frees its reply blocks: what an invalidation or pub/sub burst
  // grew must not stay counted against maxmemory.
  static constexpr size_t kReplyBufferMin = 1024;
  static constexpr size_t kReplyBufferMax = 16 * 1024;
  size_t reply_buffer_size = kReplyBufferMax;
  size_t reply_buffer_peak = 0;
  int64_t reply_buffer_peak_reset_ms = 0;
  void NoteReplyPeak(size_t queued) {
    reply_buffer_peak = std::max(reply_buffer_peak, std::min(queued, reply_buffer_size));
  }
  // The cron's step: shrink to the peak when it used under half, double (up to 16 KB) when it
  // filled the buffer; then the peak restarts every `peak_reset_ms` (negative: never).
  void CronResizeReplyBuffer(int64_t now_ms, int64_t peak_reset_ms);
  // Gives an empty output buffer exactly the reply buffer's capacity, as Redis allocates its
  // reply buffer with the client and keeps it: memory a client holds doesn't move with the
  // first reply that needs room (used_memory, which maxmemory compares, stays put), and a
  // burst's growth past it goes back.
  void KeepReplyBuffer();
  // While a command of this client runs (`collect_pushes`): byte ranges of output_ that are
  // (un)subscribe confirmations, which CLIENT REPLY OFF/SKIP keeps as Redis's CLIENT_PUSHING
  // does; and messages pushed to this client meanwhile (it published to itself), which follow
  // the command's reply, as in Redis 7.2, instead of landing inside it.
  bool collect_pushes = false;
  std::vector<std::pair<size_t, size_t>> pushes_in_command;
  std::string deferred_pushes;
  void NotePush(size_t begin) {
    if (collect_pushes && output_.size() > begin)
      pushes_in_command.emplace_back(begin, output_.size());
  }
  bool write_pending = false;  // waiting for the socket to drain (its buffer was full)
  bool in_pending_writes = false;
  // client-output-buffer-limit: when (unix seconds) the soft limit was first exceeded, or 0.
  int64_t obuf_soft_limit_since_s = 0;
  bool closed = false;
  // Replication (src/replication/master.cc): a replica waiting for its snapshot holds its
  // output (the stream accumulates, nothing is written), and a disk sync sends the dump file
  // before it (bulk_pending).
  bool output_held = false;
  bool bulk_pending = false;
  // The stream offset after this client's last command (what WAIT waits for).
  int64_t woff = 0;
  // Client eviction (src/server/client_eviction.h): the memory last measured, and the bucket
  // (-1: none, the client is not tracked) and slot in it where the client is filed.
  size_t tracked_memory = 0;
  int memory_bucket = -1;
  size_t memory_bucket_pos = 0;

 private:
  ssize_t ReadTls(void* buf, size_t n);
  ssize_t WriteTls(const void* buf, size_t n);

  Server* server_;
  uint64_t id_;
  int fd_;
  uint32_t flags_ = 0;
  std::string output_;
  ReplyBuilder reply_{&output_};
  RespParser parser_;
  size_t multi_queue_bytes_ = 0;
  size_t multi_queue_argv_bytes_ = 0;
  int resp_ = 2;
  int db_index_ = 0;
  bool authenticated_ = true;
  AclUser* acl_user_ = nullptr;
};

}  // namespace vireo
