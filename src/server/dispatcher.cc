// The path from a parsed request to a handler: lookup, arity, AUTH, MULTI queueing, then the
// call with its statistics, slowlog and MONITOR feed.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>

#include "persistence/aof.h"
#include "persistence/snapshot.h"
#include "replication/replica_link.h"
#include "scripting/scripting.h"
#include "server/acl_server.h"
#include "server/command_context.h"
#include "server/info.h"
#include "server/server.h"
#include "util/clock.h"
#include "util/strings.h"

namespace vireo {
namespace {

// Redis formats these with printf's %s, so text stops at a NUL byte.
std::string_view UpToNul(std::string_view s) { return s.substr(0, s.find('\0')); }

// Redis quotes the arguments in "unknown command" errors until 128 bytes are used.
std::string QuoteArgsForError(std::span<const std::string_view> argv) {
  std::string out;
  for (size_t i = 1; i < argv.size() && out.size() < 128; ++i) {
    std::string_view a = UpToNul(argv[i]).substr(0, 128 - out.size());
    out += fmt::format("'{}' ", a);
  }
  return out;
}

// CLIENT REPLY OFF / SKIP: the command runs, but what it wrote for its client is dropped. SKIP
// covers exactly the command after CLIENT REPLY SKIP, so the flags advance once per command.
class ReplySuppressor {
 public:
  explicit ReplySuppressor(Client& client) : client_(client), mark_(client.output().size()) {
    client_.collect_pushes = true;
  }
  // What the command wrote for its client so far (before any suppression).
  std::string_view Written() const {
    const std::string& out = client_.output();
    const size_t from = std::max(mark_, client_.output_written);
    return from < out.size() ? std::string_view(out).substr(from) : std::string_view();
  }

  ~ReplySuppressor() {
    client_.collect_pushes = false;
    Suppress();
    client_.pushes_in_command.clear();
    // Messages this client published to itself follow the reply (and pass REPLY OFF).
    if (!client_.deferred_pushes.empty()) {
      client_.output() += client_.deferred_pushes;
      client_.deferred_pushes.clear();
    }
  }

 private:
  void Suppress() {
    // Our master gets no replies (REPLCONF GETACK is answered by the link itself).
    constexpr uint32_t kAny =
        kClientReplyOff | kClientReplySkip | kClientReplySkipNext | kClientMaster;
    if ((client_.flags() & kAny) == 0) return;
    if (client_.has(kClientReplyOff) || client_.has(kClientReplySkip)) {
      DropRepliesKeepPushes(std::max(mark_, client_.output_written));
    } else if (client_.has(kClientMaster)) {
      client_.output().resize(std::max(mark_, client_.output_written));
    }
    client_.clear(kClientReplySkip);
    if (client_.has(kClientReplySkipNext)) {
      client_.clear(kClientReplySkipNext);
      client_.set(kClientReplySkip);
    }
  }

  // Truncates the output at `cut`, then puts back the pushes the command wrote after it.
  void DropRepliesKeepPushes(size_t cut) {
    std::string& out = client_.output();
    std::string kept;
    for (const auto& [begin, end] : client_.pushes_in_command) {
      if (begin >= cut && end <= out.size()) kept.append(out, begin, end - begin);
    }
    out.resize(cut);
    out += kept;
  }

