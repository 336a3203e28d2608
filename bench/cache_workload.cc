// A cache-aside load generator for the eviction benchmarks (issue 19; bench/cache_compare
// drives it). Each lookup is GET key:<12 digits>, the key drawn from a Zipf(s) distribution over
// --keys keys (index 0 the most popular); when the reply is nil the client "computes" the
// value and stores it: SET key <--value-size bytes>. Like bench/load_gen it keeps `pipeline`
// commands in flight per connection, encodes requests by patching digits into a template and
// only frames replies, so the server rather than this client is the limit on a small machine.
//
//   cache_workload --port P [--host 127.0.0.1] [--clients 50] [--pipeline 16]
//                  [--keys 1000000] [--zipf 0.99] [--value-size 64] [--requests 1000000]
//                  [--warmup-requests 0] [--seed 1]
//   cache_workload --port P --fill [--keys N] [--value-size B]    SET key 0..N-1 once each
//   cache_workload --self-test [--keys N] [--zipf S] [--requests N] check the Zipf sampler
//
// --requests counts lookups (GETs); a SET after a miss goes out in the next batch of the same
// connection, before new GETs, so a batch never holds more than `pipeline` commands. Warm-up
// lookups run first on the same connections and are not counted. The key sequence is
// deterministic per connection (--seed and the connection's index); the interleaving of
// connections at the server is not.
//
// Prints one JSON line: {"requests" (GETs + SETs answered),"gets","hits","misses","sets",
// "hit_ratio","seconds","rps" (commands/s),"get_rps","errors"}. Exit status 1 on any error
// reply (e.g. OOM under noeviction) or on a lost connection.
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "resp_client.h"

namespace {

constexpr int kKeyDigits = 12;  // key:000000001234, the same names load_gen's __rand_int__ makes

struct Options {
  Options() { load.requests = 1000000; }
  bench::LoadOptions load;
  uint64_t keys = 1000000;
  double zipf = 0.99;
  int64_t value_size = 64;
  int64_t warmup = 0;
  uint64_t seed = 1;
  bool fill = false;
  bool self_test = false;
};

// Zipf(s) over ranks 1..n by rejection-inversion (Hörmann and Derflinger, "Rejection-inversion
// to generate variates from monotone discrete distributions", 1996): O(1) memory and about one
// uniform per sample, where a CDF table would cost 8 bytes a key and a cache-missing binary
// search per request. The continuous hat H(x) = ∫ x^-s is inverted; a sample k is accepted when
// the uniform falls under the part of the hat that belongs to k's bar.
class ZipfSampler {
 public:
  ZipfSampler(uint64_t n, double s)
      : n_(static_cast<double>(n)),
        s_(s),
        h_x1_(HIntegral(1.5) - 1.0),
        h_n_(HIntegral(n_ + 0.5)),
        squeeze_(2.0 - HIntegralInverse(HIntegral(2.5) - H(2.0))) {}

  // A rank in [1, n].
  uint64_t operator()(std::mt19937_64& rng) const {
    for (;;) {
      double u = h_n_ + Uniform(rng) * (h_x1_ - h_n_);
      double x = HIntegralInverse(u);
      double k = std::floor(x + 0.5);
      if (k < 1) k = 1;
      if (k > n_) k = n_;
      if (k - x <= squeeze_ || u >= HIntegral(k + 0.5) - H(k)) return static_cast<uint64_t>(k);
    }
  }

 private:
  static double Uniform(std::mt19937_64& rng) {
    return static_cast<double>(rng() >> 11) * 0x1.0p-53;
  }
  double H(double x) const { return std::exp(-s_ * std::log(x)); }
  // (x^(1-s) - 1) / (1-s), written so that s = 1 (log x) needs no special case.
  double HIntegral(double x) const {
    double lx = std::log(x);
    return ExpM1Over((1.0 - s_) * lx) * lx;
  }
  double HIntegralInverse(double x) const {
    double t = x * (1.0 - s_);
    if (t < -1.0) t = -1.0;  // rounding at the far end of the range
    return std::exp(Log1pOver(t) * x);
  }
  // log1p(t)/t and expm1(t)/t with their limits at 0.
  static double Log1pOver(double t) {
    return std::fabs(t) > 1e-8 ? std::log1p(t) / t : 1.0 - t * (0.5 - t / 3.0);
  }
  static double ExpM1Over(double t) {
    return std::fabs(t) > 1e-8 ? std::expm1(t) / t : 1.0 + t * (0.5 + t / 6.0);
  }

