// handoff: a load tool for the blocking list engine of vireo (or any Redis-compatible server).
//
// N consumer connections loop `BLPOP <key> 0`; P producer connections pipeline
// `LPUSH <key> <payload>`, each payload carrying the steady-clock time (ns) at which it was
// written to the socket. A consumer's wake-up latency is its receive time minus that send time.
// The run stops by itself after --messages handoffs (or --duration seconds) and prints one JSON
// line: handoffs/s and latency percentiles.
//
//   handoff --port 6380 --consumers 100 --producers 1 --messages 200000
//
// Everything runs on one epoll thread. On a 2-core machine the server then has one core and the
// tool the other, and the producers' flow control (how many messages may be pushed but not yet
// consumed) needs no signalling between threads, whose own wake-ups would end up in the
// latencies being measured.
//
// Flow control: closed loop by default, at most --window messages (default: one per consumer)
// pushed and not yet received, so a push normally finds a consumer already blocked and what is
// measured is the hand-off, not a queue growing without bound. Closed-loop latency therefore
// includes waiting behind the other in-flight messages (window / throughput, by Little's law).
// --rate sends on a schedule instead (open loop, window default 10000 as a safety cap), which
// measures the wake-up latency at a given load.
//
// Only 127.0.0.1 is ever connected to.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
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
  // One JSON line on stdout too, so a driver parsing stdout sees why the run produced nothing.
  std::string escaped;
  for (char c : what) {
    if (c == '"' || c == '\\') escaped += '\\';
    escaped += (c == '\n' || c == '\r') ? ' ' : c;
  }
  std::printf("{\"error\":\"%s\"}\n", escaped.c_str());
  std::fprintf(stderr, "handoff: %s\n", what.c_str());
  std::exit(2);
}

struct Options {
  int port = 0;
  int consumers = 1;
  int producers = 1;
  int64_t messages = 100000;  // measured handoffs, after the warm-up
  double duration_s = 60;     // hard cap on the measured phase
  int64_t warmup = -1;        // handoffs received before measuring; -1 = min(messages/10, 10000)
  int64_t window = 0;         // max pushed-but-unreceived messages; 0 = one per consumer
  int pipeline = 16;          // max LPUSH commands per producer write
  double rate = 0;            // messages/s over all producers; 0 = closed loop
  int payload_bytes = 32;
  std::string key = "queue";
  double stall_s = 10;  // no handoff for this long means something is broken
};

void Usage(FILE* out) {
  std::fprintf(out,
               "usage: handoff --port P [--consumers N] [--producers M] [--messages K]\n"
               "               [--duration S] [--warmup W] [--window W] [--pipeline B]\n"
               "               [--rate R] [--payload-bytes B] [--key NAME]\n"
               "N connections loop BLPOP NAME 0, M connections pipeline LPUSH NAME <timestamped\n"
               "payload>; prints one JSON line with handoffs/s and wake-up latency percentiles.\n"
               "NAME (default queue) is deleted before and after the run.\n"
               "Stops after K measured handoffs or S seconds (default 60), whichever is first.\n"
               "Connects to 127.0.0.1 only.\n");
}

Options ParseOptions(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      Usage(stdout);
      std::exit(0);
    }
    if (i + 1 >= argc) {
      Usage(stderr);
      Fail("missing value for " + std::string(arg));
    }
    const char* value = argv[++i];
    char* end = nullptr;
    errno = 0;
    double number = std::strtod(value, &end);
    bool numeric = errno == 0 && end != value && *end == '\0';
    auto integer = [&](int64_t min, int64_t max) -> int64_t {
      if (!numeric || number != static_cast<int64_t>(number) || number < min || number > max) {
        Fail("bad value for " + std::string(arg) + ": " + value);
      }
      return static_cast<int64_t>(number);
    };
    if (arg == "--port") {
      o.port = static_cast<int>(integer(1, 65535));
    } else if (arg == "--consumers") {
      o.consumers = static_cast<int>(integer(1, 10000));
    } else if (arg == "--producers") {
      o.producers = static_cast<int>(integer(1, 1000));
    } else if (arg == "--messages") {
      o.messages = integer(1, int64_t{1} << 40);
    } else if (arg == "--duration") {
      if (!numeric || number <= 0 || number > 3600) Fail("bad value for --duration");
      o.duration_s = number;
    } else if (arg == "--warmup") {
      o.warmup = integer(0, int64_t{1} << 40);
    } else if (arg == "--window") {
      o.window = integer(1, int64_t{1} << 30);
    } else if (arg == "--pipeline") {
      o.pipeline = static_cast<int>(integer(1, 100000));
    } else if (arg == "--rate") {
      if (!numeric || number < 0) Fail("bad value for --rate");
      o.rate = number;
    } else if (arg == "--payload-bytes") {
      o.payload_bytes = static_cast<int>(integer(32, 1 << 20));
    } else if (arg == "--key") {
      o.key = value;
    } else {
      Usage(stderr);
      Fail("unknown option " + std::string(arg));
    }
  }
  if (o.port == 0) {
    Usage(stderr);
    Fail("--port is required");
  }
  if (o.warmup < 0) o.warmup = std::min<int64_t>(o.messages / 10, 10000);
  // Open loop must not wait for consumers (that would hide the very delays being measured), so
  // its window is only a safety cap on a server that falls behind.
  if (o.window == 0) o.window = o.rate > 0 ? std::max<int64_t>(10000, o.consumers) : o.consumers;
  return o;
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

