#include "cluster/bus.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <spdlog/spdlog.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>

#include "core/config.h"
#include "util/clock.h"
#include "util/listen.h"

namespace vireo::cluster {
namespace {

// Redis's timings (cluster.h): a manual failover must finish within 5 s, the master pauses
// writes for twice that; failure reports count for twice node-timeout; a master's FAIL is
// cleared after twice node-timeout if nobody took its slots; a replica waits 5 s before
// migrating to an orphaned master.
constexpr int64_t kManualFailoverTimeoutMs = 5000;
constexpr int64_t kManualFailoverPauseMult = 2;
constexpr int64_t kFailUndoTimeMult = 2;
constexpr int64_t kReplicaMigrationDelayMs = 5000;
constexpr int64_t kCronPeriodMs = 100;
constexpr size_t kReadChunk = 16 * 1024;
// A link keeps a send buffer up to this size between bursts (pings with gossip fit).
constexpr size_t kKeptSendBuffer = 16 * 1024;
// A bus TLS handshake must finish within this long, as a client's must (server.cc): a peer
// that connects and stalls would otherwise hold a descriptor (and, outbound, the node's only
// link) forever.
constexpr int64_t kTlsHandshakeTimeoutMs = 10000;

enum CantFailoverReason {
  kCantFailoverNone = 0,
  kCantFailoverDataAge,
  kCantFailoverWaitingDelay,
  kCantFailoverExpired,
  kCantFailoverWaitingVotes,
};

SlotBitmap BitmapOf(const ClusterNode& node) {
  SlotBitmap out{};
  for (int j = 0; j < kSlotCount; ++j) {
    if (node.slots.test(j)) SetSlotBit(out, j);
  }
  return out;
}

std::string SockName(int fd, bool peer) {
  sockaddr_storage addr{};
  socklen_t len = sizeof(addr);
  int r = peer ? getpeername(fd, reinterpret_cast<sockaddr*>(&addr), &len)
               : getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  if (r != 0) return "";
  char text[INET6_ADDRSTRLEN] = {};
  if (addr.ss_family == AF_INET) {
    inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(&addr)->sin_addr, text, sizeof(text));
  } else if (addr.ss_family == AF_INET6) {
    inet_ntop(AF_INET6, &reinterpret_cast<sockaddr_in6*>(&addr)->sin6_addr, text, sizeof(text));
  }
  return text;
}

// Node names as Redis accepts them (a-z, 0-9, 40 characters): anything else on the wire would
// end up in nodes.conf, which must load again.
bool IsNodeName(std::string_view name) {
  if (name.size() != kNodeNameLen) return false;
  return std::all_of(name.begin(), name.end(),
                     [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); });
}

bool IsIp(const std::string& text) {
  in6_addr v6;
  in_addr v4;
  return inet_pton(AF_INET, text.c_str(), &v4) == 1 || inet_pton(AF_INET6, text.c_str(), &v6) == 1;
}

// Hostnames and human node names go into CLUSTER NODES and nodes.conf lines: only what
// cluster-announce-hostname accepts.
bool IsPrintableName(std::string_view text) {
  return std::all_of(text.begin(), text.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_';
  });
}

std::string_view ShortName(const ClusterNode* node) {
  return node == nullptr ? std::string_view("?") : std::string_view(node->name);
}

}  // namespace

ClusterBus::ClusterBus(BusHost& host, ClusterState& state)
    : host_(host), state_(state), rng_(std::random_device{}()) {
  state_.before_delete_node = [this](ClusterNode* node) {
    if (node->link != nullptr) FreeLink(node->link);
    if (node->inbound_link != nullptr) FreeLink(node->inbound_link);
    last_in_gossip_.erase(node);
    if (mf_replica_ == node) ResetManualFailover();
  };
}

ClusterBus::~ClusterBus() {
  state_.before_delete_node = nullptr;
  for (auto& [id, link] : links_) {
    link->tls.reset();  // its close_notify goes out before the descriptor closes
    if (link->fd >= 0) close(link->fd);
    if (link->node != nullptr) {
      if (link->node->link == link.get()) link->node->link = nullptr;
      if (link->node->inbound_link == link.get()) link->node->inbound_link = nullptr;
    }
  }
  for (int fd : listen_fds_) close(fd);
}

// --- sockets ----------------------------------------------------------------------------------

std::string ClusterBus::Listen(const std::vector<std::string>& binds, int port) {
  for (const std::string& b : binds) {
    const bool optional = !b.empty() && b[0] == '-';
    std::string error = ListenOnAddress(optional ? b.substr(1) : b, port, 511, [&](int fd) {
      const uint64_t id = next_id_++;
      listen_fds_.push_back(fd);
      listener_ids_[id] = fd;
      host_.WatchBusSocket(fd, kTag | id, EPOLLIN);
    });
    if (!error.empty() && !optional) return error;
  }
  if (listen_fds_.empty()) return fmt::format("Failed listening on cluster bus port {}", port);
  return "";
}

BusLink* ClusterBus::NewLink(int fd, bool inbound, int64_t now) {
  auto link = std::make_unique<BusLink>();
  link->id = next_id_++;
  link->fd = fd;
  link->inbound = inbound;
  link->ctime = now;
  BusLink* raw = link.get();
  links_[raw->id] = std::move(link);
  return raw;
}

void ClusterBus::FreeLink(BusLink* link) {
  if (link == nullptr || link->dead) return;
  link->dead = true;
  link->tls.reset();
  if (link->fd >= 0) {
    host_.UnwatchBusSocket(link->fd);
    close(link->fd);
    link->fd = -1;
  }
  if (link->node != nullptr) {
    if (link->node->link == link) link->node->link = nullptr;
    if (link->node->inbound_link == link) link->node->inbound_link = nullptr;
    link->node = nullptr;
  }
  auto it = links_.find(link->id);
  if (it != links_.end()) {
    dead_links_.push_back(std::move(it->second));
    links_.erase(it);
  }
}

void ClusterBus::ReapDeadLinks() { dead_links_.clear(); }

void ClusterBus::Connect(ClusterNode* node, int64_t now) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICHOST;
  addrinfo* res = nullptr;
  const std::string port = std::to_string(node->cport);
  // A failed attempt still counts as a ping: failure detection must see the node as silent.
  auto failed = [&] {
    if (node->ping_sent == 0) node->ping_sent = now;
  };
  if (getaddrinfo(node->ip.c_str(), port.c_str(), &hints, &res) != 0 || res == nullptr) {
    failed();
    return;
  }
  int fd = socket(res->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    freeaddrinfo(res);
    failed();
    return;
  }
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  int r = connect(fd, res->ai_addr, res->ai_addrlen);
  freeaddrinfo(res);
  if (r != 0 && errno != EINPROGRESS) {
    spdlog::debug("Connecting with Node {} at {}:{}: {}", node->name, node->ip, node->cport,
                  strerror(errno));
    close(fd);
    failed();
    return;
  }
  BusLink* link = NewLink(fd, false, now);
  link->node = node;
  node->link = link;
  if (r == 0) {
    host_.WatchBusSocket(fd, kTag | link->id, EPOLLIN);
    if (host_.BusConfig().tls_cluster) {
      link->connected = true;
      StartTls(link);
    } else {
      OnConnected(link);
    }
  } else {
    link->watching_write = true;
    host_.WatchBusSocket(fd, kTag | link->id, EPOLLIN | EPOLLOUT);
  }
}

void ClusterBus::OnConnected(BusLink* link) {
  link->connected = true;
  ClusterNode* node = link->node;
  // The first packet: a MEET makes the receiver add us; keep an older outstanding ping's time
  // so a flapping link can't hide a silent node.
  const int64_t old_ping_sent = node->ping_sent;
  SendPing(link, node->has(kNodeMeet) ? BusType::kMeet : BusType::kPing);
  if (link->dead) return;
  if (old_ping_sent != 0) node->ping_sent = old_ping_sent;
  node->flags &= ~kNodeMeet;
}