  double n_, s_, h_x1_, h_n_, squeeze_;
};

// Draws samples and compares their frequencies with the exact Zipf probabilities: the first
// ranks one by one and decades of ranks ([1,10), [10,100), ...) as buckets. A tolerance of five
// binomial standard deviations plus 0.1 % keeps it deterministic for a given seed and still
// catches an off-by-one rank or a wrong exponent.
int SelfTest(const Options& o) {
  const uint64_t n = o.keys;
  const int64_t samples = o.load.requests;
  std::vector<double> pmf(n + 1);
  double norm = 0;
  for (uint64_t k = 1; k <= n; ++k) norm += std::pow(static_cast<double>(k), -o.zipf);
  for (uint64_t k = 1; k <= n; ++k) pmf[k] = std::pow(static_cast<double>(k), -o.zipf) / norm;
  std::vector<int64_t> count(n + 1, 0);
  ZipfSampler zipf(n, o.zipf);
  std::mt19937_64 rng(o.seed);
  for (int64_t i = 0; i < samples; ++i) {
    uint64_t k = zipf(rng);
    if (k < 1 || k > n) {
      std::printf("{\"self_test\":\"fail\",\"error\":\"rank %llu out of range\"}\n",
                  static_cast<unsigned long long>(k));
      return 1;
    }
    ++count[k];
  }
  bool ok = true;
  double worst = 0;  // largest |observed - expected| in standard deviations
  auto check = [&](double p, int64_t observed) {
    double expected = p * static_cast<double>(samples);
    double sd = std::sqrt(expected * (1 - p)) + 1e-9;
    double dev = std::fabs(static_cast<double>(observed) - expected);
    worst = std::max(worst, dev / sd);
    if (dev > 5 * sd + 0.001 * expected) ok = false;
  };
  for (uint64_t k = 1; k <= std::min<uint64_t>(n, 20); ++k) check(pmf[k], count[k]);
  for (uint64_t lo = 1; lo <= n; lo *= 10) {
    double p = 0;
    int64_t c = 0;
    for (uint64_t k = lo; k < lo * 10 && k <= n; ++k) {
      p += pmf[k];
      c += count[k];
    }
    check(p, c);
  }
  // The best any cache of n/10 keys can do on this stream: the mass of the top 10 % of ranks.
  double top_tenth = 0;
  for (uint64_t k = 1; k <= n / 10; ++k) top_tenth += pmf[k];
  std::printf(
      "{\"self_test\":\"%s\",\"keys\":%llu,\"zipf\":%.4f,\"samples\":%lld,\"p_rank1\":%.6f,"
      "\"observed_rank1\":%.6f,\"worst_sigma\":%.2f,\"top_10pct_mass\":%.4f}\n",
      ok ? "pass" : "fail", static_cast<unsigned long long>(n), o.zipf,
      static_cast<long long>(samples), pmf[1],
      static_cast<double>(count[1]) / static_cast<double>(samples), worst, top_tenth);
  return ok ? 0 : 1;
}

// GET and SET requests for one key index, encoded once and patched per request.
class Requests {
 public:
  explicit Requests(int64_t value_size) {
    std::string key = "key:" + std::string(kKeyDigits, '0');
    std::string key_arg = "$" + std::to_string(key.size()) + "\r\n" + key + "\r\n";
    get_ = "*2\r\n$3\r\nGET\r\n" + key_arg;
    get_digits_ = get_.size() - 2 - kKeyDigits;
    set_ = "*3\r\n$3\r\nSET\r\n" + key_arg;
    set_digits_ = set_.size() - 2 - kKeyDigits;
    set_ += "$" + std::to_string(value_size) + "\r\n" +
            std::string(static_cast<size_t>(value_size), 'v') + "\r\n";
  }
  void AppendGet(uint64_t index, std::string* out) const { Append(get_, get_digits_, index, out); }
  void AppendSet(uint64_t index, std::string* out) const { Append(set_, set_digits_, index, out); }

