// A lean pipelined RESP load generator: N connections, each keeping `pipeline` copies of one
// command in flight, until `requests` replies have arrived. It does what redis-benchmark does
// for one test, with less client CPU per request: the requests are encoded once, replies are
// only framed (never turned into objects), and latency is not recorded. On a 2-core machine
// redis-benchmark needs about as much CPU per request as the server it measures, so at -P 16 it
// is the bottleneck and both servers look alike; this tool leaves the server as the limit.
//
//   load_gen --port P [--host 127.0.0.1] [--clients 50] [--pipeline 16] [--requests 100000]
//            [--keyspace N] [--conn-setup "CMD ARG;CMD ARG"] -- COMMAND ARG...
//
// --conn-setup commands run on every connection before the load, untimed (HELLO 3 and CLIENT
// TRACKING ON for a client-side caching workload); an error reply to one fails the run.
//
// "__rand_int__" in an argument becomes a 12-digit random number below N per request (as
// redis-benchmark -r does); without --keyspace it is sent as is. Prints one JSON line:
// {"requests":..,"seconds":..,"rps":..,"errors":..}. Exit status 1 on any error reply.
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "resp_client.h"

namespace {

struct Options {
  bench::LoadOptions load;
  uint64_t keyspace = 0;
  std::vector<std::vector<std::string>> conn_setup;
  std::vector<std::string> command;
};

// Splits "A b;C d" into commands of space-separated words.
std::vector<std::vector<std::string>> ParseSetup(const std::string& text) {
  std::vector<std::vector<std::string>> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(';', start);
    if (end == std::string::npos) end = text.size();
    std::vector<std::string> words;
    std::string word;
    for (size_t i = start; i <= end; ++i) {
      if (i == end || text[i] == ' ') {
        if (!word.empty()) words.push_back(word);
        word.clear();
      } else {
        word += text[i];
      }
    }
    if (!words.empty()) out.push_back(words);
    start = end + 1;
  }
  return out;
}

// Runs the setup commands on one (blocking) connection; false on an error reply or EOF.
bool RunSetup(int fd, const std::vector<std::vector<std::string>>& setup) {
  std::string in;
  char buf[4096];
  for (const auto& args : setup) {
    std::string req = "*" + std::to_string(args.size()) + "\r\n";
    for (const std::string& a : args) req += "$" + std::to_string(a.size()) + "\r\n" + a + "\r\n";
    if (!bench::SendAll(fd, req)) return false;
    for (;;) {
      bool error = false;
      size_t len = bench::FrameReply(in.data(), in.data() + in.size(), &error);
      if (len > 0) {
        in.erase(0, len);
        if (error) return false;
        break;
      }
      ssize_t got = recv(fd, buf, sizeof(buf), 0);
      if (got <= 0) return false;
      in.append(buf, static_cast<size_t>(got));
    }
  }
  return true;
}

struct Connection {
  int fd = -1;
  int in_flight = 0;
  std::string in;
  size_t in_start = 0;
};

class Encoder {
 public:
  Encoder(const std::vector<std::string>& args, uint64_t keyspace) : keyspace_(keyspace) {
    one_ = "*" + std::to_string(args.size()) + "\r\n";
    for (const std::string& a : args) {
      std::string arg = a;
      if (keyspace_ > 0) {
        // Each placeholder becomes 12 digits; remember where they go.
        for (size_t at = arg.find("__rand_int__"); at != std::string::npos;
             at = arg.find("__rand_int__", at + 12)) {
          arg.replace(at, 12, "000000000000");
          patch_.push_back(one_.size() + std::to_string(arg.size()).size() + 3 + at);
        }
      }
      one_ += "$" + std::to_string(arg.size()) + "\r\n" + arg + "\r\n";
    }
  }
  // `count` requests appended to out.
  void Append(int count, std::mt19937_64& rng, std::string* out) const {
    for (int i = 0; i < count; ++i) {
      size_t base = out->size();
      out->append(one_);
      for (size_t offset : patch_) {
        uint64_t v = rng() % keyspace_;
        bench::PutDigits(out->data() + base + offset, 12, v);
      }
    }
  }

