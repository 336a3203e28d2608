#include "cluster/migrate_conn.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <iterator>

#include "util/clock.h"

namespace vireo::cluster {
namespace {

// Waits until `fd` is ready for `events` or the deadline (MonotonicUs) passes.
bool WaitFor(int fd, short events, int64_t deadline_us, bool* timed_out) {
  while (true) {
    const int64_t left_ms = (deadline_us - MonotonicUs() + 999) / 1000;
    if (left_ms <= 0) {
      *timed_out = true;
      return false;
    }
    pollfd p{fd, events, 0};
    const int n = poll(&p, 1, static_cast<int>(std::min<int64_t>(left_ms, 1 << 30)));
    if (n > 0) return true;
    if (n < 0 && errno != EINTR) return false;
  }
}

int ConnectWithTimeout(std::string_view host, std::string_view port, int64_t timeout_ms) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (getaddrinfo(std::string(host).c_str(), std::string(port).c_str(), &hints, &res) != 0) {
    return -1;
  }
  const int64_t deadline = MonotonicUs() + timeout_ms * 1000;
  int fd = -1;
  for (addrinfo* ai = res; ai != nullptr && fd < 0; ai = ai->ai_next) {
    fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) continue;
    bool ok = connect(fd, ai->ai_addr, ai->ai_addrlen) == 0;
    if (!ok && errno == EINPROGRESS) {
      bool timed_out = false;
      int err = 0;
      socklen_t len = sizeof(err);
      ok = WaitFor(fd, POLLOUT, deadline, &timed_out) &&
           getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == 0;
    }
    if (!ok) {
      close(fd);
      fd = -1;
    }
  }
  freeaddrinfo(res);
  if (fd >= 0) {
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  }
  return fd;
}

// The TLS handshake on a connected non-blocking socket, polling as OpenSSL asks.
bool HandshakeWithTimeout(TlsSession& tls, int fd, int64_t deadline_us) {
  bool timed_out = false;
  while (true) {
    switch (tls.Handshake()) {
      case TlsSession::Step::kDone:
        return true;
      case TlsSession::Step::kFailed:
        return false;
      case TlsSession::Step::kWantRead:
        if (!WaitFor(fd, POLLIN, deadline_us, &timed_out)) return false;
        break;
      case TlsSession::Step::kWantWrite:
        if (!WaitFor(fd, POLLOUT, deadline_us, &timed_out)) return false;
        break;
    }
  }
}

// Where a would-block operation on `conn` has to wait.
short WaitEvents(const MigrateConnections::Conn& conn, short plain) {
  if (conn.tls == nullptr) return plain;
  return conn.tls->wants_write() ? POLLOUT : POLLIN;
}

}  // namespace

MigrateConnections::Conn::~Conn() {
  tls.reset();  // its close_notify goes out before the descriptor closes
  if (fd >= 0) close(fd);
}

MigrateConnections::~MigrateConnections() = default;

std::string MigrateConnections::Name(std::string_view host, std::string_view port) {
  std::string name(host);
  name += ':';
  name += port;
  return name;
}

MigrateConnections::Conn* MigrateConnections::Get(std::string_view host, std::string_view port,
                                                  int64_t timeout_ms, int64_t now_s,
                                                  TlsContext* tls) {
  std::string name = Name(host, port);
  if (auto it = conns_.find(name); it != conns_.end()) {
    // CONFIG SET tls-cluster since it was opened: the target expects the other kind now.
    if ((it->second.tls != nullptr) == (tls != nullptr)) {
      it->second.last_use_s = now_s;
      return &it->second;
    }
    conns_.erase(it);
  }
  if (conns_.size() >= kMaxCached) {
    // Full: drop one at random, as Redis does.
    conns_.erase(std::next(conns_.begin(), static_cast<long>(rng_() % conns_.size())));
  }
  const int64_t deadline = MonotonicUs() + timeout_ms * 1000;
  const int fd = ConnectWithTimeout(host, port, timeout_ms);
  if (fd < 0) return nullptr;
  auto it = conns_.try_emplace(std::move(name)).first;
  Conn& conn = it->second;
  conn.fd = fd;
  if (tls != nullptr) {
    conn.tls = tls->Connect(fd);
    if (conn.tls == nullptr || !HandshakeWithTimeout(*conn.tls, fd, deadline)) {
      conns_.erase(it);
      return nullptr;
    }
  }
  conn.last_use_s = now_s;
  return &conn;
}

void MigrateConnections::Close(std::string_view host, std::string_view port) {
  auto it = conns_.find(Name(host, port));
  if (it == conns_.end()) return;
  conns_.erase(it);
}

void MigrateConnections::CloseIdle(int64_t now_s) {
  std::erase_if(conns_,
                [now_s](auto& item) { return now_s - item.second.last_use_s > kIdleSeconds; });
}

bool MigrateConnections::Write(Conn& conn, std::string_view data, int64_t timeout_ms,
                               bool* timed_out) {
  const int64_t deadline = MonotonicUs() + timeout_ms * 1000;
  while (!data.empty()) {
    const ssize_t n = conn.tls != nullptr ? conn.tls->Write(data.data(), data.size())
                                          : send(conn.fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n > 0) {
      data.remove_prefix(static_cast<size_t>(n));
    } else if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
      if (!WaitFor(conn.fd, WaitEvents(conn, POLLOUT), deadline, timed_out)) return false;
    } else {
      return false;
    }
  }
  return true;
}

bool MigrateConnections::ReadLine(Conn& conn, std::string* line, int64_t timeout_ms,
                                  bool* timed_out) {
  constexpr size_t kMaxLine = 1023;
  const int64_t deadline = MonotonicUs() + timeout_ms * 1000;
  while (true) {
    if (size_t eol = conn.in.find('\n'); eol != std::string::npos) {
      size_t end = eol > 0 && conn.in[eol - 1] == '\r' ? eol - 1 : eol;
      line->assign(conn.in, 0, std::min(end, kMaxLine));
      conn.in.erase(0, eol + 1);
      return true;
    }
    char buf[4096];
    const ssize_t n =
        conn.tls != nullptr ? conn.tls->Read(buf, sizeof(buf)) : recv(conn.fd, buf, sizeof(buf), 0);
    if (n > 0) {
      conn.in.append(buf, static_cast<size_t>(n));
    } else if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
      if (!WaitFor(conn.fd, WaitEvents(conn, POLLIN), deadline, timed_out)) return false;
    } else {
      return false;  // EOF or error
    }
  }
}

}  // namespace vireo::cluster