 private:
  static void Append(const std::string& tmpl, size_t digits, uint64_t index, std::string* out) {
    size_t base = out->size();
    out->append(tmpl);
    bench::PutDigits(out->data() + base + digits, kKeyDigits, index);
  }

  std::string get_, set_;
  size_t get_digits_ = 0, set_digits_ = 0;
};

constexpr uint64_t kSetBit = uint64_t{1} << 63;  // in-flight entry: SET rather than GET

struct Connection {
  int fd = -1;
  std::mt19937_64 rng;
  std::string in;
  size_t in_start = 0;
  std::vector<uint64_t> flight;  // key index | kSetBit per command of the batch in flight
  size_t flight_head = 0;        // replies already read for this batch
  std::vector<uint64_t> misses;  // keys to SET in the next batch
};

struct Counters {
  int64_t gets = 0, hits = 0, misses = 0, sets = 0, errors = 0;
};

class Workload {
 public:
  Workload(const Options& o, std::vector<Connection>* conns, int ep)
      : o_(o), conns_(*conns), ep_(ep), zipf_(o.keys, o.zipf), requests_(o.value_size) {}

  // Runs until `lookups` more GETs (or, with --fill, SETs) have been sent and every reply,
  // the SETs they caused included, has arrived. Returns an error message or nullptr.
  const char* Run(int64_t lookups, Counters* c) {
    left_ = lookups;
    counters_ = c;
    int busy = 0;
    for (Connection& conn : conns_) {
      if (!Refill(conn)) return "send failed";
      if (InFlight(conn)) ++busy;
    }
    std::vector<epoll_event> events(conns_.size());
    char buf[1 << 16];
    while (busy > 0) {
      int n = epoll_wait(ep_, events.data(), static_cast<int>(events.size()), 10000);
      if (n <= 0) return "no progress";
      for (int e = 0; e < n; ++e) {
        Connection& conn = conns_[events[static_cast<size_t>(e)].data.u64];
        ssize_t got = recv(conn.fd, buf, sizeof(buf), 0);
        if (got <= 0) return "connection closed";
        conn.in.append(buf, static_cast<size_t>(got));
        ReadReplies(conn);
        if (!InFlight(conn)) {
          if (!Refill(conn)) return "send failed";
          if (!InFlight(conn)) --busy;  // nothing left for this connection in this phase
        }
      }
    }
    return nullptr;
  }

 private:
  static bool InFlight(const Connection& c) { return c.flight_head < c.flight.size(); }

  void ReadReplies(Connection& c) {
    while (InFlight(c)) {
      bool error = false;
      const char* p = c.in.data() + c.in_start;
      size_t len = bench::FrameReply(p, c.in.data() + c.in.size(), &error);
      if (len == 0) break;
      uint64_t entry = c.flight[c.flight_head++];
      const bool is_set = (entry & kSetBit) != 0;
      ++(is_set ? counters_->sets : counters_->gets);
      if (error) {
        ++counters_->errors;
      } else if (!is_set) {
        if (len == 5 && p[0] == '$' && p[1] == '-') {  // $-1: nil, a miss
          ++counters_->misses;
          c.misses.push_back(entry);
        } else {
          ++counters_->hits;
        }
      }
      c.in_start += len;
    }
    if (c.in_start == c.in.size()) {
      c.in.clear();
      c.in_start = 0;
    }
  }

  // Sends the next batch if the connection has none in flight: the SETs its misses owe first,
  // then new lookups up to `pipeline` commands.
  bool Refill(Connection& c) {
    if (InFlight(c)) return true;
    c.flight.clear();
    c.flight_head = 0;
    out_.clear();
    for (uint64_t index : c.misses) {
      requests_.AppendSet(index, &out_);
      c.flight.push_back(index | kSetBit);
    }
    c.misses.clear();
    while (left_ > 0 && c.flight.size() < static_cast<size_t>(o_.load.pipeline)) {
      --left_;
      if (o_.fill) {
        requests_.AppendSet(next_fill_, &out_);
        c.flight.push_back(next_fill_++ | kSetBit);
      } else {
        uint64_t index = zipf_(c.rng) - 1;
        requests_.AppendGet(index, &out_);
        c.flight.push_back(index);
      }
    }
    return out_.empty() || bench::SendAll(c.fd, out_);
  }

