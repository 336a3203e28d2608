#include "replication/replica_link.h"
#include "replication/replication.h"
#include "server/command_context.h"
#include "server/server.h"

namespace vireo {

void Replication::SyncCommand(CommandContext& ctx) { ctx.reply.Error("ERR not supported yet"); }
void Replication::ReplconfCommand(CommandContext& ctx) { ctx.reply.Ok(); }
void Replication::WaitCommand(CommandContext& ctx) { ctx.reply.Integer(0); }
void Replication::OnClientClosed(Client& client) { replicas_.erase(client.id()); }
ReplicaState* Replication::FindReplica(uint64_t client_id) {
  auto it = replicas_.find(client_id);
  return it == replicas_.end() ? nullptr : &it->second;
}
int Replication::ReplicasAckedAtLeast(int64_t) const { return 0; }
int Replication::GoodReplicas() const { return 0; }
std::string_view Replication::MinReplicasError() const { return ""; }
void Replication::BeforeSleep() {}
void Replication::OnRdbChildDone(bool) {}
void Replication::RoleReply(ReplyBuilder& reply) {
  reply.Array(3);
  reply.Bulk("master");
  reply.Integer(master_repl_offset());
  reply.Array(0);
}
InfoFieldList Replication::InfoFields() {
  InfoFieldList out;
  out.emplace_back("role", is_replica() ? "slave" : "master");
  if (is_replica()) link_->InfoFields(&out);
  out.emplace_back("connected_slaves", "0");
  out.emplace_back("master_failover_state", "no-failover");
  out.emplace_back("master_replid", replid_);
  out.emplace_back("master_replid2", replid2_);
  out.emplace_back("master_repl_offset", std::to_string(master_repl_offset()));
  out.emplace_back("second_repl_offset", std::to_string(second_replid_offset_));
  out.emplace_back("repl_backlog_active", backlog_.created() ? "1" : "0");
  out.emplace_back("repl_backlog_size", std::to_string(server_.cfg().repl_backlog_size));
  out.emplace_back("repl_backlog_first_byte_offset", std::to_string(backlog_.first_offset()));
  out.emplace_back("repl_backlog_histlen", std::to_string(backlog_.histlen()));
  return out;
}
void Replication::Cron() {
  if (link_) link_->Cron();
}
void Replication::StartFullSync(Client&, ReplicaState&) {}
bool Replication::TryPartialResync(Client&, ReplicaState&, std::string_view, int64_t) {
  return false;
}
void Replication::StartRdbChildIfWaiting() {}
void Replication::SendToReplica(Client& client, std::string_view bytes) {
  server_.PushToClient(client, bytes);
}

}  // namespace vireo
