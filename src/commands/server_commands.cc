// Server commands: CONFIG, TIME, LASTSAVE, SHUTDOWN (DEBUG is in debug.cc).
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <time.h>

#include <climits>
#include <cstdlib>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "commands/families.h"
#include "commands/helpers.h"
#include "core/arg_parser.h"
#include "core/command_table.h"
#include "core/config.h"
#include "core/latency_monitor.h"
#include "persistence/rdb.h"
#include "persistence/snapshot.h"
#include "scripting/scripting.h"
#include "server/client.h"
#include "server/client_registry.h"
#include "server/command_clock.h"
#include "server/command_context.h"
#include "server/command_stats.h"
#include "server/event_loop.h"
#include "server/memory_view.h"
#include "server/process_info.h"
#include "server/server_stats.h"
#include "server/shutdown.h"
#include "types/packed_list.h"
#include "util/clock.h"
#include "util/strings.h"

namespace vireo {
namespace {

// ---------------------------------------------------------------------------------------------
// CONFIG

void ConfigGetCommand(CommandContext& ctx) {
  std::vector<std::string> patterns(ctx.argv.begin() + 2, ctx.argv.end());
  std::vector<std::pair<std::string, std::string>> found = ctx.config().Get(patterns);
  ctx.reply.Map(found.size());
  for (const auto& [name, value] : found) {
    ctx.reply.Bulk(name);
    ctx.reply.Bulk(value);
  }
}

// Puts back the values the options of `pairs` had before a CONFIG SET that must be undone.
// `old_values` are their CONFIG GET texts, read before the change.
void RestoreOptions(Config& config,
                    const std::vector<std::pair<std::string, std::string>>& old_values) {
  if (std::string err = config.Set(old_values, true); !err.empty()) {
    spdlog::warn("Restoring the configuration after a failed CONFIG SET: {}", err);
  }
}

void ConfigSetCommand(CommandContext& ctx) {
  ArgParser args(ctx, 2);
  args.ExpectGroupsOf(2);  // name value pairs
  std::vector<std::pair<std::string, std::string>> pairs;
  while (args.HasNext()) {
    std::span<const std::string_view> pair = args.Take(2);
    pairs.emplace_back(std::string(pair[0]), std::string(pair[1]));
  }
  if (!args.Check()) return;
  Config& config = ctx.config();
  // Options Redis won't change under a loading dataset (appendonly, dir, repl-diskless-load)
  // get -LOADING, ahead of any other error, as in Redis.
  if (ctx.loading_dataset()) {
    for (const auto& [name, value] : pairs) {
      const Config::Option* opt = config.Find(name);
      if (opt != nullptr && opt->deny_loading) {
        ctx.reply.Error("LOADING Redis is loading the dataset in memory");
        return;
      }
    }
  }
  const int old_port = config.values().port;
  const int old_tls_port = config.values().tls_port;
  const std::vector<std::string> old_bind = config.values().bind;
  std::vector<std::string> names;
  for (const auto& [name, value] : pairs) names.push_back(name);
  const std::vector<std::pair<std::string, std::string>> old_values = config.Get(names);
  // Config::Set applies all or nothing and notifies the server of each changed option.
  std::string error = config.Set(pairs, ctx.client.local);
  if (!error.empty()) {
    ctx.reply.Error(error);
    return;
  }
  // New listeners can fail to open (address in use, not local): then, as in Redis, the whole
  // CONFIG SET is undone and the old listeners come back.
  const ServerConfig& now = config.values();
  if (now.port != old_port || now.tls_port != old_tls_port || now.bind != old_bind) {
    bool tls_failed = false;
    if (std::string err = ctx.loop().RebindTcp(&tls_failed); !err.empty()) {
      // Redis names the port whose listener failed when that port changed, else bind.
      const bool port_failed = tls_failed ? now.tls_port != old_tls_port : now.port != old_port;
      RestoreOptions(config, old_values);
      ctx.loop().RebindTcp();
      ctx.reply.Error(fmt::format("ERR CONFIG SET failed (possibly related to argument '{}') - {}",
                                  port_failed ? (tls_failed ? "tls-port" : "port") : "bind",
                                  port_failed ? "Unable to listen on this port. Check server logs."
                                              : "Failed to bind to specified addresses."));
      return;
    }
  }
  ctx.reply.Ok();
}

void ConfigResetstatCommand(CommandContext& ctx) {
  ctx.stats() = ServerStats{};
  ctx.memory().lazy_freer().ResetStats();
  ctx.memory().defragmenter().ResetStats();
  // The latency-tracking histograms go with the command statistics, as in Redis.
  ctx.command_stats().Reset();
  ctx.latency().ResetHistograms();
  ctx.reply.Ok();
}

void ConfigRewriteCommand(CommandContext& ctx) {
  std::string error = ctx.config().Rewrite();
  if (!error.empty()) {
    ctx.reply.Error(error);
    return;
  }
  ctx.reply.Ok();
}

void ConfigHelpCommand(CommandContext& ctx) {
  ReplyHelp(
      ctx, "CONFIG",
      {"GET <pattern>", "    Return parameters matching the glob-like <pattern> and their values.",
       "SET <directive> <value>", "    Set the configuration <directive> to <value>.", "RESETSTAT",
       "    Reset statistics reported by the INFO command.", "REWRITE",
       "    Rewrite the configuration file."});
}

// ---------------------------------------------------------------------------------------------
// TIME, LASTSAVE

void TimeCommand(CommandContext& ctx) {
  int64_t now_us = ctx.command_clock().us();
  ctx.reply.Array(2);
  ctx.reply.Bulk(Int64ToString(now_us / 1000000));
  ctx.reply.Bulk(Int64ToString(now_us % 1000000));
}

void LastsaveCommand(CommandContext& ctx) { ctx.reply.Integer(ctx.process().lastsave()); }

// ---------------------------------------------------------------------------------------------
// SHUTDOWN

void ShutdownCommand(CommandContext& ctx) {
  uint32_t flags = 0;
  bool abort = false;
  ArgParser args(ctx, 1);
  while (args.HasNext()) {
    switch (args.Keyword({"NOSAVE", "SAVE", "NOW", "FORCE", "ABORT"})) {
      case 0:
        flags |= kShutdownNosave;
        break;
      case 1:
        flags |= kShutdownSave;
        break;
      case 2:
        flags |= kShutdownNow;
        break;
      case 3:
        flags |= kShutdownForce;
        break;
      case 4:
        abort = true;
        break;
    }
  }
  if (abort) args.Exclusive({true, flags != 0});
  args.Exclusive({(flags & kShutdownNosave) != 0, (flags & kShutdownSave) != 0});
  if (!args.Check()) return;
  if (abort) {
    if (ctx.shutdown().AbortShutdown()) {
      ctx.reply.Ok();
    } else {
      ctx.reply.Error("ERR No shutdown in progress.");
    }
    return;
  }
  // Waiting for replicas blocks the client, which a script or MULTI can't do.
  if (!(flags & kShutdownNow) && !ctx.may_block()) {
    ctx.reply.Error("ERR SHUTDOWN without NOW or ABORT isn't allowed for DENY BLOCKING client");
    return;
  }
  // On success the client gets no reply: its connection closes as the server exits.
  ctx.shutdown().ShutdownFromCommand(ctx, flags);
}

}  // namespace

void RegisterServerCommands(CommandTable& table) {
  table.Add({"config", -2, 0, Keys(), 0, "server", "2.0.0",
             "A container for server configuration commands.", "", nullptr,
             "Depends on subcommand."});
  table.AddSubcommand(
      "config",
      {"get", -3, kCmdAdmin | kCmdNoScript | kCmdLoading | kCmdStale, Keys(), 0, "server", "2.0.0",
       "Returns the effective values of configuration parameters.", "parameter [parameter ...]",
       ConfigGetCommand, "O(N) when N is the number of configuration parameters provided"});
  table.AddSubcommand("config", {"help", 2, kCmdLoading | kCmdStale, Keys(), 0, "server", "5.0.0",
                                 "Returns helpful text about the different subcommands.", "",
                                 ConfigHelpCommand, "O(1)"});
  table.AddSubcommand("config", {"resetstat", 2, kCmdAdmin | kCmdNoScript | kCmdLoading | kCmdStale,
                                 Keys(), 0, "server", "2.0.0", "Resets the server's statistics.",
                                 "", ConfigResetstatCommand, "O(1)"});
  table.AddSubcommand(
      "config",
      {"rewrite", 2, kCmdAdmin | kCmdNoScript | kCmdLoading | kCmdStale, Keys(), 0, "server",
       "2.8.0", "Persists the effective configuration to file.", "", ConfigRewriteCommand, "O(1)"});
  table.AddSubcommand(
      "config",
      {"set", -4, kCmdAdmin | kCmdNoScript | kCmdLoading | kCmdStale, Keys(), 0, "server", "2.0.0",
       "Sets configuration parameters in-flight.", "data=<parameter value> ...", ConfigSetCommand,
       "O(N) when N is the number of configuration parameters provided"});

  table.Add({"time", 1, kCmdLoading | kCmdStale | kCmdFast, Keys(), 0, "server", "2.6.0",
             "Returns the server time.", "", TimeCommand, "O(1)"});
  table.Add({"lastsave", 1, kCmdLoading | kCmdStale | kCmdFast, Keys(), kAclAdmin | kAclDangerous,
             "server", "1.0.0", "Returns the Unix timestamp of the last successful save to disk.",
             "", LastsaveCommand, "O(1)"});
  table.Add({"shutdown", -1,
             kCmdAdmin | kCmdNoScript | kCmdLoading | kCmdStale | kCmdNoMulti | kCmdAllowBusy,
             Keys(), 0, "server", "1.0.0",
             "Synchronously saves the database(s) to disk and shuts down the Redis server.",
             "[save-selector=<NOSAVE | SAVE>] [NOW] [FORCE] [ABORT]", ShutdownCommand,
             "O(N) when saving, where N is the total number of keys in all databases when saving "
             "data, otherwise O(1)"});
}

}  // namespace vireo
