// What command handlers (and the server's own parts) may do with clients blocked on keys:
// block the running client, mark keys ready, end a wait. Server implements it privately
// (src/server/blocking_clients.cc) and hands it out through Server::blocking() and
// CommandContext::blocking(), so a handler that blocks or wakes waiters needs nothing else of
// the server.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "db/blocking.h"
#include "db/value.h"

namespace vireo {

class Client;
class CommandContext;

// BlockingService::BlockClient options.
struct BlockOptions {
  std::vector<std::string> argv;  // empty: re-run the command as received
  std::shared_ptr<const WaitCondition> condition;
  // On timeout the command runs again as its non-blocking form (WAIT replies with the count
  // at that moment) instead of replying with a null.
  bool rerun_on_timeout = false;
};

enum class UnblockReason { kTimeout, kError, kDisconnect, kRoleChange };

class BlockingService {
 public:
  // Blocks the client running `ctx` on `keys` until one of them holds a value of `type`
  // (then the command runs again, in full, and replies as its non-blocking form would) or
  // `timeout_ms` passes (0 = forever; then it gets the null-array reply). Handlers call this
  // instead of replying, and only when ctx.may_block().
  // `options` lets a command re-run with other arguments (XREAD's `$` resolved at block time)
  // and decide itself when it can be served (see WaitCondition).
  virtual void BlockClient(CommandContext& ctx, std::vector<std::string> keys,
                           int64_t timeout_ms, ValueType type, BlockOptions options) = 0;
  virtual void SignalKeyAsReady(int db, std::string_view key) = 0;
  // After SWAPDB: keys now present in either database may serve their waiters (and waiters
  // that want to hear about a vanished key hear about it).
  virtual void SignalSwappedDbs(int a, int b) = 0;
  // After FLUSHDB/FLUSHALL emptied `db`: waiters that want to hear about vanished keys do.
  virtual void SignalFlushedDb(int db) = 0;
  // Ends a client's wait (CLIENT UNBLOCK, timeouts, disconnects). False if it wasn't blocked.
  // `error`: with kError, the error reply instead of CLIENT UNBLOCK's ("" for that one;
  // cluster redirections pass theirs).
  virtual bool UnblockClient(Client& client, UnblockReason reason, std::string_view error) = 0;
  // The bookkeeping itself, read-only (INFO's counts).
  virtual const BlockingEngine& engine() const = 0;

 protected:
  ~BlockingService() = default;
};

}  // namespace vireo
