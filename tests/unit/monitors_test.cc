// Monitors without a server: MONITOR flags and registers a client once, every other monitor
// gets one quoted, escaped, redacted line per command, and the feed skips the client that ran
// the command, closed monitors and removed ones.
#include "server/monitors.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "server/client.h"

namespace vireo {
namespace {

class MonitorsTest : public ::testing::Test {
 protected:
  MonitorsTest() {
    caller_.addr = "127.0.0.1:6000";
    caller_.set_db_index(3);
  }
  void Feed(std::vector<std::string_view> argv) { monitors_.Feed(caller_, argv); }
  // The line after the "+<seconds>.<microseconds> " timestamp.
  static std::string WithoutTime(const std::string& line) {
    size_t space = line.find(' ');
    return space == std::string::npos ? line : line.substr(space + 1);
  }

  std::vector<Client*> scheduled_;
  Monitors monitors_{[this](Client& c) { scheduled_.push_back(&c); }};
  Client caller_{nullptr, 1, -1};
  Client watcher_{nullptr, 2, -1};
  Client other_{nullptr, 3, -1};
};

TEST_F(MonitorsTest, AddFlagsOnce) {
  EXPECT_TRUE(monitors_.empty());
  monitors_.Add(watcher_);
  monitors_.Add(watcher_);
  EXPECT_TRUE(watcher_.has(kClientMonitor));
  EXPECT_FALSE(monitors_.empty());
  Feed({"PING"});
  EXPECT_EQ(scheduled_.size(), 1u);  // registered once, fed once
}

TEST_F(MonitorsTest, LineFormatAndEscapes) {
  monitors_.Add(watcher_);
  Feed({"SET", "k", std::string_view("a\"b\\c\n\x01", 7)});
  const std::string& out = watcher_.output();
  ASSERT_FALSE(out.empty());
  EXPECT_EQ(out[0], '+');
  EXPECT_EQ(WithoutTime(out), "[3 127.0.0.1:6000] \"SET\" \"k\" \"a\\\"b\\\\c\\n\\x01\"\r\n");
}

TEST_F(MonitorsTest, UnixSocketClientsShowTheirPath) {
  caller_.addr = "/tmp/vireo.sock:0";
  caller_.set(kClientUnixSocket);
  monitors_.Add(watcher_);
  Feed({"PING"});
  EXPECT_EQ(WithoutTime(watcher_.output()), "[3 unix:/tmp/vireo.sock:0] \"PING\"\r\n");
}

TEST_F(MonitorsTest, SecretsAreRedacted) {
  monitors_.Add(watcher_);
  Feed({"AUTH", "hunter2"});
  EXPECT_EQ(watcher_.output().find("hunter2"), std::string::npos);
  EXPECT_NE(watcher_.output().find("(redacted)"), std::string::npos);
}

TEST_F(MonitorsTest, SkipsTheCallerClosedAndRemovedMonitors) {
  monitors_.Add(caller_);
  monitors_.Add(watcher_);
  monitors_.Add(other_);
  other_.closed = true;
  Feed({"GET", "k"});
  EXPECT_TRUE(caller_.output().empty());
  EXPECT_TRUE(other_.output().empty());
  EXPECT_FALSE(watcher_.output().empty());
  EXPECT_EQ(scheduled_, (std::vector<Client*>{&watcher_}));

  monitors_.Remove(watcher_);
  watcher_.output().clear();
  Feed({"GET", "k"});
  EXPECT_TRUE(watcher_.output().empty());
  EXPECT_TRUE(watcher_.has(kClientMonitor));  // the flag is the caller's to clear
}

TEST_F(MonitorsTest, FeedWithNoMonitorsDoesNothing) {
  Feed({"PING"});
  EXPECT_TRUE(scheduled_.empty());
}

}  // namespace
}  // namespace vireo