void ClusterBus::Accept(int listen_fd) {
  for (int i = 0; i < 1000; ++i) {
    sockaddr_storage addr{};
    socklen_t len = sizeof(addr);
    int fd =
        accept4(listen_fd, reinterpret_cast<sockaddr*>(&addr), &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
        spdlog::warn("Error accepting cluster node: {}", strerror(errno));
      }
      return;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    BusLink* link = NewLink(fd, true, NowMs());
    link->connected = true;
    link->peer_ip = SockName(fd, true);
    host_.WatchBusSocket(fd, kTag | link->id, EPOLLIN);
    spdlog::debug("Accepting cluster node connection from {}", link->peer_ip);
    if (host_.BusConfig().tls_cluster) StartTls(link);
  }
}

void ClusterBus::StartTls(BusLink* link) {
  const ServerConfig& c = host_.BusConfig();
  // Both directions verify the peer against tls-ca-cert-file/dir: outbound always (the peer is
  // a server), inbound per tls-auth-clients, as Redis's cluster bus does.
  link->tls = link->inbound ? host_.BusTls().Accept(link->fd, c.tls_auth_clients)
                            : host_.BusTls().Connect(link->fd);
  if (link->tls == nullptr) {
    spdlog::warn("Cluster bus link {} {}: TLS is not configured", link->inbound ? "from" : "to",
                 link->inbound ? link->peer_ip : std::string(ShortName(link->node)));
    FreeLink(link);
    return;
  }
  ContinueTls(link);
}

void ClusterBus::ContinueTls(BusLink* link) {
  switch (link->tls->Handshake()) {
    case TlsSession::Step::kFailed:
      // Verbose, as Redis logs these: a misconfigured peer retries every 100 ms.
      if (link->inbound) {
        spdlog::debug("Error accepting cluster node connection from {}: {}", link->peer_ip,
                      link->tls->error());
      } else {
        spdlog::debug("Connection with Node {} at {}:{} failed: TLS handshake: {}",
                      ShortName(link->node), link->node ? link->node->ip : "",
                      link->node ? link->node->cport : 0, link->tls->error());
        // As a failed connect: failure detection must see the node as silent.
        if (link->node != nullptr && link->node->ping_sent == 0) link->node->ping_sent = NowMs();
      }
      FreeLink(link);
      return;
    case TlsSession::Step::kWantRead:
    case TlsSession::Step::kWantWrite:
      UpdateWriteInterest(link);
      return;
    case TlsSession::Step::kDone:
      break;
  }
  if (!link->inbound) OnConnected(link);  // the first PING/MEET, now that it can be sent
  if (!link->dead) Flush(link);
  // What the peer sent right behind its last handshake message may already be in OpenSSL.
  if (!link->dead) Read(link);
}

void ClusterBus::ExpireTlsHandshakes(int64_t now) {
  std::vector<BusLink*> stalled;
  for (const auto& [id, link] : links_) {
    if (link->tls != nullptr && !link->tls->handshake_done() &&
        now - link->ctime > kTlsHandshakeTimeoutMs) {
      stalled.push_back(link.get());
    }
  }
  for (BusLink* link : stalled) {
    spdlog::warn("Cluster bus link {} {}: TLS handshake timed out", link->inbound ? "from" : "to",
                 link->inbound ? link->peer_ip : std::string(ShortName(link->node)));
    FreeLink(link);
  }
}

void ClusterBus::UpdateWriteInterest(BusLink* link) {
  if (link->dead) return;
  // Output queued during a handshake waits for it: EPOLLOUT then would only spin the loop.
  const bool want = (link->ready() && link->out_sent < link->out.size()) ||
                    (link->tls != nullptr && link->tls->wants_write());
  if (want == link->watching_write) return;
  link->watching_write = want;
  host_.WatchBusSocket(link->fd, kTag | link->id, want ? (EPOLLIN | EPOLLOUT) : EPOLLIN);
}

ssize_t ClusterBus::ReadSome(BusLink* link, char* buf, size_t n) {
  return link->tls != nullptr ? link->tls->Read(buf, n) : read(link->fd, buf, n);
}

void ClusterBus::OnSocketEvent(uint64_t id, uint32_t events) {
  if (auto l = listener_ids_.find(id); l != listener_ids_.end()) {
    Accept(l->second);
    return;
  }
  auto it = links_.find(id);
  if (it == links_.end()) return;
  BusLink* link = it->second.get();
  if (!link->connected) {
    int err = 0;
    socklen_t len = sizeof(err);
    getsockopt(link->fd, SOL_SOCKET, SO_ERROR, &err, &len);
    if (err != 0 || (events & (EPOLLERR | EPOLLHUP)) != 0) {
      spdlog::debug("Connection with Node {} at {}:{} failed: {}", ShortName(link->node),
                    link->node ? link->node->ip : "", link->node ? link->node->cport : 0,
                    strerror(err));
      if (link->node != nullptr && link->node->ping_sent == 0) link->node->ping_sent = NowMs();
      FreeLink(link);
      ReapDeadLinks();
      return;
    }
    link->connected = true;
    if (host_.BusConfig().tls_cluster) {
      StartTls(link);
    } else {
      link->watching_write = false;
      host_.WatchBusSocket(link->fd, kTag | link->id, EPOLLIN);
      OnConnected(link);
      if (!link->dead) Flush(link);
    }
    ReapDeadLinks();
    return;
  }
  if (link->tls != nullptr && !link->tls->handshake_done()) {
    ContinueTls(link);
    ReapDeadLinks();
    return;
  }
  if ((events & EPOLLOUT) != 0) Flush(link);
  // A TLS read may have waited for the socket to take a write (a key update's answer).
  if (!link->dead && ((events & (EPOLLIN | EPOLLHUP | EPOLLERR)) != 0 ||
                      (link->tls != nullptr && link->tls->wants_write()))) {
    Read(link);
  }
  ReapDeadLinks();
}

void ClusterBus::Read(BusLink* link) {
  char buf[kReadChunk];
  for (;;) {
    ssize_t n = ReadSome(link, buf, sizeof(buf));
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
      spdlog::debug("I/O error reading from node link ({})",
                    n == 0 ? "connection closed" : strerror(errno));
      FreeLink(link);
      return;
    }
    if (n < 0) {
      if (errno == EINTR) continue;
      if (link->tls != nullptr) UpdateWriteInterest(link);
      break;
    }
    link->reader.Feed(std::string_view(buf, static_cast<size_t>(n)));
    // A short read drained the socket; OpenSSL may still hold decrypted bytes it won't
    // announce again.
    if (static_cast<size_t>(n) < sizeof(buf) && (link->tls == nullptr || link->tls->Pending() == 0))
      break;
  }
  BusMessage msg;
  std::string error;
  while (!link->dead) {
    switch (link->reader.Next(&msg, &error)) {
      case ClusterBusLink::Result::kNeedMore:
        return;
      case ClusterBusLink::Result::kBroken:
        spdlog::warn("{}", error);
        FreeLink(link);
        return;
      case ClusterBusLink::Result::kInvalid:
        spdlog::warn("Invalid message received on the cluster bus: {}", error);
        break;
      case ClusterBusLink::Result::kMessage:
        Process(link, msg);
        break;
    }
  }
}

void ClusterBus::Flush(BusLink* link) {
  if (link->dead || !link->ready()) return;
  while (link->out_sent < link->out.size()) {
    const char* data = link->out.data() + link->out_sent;
    const size_t size = link->out.size() - link->out_sent;
    ssize_t n = link->tls != nullptr ? link->tls->Write(data, size) : write(link->fd, data, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) break;
      spdlog::debug("Error writing to node link: {}", strerror(errno));
      FreeLink(link);
      return;
    }
    link->out_sent += static_cast<size_t>(n);
  }
  if (link->out_sent == link->out.size()) {
    // A burst (big PUBLISHes) must not pin its buffer: mem_cluster_links falls back as
    // Redis's does once its queued messages are written.
    if (link->out.capacity() > kKeptSendBuffer) {
      std::string().swap(link->out);
    } else {
      link->out.clear();
    }
    link->out_sent = 0;
  }
  UpdateWriteInterest(link);
}

