// Server configuration: redis.conf syntax, command-line overrides and CONFIG GET/SET/REWRITE.
//
// Each option is declared once with its type, default and (for mutable ones) whether CONFIG
// SET may change it at run time; the file parser, the command line and CONFIG all go through
// the same table.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace vireo {

// Keyspace notification classes selected by notify-keyspace-events; the letters are Redis's.
enum KeyspaceEventFlag : uint32_t {
  kNotifyKeyspace = 1u << 0,  // K: __keyspace@<db>__:<key> channel
  kNotifyKeyevent = 1u << 1,  // E: __keyevent@<db>__:<event> channel
  kNotifyGeneric = 1u << 2,   // g: DEL, EXPIRE, RENAME, ...
  kNotifyString = 1u << 3,    // $
  kNotifyList = 1u << 4,      // l
  kNotifySet = 1u << 5,       // s
  kNotifyHash = 1u << 6,      // h
  kNotifyZset = 1u << 7,      // z
  kNotifyExpired = 1u << 8,   // x
  kNotifyEvicted = 1u << 9,   // e
  kNotifyStream = 1u << 10,   // t
  kNotifyKeyMiss = 1u << 11,  // m (not included in A)
  kNotifyModule = 1u << 12,   // d
  kNotifyNew = 1u << 13,      // n (not included in A)
  // Redis 8.2: a key's value replaced by a write that sets it, and that write changing its type.
  kNotifyOverwritten = 1u << 14,  // o (not included in A)
  kNotifyTypeChanged = 1u << 15,  // c (not included in A)
  // A: every class except m, n, o and c, as in Redis.
  kNotifyAll = kNotifyGeneric | kNotifyString | kNotifyList | kNotifySet | kNotifyHash |
               kNotifyZset | kNotifyExpired | kNotifyEvicted | kNotifyStream | kNotifyModule,
};

// One class of client-output-buffer-limit; 0 means no limit.
struct ClientBufferLimit {
  int64_t hard_bytes = 0;
  int64_t soft_bytes = 0;
  int64_t soft_seconds = 0;
};
// Index into ServerConfig::client_obuf_limits.
enum ClientBufferClass { kObufNormal = 0, kObufReplica = 1, kObufPubsub = 2 };

