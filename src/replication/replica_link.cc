#include "replication/replica_link.h"

#include "server/command_context.h"
#include "server/server.h"

namespace vireo {

// Placeholder until the replica side lands: REPLICAOF is refused.
ReplicaLink::ReplicaLink(Server& server, Replication& replication, std::string host, int port)
    : server_(server), replication_(replication), host_(std::move(host)), port_(port) {}

ReplicaLink::~ReplicaLink() = default;

std::string_view ReplicaLink::RoleState() const { return "connect"; }
int64_t ReplicaLink::processed_offset() const { return -1; }
bool ReplicaLink::link_up() const { return false; }
void ReplicaLink::InfoFields(InfoFieldList* out) const {
  out->emplace_back("master_host", host_);
  out->emplace_back("master_port", std::to_string(port_));
}
void ReplicaLink::Cron() {}

void Replication::ReplicaofCommand(CommandContext& ctx) {
  ctx.reply.Error("ERR REPLICAOF is not supported yet");
}

void Replication::ReplicaGetAck(CommandContext& ctx) { ctx.reply.Ok(); }

}  // namespace vireo