// One parsed reply. Only the shapes BLPOP, LPUSH, DEL and INFO answer with are understood:
// simple strings, errors, integers, bulk strings and arrays of bulk strings.
struct Reply {
  char type = 0;
  int64_t integer = 0;  // ':' value; '*' and '$' length (-1 for null)
  std::string_view text;
  std::vector<std::string_view> elements;
};

// Parses one reply at buf[pos...]. Returns the bytes it took, 0 while incomplete.
size_t ParseReply(std::string_view buf, size_t pos, Reply* reply) {
  size_t cursor = pos;
  auto line = [&](std::string_view* out) {
    size_t eol = buf.find("\r\n", cursor);
    if (eol == std::string_view::npos) return false;
    *out = buf.substr(cursor, eol - cursor);
    cursor = eol + 2;
    return true;
  };
  auto number = [](std::string_view s) {
    int64_t v = 0;
    bool negative = !s.empty() && s[0] == '-';
    for (size_t i = negative ? 1 : 0; i < s.size(); ++i) {
      if (s[i] < '0' || s[i] > '9') Fail("protocol error: bad number " + std::string(s));
      v = v * 10 + (s[i] - '0');
    }
    return negative ? -v : v;
  };
  auto bulk = [&](std::string_view header, std::string_view* out) {
    int64_t len = number(header.substr(1));
    if (len < 0) {
      *out = {};
      return true;
    }
    if (buf.size() < cursor + len + 2) return false;
    *out = buf.substr(cursor, len);
    cursor += len + 2;
    return true;
  };
  std::string_view head;
  if (!line(&head)) return 0;
  if (head.empty()) Fail("protocol error: empty line");
  reply->type = head[0];
  reply->elements.clear();
  switch (head[0]) {
    case '+':
    case '-':
      reply->text = head.substr(1);
      return cursor - pos;
    case ':':
      reply->integer = number(head.substr(1));
      return cursor - pos;
    case '$':
      reply->integer = number(head.substr(1));
      return bulk(head, &reply->text) ? cursor - pos : 0;
    case '*': {
      reply->integer = number(head.substr(1));
      for (int64_t i = 0; i < reply->integer; ++i) {
        std::string_view elem_head, elem;
        if (!line(&elem_head)) return 0;
        if (elem_head.empty() || elem_head[0] != '$') {
          Fail("protocol error: unexpected array element " + std::string(elem_head));
        }
        if (!bulk(elem_head, &elem)) return 0;
        reply->elements.push_back(elem);
      }
      return cursor - pos;
    }
    default:
      Fail("protocol error: unexpected reply " + std::string(head));
  }
}

int Connect(int port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) Fail(std::string("socket: ") + std::strerror(errno));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    Fail("connect 127.0.0.1:" + std::to_string(port) + ": " + std::strerror(errno));
  }
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  timeval tv{10, 0};  // the blocking set-up phase never hangs on a dead server
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  return fd;
}