struct ServerConfig {
  // As Redis without a config file: every interface, protected-mode guarding a passwordless
  // default user (conf/vireo.conf, like redis.conf, binds loopback only).
  std::vector<std::string> bind = {"*", "-::*"};
  int port = 6379;
  std::string unixsocket;
  int unixsocketperm = 0;
  int tcp_backlog = 511;
  int tcp_keepalive = 300;
  int timeout = 0;
  int maxclients = 10000;
  bool protected_mode = true;
  std::string requirepass;
  // ACL: the users file, `user` lines of the config file (name then rules), the channels new
  // users get, and the ACL LOG length.
  std::string aclfile;
  std::vector<std::vector<std::string>> acl_users;
  // rename-command lines, applied to the command table at start-up (CommandTable::Rename): the
  // command's name, its new name ("" removes it) and where the line was, for the error.
  struct CommandRename {
    std::string from;
    std::string to;
    std::string where;
  };
  std::vector<CommandRename> rename_commands;
  std::string acl_pubsub_default = "resetchannels";
  int64_t acllog_max_len = 128;
  int databases = 16;
  std::string loglevel = "notice";
  std::string logfile;
  bool daemonize = false;
  std::string pidfile;
  int64_t proto_max_bulk_len = 512LL * 1024 * 1024;
  int64_t client_query_buffer_limit = 1024LL * 1024 * 1024;
  int hz = 10;  // always within 1..500: CONFIG SET accepts any value >= 0 and clamps, like Redis
  int64_t slowlog_log_slower_than = 10000;
  int64_t slowlog_max_len = 128;
  // COMMANDLOG's size logs (Valkey 8.1): the threshold in bytes (-1 disables) and the length.
  int64_t commandlog_request_larger_than = 1024 * 1024;
  int64_t commandlog_large_request_max_len = 128;
  int64_t commandlog_reply_larger_than = 1024 * 1024;
  int64_t commandlog_large_reply_max_len = 128;
  std::string save = "3600 1 300 100 60 10000";  // as CONFIG GET shows save_params
  std::vector<std::pair<int64_t, int64_t>> save_params = {{3600, 1}, {300, 100}, {60, 10000}};
  bool appendonly = false;
  std::string appendfilename = "appendonly.aof";
  std::string appendfsync = "everysec";
  // AOF (src/persistence/aof.*).
  std::string appenddirname = "appendonlydir";
  bool aof_use_rdb_preamble = true;
  int64_t auto_aof_rewrite_percentage = 100;
  int64_t auto_aof_rewrite_min_size = 64LL * 1024 * 1024;
  bool aof_load_truncated = true;
  bool aof_rewrite_incremental_fsync = true;
  bool aof_timestamp_enabled = false;
  bool no_appendfsync_on_rewrite = false;
  std::string dir = ".";  // absolute path once a `dir` directive has chdir()ed there
  std::string dbfilename = "dump.rdb";
  bool rdbcompression = true;
  bool rdbchecksum = true;
  bool stop_writes_on_bgsave_error = true;
  bool rdb_del_sync_files = false;
  bool rdb_save_incremental_fsync = true;
  // Hidden test knobs (Redis's rdb-key-save-delay / key-load-delay): microseconds to sleep per
  // key while saving / loading an RDB, so tests can catch a save or load in progress.
  int64_t rdb_key_save_delay = 0;
  int64_t key_load_delay = 0;
  std::string sanitize_dump_payload = "no";
  int64_t maxmemory = 0;
  std::string maxmemory_policy = "noeviction";
  int64_t maxmemory_samples = 5;
  int64_t maxmemory_eviction_tenacity = 10;
  int64_t lfu_log_factor = 10;
  int64_t lfu_decay_time = 1;
  int64_t list_max_listpack_size = -2;
  int64_t list_compress_depth = 0;
  int64_t hash_max_listpack_entries = 512;
  int64_t hash_max_listpack_value = 64;
  int64_t set_max_intset_entries = 512;
  int64_t set_max_listpack_entries = 128;
  int64_t set_max_listpack_value = 64;
  int64_t zset_max_listpack_entries = 128;
  int64_t zset_max_listpack_value = 64;
  int64_t hll_sparse_max_bytes = 3000;
  int64_t stream_node_max_bytes = 4096;
  int64_t stream_node_max_entries = 100;
  int64_t stream_idmp_duration = 100;  // seconds (Redis 8.6)
  int64_t stream_idmp_maxsize = 100;
  std::string notify_keyspace_events;  // as CONFIG GET shows notify_keyspace_flags
  uint32_t notify_keyspace_flags = 0;  // KeyspaceEventFlag bits
  int64_t busy_reply_threshold = 5000;
  // Keys the client-side caching table remembers before it starts forgetting (and
  // invalidating) some; 0: no limit.
  int64_t tracking_table_max_keys = 1000000;
  bool lazyfree_lazy_user_del = false;
  bool lazyfree_lazy_user_flush = false;
  bool lazyfree_lazy_eviction = false;
  bool lazyfree_lazy_expire = false;
  bool lazyfree_lazy_server_del = false;
  bool replica_lazy_flush = false;
  int64_t latency_monitor_threshold = 0;
  bool latency_tracking = true;
  std::vector<double> latency_tracking_info_percentiles = {50.0, 99.0, 99.9};
  // Replication (src/replication/).
  std::string replicaof;  // "host port" while following a master (the replicaof directive)
  std::string masterauth;
  std::string masteruser;
  bool repl_diskless_sync = true;
  int64_t repl_diskless_sync_delay = 5;
  int64_t repl_diskless_sync_max_replicas = 0;
  std::string repl_diskless_load = "disabled";
  int64_t loading_process_events_interval_bytes = 2 * 1024 * 1024;
  int64_t repl_backlog_size = 1 << 20;
  int64_t repl_backlog_ttl = 3600;
  int64_t repl_ping_replica_period = 10;
  int64_t repl_timeout = 60;
  bool repl_disable_tcp_nodelay = false;
  bool replica_read_only = true;
  bool replica_serve_stale_data = true;
  bool replica_ignore_maxmemory = true;
  bool replica_announced = true;
  int64_t replica_priority = 100;
  std::string replica_announce_ip;
  int64_t replica_announce_port = 0;
  int64_t min_replicas_to_write = 0;
  int64_t min_replicas_max_lag = 10;
  std::string client_output_buffer_limit =
      "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60";  // as CONFIG GET
  std::array<ClientBufferLimit, 3> client_obuf_limits = {
      {{0, 0, 0}, {256LL << 20, 64LL << 20, 60}, {32LL << 20, 8LL << 20, 60}}};
  // maxmemory-clients: bytes, or -N for N% of maxmemory (stored as Redis stores it); 0 = off.
  int64_t maxmemory_clients = 0;
  // TLS (src/security/tls.h). tls-port 0: no TLS listener.
  int tls_port = 0;
  std::string tls_cert_file;
  std::string tls_key_file;
  std::string tls_key_file_pass;
  std::string tls_client_cert_file;  // outgoing links; "" = tls-cert-file
  std::string tls_client_key_file;
  std::string tls_client_key_file_pass;
  std::string tls_dh_params_file;
  std::string tls_ca_cert_file;
  std::string tls_ca_cert_dir;
  std::string tls_auth_clients = "yes";  // yes, no, optional
  std::string tls_protocols;             // "" = TLSv1.2 and TLSv1.3
  std::string tls_ciphers;
  std::string tls_ciphersuites;
  bool tls_prefer_server_ciphers = false;
  bool tls_session_caching = true;
  int64_t tls_session_cache_size = 20 * 1024;
  int64_t tls_session_cache_timeout = 300;
  bool tls_replication = false;  // the replica's link to its master uses TLS
  bool tls_cluster = false;

