// vireo-server [configfile] [--option value ...]: the same command line as redis-server.
#include <malloc.h>
#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/sinks/syslog_sink.h>
#include <spdlog/spdlog.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <syslog.h>
#include <unistd.h>

#include <algorithm>
#include <asio.hpp>
#include <atomic>
#include <csignal>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>

#include "commands/build_command_table.h"
#include "persistence/aof.h"
#include "persistence/aof_loader.h"
#include "persistence/snapshot.h"
#include "replication/replication.h"
#include "server/server.h"
#include "util/crash_report.h"
#include "util/fd_limits.h"
#include "util/proc_title.h"

namespace {

void PrintUsage() {
  std::fprintf(stderr,
               "Usage: ./vireo-server [/path/to/vireo.conf] [options] [-]\n"
               "       ./vireo-server - (read config from stdin)\n"
               "       ./vireo-server -v or --version\n"
               "       ./vireo-server -h or --help\n\n"
               "Examples:\n"
               "       ./vireo-server (run the server with default conf)\n"
               "       ./vireo-server /etc/vireo/6379.conf\n"
               "       ./vireo-server --port 7777\n"
               "       ./vireo-server /etc/myvireo.conf --loglevel verbose\n");
}

int SyslogFacility(const std::string& name) {
  if (name == "user") return LOG_USER;
  constexpr int kLocal[] = {LOG_LOCAL0, LOG_LOCAL1, LOG_LOCAL2, LOG_LOCAL3,
                            LOG_LOCAL4, LOG_LOCAL5, LOG_LOCAL6, LOG_LOCAL7};
  return kLocal[name.back() - '0'];  // the config only accepts user and local0..local7
}

void SetUpLogging(const vireo::ServerConfig& c) {
  std::shared_ptr<spdlog::logger> logger;
  if (c.logfile.empty()) {
    logger = spdlog::stdout_logger_mt("vireo");
  } else {
    logger = spdlog::basic_logger_mt("vireo", c.logfile);
  }
  // syslog-enabled: every line also goes to syslog under syslog-ident / syslog-facility.
  if (c.syslog_enabled) {
    logger->sinks().push_back(std::make_shared<spdlog::sinks::syslog_sink_mt>(
        c.syslog_ident, LOG_PID | LOG_NDELAY | LOG_NOWAIT, SyslogFacility(c.syslog_facility),
        false));
  }
  logger->set_pattern(fmt::format("{}:M %d %b %Y %H:%M:%S.%e %^%L%$ %v", getpid()));
  // Redis's four levels on spdlog's: what Redis logs at verbose (failure reports, ...) is
  // spdlog::debug, so `loglevel verbose` shows it; `debug` shows everything.
  if (c.loglevel == "debug") {
    logger->set_level(spdlog::level::trace);
  } else if (c.loglevel == "verbose") {
    logger->set_level(spdlog::level::debug);
  } else if (c.loglevel == "notice") {
    logger->set_level(spdlog::level::info);
  } else if (c.loglevel == "warning") {
    logger->set_level(spdlog::level::warn);
  } else {
    logger->set_level(spdlog::level::off);
  }
  // Every line shown reaches the file at once, as Redis writes each one.
  logger->flush_on(spdlog::level::trace);
  spdlog::set_default_logger(logger);
}

// supervised: which supervisor to tell that we are ready ("no" when none applies). "auto"
// picks upstart or systemd from the environment each sets, as Redis does.
std::string Supervisor(const std::string& setting) {
  if (setting == "auto") {
    if (std::getenv("UPSTART_JOB") != nullptr) return "upstart";
    if (std::getenv("NOTIFY_SOCKET") != nullptr) return "systemd";
    return "no";
  }
  return setting;
}

// systemd's readiness protocol: one datagram to $NOTIFY_SOCKET ("@name" is an abstract
// socket). Upstart's "expect stop": stop ourselves until it continues us.
void NotifySupervisor(const std::string& supervisor) {
  if (supervisor == "upstart") {
    if (std::getenv("UPSTART_JOB") == nullptr) {
      spdlog::warn("upstart supervision requested, but UPSTART_JOB not found!");
      return;
    }
    spdlog::info("supervised by upstart, will stop to signal readiness.");
    raise(SIGSTOP);
    unsetenv("UPSTART_JOB");
    return;
  }
  if (supervisor != "systemd") return;
  const char* path = std::getenv("NOTIFY_SOCKET");
  if (path == nullptr || path[0] == '\0' || std::strlen(path) >= sizeof(sockaddr_un::sun_path)) {
    spdlog::warn("systemd supervision error: NOTIFY_SOCKET not found!");
    return;
  }
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path, std::strlen(path));
  if (addr.sun_path[0] == '@') addr.sun_path[0] = '\0';
  socklen_t len = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + std::strlen(path));
  int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return;
  static constexpr char kReady[] = "STATUS=Ready to accept connections\nREADY=1\n";
  if (sendto(fd, kReady, sizeof(kReady) - 1, MSG_NOSIGNAL, reinterpret_cast<sockaddr*>(&addr),
             len) < 0) {
    spdlog::warn("systemd supervision error: sendto: {}", std::strerror(errno));
  } else {
    spdlog::info("supervised by systemd, notified readiness.");
  }
  close(fd);
}