void ClusterBus::Send(BusLink* link, const BusMessage& msg) {
  if (link == nullptr || link->dead) return;
  const int64_t limit = host_.BusConfig().cluster_link_sendbuf_limit;
  if (limit > 0 && link->out.size() - link->out_sent > static_cast<size_t>(limit)) {
    ++state_.links_buffer_limit_exceeded;
    spdlog::warn(
        "Freeing cluster link({} node {}, used memory: {}) due to exceeding send buffer "
        "memory limit.",
        link->inbound ? "from" : "to", ShortName(link->node), link->out.size());
    FreeLink(link);
    return;
  }
  link->out += Encode(msg);
  const auto type = static_cast<int>(msg.type);
  if (type < kMessageTypeCount) ++state_.messages_sent[type];
  // Written when the socket is next reported writable, as Redis's write handler does: what
  // one command (or a MULTI) sends queues up first and shows in mem_cluster_links. A link
  // still connecting keeps its EPOLLOUT for the connect; it flushes once connected.
  if (link->ready()) UpdateWriteInterest(link);
}

std::vector<BusLink*> ClusterBus::PeerLinks() const {
  // Collected first: sending may free a link (its buffer limit), which edits the nodes' links.
  std::vector<BusLink*> links;
  for (const auto& [name, node] : state_.nodes()) {
    if (node->link == nullptr || node->has(kNodeMyself | kNodeHandshake)) continue;
    links.push_back(node->link);
  }
  return links;
}

void ClusterBus::Broadcast(const BusMessage& msg) {
  for (BusLink* link : PeerLinks()) Send(link, msg);
}

// --- building messages ------------------------------------------------------------------------

BusMessage ClusterBus::Header(BusType type) const {
  const ServerConfig& c = host_.BusConfig();
  const ClusterNode* me = state_.myself();
  const ClusterNode* master = me->is_replica() && me->master != nullptr ? me->master : me;
  BusMessage msg;
  msg.type = type;
  BusHeader& h = msg.header;
  h.sender = me->name;
  h.ip = c.cluster_announce_ip;
  const int tcp = c.cluster_announce_port != 0 ? c.cluster_announce_port : me->tcp_port;
  const int tls = c.cluster_announce_tls_port != 0 ? c.cluster_announce_tls_port : me->tls_port;
  h.port = static_cast<uint16_t>(c.tls_cluster ? tls : tcp);
  h.pport = static_cast<uint16_t>(c.tls_cluster ? tcp : tls);
  h.cport = static_cast<uint16_t>(me->cport);
  h.slots = BitmapOf(*master);
  if (me->master != nullptr) h.master = me->master->name;
  h.flags = me->flags;
  h.state = state_.ok() ? kClusterStateOk : kClusterStateFail;
  h.current_epoch = state_.current_epoch();
  h.config_epoch = master->config_epoch;
  h.repl_offset = static_cast<uint64_t>(host_.ClusterReplOffset());
  if (me->is_master() && mf_end_ != 0) h.mflags[0] |= kMsgFlagPaused;
  return msg;
}

void ClusterBus::SendPing(BusLink* link, BusType type) {
  if (link == nullptr || link->dead) return;
  const int64_t now = NowMs();
  // A tenth of the nodes, at least three, never myself or the receiver; PFAIL nodes always go
  // so failure reports spread fast.
  const auto& nodes = state_.nodes();
  int fresh = static_cast<int>(nodes.size()) - 2;
  int wanted = std::max<int>(static_cast<int>(nodes.size()) / 10, 3);
  wanted = std::min(wanted, fresh);
  if (link->node != nullptr && type == BusType::kPing) link->node->ping_sent = now;
  BusMessage msg = Header(type);
  ++pings_sent_;
  std::vector<ClusterNode*> all;
  all.reserve(nodes.size());
  for (const auto& [name, node] : nodes) all.push_back(node.get());
  auto add = [&](ClusterNode* n) {
    GossipEntry g;
    g.name = n->name;
    g.ping_sent = static_cast<uint32_t>(n->ping_sent / 1000);
    g.pong_received = static_cast<uint32_t>(n->pong_received / 1000);
    g.ip = n->ip;
    const bool tls = host_.BusConfig().tls_cluster;
    g.port = static_cast<uint16_t>(tls ? n->tls_port : n->tcp_port);
    g.pport = static_cast<uint16_t>(tls ? n->tcp_port : n->tls_port);
    g.cport = static_cast<uint16_t>(n->cport);
    g.flags = n->flags;
    msg.gossip.push_back(std::move(g));
    last_in_gossip_[n] = pings_sent_;
  };
  int max_iterations = wanted * 3;
  while (fresh > 0 && static_cast<int>(msg.gossip.size()) < wanted && max_iterations-- > 0 &&
         !all.empty()) {
    ClusterNode* n = all[rng_() % all.size()];
    if (n == state_.myself() || n->has(kNodePfail)) continue;
    if (n->has(kNodeHandshake | kNodeNoAddr) || (n->link == nullptr && n->num_slots == 0)) {
      --fresh;
      continue;
    }
    if (last_in_gossip_[n] == pings_sent_) continue;
    add(n);
    --fresh;
  }
  int pfail_wanted = pfail_nodes_;
  for (ClusterNode* n : all) {
    if (pfail_wanted <= 0) break;
    if (n->has(kNodeHandshake | kNodeNoAddr) || !n->has(kNodePfail)) continue;
    add(n);
    --pfail_wanted;
  }
  const ClusterNode* me = state_.myself();
  if (!me->hostname.empty()) msg.extensions.push_back(PingExt::Hostname(me->hostname));
  if (!me->human_nodename.empty()) {
    msg.extensions.push_back(PingExt::HumanNodename(me->human_nodename));
  }
  const int64_t now_s = now / 1000;
  std::erase_if(forgotten_, [now_s](const auto& f) { return f.second <= now_s; });
  for (const auto& [name, expiry] : forgotten_) {
    msg.extensions.push_back(PingExt::ForgottenNode(name, static_cast<uint64_t>(expiry - now_s)));
  }
  msg.extensions.push_back(PingExt::ShardId(me->shard_id));
  Send(link, msg);
}

void ClusterBus::BroadcastPong() {
  for (BusLink* link : PeerLinks()) SendPing(link, BusType::kPong);
}

void ClusterBus::SendFail(const std::string& name) {
  BusMessage msg = Header(BusType::kFail);
  msg.fail_node = name;
  Broadcast(msg);
}

void ClusterBus::SendUpdate(BusLink* link, const ClusterNode& node) {
  if (link == nullptr) return;
  BusMessage msg = Header(BusType::kUpdate);
  msg.update.node = node.name;
  msg.update.config_epoch = node.config_epoch;
  msg.update.slots = BitmapOf(node);
  Send(link, msg);
}

void ClusterBus::SendMfStart(ClusterNode* master) {
  if (master == nullptr || master->link == nullptr) return;
  Send(master->link, Header(BusType::kMfStart));
}

void ClusterBus::Publish(std::string_view channel, std::string_view message, bool shard) {
  BusMessage msg = Header(shard ? BusType::kPublishShard : BusType::kPublish);
  msg.publish.channel = std::string(channel);
  msg.publish.message = std::string(message);
  if (!shard) {
    Broadcast(msg);
    return;
  }
  // The shard: my master (or myself) and its replicas.
  ClusterNode* me = state_.myself();
  ClusterNode* master = me->is_replica() && me->master != nullptr ? me->master : me;
  std::vector<ClusterNode*> shard_nodes = master->replicas;
  shard_nodes.push_back(master);
  for (ClusterNode* n : shard_nodes) {
    if (n == me || n->link == nullptr || n->has(kNodeHandshake)) continue;
    Send(n->link, msg);
  }
}

void ClusterBus::Forget(const std::string& name) {
  forgotten_[name] = NowMs() / 1000 + kBlacklistTtlSeconds;
}

// --- receiving --------------------------------------------------------------------------------

