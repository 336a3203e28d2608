// fanout: a pub/sub fan-out load tool for vireo (or any Redis-compatible server).
//
// N subscriber connections SUBSCRIBE to one channel; one publisher connection pipelines
// `PUBLISH <channel> <payload>`, each payload carrying its sequence number and the steady-clock
// time (ns) at which it was written to the socket. A delivery's latency is the time a
// subscriber parsed the message minus that send time. The run stops after --messages messages
// (or --duration seconds) and prints one JSON line: messages/s, deliveries/s (messages times
// subscribers reached) and delivery latency percentiles.
//
//   fanout --port 6380 --subscribers 100 --messages 20000
//
// Flow control is closed loop: at most --window messages are published and not yet delivered
// to every subscriber, so what is measured is the fan-out, not an output buffer growing without
// bound (which would also trip the server's client-output-buffer-limit for pubsub clients).
// Everything runs on one epoll thread, so on a 2-core machine the server gets the other core.
//
// Only 127.0.0.1 is ever connected to.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace {

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

[[noreturn]] void Fail(const std::string& what) {
  std::string escaped;
  for (char c : what) {
    if (c == '"' || c == '\\') escaped += '\\';
    escaped += (c == '\n' || c == '\r') ? ' ' : c;
  }
  std::printf("{\"error\":\"%s\"}\n", escaped.c_str());
  std::fprintf(stderr, "fanout: %s\n", what.c_str());
  std::exit(2);
}

struct Options {
  int port = 6379;
  int subscribers = 10;
  int64_t messages = 20000;
  double duration = 30;
  int window = 8;
  int pipeline = 8;
  size_t size = 64;  // payload bytes
  std::string channel = "fanout-bench";
};

Options ParseArgs(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    auto value = [&]() -> const char* {
      if (i + 1 >= argc) Fail(std::string("missing value for ") + argv[i]);
      return argv[++i];
    };
    if (a == "--port") {
      o.port = std::atoi(value());
    } else if (a == "--subscribers") {
      o.subscribers = std::atoi(value());
    } else if (a == "--messages") {
      o.messages = std::atoll(value());
    } else if (a == "--duration") {
      o.duration = std::atof(value());
    } else if (a == "--window") {
      o.window = std::atoi(value());
    } else if (a == "--pipeline") {
      o.pipeline = std::atoi(value());
    } else if (a == "--size") {
      o.size = static_cast<size_t>(std::atoll(value()));
    } else if (a == "--channel") {
      o.channel = value();
    } else {
      Fail(std::string("unknown option ") + argv[i]);
    }
  }
  if (o.subscribers < 1 || o.messages < 1 || o.window < 1 || o.pipeline < 1 || o.size < 40) {
    Fail("bad options (payload --size must be >= 40)");
  }
  return o;
}

int Connect(int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) Fail(std::string("socket: ") + strerror(errno));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    Fail(std::string("connect: ") + strerror(errno));
  }
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  return fd;
}

void WriteAll(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN) {
        usleep(50);
        continue;
      }
      Fail(std::string("write: ") + strerror(errno));
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
}

std::string Command(std::initializer_list<std::string_view> args) {
  std::string out = "*" + std::to_string(args.size()) + "\r\n";
  for (std::string_view a : args) {
    out += "$" + std::to_string(a.size()) + "\r\n";
    out.append(a);
    out += "\r\n";
  }
  return out;
}

// Latency histogram: 16 linear sub-buckets per power of two of nanoseconds (~6% resolution).
class Histogram {
 public:
  void Add(int64_t ns) {
    if (ns < 1) ns = 1;
    ++counts_[Bucket(static_cast<uint64_t>(ns))];
    ++total_;
  }
  double PercentileUs(double p) const {
    if (total_ == 0) return 0;
    uint64_t rank = static_cast<uint64_t>(p / 100.0 * static_cast<double>(total_));
    uint64_t seen = 0;
    for (size_t b = 0; b < kBuckets; ++b) {
      seen += counts_[b];
      if (seen > rank) return static_cast<double>(UpperBound(b)) / 1000.0;
    }
    return static_cast<double>(UpperBound(kBuckets - 1)) / 1000.0;
  }
  uint64_t total() const { return total_; }

