// vireo-server [configfile] [--option value ...]: the same command line as redis-server.
#include <malloc.h>
#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <asio.hpp>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <iostream>

#include "persistence/aof.h"
#include "persistence/snapshot.h"
#include "server/fd_limits.h"
#include "server/server.h"

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

void SetUpLogging(const vireo::ServerConfig& c) {
  std::shared_ptr<spdlog::logger> logger;
  if (c.logfile.empty()) {
    logger = spdlog::stdout_logger_mt("vireo");
  } else {
    logger = spdlog::basic_logger_mt("vireo", c.logfile);
  }
  logger->set_pattern(fmt::format("{}:M %d %b %Y %H:%M:%S.%e %^%L%$ %v", getpid()));
  if (c.loglevel == "debug") {
    logger->set_level(spdlog::level::debug);
  } else if (c.loglevel == "verbose") {
    logger->set_level(spdlog::level::info);
  } else if (c.loglevel == "notice") {
    logger->set_level(spdlog::level::info);
  } else if (c.loglevel == "warning") {
    logger->set_level(spdlog::level::warn);
  } else {
    logger->set_level(spdlog::level::off);
  }
  logger->flush_on(spdlog::level::info);
  spdlog::set_default_logger(logger);
}

}  // namespace

int main(int argc, char** argv) {
  // No glibc fastbins: they keep freed small blocks unmerged until the next large allocation
  // merges them all at once, which after a mass deletion (a million expired keys) froze the
  // event loop for a second or more. Without them each free merges as it goes.
  mallopt(M_MXFAST, 0);
  std::vector<std::string> args(argv + 1, argv + argc);
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
  if (c.always_show_logo) {
    spdlog::info("vireo {} (64 bit), Redis-compatible", VIREO_VERSION);
    spdlog::info("    Running in standalone mode");
    spdlog::info("    Port: {}", c.port);
    spdlog::info("    PID: {}", getpid());
  } else {
    spdlog::info("Running mode=standalone, port={}.", c.port);
  }
  if (!c.pidfile.empty()) {
    std::ofstream(c.pidfile) << getpid() << "\n";
  }

  vireo::Server server(std::move(config));
  spdlog::info("Server initialized");
  // The AOF before the first client (with appendonly yes it alone holds the data, as in Redis;
  // with appendonly no this only reads its manifest).
  if (std::string err = server.aof().LoadAndOpen(); !err.empty()) {
    spdlog::critical("{}", err);
    return 1;
  }
  // Without AOF data the RDB dump holds it (dir/dbfilename; a missing file is an empty start).
  if (!server.aof().loaded_at_startup()) {
    if (std::string err = vireo::RdbLoadAtStartup(server); !err.empty()) {
      spdlog::critical("{}", err);
      return 1;
    }
  }
  if (std::string err = server.Listen(); !err.empty()) {
    spdlog::critical("{}", err);
    return 1;
  }
  spdlog::info("vireo {} (64 bit) started, pid={}, port={}", VIREO_VERSION, getpid(),
               server.bound_port());
  spdlog::info("Ready to accept connections tcp");

  asio::signal_set signals(server.io(), SIGTERM, SIGINT);
  int received = 0;
  signals.async_wait([&server, &received](const asio::error_code& ec, int signal) {
    if (ec) return;
    received = signal;
    spdlog::warn("Received {} scheduling shutdown...", signal == SIGINT ? "SIGINT" : "SIGTERM");
    server.Shutdown();
  });
  server.Run();
  // A signal (not SHUTDOWN) ended the loop: save per the save points, as Redis does on SIGTERM,
  // or as shutdown-on-sigterm / shutdown-on-sigint say (save, nosave). "now" and "force" are
  // what vireo does anyway on a signal: it waits for no replica, and exits even if saving
  // failed.
  if (!vireo::RdbStateOf(server).shutdown_handled) {
    const std::string& flags =
        received == SIGINT ? server.cfg().shutdown_on_sigint : server.cfg().shutdown_on_sigterm;
    const bool save =
        flags.find("nosave") == std::string::npos && flags.find("save") != std::string::npos;
    const bool nosave = flags.find("nosave") != std::string::npos;
    vireo::RdbSaveOnShutdown(server, save, nosave);
  }
  spdlog::warn("vireo is now ready to exit, bye bye...");
  if (!server.cfg().pidfile.empty()) unlink(server.cfg().pidfile.c_str());
  if (!server.cfg().unixsocket.empty()) unlink(server.cfg().unixsocket.c_str());
  return 0;
}
