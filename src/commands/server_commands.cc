// Server commands: CONFIG, TIME, LASTSAVE, DEBUG, SHUTDOWN.
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <time.h>

#include <climits>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "commands/families.h"
#include "commands/helpers.h"
#include "persistence/rdb.h"
#include "persistence/snapshot.h"
#include "server/command_table.h"
#include "server/server.h"
#include "types/packed_list.h"
#include "util/clock.h"
#include "util/strings.h"

namespace vireo {
namespace {

// ---------------------------------------------------------------------------------------------
// CONFIG

void ConfigGetCommand(CommandContext& ctx) {
  std::vector<std::string> patterns(ctx.argv.begin() + 2, ctx.argv.end());
  std::vector<std::pair<std::string, std::string>> found = ctx.server.config().Get(patterns);
  ctx.reply.Map(found.size());
  for (const auto& [name, value] : found) {
    ctx.reply.Bulk(name);
    ctx.reply.Bulk(value);
  }
}

void ConfigSetCommand(CommandContext& ctx) {
  if ((ctx.argc() - 2) % 2 != 0) {
    ctx.reply.Error(errors::kSyntax);
    return;
  }
  std::vector<std::pair<std::string, std::string>> pairs;
  for (size_t i = 2; i + 1 < ctx.argc(); i += 2) {
    pairs.emplace_back(std::string(ctx.arg(i)), std::string(ctx.arg(i + 1)));
  }
  // Config::Set applies all or nothing and notifies the server of each changed option.
  std::string error = ctx.server.config().Set(pairs, ctx.client.local);
  if (!error.empty()) {
    ctx.reply.Error(error);
    return;
  }
  ctx.reply.Ok();
}

void ConfigResetstatCommand(CommandContext& ctx) {
  ctx.server.stats() = ServerStats{};
  ctx.server.lazy_freer().ResetStats();
  ctx.server.ResetCommandStats();
  ctx.reply.Ok();
}

void ConfigRewriteCommand(CommandContext& ctx) {
  std::string error = ctx.server.config().Rewrite();
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
  int64_t now_us = NowUs();
  ctx.reply.Array(2);
  ctx.reply.Bulk(Int64ToString(now_us / 1000000));
  ctx.reply.Bulk(Int64ToString(now_us % 1000000));
}

void LastsaveCommand(CommandContext& ctx) { ctx.reply.Integer(ctx.server.lastsave()); }

// ---------------------------------------------------------------------------------------------
// DEBUG

void DebugSleep(CommandContext& ctx) {
  // Like Redis: strtod's reading of the argument, so "abc" sleeps 0 seconds; the whole server
  // stops meanwhile, which is the point (tests use it to simulate a busy server).
  std::string text(ctx.arg(2));
  double seconds = std::strtod(text.c_str(), nullptr);
  auto micros = static_cast<int64_t>(seconds * 1000000);
  if (micros > 0) {
    timespec ts{static_cast<time_t>(micros / 1000000), static_cast<long>(micros % 1000000) * 1000};
    nanosleep(&ts, nullptr);
  }
  ctx.reply.Ok();
}

void DebugProtocol(CommandContext& ctx) {
  ReplyBuilder& r = ctx.reply;
  std::string_view type = ctx.arg(2);
  if (IsArg(type, "STRING")) {
    r.Bulk("Hello World");
  } else if (IsArg(type, "INTEGER")) {
    r.Integer(12345);
  } else if (IsArg(type, "DOUBLE")) {
    r.Double(3.141);
  } else if (IsArg(type, "BIGNUM")) {
    r.BigNumber("1234567999999999999999999999999999999");
  } else if (IsArg(type, "NULL")) {
    r.Null();
  } else if (IsArg(type, "ARRAY") || IsArg(type, "SET")) {
    if (IsArg(type, "ARRAY")) {
      r.Array(3);
    } else {
      r.Set(3);
    }
    for (int i = 0; i < 3; ++i) r.Integer(i);
  } else if (IsArg(type, "MAP")) {
    r.Map(3);
    for (int i = 0; i < 3; ++i) {
      r.Integer(i);
      r.Bool(i == 1);
    }
  } else if (IsArg(type, "ATTRIB")) {
    if (ctx.client.resp() >= 3) {
      r.Raw("|1\r\n");
      r.Bulk("key-popularity");
      r.Array(2);
      r.Bulk("key:123");
      r.Integer(90);
    }
    // An attribute only decorates a reply, so a real one follows.
    r.Bulk("Some real reply following the attribute");
  } else if (IsArg(type, "PUSH")) {
    if (ctx.client.resp() < 3) {
      r.Error("ERR RESP2 is not supported by this command");
      return;
    }
    r.Push(2);
    r.Bulk("server-cpu-usage");
    r.Integer(42);
    // Push data is out of band; a normal reply lets a client waiting for one carry on.
    r.Bulk("Some real reply following the push reply");
  } else if (IsArg(type, "TRUE") || IsArg(type, "FALSE")) {
    r.Bool(IsArg(type, "TRUE"));
  } else if (IsArg(type, "VERBATIM")) {
    r.Verbatim("This is a verbatim\nstring");
  } else {
    r.Error(
        "ERR Wrong protocol type name. Please use one of the following: "
        "string|integer|double|bignum|null|array|set|map|attrib|push|verbatim|true|false");
  }
}

// DEBUG OBJECT <key>: Redis's one-line status of low-level details. The key is looked up
// without expiring or touching it. lru is the raw 24-bit access clock (an LFU clock under an
// LFU policy, as in Redis); lru_seconds_idle always reads it as an LRU clock.
void DebugObject(CommandContext& ctx) {
  DbEntry* entry = ctx.db.Peek(ctx.arg(2));
  if (entry == nullptr) {
    ctx.reply.Error(errors::kNoSuchKey);
    return;
  }
  const Value& v = entry->value;
  std::string extra;
  if (v.type() == ValueType::kList && v.EncodingName() == std::string_view("quicklist")) {
    const PackedList& ql = *v.As<PackedList>();
    const size_t nodes = ql.node_count();
    extra = fmt::format(
        " ql_nodes:{} ql_avg_node:{:.2f} ql_listpack_max:{} ql_compressed:{} "
        "ql_uncompressed_size:{}",
        nodes, static_cast<double>(ql.size()) / static_cast<double>(nodes), ql.max_listpack_size(),
        ql.compress_depth() != 0 ? 1 : 0, ql.ListpackBytes());
  }
  const int refcount = IsSharedInteger(ctx.server.cfg(), v) ? INT_MAX : 1;
  const uint32_t clock = v.access_clock();
  ctx.reply.SimpleString(fmt::format(
      "Value at:{} refcount:{} encoding:{} serializedlength:{} lru:{} lru_seconds_idle:{}{}",
      static_cast<const void*>(&v), refcount, v.EncodingName(),
      RdbSerializedLength(v, ctx.server.cfg().rdbcompression), clock,
      LruIdleMs(clock, ctx.db.now_ms()) / 1000, extra));
}

void DebugHelp(CommandContext& ctx) {
  ReplyHelp(
      ctx, "DEBUG",
      {"ERROR <string>",
       "    Return a Redis protocol error with <string> as message. Useful for clients",
       "    unit tests to simulate Redis errors.", "LOG <message>",
       "    Write <message> to the server log.", "PROTOCOL <type>",
       "    Reply with a test value of the specified type. <type> can be: string,",
       "    integer, double, bignum, null, array, set, map, attrib, push, verbatim,",
       "    true, false.", "OBJECT <key>",
       "    Show low level info about `key` and associated value.", "SET-ACTIVE-EXPIRE <0|1>",
       "    Setting it to 0 disables expiring keys in background when they are not",
       "    accessed (otherwise the Redis behavior). Setting it to 1 reenables back the",
       "    default.", "SLEEP <seconds>", "    Stop the server for <seconds>. Decimals allowed."});
}

void DebugCommand(CommandContext& ctx) {
  std::string_view sub = ctx.arg(1);
  size_t argc = ctx.argc();
  if (IsArg(sub, "HELP") && argc == 2) {
    DebugHelp(ctx);
  } else if (IsArg(sub, "SLEEP") && argc == 3) {
    DebugSleep(ctx);
  } else if (IsArg(sub, "SET-ACTIVE-EXPIRE") && argc == 3) {
    // atoi, as Redis: anything that doesn't read as 0 enables it.
    ctx.server.set_active_expire_enabled(std::atoi(std::string(ctx.arg(2)).c_str()) != 0);
    ctx.reply.Ok();
  } else if (IsArg(sub, "ERROR") && argc == 3) {
    // Written raw, as Redis does: no "ERR " prefix added, and not counted in errorstats.
    std::string line = "-";
    for (char c : ctx.arg(2)) line.push_back(c == '\r' || c == '\n' ? ' ' : c);
    line += "\r\n";
    ctx.reply.Raw(line);
  } else if (IsArg(sub, "LOG") && argc == 3) {
    spdlog::warn("DEBUG LOG: {}", ctx.arg(2));
    ctx.reply.Ok();
  } else if (IsArg(sub, "RELOAD")) {
    // Save, empty every database, load the dump again (src/persistence/snapshot.h).
    if (std::string err = RdbDebugReload(ctx.server); !err.empty()) {
      ctx.reply.Error(err);
    } else {
      ctx.reply.Ok();
    }
  } else if (IsArg(sub, "OBJECT") && argc == 3) {
    DebugObject(ctx);
  } else if (IsArg(sub, "PROTOCOL") && argc == 3) {
    DebugProtocol(ctx);
  } else {
    ctx.reply.Error(
        fmt::format("ERR unknown subcommand or wrong number of arguments for '{}'. Try DEBUG HELP.",
                    sub.substr(0, 128)));
  }
}

// ---------------------------------------------------------------------------------------------
// SHUTDOWN

void ShutdownCommand(CommandContext& ctx) {
  bool nosave = false, save = false, abort = false, other = false, force = false;
  for (size_t i = 1; i < ctx.argc(); ++i) {
    std::string_view opt = ctx.arg(i);
    if (IsArg(opt, "NOSAVE")) {
      nosave = true;
    } else if (IsArg(opt, "SAVE")) {
      save = true;
    } else if (IsArg(opt, "NOW") || IsArg(opt, "FORCE")) {
      other = true;
      force = force || IsArg(opt, "FORCE");
    } else if (IsArg(opt, "ABORT")) {
      abort = true;
    } else {
      ctx.reply.Error(errors::kSyntax);
      return;
    }
  }
  if ((abort && (nosave || save || other)) || (nosave && save)) {
    ctx.reply.Error(errors::kSyntax);
    return;
  }
  if (abort) {
    // Shutdown here is immediate, so there is never one in progress to abort.
    ctx.reply.Error("ERR No shutdown in progress.");
    return;
  }
  spdlog::warn("User requested shutdown...");
  // Saves the dump when SAVE is given or save points are configured (unless NOSAVE); a failed
  // save keeps the server running unless FORCE. As in Redis the client gets no reply on
  // success: the connection closes when the process exits.
  if (!RdbSaveOnShutdown(ctx.server, save, nosave).empty() && !force) {
    ctx.reply.Error("ERR Errors trying to SHUTDOWN. Check logs.");
    return;
  }
  ctx.server.CloseAfterReply(ctx.client);
  ctx.server.Shutdown();
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
       "Sets configuration parameters in-flight.", "parameter value [parameter value ...]",
       ConfigSetCommand, "O(N) when N is the number of configuration parameters provided"});

