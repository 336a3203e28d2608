// Server as the replication layer's host (src/replication/replication_host.h): replication
// names clients by id, and reaches the loop, the databases, loading and persistence through
// these.
#include <spdlog/spdlog.h>
#include <sys/epoll.h>

#include <climits>

#include "persistence/aof.h"
#include "persistence/rdb.h"
#include "persistence/snapshot.h"
#include "scripting/scripting.h"
#include "server/server.h"

namespace vireo {

bool Server::ClientExists(uint64_t id) { return FindClient(id) != nullptr; }

bool Server::ClientOpen(uint64_t id) {
  Client* c = FindClient(id);
  return c != nullptr && !c->closed;
}

std::string Server::ClientAddress(uint64_t id) {
  Client* c = FindClient(id);
  return c != nullptr ? c->addr : std::string();
}

int Server::ClientSocket(uint64_t id) {
  Client* c = FindClient(id);
  return c != nullptr ? c->fd() : -1;
}

TlsSession* Server::ClientTls(uint64_t id) {
  Client* c = FindClient(id);
  return c != nullptr ? c->tls.get() : nullptr;
}

size_t Server::ClientOutputMemory(uint64_t id) {
  Client* c = FindClient(id);
  return c != nullptr ? c->output().capacity() : 0;
}

int Server::ClientDb(uint64_t id) {
  Client* c = FindClient(id);
  return c != nullptr ? c->db_index() : 0;
}

int64_t Server::ClientLastInteractionMs(uint64_t id) {
  Client* c = FindClient(id);
  return c != nullptr ? c->last_interaction_ms : 0;
}

size_t Server::ClientUnreadInput(uint64_t id) {
  Client* c = FindClient(id);
  return c != nullptr ? c->read_buffer.size() : 0;
}

void Server::SendToClient(uint64_t id, std::string_view bytes) {
  if (Client* c = FindClient(id)) PushToClient(*c, bytes);
}

void Server::CloseClientNow(uint64_t id) {
  if (Client* c = FindClient(id)) CloseClient(*c);
}

void Server::CloseClientAfterReply(uint64_t id) {
  if (Client* c = FindClient(id)) CloseAfterReply(*c);
}

void Server::MarkReplicaClient(uint64_t id) {
  if (Client* c = FindClient(id)) c->set(kClientReplica);
}

void Server::HoldClientOutput(uint64_t id, bool held) {
  if (Client* c = FindClient(id)) c->output_held = held;
}

void Server::SetClientBulkPending(uint64_t id, bool pending) {
  if (Client* c = FindClient(id)) c->bulk_pending = pending;
}

void Server::WatchSnapshotPipe(int fd, bool on) {
  if (on) {
    WatchSocket(fd, kSnapshotPipeTag, EPOLLIN);
  } else {
    UnwatchSocket(fd);
  }
}

void Server::RerunBlockedClient(uint64_t id) {
  Client* c = FindClient(id);
  if (c == nullptr || c->closed || !c->has(kClientBlocked)) return;
  RunBlockedCommandAgain(*c);
}

void Server::UnblockClientsForRoleChange() {
  std::vector<uint64_t> blocked;
  for (const auto& [id, client] : clients_) {
    if (client->has(kClientBlocked) && !client->closed) blocked.push_back(id);
  }
  for (uint64_t id : blocked) {
    if (Client* c = FindClient(id)) UnblockClient(*c, UnblockReason::kRoleChange, {});
  }
}

std::unique_ptr<TlsSession> Server::ConnectTls(int fd) { return tls_.Connect(fd); }

uint64_t Server::AdoptMasterConnection(int fd, std::unique_ptr<TlsSession> tls, int db) {
  Client& master = AdoptConnection(fd, kClientMaster | kClientNoEvict, std::move(tls));
  master.set_db_index(db);
  return master.id();
}

void Server::InjectClientInput(uint64_t id, std::string_view input) {
  if (Client* c = FindClient(id)) InjectInput(*c, input);
}

void Server::LoadingStarted(bool async, int64_t total_bytes) {
  StartLoading(async ? LoadingMode::kAsync : LoadingMode::kSync, total_bytes);
}

void Server::ServeClientsWhileLoading(int wait_fd, int timeout_ms) {
  ProcessEventsWhileLoading(wait_fd, timeout_ms);
}

size_t Server::TotalKeys() {
  size_t keys = 0;
  for (const auto& db : dbs_) keys += db->size();
  return keys;
}

void Server::FlushAllData(bool async) {
  for (int i = 0; i < db_count(); ++i) {
    Database& d = db(i);
    watched_keys_.TouchAllInDb(i);
    if (async && d.size() > 0) {
      auto doomed = std::make_unique<Database>(-1, nullptr);
      doomed->SwapContents(d);
      lazy_freer_.Free(std::move(doomed));
    } else {
      d.Clear();
    }
    SignalFlushedDb(i);
  }
  scripting().FlushLibraries();
}

std::vector<std::unique_ptr<Database>> Server::NewDetachedDatabases() {
  std::vector<std::unique_ptr<Database>> dbs;
  for (int i = 0; i < db_count(); ++i) dbs.push_back(NewDetachedDatabase());
  return dbs;
}

void Server::SwapInLoadedData(std::vector<std::unique_ptr<Database>>& loaded,
                              const std::vector<std::string>& libraries) {
  for (int i = 0; i < db_count(); ++i) {
    watched_keys_.TouchAllInDb(i, loaded[i].get());
    db(i).SwapContents(*loaded[i]);
  }
  SignalReplacedDbs();
  scripting().FlushLibraries();
  for (const std::string& code : libraries) {
    std::string lib_err;
    if (scripting().LoadLibrary(code, false, &lib_err).empty()) {
      spdlog::warn("Failed loading library from the MASTER synchronization DB: {}", lib_err);
    }
  }
  DiscardDatabases(std::move(loaded));
}

void Server::DiscardDatabases(std::vector<std::unique_ptr<Database>> dbs) {
  for (auto& d : dbs) lazy_freer_.Free(std::move(d));
}

bool Server::AofOn() { return aof_->Accepting(); }

int64_t Server::AofFsyncedOffset() { return aof_->fsynced_reploff(); }

bool Server::AofLoadedAtStartup() { return aof_->loaded_at_startup(); }

std::string Server::RdbFilePath() { return RdbPath(*this); }

std::string Server::SaveRdbFile(const std::string& path, const RdbSaveOptions& options) {
  return RdbSaveFile(*this, path, options);
}

std::string Server::SaveRdbToSink(const RdbSaveOptions& options) {
  return RdbSave(*this, -1, options);
}

std::string Server::LoadRdbFile(const std::string& path, const RdbLoadOptions& options,
                                RdbLoadStats* stats) {
  return vireo::RdbLoadFile(*this, path, options, stats);
}

std::string Server::LoadRdbFromSource(RdbByteSource source, const RdbLoadOptions& options,
                                      RdbLoadStats* stats) {
  return vireo::RdbLoadFromSource(*this, std::move(source), options, stats);
}

void Server::KillRdbChild() { RdbKillChild(*this); }

void Server::PauseWritesForFailover(bool on) {
  if (on) {
    client_pause_.Pause(PausePurpose::kFailover, INT64_MAX, kPauseWrite);
  } else {
    client_pause_.Unpause(PausePurpose::kFailover);
  }
}

}  // namespace vireo