// A blocking request/response on a fresh connection, for set-up and clean-up. The reply's views
// point into *storage.
void RoundTrip(int port, const std::string& request, std::string* storage, Reply* reply) {
  int fd = Connect(port);
  if (write(fd, request.data(), request.size()) != static_cast<ssize_t>(request.size())) {
    Fail(std::string("write: ") + std::strerror(errno));
  }
  storage->clear();
  char chunk[65536];
  while (true) {
    ssize_t n = read(fd, chunk, sizeof chunk);
    if (n <= 0) Fail("set-up connection closed or timed out");
    storage->append(chunk, n);
    if (ParseReply(*storage, 0, reply) != 0) break;
  }
  close(fd);
}

struct Conn {
  int fd = -1;
  bool consumer = false;
  bool want_write = false;  // EPOLLOUT registered
  std::string in;
  size_t in_pos = 0;
  std::string out;
  size_t out_pos = 0;
  int64_t received = 0;  // consumer: messages it got
};

class Run {
 public:
  explicit Run(const Options& o) : o_(o) {}

  void Execute();

 private:
  void Setup();
  void Loop();
  void OnReadable(Conn& c, int64_t now);
  void Flush(Conn& c);
  void Produce(int64_t now);
  void Report(bool by_duration);
  void Rearm(Conn& c, bool want_write);

  const Options& o_;
  int epfd_ = -1;
  std::vector<Conn> conns_;  // consumers first, then producers
  std::string blpop_;
  int64_t pushed_ = 0;
  int64_t received_ = 0;
  int64_t target_ = 0;  // warm-up + measured, in count mode
  size_t next_producer_ = 0;
  int64_t start_ns_ = 0;
  int64_t measure_start_ns_ = 0;
  int64_t last_receive_ns_ = 0;
  int64_t rate_start_ns_ = 0;
  int64_t rate_start_count_ = 0;
  std::vector<int64_t> latencies_ns_;
};

void Run::Setup() {
  Reply reply;
  std::string storage;
  RoundTrip(o_.port, Command({"DEL", o_.key}), &storage, &reply);
  if (reply.type == '-') Fail("DEL: " + std::string(reply.text));

  epfd_ = epoll_create1(EPOLL_CLOEXEC);
  if (epfd_ < 0) Fail(std::string("epoll_create1: ") + std::strerror(errno));
  blpop_ = Command({"BLPOP", o_.key, "0"});
  conns_.resize(o_.consumers + o_.producers);
  for (size_t i = 0; i < conns_.size(); ++i) {
    Conn& c = conns_[i];
    c.fd = Connect(o_.port);
    c.consumer = i < static_cast<size_t>(o_.consumers);
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = i;
    if (epoll_ctl(epfd_, EPOLL_CTL_ADD, c.fd, &ev) != 0) {
      Fail(std::string("epoll_ctl: ") + std::strerror(errno));
    }
    if (c.consumer) {
      c.out = blpop_;
      Flush(c);
    }
  }
  // Producing starts once every consumer is parked in BLPOP, so the first pushes measure a
  // wake-up and not a consumer still connecting. Servers without the field just skip this.
  int64_t deadline = NowNs() + 5'000'000'000;
  std::string info = Command({"INFO", "clients"});
  while (NowNs() < deadline) {
    RoundTrip(o_.port, info, &storage, &reply);
    size_t at = reply.text.find("blocked_clients:");
    if (reply.type != '$' || at == std::string_view::npos) break;
    if (std::atoll(reply.text.data() + at + 16) >= o_.consumers) break;
    usleep(1000);
  }
}

void Run::Rearm(Conn& c, bool want_write) {
  if (c.want_write == want_write) return;
  c.want_write = want_write;
  epoll_event ev{};
  ev.events = want_write ? (EPOLLIN | EPOLLOUT) : EPOLLIN;
  ev.data.u64 = &c - conns_.data();
  epoll_ctl(epfd_, EPOLL_CTL_MOD, c.fd, &ev);
}

void Run::Flush(Conn& c) {
  while (c.out_pos < c.out.size()) {
    ssize_t n =
        send(c.fd, c.out.data() + c.out_pos, c.out.size() - c.out_pos, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) {
        Rearm(c, true);
        return;
      }
      if (errno == EINTR) continue;
      Fail(std::string("send: ") + std::strerror(errno));
    }
    c.out_pos += n;
  }
  c.out.clear();
  c.out_pos = 0;
  Rearm(c, false);
}

