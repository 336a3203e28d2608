// What a running script needs from the server that hosts it: the facts redis.call checks before
// running a command, the command run itself, and the busy-script state. The scripting layer
// declares it; the server implements it (src/server/script_host.cc), as it implements db's
// KeyspaceListener. The command table and the configuration reach scripting directly (see
// Scripting's constructor); only what lives in the server's clients, replication and cluster
// state goes through here.
//
// A script runs for one client, the one whose command (EVAL, FCALL...) started it: the host
// knows it from ScriptStarted() to ScriptEnded(), and every call in between is about it.
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace vireo {

class AclUser;
struct CommandSpec;
struct ScriptRun;

class ScriptHost {
 public:
  virtual ~ScriptHost() = default;

  // A script starts for the client running the current command: its commands run in that
  // client's database, and what they change is recorded in run.effects until ScriptEnded().
  virtual void ScriptStarted(ScriptRun& run) = 0;
  virtual void ScriptEnded() = 0;

  // ---- what redis.call checks before it runs a command ----
  // The calling client's user (null: no ACL applies).
  virtual const AclUser* ScriptCallerUser() = 0;
  // "" when the caller's user may run the command, else the error (logged in ACL LOG).
  virtual std::string ScriptAclError(const CommandSpec& spec,
                                     std::span<const std::string_view> argv) = 0;
  // min-replicas-to-write: "" when writes may go on, else the error.
  virtual std::string_view MinReplicasError() = 0;
  // Memory was over maxmemory when the running command started (Redis's pre_command_oom_state).
  virtual bool PreCommandOom() = 0;
  // This server replicates a master (replica-read-only then refuses writes).
  virtual bool IsReplica() = 0;
  // A replica whose link to its master is down, with replica-serve-stale-data no: only
  // commands flagged stale may run (an allow-stale script got this far).
  virtual bool StaleReplica() = 0;
  // DEBUG SET-DISABLE-DENY-SCRIPTS: scripts may call no-script commands.
  virtual bool DenyScriptsDisabled() = 0;
  // Cluster mode: "" when the command's keys are served here and stay in the script's slot
  // (run.cluster_slot, updated), else the error text; always "" without cluster mode.
  virtual std::string ScriptClusterError(ScriptRun& run, const CommandSpec& spec,
                                         std::span<const std::string_view> argv) = 0;
  // A command refused before it ran counts as an error reply and as the command's rejected
  // call (INFO errorstats, commandstats). `message` is "-CODE rest" or plain text for an ERR;
  // `spec` is null for an unknown command.
  virtual void CountScriptRejection(const CommandSpec* spec, std::string_view message) = 0;

  // Runs the command on the script's own client, speaking RESP `resp`, and returns its reply
  // (RESP text) in a buffer the caller may clear.
  virtual std::string& RunScriptCommand(const CommandSpec& spec,
                                        std::span<const std::string_view> argv, int resp) = 0;

  // ---- a script running long ----
  // Past busy-reply-threshold other clients get -BUSY: 1 for an EVAL script, 2 for a function,
  // 0 when the script is done.
  virtual void SetBusyScript(int kind) = 0;
  // Serves other clients for one loop turn (not the caller: its next commands wait).
  virtual void ServeClientsWhileBusy() = 0;
  // SHUTDOWN was asked meanwhile: the script stops.
  virtual bool ShuttingDown() = 0;
};

}  // namespace vireo