  table.Add({"time", 1, kCmdLoading | kCmdStale | kCmdFast, Keys(), 0, "server", "2.6.0",
             "Returns the server time.", "", TimeCommand, "O(1)"});
  table.Add({"lastsave", 1, kCmdLoading | kCmdStale | kCmdFast, Keys(), kAclAdmin | kAclDangerous,
             "server", "1.0.0", "Returns the Unix timestamp of the last successful save to disk.",
             "", LastsaveCommand, "O(1)"});
  table.Add({"debug", -2, kCmdAdmin | kCmdNoScript | kCmdLoading | kCmdStale | kCmdProtected,
             Keys(), 0, "server", "1.0.0", "A container for debugging commands.", "", DebugCommand,
             "Depends on subcommand."});
  table.Add({"shutdown", -1,
             kCmdAdmin | kCmdNoScript | kCmdLoading | kCmdStale | kCmdNoMulti | kCmdAllowBusy,
             Keys(), 0, "server", "1.0.0",
             "Synchronously saves the database(s) to disk and shuts down the Redis server.",
             "[NOSAVE | SAVE] [NOW] [FORCE] [ABORT]", ShutdownCommand,
             "O(N) when saving, where N is the total number of keys in all databases when saving "
             "data, otherwise O(1)"});
}

}  // namespace vireo
