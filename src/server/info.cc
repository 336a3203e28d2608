#include "server/info.h"

#include <fmt/format.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <climits>
#include <cstdio>
#include <fstream>
#include <vector>

#include "cluster/bus.h"
#include "cluster/cluster_state.h"
#include "persistence/aof.h"
#include "persistence/snapshot.h"
#include "scripting/lua_engine.h"
#include "scripting/scripting.h"
#include "server/server.h"
#include "util/allocator.h"
#include "util/clock.h"
#include "util/strings.h"

namespace vireo {
namespace {

// Redis's section order; INFO output always follows it.
enum Section : uint32_t {
  kServer = 1u << 0,
  kClients = 1u << 1,
  kMemory = 1u << 2,
  kPersistence = 1u << 3,
  kStats = 1u << 4,
  kReplication = 1u << 5,
  kCpu = 1u << 6,
  kModules = 1u << 7,
  kCommandstats = 1u << 8,
  kErrorstats = 1u << 9,
  kLatencystats = 1u << 10,
  kCluster = 1u << 11,
  kKeyspace = 1u << 12,
  // Only when named: neither the default nor "all"/"everything" include it (as in Redis).
  kDebug = 1u << 13,
};

constexpr uint32_t kDefaultSections = kServer | kClients | kMemory | kPersistence | kStats |
                                      kReplication | kCpu | kModules | kErrorstats | kCluster |
                                      kKeyspace;
constexpr uint32_t kAllSections = kDefaultSections | kCommandstats | kLatencystats;

uint32_t SectionMask(std::string_view name) {
  static constexpr std::array<std::pair<std::string_view, uint32_t>, 17> kNames = {{
      {"server", kServer},
      {"clients", kClients},
      {"memory", kMemory},
      {"persistence", kPersistence},
      {"stats", kStats},
      {"replication", kReplication},
      {"cpu", kCpu},
      {"modules", kModules},
      {"commandstats", kCommandstats},
      {"errorstats", kErrorstats},
      {"latencystats", kLatencystats},
      {"cluster", kCluster},
      {"keyspace", kKeyspace},
      {"debug", kDebug},
      {"default", kDefaultSections},
      {"all", kAllSections},
      {"everything", kAllSections},
  }};
  for (const auto& [n, mask] : kNames) {
    if (EqualsIgnoreCase(n, name)) return mask;
  }
  return 0;
}

// Appends "name:value\r\n".
class InfoWriter {
 public:
  explicit InfoWriter(std::string* out) : out_(out) {}
  void Header(std::string_view title) {
    if (!out_->empty()) out_->append("\r\n");
    out_->append("# ").append(title).append("\r\n");
  }
  template <typename T>
  void Field(std::string_view name, const T& value) {
    fmt::format_to(std::back_inserter(*out_), "{}:{}\r\n", name, value);
  }
  void Fixed2(std::string_view name, double value) {
    fmt::format_to(std::back_inserter(*out_), "{}:{:.2f}\r\n", name, value);
  }

