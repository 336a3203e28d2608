// TLS connections over OpenSSL: the server's contexts (built from the tls-* options, rebuilt
// when CONFIG SET changes them) and a per-connection session that the event loop drives
// without blocking.
//
// The loop stays level-triggered and in charge: a session never waits. Read and Write behave
// like read(2)/write(2) on a non-blocking socket (-1 with errno EAGAIN when OpenSSL needs the
// socket to become readable or writable; wants_write() says which), so the plain and TLS paths
// share their code and differ only in a branch on the client's session pointer.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

typedef struct ssl_st SSL;
typedef struct ssl_ctx_st SSL_CTX;

namespace vireo {

struct ServerConfig;

// tls-protocols: "" (TLSv1.2 and TLSv1.3) or a space-separated, case-insensitive list of
// "TLSv1", "TLSv1.1", "TLSv1.2", "TLSv1.3". Returns the versions as a mask of kTls* bits, or
// -1 for an unknown name or an empty list.
enum : int { kTlsV1 = 1, kTlsV1_1 = 2, kTlsV1_2 = 4, kTlsV1_3 = 8 };
int ParseTlsProtocols(std::string_view text);

// One TLS connection (accepted or outgoing) on a non-blocking socket the caller owns.
class TlsSession {
 public:
  explicit TlsSession(SSL* ssl) : ssl_(ssl) {}
  ~TlsSession();
  TlsSession(const TlsSession&) = delete;
  TlsSession& operator=(const TlsSession&) = delete;

  enum class Step { kDone, kWantRead, kWantWrite, kFailed };
  // Advances the handshake as far as the socket allows.
  Step Handshake();
  bool handshake_done() const { return handshake_done_; }
  // read(2)/write(2) semantics (see the file comment); errno is EIO when TLS itself failed.
  ssize_t Read(void* buf, size_t n);
  ssize_t Write(const void* buf, size_t n);
  // The last Read/Write/Handshake that returned EAGAIN is waiting for the socket to become
  // writable (else readable).
  bool wants_write() const { return wants_write_; }
  // Decrypted bytes OpenSSL holds that the socket will not announce again.
  size_t Pending() const;
  // Why the last operation failed, for the log ("" if OpenSSL gave no reason).
  const std::string& error() const { return error_; }
  // The peer's certificate subject ("" without one).
  std::string PeerSubject() const;
  // An estimate of what OpenSSL holds for this connection, for client eviction and CLIENT
  // LIST tot-mem (OpenSSL has no API that reports it).
  size_t MemoryUsage() const;
  // The connection now belongs to another process (the forked child of an async Lua debugging
  // session holds a copy of this session): freeing it here must not send a close_notify,
  // which would end the child's session under it.
  void Abandon() { abandoned_ = true; }

 private:
  ssize_t Result(int ret);

  SSL* ssl_;
  bool handshake_done_ = false;
  bool wants_write_ = false;
  bool abandoned_ = false;
  std::string error_;
};

// The server's TLS contexts: the one accepted connections use, and the one for outgoing
// links (replication), which presents tls-client-cert-file when set (else tls-cert-file).
class TlsContext {
 public:
  TlsContext() = default;
  ~TlsContext();
  TlsContext(const TlsContext&) = delete;
  TlsContext& operator=(const TlsContext&) = delete;

  // Builds fresh contexts from the tls-* options; on success they replace the current ones
  // (connections already open keep theirs). Returns "" or why not (also logged).
  std::string Configure(const ServerConfig& c);
  bool configured() const { return server_ctx_ != nullptr; }
  // A session for an accepted socket; tls-auth-clients (yes/optional/no) is read per
  // connection, so changing it needs no rebuild. nullptr if not configured.
  std::unique_ptr<TlsSession> Accept(int fd, std::string_view auth_clients);
  // A session for an outgoing connection (the server's certificate is verified against the
  // CA; the host name is not, as in Redis).
  std::unique_ptr<TlsSession> Connect(int fd);

 private:
  SSL_CTX* server_ctx_ = nullptr;
  SSL_CTX* client_ctx_ = nullptr;
};

}  // namespace vireo