void Run::OnReadable(Conn& c, int64_t now) {
  char chunk[65536];
  while (true) {
    ssize_t n = recv(c.fd, chunk, sizeof chunk, MSG_DONTWAIT);
    if (n == 0) Fail("server closed a connection");
    if (n < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) break;
      if (errno == EINTR) continue;
      Fail(std::string("recv: ") + std::strerror(errno));
    }
    c.in.append(chunk, n);
    if (n < static_cast<ssize_t>(sizeof chunk)) break;
  }
  Reply reply;
  while (size_t used = ParseReply(c.in, c.in_pos, &reply)) {
    c.in_pos += used;
    if (reply.type == '-') Fail("server error: " + std::string(reply.text));
    if (!c.consumer) continue;  // an LPUSH's new length
    if (reply.type == '*' && reply.elements.size() == 2) {
      std::string_view payload = reply.elements[1];
      if (payload.size() < 16) Fail("short payload");
      int64_t sent = static_cast<int64_t>(
          std::strtoull(std::string(payload.substr(0, 16)).c_str(), nullptr, 16));
      ++c.received;
      ++received_;
      last_receive_ns_ = now;
      if (received_ == o_.warmup) measure_start_ns_ = now;
      if (received_ > o_.warmup) latencies_ns_.push_back(now - sent);
    }
    // Back into the queue (a null array would be a timeout, which BLPOP 0 never gives).
    c.out += blpop_;
  }
  if (c.in_pos == c.in.size()) {
    c.in.clear();
    c.in_pos = 0;
  }
  if (!c.out.empty()) Flush(c);
}

void Run::Produce(int64_t now) {
  int64_t budget = o_.window - (pushed_ - received_);
  if (target_ > 0) budget = std::min(budget, target_ - pushed_);
  if (o_.rate > 0) {
    int64_t due = rate_start_count_ +
                  static_cast<int64_t>(static_cast<double>(now - rate_start_ns_) * o_.rate / 1e9);
    budget = std::min(budget, due - pushed_);
  }
  if (budget <= 0) return;
  // The timestamp is taken once per write: every message of a batch leaves in the same send().
  char stamp[40];
  std::string padding(o_.payload_bytes - 32, 'x');
  std::string prefix = "*3\r\n$5\r\nLPUSH\r\n$" + std::to_string(o_.key.size()) + "\r\n" + o_.key +
                       "\r\n$" + std::to_string(o_.payload_bytes) + "\r\n";
  size_t producers = conns_.size() - o_.consumers;
  for (size_t tries = 0; budget > 0 && tries < producers; ++tries) {
    Conn& p = conns_[o_.consumers + next_producer_];
    next_producer_ = (next_producer_ + 1) % producers;
    if (!p.out.empty()) continue;  // its socket is full: the server is behind already
    int64_t batch = std::min<int64_t>(budget, o_.pipeline);
    int64_t sent = NowNs();
    for (int64_t i = 0; i < batch; ++i) {
      std::snprintf(stamp, sizeof stamp, "%016" PRIx64 "%016" PRIx64, static_cast<uint64_t>(sent),
                    static_cast<uint64_t>(pushed_ + i));
      p.out += prefix;
      p.out.append(stamp, 32);
      p.out += padding;
      p.out += "\r\n";
    }
    pushed_ += batch;
    budget -= batch;
    Flush(p);
    if (budget > 0) tries = 0;  // more left: go round the producers again
  }
}

