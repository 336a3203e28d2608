// Out of line so that command_context.h needs no more of the server than its name, and command
// handlers reach the server's components without including server.h.
#include "server/command_context.h"

#include "server/acl_server.h"
#include "server/info.h"
#include "server/server.h"

namespace vireo {

const ServerConfig& CommandContext::cfg() const { return server_.cfg(); }
Config& CommandContext::config() const { return server_.config(); }
Database& CommandContext::database(int index) const { return server_.db(index); }
int CommandContext::db_count() const { return server_.db_count(); }
std::mt19937_64& CommandContext::rng() const { return server_.rng(); }
ServerStats& CommandContext::stats() const { return server_.stats(); }
ProcessInfo& CommandContext::process() const { return server_.process(); }
ClientRegistry& CommandContext::clients() const { return server_.clients(); }
BlockingService& CommandContext::blocking() const { return server_.blocking(); }
ClientPause& CommandContext::client_pause() const { return server_.client_pause(); }
MemoryView& CommandContext::memory() const { return server_.memory(); }
EventLoop& CommandContext::loop() const { return server_.loop(); }
ShutdownControl& CommandContext::shutdown() const { return server_.shutdown_control(); }
ClusterServices& CommandContext::cluster_services() const { return server_.cluster_services(); }
Tracking& CommandContext::tracking() const { return server_.tracking(); }
WatchedKeys& CommandContext::watched_keys() const { return server_.watched_keys(); }
Monitors& CommandContext::monitors() const { return server_.monitors(); }
PubsubEngine& CommandContext::pubsub() const { return server_.pubsub(); }
ClientEviction& CommandContext::client_eviction() const { return server_.client_eviction(); }
Slowlog& CommandContext::slowlog() const { return server_.slowlog(); }
Slowlog& CommandContext::commandlog(CommandlogType type) const { return server_.commandlog(type); }
CommandClock& CommandContext::command_clock() const { return server_.command_clock(); }
CommandStatsTable& CommandContext::command_stats() const { return server_.command_stats(); }
LatencyMonitor& CommandContext::latency() const { return server_.latency(); }
DebugSettings& CommandContext::debug_settings() const { return server_.debug_settings(); }
AclRegistry& CommandContext::acl() const { return server_.acl(); }
AclService CommandContext::acl_service() const { return AclService(server_); }
ServerReports CommandContext::reports() const { return ServerReports(server_); }
Scripting& CommandContext::scripting() const { return server_.scripting(); }
PersistenceHost& CommandContext::persistence() const { return server_; }
Aof& CommandContext::aof() const { return server_.aof(); }
Replication& CommandContext::replication() const { return server_.replication(); }
Propagator& CommandContext::propagator() const { return server_.propagator(); }
ChildProcesses& CommandContext::children() const { return server_.children(); }
TlsContext& CommandContext::tls() const { return server_.tls(); }
cluster::ClusterState* CommandContext::cluster() const { return server_.cluster(); }
cluster::ClusterBus* CommandContext::cluster_bus() const { return server_.cluster_bus(); }
const CommandTable& CommandContext::commands() const { return server_.commands(); }
const CommandSpec* CommandContext::LookupCommand(std::string_view name) const {
  return server_.LookupCommand(name);
}
bool CommandContext::reply_over_output_limit() const {
  return client.fd() >= 0 && &reply == &client.reply() && server_.OutputOverLimit(client);
}
bool CommandContext::loading_dataset() const {
  return server_.loading().mode != Server::LoadingMode::kNone;
}
void CommandContext::CallQueued(Client& client, const CommandSpec& spec,
                                std::span<const std::string_view> argv) const {
  server_.Call(client, spec, argv, /*in_exec=*/true);
}

}  // namespace vireo
