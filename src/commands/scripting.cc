// EVAL, EVALSHA, EVAL_RO, EVALSHA_RO and SCRIPT. The engine is in src/scripting/.
#include "scripting/scripting.h"

#include <fmt/format.h>

#include <cctype>

#include "commands/families.h"
#include "commands/helpers.h"
#include "commands/numkeys.h"
#include "core/arg_parser.h"
#include "core/command_table.h"
#include "server/client.h"
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

void ScriptDebugCommand(CommandContext& ctx) {
  ArgParser args(ctx, 2);
  const int mode = args.Keyword({"NO", "YES", "SYNC"}, "ERR Use SCRIPT DEBUG YES/SYNC/NO");
  if (!args.Check()) return;
  if (mode == 0) {
    ctx.reply.Ok();
  } else {
    ctx.reply.Error("ERR SCRIPT DEBUG is not supported by this server");
  }
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
             "    Load a script into the scripts cache without executing it."});
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
  RegisterFunctionCommands(table);
}

}  // namespace vireo