  // Redis Cluster (src/cluster/). The announce-* values are what this node tells the others
  // and clients about itself; empty or 0 means "what we listen on".
  bool cluster_enabled = false;
  std::string cluster_config_file = "nodes.conf";
  int64_t cluster_node_timeout = 15000;  // ms
  int cluster_port = 0;                  // 0: port + 10000
  std::string cluster_announce_ip;
  int cluster_announce_port = 0;
  int cluster_announce_tls_port = 0;
  int cluster_announce_bus_port = 0;
  std::string cluster_announce_hostname;
  std::string cluster_announce_human_nodename;
  bool cluster_require_full_coverage = true;
  bool cluster_allow_reads_when_down = false;
  bool cluster_allow_pubsubshard_when_down = true;
  int cluster_replica_validity_factor = 10;
  int cluster_migration_barrier = 1;
  bool cluster_allow_replica_migration = true;
  bool cluster_replica_no_failover = false;
  std::string cluster_preferred_endpoint_type = "ip";  // ip, hostname, unknown-endpoint
  int64_t cluster_link_sendbuf_limit = 0;              // bytes, 0 = no limit
  int64_t cluster_ping_interval = 0;                   // hidden (tests): 0 = node-timeout / 2
  std::string config_file;  // absolute path of the file we started from ("" if none)
  // Redis 7's protected actions: "no" (the default: refused), "yes", or "local" (allowed from
  // loopback and unix-socket connections only). Settable only at start-up.
  std::string enable_protected_configs = "no";
  std::string enable_debug_command = "no";
  std::string enable_module_command = "no";