std::string ClusterBus::NodeIp(BusLink* link, const BusMessage& msg) const {
  if (!msg.header.ip.empty()) return IsIp(msg.header.ip) ? msg.header.ip : "";
  if (!link->peer_ip.empty()) return link->peer_ip;
  return link->fd >= 0 ? SockName(link->fd, true) : "";
}

void ClusterBus::SetPorts(ClusterNode* node, uint16_t port, uint16_t pport) const {
  if (host_.BusConfig().tls_cluster) {
    node->tls_port = port;
    node->tcp_port = pport;
  } else {
    node->tcp_port = port;
    node->tls_port = pport;
  }
}

void ClusterBus::Process(BusLink* link, const BusMessage& msg) {
  const BusHeader& h = msg.header;
  const auto type = static_cast<int>(msg.type);
  if (type < kMessageTypeCount) ++state_.messages_received[type];
  if (type == drop_packet_filter_) {
    spdlog::warn("Dropping packet that matches debug drop filter");
    if (close_link_on_packet_drop_) {
      spdlog::warn("Closing link for matching packet type {}", type);
      FreeLink(link);
    }
    return;
  }
  const int64_t now = NowMs();
  ClusterNode* sender =
      link->node != nullptr && !link->node->in_handshake() ? link->node : state_.Lookup(h.sender);
  if (sender != nullptr && sender->has(kNodeMyself)) sender = nullptr;  // a loop or a clone
  if (sender != nullptr) sender->data_received = now;
  if (sender != nullptr && link->inbound && link->node == nullptr) {
    // The inbound link of this node: a newer one replaces an older one.
    if (sender->inbound_link != nullptr && sender->inbound_link != link) {
      FreeLink(sender->inbound_link);
    }
    sender->inbound_link = link;
    link->node = sender;
  }
  if (sender != nullptr && !sender->in_handshake()) {
    if (h.current_epoch > state_.current_epoch()) state_.set_current_epoch(h.current_epoch);
    if (h.config_epoch > sender->config_epoch) {
      sender->config_epoch = h.config_epoch;
      state_.Todo(kTodoSaveConfig | kTodoFsyncConfig);
    }
    sender->repl_offset = static_cast<int64_t>(h.repl_offset);
    sender->repl_offset_time = now;
    // A replica in a manual failover learns the offset its paused master stopped at.
    ClusterNode* me = state_.myself();
    if (mf_end_ != 0 && me->is_replica() && me->master == sender &&
        (h.mflags[0] & kMsgFlagPaused) != 0 && mf_master_offset_ == -1) {
      mf_master_offset_ = sender->repl_offset;
      handle_failover_now_ = true;
      spdlog::info("Received replication offset for paused master manual failover: {}",
                   mf_master_offset_);
    }
  }

  switch (msg.type) {
    case BusType::kPing:
    case BusType::kPong:
    case BusType::kMeet:
      ProcessPingLike(link, msg, sender);
      return;
    case BusType::kFail: {
      if (sender == nullptr) {
        spdlog::info("Ignoring FAIL message from unknown node {} about {}", h.sender,
                     msg.fail_node);
        return;
      }
      ClusterNode* failing = state_.Lookup(msg.fail_node);
      if (failing != nullptr && !failing->has(kNodeFail | kNodeMyself)) {
        spdlog::info("FAIL message received from {} about {}", sender->name, failing->name);
        failing->flags |= kNodeFail;
        failing->fail_time = now;
        failing->flags &= ~kNodePfail;
        state_.Todo(kTodoSaveConfig | kTodoUpdateState);
      }
      return;
    }
    case BusType::kPublish:
    case BusType::kPublishShard:
      if (sender == nullptr) return;
      host_.ClusterDeliverPublish(msg.publish.channel, msg.publish.message,
                                  msg.type == BusType::kPublishShard);
      return;
    case BusType::kFailoverAuthRequest:
      if (sender == nullptr) return;
      VoteIfNeeded(sender, msg);
      return;
    case BusType::kFailoverAuthAck:
      if (sender == nullptr) return;
      // A vote counts when it comes from a master serving slots, for this election's epoch.
      if (sender->is_master() && sender->num_slots > 0 && h.current_epoch >= failover_auth_epoch_) {
        ++failover_auth_count_;
        handle_failover_now_ = true;
      }
      return;
    case BusType::kMfStart: {
      ClusterNode* me = state_.myself();
      if (sender == nullptr || sender->master != me) return;
      ResetManualFailover();
      mf_end_ = now + kManualFailoverTimeoutMs;
      mf_replica_ = sender;
      host_.ClusterPauseWrites(true, kManualFailoverTimeoutMs * kManualFailoverPauseMult);
      spdlog::info("Manual failover requested by replica {}.", sender->name);
      // The replica learns the offset we paused at from this ping.
      SendPing(link, BusType::kPing);
      return;
    }
    case BusType::kUpdate: {
      if (sender == nullptr) return;
      ClusterNode* n = state_.Lookup(msg.update.node);
      if (n == nullptr || n->config_epoch >= msg.update.config_epoch) return;
      if (n->is_replica()) SetNodeAsMaster(n);
      n->config_epoch = msg.update.config_epoch;
      state_.Todo(kTodoSaveConfig | kTodoFsyncConfig);
      UpdateSlotsConfigWith(n, msg.update.config_epoch, msg.update.slots);
      return;
    }
    default:
      return;  // MODULE (no modules here) and unknown types are ignored, as Redis does
  }
}

