#include "security/tls.h"

#include <openssl/decoder.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <spdlog/spdlog.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

#include "core/config.h"
#include "util/strings.h"

namespace vireo {
namespace {

std::string OpensslError() {
  unsigned long code = ERR_get_error();
  ERR_clear_error();
  if (code == 0) return "";
  char buf[256];
  ERR_error_string_n(code, buf, sizeof(buf));
  return buf;
}

// The key file's pass phrase, handed over as the callback's user data (a string owned by
// the context's builder, alive while the key loads).
int PassphraseCallback(char* buf, int size, int /*rwflag*/, void* user) {
  if (user == nullptr) return -1;
  const auto* pass = static_cast<const std::string*>(user);
  if (pass->size() > static_cast<size_t>(size)) return -1;
  memcpy(buf, pass->data(), pass->size());
  return static_cast<int>(pass->size());
}

struct CtxDeleter {
  void operator()(SSL_CTX* ctx) const { SSL_CTX_free(ctx); }
};
using CtxPtr = std::unique_ptr<SSL_CTX, CtxDeleter>;

// What both contexts share: versions, certificate and key, CA, ciphers.
CtxPtr NewContext(const ServerConfig& c, int protocols, bool client, std::string* error) {
  const bool own_client_cert = client && !c.tls_client_cert_file.empty();
  const std::string& cert = own_client_cert ? c.tls_client_cert_file : c.tls_cert_file;
  const std::string& key = own_client_cert ? c.tls_client_key_file : c.tls_key_file;
  const std::string& pass = own_client_cert ? c.tls_client_key_file_pass : c.tls_key_file_pass;
  CtxPtr ctx(SSL_CTX_new(client ? TLS_client_method() : TLS_server_method()));
  if (!ctx) {
    *error = "Failed to create the TLS context: " + OpensslError();
    return nullptr;
  }
  uint64_t options =
      SSL_OP_NO_SSLv2 | SSL_OP_NO_SSLv3 | SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION;
  if ((protocols & kTlsV1) == 0) options |= SSL_OP_NO_TLSv1;
  if ((protocols & kTlsV1_1) == 0) options |= SSL_OP_NO_TLSv1_1;
  if ((protocols & kTlsV1_2) == 0) options |= SSL_OP_NO_TLSv1_2;
  if ((protocols & kTlsV1_3) == 0) options |= SSL_OP_NO_TLSv1_3;
  // TLSv1 and 1.1 need the old ciphers OpenSSL 3 hides at its default security level.
  if ((protocols & (kTlsV1 | kTlsV1_1)) != 0) SSL_CTX_set_security_level(ctx.get(), 0);
  SSL_CTX_set_options(ctx.get(), options);
  // Output buffers grow (and move) between a write that would block and its retry.
  SSL_CTX_set_mode(ctx.get(), SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  SSL_CTX_set_default_passwd_cb(ctx.get(), PassphraseCallback);
  SSL_CTX_set_default_passwd_cb_userdata(ctx.get(),
                                         const_cast<std::string*>(pass.empty() ? nullptr : &pass));
  if (SSL_CTX_use_certificate_chain_file(ctx.get(), cert.c_str()) <= 0) {
    *error = "Failed to load certificate: " + cert + ": " + OpensslError();
    return nullptr;
  }
  if (SSL_CTX_use_PrivateKey_file(ctx.get(), key.c_str(), SSL_FILETYPE_PEM) <= 0) {
    *error = "Failed to load private key: " + key + ": " + OpensslError();
    return nullptr;
  }
  // The pass phrase was only needed to load the key; don't keep a pointer to it.
  SSL_CTX_set_default_passwd_cb_userdata(ctx.get(), nullptr);
  const char* ca_file = c.tls_ca_cert_file.empty() ? nullptr : c.tls_ca_cert_file.c_str();
  const char* ca_dir = c.tls_ca_cert_dir.empty() ? nullptr : c.tls_ca_cert_dir.c_str();
  if ((ca_file != nullptr || ca_dir != nullptr) &&
      SSL_CTX_load_verify_locations(ctx.get(), ca_file, ca_dir) <= 0) {
    *error = "Failed to configure CA certificate(s) file/directory: " + OpensslError();
    return nullptr;
  }
  if (!c.tls_ciphers.empty() && !SSL_CTX_set_cipher_list(ctx.get(), c.tls_ciphers.c_str())) {
    *error = "Failed to configure ciphers: " + c.tls_ciphers;
    OpensslError();
    return nullptr;
  }
  if (!c.tls_ciphersuites.empty() &&
      !SSL_CTX_set_ciphersuites(ctx.get(), c.tls_ciphersuites.c_str())) {
    *error = "Failed to configure ciphersuites: " + c.tls_ciphersuites;
    OpensslError();
    return nullptr;
  }
  // Outgoing links check the server they reach against the CA.
  SSL_CTX_set_verify(ctx.get(), client ? SSL_VERIFY_PEER : SSL_VERIFY_NONE, nullptr);
  return ctx;
}

bool LoadDhParams(SSL_CTX* ctx, const std::string& path, std::string* error) {
  FILE* f = std::fopen(path.c_str(), "r");
  if (f == nullptr) {
    *error = "Failed to load " + path + ": " + strerror(errno);
    return false;
  }
  EVP_PKEY* pkey = nullptr;
  OSSL_DECODER_CTX* dctx = OSSL_DECODER_CTX_new_for_pkey(
      &pkey, "PEM", nullptr, "DH", OSSL_KEYMGMT_SELECT_DOMAIN_PARAMETERS, nullptr, nullptr);
  bool ok = dctx != nullptr && OSSL_DECODER_from_fp(dctx, f) && pkey != nullptr;
  OSSL_DECODER_CTX_free(dctx);
  std::fclose(f);
  if (!ok) {
    EVP_PKEY_free(pkey);
    *error = path + ": failed to read DH params.";
    OpensslError();
    return false;
  }
  // On success the context owns the key.
  if (SSL_CTX_set0_tmp_dh_pkey(ctx, pkey) <= 0) {
    EVP_PKEY_free(pkey);
    *error = "Failed to load DH params file: " + path + ": " + OpensslError();
    return false;
  }
  return true;
}

}  // namespace

int ParseTlsProtocols(std::string_view text) {
  if (text.find_first_not_of(' ') == std::string_view::npos) return kTlsV1_2 | kTlsV1_3;
  int mask = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find(' ', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view word = text.substr(pos, end - pos);
    pos = end + 1;
    if (word.empty()) continue;
    if (EqualsIgnoreCase(word, "tlsv1")) {
      mask |= kTlsV1;
    } else if (EqualsIgnoreCase(word, "tlsv1.1")) {
      mask |= kTlsV1_1;
    } else if (EqualsIgnoreCase(word, "tlsv1.2")) {
      mask |= kTlsV1_2;
    } else if (EqualsIgnoreCase(word, "tlsv1.3")) {
      mask |= kTlsV1_3;
    } else {
      return -1;
    }
  }
  return mask == 0 ? -1 : mask;
}

// ---- TlsSession --------------------------------------------------------------------------

TlsSession::~TlsSession() {
  // A close_notify if the socket takes it at once; never wait for the peer's.
  if (handshake_done_ && !abandoned_) {
    ERR_clear_error();
    SSL_shutdown(ssl_);
  }
  SSL_free(ssl_);
  ERR_clear_error();
}

ssize_t TlsSession::Result(int ret) {
  if (ret > 0) {
    wants_write_ = false;
    return ret;
  }
  int saved_errno = errno;
  int code = SSL_get_error(ssl_, ret);
  switch (code) {
    case SSL_ERROR_WANT_READ:
      wants_write_ = false;
      errno = EAGAIN;
      return -1;
    case SSL_ERROR_WANT_WRITE:
      wants_write_ = true;
      errno = EAGAIN;
      return -1;
    case SSL_ERROR_ZERO_RETURN:
      return 0;  // the peer's close_notify
    case SSL_ERROR_SYSCALL:
      error_ = saved_errno != 0 ? strerror(saved_errno) : "connection lost";
      ERR_clear_error();
      errno = saved_errno != 0 ? saved_errno : ECONNRESET;
      return -1;
    default:
      error_ = OpensslError();
      errno = EIO;
      return -1;
  }
}

TlsSession::Step TlsSession::Handshake() {
  if (handshake_done_) return Step::kDone;
  ERR_clear_error();
  errno = 0;
  int ret = SSL_do_handshake(ssl_);
  if (ret == 1) {
    handshake_done_ = true;
    wants_write_ = false;
    return Step::kDone;
  }
  if (Result(ret) < 0 && errno == EAGAIN) {
    return wants_write_ ? Step::kWantWrite : Step::kWantRead;
  }
  if (error_.empty()) error_ = "connection closed during the handshake";
  return Step::kFailed;
}

ssize_t TlsSession::Read(void* buf, size_t n) {
  ERR_clear_error();
  errno = 0;
  return Result(SSL_read(ssl_, buf, static_cast<int>(std::min<size_t>(n, INT32_MAX))));
}

ssize_t TlsSession::Write(const void* buf, size_t n) {
  if (n == 0) return 0;
  ERR_clear_error();
  errno = 0;
  return Result(SSL_write(ssl_, buf, static_cast<int>(std::min<size_t>(n, INT32_MAX))));
}

size_t TlsSession::MemoryUsage() const {
  // Measured on OpenSSL 3.0 (CRYPTO_set_mem_functions counting live bytes of one accepted
  // session on a socketpair): about 8.5 KB right after SSL_new (the SSL object and its
  // method state); about 47 KB once the handshake is done and a reply was written. The bulk
  // of that is the two record buffers (about 17 KB each: a 16 KB record plus header and MAC
  // or padding room), which OpenSSL keeps for the connection's life as we don't set
  // SSL_MODE_RELEASE_BUFFERS; the rest is the cipher contexts and the session. During the
  // handshake the read buffer and the handshake's own state are already there.
  constexpr size_t kSessionObject = 8 * 1024 + 512;
  constexpr size_t kRecordBuffer = 17 * 1024;
  constexpr size_t kCipherState = 4 * 1024 + 512;
  return kSessionObject + kRecordBuffer + (handshake_done_ ? kRecordBuffer + kCipherState : 0);
}

size_t TlsSession::Pending() const { return static_cast<size_t>(SSL_pending(ssl_)); }

std::string TlsSession::PeerSubject() const {
  X509* cert = SSL_get1_peer_certificate(ssl_);
  if (cert == nullptr) return "";
  char buf[256];
  X509_NAME_oneline(X509_get_subject_name(cert), buf, sizeof(buf));
  X509_free(cert);
  return buf;
}

// ---- TlsContext --------------------------------------------------------------------------

TlsContext::~TlsContext() {
  SSL_CTX_free(server_ctx_);
  SSL_CTX_free(client_ctx_);
}

std::string TlsContext::Configure(const ServerConfig& c) {
  std::string error;
  if (c.tls_cert_file.empty()) {
    error = "No tls-cert-file configured!";
  } else if (c.tls_key_file.empty()) {
    error = "No tls-key-file configured!";
  } else if ((c.tls_auth_clients != "no" || c.tls_replication || c.tls_cluster) &&
             c.tls_ca_cert_file.empty() && c.tls_ca_cert_dir.empty()) {
    error =
        "Either tls-ca-cert-file or tls-ca-cert-dir must be specified when tls-cluster, "
        "tls-replication or tls-auth-clients are enabled!";
  }
  int protocols = ParseTlsProtocols(c.tls_protocols);
  if (error.empty() && protocols < 0) error = "Invalid tls-protocols configuration string";
  CtxPtr server;
  CtxPtr client;
  if (error.empty()) server = NewContext(c, protocols, false, &error);
  if (server) {
    if (c.tls_prefer_server_ciphers) {
      SSL_CTX_set_options(server.get(), SSL_OP_CIPHER_SERVER_PREFERENCE);
    }
    if (c.tls_session_caching) {
      static constexpr unsigned char kSessionContext[] = "vireo";
      SSL_CTX_set_session_cache_mode(server.get(), SSL_SESS_CACHE_SERVER);
      SSL_CTX_sess_set_cache_size(server.get(), c.tls_session_cache_size);
      SSL_CTX_set_timeout(server.get(), c.tls_session_cache_timeout);
      SSL_CTX_set_session_id_context(server.get(), kSessionContext, sizeof(kSessionContext) - 1);
    } else {
      SSL_CTX_set_session_cache_mode(server.get(), SSL_SESS_CACHE_OFF);
      SSL_CTX_set_options(server.get(), SSL_OP_NO_TICKET);
    }
    if (!c.tls_dh_params_file.empty()) {
      if (!LoadDhParams(server.get(), c.tls_dh_params_file, &error)) server.reset();
    } else {
      SSL_CTX_set_dh_auto(server.get(), 1);
    }
  }
  if (server) client = NewContext(c, protocols, true, &error);
  if (!client) {
    spdlog::warn("{}", error);
    return error;
  }
  SSL_CTX_free(server_ctx_);
  SSL_CTX_free(client_ctx_);
  server_ctx_ = server.release();
  client_ctx_ = client.release();
  return "";
}

std::unique_ptr<TlsSession> TlsContext::Accept(int fd, std::string_view auth_clients) {
  if (server_ctx_ == nullptr) return nullptr;
  SSL* ssl = SSL_new(server_ctx_);
  if (ssl == nullptr) return nullptr;
  int verify = SSL_VERIFY_NONE;
  if (auth_clients == "yes") verify = SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT;
  if (auth_clients == "optional") verify = SSL_VERIFY_PEER;
  SSL_set_verify(ssl, verify, nullptr);
  SSL_set_fd(ssl, fd);
  SSL_set_accept_state(ssl);
  return std::make_unique<TlsSession>(ssl);
}

std::unique_ptr<TlsSession> TlsContext::Connect(int fd) {
  if (client_ctx_ == nullptr) return nullptr;
  SSL* ssl = SSL_new(client_ctx_);
  if (ssl == nullptr) return nullptr;
  SSL_set_fd(ssl, fd);
  SSL_set_connect_state(ssl);
  return std::make_unique<TlsSession>(ssl);
}

}  // namespace vireo
