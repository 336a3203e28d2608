// A real redis-server (Debian's 7.0) accepts a MEET that vireo's codec encodes and answers with a
// PONG that ClusterBusLink frames and decodes from the live socket. Skipped when redis-server is
// not installed.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "cluster/bus_link.h"
#include "cluster/bus_message.h"

namespace vireo::cluster {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

sockaddr_in Loopback(int port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(uint16_t(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return addr;
}

int Connect(int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr = Loopback(port);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0) return fd;
  close(fd);
  return -1;
}

bool PortFree(int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr = Loopback(port);
  const bool ok = bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  close(fd);
  return ok;
}

// Connects with retries while the server starts; -1 after `seconds`.
int ConnectWithin(int port, int seconds) {
  const auto deadline = Clock::now() + std::chrono::seconds(seconds);
  while (Clock::now() < deadline) {
    int fd = Connect(port);
    if (fd >= 0) return fd;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return -1;
}

void SetReceiveTimeout(int fd, int seconds) {
  timeval tv{seconds, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
}

bool SendAll(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n <= 0) return false;
    data.remove_prefix(size_t(n));
  }
  return true;
}

// A cluster-enabled redis-server in a temp dir, on a port whose bus port is free too.
class RedisNode {
 public:
  bool Start() {
    char dir_template[] = "/tmp/vireo-bus-interop-XXXXXX";
    if (!mkdtemp(dir_template)) return false;
    dir_ = dir_template;
    for (int p = 24041 + getpid() % 400; p < 24999; p += 7) {
      if (PortFree(p) && PortFree(p + 10000)) {
        port_ = p;
        break;
      }
    }
    if (port_ == 0) return false;
    std::vector<std::string> args = {"redis-server",
                                     "--port",
                                     std::to_string(port_),
                                     "--cluster-enabled",
                                     "yes",
                                     "--cluster-config-file",
                                     dir_ + "/nodes.conf",
                                     "--dir",
                                     dir_,
                                     "--save",
                                     "",
                                     "--appendonly",
                                     "no",
                                     "--logfile",
                                     dir_ + "/redis.log"};
    pid_ = fork();
    if (pid_ == 0) {
      std::vector<char*> argv;
      for (std::string& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      execvp("redis-server", argv.data());
      _exit(127);
    }
    return pid_ > 0;
  }

  ~RedisNode() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    if (!dir_.empty()) fs::remove_all(dir_);
  }

  int port() const { return port_; }

  // One inline command, the raw reply (enough for CLUSTER NODES' single bulk string).
  std::string Command(const std::string& line) {
    int fd = Connect(port_);
    if (fd < 0) return "";
    SetReceiveTimeout(fd, 5);
    std::string reply;
    if (SendAll(fd, line + "\r\n")) {
      char buf[4096];
      ssize_t n;
      // A bulk reply "$<len>\r\n<data>\r\n": read until its whole length has arrived.
      while ((n = recv(fd, buf, sizeof(buf), 0)) > 0) {
        reply.append(buf, size_t(n));
        size_t eol = reply.find("\r\n");
        if (eol != std::string::npos && reply[0] == '$' &&
            reply.size() >= eol + 2 + std::stoul(reply.substr(1, eol - 1)) + 2) {
          break;
        }
      }
    }
    close(fd);
    return reply;
  }

 private:
  std::string dir_;
  int port_ = 0;
  pid_t pid_ = -1;
};

TEST(ClusterBusInterop, RedisAnswersOurMeetWithAPong) {
  if (system("redis-server --version >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "redis-server not installed";
  }
  RedisNode redis;
  ASSERT_TRUE(redis.Start());
  int fd = ConnectWithin(redis.port() + 10000, 10);
  ASSERT_GE(fd, 0) << "redis-server's bus port never opened";
  SetReceiveTimeout(fd, 10);

  // Ports nobody listens on: Redis will try to handshake with us there and time out, harmlessly.
  BusMessage meet;
  meet.type = BusType::kMeet;
  meet.header.sender = "00000000000000000000000000000000000000aa";
  meet.header.port = 1;
  meet.header.cport = 2;
  meet.header.flags = kNodeMaster | kNodeMyself;
  meet.header.current_epoch = 1;
  meet.extensions = {PingExt::Hostname("vireo.test"),
                     PingExt::ShardId("00000000000000000000000000000000000000bb")};
  ASSERT_TRUE(SendAll(fd, Encode(meet)));

  ClusterBusLink link;
  BusMessage reply;
  std::string error;
  bool got = false;
  char buf[1024];  // small reads: the PONG arrives in several pieces
  while (!got) {
    ssize_t n = recv(fd, buf, std::min(sizeof(buf), std::max<size_t>(1, link.Wanted())), 0);
    ASSERT_GT(n, 0) << "no PONG from redis-server";
    link.Feed(std::string_view(buf, size_t(n)));
    ClusterBusLink::Result r = link.Next(&reply, &error);
    ASSERT_NE(r, ClusterBusLink::Result::kBroken) << error;
    ASSERT_NE(r, ClusterBusLink::Result::kInvalid) << error;
    got = r == ClusterBusLink::Result::kMessage;
  }
  close(fd);
  EXPECT_EQ(reply.type, BusType::kPong);
  EXPECT_EQ(reply.header.sender.size(), kNodeNameLen);
  EXPECT_EQ(reply.header.port, redis.port());
  EXPECT_EQ(reply.header.cport, redis.port() + 10000);
  EXPECT_EQ(reply.header.flags, kNodeMaster | kNodeMyself);
  EXPECT_EQ(reply.header.master, "");
  EXPECT_EQ(reply.header.slots, SlotBitmap{});
  // Redis took our MEET: the new node is in handshake at our announced ports (and our address).
  std::string nodes = redis.Command("CLUSTER NODES");
  EXPECT_NE(nodes.find("127.0.0.1:1@2"), std::string::npos) << nodes;
  EXPECT_NE(nodes.find("handshake"), std::string::npos) << nodes;
}

}  // namespace
}  // namespace vireo::cluster