void ClusterBus::ProcessPingLike(BusLink* link, const BusMessage& msg, ClusterNode* sender) {
  const BusHeader& h = msg.header;
  const int64_t now = NowMs();
  ClusterNode* me = state_.myself();
  const ServerConfig& c = host_.BusConfig();
  if (msg.type == BusType::kPing || msg.type == BusType::kMeet) {
    // Nodes reach us at our official address: a MEET tells us what it is (and any ping while
    // we don't know it yet).
    if ((msg.type == BusType::kMeet || me->ip.empty()) && c.cluster_announce_ip.empty()) {
      std::string ip = SockName(link->fd, false);
      if (!ip.empty() && ip != me->ip) {
        me->ip = ip;
        spdlog::info("IP address for this node updated to {}", me->ip);
        state_.Todo(kTodoSaveConfig);
      }
    }
    if (sender == nullptr && msg.type == BusType::kMeet && !NodeIp(link, msg).empty()) {
      // Added in handshake: its name, role and slots come with the PONGs of our own link.
      ClusterNode* node = state_.AddNode("", kNodeHandshake);
      node->ctime = now;
      node->ip = NodeIp(link, msg);
      SetPorts(node, h.port, h.pport);
      node->cport = h.cport;
      state_.Todo(kTodoSaveConfig);
      // A MEET is trusted for its gossip too: that is how a whole cluster is joined at once.
      ProcessGossip(msg, link);
    }
    SendPing(link, BusType::kPong);
    if (link->dead) return;
  }

  if (!link->inbound && link->node != nullptr) {
    ClusterNode* node = link->node;
    if (node->in_handshake()) {
      if (sender != nullptr) {
        // We already know this node under its real name: keep that record, maybe with the
        // address we just reached it at, and drop the handshake one (and this link).
        spdlog::debug("Handshake: we already know node {}, updating the address if needed.",
                      sender->name);
        if (UpdateAddressIfNeeded(sender, link, msg)) {
          state_.Todo(kTodoSaveConfig | kTodoUpdateState);
        }
        state_.DeleteNode(node);
        return;
      }
      if (state_.Lookup(h.sender) != nullptr || !IsNodeName(h.sender)) {
        state_.DeleteNode(node);  // our own name echoed back: we met ourselves
        return;
      }
      state_.RenameNode(node, h.sender);
      spdlog::debug("Handshake with node {} completed.", node->name);
      node->flags &= ~kNodeHandshake;
      node->flags |= h.flags & (kNodeMaster | kNodeReplica);
      state_.Todo(kTodoSaveConfig);
    } else if (node->name != h.sender) {
      // Somebody else answers at this address now: forget the address, reconnect later.
      spdlog::debug(
          "PONG contains mismatching sender ID. About node {} added {} ms ago, having "
          "flags {}",
          node->name, now - node->ctime, node->flags);
      node->flags |= kNodeNoAddr;
      node->ip.clear();
      node->tcp_port = node->tls_port = node->cport = 0;
      FreeLink(link);
      state_.Todo(kTodoSaveConfig);
      return;
    }
  }

  if (sender != nullptr) {
    // NOFAILOVER is dynamic: the sender's word is the latest.
    sender->flags =
        static_cast<uint16_t>((sender->flags & ~kNodeNoFailover) | (h.flags & kNodeNoFailover));
  }
  if (sender != nullptr && msg.type == BusType::kPing && !sender->in_handshake() &&
      UpdateAddressIfNeeded(sender, link, msg)) {
    state_.Todo(kTodoSaveConfig | kTodoUpdateState);
  }

  if (!link->inbound && msg.type == BusType::kPong && link->node != nullptr) {
    ClusterNode* node = link->node;
    node->pong_received = now;
    node->ping_sent = 0;
    // PFAIL ends by itself when the node answers; FAIL only in the cases below.
    if (node->has(kNodePfail)) {
      node->flags &= ~kNodePfail;
      state_.Todo(kTodoSaveConfig | kTodoUpdateState);
    } else if (node->failed()) {
      ClearFailureIfNeeded(node);
    }
  }

  if (sender == nullptr) return;
  // Role changes.
  if (h.master.empty()) {
    SetNodeAsMaster(sender);
  } else {
    ClusterNode* master = state_.Lookup(h.master);
    if (sender->is_master()) {
      // A master turned into a replica.
      state_.DelNodeSlots(sender);
      sender->flags &= ~(kNodeMaster | kNodeMigrateTo);
      sender->flags |= kNodeReplica;
      state_.Todo(kTodoSaveConfig | kTodoUpdateState);
    }
    if (master != nullptr && sender->master != master && master != sender) {
      if (sender->master != nullptr) state_.RemoveReplica(sender->master, sender);
      state_.AddReplica(master, sender);
      sender->master = master;
      sender->shard_id = master->shard_id;
      state_.Todo(kTodoSaveConfig);
    }
  }

  // Slots: a master claiming slots we see otherwise wins them with a greater epoch; one
  // claiming slots somebody else holds with a greater epoch is told (UPDATE).
  ClusterNode* sender_master = sender->is_master() ? sender : sender->master;
  bool dirty_slots = false;
  if (sender_master != nullptr) dirty_slots = BitmapOf(*sender_master) != h.slots;
  if (sender->is_master() && dirty_slots) UpdateSlotsConfigWith(sender, h.config_epoch, h.slots);
  if (dirty_slots && !link->dead) {
    for (int j = 0; j < kSlotCount; ++j) {
      if (!SlotBit(h.slots, j)) continue;
      ClusterNode* owner = state_.OwnerOf(j);
      if (owner == sender || owner == nullptr) continue;
      if (owner->config_epoch > h.config_epoch) {
        spdlog::debug("Node {} has old slots configuration, sending an UPDATE message about {}",
                      sender->name, owner->name);
        SendUpdate(sender->link, *owner);
        break;
      }
    }
  }
  if (me->is_master() && sender->is_master() && h.config_epoch == me->config_epoch) {
    HandleEpochCollision(sender);
  }
  ProcessGossip(msg, link);
  ProcessExtensions(msg, sender);
}

bool ClusterBus::UpdateAddressIfNeeded(ClusterNode* node, BusLink* link, const BusMessage& msg) {
  if (link == node->link) return false;
  const std::string ip = NodeIp(link, msg);
  if (ip.empty()) return false;
  ClusterNode probe;
  SetPorts(&probe, msg.header.port, msg.header.pport);
  if (node->tcp_port == probe.tcp_port && node->tls_port == probe.tls_port &&
      node->cport == msg.header.cport && node->ip == ip) {
    return false;
  }
  node->ip = ip;
  node->tcp_port = probe.tcp_port;
  node->tls_port = probe.tls_port;
  node->cport = msg.header.cport;
  if (node->link != nullptr) FreeLink(node->link);
  node->flags &= ~kNodeNoAddr;
  spdlog::info("Address updated for node {}, now {}:{}", node->name, node->ip, node->tcp_port);
  if (state_.myself()->is_replica() && state_.myself()->master == node) {
    host_.ClusterSyncReplication();
  }
  return true;
}

void ClusterBus::ProcessGossip(const BusMessage& msg, BusLink* link) {
  ClusterNode* sender = link->node != nullptr ? link->node : state_.Lookup(msg.header.sender);
  const int64_t now = NowMs();
  const bool tls = host_.BusConfig().tls_cluster;
  for (const GossipEntry& g : msg.gossip) {
    if (!g.ip.empty() && !IsIp(g.ip)) continue;  // a lie nodes.conf could not hold
    ClusterNode* node = state_.Lookup(g.name);
    const int gport = tls ? g.pport : g.port;
    const int gtls = tls ? g.port : g.pport;
    if (node != nullptr) {
      // Failure reports count only from masters.
      if (sender != nullptr && sender->is_master() && node != state_.myself()) {
        if ((g.flags & (kNodeFail | kNodePfail)) != 0) {
          if (state_.AddFailureReport(node, sender, now)) {
            spdlog::debug("Node {} ({}) reported node {} ({}) as not reachable.", sender->name,
                          sender->human_nodename, node->name, node->human_nodename);
          }
          MarkFailingIfNeeded(node);
        } else if (state_.DelFailureReport(node, sender)) {
          spdlog::debug("Node {} ({}) reported node {} ({}) is back online.", sender->name,
                        sender->human_nodename, node->name, node->human_nodename);
        }
      }
      // A node that is up for everyone, with no ping of ours outstanding: take the sender's
      // newer pong time (not from the future).
      if ((g.flags & (kNodeFail | kNodePfail)) == 0 && node->ping_sent == 0 &&
          state_.FailureReportCount(*node) == 0) {
        const int64_t pong = static_cast<int64_t>(g.pong_received) * 1000;
        if (pong <= now + 500 && pong > node->pong_received) node->pong_received = pong;
      }
      // We can't reach it but the sender can, at another address: try that one.
      if (node->has(kNodeFail | kNodePfail) && (g.flags & kNodeNoAddr) == 0 &&
          (g.flags & (kNodeFail | kNodePfail)) == 0 &&
          (node->ip != g.ip || node->tcp_port != gport || node->tls_port != gtls ||
           node->cport != g.cport)) {
        if (node->link != nullptr) FreeLink(node->link);
        node->ip = g.ip;
        node->tcp_port = gport;
        node->tls_port = gtls;
        node->cport = g.cport;
        node->flags &= ~kNodeNoAddr;
      }
    } else if (sender != nullptr && (g.flags & kNodeNoAddr) == 0 &&
               !state_.BlacklistContains(g.name, now / 1000) && IsNodeName(g.name)) {
      // A node our cluster knows: add it with its real name (no handshake, so an address that
      // was reused by another cluster's node can't pull us in).
      ClusterNode* added = state_.AddNode(g.name, g.flags & ~(kNodeMyself | kNodeMeet));
      added->ip = g.ip;
      added->tcp_port = gport;
      added->tls_port = gtls;
      added->cport = g.cport;
      added->shard_id = state_.RandomId();
    }
  }
}