  // The process and its tuning (src/core/config_process.cc; docs/configuration.md says
  // which of these vireo honours and why the others are accepted without effect).
  bool dynamic_hz = true;  // the cron runs faster with many clients
  bool activerehashing = true;
  int64_t active_expire_effort = 1;  // 1..10: a bigger share of each cron tick for expiry
  int64_t shutdown_timeout = 10;
  // shutdown-on-sigint / -sigterm: ShutdownSignalFlag bits; 0 is "default".
  uint32_t shutdown_on_sigint = 0;
  uint32_t shutdown_on_sigterm = 0;
  // oom-score-adj: no, yes (= relative) or absolute.
  std::string oom_score_adj = "no";
  std::array<int64_t, 3> oom_score_adj_values = {0, 200, 800};  // master, replica, child
  bool set_proc_title = true;
  std::string proc_title_template = "{title} {listen-addr} {server-mode}";
  std::string locale_collate;
  bool syslog_enabled = false;
  std::string syslog_ident = "redis";
  std::string syslog_facility = "local0";
  std::string supervised = "no";
  bool always_show_logo = false;
  bool crash_log_enabled = true;
  bool crash_memcheck_enabled = true;
  bool use_exit_on_panic = false;
  bool disable_thp = true;
  int64_t watchdog_period = 0;
  std::string ignore_warnings;
  std::string bind_source_addr;
  int64_t socket_mark_id = 0;
  std::string server_cpulist, bio_cpulist, aof_rewrite_cpulist, bgsave_cpulist;
  int64_t io_threads = 1;
  bool io_threads_do_reads = false;
  bool jemalloc_bg_thread = true;
  bool activedefrag = false;
  int64_t active_defrag_ignore_bytes = 100LL << 20;
  int64_t active_defrag_threshold_lower = 10;
  int64_t active_defrag_threshold_upper = 100;
  int64_t active_defrag_cycle_min = 1;
  int64_t active_defrag_cycle_max = 25;
  int64_t active_defrag_max_scan_fields = 1000;
  bool aof_disable_auto_gc = false;
  bool replica_ignore_disk_write_errors = false;
  std::string propagation_error_behavior = "ignore";
  std::string req_res_logfile;
  int64_t client_default_resp = 2;
};

// shutdown-on-sigint / shutdown-on-sigterm flags (SHUTDOWN's modifiers).
enum ShutdownSignalFlag : uint32_t {
  kShutdownSave = 1u << 0,
  kShutdownNosave = 1u << 1,
  kShutdownNow = 1u << 2,
  kShutdownForce = 1u << 3,
};

// Whether a protected action (DEBUG, MODULE, CONFIG SET of a protected config) is allowed for
// a client, given its enable-* setting and whether the client connected locally.
bool ProtectedActionAllowed(std::string_view setting, bool local_client);

// proc-title-template's expansion: {name} is `value(name)` (nullopt: an unknown variable, and
// the template is refused), "{{" a literal brace. False for a malformed template.
bool ExpandProcTitleTemplate(
    std::string_view tmpl,
    const std::function<std::optional<std::string>(std::string_view var)>& value, std::string* out);

class CommandTable;
// Applies the rename-command lines of `cfg` to `table` (main.cc, the embedding API, before the
// server is built). Returns "" or the fatal configuration error, in Redis's words.
std::string ApplyCommandRenames(const ServerConfig& cfg, CommandTable& table);

class Config {
 public:
  // kMemory takes "1gb"-style values; kOctal is parsed and shown in base 8 (unixsocketperm);
  // kList options take several arguments (CONFIG SET splits its single value on spaces).
  enum class Type { kBool, kInt, kMemory, kString, kEnum, kList, kOctal };
  struct Option {
    std::string name;
    std::string alias;  // older name also accepted (e.g. hash-max-ziplist-entries), or ""
    Type type;
    bool mutable_at_runtime;
    // Mutable in principle but refused by CONFIG SET, like Redis's PROTECTED_CONFIG (dir,
    // dbfilename) with enable-protected-configs at its default "no".
    bool protected_config = false;
    // An empty value means "unset": CONFIG REWRITE then removes the directive (requirepass...).
    bool empty_is_null = false;
    // Redis's HIDDEN_CONFIG: only an exact name reaches it (CONFIG GET globs skip it).
    bool hidden = false;
    // Redis's DENY_LOADING_CONFIG: CONFIG SET answers -LOADING while a dataset loads.
    bool deny_loading = false;
    std::string default_value;             // the CONFIG GET text of the built-in default
    std::vector<std::string> enum_values;  // kEnum
    int64_t min = INT64_MIN;
    int64_t max = INT64_MAX;
    // Reads the current value as CONFIG GET shows it.
    std::function<std::string(const ServerConfig&)> get;
    // Sets from text; returns an error message or "". Must not refer back to the Config,
    // which is moved into the Server.
    std::function<std::string(ServerConfig&, const std::vector<std::string>&)> set;
  };

  Config();
  ServerConfig& values() { return values_; }
  const ServerConfig& values() const { return values_; }

