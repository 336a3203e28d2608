// The shutdown sequence (src/server/shutdown.h), in Redis 7.2's steps and log lines: tools and
// operators (and Redis's own tests) watch the log for them.
#include "server/shutdown.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>

#include "persistence/aof.h"
#include "scripting/scripting.h"
#include "server/command_context.h"
#include "server/server.h"
#include "util/clock.h"

namespace vireo {
namespace {

constexpr std::string_view kShutdownFailedReply = "ERR Errors trying to SHUTDOWN. Check logs.";

}  // namespace

void Server::NoteShutdownSignal(int sig) {
  // Only lock-free stores and write(2): this runs in a signal handler. The cron acts on it.
  shutdown_signal_.store(sig, std::memory_order_relaxed);
  uint64_t one = 1;
  [[maybe_unused]] ssize_t r = write(wake_fd_, &one, sizeof(one));
}

bool Server::loading_at_startup() const { return rdb_state_.loading || aof_->loading(); }

int64_t Server::shutdown_in_ms() const {
  return shutdown_deadline_ms_ == 0 ? -1 : std::max<int64_t>(0, shutdown_deadline_ms_ - NowMs());
}

void Server::ShutdownFromCommand(CommandContext& ctx, uint32_t flags) {
  Client& client = ctx.client;
  // The client waits with the others when a shutdown is already waiting for replicas (Redis
  // blocks it first, then finds the shutdown initiated).
  if (shutdown_deadline_ms_ != 0) {
    ctx.blocking().BlockClient(ctx, {}, 0, ValueType::kString, {});
    shutdown_waiters_.push_back(client.id());
    return;
  }
  switch (PrepareShutdown(flags)) {
    case ShutdownOutcome::kExit: {
      // Inside a timed-out script's loop turn the server exits only once the script has
      // stopped: the connection stays open until the server closes it with its listeners, so
      // a client that reconnects on seeing it close is refused (Redis's exit does the same).
      ScriptRun* busy = scripting().running();
      if (busy == nullptr || !busy->timed_out) CloseAfterReply(client);
      return;
    }
    case ShutdownOutcome::kWaiting:
      ctx.blocking().BlockClient(ctx, {}, 0, ValueType::kString, {});
      shutdown_waiters_.push_back(client.id());
      return;
    case ShutdownOutcome::kFailed:
      ctx.reply.Error(kShutdownFailedReply);
      return;
  }
}

bool Server::AbortShutdown() {
  if (shutdown_deadline_ms_ != 0) {
    CancelShutdown();
  } else if (shutdown_signal_.load(std::memory_order_relaxed) != 0) {
    // A signal arrived but the cron hasn't acted on it yet: forgetting it is enough.
    shutdown_signal_.store(0, std::memory_order_relaxed);
  } else {
    return false;
  }
  spdlog::info("Shutdown manually aborted.");
  return true;
}

Server::ShutdownOutcome Server::PrepareShutdown(uint32_t flags) {
  if (shutdown_deadline_ms_ != 0) return ShutdownOutcome::kWaiting;
  // A half-loaded dataset is never saved over the file it came from.
  if (loading_at_startup() || loading_.mode != LoadingMode::kNone) {
    flags = (flags & ~kShutdownSave) | kShutdownNosave;
  }
  shutdown_flags_ = flags;
  spdlog::info("User requested shutdown...");
  // Replicas that haven't acknowledged the whole stream get up to shutdown-timeout seconds to
  // catch up, so an acknowledged write isn't lost with the master. Writes pause meanwhile so
  // the stream stops growing.
  if (!(flags & kShutdownNow) && config_.values().shutdown_timeout != 0 &&
      !replication_->ReplicasCaughtUp()) {
    shutdown_deadline_ms_ = NowMs() + config_.values().shutdown_timeout * 1000;
    if (!Paused(kPauseReplica)) replication_->RequestAcks();
    client_pause_.Pause(PausePurpose::kShutdown, INT64_MAX, kPauseWrite);
    spdlog::info("Waiting for replicas before shutting down.");
    return ShutdownOutcome::kWaiting;
  }
  return FinishShutdown() ? ShutdownOutcome::kExit : ShutdownOutcome::kFailed;
}

bool Server::FinishShutdown() {
  const bool save = shutdown_flags_ & kShutdownSave;
  const bool nosave = shutdown_flags_ & kShutdownNosave;
  const bool force = shutdown_flags_ & kShutdownForce;
  replication_->LogReplicasAtShutdown();
  // A snapshot child could overwrite the final save; its temp file goes with it.
  if (RdbChildActive(*this)) {
    spdlog::warn("There is a child saving an .rdb. Killing it!");
    RdbKillChild(*this);
  }
  // The final steps; each logs its own failure.
  bool ok = aof_->PrepareForShutdown(force);
  if (ok) ok = RdbSaveOnShutdown(*this, save, nosave, force).empty();
  if (!ok) {
    spdlog::warn("Errors trying to shut down the server. Check the logs for more information.");
    CancelShutdown();
    return false;
  }
  // Listeners close now, so a client that saw its SHUTDOWN connection close can't connect
  // any more (a restart binds the port at once).
  CloseListeners();
  spdlog::warn("vireo is now ready to exit, bye bye...");
  shutdown_requested_ = true;
  return true;
}

void Server::CancelShutdown() {
  shutdown_signal_.store(0, std::memory_order_relaxed);
  shutdown_flags_ = 0;
  shutdown_deadline_ms_ = 0;
  std::vector<uint64_t> waiters;
  waiters.swap(shutdown_waiters_);
  for (uint64_t id : waiters) {
    Client* client = FindClient(id);
    if (client != nullptr && !client->closed) {
      UnblockClient(*client, UnblockReason::kError, kShutdownFailedReply);
    }
  }
  client_pause_.Unpause(PausePurpose::kShutdown);
}

void Server::ShutdownCron() {
  if (shutdown_deadline_ms_ != 0) {
    if (NowMs() >= shutdown_deadline_ms_ || replication_->ReplicasCaughtUp()) FinishShutdown();
    return;
  }
  const int sig = shutdown_signal_.load(std::memory_order_relaxed);
  if (sig == 0) return;
  // shutdown-on-sigint / shutdown-on-sigterm: SHUTDOWN's flags for the signal.
  const uint32_t flags =
      sig == SIGINT ? config_.values().shutdown_on_sigint : config_.values().shutdown_on_sigterm;
  // A failure cancelled the shutdown (and forgot the signal): the next signal tries again.
  PrepareShutdown(flags);
}

}  // namespace vireo
