// TLS pieces that work without a server: tls-protocols parsing, the context's configuration
// errors, and a handshake plus I/O over a non-blocking socket pair (certificates made with the
// openssl CLI in a temporary directory; skipped without it).
#include "security/tls.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "core/config.h"

namespace vireo {
namespace {

TEST(TlsProtocols, Parses) {
  EXPECT_EQ(ParseTlsProtocols(""), kTlsV1_2 | kTlsV1_3);
  EXPECT_EQ(ParseTlsProtocols("TLSv1.2"), kTlsV1_2);
  EXPECT_EQ(ParseTlsProtocols("tlsv1.3 TLSv1.2"), kTlsV1_2 | kTlsV1_3);
  EXPECT_EQ(ParseTlsProtocols("TLSv1 TLSv1.1"), kTlsV1 | kTlsV1_1);
  EXPECT_EQ(ParseTlsProtocols("TLSv1.2  TLSv1.3"), kTlsV1_2 | kTlsV1_3);
  EXPECT_EQ(ParseTlsProtocols("SSLv3"), -1);
  EXPECT_EQ(ParseTlsProtocols("TLSv1.2 bogus"), -1);
}

TEST(TlsContext, ConfigurationErrors) {
  ServerConfig c;
  TlsContext ctx;
  EXPECT_EQ(ctx.Configure(c), "No tls-cert-file configured!");
  c.tls_cert_file = "/nonexistent.crt";
  EXPECT_EQ(ctx.Configure(c), "No tls-key-file configured!");
  c.tls_key_file = "/nonexistent.key";
  EXPECT_NE(ctx.Configure(c).find("tls-ca-cert-file or tls-ca-cert-dir"), std::string::npos);
  c.tls_auth_clients = "no";
  EXPECT_NE(ctx.Configure(c).find("Failed to load certificate: /nonexistent.crt"),
            std::string::npos);
  c.tls_protocols = "TLSv2";
  EXPECT_EQ(ctx.Configure(c), "Invalid tls-protocols configuration string");
  EXPECT_FALSE(ctx.configured());
  EXPECT_EQ(ctx.Accept(0, "yes"), nullptr);
}

class TlsPairTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("vireo-tls-test-" + std::to_string(getpid()));
    std::filesystem::create_directories(dir_);
    std::string cmd = "cd " + dir_.string() +
                      " && openssl req -x509 -newkey rsa:2048 -nodes -days 1 -keyout ca.key "
                      "-out ca.crt -subj /CN=test-ca >/dev/null 2>&1"
                      " && openssl req -new -newkey rsa:2048 -nodes -keyout s.key -out s.csr "
                      "-subj /CN=test-server >/dev/null 2>&1"
                      " && openssl x509 -req -in s.csr -CA ca.crt -CAkey ca.key -CAcreateserial "
                      "-days 1 -out s.crt >/dev/null 2>&1";
    if (std::system(cmd.c_str()) != 0) GTEST_SKIP() << "no openssl CLI";
    config_.tls_cert_file = (dir_ / "s.crt").string();
    config_.tls_key_file = (dir_ / "s.key").string();
    config_.tls_ca_cert_file = (dir_ / "ca.crt").string();
    ASSERT_EQ(ctx_.Configure(config_), "");
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, fds_), 0);
  }
  void TearDown() override {
    if (fds_[0] >= 0) close(fds_[0]);
    if (fds_[1] >= 0) close(fds_[1]);
    std::filesystem::remove_all(dir_);
  }
  // Steps both handshakes until each is done (the pair's buffers never fill here).
  static bool Handshake(TlsSession& a, TlsSession& b) {
    for (int i = 0; i < 100; ++i) {
      auto sa = a.Handshake();
      auto sb = b.Handshake();
      if (sa == TlsSession::Step::kFailed || sb == TlsSession::Step::kFailed) return false;
      if (sa == TlsSession::Step::kDone && sb == TlsSession::Step::kDone) return true;
    }
    return false;
  }

  std::filesystem::path dir_;
  ServerConfig config_;
  TlsContext ctx_;
  int fds_[2] = {-1, -1};
};

TEST_F(TlsPairTest, HandshakeAndPendingRecordData) {
  // The client side presents the server's certificate (signed by the CA it trusts).
  auto server = ctx_.Accept(fds_[0], "yes");
  auto client = ctx_.Connect(fds_[1]);
  ASSERT_TRUE(server && client);
  ASSERT_TRUE(Handshake(*server, *client)) << server->error() << client->error();
  EXPECT_EQ(server->PeerSubject(), "/CN=test-server");

  // Nothing to read yet: EAGAIN, waiting for readability.
  char buf[64];
  errno = 0;
  EXPECT_EQ(server->Read(buf, sizeof(buf)), -1);
  EXPECT_EQ(errno, EAGAIN);
  EXPECT_FALSE(server->wants_write());

  // One record, read in small pieces: the rest is pending inside OpenSSL, not on the socket.
  std::string msg(1000, 'x');
  ASSERT_EQ(client->Write(msg.data(), msg.size()), static_cast<ssize_t>(msg.size()));
  ASSERT_EQ(server->Read(buf, 10), 10);
  EXPECT_EQ(server->Pending(), msg.size() - 10);
  std::string rest(2000, '\0');
  EXPECT_EQ(server->Read(rest.data(), rest.size()), static_cast<ssize_t>(msg.size() - 10));
  EXPECT_EQ(server->Pending(), 0u);

  // A clean close reads as end of file.
  client.reset();
  ssize_t n;
  while ((n = server->Read(buf, sizeof(buf))) > 0) {
  }
  EXPECT_EQ(n, 0);
}

TEST_F(TlsPairTest, ClientWithoutCertificateIsRefused) {
  auto server = ctx_.Accept(fds_[0], "yes");
  // A client context with no certificate: a second context from a config without client
  // files would still present tls-cert-file, so use a raw plain-text peer instead.
  ASSERT_EQ(write(fds_[1], "*1\r\n$4\r\nPING\r\n", 14), 14);
  EXPECT_EQ(server->Handshake(), TlsSession::Step::kFailed);
  EXPECT_FALSE(server->error().empty());
}

}  // namespace
}  // namespace vireo