void ClusterBus::ProcessExtensions(const BusMessage& msg, ClusterNode* sender) {
  std::string hostname, human;
  for (const PingExt& ext : msg.extensions) {
    switch (ext.type) {
      case PingExtType::kHostname:
        if (IsPrintableName(ext.text)) hostname = ext.text;
        break;
      case PingExtType::kHumanNodename:
        if (IsPrintableName(ext.text)) human = ext.text;
        break;
      case PingExtType::kForgottenNode: {
        ClusterNode* n = state_.Lookup(ext.name);
        ClusterNode* me = state_.myself();
        if (n != nullptr && n != me && n != sender && !(me->is_replica() && me->master == n)) {
          spdlog::info("Ignoring node {} as forgotten (ttl {})", n->name, ext.ttl);
          state_.BlacklistAdd(n->name, NowMs() / 1000);
          state_.DeleteNode(n);
          state_.Todo(kTodoUpdateState | kTodoSaveConfig);
        }
        break;
      }
      case PingExtType::kShardId:
        if (IsNodeName(ext.name) && sender->shard_id != ext.name) {
          sender->shard_id = ext.name;
          if (sender->is_master()) {
            for (ClusterNode* r : sender->replicas) r->shard_id = ext.name;
            if (state_.myself()->master == sender) state_.Todo(kTodoSaveConfig);
          }
          state_.Todo(kTodoSaveConfig);
        }
        break;
      default:
        break;
    }
  }
  // No hostname extension: the node announces none (any more).
  if (sender->hostname != hostname || sender->human_nodename != human) {
    sender->hostname = hostname;
    sender->human_nodename = human;
    state_.Todo(kTodoSaveConfig);
  }
}

void ClusterBus::SetNodeAsMaster(ClusterNode* node) {
  if (node->is_master()) return;
  state_.SetNodeAsMaster(node);
  state_.Todo(kTodoSaveConfig | kTodoUpdateState);
}

void ClusterBus::UpdateSlotsConfigWith(ClusterNode* sender, uint64_t sender_epoch,
                                       const SlotBitmap& slots) {
  ClusterNode* me = state_.myself();
  if (sender == me) {
    spdlog::info("Discarding UPDATE message about myself.");
    return;
  }
  ClusterNode* my_master = me->is_master() ? me : me->master;
  ClusterNode* new_master = nullptr;
  int sender_slots = 0, migrated_our_slots = 0;
  std::vector<int> dirty;
  for (int j = 0; j < kSlotCount; ++j) {
    if (!SlotBit(slots, j)) continue;
    ++sender_slots;
    ClusterNode* owner = state_.OwnerOf(j);
    if (owner == sender) continue;
    // An import in progress is settled by the operator (SETSLOT NODE), not by gossip.
    if (state_.importing_from(j) != nullptr) continue;
    if (owner != nullptr && owner->config_epoch >= sender_epoch) continue;
    if (owner == me && host_.ClusterKeysInSlot(j) != 0) dirty.push_back(j);
    if (owner != nullptr && owner == my_master) {
      new_master = sender;
      ++migrated_our_slots;
    }
    state_.DelSlot(j);
    state_.AddSlot(sender, j);
    state_.Todo(kTodoSaveConfig | kTodoUpdateState | kTodoFsyncConfig);
  }
  if (new_master != nullptr && my_master != nullptr && my_master->num_slots == 0 &&
      (host_.BusConfig().cluster_allow_replica_migration || sender_slots == migrated_our_slots)) {
    // Our shard lost its last slot to the sender (a failover, or a migration of everything):
    // follow it.
    spdlog::warn("Configuration change detected. Reconfiguring myself as a replica of {}",
                 sender->name);
    FollowMaster(sender);
    state_.Todo(kTodoSaveConfig | kTodoUpdateState | kTodoFsyncConfig);
  } else if (me->master != nullptr && me->master->master != nullptr && me->master->master != me) {
    // Our master became a replica: follow its master rather than chain.
    spdlog::info("I'm a sub-replica! Reconfiguring myself as a replica of grandmaster {}",
                 me->master->master->name);
    FollowMaster(me->master->master);
    state_.Todo(kTodoSaveConfig | kTodoUpdateState | kTodoFsyncConfig);
  } else {
    // Slots we lost while holding keys in them: those keys belong to the new owner now.
    for (int slot : dirty) host_.ClusterDeleteKeysInSlot(slot);
  }
}

void ClusterBus::HandleEpochCollision(ClusterNode* sender) {
  ClusterNode* me = state_.myself();
  if (sender->config_epoch != me->config_epoch || !sender->is_master() || !me->is_master()) return;
  // The node with the smaller name keeps its epoch; the other takes the next one.
  if (sender->name <= me->name) return;
  state_.set_current_epoch(state_.current_epoch() + 1);
  me->config_epoch = state_.current_epoch();
  host_.SaveClusterConfig(true);
  spdlog::debug("WARNING: configEpoch collision with node {}. configEpoch set to {}", sender->name,
                me->config_epoch);
}

void ClusterBus::MarkFailingIfNeeded(ClusterNode* node) {
  if (!node->has(kNodePfail) || node->failed()) return;
  const int quorum = state_.size() / 2 + 1;
  state_.CleanupFailureReports(node, NowMs());
  int failures = static_cast<int>(node->fail_reports.size());
  if (state_.myself()->is_master()) ++failures;
  if (failures < quorum) return;
  spdlog::info("Marking node {} as failing (quorum reached).", node->name);
  node->flags &= ~kNodePfail;
  node->flags |= kNodeFail;
  node->fail_time = NowMs();
  // Everyone reachable flags it too (a replica helps spread the news as well).
  SendFail(node->name);
  state_.Todo(kTodoUpdateState | kTodoSaveConfig);
}

void ClusterBus::ClearFailureIfNeeded(ClusterNode* node) {
  const int64_t now = NowMs();
  if (node->is_replica() || node->num_slots == 0) {
    spdlog::info("Clear FAIL state for node {}: {} is reachable again.", node->name,
                 node->is_replica() ? "replica" : "master without slots");
    node->flags &= ~kNodeFail;
    state_.Todo(kTodoUpdateState | kTodoSaveConfig);
  }
  if (node->is_master() && node->num_slots > 0 &&
      now - node->fail_time > host_.BusConfig().cluster_node_timeout * kFailUndoTimeMult) {
    spdlog::info(
        "Clear FAIL state for node {}: is reachable again and nobody is serving its "
        "slots after some time.",
        node->name);
    node->flags &= ~kNodeFail;
    state_.Todo(kTodoUpdateState | kTodoSaveConfig);
  }
}

void ClusterBus::FollowMaster(ClusterNode* master) {
  state_.SetMyMaster(master);
  ResetManualFailover();
  host_.ClusterSyncReplication();
}

// --- cron -------------------------------------------------------------------------------------

