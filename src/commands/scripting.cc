// EVAL, EVALSHA, EVAL_RO, EVALSHA_RO and SCRIPT. The engine is in src/scripting/.
#include "scripting/scripting.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <csignal>
#include <cstring>

#include "commands/families.h"
#include "commands/helpers.h"
#include "commands/numkeys.h"
#include "core/arg_parser.h"
#include "core/command_table.h"
#include "security/tls.h"
#include "server/client.h"
#include "server/client_registry.h"
#include "server/command_context.h"
#include "server/command_stats.h"
#include "server/monitors.h"
#include "util/strings.h"

namespace vireo {
namespace {

constexpr std::string_view kNoScript = "NOSCRIPT No matching script. Please use EVAL.";

}  // namespace

// Shared with functions.cc: runs the script or function compiled at `ref`, whose keys follow
// numkeys at argv[2], then does what is left to its command: counting its failed call and
// propagating what the script wrote instead of the script.
void RunScriptFor(CommandContext& ctx, LuaEngine& engine, int ref, uint32_t flags, bool ro,
                  std::string_view name, size_t numkeys) {
  ScriptOutcome outcome = ctx.scripting().Run({.engine = &engine,
                                               .ref = ref,
                                               .flags = flags,
                                               .ro = ro,
                                               .name = name,
                                               .argv = ctx.argv,
                                               .numkeys = numkeys,
                                               .first_key = 3,
                                               .from_master = ctx.client.has(kClientMaster)},
                                              ctx.reply);
  if (!outcome.ran) return;
  if (outcome.uncounted_error) ++ctx.command_stats().For(*ctx.spec).failed_calls;
  // Redis 7 replicates what a script did, not the script: its writes, in a transaction when
  // there is more than one. (The propagator wraps them per consumer: redis.set_repl may have
  // sent some to only one.)
  ScriptEffects& effects = outcome.effects;
  if (effects.commands.empty()) {
    ctx.PropagateNothing();
    return;
  }
  for (size_t i = 0; i < effects.commands.size(); ++i) {
    ctx.PropagateInstead(std::move(effects.commands[i]), effects.targets[i]);
  }
}

namespace {

// EVAL's numkeys, checked as Redis does. Returns false after replying an error.
bool ParseNumKeys(CommandContext& ctx, size_t* numkeys) {
  ArgParser args(ctx, 2);
  *numkeys = ReadScriptNumkeys(args, errors::kNotInteger);
  return args.Check();
}

void RunEval(CommandContext& ctx, bool by_sha, bool ro) {
  size_t numkeys = 0;
  if (!ParseNumKeys(ctx, &numkeys)) return;
  Scripting& scripting = ctx.scripting();
  CachedScript* script;
  std::string sha;
  if (by_sha) {
    script = scripting.FindScript(ctx.arg(1));
    if (script == nullptr) {
      ctx.reply.Error(kNoScript);
      return;
    }
  } else {
    std::string error;
    script = scripting.LoadScript(ctx.arg(1), &sha, &error);
    if (script == nullptr) {
      ctx.reply.Error(error);
      return;
    }
  }
  RunScriptFor(ctx, scripting.eval_engine(), script->ref, script->flags, ro, script->sha, numkeys);
}

// Writes the client's queued output with blocking writes: the debugger's lines go straight to
// the socket and must not overtake replies queued before them.
void WriteQueuedOutput(Client& client) {
  std::string& out = client.output();
  while (client.output_written < out.size()) {
    ssize_t n =
        client.WriteSocket(out.data() + client.output_written, out.size() - client.output_written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    client.output_written += static_cast<size_t>(n);
  }
  out.clear();
  client.output_written = 0;
}

void SetSocketBlocking(int fd, bool blocking, int send_timeout_ms) {
  int flags = fcntl(fd, F_GETFL);
  if (flags >= 0) fcntl(fd, F_SETFL, blocking ? flags & ~O_NONBLOCK : flags | O_NONBLOCK);
  timeval tv{.tv_sec = send_timeout_ms / 1000, .tv_usec = (send_timeout_ms % 1000) * 1000};
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

// EVAL under SCRIPT DEBUG: the script runs in a debugging session on the client's socket,
// which then closes. Async (YES): a forked child owns the session and the socket, the server
// drops the client and goes on serving the others; what the script writes dies with the
// child. SYNC: the session runs here, the server waits, the writes stay.
void DebugEval(CommandContext& ctx, bool ro) {
  Client& client = ctx.client;
  const bool forked = !client.has(kClientLuaDebugSync);
  ctx.PropagateNothing();
  if (forked) {
    const pid_t parent = getpid();
    const pid_t pid = fork();
    if (pid < 0) {
      ctx.reply.Error(
          fmt::format("ERR Fork() failed: can't run EVAL in debugging mode: {}", strerror(errno)));
      client.clear(kClientLuaDebug);
      return;
    }
    if (pid > 0) {
      spdlog::info("Redis forked for debugging eval");
      ctx.scripting().AddDebugSession(pid);
      // The child answers from now on; kClientLuaDebug keeps the close from shutting the
      // connection down under it.
      client.output_written = client.output().size();
      // The child continues the TLS session from its copy: closing ours must not send the
      // close_notify that would end it (Redis frees it unsent too).
      if (client.tls) client.tls->Abandon();
      ctx.clients().CloseClient(client);
      return;
    }
    // The child: it dies with the server, ignores the signals meant for the server, and keeps
    // no other socket open (a connection the server closes must close for its peer).
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(1);
    signal(SIGTERM, SIG_IGN);
    signal(SIGINT, SIG_IGN);
    const int fd = client.fd();
    if (fd > 3) close_range(3, fd - 1, 0);
    close_range(fd + 1, ~0U, 0);
  } else {
    spdlog::info("Redis synchronous debugging eval session started");
  }
  SetSocketBlocking(client.fd(), true, 5000);
  WriteQueuedOutput(client);
  LuaDebugger& debugger = ctx.scripting().debugger();
  debugger.BeginSession(
      ctx.arg(1),
      {.read = [&client](void* buf, size_t n) { return client.ReadSocket(buf, n); },
       .write = [&client](const void* buf, size_t n) { return client.WriteSocket(buf, n); }});
  RunEval(ctx, false, ro);
  debugger.EndSession();
  if (forked) {
    WriteQueuedOutput(client);  // the script's reply
    // A TLS session ends with a close_notify, as the server's closes do: a client that then
    // sends its own (redis-cli when it exits) finds the connection closed in order, not reset.
    client.tls.reset();
    _exit(0);
  }
  spdlog::info("Redis synchronous debugging eval session ended");
  SetSocketBlocking(client.fd(), false, 0);
  client.clear(kClientLuaDebug);
  client.clear(kClientLuaDebugSync);
  // The closed connection tells the client the session is over.
  ctx.clients().CloseAfterReply(client);
}

void EvalGeneric(CommandContext& ctx, bool by_sha, bool ro) {
  // EVAL has skip_monitor: it is fed here, first (also when the script is unknown or fails to
  // compile, as in Redis), so the commands its script runs follow it.
  ctx.monitors().Feed(ctx.client, ctx.argv);
  // A SHA1 is 40 hex digits: anything else cannot name a script, and Redis says so before it
  // looks at numkeys.
  if (by_sha && ctx.arg(1).size() != 40) {
    ctx.reply.Error(kNoScript);
    return;
  }
  // Inside EXEC the socket is not the command's to take over: the script runs undebugged.
  if (ctx.client.has(kClientLuaDebug) && !ctx.in_exec) {
    if (by_sha) {
      ctx.reply.Error("ERR Please use EVAL instead of EVALSHA for debugging");
      return;
    }
    DebugEval(ctx, ro);
    return;
  }
  RunEval(ctx, by_sha, ro);
}

void EvalCommand(CommandContext& ctx) { EvalGeneric(ctx, false, false); }
void EvalShaCommand(CommandContext& ctx) { EvalGeneric(ctx, true, false); }
void EvalRoCommand(CommandContext& ctx) { EvalGeneric(ctx, false, true); }
void EvalShaRoCommand(CommandContext& ctx) { EvalGeneric(ctx, true, true); }

void ScriptLoadCommand(CommandContext& ctx) {
  std::string sha, error;
  if (ctx.scripting().LoadScript(ctx.arg(2), &sha, &error) == nullptr) {
    ctx.reply.Error(error);
    return;
  }
  ctx.reply.Bulk(sha);
}

void ScriptExistsCommand(CommandContext& ctx) {
  Scripting& scripting = ctx.scripting();
  ctx.reply.Array(ctx.argc() - 2);
  for (size_t i = 2; i < ctx.argc(); ++i) {
    ctx.reply.Integer(scripting.FindScript(ctx.arg(i)) != nullptr ? 1 : 0);
  }
}

// SCRIPT SHOW sha1 (Valkey 8.0): the cached body. Valkey's error is its bare NOSCRIPT text,
// without EVALSHA's "Please use EVAL." hint, for any SHA1 not cached (wrong length included).
void ScriptShowCommand(CommandContext& ctx) {
  const CachedScript* script = ctx.scripting().FindScript(ctx.arg(2));
  if (script == nullptr) {
    ctx.reply.Error("NOSCRIPT No matching script.");
    return;
  }
  ctx.reply.Bulk(script->body);
}

void ScriptFlushCommand(CommandContext& ctx) {
  constexpr std::string_view kSyncOrAsync = "ERR SCRIPT FLUSH only support SYNC|ASYNC option";
  ArgParser args(ctx, 2);
  if (args.remaining() > 1) args.Fail(kSyncOrAsync);
  if (args.HasNext()) args.Keyword({"SYNC", "ASYNC"}, kSyncOrAsync);
  if (!args.Check()) return;
  ctx.scripting().FlushScripts();
  ctx.reply.Ok();
}

}  // namespace

// Shared with functions.cc: SCRIPT KILL and FUNCTION KILL.
void KillRunningScript(CommandContext& ctx, bool eval) {
  ScriptRun* run = ctx.scripting().running();
  if (run == nullptr || !run->timed_out) {
    ctx.reply.Error("NOTBUSY No scripts in execution right now.");
    return;
  }
  if (run->write_dirty) {
    ctx.reply.Error(
        "UNKILLABLE Sorry the script already executed write commands against the dataset. You "
        "can either wait the script termination or kill the server in a hard way using the "
        "SHUTDOWN NOSAVE command.");
    return;
  }
  if (eval && !run->eval_mode) {
    ctx.reply.Error(
        "BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN "
        "NOSAVE.");
    return;
  }
  if (!eval && run->eval_mode) {
    ctx.reply.Error(
        "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN "
        "NOSAVE.");
    return;
  }
  run->killed = true;
  ctx.reply.Ok();
}

namespace {

void ScriptKillCommand(CommandContext& ctx) { KillRunningScript(ctx, true); }

// SCRIPT DEBUG YES|SYNC|NO: whether the client's next EVAL runs in a debugging session.
void ScriptDebugCommand(CommandContext& ctx) {
  Client& client = ctx.client;
  // The session writes to the socket directly: replies still queued (a pipeline, or EXEC's
  // own) would arrive after it.
  if (client.output_written < client.output().size()) {
    ctx.reply.Error("ERR SCRIPT DEBUG must be called outside a pipeline");
    return;
  }
  ArgParser args(ctx, 2);
  const int mode = args.Keyword({"NO", "YES", "SYNC"}, "ERR Use SCRIPT DEBUG YES/SYNC/NO");
  if (!args.Check()) return;
  client.clear(kClientLuaDebug);
  client.clear(kClientLuaDebugSync);
  if (mode != 0) {
    ctx.scripting().debugger().Enable();
    client.set(kClientLuaDebug);
    if (mode == 2) client.set(kClientLuaDebugSync);
  }
  ctx.reply.Ok();
}

void ScriptHelpCommand(CommandContext& ctx) {
  ReplyHelp(ctx, "SCRIPT",
            {"DEBUG (YES|SYNC|NO)", "    Set the debug mode for subsequent scripts executed.",
             "EXISTS <sha1> [<sha1> ...]",
             "    Return information about the existence of the scripts in the script cache.",
             "FLUSH [ASYNC|SYNC]", "    Flush the Lua scripts cache. Very dangerous on replicas.",
             "    When called without the optional mode argument, the behavior is determined by "
             "the",
             "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
             "    * ASYNC: Asynchronously flush the scripts cache.",
             "    * SYNC: Synchronously flush the scripts cache.", "KILL",
             "    Kill the currently executing Lua script.", "LOAD <script>",
             "    Load a script into the scripts cache without executing it.", "SHOW <sha1>",
             "    Show a script from the scripts cache."});
}

void ScriptContainer(CommandContext& ctx) {
  ctx.reply.Error(fmt::format("ERR wrong number of arguments for '{}' command", "script"));
}

std::vector<size_t> EvalKeys(std::span<const std::string_view> argv) {
  return NumkeysKeys(argv, 2);
}

}  // namespace

void RegisterFunctionCommands(CommandTable& table);  // functions.cc

void RegisterScriptingCommands(CommandTable& table) {
  constexpr const char* kGroup = "scripting";
  constexpr const char* kComplexity = "Depends on the script that is executed.";
  table.Add({"eval", -3,
             kCmdNoScript | kCmdStale | kCmdSkipMonitor | kCmdMayReplicate | kCmdNoMandatoryKeys |
                 kCmdRunsScript,
             Keys(KeyNum(
                 2, 0, 1, 1, kKeyRW | kKeyAccess | kKeyUpdate,
                 "We cannot tell how the keys will be used so we assume the worst, RW and UPDATE")),
             kAclScripting, kGroup, "2.6.0", "Executes a server-side Lua script.",
             "script numkeys [key [key ...]] [arg [arg ...]]", EvalCommand, kComplexity, EvalKeys});
  table.Add({"evalsha", -3,
             kCmdNoScript | kCmdStale | kCmdSkipMonitor | kCmdMayReplicate | kCmdNoMandatoryKeys |
                 kCmdRunsScript | kCmdScriptBySha,
             Keys(KeyNum(2, 0, 1, 1, kKeyRW | kKeyAccess | kKeyUpdate)), kAclScripting, kGroup,
             "2.6.0", "Executes a server-side Lua script by SHA1 digest.",
             "sha1 numkeys [key [key ...]] [arg [arg ...]]", EvalShaCommand, kComplexity,
             EvalKeys});
  table.Add({"eval_ro", -3,
             kCmdReadonly | kCmdNoScript | kCmdStale | kCmdSkipMonitor | kCmdNoMandatoryKeys |
                 kCmdRunsScript,
             Keys(KeyNum(
                 2, 0, 1, 1, kKeyRO | kKeyAccess,
                 "We cannot tell how the keys will be used so we assume the worst, RO and ACCESS")),
             kAclScripting, kGroup, "7.0.0", "Executes a read-only server-side Lua script.",
             "script numkeys [key [key ...]] [arg [arg ...]]", EvalRoCommand, kComplexity,
             EvalKeys});
  table.Add({"evalsha_ro", -3,
             kCmdReadonly | kCmdNoScript | kCmdStale | kCmdSkipMonitor | kCmdNoMandatoryKeys |
                 kCmdRunsScript | kCmdScriptBySha,
             Keys(KeyNum(2, 0, 1, 1, kKeyRO | kKeyAccess)), kAclScripting, kGroup, "7.0.0",
             "Executes a read-only server-side Lua script by SHA1 digest.",
             "sha1 numkeys [key [key ...]] [arg [arg ...]]", EvalShaRoCommand, kComplexity,
             EvalKeys});

  table.Add({"script", -2, 0, Keys(), 0, kGroup, "2.6.0",
             "A container for Lua scripts management commands.", "", ScriptContainer,
             "Depends on subcommand."});
  table.AddSubcommand("script", {"debug", 3, kCmdNoScript, Keys(), kAclScripting, kGroup, "3.2.0",
                                 "Sets the debug mode of server-side Lua scripts.",
                                 "mode=<YES | SYNC | NO>", ScriptDebugCommand, "O(1)"});
  table.AddSubcommand(
      "script", {"exists", -3, kCmdNoScript, Keys(), kAclScripting, kGroup, "2.6.0",
                 "Determines whether server-side Lua scripts exist in the script cache.",
                 "sha1 [sha1 ...]", ScriptExistsCommand,
                 "O(N) with N being the number of scripts to check (so checking a single script "
                 "is an O(1) operation)."});
  table.AddSubcommand(
      "script", {"flush", -2, kCmdNoScript, Keys(), kAclScripting, kGroup, "2.6.0",
                 "Removes all server-side Lua scripts from the script cache.", "[ASYNC | SYNC]",
                 ScriptFlushCommand, "O(N) with N being the number of scripts in cache"});
  table.AddSubcommand("script", {"help", 2, kCmdLoading | kCmdStale, Keys(), kAclScripting, kGroup,
                                 "5.0.0", "Returns helpful text about the different subcommands.",
                                 "", ScriptHelpCommand, "O(1)"});
  table.AddSubcommand(
      "script",
      {"kill", 2, kCmdNoScript | kCmdAllowBusy, Keys(), kAclScripting, kGroup, "2.6.0",
       "Terminates a server-side Lua script during execution.", "", ScriptKillCommand, "O(1)"});
  table.AddSubcommand(
      "script", {"load", 3, kCmdNoScript | kCmdStale, Keys(), kAclScripting, kGroup, "2.6.0",
                 "Loads a server-side Lua script to the script cache.", "script", ScriptLoadCommand,
                 "O(N) with N being the length in bytes of the script body."});
  // Valkey 8.0's row (src/commands/script-show.json): not in Redis, see docs/valkey-additions.md.
  table.AddSubcommand("script", {"show", 3, kCmdNoScript | kCmdStale, Keys(),
                                 kAclKeyspace | kAclRead | kAclScripting | kAclSlow, kGroup,
                                 "8.0.0", "Show server-side Lua script in the script cache.",
                                 "sha1", ScriptShowCommand, "O(1)."});
  RegisterFunctionCommands(table);
}

}  // namespace vireo
