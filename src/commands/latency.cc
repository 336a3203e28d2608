// LATENCY DOCTOR / GRAPH / HISTOGRAM / HISTORY / LATEST / RESET / HELP: the server's latency
// monitor (src/core/latency_monitor.h) and latency-tracking's per-command histograms.
#include <ctime>
#include <string>
#include <vector>

#include "commands/families.h"
#include "commands/helpers.h"
#include "core/child_processes.h"
#include "core/command_table.h"
#include "core/config.h"
#include "core/latency_monitor.h"
#include "persistence/aof.h"
#include "server/client.h"
#include "server/command_context.h"
#include "server/memory_view.h"
#include "util/strings.h"

namespace vireo {
namespace {

int64_t NowSeconds() { return static_cast<int64_t>(std::time(nullptr)); }

void LatencyLatestCommand(CommandContext& ctx) {
  const auto& events = ctx.latency().events();
  ctx.reply.Array(events.size());
  for (const auto& [event, series] : events) {
    ctx.reply.Array(4);
    ctx.reply.Bulk(event);
    ctx.reply.Integer(series.latest().time);
    ctx.reply.Integer(series.latest().ms);
    ctx.reply.Integer(series.max_ms);
  }
}

void LatencyHistoryCommand(CommandContext& ctx) {
  const LatencyMonitor::Series* series = ctx.latency().Find(ctx.arg(2));
  if (series == nullptr) {
    ctx.reply.EmptyArray();
    return;
  }
  std::vector<LatencyMonitor::Sample> samples;
  for (size_t j = 0; j < LatencyMonitor::kHistoryLen; ++j) {
    const auto& s = series->samples[(series->next + j) % LatencyMonitor::kHistoryLen];
    if (s.time != 0) samples.push_back(s);
  }
  ctx.reply.Array(samples.size());
  for (const auto& s : samples) {
    ctx.reply.Array(2);
    ctx.reply.Integer(s.time);
    ctx.reply.Integer(s.ms);
  }
}

void LatencyGraphCommand(CommandContext& ctx) {
  const LatencyMonitor& monitor = ctx.latency();
  auto it = monitor.events().find(ctx.arg(2));
  if (it == monitor.events().end()) {
    ctx.reply.Error("ERR No samples available for event '" + std::string(ctx.arg(2)) + "'");
    return;
  }
  ctx.reply.Verbatim(monitor.Graph(it->first, it->second, NowSeconds()));
}

void LatencyDoctorCommand(CommandContext& ctx) {
  LatencyDoctorInputs in;
  in.slowlog_log_slower_than = ctx.cfg().slowlog_log_slower_than;
  in.appendfsync_always = ctx.cfg().appendfsync == "always";
  in.hz = ctx.cfg().hz;
  // Redis's fork rate: GB of memory the fork copied the page tables of, per second of fork.
  if (const int64_t us = ctx.children().last_fork_usec(); us > 0) {
    in.fork_rate_gb_per_sec =
        static_cast<double>(ctx.memory().UsedMemory()) / 1e9 / (static_cast<double>(us) / 1e6);
  }
  ctx.reply.Verbatim(ctx.latency().Doctor(in, NowSeconds()));
}

void LatencyResetCommand(CommandContext& ctx) {
  LatencyMonitor& monitor = ctx.latency();
  if (ctx.argc() == 2) {
    ctx.reply.Integer(static_cast<int64_t>(monitor.Reset("")));
    return;
  }
  size_t resets = 0;
  // An empty name matches no event (Reset("") would forget them all).
  for (size_t i = 2; i < ctx.argc(); ++i) {
    if (!ctx.arg(i).empty()) resets += monitor.Reset(ctx.arg(i));
  }
  ctx.reply.Integer(static_cast<int64_t>(resets));
}

// A command's histogram entry: {calls, histogram_usec: {bucket: cumulative}}.
void ReplyHistogram(CommandContext& ctx, const CommandSpec& spec, const LatencyHistogram& h) {
  ctx.reply.Bulk(spec.name);
  ctx.reply.Map(2);
  ctx.reply.Bulk("calls");
  ctx.reply.Integer(static_cast<int64_t>(h.total()));
  ctx.reply.Bulk("histogram_usec");
  const auto buckets = h.PowerOfTwoBuckets();
  ctx.reply.Map(buckets.size());
  for (const auto& [usec, count] : buckets) {
    ctx.reply.Integer(usec);
    ctx.reply.Integer(static_cast<int64_t>(count));
  }
}

// `spec` itself and then its subcommands, those that have a histogram.
void CollectWithHistograms(const LatencyMonitor& monitor, const CommandSpec& spec,
                           std::vector<const CommandSpec*>* out) {
  if (monitor.histogram(spec.id) != nullptr) out->push_back(&spec);
  for (const auto& [name, sub] : spec.subcommands) {
    if (monitor.histogram(sub->id) != nullptr) out->push_back(sub.get());
  }
}

void LatencyHistogramCommand(CommandContext& ctx) {
  const LatencyMonitor& monitor = ctx.latency();
  std::vector<const CommandSpec*> specs;
  if (ctx.argc() == 2) {
    for (const auto& [name, spec] : ctx.commands().all()) {
      CollectWithHistograms(monitor, *spec, &specs);
    }
  } else {
    for (size_t i = 2; i < ctx.argc(); ++i) {
      if (const CommandSpec* spec = ctx.commands().FindByFullName(ctx.arg(i))) {
        CollectWithHistograms(monitor, *spec, &specs);
      }
    }
  }
  ctx.reply.Map(specs.size());
  for (const CommandSpec* spec : specs) ReplyHistogram(ctx, *spec, *monitor.histogram(spec->id));
}

void LatencyHelpCommand(CommandContext& ctx) {
  ReplyHelp(ctx, "LATENCY",
            {"DOCTOR", "    Return a human readable latency analysis report.", "GRAPH <event>",
             "    Return an ASCII latency graph for the <event> class.", "HISTORY <event>",
             "    Return time-latency samples for the <event> class.", "LATEST",
             "    Return the latest latency samples for all events.", "RESET [<event> ...]",
             "    Reset latency data of one or more <event> classes.",
             "    (default: reset all data for all event classes)", "HISTOGRAM [COMMAND ...]",
             "    Return a cumulative distribution of latencies in the format of a histogram for "
             "the specified command names.",
             "    If no commands are specified then all histograms are replied."});
}

void LatencyContainerCommand(CommandContext& ctx) {
  ctx.reply.Error("ERR unknown subcommand or wrong number of arguments for '" +
                  std::string(ctx.argc() > 1 ? ctx.arg(1).substr(0, 128) : "") +
                  "'. Try LATENCY HELP.");
}

}  // namespace

void RegisterLatencyCommands(CommandTable& table) {
  constexpr const char* kGroup = "server";
  constexpr uint64_t kFlags = kCmdAdmin | kCmdNoScript | kCmdLoading | kCmdStale;
  table.Add({"latency", -2, 0, Keys(), 0, kGroup, "2.8.13",
             "A container for latency diagnostics commands.", "", LatencyContainerCommand,
             "Depends on subcommand."});
  table.AddSubcommand("latency", {"doctor", 2, kFlags, Keys(), 0, kGroup, "2.8.13",
                                  "Returns a human-readable latency analysis report.", "",
                                  LatencyDoctorCommand, "O(1)"});
  table.AddSubcommand(
      "latency", {"graph", 3, kFlags, Keys(), 0, kGroup, "2.8.13",
                  "Returns a latency graph for an event.", "event", LatencyGraphCommand, "O(1)"});
  table.AddSubcommand(
      "latency", {"histogram", -2, kFlags, Keys(), 0, kGroup, "7.0.0",
                  "Returns the cumulative distribution of latencies of a subset or all commands.",
                  "[command:string ...]", LatencyHistogramCommand,
                  "O(N) where N is the number of commands with latency information being "
                  "retrieved."});
  table.AddSubcommand("latency", {"history", 3, kFlags, Keys(), 0, kGroup, "2.8.13",
                                  "Returns timestamp-latency samples for an event.", "event",
                                  LatencyHistoryCommand, "O(1)"});
  table.AddSubcommand("latency", {"latest", 2, kFlags, Keys(), 0, kGroup, "2.8.13",
                                  "Returns the latest latency samples for all events.", "",
                                  LatencyLatestCommand, "O(1)"});
  table.AddSubcommand("latency", {"reset", -2, kFlags, Keys(), 0, kGroup, "2.8.13",
                                  "Resets the latency data for one or more events.", "[event ...]",
                                  LatencyResetCommand, "O(1)"});
  table.AddSubcommand("latency", {"help", 2, kCmdLoading | kCmdStale, Keys(), 0, kGroup, "2.8.13",
                                  "Returns helpful text about the different subcommands.", "",
                                  LatencyHelpCommand, "O(1)"});
}

}  // namespace vireo
