// workpool_load: load tool for the Lua work pool of tests/integration/workpool (EVALSHA of its
// scripts), against vireo or redis-server. Each client is a thread with a blocking socket.
//
//   workpool_load --port P --mode publish --batch 100 --clients 8 --seconds 5
//       --publish-sha SHA
//   workpool_load --port P --mode getack --prefetch 5 --clients 8 --tasks 100000
//       --get-sha SHA --ack-sha SHA
//   workpool_load --port P --mode evalsha --sha SHA --clients 8 --seconds 5
//
// Prints one JSON line: {"ops_per_sec": ..., "tasks_per_sec": ...}. publish and evalsha run for
// --seconds; getack runs until the queue (filled beforehand by the driver) is empty.
// Only 127.0.0.1 is ever connected to.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

struct Options {
  int port = 0;
  std::string mode = "evalsha";
  int clients = 1;
  int batch = 1;
  int prefetch = 1;
  double seconds = 5;
  std::string sha, publish_sha, get_sha, ack_sha;
  std::string prefix = "wp";
};

[[noreturn]] void Fail(const char* what) {
  std::printf("{\"error\":\"%s\"}\n", what);
  std::exit(2);
}

class Conn {
 public:
  explicit Conn(int port) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) Fail("connect");
    int one = 1;
    setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  }
  ~Conn() { close(fd_); }

  void Send(const std::vector<std::string>& args) {
    std::string out = "*" + std::to_string(args.size()) + "\r\n";
    for (const auto& a : args) {
      out += "$" + std::to_string(a.size()) + "\r\n";
      out += a;
      out += "\r\n";
    }
    size_t off = 0;
    while (off < out.size()) {
      ssize_t n = write(fd_, out.data() + off, out.size() - off);
      if (n <= 0) Fail("write");
      off += static_cast<size_t>(n);
    }
  }

  // Reads one reply; bulk strings at nesting depth 2 (the task ids of a get reply: the first
  // element of each inner array) are collected into *ids.
  void Read(std::vector<std::string>* ids = nullptr) { Value(0, 0, ids); }

 private:
  char Byte() {
    if (pos_ == len_) Fill();
    return buf_[pos_++];
  }
  void Fill() {
    ssize_t n = read(fd_, buf_, sizeof(buf_));
    if (n <= 0) Fail("read");
    pos_ = 0;
    len_ = static_cast<size_t>(n);
  }
  std::string Line() {
    std::string s;
    for (char c = Byte(); c != '\r'; c = Byte()) s.push_back(c);
    Byte();
    return s;
  }
  void Value(int depth, int index, std::vector<std::string>* ids) {
    char type = Byte();
    std::string line = Line();
    if (type == '-') {
      std::fprintf(stderr, "error reply: %s\n", line.c_str());
      Fail("error reply");
    }
    if (type == '$') {
      long n = std::atol(line.c_str());
      if (n < 0) return;
      std::string s;
      for (long i = 0; i < n + 2; ++i) s.push_back(Byte());
      s.resize(static_cast<size_t>(n));
      if (ids != nullptr && depth == 2 && index == 0) ids->push_back(std::move(s));
      return;
    }
    if (type == '*') {
      long n = std::atol(line.c_str());
      for (long i = 0; i < n; ++i) Value(depth + 1, static_cast<int>(i), ids);
    }
  }

  int fd_;
  char buf_[65536];
  size_t pos_ = 0, len_ = 0;
};

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i], v = argv[i + 1];
    if (k == "--port")
      o.port = std::atoi(v.c_str());
    else if (k == "--mode")
      o.mode = v;
    else if (k == "--clients")
      o.clients = std::atoi(v.c_str());
    else if (k == "--batch")
      o.batch = std::atoi(v.c_str());
    else if (k == "--prefetch")
      o.prefetch = std::atoi(v.c_str());
    else if (k == "--seconds")
      o.seconds = std::atof(v.c_str());
    else if (k == "--sha")
      o.sha = v;
    else if (k == "--publish-sha")
      o.publish_sha = v;
    else if (k == "--get-sha")
      o.get_sha = v;
    else if (k == "--ack-sha")
      o.ack_sha = v;
    else if (k == "--prefix")
      o.prefix = v;
    else
      Fail("unknown option");
  }
  std::atomic<long> ops{0}, tasks{0};
  std::atomic<long> next_id{0};
  double start = Now();
  double deadline = start + o.seconds;
  std::vector<std::thread> threads;
  for (int c = 0; c < o.clients; ++c) {
    threads.emplace_back([&, c] {
      Conn conn(o.port);
      std::string consumer = "w" + std::to_string(c);
      std::vector<std::string> ids;
      while (true) {
        if (o.mode == "evalsha") {
          if (Now() > deadline) return;
          conn.Send({"EVALSHA", o.sha, "0"});
          conn.Read();
          ops.fetch_add(1);
          tasks.fetch_add(1);
        } else if (o.mode == "publish") {
          if (Now() > deadline) return;
          std::vector<std::string> args = {"EVALSHA", o.publish_sha, "1", o.prefix};
          for (int b = 0; b < o.batch; ++b) {
            long id = next_id.fetch_add(1);
            args.push_back("b" + std::to_string(id));
            args.push_back("payload-" + std::to_string(id));
            args.push_back(id % 3 == 0 ? "" : "p" + std::to_string(id % 64));
            args.push_back(std::to_string(id % 5 == 0 ? 1 : 0));
            args.push_back("0");
          }
          conn.Send(args);
          conn.Read();
          ops.fetch_add(1);
          tasks.fetch_add(o.batch);
        } else {
          ids.clear();
          conn.Send({"EVALSHA", o.get_sha, "1", o.prefix, consumer, std::to_string(o.prefetch),
                     "60000", "30"});
          conn.Read(&ids);
          ops.fetch_add(1);
          if (ids.empty()) {
            // Partition heads may be held by other workers: the queue is done only when a
            // second look also finds nothing.
            if (Now() > deadline) return;
            std::this_thread::sleep_for(std::chrono::microseconds(200));
            conn.Send({"EVALSHA", o.get_sha, "1", o.prefix, consumer, "1", "60000", "30"});
            conn.Read(&ids);
            ops.fetch_add(1);
            if (ids.empty()) return;
          }
          std::vector<std::string> args = {"EVALSHA", o.ack_sha, "1", o.prefix, consumer};
          for (auto& id : ids) args.push_back(std::move(id));
          conn.Send(args);
          conn.Read();
          ops.fetch_add(1);
          tasks.fetch_add(static_cast<long>(args.size() - 5));
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  double elapsed = Now() - start;
  std::printf(
      "{\"ops_per_sec\": %.1f, \"tasks_per_sec\": %.1f, \"tasks\": %ld, \"seconds\": %.3f}\n",
      static_cast<double>(ops.load()) / elapsed, static_cast<double>(tasks.load()) / elapsed,
      tasks.load(), elapsed);
  return 0;
}
