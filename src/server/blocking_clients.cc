// Clients blocked on keys (BLPOP, BLMOVE, BLMPOP, later BZPOPMIN and XREAD BLOCK): blocking,
// the ready-keys pass, timeouts, CLIENT UNBLOCK and disconnects.
//
// The rules, as in Redis 7.2:
//  * Waiters of a key are served first come, first served; one element goes to one waiter.
//  * A write only marks the key ready; the pass after the command serves the waiters, so a
//    key pushed and deleted inside one MULTI wakes nobody.
//  * A served client runs its command again, in full, so its reply is exactly what the
//    non-blocking form says (and it pops from the first non-empty key in its own order).
//  * A key that exists with another type (or not at all) leaves its waiters blocked.
//  * Timeouts fire from the loop, never inside a command: a client gets the element or the
//    null, never both.
#include <spdlog/spdlog.h>

#include <algorithm>

#include "server/acl_server.h"
#include "server/command_context.h"
#include "server/server.h"
#include "server/server_loop.h"
#include "util/clock.h"

namespace vireo {
namespace {

int64_t MonotonicMs() { return MonotonicUs() / 1000; }

// Discards what was appended to the client's output since `mark` (never what is already on
// the wire).
void DropRepliesSince(Client& client, size_t mark) {
  if (client.output().size() > mark) client.output().resize(std::max(mark, client.output_written));
}

}  // namespace

void Server::BlockClient(CommandContext& ctx, std::vector<std::string> keys, int64_t timeout_ms,
                         ValueType type, BlockOptions options) {
  Client& client = ctx.client;
  // A client blocking again while being served keeps its original deadline.
  int64_t deadline = 0;
  if (reblock_deadline_ != 0) {
    deadline = reblock_deadline_;
  } else if (timeout_ms > 0) {
    // The clock reads whole milliseconds; one more makes sure a client never gets its null
    // before the full timeout has passed (Redis, too, times out only once now > deadline).
    deadline = MonotonicMs() + timeout_ms + 1;
  }
  client.blocked.deadline_ms = deadline;
  if (options.argv.empty()) {
    client.blocked.argv.assign(ctx.argv.begin(), ctx.argv.end());
  } else {
    client.blocked.argv = std::move(options.argv);
  }
  client.blocked.spec = ctx.spec;
  client.blocked.skip_reply = client.has(kClientReplySkip);
  client.blocked.rerun_on_timeout = options.rerun_on_timeout;
  client.set(kClientBlocked);
  blocking_.Block(client.id(), client.db_index(), std::move(keys), deadline, type,
                  std::move(options.condition));
  if (deadline > 0 && (block_timer_deadline_ == 0 || deadline < block_timer_deadline_)) {
    ArmBlockTimer();
  }
}

bool Server::UnblockClient(Client& client, UnblockReason reason, std::string_view error) {
  if (!client.has(kClientBlocked)) return false;
  if (client.has(kClientPostponed)) {
    // Only a disconnect ends a postponed command's wait early (CLIENT UNBLOCK can't).
    if (reason != UnblockReason::kDisconnect) return false;
    client.clear(kClientPostponed);
    client.clear(kClientBlocked);
    return true;
  }
  if (reason == UnblockReason::kTimeout && client.blocked.rerun_on_timeout) {
    // WAIT: the reply on timeout is what the command says now, without blocking.
    RunBlockedCommandAgain(client, /*may_block=*/false);
    return true;
  }
  blocking_.Unblock(client.id());
  client.clear(kClientBlocked);
  const CommandSpec* spec = client.blocked.spec;
  bool skip_reply = client.blocked.skip_reply || client.has(kClientReplyOff);
  std::vector<std::string> argv = std::move(client.blocked.argv);
  client.blocked.argv.clear();
  client.blocked.spec = nullptr;
  if (reason == UnblockReason::kDisconnect) return true;
  // The call that blocked was not counted in the statistics; its end is.
  ++stats_.total_commands_processed;
  ++client.commands_processed;
  if (spec != nullptr) {
    ++command_stats(*spec).calls;
    if (latency_.tracking()) latency_.RecordCommand(spec->id, 0);
    if (!spec->has(kCmdSkipSlowlog)) {
      std::vector<std::string_view> views(argv.begin(), argv.end());
      AddToSlowlog(client, views, 0);
    }
  }
  size_t mark = client.output().size();
  if (reason == UnblockReason::kTimeout) {
    client.reply().NullArray();
  } else if (reason == UnblockReason::kRoleChange) {
    client.reply().Error(
        "UNBLOCKED force unblock from blocking operation, instance state changed (master -> "
        "replica?)");
    if (spec != nullptr) ++command_stats(*spec).failed_calls;
  } else {
    client.reply().Error(error.empty() ? "UNBLOCKED client unblocked via CLIENT UNBLOCK" : error);
    if (spec != nullptr) ++command_stats(*spec).failed_calls;
  }
  if (skip_reply) DropRepliesSince(client, mark);
  QueueWrite(client);
  // Commands it pipelined behind the blocking one run now.
  pending_input_.push_back(client.id());
  return true;
}

void Server::ServeReadyKeys() {
  // While a timed-out script runs, other clients' commands are answered, but the keys it made
  // ready wait for its end: a waiter gets what the script leaves, never a state half-way.
  if (busy_script_ != 0) return;
  serving_ready_keys_ = true;
  while (blocking_.HasReadyKeys()) {
    for (const BlockedKey& ready : blocking_.TakeReadyKeys()) {
      Database& db = *dbs_[ready.db];
      // Oldest first; each waiter is served only while the key still holds a value of the type
      // it waits for, so one element never reaches two clients.
      for (uint64_t id : blocking_.WaitersOf(ready.db, ready.key)) {
        const BlockingEngine::Waiter* waiter = blocking_.Find(id);
        if (waiter == nullptr) continue;  // served through another key meanwhile
        command_clock_.Update();
        // As Redis's LOOKUP_NOEXPIRE: an expired key serves nobody, but its deletion (and the
        // DEL it propagates) waits for a real access.
        DbEntry* entry = db.Peek(ready.key);
        if (entry != nullptr && db.IsExpired(entry)) entry = nullptr;
        if (!BlockingEngine::CanServe(*waiter, ready.key, entry ? &entry->value : nullptr)) {
          continue;
        }
        Client* client = FindClient(id);
        if (client == nullptr || client->closed) {
          blocking_.Unblock(id);
          continue;
        }
        RunBlockedCommandAgain(*client);
      }
    }
  }
  serving_ready_keys_ = false;
}

void Server::RunBlockedCommandAgain(Client& client, bool may_block) {
  // Leave every key's list first, then run the command again as if it just arrived.
  Client::BlockedCommand cmd = std::move(client.blocked);
  client.blocked = {};
  blocking_.Unblock(client.id());
  client.clear(kClientBlocked);
  std::vector<std::string_view> argv(cmd.argv.begin(), cmd.argv.end());
  reblock_deadline_ = cmd.deadline_ms;
  size_t mark = client.output().size();
  const int64_t offset_before = replication_->master_repl_offset();
  reprocessing_ = true;
  // Not blocking is how a command runs inside EXEC: it replies with what it has. Permissions
  // may have changed while it waited: they are checked again, as for a new command.
  if (std::string denied; !AclService(*this).CheckCommand(
          client, *cmd.spec, argv, AclContext::kToplevel, &denied, client.acl_user())) {
    ++command_stats(*cmd.spec).rejected_calls;
    client.reply().Error(denied);
  } else {
    Call(client, *cmd.spec, argv, /*in_exec=*/!may_block);
  }
  reprocessing_ = false;
  reblock_deadline_ = 0;
  // WAIT waits for the stream up to this client's last write that reached it.
  if (replication_->master_repl_offset() != offset_before) {
    client.woff = replication_->master_repl_offset();
  }
  // CLIENT REPLY OFF, or SKIP given just before the blocking command.
  if (cmd.skip_reply || client.has(kClientReplyOff)) DropRepliesSince(client, mark);
  QueueWrite(client);
  if (!client.has(kClientBlocked)) pending_input_.push_back(client.id());
}

void Server::PostponeClient(Client& client, const CommandSpec& spec,
                            std::span<const std::string_view> argv) {
  client.blocked.argv.assign(argv.begin(), argv.end());
  client.blocked.spec = &spec;
  client.blocked.deadline_ms = 0;
  client.blocked.skip_reply = false;
  client.set(kClientBlocked);
  client.set(kClientPostponed);
  postponed_.push_back(client.id());
  PauseChanged();
}

void Server::PauseChanged() {
  client_pause_.Actions(MonotonicMs());  // ends the pauses whose time is up
  const int64_t next = client_pause_.NextEnd();
  if (next == 0) {
    loop_->pause_timer.cancel();
    if (!postponed_.empty()) ResumePostponedClients();
    return;
  }
  // A pause may last "forever" (FAILOVER): wait at most a day at a time (the steady clock
  // overflows past a few centuries).
  constexpr int64_t kMaxDelayMs = 24 * 3600 * 1000;
  loop_->pause_timer.expires_after(
      std::chrono::milliseconds(std::clamp<int64_t>(next - MonotonicMs(), 0, kMaxDelayMs)));
  NoteTimer(loop_->pause_timer);
  loop_->pause_timer.async_wait([this](const asio::error_code& ec) {
    if (!ec) PauseChanged();
  });
}

void Server::ResumePostponedClients() {
  // In arrival order, each through the whole dispatcher again (a new pause may hold it again).
  std::vector<uint64_t> ids;
  ids.swap(postponed_);
  for (uint64_t id : ids) {
    Client* client = FindClient(id);
    if (client == nullptr || client->closed || !client->has(kClientPostponed)) continue;
    Client::BlockedCommand cmd = std::move(client->blocked);
    client->blocked = {};
    client->clear(kClientBlocked);
    client->clear(kClientPostponed);
    std::vector<std::string_view> argv(cmd.argv.begin(), cmd.argv.end());
    ExecuteCommand(*client, argv);
    // Our master's command ran: its bytes (kept since it was postponed) now count as applied.
    if (client->has(kClientMaster) && !client->closed && !client->has(kClientPostponed)) {
      replication_->OnMasterBytes(id, client->db_index(), {}, !client->has(kClientMulti));
    }
    QueueWrite(*client);
    if (!client->has(kClientBlocked)) pending_input_.push_back(id);
  }
}

void Server::SignalSwappedDbs(int a, int b) {
  // Cached keys carry no database: after a swap any of them may read differently.
  tracking_.InvalidateAll(current_client_, executing_depth_ > 0);
  SignalReplacedDb(a);
  if (b != a) SignalReplacedDb(b);
}

void Server::SignalReplacedDbs() {
  tracking_.InvalidateAll(current_client_, executing_depth_ > 0);
  for (int db = 0; db < db_count(); ++db) SignalReplacedDb(db);
}

void Server::SignalReplacedDb(int db) {
  for (const std::string& key : blocking_.KeysWithWaiters(db)) {
    // Stored is enough (Redis looks in the table): expiring here would propagate a DEL from
    // inside SWAPDB.
    if (dbs_[db]->Peek(key) != nullptr) {
      blocking_.SignalKeyAsReady(db, key);
    } else {
      blocking_.SignalKeyChanged(db, key);
    }
  }
}

void Server::SignalFlushedDb(int db) {
  tracking_.InvalidateAll(current_client_, executing_depth_ > 0);
  for (const std::string& key : blocking_.KeysWithWaiters(db)) blocking_.SignalKeyChanged(db, key);
}

void Server::ArmBlockTimer() {
  int64_t next = blocking_.NextDeadline();
  block_timer_deadline_ = next;
  if (next == 0) {
    loop_->block_timer.cancel();
    return;
  }
  // A timeout may be centuries away; the steady clock counts nanoseconds in 64 bits, so wait
  // at most a day and re-arm (Expired() finds nobody when it fires early).
  constexpr int64_t kMaxDelayMs = 24 * 3600 * 1000;
  int64_t delay_ms = std::clamp<int64_t>(next - MonotonicMs(), 0, kMaxDelayMs);
  loop_->block_timer.expires_after(std::chrono::milliseconds(delay_ms));
  NoteTimer(loop_->block_timer);
  loop_->block_timer.async_wait([this](const asio::error_code& ec) {
    if (ec) return;  // re-armed or cancelled
    OnBlockTimer();
  });
}

void Server::OnBlockTimer() {
  block_timer_deadline_ = 0;
  for (uint64_t id : blocking_.Expired(MonotonicMs())) {
    Client* client = FindClient(id);
    if (client == nullptr) {
      blocking_.Unblock(id);
      continue;
    }
    UnblockClient(*client, UnblockReason::kTimeout, {});
  }
  ArmBlockTimer();
}

}  // namespace vireo
