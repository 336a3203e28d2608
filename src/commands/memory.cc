// MEMORY USAGE, STATS, DOCTOR, MALLOC-STATS, PURGE, HELP. Key browsers (RedisInsight and the
// like) size every key with MEMORY USAGE, so it must answer for every type.
//
// USAGE is exact rather than sampled: each type's MemoryUsage() already knows its size, so the
// SAMPLES count is validated and otherwise ignored.
#include <fmt/format.h>

#include <string>

#include "commands/families.h"
#include "commands/helpers.h"
#include "core/arg_parser.h"
#include "core/command_table.h"
#include "server/client.h"
#include "server/command_context.h"
#include "server/info.h"
#include "util/allocator.h"
#include "util/strings.h"

namespace vireo {
namespace {

// What one key costs: its table entry and bucket slot, a long key's heap bytes, the value, and
// the expire entry when it has a TTL.
size_t KeyMemory(const DbEntry& entry) {
  size_t total =
      sizeof(DbEntry) + sizeof(void*) + entry.key.HeapUsage() + entry.value.MemoryUsage();
  if (entry.has_expire()) total += sizeof(ExpireEntry) + sizeof(void*);
  return total;
}

void MemoryUsageCommand(CommandContext& ctx) {
  ArgParser args(ctx, 3);
  if (args.HasNext()) {
    // Only "SAMPLES count" may follow the key; a negative count is a syntax error too.
    if (args.remaining() != 2 || !args.Flag("SAMPLES") || args.Int() < 0) args.SyntaxError();
  }
  if (!args.Check()) return;
  // Like Redis: no keyspace hit/miss, no access-time update.
  const DbEntry* entry = ctx.db.Find(ctx.arg(2));
  if (entry == nullptr) {
    ctx.reply.Null();
    return;
  }
  ctx.reply.Integer(static_cast<int64_t>(KeyMemory(*entry)));
}

void MemoryStatsCommand(CommandContext& ctx) {
  const MemoryFigures m = ctx.reports().Memory();
  size_t keys = 0;
  int dbs_with_keys = 0;
  for (int i = 0; i < ctx.db_count(); ++i) {
    keys += ctx.database(i).size();
    if (ctx.database(i).size() > 0) ++dbs_with_keys;
  }
  const size_t dataset = m.used - m.overhead;
  auto ratio = [](size_t a, size_t b) {
    return b > 0 ? static_cast<double>(a) / static_cast<double>(b) : 0.0;
  };
  const int64_t rss_minus_used = static_cast<int64_t>(m.rss) - static_cast<int64_t>(m.used);
  auto field = [&](std::string_view name, auto value) {
    ctx.reply.Bulk(name);
    ctx.reply.Integer(static_cast<int64_t>(value));
  };
  auto ratio_field = [&](std::string_view name, double value) {
    ctx.reply.Bulk(name);
    ctx.reply.Double(value);
  };
  ctx.reply.Map(27 + static_cast<size_t>(dbs_with_keys));
  field("peak.allocated", m.peak);
  field("total.allocated", m.used);
  field("startup.allocated", 0);
  field("replication.backlog", 0);
  field("clients.slaves", 0);
  field("clients.normal", m.clients);
  field("cluster.links", 0);
  field("aof.buffer", 0);
  field("lua.caches", 0);
  field("functions.caches", 0);
  for (int i = 0; i < ctx.db_count(); ++i) {
    Database& db = ctx.database(i);
    if (db.size() == 0) continue;
    ctx.reply.Bulk(fmt::format("db.{}", i));
    ctx.reply.Map(2);
    ctx.reply.Bulk("overhead.hashtable.main");
    ctx.reply.Integer(static_cast<int64_t>(db.size() * (sizeof(DbEntry) + sizeof(void*))));
    ctx.reply.Bulk("overhead.hashtable.expires");
    ctx.reply.Integer(
        static_cast<int64_t>(db.expires_size() * (sizeof(ExpireEntry) + sizeof(void*))));
  }
  field("overhead.total", m.overhead);
  field("keys.count", keys);
  field("keys.bytes-per-key", keys > 0 ? dataset / keys : 0);
  field("dataset.bytes", dataset);
  ratio_field("dataset.percentage", 100.0 * ratio(dataset, m.used));
  ratio_field("peak.percentage", 100.0 * ratio(m.used, m.peak));
  field("allocator.allocated", m.used);
  field("allocator.active", m.used);
  field("allocator.resident", m.rss);
  ratio_field("allocator-fragmentation.ratio", 1.0);
  field("allocator-fragmentation.bytes", 0);
  ratio_field("allocator.rss-ratio", ratio(m.rss, m.used));
  field("allocator.rss-bytes", rss_minus_used);
  ratio_field("rss-overhead.ratio", 1.0);
  field("rss-overhead.bytes", 0);
  ratio_field("fragmentation", ratio(m.rss, m.used));
  field("fragmentation.bytes", rss_minus_used);
}

void MemoryDoctorCommand(CommandContext& ctx) {
  const MemoryFigures m = ctx.reports().Memory();
  // Redis's detector needs some data to judge by; so does this summary.
  if (m.used < 5 * 1024 * 1024) {
    ctx.reply.Verbatim(
        "Hi Sam, this instance is empty or is using very little memory, my issues detector "
        "can't be used in these conditions. Please, leave for your mission on Earth and fill it "
        "with some data. The new Sam and I will be back to our programming as soon as I "
        "finished rebooting.");
    return;
  }
  ctx.reply.Verbatim(fmt::format(
      "Hi Sam, I can't find any memory issue in your instance. I can only account for what "
      "occurs on this base: {} used, {} resident, {} peak.",
      BytesToHuman(m.used), BytesToHuman(m.rss), BytesToHuman(m.peak)));
}

void MemoryMallocStatsCommand(CommandContext& ctx) {
  if (!allocator::IsJemalloc()) {
    ctx.reply.Verbatim("Stats not supported for the current allocator");
    return;
  }
  ctx.reply.Verbatim(allocator::StatsReport());
}

void MemoryPurgeCommand(CommandContext& ctx) {
  allocator::Purge();
  ctx.reply.Ok();
}

void MemoryHelpCommand(CommandContext& ctx) {
  ReplyHelp(ctx, "MEMORY",
            {"DOCTOR", "    Return memory problems reports.", "MALLOC-STATS",
             "    Return internal statistics report from the memory allocator.", "PURGE",
             "    Attempt to purge dirty pages for reclamation by the allocator.", "STATS",
             "    Return information about the memory usage of the server.",
             "USAGE <key> [SAMPLES <count>]",
             "    Return memory in bytes used by <key> and its value. Nested values are",
             "    sampled up to <count> times (default: 5, 0 means sample all)."});
}

void MemoryContainerCommand(CommandContext& ctx) {
  ctx.reply.Error(
      fmt::format("ERR unknown subcommand or wrong number of arguments for '{}'. Try MEMORY HELP.",
                  ctx.argc() > 1 ? ctx.arg(1).substr(0, 128) : ""));
}

}  // namespace

void RegisterMemoryCommands(CommandTable& table) {
  constexpr const char* kGroup = "server";
  table.Add({"memory", -2, 0, Keys(), 0, kGroup, "4.0.0",
             "A container for memory diagnostics commands.", "", MemoryContainerCommand,
             "Depends on subcommand."});
  table.AddSubcommand(
      "memory", {"usage", -3, kCmdReadonly, Keys(KeyAt(2, kKeyRO)), 0, kGroup, "4.0.0",
                 "Estimates the memory usage of a key.", "key [SAMPLES count]", MemoryUsageCommand,
                 "O(N) where N is the number of samples."});
  table.AddSubcommand(
      "memory", {"stats", 2, 0, Keys(), 0, kGroup, "4.0.0", "Returns details about memory usage.",
                 "", MemoryStatsCommand, "O(1)"});
  table.AddSubcommand(
      "memory", {"doctor", 2, 0, Keys(), 0, kGroup, "4.0.0", "Outputs a memory problems report.",
                 "", MemoryDoctorCommand, "O(1)"});
  table.AddSubcommand("memory", {"malloc-stats", 2, 0, Keys(), 0, kGroup, "4.0.0",
                                 "Returns the allocator statistics.", "", MemoryMallocStatsCommand,
                                 "Depends on how much memory is allocated, could be slow"});
  table.AddSubcommand(
      "memory", {"purge", 2, 0, Keys(), 0, kGroup, "4.0.0", "Asks the allocator to release memory.",
                 "", MemoryPurgeCommand, "Depends on how much memory is allocated, could be slow"});
  table.AddSubcommand("memory", {"help", 2, kCmdLoading | kCmdStale, Keys(), 0, kGroup, "4.0.0",
                                 "Returns helpful text about the different subcommands.", "",
                                 MemoryHelpCommand, "O(1)"});
}

}  // namespace vireo
