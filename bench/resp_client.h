// The few pieces of a raw RESP2 client the bench load tools share (load_gen, cache_workload):
// connect to a TCP port, write a whole buffer, and frame one reply without decoding it.
// Header-only so each tool stays a single add_executable with no library of its own.
#ifndef VIREO_BENCH_RESP_CLIENT_H_
#define VIREO_BENCH_RESP_CLIENT_H_

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace bench {

// Returns the length of the complete RESP2 reply at [p, end), 0 if it is incomplete. Sets
// *error for an error reply at top level.
inline size_t FrameReply(const char* p, const char* end, bool* error) {
  const char* start = p;
  int64_t pending = 1;  // replies still to frame (arrays add their elements)
  while (pending > 0) {
    if (p >= end) return 0;
    const char type = *p;
    const char* cr = static_cast<const char*>(memchr(p, '\r', static_cast<size_t>(end - p)));
    if (cr == nullptr || cr + 1 >= end) return 0;
    const char* line_end = cr + 2;
    if (type == '-' && p == start) *error = true;
    --pending;
    if (type == '$') {
      int64_t len = std::strtoll(p + 1, nullptr, 10);
      if (len >= 0) {
        if (end - line_end < len + 2) return 0;
        line_end += len + 2;
      }
    } else if (type == '*' || type == '~' || type == '>' || type == '%') {
      // Arrays, and RESP3's sets, pushes and maps (two elements a pair).
      int64_t n = std::strtoll(p + 1, nullptr, 10);
      if (n > 0) pending += type == '%' ? 2 * n : n;
    }
    p = line_end;
  }
  return static_cast<size_t>(p - start);
}

// A blocking TCP connection with Nagle off (pipelined batches go out at once), or -1.
inline int Connect(const std::string& host, int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, host.c_str(), &addr.sin_addr);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    return -1;
  }
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  return fd;
}

inline bool SendAll(int fd, const std::string& data) {
  size_t off = 0;
  while (off < data.size()) {
    ssize_t n = send(fd, data.data() + off, data.size() - off, MSG_NOSIGNAL);
    if (n <= 0) return false;
    off += static_cast<size_t>(n);
  }
  return true;
}

// The options every load tool takes: where to connect, how many connections, how many commands
// each keeps in flight, and how many to send.
struct LoadOptions {
  std::string host = "127.0.0.1";
  int port = 6379;
  int clients = 50;
  int pipeline = 16;
  int64_t requests = 100000;

  // Takes the value of --host, --port, --clients, --pipeline or --requests; false for any
  // other key, which is then the tool's own.
  bool Set(const std::string& key, const std::string& value) {
    if (key == "--host") {
      host = value;
    } else if (key == "--port") {
      port = std::atoi(value.c_str());
    } else if (key == "--clients") {
      clients = std::atoi(value.c_str());
    } else if (key == "--pipeline") {
      pipeline = std::atoi(value.c_str());
    } else if (key == "--requests") {
      requests = std::atoll(value.c_str());
    } else {
      return false;
    }
    return true;
  }
  bool Valid() const { return clients > 0 && pipeline > 0 && requests > 0; }
};

// Opens o.clients connections into *fds, each registered for EPOLLIN on a new epoll instance
// with its index as data.u64. Returns the epoll descriptor, or -1 if a connect failed.
inline int ConnectAll(const LoadOptions& o, std::vector<int>* fds) {
  int ep = epoll_create1(0);
  fds->clear();
  for (int i = 0; i < o.clients; ++i) {
    int fd = Connect(o.host, o.port);
    if (fd < 0) return -1;
    fds->push_back(fd);
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = static_cast<uint64_t>(i);
    epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
  }
  return ep;
}

// Writes v as exactly `width` decimal digits at dst (leading zeros; higher digits dropped).
inline void PutDigits(char* dst, int width, uint64_t v) {
  for (int d = width - 1; d >= 0; --d) {
    dst[d] = static_cast<char>('0' + v % 10);
    v /= 10;
  }
}

}  // namespace bench

#endif  // VIREO_BENCH_RESP_CLIENT_H_