void ClusterBus::Cron() {
  const int64_t start = NowMs();
  // The server cron may run more often (hz); Redis's bus cron runs every 100 ms. The slack
  // keeps a 10 Hz server cron from skipping every other turn.
  if (start - last_cron_ms_ < kCronPeriodMs - 20) return;
  last_cron_ms_ = start;
  ++iteration_;
  const ServerConfig& c = host_.BusConfig();
  const int64_t timeout = c.cluster_node_timeout;
  const int64_t handshake_timeout = std::max<int64_t>(timeout, 1000);
  pfail_nodes_ = 0;
  std::vector<ClusterNode*> all;
  for (const auto& [name, node] : state_.nodes()) all.push_back(node.get());
  for (ClusterNode* node : all) {
    if (node->has(kNodeMyself | kNodeNoAddr)) continue;
    if (node->has(kNodePfail)) ++pfail_nodes_;
    if (node->in_handshake() && start - node->ctime > handshake_timeout) {
      state_.DeleteNode(node);
      continue;
    }
    if (node->link == nullptr && !node->ip.empty() && node->cport != 0) Connect(node, start);
  }
  all.clear();
  for (const auto& [name, node] : state_.nodes()) all.push_back(node.get());

  // About once a second, ping the node with the oldest pong among a few random ones.
  if (iteration_ % 10 == 0 && !all.empty()) {
    ClusterNode* oldest = nullptr;
    for (int j = 0; j < 5; ++j) {
      ClusterNode* n = all[rng_() % all.size()];
      if (n->link == nullptr || n->ping_sent != 0) continue;
      if (n->has(kNodeMyself | kNodeHandshake)) continue;
      if (oldest == nullptr || n->pong_received < oldest->pong_received) oldest = n;
    }
    if (oldest != nullptr) SendPing(oldest->link, BusType::kPing);
  }

  ClusterNode* me = state_.myself();
  int orphaned_masters = 0, max_replicas = 0, my_master_replicas = 0;
  bool update_state = false;
  for (ClusterNode* node : all) {
    if (node->has(kNodeMyself | kNodeNoAddr | kNodeHandshake)) continue;
    const int64_t now = NowMs();
    if (me->is_replica() && node->is_master() && !node->failed()) {
      int ok_replicas = 0;
      for (const ClusterNode* r : node->replicas) {
        if (!r->has(kNodeFail | kNodePfail)) ++ok_replicas;
      }
      if (ok_replicas == 0 && node->num_slots > 0 && node->has(kNodeMigrateTo)) {
        ++orphaned_masters;
      }
      max_replicas = std::max(max_replicas, ok_replicas);
      if (me->master == node) my_master_replicas = ok_replicas;
    }
    const int64_t ping_delay = now - node->ping_sent;
    const int64_t data_delay = now - node->data_received;
    // No traffic at all for half the timeout while a ping is outstanding: the connection may
    // be what is broken; reconnect.
    if (node->link != nullptr && now - node->link->ctime > timeout && node->ping_sent != 0 &&
        ping_delay > timeout / 2 && data_delay > timeout / 2) {
      FreeLink(node->link);
    }
    const int64_t ping_interval =
        c.cluster_ping_interval > 0 ? c.cluster_ping_interval : timeout / 2;
    if (node->link != nullptr && node->ping_sent == 0 &&
        now - node->pong_received > ping_interval) {
      SendPing(node->link, BusType::kPing);
      continue;
    }
    // A master in a manual failover keeps its replica informed of its offset.
    if (mf_end_ != 0 && me->is_master() && mf_replica_ == node && node->link != nullptr) {
      SendPing(node->link, BusType::kPing);
      continue;
    }
    if (node->ping_sent == 0) continue;
    const int64_t node_delay = std::min(ping_delay, data_delay);
    if (node_delay > timeout && !node->has(kNodePfail | kNodeFail)) {
      node->flags |= kNodePfail;
      update_state = true;
      // The only master of the cluster is its whole quorum: nobody else would ever report
      // the node (a replica in a one-shard cluster), so it decides alone, as Redis 7.2 does.
      if (me->is_master() && state_.size() == 1) {
        MarkFailingIfNeeded(node);
      } else {
        spdlog::debug("*** NODE {} possibly failing", node->name);
      }
    }
  }

  ExpireTlsHandshakes(NowMs());
  host_.ClusterSyncReplication();
  CheckManualFailoverTimeout();
  if (me->is_replica()) {
    HandleManualFailover();
    HandleReplicaFailover();
    if (orphaned_masters > 0 && max_replicas >= 2 && my_master_replicas == max_replicas &&
        c.cluster_allow_replica_migration) {
      HandleReplicaMigration(max_replicas);
    }
  }
  if (update_state || !state_.ok()) state_.Todo(kTodoUpdateState);
  ReapDeadLinks();
}

void ClusterBus::BeforeSleep() {
  if (handle_failover_now_) {
    handle_failover_now_ = false;
    if (state_.myself()->is_replica()) {
      HandleManualFailover();
      HandleReplicaFailover();
    }
  }
  ReapDeadLinks();
}

// --- failover ---------------------------------------------------------------------------------

int ClusterBus::ReplicaRank() const {
  const ClusterNode* me = state_.myself();
  const ClusterNode* master = me->master;
  if (master == nullptr) return 0;
  const int64_t my_offset = host_.ClusterReplOffset();
  int rank = 0;
  for (const ClusterNode* r : master->replicas) {
    if (r != me && !r->has(kNodeNoFailover) && r->repl_offset > my_offset) ++rank;
  }
  return rank;
}

void ClusterBus::LogCantFailover(int reason) {
  const int64_t now = NowMs();
  // The same reason is logged again only after a while, and not at all right after the master
  // failed (the election may simply not have happened yet).
  constexpr int64_t kNoLogPeriodMs = 10000;
  if (reason == cant_failover_reason_ && now - cant_failover_logged_ms_ < kNoLogPeriodMs) return;
  cant_failover_reason_ = reason;
  const ClusterNode* master = state_.myself()->master;
  if (master != nullptr && master->failed() && now - master->fail_time < kNoLogPeriodMs) {
    return;
  }
  cant_failover_logged_ms_ = now;
  std::string_view text;
  switch (reason) {
    case kCantFailoverDataAge:
      text =
          "Disconnected from master for longer than allowed. Please check the "
          "'cluster-replica-validity-factor' configuration option.";
      break;
    case kCantFailoverWaitingDelay:
      text = "Waiting the delay before I can start a new failover.";
      break;
    case kCantFailoverExpired:
      text = "Failover attempt expired.";
      break;
    case kCantFailoverWaitingVotes:
      text = "Waiting for votes, but majority still not reached.";
      break;
    default:
      text = "Unknown reason code.";
      break;
  }
  spdlog::info("Currently unable to failover: {}", text);
}

void ClusterBus::HandleReplicaFailover() {
  ClusterNode* me = state_.myself();
  const ServerConfig& c = host_.BusConfig();
  const int64_t now = NowMs();
  const int64_t auth_age = now - failover_auth_time_;
  const int quorum = state_.size() / 2 + 1;
  const bool manual = mf_end_ != 0 && mf_can_start_;
  const int64_t auth_timeout = std::max<int64_t>(c.cluster_node_timeout * 2, 2000);
  const int64_t auth_retry = auth_timeout * 2;
  if (me->is_master() || me->master == nullptr || (!me->master->failed() && !manual) ||
      (c.cluster_replica_no_failover && !manual) || me->master->num_slots == 0) {
    cant_failover_reason_ = kCantFailoverNone;
    return;
  }
  // How stale our data is, beyond the time it took to flag the master as failing.
  int64_t data_age = host_.ClusterReplDataAgeMs();
  if (data_age > c.cluster_node_timeout) data_age -= c.cluster_node_timeout;
  if (c.cluster_replica_validity_factor != 0 &&
      data_age > c.repl_ping_replica_period * 1000 +
                     c.cluster_node_timeout * c.cluster_replica_validity_factor &&
      !manual) {
    LogCantFailover(kCantFailoverDataAge);
    return;
  }
  if (auth_age > auth_retry) {
    // A new election: wait for the FAIL to spread, plus a second per better-placed replica.
    std::uniform_int_distribution<int> jitter(0, 499);
    failover_auth_time_ = now + 500 + jitter(rng_);
    failover_auth_count_ = 0;
    failover_auth_sent_ = false;
    failover_auth_rank_ = ReplicaRank();
    failover_auth_time_ += failover_auth_rank_ * 1000;
    if (mf_end_ != 0) {
      failover_auth_time_ = now;
      failover_auth_rank_ = 0;
      handle_failover_now_ = true;
    }
    spdlog::info("Start of election delayed for {} milliseconds (rank #{}, offset {}).",
                 failover_auth_time_ - now, failover_auth_rank_, host_.ClusterReplOffset());
    // Other replicas of the master learn our offset (and so their rank).
    std::vector<BusLink*> targets;
    for (const ClusterNode* r : me->master->replicas) {
      if (r != me && r->link != nullptr) targets.push_back(r->link);
    }
    for (BusLink* l : targets) SendPing(l, BusType::kPong);
    return;
  }
  if (!failover_auth_sent_ && mf_end_ == 0) {
    const int rank = ReplicaRank();
    if (rank > failover_auth_rank_) {
      const int64_t added = (rank - failover_auth_rank_) * 1000;
      failover_auth_time_ += added;
      failover_auth_rank_ = rank;
      spdlog::info("Replica rank updated to #{}, added {} milliseconds of delay.", rank, added);
    }
  }
  if (now < failover_auth_time_) {
    LogCantFailover(kCantFailoverWaitingDelay);
    return;
  }
  if (auth_age > auth_timeout) {
    LogCantFailover(kCantFailoverExpired);
    return;
  }
  if (!failover_auth_sent_) {
    state_.set_current_epoch(state_.current_epoch() + 1);
    failover_auth_epoch_ = state_.current_epoch();
    spdlog::info("Starting a failover election for epoch {}.", failover_auth_epoch_);
    BusMessage request = Header(BusType::kFailoverAuthRequest);
    if (mf_end_ != 0) request.header.mflags[0] |= kMsgFlagForceAck;
    Broadcast(request);
    failover_auth_sent_ = true;
    state_.Todo(kTodoSaveConfig | kTodoUpdateState | kTodoFsyncConfig);
    return;
  }
  if (failover_auth_count_ >= quorum) {
    spdlog::info("Failover election won: I'm the new master.");
    if (me->config_epoch < failover_auth_epoch_) {
      me->config_epoch = failover_auth_epoch_;
      spdlog::info("configEpoch set to {} after successful failover", me->config_epoch);
    }
    ReplaceMyMaster();
  } else {
    LogCantFailover(kCantFailoverWaitingVotes);
  }
}