  Client& client_;
  size_t mark_;
};

bool QueuedWithFlag(const Client& client, CommandFlag flag) {
  for (const auto& q : client.multi_queue) {
    if (q.spec->has(flag)) return true;
  }
  return false;
}

bool QueuedAllWithFlag(const Client& client, CommandFlag flag) {
  return std::all_of(client.multi_queue.begin(), client.multi_queue.end(),
                     [flag](const QueuedCommand& q) { return q.spec->has(flag); });
}

// The command has `flag`, or it runs the queued transaction (EXEC) and a queued command has it.
bool AnyRunHas(const Client& client, const CommandSpec& spec, CommandFlag flag) {
  return spec.has(flag) || (spec.has(kCmdRunsQueued) && QueuedWithFlag(client, flag));
}

// The command has `flag`, and if it runs the queued transaction, so does every queued command.
bool AllRunHave(const Client& client, const CommandSpec& spec, CommandFlag flag) {
  return spec.has(flag) && (!spec.has(kCmdRunsQueued) || QueuedAllWithFlag(client, flag));
}

// The flags the script a script command runs declares (Scripting::DeclaredFlags), or nullopt.
std::optional<uint32_t> DeclaredScriptFlags(Scripting& scripting, const CommandSpec& spec,
                                            std::span<const std::string_view> args) {
  const Scripting::ScriptRef ref = spec.has(kCmdRunsFunction)  ? Scripting::ScriptRef::kFunction
                                   : spec.has(kCmdScriptBySha) ? Scripting::ScriptRef::kSha
                                                               : Scripting::ScriptRef::kBody;
  return scripting.DeclaredFlags(ref, args);
}

// A script command runs on a stale replica only when its script says allow-stale: Redis takes a
// known script's own flags over the command's, and a script without a shebang declares none.
// An unknown script keeps the command's flags (its error then says why it can't run).
bool ScriptDeniedWhenStale(Scripting& scripting, const CommandSpec& spec,
                           std::span<const std::string_view> args) {
  if (!spec.has(kCmdRunsScript) || args.size() < 2) return false;
  if (std::optional<uint32_t> flags = DeclaredScriptFlags(scripting, spec, args)) {
    return (*flags & kScriptAllowStale) == 0;
  }
  if (spec.has(kCmdRunsFunction)) return false;
  if (spec.has(kCmdScriptBySha)) return scripting.FindScript(args[1]) != nullptr;
  return !args[1].starts_with("#!");
}

size_t DecimalDigits(size_t n) {
  size_t digits = 1;
  while (n >= 10) {
    n /= 10;
    ++digits;
  }
  return digits;
}

// The command's size as a RESP multibulk request (what COMMANDLOG large-request measures):
// "*<argc>\r\n" and "$<len>\r\n<arg>\r\n" per argument. An inline command or one a script
// ran is measured as if it had been sent that way.
size_t RequestBytes(std::span<const std::string_view> argv) {
  size_t bytes = 3 + DecimalDigits(argv.size());
  for (std::string_view arg : argv) bytes += 5 + DecimalDigits(arg.size()) + arg.size();
  return bytes;
}

}  // namespace

void Server::ExecuteCommand(Client& client, std::span<const std::string_view> argv) {
  if (argv.empty()) return;
  // A replica's link carries the stream to it; a reply written there would corrupt it.
  const bool replica_link = client.has(kClientReplica) && !client.has(kClientMonitor);
  const size_t reply_mark = client.output().size();
  {
    ReplySuppressor suppressor(client);
    DispatchCommand(client, argv);
    if (client.has(kClientMaster)) ReportErrorToMaster(client, suppressor.Written());
  }
  if (replica_link && client.output().size() > reply_mark && !client.closed) {
    // Dropped, logged as Redis does, and the replica disconnected.
    std::string& out = client.output();
    if (out[reply_mark] == '-') {
      std::string_view error(out.data() + reply_mark + 1, out.size() - reply_mark - 1);
      error = error.substr(0, error.find("\r\n"));
      spdlog::warn(
          "== CRITICAL == This master is sending an error to its replica: '{}' after "
          "processing the command '{}'",
          error, client.last_command);
    }
    out.resize(std::max(reply_mark, client.output_written));
    spdlog::warn("Replica generated a reply to command '{}', disconnecting it: {}",
                 client.last_command, ServerReports(*this).ClientLine(client));
    CloseClient(client);
    return;
  }
  // Whether the command (found or not, whatever became of it) is flagged `flag`: looked up
  // again only for the rare clients these checks concern.
  auto command_has = [&](CommandFlag flag) {
    const CommandSpec* spec = LookupCommand(argv[0]);
    return spec != nullptr && spec->has(flag);
  };
  // ASKING covers the next command (or the next transaction), whatever became of it.
  if (client.has(kClientAsking) && !client.has(kClientMulti) && !command_has(kCmdKeepsAsking)) {
    client.clear(kClientAsking);
  }
  // Client-side caching: invalidations of keys the command itself changed follow its reply
  // (and CLIENT REPLY OFF doesn't drop them). CLIENT CACHING covers one command or one
  // transaction.
  tracking_.FlushPending();
  if (client.has(kClientTracking) && !client.has(kClientMulti) && !command_has(kCmdKeepsCaching)) {
    tracking_.EndOfCommand(client);
  }
}

void Server::ReportErrorToMaster(const Client& client, std::string_view reply) {
  // Our master never sees our replies, so an error means the data sets may have diverged (an
  // unknown command, a write on a writable replica's changed key): Redis logs it loudly and
  // counts it, and so do we.
  if (!reply.starts_with('-')) return;
  std::string_view error = reply.substr(1, std::min<size_t>(reply.find("\r\n") - 1, 4096));
  const std::string& command = client.last_command == "NULL" ? "<unknown>" : client.last_command;
  spdlog::warn(
      "== CRITICAL == This replica is sending an error to its master: '{}' after processing "
      "the command '{}'",
      error, command);
  ++stats_.unexpected_error_replies;
}

void Server::DispatchCommand(Client& client, std::span<const std::string_view> argv) {
  ReplyBuilder& reply = client.reply();
  const CommandSpec* spec = LookupCommand(argv[0]);
  auto reject = [&](std::string_view message) {
    // A rejected EXEC aborts the transaction (even with none open), as in Redis.
    if (spec != nullptr && spec->has(kCmdRunsQueued)) {
      client.multi_queue.clear();
      client.clear(kClientMulti);
      client.clear(kClientDirtyExec);
      client.clear(kClientDirtyCas);
      UnwatchAll(client);
      std::string_view reason = message;
      if (reason.starts_with("ERR ")) reason.remove_prefix(4);
      reply.Error(fmt::format("EXECABORT Transaction discarded because of: {}", reason));
      // MONITOR saw the MULTI: the EXEC shows the transaction is over.
      if (!monitors_.empty()) FeedMonitors(client, argv);
      return;
    }
    if (client.has(kClientMulti)) client.set(kClientDirtyExec);
    reply.Error(message);
  };
  if (spec == nullptr) {
    client.last_command = "NULL";
    std::string name(UpToNul(argv[0]).substr(0, 128));
    reject(fmt::format("ERR unknown command '{}', with args beginning with: {}", name,
                       QuoteArgsForError(argv)));
    return;
  }
  if (!spec->subcommands.empty() && argv.size() >= 2) {
    const CommandSpec* sub = CommandTable::FindSubcommand(*spec, argv[1]);
    if (sub == nullptr) {
      client.last_command = "NULL";
      ++command_stats(*spec).rejected_calls;
      reject(fmt::format("ERR unknown subcommand '{}'. Try {} HELP.",
                         UpToNul(argv[1]).substr(0, 128), ToUpper(spec->name)));
      return;
    }
    spec = sub;
  }
  // CLIENT LIST's cmd= shows the command as received (EXEC, not what ran inside it).
  client.last_command = spec->name;
  if (!spec->ArityOk(argv.size())) {
    ++command_stats(*spec).rejected_calls;
    reject(fmt::format("ERR wrong number of arguments for '{}' command", spec->name));
    return;
  }
  // DEBUG and MODULE LOAD/LOADEX/UNLOAD are protected actions in Redis 7: refused unless
  // enabled at start-up (MODULE LIST and HELP are not protected).
  if (spec->has(kCmdProtected)) {
    const ServerConfig& c = config_.values();
    const bool debug = spec->has(kCmdDebugProtected);
    if (!ProtectedActionAllowed(debug ? c.enable_debug_command : c.enable_module_command,
                                client.local)) {
      ++command_stats(*spec).rejected_calls;
      reject(fmt::format(
          "ERR {} command not allowed. If the {} option is set to \"local\", you can run it "
          "from a local connection, otherwise you need to set this option in the configuration "
          "file, and then restart the server.",
          debug ? "DEBUG" : "MODULE", debug ? "enable-debug-command" : "enable-module-command"));
      return;
    }
  }
  if (!client.authenticated() && !spec->has(kCmdNoAuth)) {
    ++command_stats(*spec).rejected_calls;
    reject("NOAUTH Authentication required.");
    return;
  }
  if (std::string denied; !AclService(*this).CheckCommand(
          client, *spec, argv,
          client.has(kClientMulti) ? AclContext::kQueued : AclContext::kToplevel, &denied,
          client.acl_user())) {
    ++command_stats(*spec).rejected_calls;
    reject(denied);
    return;
  }
  // A replica's link is for REPLCONF: the keyspace is not its to read or write (as in Redis).
  if (client.has(kClientReplica) &&
      (spec->has(kCmdWrite) || spec->has(kCmdReadonly) || spec->has(kCmdMayReplicate))) {
    ++command_stats(*spec).rejected_calls;
    reject("ERR Replica can't interact with the keyspace");
    return;
  }
  // Cluster mode: keys of slots this node doesn't serve get -MOVED / -ASK / -CROSSSLOT /
  // -TRYAGAIN / -CLUSTERDOWN instead (src/cluster/redirect.h); commands without keys (EXEC
  // aside, which checks its queue) and our master's are never redirected. Off cluster mode
  // this is one null test.
  if (slot_routing_ != nullptr && !client.has(kClientMaster) &&
      (spec->HasKeys() || spec->has(kCmdRunsQueued))) {
    // A key whose TTL passed since the last command counts as missing (a migrating slot then
    // answers -ASK): the clock moves on before the check, as Redis's does after each sleep.
    command_clock_.Update();
    if (std::string err = ClusterRedirectError(client, *spec, argv); !err.empty()) {
      ++command_stats(*spec).rejected_calls;
      if (spec->has(kCmdRunsQueued)) {
        // The transaction is discarded and the client hears the redirection itself.
        client.multi_queue.clear();
        client.clear(kClientMulti);
        client.clear(kClientDirtyExec);
        client.clear(kClientDirtyCas);
        UnwatchAll(client);
        reply.Error(err);
      } else {
        reject(err);
      }
      return;
    }
  }
  if (client.has(kClientPubsub) && client.resp() == 2 && !spec->has(kCmdSubscribedMode)) {
    ++command_stats(*spec).rejected_calls;
    reject(
        fmt::format("ERR Can't execute '{}': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / "
                    "QUIT / RESET are allowed in this context",
                    spec->name));
    return;
  }
  // A dataset is loading (at start-up, DEBUG LOADAOF, a replica's full sync): only what Redis
  // lets through runs. Before the BUSY check, as Redis: a slow script inside an AOF being
  // loaded leaves other clients with -LOADING.
  if (loading_.mode != LoadingMode::kNone) {
    const bool denied = loading_.mode == LoadingMode::kSync
                            ? !AllRunHave(client, *spec, kCmdLoading)
                            : AnyRunHas(client, *spec, kCmdNoAsyncLoading);
    if (denied) {
      ++command_stats(*spec).rejected_calls;
      reject("LOADING Redis is loading the dataset in memory");
      return;
    }
  }
  // A script past busy-reply-threshold is still running: only SCRIPT/FUNCTION KILL, SHUTDOWN
  // NOSAVE and the like get through (src/scripting/).
  if (busy_script_ != 0 && !spec->has(kCmdAllowBusy)) {
    ++command_stats(*spec).rejected_calls;
    reject(busy_script_ == 1
               ? "BUSY Redis is busy running a script. You can only call SCRIPT KILL or "
                 "SHUTDOWN NOSAVE."
               : "BUSY Redis is busy running a script. You can only call FUNCTION KILL or "
                 "SHUTDOWN NOSAVE.");
    return;
  }
  // Our master's commands are applied whatever the local state (memory, disk errors,
  // read-only): the replica must stay a copy of its master.
  const bool from_master = client.has(kClientMaster);
  const bool is_replica = replication_->is_replica();
  // maxmemory: evict what the policy allows; if memory is still over the limit, deny-oom
  // commands are refused, and in MULTI so is queueing anything (it would grow memory too).
  // A replica with replica-ignore-maxmemory leaves that to its master.
  if (tracking_.tracking_clients() > 0) tracking_.EvictOverLimit();
  if (config_.values().maxmemory > 0 && !from_master &&
      !(is_replica && config_.values().replica_ignore_maxmemory)) {
    const bool out_of_memory = PerformEvictions() == EvictResult::kFail;
    pre_command_oom_ = out_of_memory;
    const bool reject_on_oom = AnyRunHas(client, *spec, kCmdDenyOom) ||
                               (client.has(kClientMulti) && !spec->has(kCmdTransactionControl));
    if (out_of_memory && reject_on_oom) {
      ++command_stats(*spec).rejected_calls;
      reject("OOM command not allowed when used memory > 'maxmemory'.");
      return;
    }
  } else {
    pre_command_oom_ = false;
  }
  // After a failed background save, writes (and PING) are refused (stop-writes-on-bgsave-error).
  // EXEC also writes when it runs a script that declares it may (a shebang without
  // no-writes): Redis's transaction flags take the scripts' declared ones.
  auto queued_script_writes = [&] {
    for (const QueuedCommand& q : client.multi_queue) {
      if (!q.spec->has(kCmdRunsScript)) continue;
      std::vector<std::string_view> args(q.argv.begin(), q.argv.end());
      std::optional<uint32_t> flags = DeclaredScriptFlags(scripting(), *q.spec, args);
      if (flags && (*flags & kScriptNoWrites) == 0) return true;
    }
    return false;
  };
  const bool is_write =
      AnyRunHas(client, *spec, kCmdWrite) || (spec->has(kCmdRunsQueued) && queued_script_writes());
  if (!from_master && (is_write || spec->has(kCmdDiskErrorCheck))) {
    if (std::string err = DiskWriteError(); !err.empty()) {
      ++command_stats(*spec).rejected_calls;
      reject(err);
      return;
    }
  }
  // min-replicas-to-write: writes need enough replicas that acknowledged recently (not our
  // master's, which always apply).
  if (!from_master && is_write) {
    if (std::string_view err = replication_->MinReplicasError(); !err.empty()) {
      ++command_stats(*spec).rejected_calls;
      reject(std::string(err));
      return;
    }
  }
  if (is_replica && !from_master) {
    if (is_write && config_.values().replica_read_only) {
      ++command_stats(*spec).rejected_calls;
      reject("READONLY You can't write against a read only replica.");
      return;
    }
    // replica-serve-stale-data no: while the link is down only commands flagged stale run.
    if (!config_.values().replica_serve_stale_data && !replication_->link()->link_up() &&
        (!AllRunHave(client, *spec, kCmdStale) ||
         ScriptDeniedWhenStale(scripting(), *spec, argv))) {
      ++command_stats(*spec).rejected_calls;
      reject("MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.");
      return;
    }
  }
  // A pause (CLIENT PAUSE, FAILOVER) holds the command until it ends; replicas are never
  // paused. Our master's stream is held too, as in Redis 7.2: its bytes are still read (the read
  // offset grows) but not applied, so the replica's data and offset stay as they were.
  if (!client.has(kClientReplica)) {
    const uint32_t paused = client_pause_.Actions(MonotonicUs() / 1000);
    // A script that declares its flags replaces the command's (Redis's scriptFlagsToCmdFlags):
    // a no-writes one runs through a write pause. EXEC is held when a queued command may
    // replicate.
    auto may_replicate = [&](const CommandSpec& s, std::span<const std::string_view> args) {
      if (!s.has(kCmdWrite) && !s.has(kCmdMayReplicate)) return false;
      if (!s.has(kCmdRunsScript)) return true;
      // scripting() builds the interpreter on first use; scripting_ may still be null here.
      std::optional<uint32_t> flags = DeclaredScriptFlags(scripting(), s, args);
      return !flags || (*flags & kScriptNoWrites) == 0;
    };
    bool held = (paused & kPauseClientAll) != 0;
    if (!held && (paused & kPauseClientWrite) != 0) {
      held = may_replicate(*spec, argv);
      if (!held && spec->has(kCmdRunsQueued)) {
        for (const QueuedCommand& q : client.multi_queue) {
          std::vector<std::string_view> args(q.argv.begin(), q.argv.end());
          if ((held = may_replicate(*q.spec, args))) break;
        }
      }
    }
    if (held) {
      PostponeClient(client, *spec, argv);
      return;
    }
  }
  if (client.has(kClientMulti) && !spec->has(kCmdTransactionControl)) {
    if (spec->has(kCmdNoMulti)) {
      ++command_stats(*spec).rejected_calls;
      reject("ERR Command not allowed inside a transaction");
      return;
    }
    // A transaction that will abort anyway needn't hold its commands (Redis doesn't either).
    if (!client.has(kClientDirtyExec) && !client.has(kClientDirtyCas)) {
      QueuedCommand queued;
      queued.spec = spec;
      queued.argv.reserve(argv.size());
      for (std::string_view a : argv) queued.argv.emplace_back(a);
      client.QueueForExec(std::move(queued));
    }
    reply.Raw("+QUEUED\r\n");
    return;
  }
  const int64_t offset_before = replication_->master_repl_offset();
  Call(client, *spec, argv, false);
  // REPLICAOF and FAILOVER change which oom-score-adj-values entry applies: at once, as in
  // Redis (the cron would apply it up to a tick later).
  if (spec->has(kCmdAdmin)) {
    if (const OomRole role = replication_->is_replica() ? OomRole::kReplica : OomRole::kMaster;
        role != oom_role_) {
      oom_role_ = role;
      oom_score_.Apply(config_.values(), role);
    }
  }
  // WAIT waits for the stream up to this client's last write that reached it.
  if (replication_->master_repl_offset() != offset_before) {
    client.woff = replication_->master_repl_offset();
  }
  // After the command (or the whole EXEC): serve clients blocked on keys it made ready.
  if (blocking_.HasReadyKeys() && !serving_ready_keys_) ServeReadyKeys();
}

void Server::Call(Client& client, const CommandSpec& spec, std::span<const std::string_view> argv,
                  bool in_exec) {
  // Time stands still inside EXEC (and scripts): every command there sees the same clock.
  if (!in_exec) command_clock_.Update();
  Database& db = *dbs_[client.db_index()];
  // CLIENT NO-TOUCH: the client's reads leave LRU/LFU alone, except TOUCH's, which exist to
  // touch.
  // Inside EXEC and scripts the caller's setting holds.
  if (executing_depth_ == 0) {
    keyspace_options_.access.touch = !client.has(kClientNoTouch) || spec.has(kCmdIgnoresNoTouch);
    // A replica leaves expiry to its master (see ExpiryView); during a pause (CLIENT PAUSE,
    // FAILOVER) a master's expired keys read as missing but stay, as in Redis.
    keyspace_options_.expiry_view =
        replication_->is_replica()
            ? (client.has(kClientMaster) ? ExpiryView::kReplicaMaster : ExpiryView::kReplicaClient)
            // (NextEnd first: no clock read per command while nothing is paused.)
            : (client_pause_.NextEnd() != 0 && Paused(kPauseExpire) ? ExpiryView::kReplicaClient
                                                                    : ExpiryView::kMaster);
    keyspace_options_.note_replica_expires =
        replication_->is_replica() && !client.has(kClientMaster);
  }
  CommandContext ctx(*this, client, db, client.reply(), argv, &spec);
  ctx.in_exec = in_exec;
  error_mark_ = stats_.total_error_replies;
  uint64_t start = CpuTicks();
  uint64_t dirty_before = dirty_;
  // COMMANDLOG large-reply: what this command appended to the reply buffer.
  const size_t reply_mark = ctx.reply.buffer()->size();
  const uint64_t propagation_token = propagator_.BeginCall();
  // Whose command this is: a nested call runs for the client of the command around it (EXEC's
  // commands, a script's) unless it comes from a client of its own (DEBUG LOADAOF's replay
  // client, whose scripts must run in the db its SELECTs chose).
  const bool nested =
      executing_depth_ != 0 && (&client == current_client_ || &client == script_client_.get());
  Client* const caller = nested ? current_client_ : &client;
  Client* const previous_caller = current_client_;
  current_client_ = caller;
  ++executing_depth_;
  spec.handler(ctx);
  --executing_depth_;
  // MONITOR sees a command once it has run, as Redis feeds it from call(): so EXEC follows the
  // commands it ran (MULTI, SET, EXEC). A blocked command is shown when it blocks, not again
  // when it is served.
  if (!monitors_.empty() && !reprocessing_ && !spec.has(kCmdSkipMonitor) && !spec.has(kCmdAdmin)) {
    FeedMonitors(client, argv);
  }
  // Client-side caching: what a read-only command read (also inside EXEC or a script, for the
  // client that sent it; not the read-only scripts themselves, only what they run).
  if (caller != nullptr && caller->has(kClientTracking) && spec.has(kCmdReadonly) &&
      !spec.has(kCmdRunsScript)) {
    tracking_.RememberKeys(*caller, spec, argv);
  }
  current_client_ = previous_caller;
  // Inside a script: what this command changed is part of the script's effects (copying every
  // write's arguments costs scripts a lot, so only while something consumes effects).
  // A command that asked to be propagated although it changed nothing (FLUSHDB of an empty
  // database) is one too, as Redis's forced propagation.
  const bool forced = ctx.effects.overridden && !ctx.effects.commands.empty();
  if (script_effects_ != nullptr && (dirty_ != dirty_before || forced) && propagator_.Active()) {
    // The script SELECTed another database since its last write: so do its effects.
    if (ctx.db.index() != script_effects_db_) {
      script_effects_db_ = ctx.db.index();
      script_effects_->commands.push_back({"SELECT", std::to_string(script_effects_db_)});
      script_effects_->targets.push_back(kEffectToAll);
    }
    if (ctx.effects.overridden) {
      for (auto& command : ctx.effects.commands) script_effects_->Add(std::move(command));
    } else {
      script_effects_->Add(std::vector<std::string>(argv.begin(), argv.end()));
    }
  }
  // The effect stream (src/core/propagator.h). Inside a script the script records its
  // effects itself.
  propagator_.EndCall({.db = ctx.db.index(),
                       .argv = argv,
                       .effects = &ctx.effects,
                       .touches_arbitrary_keys = spec.has(kCmdTouchesArbitraryKeys)},
                      propagation_token, dirty_ - dirty_before, client.has(kClientBlocked),
                      script_effects_ != nullptr);
  // Between commands (the cron's expiry cycle) the server's role decides.
  if (executing_depth_ == 0) {
    keyspace_options_.expiry_view =
        replication_->is_replica() ? ExpiryView::kReplicaClient : ExpiryView::kMaster;
    keyspace_options_.note_replica_expires = false;
  }
  int64_t duration = TicksToUs(CpuTicks() - start);
  // The event loop's command time counts a command once, not again for the ones it runs.
  if (executing_depth_ == 0) stats_.eventloop.cmd_sum += static_cast<uint64_t>(duration);
  // Errors since the last nested command ended (or since this one began) are this command's.
  // ">" rather than "!=": CONFIG RESETSTAT may have zeroed the counter meanwhile.
  const bool failed = stats_.total_error_replies > error_mark_;
  error_mark_ = stats_.total_error_replies;
  // A command that blocked is accounted once, when it is served, times out or is unblocked
  // (as in Redis 7.2), not also now.
  if (client.has(kClientBlocked)) return;
  CommandStats& stats = command_stats(spec);
  ++stats.calls;
  stats.usec += static_cast<uint64_t>(duration);
  if (failed) ++stats.failed_calls;
  // Latency: the command's histogram (a few integer ops), and the monitor's command events.
  if (latency_.tracking()) latency_.RecordCommand(spec.id, duration);
  latency_.AddSampleIfNeeded(spec.has(kCmdFast) ? "fast-command" : "command", duration / 1000);
  ++stats_.total_commands_processed;
  ++client.commands_processed;
  if (!spec.has(kCmdSkipSlowlog)) {
    AddToSlowlog(client, argv, duration);
    const size_t reply_end = ctx.reply.buffer()->size();
    // A buffer written out and compacted meanwhile holds only the tail of the reply.
    const size_t reply_bytes = reply_end >= reply_mark ? reply_end - reply_mark : reply_end;
    AddToSizeLogs(client, argv, static_cast<int64_t>(RequestBytes(argv)),
                  static_cast<int64_t>(reply_bytes));
  }
}

std::optional<uint32_t> Server::ScriptDeclaredFlags(const CommandSpec& spec,
                                                    std::span<const std::string_view> argv) {
  // scripting() builds the interpreter on first use; scripting_ may still be null here.
  return DeclaredScriptFlags(scripting(), spec, argv);
}

}  // namespace vireo