 private:
  std::string* out_;
};

size_t ResidentSetBytes() {
  std::ifstream statm("/proc/self/statm");
  uint64_t pages_total = 0, pages_resident = 0;
  if (!(statm >> pages_total >> pages_resident)) return 0;
  return static_cast<size_t>(pages_resident) * static_cast<size_t>(sysconf(_SC_PAGESIZE));
}

std::string ExecutablePath() {
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : "";
}

std::string CpuSeconds(const timeval& tv) {
  return fmt::format("{}.{:06d}", tv.tv_sec, tv.tv_usec);
}

void ServerSection(Server& server, InfoWriter& w) {
  const ServerConfig& c = server.cfg();
  utsname name{};
  uname(&name);
  int64_t now_us = NowUs();
  int64_t uptime = (NowMs() - server.process().start_time_ms()) / 1000;
  w.Header("Server");
  w.Field("redis_version", kRedisCompatVersion);
  w.Field("vireo_version", VIREO_VERSION);
  w.Field("redis_git_sha1", "00000000");
  w.Field("redis_git_dirty", 0);
  w.Field("redis_build_id", "0");
  w.Field("redis_mode", c.cluster_enabled ? "cluster" : "standalone");
  w.Field("os", fmt::format("{} {} {}", name.sysname, name.release, name.machine));
  w.Field("arch_bits", sizeof(void*) * 8);
  w.Field("monotonic_clock", "POSIX clock_gettime");
  w.Field("multiplexing_api", "epoll");
  w.Field("atomicvar_api", "c11-builtin");
#if defined(__GNUC__)
  w.Field("gcc_version", fmt::format("{}.{}.{}", __GNUC__, __GNUC_MINOR__, __GNUC_PATCHLEVEL__));
#else
  w.Field("gcc_version", "0.0.0");
#endif
  w.Field("process_id", getpid());
  w.Field("process_supervised", "no");
  w.Field("run_id", server.process().run_id());
  w.Field("tcp_port", server.bound_port());
  w.Field("server_time_usec", now_us);
  w.Field("uptime_in_seconds", uptime);
  w.Field("uptime_in_days", uptime / 86400);
  w.Field("hz", server.process().hz());
  w.Field("configured_hz", c.hz);
  // Redis's LRU clock: seconds, wrapping at 24 bits.
  w.Field("lru_clock", (NowMs() / 1000) & ((1 << 24) - 1));
  w.Field("executable", ExecutablePath());
  w.Field("config_file", c.config_file);
  w.Field("io_threads_active", 0);
  // Only while SHUTDOWN waits for replicas, as in Redis.
  if (int64_t left = server.shutdown_in_ms(); left >= 0) w.Field("shutdown_in_milliseconds", left);
  int listener = 0;
  if (server.bound_port() != 0) {
    std::string binds;
    for (const std::string& b : c.bind) binds += ",bind=" + b;
    w.Field(fmt::format("listener{}", listener++),
            fmt::format("name=tcp{},port={}", binds, server.bound_port()));
  }
  if (!c.unixsocket.empty()) {
    w.Field(fmt::format("listener{}", listener++), fmt::format("name=unix,bind={}", c.unixsocket));
  }
}

void ClientsSection(Server& server, InfoWriter& w) {
  size_t connected = 0, blocked = 0, pubsub = 0, watching = 0, watched_keys = 0;
  size_t max_input = 0, max_output = 0;
  for (const auto& [id, client] : server.clients().All()) {
    if (client->closed) continue;
    // Replicas aren't counted as clients here, as in Redis (INFO replication lists them).
    if (!client->has(kClientReplica)) ++connected;
    if (client->has(kClientBlocked)) ++blocked;  // postponed by a pause too, as in Redis
    if (client->has(kClientPubsub)) ++pubsub;
    if (!client->watched_keys.empty()) ++watching;
    watched_keys += client->watched_keys.size();
    max_input = std::max(max_input, client->read_buffer.capacity);
    max_output = std::max(max_output, client->output().size() - client->output_written);
  }
  w.Header("Clients");
  w.Field("connected_clients", connected);
  // As Redis counts them: two bus links (in and out) per other known node.
  const cluster::ClusterState* cluster = server.cluster();
  w.Field("cluster_connections", cluster != nullptr ? (cluster->node_count() - 1) * 2 : size_t{0});
  w.Field("maxclients", server.cfg().maxclients);
  w.Field("client_recent_max_input_buffer", max_input);
  w.Field("client_recent_max_output_buffer", max_output);
  w.Field("blocked_clients", blocked);
  w.Field("tracking_clients", server.tracking().tracking_clients());
  w.Field("pubsub_clients", pubsub);
  w.Field("watching_clients", watching);
  w.Field("clients_in_timeout_table", server.blocking().engine().waiters_with_timeout());
  w.Field("total_watched_keys", watched_keys);
  w.Field("total_blocking_keys", server.blocking().engine().blocking_keys());
  w.Field("total_blocking_keys_on_nokey", server.blocking().engine().blocking_keys_on_nokey());
}

void MemorySection(Server& server, InfoWriter& w) {
  const ServerConfig& c = server.cfg();
  const MemoryFigures m = ServerReports(server).Memory();
  const size_t used = m.used, rss = m.rss, overhead = m.overhead;
  ServerStats& stats = server.stats();
  size_t system_memory =
      static_cast<size_t>(sysconf(_SC_PHYS_PAGES)) * static_cast<size_t>(sysconf(_SC_PAGESIZE));
  double frag = used > 0 ? static_cast<double>(rss) / static_cast<double>(used) : 0;
  auto percent = [](size_t part, size_t whole) {
    return fmt::format(
        "{:.2f}%",
        whole > 0 ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0.0);
  };
  w.Header("Memory");
  w.Field("used_memory", used);
  w.Field("used_memory_human", BytesToHuman(used));
  w.Field("used_memory_rss", rss);
  w.Field("used_memory_rss_human", BytesToHuman(rss));
  w.Field("used_memory_peak", stats.used_memory_peak);
  w.Field("used_memory_peak_human", BytesToHuman(stats.used_memory_peak));
  w.Field("used_memory_peak_perc", percent(used, stats.used_memory_peak));
  w.Field("used_memory_overhead", overhead);
  w.Field("used_memory_startup", 0);
  w.Field("used_memory_dataset", used - overhead);
  w.Field("used_memory_dataset_perc", percent(used - overhead, used));
  // jemalloc's own figures (read after an epoch refresh); without it, Redis's libc stand-ins.
  const allocator::Stats a = allocator::ReadStats().value_or(allocator::Stats{used, used, rss});
  w.Field("allocator_allocated", a.allocated);
  w.Field("allocator_active", a.active);
  w.Field("allocator_resident", a.resident);
  w.Field("total_system_memory", system_memory);
  w.Field("total_system_memory_human", BytesToHuman(system_memory));
  // The Lua VMs as Lua counts them; the FUNCTION engine only once something created it.
  // No interpreter yet (no script ran): nothing to report, and nothing built just to report it.
  Scripting* scripting = server.scripting_if_built();
  auto vm_bytes = [](LuaEngine& engine) {
    lua_State* L = engine.state();
    return static_cast<size_t>(lua_gc(L, LUA_GCCOUNT, 0)) * 1024 +
           static_cast<size_t>(lua_gc(L, LUA_GCCOUNTB, 0));
  };
  const size_t functions = scripting != nullptr ? scripting->function_count() : 0;
  const size_t vm_eval = scripting != nullptr ? vm_bytes(scripting->eval_engine()) : 0;
  const size_t vm_functions = functions > 0 ? vm_bytes(scripting->function_engine()) : 0;
  const size_t scripts_eval = scripting != nullptr ? scripting->scripts_memory() : 0;
  w.Field("used_memory_lua", vm_eval);
  w.Field("used_memory_vm_eval", vm_eval);
  w.Field("used_memory_lua_human", BytesToHuman(vm_eval));
  w.Field("used_memory_scripts_eval", scripts_eval);
  w.Field("number_of_cached_scripts", scripting != nullptr ? scripting->script_count() : 0);
  w.Field("number_of_functions", functions);
  w.Field("number_of_libraries", scripting != nullptr ? scripting->libraries().size() : 0);
  w.Field("used_memory_vm_functions", vm_functions);
  w.Field("used_memory_vm_total", vm_eval + vm_functions);
  w.Field("used_memory_vm_total_human", BytesToHuman(vm_eval + vm_functions));
  w.Field("used_memory_functions", 0);
  w.Field("used_memory_scripts", scripts_eval);
  w.Field("used_memory_scripts_human", BytesToHuman(scripts_eval));
  w.Field("maxmemory", c.maxmemory);
  w.Field("maxmemory_human", BytesToHuman(static_cast<uint64_t>(c.maxmemory)));
  w.Field("maxmemory_policy", c.maxmemory_policy);
  auto ratio = [](size_t part, size_t whole) {
    return whole > 0 ? static_cast<double>(part) / static_cast<double>(whole) : 0.0;
  };
  auto diff = [](size_t a, size_t b) { return static_cast<int64_t>(a) - static_cast<int64_t>(b); };
  w.Fixed2("allocator_frag_ratio", ratio(a.active, a.allocated));
  w.Field("allocator_frag_bytes", diff(a.active, a.allocated));
  w.Fixed2("allocator_rss_ratio", ratio(a.resident, a.active));
  w.Field("allocator_rss_bytes", diff(a.resident, a.active));
  w.Fixed2("rss_overhead_ratio", ratio(rss, a.resident));
  w.Field("rss_overhead_bytes", diff(rss, a.resident));
  w.Fixed2("mem_fragmentation_ratio", frag);
  w.Field("mem_fragmentation_bytes", static_cast<int64_t>(rss) - static_cast<int64_t>(used));
  w.Field("mem_not_counted_for_evict", server.memory().MemoryNotCountedForEviction());
  // The backlog and the replicas share one replication buffer (Redis 7's accounting).
  Replication& repl = server.replication();
  w.Field("mem_replication_backlog", repl.BacklogMemory());
  w.Field("mem_total_replication_buffers", repl.buffer().memory());
  w.Field("mem_clients_slaves", m.replica_clients + repl.ReplicaBufferExcess());
  w.Field("mem_clients_normal", m.clients);
  w.Field("mem_cluster_links", server.cluster_bus() ? server.cluster_bus()->links_memory() : 0);
  w.Field("mem_aof_buffer", server.aof().buffer_bytes());
  w.Field("mem_allocator", allocator::Name());
  w.Field("active_defrag_running", server.memory().defragmenter().effort());
  w.Field("lazyfree_pending_objects", server.memory().lazy_freer().pending_objects());
  w.Field("lazyfreed_objects", server.memory().lazy_freer().freed_objects());
}

void PersistenceSection(Server& server, InfoWriter& w) {
  w.Header("Persistence");
  const Server::LoadingMode loading = server.loading().mode;
  for (const auto& [name, value] : RdbInfoFields(server, loading == Server::LoadingMode::kSync,
                                                 loading == Server::LoadingMode::kAsync)) {
    w.Field(name, value);
  }
  for (const auto& [name, value] : server.aof().InfoFields()) w.Field(name, value);
  w.Field("module_fork_in_progress", 0);
  w.Field("module_fork_last_cow_size", 0);
  // Only while AOF is on, as in Redis.
  for (const auto& [name, value] : server.aof().InfoEnabledFields()) w.Field(name, value);
  for (const auto& [name, value] : server.LoadingInfoFields()) w.Field(name, value);
}

void StatsSection(Server& server, InfoWriter& w) {
  const ServerStats& s = server.stats();
  w.Header("Stats");
  w.Field("total_connections_received", s.total_connections_received);
  w.Field("total_commands_processed", s.total_commands_processed);
  w.Field("instantaneous_ops_per_sec", static_cast<int64_t>(s.ops_rate.PerSecond()));
  w.Field("total_net_input_bytes", s.total_net_input_bytes);
  w.Field("total_net_output_bytes", s.total_net_output_bytes);
  w.Field("total_net_repl_input_bytes", s.total_net_repl_input_bytes);
  w.Field("total_net_repl_output_bytes", s.total_net_repl_output_bytes);
  w.Fixed2("instantaneous_input_kbps", s.net_input_rate.PerSecond() / 1024);
  w.Fixed2("instantaneous_output_kbps", s.net_output_rate.PerSecond() / 1024);
  w.Field("instantaneous_input_repl_kbps", "0.00");
  w.Field("instantaneous_output_repl_kbps", "0.00");
  w.Field("rejected_connections", s.rejected_connections);
  w.Field("sync_full", s.sync_full);
  w.Field("sync_partial_ok", s.sync_partial_ok);
  w.Field("sync_partial_err", s.sync_partial_err);
  w.Field("expired_keys", s.expired_keys);
  w.Field("expired_subkeys", s.expired_subkeys);
  w.Field("expired_stale_perc", "0.00");
  w.Field("expired_time_cap_reached_count", s.expired_time_cap_reached_count);
  w.Field("expire_cycle_cpu_milliseconds", s.expire_cycle_us / 1000);
  w.Field("evicted_keys", s.evicted_keys);
  w.Field("evicted_clients", s.evicted_clients);
  const uint64_t exceeded_us = server.memory().current_eviction_exceeded_us();
  w.Field("total_eviction_exceeded_time", (s.total_eviction_exceeded_us + exceeded_us) / 1000);
  w.Field("current_eviction_exceeded_time", exceeded_us / 1000);
  w.Field("keyspace_hits", s.keyspace_hits);
  w.Field("keyspace_misses", s.keyspace_misses);
  w.Field("pubsub_channels", server.pubsub().channel_count());
  w.Field("pubsub_patterns", server.pubsub().pattern_count());
  w.Field("pubsubshard_channels", server.pubsub().shard_channel_count());
  w.Field("latest_fork_usec", server.children().last_fork_usec());
  w.Field("total_forks", server.children().total_forks());
  w.Field("migrate_cached_sockets", server.migrate_cached_sockets());
  w.Field("slave_expires_tracked_keys", 0);
  const Defragmenter& defrag = server.memory().defragmenter();
  const DefragStats& ds = defrag.stats();
  w.Field("active_defrag_hits", ds.counters.hits);
  w.Field("active_defrag_misses", ds.counters.misses);
  w.Field("active_defrag_key_hits", ds.key_hits);
  w.Field("active_defrag_key_misses", ds.key_misses);
  // Milliseconds, the pass in progress included.
  w.Field("total_active_defrag_time", ds.total_us / 1000 + defrag.current_ms());
  w.Field("current_active_defrag_time", defrag.current_ms());
  w.Field("tracking_total_keys", server.tracking().total_keys());
  w.Field("tracking_total_items", server.tracking().total_items());
  w.Field("tracking_total_prefixes", server.tracking().total_prefixes());
  w.Field("unexpected_error_replies", s.unexpected_error_replies);
  w.Field("total_error_replies", s.total_error_replies);
  w.Field("dump_payload_sanitizations", 0);
  w.Field("total_reads_processed", s.total_reads_processed);
  w.Field("total_writes_processed", s.total_writes_processed);
  w.Field("io_threaded_reads_processed", 0);
  w.Field("io_threaded_writes_processed", 0);
  w.Field("client_query_buffer_limit_disconnections", s.client_query_buffer_limit_disconnections);
  w.Field("client_output_buffer_limit_disconnections", s.client_output_buffer_limit_disconnections);
  w.Field("reply_buffer_shrinks", 0);
  w.Field("reply_buffer_expands", 0);
  const EventLoopStats& el = s.eventloop;
  w.Field("eventloop_cycles", el.cycles);
  w.Field("eventloop_duration_sum", el.duration_sum);
  w.Field("eventloop_duration_cmd_sum", el.cmd_sum);
  w.Field("instantaneous_eventloop_cycles_per_sec",
          static_cast<uint64_t>(el.cycles_rate.PerSecond()));
  w.Field("instantaneous_eventloop_duration_usec",
          static_cast<uint64_t>(el.duration_per_cycle.Average()));
  const AclRegistry& acl = server.acl();
  w.Field("acl_access_denied_auth", acl.denied_auth);
  w.Field("acl_access_denied_cmd", acl.denied_cmd);
  w.Field("acl_access_denied_key", acl.denied_key);
  w.Field("acl_access_denied_channel", acl.denied_channel);
}

void ReplicationSection(Server& server, InfoWriter& w) {
  w.Header("Replication");
  for (const auto& [name, value] : server.replication().InfoFields()) w.Field(name, value);
}

void CpuSection(InfoWriter& w) {
  rusage self{}, children{}, thread{};
  getrusage(RUSAGE_SELF, &self);
  getrusage(RUSAGE_CHILDREN, &children);
  // INFO runs on the thread that owns all data, which is the main thread of interest.
  getrusage(RUSAGE_THREAD, &thread);
  w.Header("CPU");
  w.Field("used_cpu_sys", CpuSeconds(self.ru_stime));
  w.Field("used_cpu_user", CpuSeconds(self.ru_utime));
  w.Field("used_cpu_sys_children", CpuSeconds(children.ru_stime));
  w.Field("used_cpu_user_children", CpuSeconds(children.ru_utime));
  w.Field("used_cpu_sys_main_thread", CpuSeconds(thread.ru_stime));
  w.Field("used_cpu_user_main_thread", CpuSeconds(thread.ru_utime));
}

void AddCommandStats(Server& server, const CommandSpec& spec,
                     std::vector<const CommandSpec*>* out) {
  const CommandStats& st = server.command_stats().For(spec);
  if (st.calls != 0 || st.failed_calls != 0 || st.rejected_calls != 0) out->push_back(&spec);
  for (const auto& [name, sub] : spec.subcommands) AddCommandStats(server, *sub, out);
}

void CommandstatsSection(Server& server, InfoWriter& w, std::string* out) {
  w.Header("Commandstats");
  std::vector<const CommandSpec*> used;
  for (const auto& [name, spec] : server.commands().all()) {
    AddCommandStats(server, *spec, &used);
  }
  std::sort(used.begin(), used.end(),
            [](const CommandSpec* a, const CommandSpec* b) { return a->name < b->name; });
  for (const CommandSpec* spec : used) {
    const CommandStats& st = server.command_stats().For(*spec);
    double per_call =
        st.calls > 0 ? static_cast<double>(st.usec) / static_cast<double>(st.calls) : 0;
    fmt::format_to(std::back_inserter(*out),
                   "cmdstat_{}:calls={},usec={},usec_per_call={:.2f},rejected_calls={},"
                   "failed_calls={}\r\n",
                   spec->name, st.calls, st.usec, per_call, st.rejected_calls, st.failed_calls);
  }
}

// latency-tracking's percentiles per command that has a histogram, in µs (Redis prints
// the bucket's highest value in ns / 1000 with three decimals).
void LatencystatsSection(Server& server, InfoWriter& w, std::string* out) {
  w.Header("Latencystats");
  if (!server.cfg().latency_tracking) return;
  const LatencyMonitor& monitor = server.latency();
  std::vector<const CommandSpec*> used;
  for (const auto& [name, spec] : server.commands().all()) {
    if (monitor.histogram(spec->id) != nullptr) used.push_back(spec.get());
    for (const auto& [sub_name, sub] : spec->subcommands) {
      if (monitor.histogram(sub->id) != nullptr) used.push_back(sub.get());
    }
  }
  std::sort(used.begin(), used.end(),
            [](const CommandSpec* a, const CommandSpec* b) { return a->name < b->name; });
  const std::vector<double>& percentiles = server.cfg().latency_tracking_info_percentiles;
  for (const CommandSpec* spec : used) {
    const LatencyHistogram& h = *monitor.histogram(spec->id);
    fmt::format_to(std::back_inserter(*out), "latency_percentiles_usec_{}:", spec->name);
    for (size_t i = 0; i < percentiles.size(); ++i) {
      fmt::format_to(std::back_inserter(*out), "{}p{}={:.3f}", i == 0 ? "" : ",",
                     FormatPercentile(percentiles[i]),
                     static_cast<double>(h.ValueAtPercentile(percentiles[i])) / 1000.0);
    }
    out->append("\r\n");
  }
}

void ErrorstatsSection(Server& server, InfoWriter& w, std::string* out) {
  w.Header("Errorstats");
  for (const auto& [code, count] : server.stats().error_counts) {
    fmt::format_to(std::back_inserter(*out), "errorstat_{}:count={}\r\n", code, count);
  }
}

void KeyspaceSection(Server& server, InfoWriter& w, std::string* out) {
  w.Header("Keyspace");
  for (int i = 0; i < server.db_count(); ++i) {
    Database& db = server.db(i);
    if (db.size() == 0) continue;
    // subexpiry: hashes with field TTLs, as Redis 7.4 reports.
    fmt::format_to(std::back_inserter(*out), "db{}:keys={},expires={},avg_ttl={},subexpiry={}\r\n",
                   i, db.size(), db.expires_size(), db.avg_ttl(), db.CountHashesWithFieldTtls());
  }
}

void DebugSection(Server& server, InfoWriter& w) {
  const EventLoopStats& el = server.stats().eventloop;
  w.Header("Debug");
  w.Field("eventloop_duration_aof_sum", el.aof_sum);
  w.Field("eventloop_duration_cron_sum", el.cron_sum);
  w.Field("eventloop_duration_max", el.duration_max);
  w.Field("eventloop_cmd_per_cycle_max", el.cmd_per_cycle_max);
}

std::string ClientFlags(Server& server, const Client& c) {
  std::string flags;
  if (c.has(kClientReplica)) flags += 'S';
  if (c.has(kClientMaster)) flags += 'M';
  if (c.has(kClientMonitor)) flags += 'O';
  if (c.has(kClientPubsub)) flags += 'P';
  if (c.has(kClientMulti)) flags += 'x';
  if (c.has(kClientBlocked)) flags += 'b';
  if (const TrackingState* t = server.tracking().StateOf(c); t != nullptr) {
    flags += 't';
    if (t->broken_redirect) flags += 'R';
    if (t->bcast) flags += 'B';
  }
  if (c.has(kClientDirtyCas)) flags += 'd';
  if (c.has(kClientCloseAfterReply)) flags += 'c';
  if (c.has(kClientCloseAsap)) flags += 'A';
  if (c.has(kClientUnixSocket)) flags += 'U';
  if (c.has(kClientReadonly)) flags += 'r';
  if (c.has(kClientNoEvict)) flags += 'e';
  if (c.has(kClientNoTouch)) flags += 'T';
  if (flags.empty()) flags += 'N';
  return flags;
}

}  // namespace

MemoryFigures ServerReports::Memory() const {
  Server& server = server_;
  MemoryFigures m;
  m.used = server.memory().UsedMemory();
  m.rss = ResidentSetBytes();
  ServerStats& stats = server.stats();
  stats.used_memory_peak = std::max(stats.used_memory_peak, m.used);
  m.peak = stats.used_memory_peak;
  for (const auto& [id, client] : server.clients().All()) {
    (client->has(kClientReplica) ? m.replica_clients : m.clients) +=
        MeasureClient(server.pubsub(), server.tracking(), *client).total();
  }
  m.overhead = std::min(m.used, m.clients + m.replica_clients);
  return m;
}

std::string BytesToHuman(uint64_t bytes) {
  auto d = static_cast<double>(bytes);
  if (bytes < 1024) return fmt::format("{}B", bytes);
  if (bytes < 1024ULL * 1024) return fmt::format("{:.2f}K", d / 1024);
  if (bytes < 1024ULL * 1024 * 1024) return fmt::format("{:.2f}M", d / (1024.0 * 1024));
  if (bytes < 1024ULL * 1024 * 1024 * 1024)
    return fmt::format("{:.2f}G", d / (1024.0 * 1024 * 1024));
  if (bytes < 1024ULL * 1024 * 1024 * 1024 * 1024) {
    return fmt::format("{:.2f}T", d / (1024.0 * 1024 * 1024 * 1024));
  }
  if (bytes < 1024ULL * 1024 * 1024 * 1024 * 1024 * 1024) {
    return fmt::format("{:.2f}P", d / (1024.0 * 1024 * 1024 * 1024 * 1024));
  }
  return fmt::format("{}B", bytes);
}

std::string ServerReports::Info(std::span<const std::string_view> sections) const {
  Server& server = server_;
  uint32_t mask = 0;
  if (sections.empty()) mask = kDefaultSections;
  for (std::string_view name : sections) mask |= SectionMask(name);
  std::string out;
  InfoWriter w(&out);
  if (mask & kServer) ServerSection(server, w);
  if (mask & kClients) ClientsSection(server, w);
  if (mask & kMemory) MemorySection(server, w);
  if (mask & kPersistence) PersistenceSection(server, w);
  if (mask & kStats) StatsSection(server, w);
  if (mask & kReplication) ReplicationSection(server, w);
  if (mask & kCpu) CpuSection(w);
  if (mask & kModules) w.Header("Modules");
  if (mask & kCommandstats) CommandstatsSection(server, w, &out);
  if (mask & kErrorstats) ErrorstatsSection(server, w, &out);
  if (mask & kLatencystats) LatencystatsSection(server, w, &out);
  if (mask & kCluster) {
    w.Header("Cluster");
    w.Field("cluster_enabled", server.cfg().cluster_enabled ? 1 : 0);
  }
  if (mask & kKeyspace) KeyspaceSection(server, w, &out);
  if (mask & kDebug) DebugSection(server, w);
  return out;
}

std::string ServerReports::ClientLine(Client& c, size_t argv_mem) const {
  Server& server = server_;
  int64_t now = NowMs();
  // Redis's figures: qbuf is the input not yet parsed (arguments of a command still arriving
  // are argv-mem, as Redis has moved them to argv; those of the running command stay in qbuf
  // too, as in Redis), multi-mem the queued arguments' bytes.
  size_t qbuf = c.read_buffer.size() - c.parser().parsed_prefix();
  size_t qbuf_free = c.read_buffer.capacity - c.read_buffer.end;
  if (argv_mem == 0) argv_mem = c.parser().pending_arg_bytes();
  size_t multi_mem = c.multi_queue_bytes();
  // Redis keeps the first 16 KB of unsent output in the client's own buffer (obl) and the rest
  // in a list of 16 KB blocks (oll blocks, omem bytes); report the one buffer the same way.
  constexpr size_t kReplyChunk = 16 * 1024;
  size_t pending = c.output().size() - c.output_written;
  size_t obl = std::min(pending, kReplyChunk);
  size_t omem = pending - obl;
  size_t oll = (omem + kReplyChunk - 1) / kReplyChunk;
  size_t rbs = c.reply_buffer_size;
  const PubsubEngine& pubsub = server.pubsub();
  // What the client really holds (client_eviction.h), the figure maxmemory-clients uses.
  size_t tot_mem = MeasureClient(server.pubsub(), server.tracking(), c).total();
  const TrackingState* tracking = server.tracking().StateOf(c);
  const int64_t redir = tracking == nullptr ? -1 : static_cast<int64_t>(tracking->redirect);
  std::string events = "r";
  if (c.write_pending) events += "w";
  return fmt::format(
      "id={} addr={} laddr={} fd={} name={} age={} idle={} flags={} db={} sub={} psub={} ssub={} "
      "multi={} qbuf={} qbuf-free={} argv-mem={} multi-mem={} rbs={} rbp={} obl={} oll={} "
      "omem={} tot-mem={} events={} cmd={} user={} redir={} resp={} lib-name={} lib-ver={}",
      c.id(), c.addr, c.laddr, c.closed ? -1 : c.fd(), c.name, (now - c.created_ms) / 1000,
      (now - c.last_interaction_ms) / 1000, ClientFlags(server, c), c.db_index(),
      pubsub.CountOf(c, PubsubKind::kChannel), pubsub.CountOf(c, PubsubKind::kPattern),
      pubsub.CountOf(c, PubsubKind::kShard),
      c.has(kClientMulti) ? static_cast<int64_t>(c.multi_queue.size()) : -1, qbuf, qbuf_free,
      argv_mem, multi_mem, rbs, c.reply_buffer_peak, obl, oll, omem, tot_mem, events,
      c.last_command, c.user(), redir, c.resp(), c.lib_name, c.lib_ver);
}

}  // namespace vireo