// The server SIGTERM and SIGINT go to (signal dispositions are the process's), and the temp
// file a synchronous save in this process writes, named before any signal can come.
// Cleared before the server is destroyed: a signal during the exit finds no server to tell
// (the exit is what it asks for) instead of a destroyed one.
std::atomic<vireo::Server*> g_signal_server{nullptr};
char g_temp_rdb[64];

// As Redis: the signal only schedules the shutdown, which the cron runs. A second SIGINT
// while one is pending means "now": no save, no waiting for replicas, exit status 1.
void OnShutdownSignal(int sig) {
  vireo::Server* exiting_unless_set = g_signal_server.load(std::memory_order_acquire);
  if (exiting_unless_set == nullptr) return;
  vireo::Server& server = *exiting_unless_set;
  if (sig == SIGINT && server.shutdown_signal_pending()) {
    vireo::LogFromSignalHandler("You insist... exiting now.");
    unlink(g_temp_rdb);
    _exit(1);
  }
  vireo::LogFromSignalHandler(server.loading_at_startup()
                                  ? "Received shutdown signal during loading, scheduling shutdown."
                              : sig == SIGINT ? "Received SIGINT scheduling shutdown..."
                                              : "Received SIGTERM scheduling shutdown...");
  server.NoteShutdownSignal(sig);
}

void InstallShutdownSignals(vireo::Server& server) {
  g_signal_server.store(&server, std::memory_order_release);
  std::snprintf(g_temp_rdb, sizeof(g_temp_rdb), "temp-%d.rdb", static_cast<int>(getpid()));
  struct sigaction act {};
  sigemptyset(&act.sa_mask);
  act.sa_handler = OnShutdownSignal;
  sigaction(SIGTERM, &act, nullptr);
  sigaction(SIGINT, &act, nullptr);
}

}  // namespace