  const Options& o_;
  std::vector<Connection>& conns_;
  int ep_;
  ZipfSampler zipf_;
  Requests requests_;
  std::string out_;
  int64_t left_ = 0;
  uint64_t next_fill_ = 0;
  Counters* counters_ = nullptr;
};

bool ParseOptions(int argc, char** argv, Options* o) {
  for (int i = 1; i < argc; ++i) {
    std::string k = argv[i];
    if (k == "--fill") {
      o->fill = true;
      continue;
    }
    if (k == "--self-test") {
      o->self_test = true;
      continue;
    }
    if (i + 1 >= argc) return false;
    std::string v = argv[++i];
    if (k == "--keys") {
      o->keys = std::strtoull(v.c_str(), nullptr, 10);
    } else if (k == "--zipf") {
      o->zipf = std::strtod(v.c_str(), nullptr);
    } else if (k == "--value-size") {
      o->value_size = std::atoll(v.c_str());
    } else if (k == "--warmup-requests") {
      o->warmup = std::atoll(v.c_str());
    } else if (k == "--seed") {
      o->seed = std::strtoull(v.c_str(), nullptr, 10);
    } else if (!o->load.Set(k, v)) {
      return false;
    }
  }
  // --keys must fit the fixed-width key names and stay clear of kSetBit.
  return o->load.Valid() && o->warmup >= 0 && o->keys > 0 && o->keys <= 1000000000000ULL &&
         o->zipf > 0 && o->value_size >= 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (!ParseOptions(argc, argv, &o)) {
    std::fprintf(stderr,
                 "usage: cache_workload --port P [--host H] [--clients N] [--pipeline N] "
                 "[--keys N] [--zipf S] [--value-size B] [--requests N] [--warmup-requests N] "
                 "[--seed N] [--fill] [--self-test]\n");
    return 2;
  }
  if (o.self_test) return SelfTest(o);
  if (o.fill) {
    o.load.requests = static_cast<int64_t>(o.keys);
    o.warmup = 0;
  }
  std::vector<int> fds;
  int ep = bench::ConnectAll(o.load, &fds);
  if (ep < 0) {
    std::printf("{\"error\":\"connect failed\"}\n");
    return 1;
  }
  std::vector<Connection> conns(fds.size());
  for (size_t i = 0; i < conns.size(); ++i) {
    conns[i].fd = fds[i];
    std::seed_seq seq{o.seed, static_cast<uint64_t>(i)};
    conns[i].rng.seed(seq);
  }
  Workload workload(o, &conns, ep);
  Counters warm, c;
  if (o.warmup > 0) {
    if (const char* err = workload.Run(o.warmup, &warm)) {
      std::printf("{\"error\":\"%s\",\"phase\":\"warmup\"}\n", err);
      return 1;
    }
  }
  auto start = std::chrono::steady_clock::now();
  if (const char* err = workload.Run(o.load.requests, &c)) {
    std::printf("{\"error\":\"%s\"}\n", err);
    return 1;
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  int64_t done = c.gets + c.sets;
  double hit_ratio = c.gets > 0 ? static_cast<double>(c.hits) / static_cast<double>(c.gets) : 0;
  std::printf(
      "{\"requests\":%lld,\"gets\":%lld,\"hits\":%lld,\"misses\":%lld,\"sets\":%lld,"
      "\"hit_ratio\":%.6f,\"seconds\":%.4f,\"rps\":%.1f,\"get_rps\":%.1f,\"errors\":%lld,"
      "\"warmup_requests\":%lld,\"warmup_gets\":%lld,\"warmup_hit_ratio\":%.6f}\n",
      static_cast<long long>(done), static_cast<long long>(c.gets), static_cast<long long>(c.hits),
      static_cast<long long>(c.misses), static_cast<long long>(c.sets), hit_ratio, seconds,
      static_cast<double>(done) / seconds, static_cast<double>(c.gets) / seconds,
      static_cast<long long>(c.errors), static_cast<long long>(warm.gets + warm.sets),
      static_cast<long long>(warm.gets),
      warm.gets > 0 ? static_cast<double>(warm.hits) / static_cast<double>(warm.gets) : 0);
  return c.errors > 0 || warm.errors > 0 ? 1 : 0;
}