 private:
  uint64_t keyspace_;
  std::string one_;
  std::vector<size_t> patch_;
};

bool ParseOptions(int argc, char** argv, Options* o) {
  int i = 1;
  for (; i < argc; ++i) {
    std::string k = argv[i];
    if (k == "--") {
      ++i;
      break;
    }
    if (i + 1 >= argc) return false;
    std::string v = argv[++i];
    if (k == "--keyspace") {
      o->keyspace = std::strtoull(v.c_str(), nullptr, 10);
    } else if (k == "--conn-setup") {
      o->conn_setup = ParseSetup(v);
    } else if (!o->load.Set(k, v)) {
      return false;
    }
  }
  for (; i < argc; ++i) o->command.emplace_back(argv[i]);
  return !o->command.empty() && o->load.Valid();
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (!ParseOptions(argc, argv, &o)) {
    std::fprintf(stderr,
                 "usage: load_gen --port P [--host H] [--clients N] [--pipeline N] "
                 "[--requests N] [--keyspace N] [--conn-setup \"CMD;CMD\"] -- COMMAND ARG...\n");
    return 2;
  }
  Encoder encoder(o.command, o.keyspace);
  std::mt19937_64 rng(12345);
  std::vector<int> fds;
  int ep = bench::ConnectAll(o.load, &fds);
  if (ep < 0) {
    std::printf("{\"error\":\"connect failed\"}\n");
    return 1;
  }
  for (int fd : fds) {
    if (!RunSetup(fd, o.conn_setup)) {
      std::printf("{\"error\":\"connection setup failed\"}\n");
      return 1;
    }
  }
  std::vector<Connection> conns(fds.size());
  for (size_t i = 0; i < conns.size(); ++i) conns[i].fd = fds[i];
  int64_t sent = 0, done = 0, errors = 0;
  std::string out;
  auto refill = [&](Connection& c) -> bool {
    int64_t left = o.load.requests - sent;
    if (left <= 0 || c.in_flight > 0) return true;
    int batch = static_cast<int>(left < o.load.pipeline ? left : o.load.pipeline);
    out.clear();
    encoder.Append(batch, rng, &out);
    c.in_flight = batch;
    sent += batch;
    return bench::SendAll(c.fd, out);
  };
  auto start = std::chrono::steady_clock::now();
  for (Connection& c : conns) {
    if (!refill(c)) return 1;
  }
  std::vector<epoll_event> events(static_cast<size_t>(o.load.clients));
  char buf[1 << 16];
  while (done < o.load.requests) {
    int n = epoll_wait(ep, events.data(), static_cast<int>(events.size()), 10000);
    if (n <= 0) {
      std::printf("{\"error\":\"no progress\"}\n");
      return 1;
    }
    for (int e = 0; e < n; ++e) {
      Connection& c = conns[events[static_cast<size_t>(e)].data.u64];
      ssize_t got = recv(c.fd, buf, sizeof(buf), 0);
      if (got <= 0) {
        std::printf("{\"error\":\"connection closed\"}\n");
        return 1;
      }
      c.in.append(buf, static_cast<size_t>(got));
      while (c.in_flight > 0) {
        bool error = false;
        size_t len = bench::FrameReply(c.in.data() + c.in_start, c.in.data() + c.in.size(), &error);
        if (len == 0) break;
        c.in_start += len;
        --c.in_flight;
        ++done;
        if (error) ++errors;
      }
      if (c.in_start == c.in.size()) {
        c.in.clear();
        c.in_start = 0;
      }
      if (!refill(c)) return 1;
    }
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("{\"requests\":%lld,\"seconds\":%.4f,\"rps\":%.1f,\"errors\":%lld}\n",
              static_cast<long long>(done), seconds, static_cast<double>(done) / seconds,
              static_cast<long long>(errors));
  return errors > 0 ? 1 : 0;
}
