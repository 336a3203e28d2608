// Tracking tests: the key table, BCAST batching, OPTIN/OPTOUT, NOLOOP, the pending
// invalidations that follow a client's own reply and the tracking-table-max-keys limit, run
// through a Server with socketpair clients (their output stays in the buffer until the loop
// flushes it, which these tests never run).
#include "server/tracking.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "protocol/resp_command.h"
#include "server/client.h"
#include "server/server.h"
#include "test_commands.h"

namespace vireo {
namespace {

class TrackingTest : public ::testing::Test {
 protected:
  TrackingTest() : server_(Config(), TestCommands()) {}
  ~TrackingTest() override {
    for (int fd : peers_) close(fd);
  }

  Client& NewClient(int resp = 3) {
    int fds[2];
    EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
    peers_.push_back(fds[1]);
    Client& c = server_.clients().AdoptConnection(fds[0], 0, nullptr);
    c.set_resp(resp);
    return c;
  }
  void Run(Client& c, std::initializer_list<std::string_view> args) {
    server_.clients().InjectInput(c, RespCommand(args));
  }
  static std::string Take(Client& c) {
    std::string out = c.output().substr(c.output_written);
    c.output_written = c.output().size();
    return out;
  }
  Tracking& tracking() { return server_.tracking(); }

  Server server_;
  std::vector<int> peers_;
};

constexpr std::string_view kPushK = ">2\r\n$10\r\ninvalidate\r\n*1\r\n$1\r\nk\r\n";

TEST_F(TrackingTest, ReadKeyIsInvalidatedOnceAndForgotten) {
  Client& reader = NewClient();
  Client& writer = NewClient();
  Run(reader, {"CLIENT", "TRACKING", "ON"});
  Run(reader, {"GET", "k"});
  Take(reader);
  EXPECT_EQ(tracking().total_keys(), 1u);
  EXPECT_EQ(tracking().total_items(), 1u);
  Run(writer, {"SET", "k", "1"});
  EXPECT_EQ(Take(reader), kPushK);
  EXPECT_EQ(tracking().total_keys(), 0u);
  Run(writer, {"SET", "k", "2"});
  EXPECT_EQ(Take(reader), "");
}

TEST_F(TrackingTest, OwnWriteFollowsTheReply) {
  Client& c = NewClient();
  Run(c, {"CLIENT", "TRACKING", "ON"});
  Run(c, {"GET", "k"});
  Take(c);
  Run(c, {"SET", "k", "1"});
  EXPECT_EQ(Take(c), std::string("+OK\r\n") + std::string(kPushK));
}

TEST_F(TrackingTest, NoloopSkipsOwnWrites) {
  Client& c = NewClient();
  Run(c, {"CLIENT", "TRACKING", "ON", "NOLOOP"});
  Run(c, {"GET", "k"});
  Take(c);
  Run(c, {"SET", "k", "1"});
  EXPECT_EQ(Take(c), "+OK\r\n");
}

TEST_F(TrackingTest, OptinNeedsCachingYesForOneCommand) {
  Client& c = NewClient();
  Run(c, {"CLIENT", "TRACKING", "ON", "OPTIN"});
  Run(c, {"GET", "a"});
  EXPECT_EQ(tracking().total_keys(), 0u);
  Run(c, {"CLIENT", "CACHING", "YES"});
  Run(c, {"GET", "b"});
  Run(c, {"GET", "c"});
  EXPECT_EQ(tracking().total_keys(), 1u);
}

TEST_F(TrackingTest, BcastBatchesPerPrefixUntilBeforeSleep) {
  Client& c = NewClient();
  Client& w = NewClient();
  Run(c, {"CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "a:", "PREFIX", "b:"});
  Take(c);
  EXPECT_EQ(tracking().total_prefixes(), 2u);
  Run(w, {"SET", "a:1", "x"});
  Run(w, {"SET", "a:2", "x"});
  Run(w, {"SET", "c:1", "x"});
  EXPECT_EQ(Take(c), "");
  tracking().BeforeSleep();
  EXPECT_EQ(Take(c), ">2\r\n$10\r\ninvalidate\r\n*2\r\n$3\r\na:1\r\n$3\r\na:2\r\n");
  Run(c, {"CLIENT", "TRACKING", "OFF"});
  EXPECT_EQ(tracking().total_prefixes(), 0u);
  EXPECT_EQ(tracking().tracking_clients(), 0u);
}

TEST_F(TrackingTest, FlushSendsOneNull) {
  Client& c = NewClient();
  Client& w = NewClient();
  Run(c, {"CLIENT", "TRACKING", "ON"});
  Run(c, {"GET", "k"});
  Take(c);
  Run(w, {"FLUSHALL"});
  EXPECT_EQ(Take(c), ">2\r\n$10\r\ninvalidate\r\n_\r\n");
  EXPECT_EQ(tracking().total_keys(), 0u);
}

TEST_F(TrackingTest, TableLimitEvictsWithGrowingEffort) {
  Client& c = NewClient();
  Run(c, {"CLIENT", "TRACKING", "ON"});
  for (int i = 0; i < 250; ++i) Run(c, {"GET", "key" + std::to_string(i)});
  Take(c);
  Run(c, {"CONFIG", "SET", "tracking-table-max-keys", "1"});
  Take(c);
  tracking().EvictOverLimit();  // effort 100
  EXPECT_EQ(tracking().total_keys(), 150u);
  tracking().EvictOverLimit();  // effort 200
  EXPECT_EQ(tracking().total_keys(), 1u);
  EXPECT_EQ(tracking().total_items(), 1u);
}

TEST_F(TrackingTest, RedirectToClosedClientIsBroken) {
  Client& target = NewClient(2);
  Client& c = NewClient();
  Run(c, {"CLIENT", "TRACKING", "ON", "REDIRECT", std::to_string(target.id())});
  Run(c, {"GET", "k"});
  Take(c);
  server_.clients().CloseClient(target);
  Client& w = NewClient();
  Run(w, {"SET", "k", "1"});
  EXPECT_EQ(Take(c),
            ">2\r\n$21\r\ntracking-redir-broken\r\n:" + std::to_string(target.id()) + "\r\n");
  ASSERT_NE(tracking().StateOf(c), nullptr);
  EXPECT_TRUE(tracking().StateOf(c)->broken_redirect);
}

}  // namespace
}  // namespace vireo
