// SLOWLOG and COMMANDLOG (Valkey 8.1). COMMANDLOG generalises the slow log to requests and
// replies larger than a size: three logs of one shape, the slow one being SLOWLOG's own (as in
// Valkey). The logs are kept in src/server/slowlog.h; the dispatcher feeds them.
#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <deque>
#include <string>

#include "commands/families.h"
#include "commands/helpers.h"
#include "core/arg_parser.h"
#include "core/command_table.h"
#include "server/command_context.h"
#include "server/slowlog.h"
#include "util/strings.h"

namespace vireo {
namespace {

// Redis's reply for handlers that parse their own subcommand arguments.
void ReplySubcommandSyntaxError(CommandContext& ctx) {
  ctx.reply.Error(
      fmt::format("ERR unknown subcommand or wrong number of arguments for '{}'. Try {} HELP.",
                  ctx.arg(1).substr(0, 128), ToUpper(ctx.arg(0))));
}

// The newest `count` entries (-1: all), each [id, time, value, argv, peer, name].
void ReplyEntries(CommandContext& ctx, const Slowlog& log, int64_t count) {
  const std::deque<SlowlogEntry>& entries = log.entries();
  const size_t n =
      count < 0 ? entries.size() : std::min(static_cast<size_t>(count), entries.size());
  ReplyBuilder& r = ctx.reply;
  r.Array(n);
  for (size_t i = 0; i < n; ++i) {
    const SlowlogEntry& e = entries[i];
    r.Array(6);
    r.Integer(static_cast<int64_t>(e.id));
    r.Integer(e.timestamp);
    r.Integer(e.duration_us);
    r.Array(e.argv.size());
    for (const std::string& arg : e.argv) r.Bulk(arg);
    r.Bulk(e.peer);
    r.Bulk(e.client_name);
  }
}

constexpr std::string_view kBadCount = "ERR count should be greater than or equal to -1";

void SlowlogGetCommand(CommandContext& ctx) {
  if (ctx.argc() > 3) {
    ReplySubcommandSyntaxError(ctx);
    return;
  }
  int64_t count = 10;
  if (ctx.argc() == 3) {
    ArgParser args(ctx, 2);
    count = args.IntInRange(-1, LONG_MAX, kBadCount);
    if (!args.Check()) return;
  }
  ReplyEntries(ctx, ctx.slowlog(), count);
}

void SlowlogLenCommand(CommandContext& ctx) {
  ctx.reply.Integer(static_cast<int64_t>(ctx.slowlog().size()));
}

void SlowlogResetCommand(CommandContext& ctx) {
  ctx.slowlog().Reset();
  ctx.reply.Ok();
}

void SlowlogHelpCommand(CommandContext& ctx) {
  ReplyHelp(ctx, "SLOWLOG",
            {"GET [<count>]",
             "    Return top <count> entries from the slowlog (default: 10, -1 mean all).",
             "    Entries are made of:",
             "    id, timestamp, time in microseconds, arguments array, client IP and port,",
             "    client name", "LEN", "    Return the length of the slowlog.", "RESET",
             "    Reset the slowlog."});
}

// The log `arg` names, or nullptr after replying Valkey's error.
Slowlog* LogNamed(CommandContext& ctx, std::string_view arg) {
  CommandlogType type;
  if (EqualsIgnoreCase(arg, "slow")) {
    type = CommandlogType::kSlow;
  } else if (EqualsIgnoreCase(arg, "large-request")) {
    type = CommandlogType::kLargeRequest;
  } else if (EqualsIgnoreCase(arg, "large-reply")) {
    type = CommandlogType::kLargeReply;
  } else {
    ctx.reply.Error("ERR type should be one of the following: slow, large-request, large-reply");
    return nullptr;
  }
  return &ctx.commandlog(type);
}

// COMMANDLOG GET count type: the count is checked first, as in Valkey.
void CommandlogGetCommand(CommandContext& ctx) {
  ArgParser args(ctx, 2);
  const int64_t count = args.IntInRange(-1, LONG_MAX, kBadCount);
  if (!args.Check()) return;
  if (Slowlog* log = LogNamed(ctx, ctx.arg(3))) ReplyEntries(ctx, *log, count);
}

void CommandlogLenCommand(CommandContext& ctx) {
  if (Slowlog* log = LogNamed(ctx, ctx.arg(2))) {
    ctx.reply.Integer(static_cast<int64_t>(log->size()));
  }
}

void CommandlogResetCommand(CommandContext& ctx) {
  if (Slowlog* log = LogNamed(ctx, ctx.arg(2))) {
    log->Reset();
    ctx.reply.Ok();
  }
}

void CommandlogHelpCommand(CommandContext& ctx) {
  ReplyHelp(ctx, "COMMANDLOG",
            {"GET <count> <type>",
             "    Return top <count> entries of the specified <type> from the commandlog (-1 "
             "mean all).",
             "    Entries are made of:", "    id, timestamp,",
             "        time in microseconds for type of slow,",
             "        or size in bytes for type of large-request,",
             "        or size in bytes for type of large-reply",
             "    arguments array, client IP and port,", "    client name", "LEN <type>",
             "    Return the length of the specified type of commandlog.", "RESET <type>",
             "    Reset the specified type of commandlog."});
}

}  // namespace

void RegisterCommandlogCommands(CommandTable& table) {
  constexpr const char* kHelpSummary = "Returns helpful text about the different subcommands.";
  constexpr uint32_t kLogFlags = kCmdAdmin | kCmdLoading | kCmdStale;

  table.Add({"slowlog", -2, 0, Keys(), 0, "server", "2.2.12", "A container for slow log commands.",
             "", nullptr, "Depends on subcommand."});
  table.AddSubcommand("slowlog", {"get", -2, kLogFlags, Keys(), 0, "server", "2.2.12",
                                  "Returns the slow log's entries.", "[count]", SlowlogGetCommand,
                                  "O(N) where N is the number of entries returned"});
  table.AddSubcommand("slowlog", {"help", 2, kCmdLoading | kCmdStale, Keys(), 0, "server", "6.2.0",
                                  kHelpSummary, "", SlowlogHelpCommand, "O(1)"});
  table.AddSubcommand(
      "slowlog", {"len", 2, kLogFlags, Keys(), 0, "server", "2.2.12",
                  "Returns the number of entries in the slow log.", "", SlowlogLenCommand, "O(1)"});
  table.AddSubcommand("slowlog", {"reset", 2, kLogFlags, Keys(), 0, "server", "2.2.12",
                                  "Clears all entries from the slow log.", "", SlowlogResetCommand,
                                  "O(N) where N is the number of entries in the slowlog"});

  // Valkey 8.1's rows (src/commands/commandlog*.json; 9.2's RECENCY | MAGNITUDE are not here).
#define VIREO_COMMANDLOG_TYPE "type=<slow | large-request | large-reply>"
  table.Add({"commandlog", -2, 0, Keys(), 0, "server", "8.1.0",
             "A container for command log commands.", "", nullptr, "Depends on subcommand."});
  table.AddSubcommand(
      "commandlog", {"get", 4, kLogFlags, Keys(), 0, "server", "8.1.0",
                     "Returns the specified command log's entries.", "count " VIREO_COMMANDLOG_TYPE,
                     CommandlogGetCommand, "O(N) where N is the number of entries returned"});
  table.AddSubcommand("commandlog", {"help", 2, kCmdLoading | kCmdStale, Keys(), 0, "server",
                                     "8.1.0", "Shows helpful text about the different subcommands.",
                                     "", CommandlogHelpCommand, "O(1)"});
  table.AddSubcommand("commandlog",
                      {"len", 3, kLogFlags, Keys(), 0, "server", "8.1.0",
                       "Returns the number of entries in the specified type of command log.",
                       VIREO_COMMANDLOG_TYPE, CommandlogLenCommand, "O(1)"});
  table.AddSubcommand("commandlog", {"reset", 3, kLogFlags, Keys(), 0, "server", "8.1.0",
                                     "Clears entries from the specified type of command log.",
                                     VIREO_COMMANDLOG_TYPE, CommandlogResetCommand,
                                     "O(N) where N is the number of entries in the commandlog"});
#undef VIREO_COMMANDLOG_TYPE
}

}  // namespace vireo