void Run::Loop() {
  start_ns_ = NowNs();
  measure_start_ns_ = o_.warmup == 0 ? start_ns_ : 0;
  last_receive_ns_ = start_ns_;
  rate_start_ns_ = start_ns_;
  // The duration caps the whole run; the warm-up counts against it so a run never overstays.
  int64_t deadline = start_ns_ + static_cast<int64_t>(o_.duration_s * 1e9);
  target_ = o_.warmup + o_.messages;
  latencies_ns_.reserve(std::min<int64_t>(o_.messages, 50'000'000));
  std::vector<epoll_event> events(256);
  bool use_pwait2 = true;
  while (true) {
    int64_t now = NowNs();
    if (received_ >= target_) return Report(false);
    if (now >= deadline) return Report(true);
    if (now - last_receive_ns_ > static_cast<int64_t>(o_.stall_s * 1e9)) {
      Fail("no handoff for " + std::to_string(o_.stall_s) + " s (pushed " +
           std::to_string(pushed_) + ", received " + std::to_string(received_) + ")");
    }
    Produce(now);
    int64_t wait_ns = std::min<int64_t>(deadline - now, 100'000'000);
    if (o_.rate > 0 && pushed_ < target_ && pushed_ - received_ < o_.window) {
      // Wake for the next scheduled send; a timeout rounded up to milliseconds would bunch
      // sends into bursts and inflate the open-loop latencies.
      int64_t next =
          rate_start_ns_ + static_cast<int64_t>((pushed_ + 1 - rate_start_count_) * 1e9 / o_.rate);
      wait_ns = std::clamp<int64_t>(next - now, 0, wait_ns);
    }
    int n;
    if (use_pwait2) {
      timespec ts{wait_ns / 1'000'000'000, wait_ns % 1'000'000'000};
      n = epoll_pwait2(epfd_, events.data(), static_cast<int>(events.size()), &ts, nullptr);
      if (n < 0 && errno == ENOSYS) {
        use_pwait2 = false;
        continue;
      }
    } else {
      n = epoll_wait(epfd_, events.data(), static_cast<int>(events.size()),
                     static_cast<int>((wait_ns + 999'999) / 1'000'000));
    }
    if (n < 0) {
      if (errno == EINTR) continue;
      Fail(std::string("epoll_wait: ") + std::strerror(errno));
    }
    now = NowNs();
    for (int i = 0; i < n; ++i) {
      Conn& c = conns_[events[i].data.u64];
      if (events[i].events & EPOLLOUT) Flush(c);
      if (events[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR)) OnReadable(c, now);
    }
  }
}

void Run::Report(bool by_duration) {
  int64_t measured = static_cast<int64_t>(latencies_ns_.size());
  double seconds = measured > 0 ? (last_receive_ns_ - measure_start_ns_) / 1e9 : 0;
  auto pct = [&](double q) -> double {
    if (latencies_ns_.empty()) return 0;
    size_t idx = std::min(latencies_ns_.size() - 1,
                          static_cast<size_t>(q * static_cast<double>(latencies_ns_.size())));
    std::nth_element(latencies_ns_.begin(), latencies_ns_.begin() + idx, latencies_ns_.end());
    return latencies_ns_[idx] / 1e3;
  };
  double sum = 0;
  for (int64_t v : latencies_ns_) sum += static_cast<double>(v);
  double p50 = pct(0.50), p90 = pct(0.90), p99 = pct(0.99), p999 = pct(0.999);
  double max_us = latencies_ns_.empty()
                      ? 0
                      : *std::max_element(latencies_ns_.begin(), latencies_ns_.end()) / 1e3;
  int64_t min_per = INT64_MAX, max_per = 0;
  for (int i = 0; i < o_.consumers; ++i) {
    min_per = std::min(min_per, conns_[i].received);
    max_per = std::max(max_per, conns_[i].received);
  }
  std::printf("{\"port\":%d,\"consumers\":%d,\"producers\":%d,\"window\":%" PRId64
              ",\"pipeline\":%d,"
              "\"rate\":%.0f,\"payload_bytes\":%d,\"warmup\":%" PRId64 ",\"messages\":%" PRId64
              ",\"seconds\":%.4f,\"handoffs_per_sec\":%.1f,\"mean_us\":%.2f,\"p50_us\":%.2f,"
              "\"p90_us\":%.2f,\"p99_us\":%.2f,\"p999_us\":%.2f,\"max_us\":%.2f,"
              "\"per_consumer_min\":%" PRId64 ",\"per_consumer_max\":%" PRId64
              ",\"stopped_by\":\"%s\"}\n",
              o_.port, o_.consumers, o_.producers, o_.window, o_.pipeline, o_.rate,
              o_.payload_bytes, o_.warmup, measured, seconds,
              seconds > 0 ? measured / seconds : 0.0, measured ? sum / measured / 1e3 : 0.0, p50,
              p90, p99, p999, max_us, min_per, max_per, by_duration ? "duration" : "count");
  std::fflush(stdout);
}

void Run::Execute() {
  Setup();
  Loop();
  for (Conn& c : conns_) close(c.fd);
  close(epfd_);
  // Elements pushed but never popped would otherwise be waiting for the next run.
  Reply reply;
  std::string storage;
  RoundTrip(o_.port, Command({"DEL", o_.key}), &storage, &reply);
}

}  // namespace

int main(int argc, char** argv) {
  Options options = ParseOptions(argc, argv);
  Run run(options);
  run.Execute();
  return 0;
}
