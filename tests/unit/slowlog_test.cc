// Slowlog without a server: the threshold (negative logs nothing), newest first, max-len
// trimming, ids that keep counting across RESET, Redis's argument shortening, and redaction.
#include "server/slowlog.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "server/client.h"
#include "server/redaction.h"

namespace vireo {
namespace {

class SlowlogTest : public ::testing::Test {
 protected:
  SlowlogTest() {
    client_.addr = "127.0.0.1:5000";
    client_.name = "worker";
  }
  void Add(std::vector<std::string_view> argv, int64_t duration_us, int64_t slower_than = 10,
           int64_t max_len = 128) {
    log_.Add(client_, argv, duration_us, slower_than, max_len);
  }

  Slowlog log_;
  Client client_{nullptr, 1, -1};
};

TEST_F(SlowlogTest, LogsOnlyCallsAtOrOverTheThreshold) {
  Add({"GET", "a"}, 9);
  EXPECT_EQ(log_.size(), 0u);
  Add({"GET", "b"}, 10);
  ASSERT_EQ(log_.size(), 1u);
  const SlowlogEntry& e = log_.entries().front();
  EXPECT_EQ(e.id, 0u);
  EXPECT_EQ(e.duration_us, 10);
  EXPECT_EQ(e.argv, (std::vector<std::string>{"GET", "b"}));
  EXPECT_EQ(e.peer, "127.0.0.1:5000");
  EXPECT_EQ(e.client_name, "worker");
  EXPECT_GT(e.timestamp, 0);
}

TEST_F(SlowlogTest, NegativeThresholdLogsNothingAndZeroLogsEverything) {
  Add({"PING"}, 1'000'000, -1);
  EXPECT_EQ(log_.size(), 0u);
  Add({"PING"}, 0, 0);
  EXPECT_EQ(log_.size(), 1u);
}

TEST_F(SlowlogTest, NewestFirstTrimmedToMaxLen) {
  for (int i = 0; i < 5; ++i) Add({"SET", std::to_string(i)}, 100, 0, 3);
  ASSERT_EQ(log_.size(), 3u);
  EXPECT_EQ(log_.entries()[0].argv[1], "4");
  EXPECT_EQ(log_.entries()[2].argv[1], "2");
  EXPECT_EQ(log_.entries()[0].id, 4u);
  Add({"PING"}, 100, 0, 0);  // max-len 0 keeps nothing
  EXPECT_EQ(log_.size(), 0u);
}

TEST_F(SlowlogTest, ResetKeepsCountingIds) {
  Add({"A"}, 100);
  Add({"B"}, 100);
  log_.Reset();
  EXPECT_EQ(log_.size(), 0u);
  EXPECT_EQ(log_.next_id(), 2u);
  Add({"C"}, 100);
  EXPECT_EQ(log_.entries().front().id, 2u);
}

TEST_F(SlowlogTest, ShortensLongArgumentsAndLongCommands) {
  std::string big(200, 'x');
  std::vector<std::string> args(40, "a");
  std::vector<std::string_view> argv{"CMD", big};
  for (const std::string& a : args) argv.push_back(a);
  Add(argv, 100);
  const SlowlogEntry& e = log_.entries().front();
  ASSERT_EQ(e.argv.size(), 32u);
  EXPECT_EQ(e.argv[1], std::string(128, 'x') + "... (72 more bytes)");
  EXPECT_EQ(e.argv[31], "... (11 more arguments)");
}

TEST_F(SlowlogTest, RedactsSecrets) {
  Add({"AUTH", "user", "secret"}, 100);
  const SlowlogEntry& e = log_.entries().front();
  ASSERT_EQ(e.argv.size(), 3u);
  EXPECT_EQ(e.argv[0], "AUTH");
  EXPECT_EQ(e.argv[2], kRedactedArg);
}

}  // namespace
}  // namespace vireo