 private:
  static constexpr size_t kBuckets = 64 * 16;
  static size_t Bucket(uint64_t v) {
    if (v < 16) return v;
    int log = 63 - __builtin_clzll(v);
    uint64_t sub = (v >> (log - 4)) & 15;
    return std::min(kBuckets - 1, static_cast<size_t>(log - 3) * 16 + sub);
  }
  static uint64_t UpperBound(size_t b) {
    if (b < 16) return b;
    int log = static_cast<int>(b / 16) + 3;
    uint64_t sub = b % 16;
    return ((16 + sub + 1) << (log - 4)) - 1;
  }
  uint64_t counts_[kBuckets] = {};
  uint64_t total_ = 0;
};

struct Subscriber {
  int fd = -1;
  std::string buf;
  size_t pos = 0;
  size_t confirm_left = 0;  // bytes of the subscribe confirmation still expected
};

}  // namespace

int main(int argc, char** argv) {
  Options opt = ParseArgs(argc, argv);
  const std::string confirm = "*3\r\n$9\r\nsubscribe\r\n$" + std::to_string(opt.channel.size()) +
                              "\r\n" + opt.channel + "\r\n:1\r\n";
  const std::string frame_head = "*3\r\n$7\r\nmessage\r\n$" + std::to_string(opt.channel.size()) +
                                 "\r\n" + opt.channel + "\r\n$" + std::to_string(opt.size) + "\r\n";
  const size_t frame_len = frame_head.size() + opt.size + 2;

  int ep = epoll_create1(0);
  std::vector<Subscriber> subs(static_cast<size_t>(opt.subscribers));
  const std::string subscribe = Command({"SUBSCRIBE", opt.channel});
  for (size_t i = 0; i < subs.size(); ++i) {
    subs[i].fd = Connect(opt.port);
    WriteAll(subs[i].fd, subscribe);
    subs[i].confirm_left = confirm.size();
  }
  // Wait for every confirmation (blocking reads: set-up is not measured).
  for (Subscriber& s : subs) {
    char tmp[256];
    std::string got;
    while (got.size() < confirm.size()) {
      ssize_t n = read(s.fd, tmp, std::min(sizeof(tmp), confirm.size() - got.size()));
      if (n <= 0) Fail("subscriber closed during SUBSCRIBE");
      got.append(tmp, static_cast<size_t>(n));
    }
    if (got != confirm) Fail("unexpected SUBSCRIBE reply: " + got);
    s.confirm_left = 0;
    int flags = 1;
    ioctl(s.fd, FIONBIO, &flags);
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = static_cast<uint64_t>(&s - subs.data());
    epoll_ctl(ep, EPOLL_CTL_ADD, s.fd, &ev);
  }
  int pub = Connect(opt.port);
  {
    int flags = 1;
    ioctl(pub, FIONBIO, &flags);
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = UINT64_MAX;
    epoll_ctl(ep, EPOLL_CTL_ADD, pub, &ev);
  }

  const int64_t total = opt.messages;
  const int64_t warmup = std::min<int64_t>(total / 10, 1000);
  std::vector<uint32_t> delivered(static_cast<size_t>(total + warmup), 0);
  int64_t sent = 0, completed = 0, replies = 0;
  uint64_t deliveries = 0;
  int64_t measure_start_ns = 0;
  uint64_t measured_deliveries_at_start = 0;
  Histogram hist;
  std::string pub_in;
  std::string out;
  const int64_t deadline = NowNs() + static_cast<int64_t>(opt.duration * 1e9);
  bool receivers_checked = false;

  auto publish_more = [&] {
    out.clear();
    int batch = 0;
    while (sent < total + warmup && sent - completed < opt.window && batch < opt.pipeline) {
      char payload[64];
      int n = std::snprintf(payload, sizeof(payload), "%" PRId64 ":%" PRId64 ":", sent, NowNs());
      std::string body(payload, static_cast<size_t>(n));
      body.resize(opt.size, 'x');
      out += Command({"PUBLISH", opt.channel, body});
      ++sent;
      ++batch;
    }
    if (!out.empty()) WriteAll(pub, out);
  };

  publish_more();
  std::vector<epoll_event> events(256);
  char rbuf[1 << 16];
  while (completed < total + warmup) {
    if (NowNs() > deadline) break;
    int n = epoll_wait(ep, events.data(), static_cast<int>(events.size()), 100);
    for (int e = 0; e < n; ++e) {
      uint64_t tag = events[e].data.u64;
      if (tag == UINT64_MAX) {
        for (;;) {
          ssize_t r = read(pub, rbuf, sizeof(rbuf));
          if (r == 0) Fail("publisher connection closed");
          if (r < 0) break;
          pub_in.append(rbuf, static_cast<size_t>(r));
        }
        size_t at;
        while ((at = pub_in.find("\r\n")) != std::string::npos) {
          if (!receivers_checked) {
            if (pub_in.compare(0, at, ":" + std::to_string(opt.subscribers)) != 0) {
              Fail("PUBLISH replied " + pub_in.substr(0, at) +
                   ", expected :" + std::to_string(opt.subscribers));
            }
            receivers_checked = true;
          }
          pub_in.erase(0, at + 2);
          ++replies;
        }
        continue;
      }
      Subscriber& s = subs[tag];
      for (;;) {
        ssize_t r = read(s.fd, rbuf, sizeof(rbuf));
        if (r == 0) Fail("a subscriber was disconnected");
        if (r < 0) break;
        s.buf.append(rbuf, static_cast<size_t>(r));
      }
      int64_t now = NowNs();
      while (s.buf.size() - s.pos >= frame_len) {
        const char* payload = s.buf.data() + s.pos + frame_head.size();
        int64_t seq = std::strtoll(payload, nullptr, 10);
        const char* colon = static_cast<const char*>(memchr(payload, ':', opt.size));
        int64_t ts = colon ? std::strtoll(colon + 1, nullptr, 10) : now;
        s.pos += frame_len;
        ++deliveries;
        if (seq >= warmup) hist.Add(now - ts);
        if (seq >= 0 && seq < static_cast<int64_t>(delivered.size()) &&
            ++delivered[static_cast<size_t>(seq)] == static_cast<uint32_t>(opt.subscribers)) {
          ++completed;
          if (completed == warmup) {
            measure_start_ns = NowNs();
            measured_deliveries_at_start = deliveries;
          }
        }
      }
      if (s.pos > (1 << 20) || s.pos == s.buf.size()) {
        s.buf.erase(0, s.pos);
        s.pos = 0;
      }
    }
    publish_more();
  }
  int64_t end_ns = NowNs();
  if (measure_start_ns == 0) Fail("run ended before the warm-up finished");
  double seconds = static_cast<double>(end_ns - measure_start_ns) / 1e9;
  uint64_t measured = deliveries - measured_deliveries_at_start;
  double msgs = static_cast<double>(completed - warmup);
  std::printf("{\"subscribers\":%d,\"messages\":%.0f,\"warmup\":%" PRId64 ",\"deliveries\":%" PRIu64
              ",\"seconds\":%.3f,\"messages_per_sec\":%.1f,\"deliveries_per_sec\":%.1f,"
              "\"p50_us\":%.1f,\"p99_us\":%.1f,\"p999_us\":%.1f,\"window\":%d,\"size\":%zu}\n",
              opt.subscribers, msgs, warmup, measured, seconds, msgs / seconds,
              static_cast<double>(measured) / seconds, hist.PercentileUs(50), hist.PercentileUs(99),
              hist.PercentileUs(99.9), opt.window, opt.size);
  for (Subscriber& s : subs) close(s.fd);
  close(pub);
  return 0;
}