  // Loads a redis.conf-style file (with `include`) and records it as config_file if none is
  // set yet. Returns "" or the message to print before exiting, in redis-server's shape:
  // "\n*** FATAL CONFIG FILE ERROR (vireo X) ***\nReading the configuration file, at line N
  // \n>>> 'line'\nreason" (no trailing newline).
  std::string LoadFile(const std::string& path);
  // redis-server's command line without argv[0]: [configfile] [-] [--name value ...]. A first
  // argument not starting with '-' is the config file; "-" first or last reads stdin too. The
  // options become config lines appended after the file (and stdin), so they win; error line
  // numbers count through that combined text, as in Redis. Returns "" or an error as above.
  std::string LoadCommandLine(const std::vector<std::string>& args);
  // Applies one directive: name plus arguments. `startup` allows immutable options.
  std::string Apply(std::string_view name, const std::vector<std::string>& args, bool startup);

  // CONFIG SET name value [name value ...]: all or nothing, as in Redis 7. Returns "" or the
  // complete error reply text, e.g. "ERR CONFIG SET failed (possibly related to argument
  // 'port') - can't set immutable config". On success calls on_change once per option set.
  // `local_client`: the caller connected over loopback or a unix socket, which
  // enable-protected-configs "local" lets set protected configs.
  std::string Set(const std::vector<std::pair<std::string, std::string>>& pairs,
                  bool local_client = false);
  // CONFIG GET pattern [pattern ...]: (name, value) pairs. Patterns without glob characters are
  // looked up directly and echoed as given (CONFIG GET HZ answers "HZ"); glob patterns match
  // canonical names and aliases case-insensitively. Names already reported are skipped.
  std::vector<std::pair<std::string, std::string>> Get(
      const std::vector<std::string>& patterns) const;

  const Option* Find(std::string_view name) const;
  const std::vector<Option>& options() const { return options_; }
  // CONFIG REWRITE: writes the running configuration back into the config file (temp file +
  // rename), keeping comments and include lines, replacing the lines of each option in place,
  // blanking its surplus lines and appending options that differ from their defaults after a
  // "# Generated by CONFIG REWRITE" line. Lines naming no known option are kept but commented
  // out as "# ??? line", like Redis. Returns "" or the error reply text
  // ("ERR The server is running without a config file", "ERR Rewriting config file: ...").
  // force_all (DEBUG CONFIG-REWRITE-FORCE-ALL) writes every option, defaults included.
  std::string Rewrite(bool force_all = false);

  // Called by CONFIG SET with the options it set, before on_change: a non-empty error (the
  // reply's reason; *culprit the option it names) undoes the whole CONFIG SET, as when new TLS
  // certificates don't load.
  std::function<std::string(const std::vector<std::string>& names, std::string* culprit)> on_apply;
  // Called after CONFIG SET changes an option (e.g. to re-apply limits).
  std::function<void(const std::string& name)> on_change;
  // CONFIG REWRITE's `user` lines ("user <name> <rules>"), from the users as they are now. As
  // in Redis, every old `user` line goes and these take their place; with an aclfile the
  // hook returns none (the users live in that file). Unset: old `user` lines are kept as is.
  std::function<std::vector<std::string>()> rewrite_user_lines;

 private:
  std::string LoadText(const std::string& text, const std::string& origin, int depth);
  std::string LoadInclude(const std::string& pattern, int depth);
  // The options of config_process.cc (process, logging, threads, allocator, shutdown).
  void DeclareProcessOptions();
  std::string ApplyOption(const Option& opt, std::vector<std::string> args);
  void Declare();

  ServerConfig values_;
  bool loading_ = false;      // inside LoadText: a `save` line adds to the previous ones
  bool save_loaded_ = false;  // the first `save` line read replaces the defaults
  std::vector<std::string> include_stack_;  // files being loaded, to refuse include loops
  std::vector<Option> options_;
  std::map<std::string, size_t, std::less<>> index_;
};

// Parses "1gb", "512mb", "100k", "12345" like Redis's memory options (memtoull): digits then an
// optional case-insensitive unit b, k (1000), kb (1024), m, mb, g, gb. Like Redis, an empty
// number counts as 0 ("" and "kb" parse as 0). false on bad input, a sign, or > INT64_MAX.
bool ParseMemory(std::string_view text, int64_t* out);

// The inverse used by CONFIG REWRITE: "1gb", "64mb", "3kb" when exact, else plain bytes.
std::string FormatMemory(int64_t bytes);

}  // namespace vireo
