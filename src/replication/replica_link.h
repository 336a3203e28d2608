// The replica side of replication: the link to our master (REPLICAOF host port).
// Owned by Replication; exists while this server follows a master.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "replication/replication.h"

namespace vireo {

class Server;

class ReplicaLink {
 public:
  ReplicaLink(Server& server, Replication& replication, std::string host, int port);
  ~ReplicaLink();

  const std::string& host() const { return host_; }
  int port() const { return port_; }
  // ROLE's state of the link: connect, connecting, handshake, sync or connected.
  std::string_view RoleState() const;
  // The master stream offset processed so far (ROLE, INFO slave_repl_offset), -1 if none.
  int64_t processed_offset() const;
  bool link_up() const;
  // INFO replication fields from master_host on (a replica's part), in Redis's order.
  void InfoFields(InfoFieldList* out) const;
  void Cron();

 private:
  Server& server_;
  Replication& replication_;
  std::string host_;
  int port_;
};

}  // namespace vireo