int main(int argc, char** argv) {
  // No glibc fastbins: they keep freed small blocks unmerged until the next large allocation
  // merges them all at once, which after a mass deletion (a million expired keys) froze the
  // event loop for a second or more. Without them each free merges as it goes.
  mallopt(M_MXFAST, 0);
  std::vector<std::string> args(argv + 1, argv + argc);
  // From here on argv's strings belong to the process title (set-proc-title).
  vireo::ProcTitleInit(argc, argv);
  if (!args.empty() && (args[0] == "-v" || args[0] == "--version")) {
    std::printf("vireo server v=%s bits=64\n", VIREO_VERSION);
    return 0;
  }
  if (!args.empty() && (args[0] == "-h" || args[0] == "--help")) {
    PrintUsage();
    return 0;
  }
  vireo::Config config;
  if (std::string err = config.LoadCommandLine(args); !err.empty()) {
    std::fprintf(stderr, "%s\n", err.c_str());
    return 1;
  }
  std::signal(SIGPIPE, SIG_IGN);
  SetUpLogging(config.values());
  vireo::InstallCrashHandlers(config.values().logfile, VIREO_VERSION,
                              config.values().crash_log_enabled);
  // disable-thp: transparent huge pages make every copy-on-write fault after a fork (BGSAVE,
  // AOF rewrite) copy 2 MB instead of 4 KB; opt this process (and its children) out.
  if (config.values().disable_thp) prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0);
  // Thousands of clients need thousands of descriptors: raise the limit, or lower maxclients
  // to what it allows, so the server never accepts a client it has no descriptor for.
  {
    int64_t fitted = vireo::FitMaxclientsToOpenFilesLimit(config.values().maxclients);
    if (fitted < 1) return 1;
    config.values().maxclients = static_cast<int>(fitted);
  }
  const vireo::ServerConfig& c = config.values();
  // Redis's start-up lines, in its words: tools that watch the log (Redis's own test harness
  // waits for " PID: <pid>" before "Server initialized", then "Ready to accept") find them.
  spdlog::info("oO0OoO0OoO0Oo vireo is starting oO0OoO0OoO0Oo");
  spdlog::info("vireo version={}, bits=64, commit=00000000, modified=0, pid={}, just started",
               VIREO_VERSION, getpid());
  spdlog::info("Configuration loaded");

  // daemonize: detach (fork, new session, stdio on /dev/null) unless a supervisor runs us. Done
  // before the server starts any thread. Like Redis, a daemon always leaves a pid file.
  const std::string supervisor = Supervisor(c.supervised);
  const bool background = c.daemonize && supervisor == "no";
  if (background && daemon(1, 0) != 0) {
    spdlog::critical("Can't daemonize: {}", std::strerror(errno));
    return 1;
  }
  const std::string pidfile =
      !c.pidfile.empty() ? c.pidfile : (background ? "/var/run/vireo.pid" : "");
  if (!pidfile.empty()) {
    std::ofstream(pidfile) << getpid() << "\n";
  }

  vireo::CommandTable commands = vireo::BuildCommandTable();
  if (std::string err = vireo::ApplyCommandRenames(config.values(), commands); !err.empty()) {
    std::fprintf(stderr, "%s\n", err.c_str());
    return 1;
  }
  vireo::Server server(std::move(config), commands);
  // always-show-logo: a start-up banner even when logging to a file (by default only on a
  // terminal), with the pid on a "PID:" line as Redis's logo has it.
  if (server.cfg().always_show_logo ||
      (server.cfg().logfile.empty() && isatty(STDOUT_FILENO) != 0)) {
    spdlog::info("vireo {} (64 bit), a Redis-compatible server", VIREO_VERSION);
    spdlog::info("    Running in standalone mode");
    spdlog::info("    Port: {}", server.cfg().port);
    spdlog::info("    PID: {}", getpid());
  } else {
    spdlog::info("Running mode=standalone, port={}.", server.cfg().port);
  }
  // The sockets open before the data loads, as in Redis: clients connect meanwhile and get
  // -LOADING (the loaders step the loop), and a signal ends the load without a save.
  if (std::string err = server.OpenListeners(); !err.empty()) {
    spdlog::critical("{}", err);
    return 1;
  }
  InstallShutdownSignals(server);
  // Declared after the server, so destroyed before it (every return from here on).
  struct ForgetSignalServer {
    ~ForgetSignalServer() { g_signal_server.store(nullptr, std::memory_order_release); }
  } forget_signal_server;
  spdlog::info("Server initialized");
  // The AOF before the first client (with appendonly yes it alone holds the data, as in Redis;
  // with appendonly no this only reads its manifest).
  std::string load_error = server.aof().LoadAndOpen();
  // Without AOF data the RDB dump holds it (dir/dbfilename; a missing file is an empty start).
  if (load_error.empty() && !server.aof().loaded_at_startup()) {
    // A master continues the replication stream its RDB was taken at (Redis's repl-id /
    // repl-offset AUX fields), with the DELs of keys that expired meanwhile.
    vireo::Replication& repl = server.replication();
    std::function<void(int, std::string_view)> expired;
    if (repl.BeginStartupLoad()) {
      expired = [&repl](int db, std::string_view key) { repl.FeedExpiredKey(db, key); };
    }
    vireo::RdbReplicationInfo info;
    load_error = vireo::RdbLoadAtStartup(server, std::move(expired), &info);
    if (load_error.empty()) repl.EndStartupLoad(info);
  }
  if (!load_error.empty() && !server.loop().shutting_down()) {
    if (!load_error.starts_with(vireo::kAofFileLoadFailed)) spdlog::critical("{}", load_error);
    return 1;
  }
  if (!server.loop().shutting_down()) {
    if (std::string err = server.StartServing(); !err.empty()) {
      spdlog::critical("{}", err);
      return 1;
    }
    server.ApplyProcTitle();
    spdlog::info("vireo {} (64 bit) started, pid={}, port={}", VIREO_VERSION, getpid(),
                 server.bound_port());
    spdlog::info("Ready to accept connections tcp");
    NotifySupervisor(supervisor);
    server.Run();
  }
  // The shutdown sequence (src/server/shutdown.h) ended the loop, and said goodbye.
  if (!pidfile.empty()) unlink(pidfile.c_str());
  if (!server.cfg().unixsocket.empty()) unlink(server.cfg().unixsocket.c_str());
  return 0;
}