void ClusterBus::ReplaceMyMaster() {
  ClusterNode* me = state_.myself();
  if (me->is_master() || me->master == nullptr) return;
  state_.ReplaceMyMaster();
  host_.ClusterSyncReplication();
  state_.UpdateState(NowMs());
  host_.SaveClusterConfig(true);
  // Everyone learns at once that the slots are ours now.
  BroadcastPong();
  ResetManualFailover();
}

void ClusterBus::VoteIfNeeded(ClusterNode* node, const BusMessage& request) {
  ClusterNode* me = state_.myself();
  const BusHeader& h = request.header;
  ClusterNode* master = node->master;
  const bool force_ack = (h.mflags[0] & kMsgFlagForceAck) != 0;
  // Only masters serving slots vote: they are the cluster's size.
  if (me->is_replica() || me->num_slots == 0) return;
  if (h.current_epoch < state_.current_epoch()) {
    spdlog::warn("Failover auth denied to {}: reqEpoch ({}) < curEpoch({})", node->name,
                 h.current_epoch, state_.current_epoch());
    return;
  }
  if (state_.last_vote_epoch() == state_.current_epoch()) {
    spdlog::warn("Failover auth denied to {}: already voted for epoch {}", node->name,
                 state_.current_epoch());
    return;
  }
  if (node->is_master() || master == nullptr || (!master->failed() && !force_ack)) {
    if (node->is_master()) {
      spdlog::warn("Failover auth denied to {}: it is a master node", node->name);
    } else if (master == nullptr) {
      spdlog::warn("Failover auth denied to {}: I don't know its master", node->name);
    } else {
      spdlog::warn("Failover auth denied to {}: its master is up", node->name);
    }
    return;
  }
  const int64_t now = NowMs();
  if (now - master->voted_time < host_.BusConfig().cluster_node_timeout * 2) {
    spdlog::warn(
        "Failover auth denied to {}: can't vote about this master before {} "
        "milliseconds",
        node->name, host_.BusConfig().cluster_node_timeout * 2 - (now - master->voted_time));
    return;
  }
  // The replica's claim must not be older than what we know about any of its slots.
  for (int j = 0; j < kSlotCount; ++j) {
    if (!SlotBit(h.slots, j)) continue;
    ClusterNode* owner = state_.OwnerOf(j);
    if (owner == nullptr || owner->config_epoch <= h.config_epoch) continue;
    spdlog::warn("Failover auth denied to {}: slot {} epoch ({}) > reqEpoch ({})", node->name, j,
                 owner->config_epoch, h.config_epoch);
    return;
  }
  state_.set_last_vote_epoch(state_.current_epoch());
  master->voted_time = now;
  state_.Todo(kTodoSaveConfig | kTodoFsyncConfig);
  if (node->link != nullptr) Send(node->link, Header(BusType::kFailoverAuthAck));
  spdlog::info("Failover auth granted to {} for epoch {}", node->name, state_.current_epoch());
}

void ClusterBus::StartManualFailover(bool force) {
  ResetManualFailover();
  mf_end_ = NowMs() + kManualFailoverTimeoutMs;
  ClusterNode* me = state_.myself();
  if (force) {
    // No agreement with the master: start the election right away.
    spdlog::info("Forced failover user request accepted.");
    mf_can_start_ = true;
    handle_failover_now_ = true;
    return;
  }
  spdlog::info("Manual failover user request accepted.");
  SendMfStart(me->master);
}

void ClusterBus::HandleManualFailover() {
  if (mf_end_ == 0 || mf_can_start_ || mf_master_offset_ == -1) return;
  if (mf_master_offset_ == host_.ClusterReplOffset()) {
    mf_can_start_ = true;
    spdlog::info("All master replication stream processed, manual failover can start.");
    handle_failover_now_ = true;
    return;
  }
  LogCantFailover(kCantFailoverWaitingDelay);
}

void ClusterBus::CheckManualFailoverTimeout() {
  if (mf_end_ != 0 && mf_end_ < NowMs()) {
    spdlog::warn("Manual failover timed out.");
    ResetManualFailover();
  }
}

void ClusterBus::ResetManualFailover() {
  if (mf_replica_ != nullptr) host_.ClusterPauseWrites(false, 0);
  mf_end_ = 0;
  mf_can_start_ = false;
  mf_replica_ = nullptr;
  mf_master_offset_ = -1;
}

void ClusterBus::Reset() {
  ResetManualFailover();
  failover_auth_time_ = 0;
  failover_auth_count_ = 0;
  failover_auth_sent_ = false;
  forgotten_.clear();
}

void ClusterBus::HandleReplicaMigration(int max_replicas) {
  ClusterNode* me = state_.myself();
  ClusterNode* my_master = me->master;
  if (!state_.ok() || my_master == nullptr) return;
  // Our master must keep more than the migration barrier of working replicas.
  int ok_replicas = 0;
  for (const ClusterNode* r : my_master->replicas) {
    if (!r->has(kNodeFail | kNodePfail)) ++ok_replicas;
  }
  if (ok_replicas <= host_.BusConfig().cluster_migration_barrier) return;
  ClusterNode* target = nullptr;
  ClusterNode* candidate = me;
  const int64_t now = NowMs();
  for (const auto& [name, ptr] : state_.nodes()) {
    ClusterNode* node = ptr.get();
    int node_ok = 0;
    bool orphaned = node->is_master() && !node->failed() && node->has(kNodeMigrateTo);
    if (node->is_master()) {
      for (const ClusterNode* r : node->replicas) {
        if (!r->has(kNodeFail | kNodePfail)) ++node_ok;
      }
    }
    if (node_ok > 0) orphaned = false;
    if (orphaned) {
      if (target == nullptr && node->num_slots > 0) target = node;
      if (node->orphaned_time == 0) node->orphaned_time = now;
    } else {
      node->orphaned_time = 0;
    }
    // The candidate: the replica with the smallest name among the best-served masters.
    if (node_ok == max_replicas) {
      for (ClusterNode* r : node->replicas) {
        if (r->name < candidate->name) candidate = r;
      }
    }
  }
  if (target != nullptr && candidate == me &&
      now - target->orphaned_time > kReplicaMigrationDelayMs) {
    spdlog::info("Migrating to orphaned master {}", target->name);
    FollowMaster(target);
    state_.Todo(kTodoSaveConfig | kTodoUpdateState);
  }
}

void ClusterBus::KillLinks(ClusterNode* node, bool to, bool from) {
  if (to) FreeLink(node->link);
  if (from) FreeLink(node->inbound_link);
}

// --- introspection ----------------------------------------------------------------------------

std::vector<ClusterBus::LinkInfo> ClusterBus::Links() const {
  std::vector<LinkInfo> out;
  for (const auto& [id, link] : links_) {
    if (link->node == nullptr || link->dead) continue;
    LinkInfo info;
    info.inbound = link->inbound;
    info.node = link->node->name;
    info.create_time = link->ctime;
    info.events = link->watching_write ? 3 : 1;
    info.send_buffer_allocated = link->out.capacity();
    info.send_buffer_used = link->out.size() - link->out_sent;
    out.push_back(std::move(info));
  }
  return out;
}

size_t ClusterBus::links_memory() const {
  size_t total = 0;
  for (const auto& [id, link] : links_) total += link->out.capacity() + sizeof(BusLink);
  return total;
}

}  // namespace vireo::cluster
