// MIGRATE's connections to target instances: blocking sockets with per-call timeouts, kept
// per "host:port" and reused by later MIGRATEs (with the database last SELECTed on each), as
// Redis does: at most 64, each closed after 10 s unused (CloseIdle from the server cron) or
// after any I/O error. With tls-cluster yes they are TLS connections (Redis's
// connTypeOfCluster()): the handshake and every read and write keep the same timeouts.
#ifndef VIREO_CLUSTER_MIGRATE_CONN_H_
#define VIREO_CLUSTER_MIGRATE_CONN_H_

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <unordered_map>

#include "security/tls.h"

namespace vireo::cluster {

class MigrateConnections {
 public:
  static constexpr size_t kMaxCached = 64;
  static constexpr int64_t kIdleSeconds = 10;

  struct Conn {
    int fd = -1;
    int64_t last_dbid = -1;  // the target's selected db, -1 when unknown
    int64_t last_use_s = 0;
    std::string in;                   // bytes read past the last line
    std::unique_ptr<TlsSession> tls;  // nullptr on a plain connection

    // Owns fd (closed with it); lives in place in the cache.
    Conn() = default;
    Conn(const Conn&) = delete;
    Conn& operator=(const Conn&) = delete;
    ~Conn();
  };

  MigrateConnections() = default;
  ~MigrateConnections();
  MigrateConnections(const MigrateConnections&) = delete;
  MigrateConnections& operator=(const MigrateConnections&) = delete;

  // The cached connection to host:port, or a new one (connect, and with `tls` the TLS
  // handshake, within timeout_ms); nullptr if the connection failed. `tls` (tls-cluster yes)
  // or nullptr (plain); a cached connection of the other kind is replaced.
  Conn* Get(std::string_view host, std::string_view port, int64_t timeout_ms, int64_t now_s,
            TlsContext* tls = nullptr);
  void Close(std::string_view host, std::string_view port);
  void CloseIdle(int64_t now_s);
  size_t size() const { return conns_.size(); }

  // Writes all of `data` (false on error or timeout; *timed_out says which).
  static bool Write(Conn& conn, std::string_view data, int64_t timeout_ms, bool* timed_out);
  // Reads one line (without CRLF) of at most 1023 bytes, as Redis's syncReadLine; false on
  // error, EOF or timeout.
  static bool ReadLine(Conn& conn, std::string* line, int64_t timeout_ms, bool* timed_out);

 private:
  static std::string Name(std::string_view host, std::string_view port);
  std::unordered_map<std::string, Conn> conns_;
  std::mt19937_64 rng_{std::random_device{}()};
};

}  // namespace vireo::cluster

#endif  // VIREO_CLUSTER_MIGRATE_CONN_H_
