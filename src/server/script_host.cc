// Server as the scripting layer's host (src/scripting/script_host.h): a script's commands run
// on a client of their own for the client whose command (EVAL, FCALL...) started the script.
#include "replication/replica_link.h"
#include "scripting/scripting.h"
#include "server/acl_server.h"
#include "server/server.h"

namespace vireo {

// Built on first use: most servers never run a script.
Scripting& Server::scripting() {
  if (!scripting_) {
    script_client_ = std::make_unique<Client>(this, 0, -1);
    script_client_->addr = "lua";
    // Its commands' errors count in INFO errorstats as a client's do (Redis 7.2).
    script_client_->reply().set_error_hook(&Server::CountError, this);
    script_client_->name = "";
    ScriptHost& host = *this;
    scripting_ = std::unique_ptr<Scripting, void (*)(Scripting*)>(
        new Scripting(host, commands_, cfg()), [](Scripting* s) { delete s; });
  }
  return *scripting_;
}

void Server::ScriptStarted(ScriptRun& run) {
  // A script starts from its command's handler, inside Call, which made that command's client
  // (or the one running the EXEC around it) the current one.
  script_caller_ = current_client_;
  script_client_->set_db_index(script_caller_->db_index());
  script_effects_ = &run.effects;
}

void Server::ScriptEnded() {
  script_effects_ = nullptr;
  script_caller_ = nullptr;
}

const AclUser* Server::ScriptCallerUser() { return script_caller_->acl_user(); }

std::string Server::ScriptAclError(const CommandSpec& spec,
                                   std::span<const std::string_view> argv) {
  std::string denied;
  if (AclService(*this).CheckCommand(*script_client_, spec, argv, AclContext::kLua, &denied,
                                     script_caller_->acl_user())) {
    return {};
  }
  return denied;
}

std::string_view Server::MinReplicasError() { return replication_->MinReplicasError(); }

bool Server::IsReplica() { return replication_->is_replica(); }

bool Server::StaleReplica() {
  return replication_->is_replica() && !config_.values().replica_serve_stale_data &&
         !replication_->link()->link_up();
}

void Server::CountScriptRejection(const CommandSpec* spec, std::string_view message) {
  if (!message.empty() && message[0] == '-') {
    message.remove_prefix(1);
    CountError(this, message.substr(0, message.find(' ')));
  } else {
    CountError(this, "ERR");
  }
  if (spec != nullptr) ++command_stats(*spec).rejected_calls;
  error_mark_ = stats_.total_error_replies;
}

std::string& Server::RunScriptCommand(const CommandSpec& spec,
                                      std::span<const std::string_view> argv, int resp) {
  script_client_->set_resp(resp);
  std::string& out = script_client_->output();
  out.clear();
  Call(*script_client_, spec, argv, true);
  return out;
}

void Server::ServeClientsWhileBusy() {
  // The script's command keeps its clock, and no key expires under it meanwhile.
  const bool expire = debug_settings_.active_expire;
  const int64_t now = command_clock_.ms();
  debug_settings_.active_expire = false;
  ProcessEventsWhileBusy(*script_caller_);
  debug_settings_.active_expire = expire;
  command_clock_.set_ms(now);
}

}  // namespace vireo
