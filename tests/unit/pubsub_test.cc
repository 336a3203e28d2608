// PubsubEngine tests: subscription bookkeeping on both sides, message framing per protocol,
// pattern and shard delivery, and the O(1) swap-removal staying consistent under churn.
// Clients here have no socket: delivered bytes stay in their output buffers.
#include "server/pubsub.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "server/client.h"
#include "server/server.h"
#include "test_commands.h"

namespace vireo {
namespace {

class PubsubTest : public ::testing::Test {
 protected:
  PubsubTest() : server_(Config(), TestCommands()) {}

  Client& NewClient(int resp = 2) {
    clients_.push_back(std::make_unique<Client>(&server_, clients_.size() + 1, -1));
    clients_.back()->set_resp(resp);
    return *clients_.back();
  }
  // The bytes delivered to `c` since the last call.
  static std::string Take(Client& c) {
    std::string out = c.output();
    c.output().clear();
    c.output_written = 0;
    return out;
  }
  PubsubEngine& ps() { return server_.pubsub(); }

  Server server_;
  std::vector<std::unique_ptr<Client>> clients_;
};

TEST(PubsubFrame, Resp2AndResp3) {
  std::string out;
  AppendPubsubFrame(&out, false, {"message", "ch", "hi"});
  EXPECT_EQ(out, "*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$2\r\nhi\r\n");
  out.clear();
  AppendPubsubFrame(&out, true, {"pmessage", "c*", "ch", ""});
  EXPECT_EQ(out, ">4\r\n$8\r\npmessage\r\n$2\r\nc*\r\n$2\r\nch\r\n$0\r\n\r\n");
}

TEST_F(PubsubTest, SubscribeBookkeepingAndFlag) {
  Client& c = NewClient();
  EXPECT_TRUE(ps().Subscribe(c, PubsubKind::kChannel, "a"));
  EXPECT_FALSE(ps().Subscribe(c, PubsubKind::kChannel, "a"));
  EXPECT_TRUE(c.has(kClientPubsub));
  EXPECT_TRUE(ps().Subscribe(c, PubsubKind::kPattern, "a*"));
  EXPECT_TRUE(ps().Subscribe(c, PubsubKind::kShard, "a"));
  EXPECT_EQ(ps().ChannelAndPatternCount(c), 2u);
  EXPECT_EQ(ps().CountOf(c, PubsubKind::kShard), 1u);
  EXPECT_EQ(ps().channel_count(), 1u);
  EXPECT_EQ(ps().pattern_count(), 1u);
  EXPECT_EQ(ps().shard_channel_count(), 1u);
  EXPECT_TRUE(ps().Unsubscribe(c, PubsubKind::kChannel, "a"));
  EXPECT_FALSE(ps().Unsubscribe(c, PubsubKind::kChannel, "a"));
  EXPECT_TRUE(ps().Unsubscribe(c, PubsubKind::kPattern, "a*"));
  // Still on a shard channel: still in pub/sub mode.
  EXPECT_TRUE(c.has(kClientPubsub));
  EXPECT_TRUE(ps().Unsubscribe(c, PubsubKind::kShard, "a"));
  EXPECT_FALSE(c.has(kClientPubsub));
  EXPECT_EQ(ps().channel_count() + ps().pattern_count() + ps().shard_channel_count(), 0u);
}

TEST_F(PubsubTest, PublishFramesPerProtocolAndCountsPatternsToo) {
  Client& v2 = NewClient(2);
  Client& v3 = NewClient(3);
  ps().Subscribe(v2, PubsubKind::kChannel, "news");
  ps().Subscribe(v3, PubsubKind::kChannel, "news");
  ps().Subscribe(v3, PubsubKind::kPattern, "n*");
  EXPECT_EQ(ps().Publish("news", "x"), 3u);
  EXPECT_EQ(Take(v2), "*3\r\n$7\r\nmessage\r\n$4\r\nnews\r\n$1\r\nx\r\n");
  EXPECT_EQ(Take(v3),
            ">3\r\n$7\r\nmessage\r\n$4\r\nnews\r\n$1\r\nx\r\n"
            ">4\r\n$8\r\npmessage\r\n$2\r\nn*\r\n$4\r\nnews\r\n$1\r\nx\r\n");
  EXPECT_EQ(ps().Publish("nothing", "y"), 1u);  // the pattern only
  EXPECT_EQ(Take(v2), "");
  EXPECT_EQ(ps().Publish("other", "y"), 0u);
}

TEST_F(PubsubTest, ShardChannelsAreSeparateAndIgnorePatterns) {
  Client& s = NewClient();
  Client& p = NewClient();
  ps().Subscribe(s, PubsubKind::kShard, "ch");
  ps().Subscribe(p, PubsubKind::kPattern, "*");
  EXPECT_EQ(ps().PublishShard("ch", "m"), 1u);
  EXPECT_EQ(Take(s), "*3\r\n$8\r\nsmessage\r\n$2\r\nch\r\n$1\r\nm\r\n");
  EXPECT_EQ(Take(p), "");
  EXPECT_EQ(ps().Publish("ch", "m"), 1u);  // the pattern, not the shard subscriber
  EXPECT_EQ(Take(s), "");
  EXPECT_EQ(ps().SubscriberCount(PubsubKind::kShard, "ch"), 1u);
  EXPECT_EQ(ps().SubscriberCount(PubsubKind::kChannel, "ch"), 0u);
}

TEST_F(PubsubTest, RemoveClientDropsEverything) {
  Client& a = NewClient();
  Client& b = NewClient();
  for (Client* c : {&a, &b}) {
    ps().Subscribe(*c, PubsubKind::kChannel, "x");
    ps().Subscribe(*c, PubsubKind::kChannel, "y");
    ps().Subscribe(*c, PubsubKind::kPattern, "*");
    ps().Subscribe(*c, PubsubKind::kShard, "z");
  }
  ps().RemoveClient(a);
  EXPECT_FALSE(a.has(kClientPubsub));
  EXPECT_EQ(ps().CountOf(a, PubsubKind::kChannel), 0u);
  EXPECT_EQ(ps().SubscriberCount(PubsubKind::kChannel, "x"), 1u);
  EXPECT_EQ(ps().Publish("x", "m"), 2u);  // b on x and on *
  EXPECT_EQ(Take(a), "");
  ps().RemoveClient(b);
  EXPECT_EQ(ps().channel_count() + ps().pattern_count() + ps().shard_channel_count(), 0u);
}

TEST_F(PubsubTest, ActiveNamesFilterByPattern) {
  Client& c = NewClient();
  for (const char* name : {"news.a", "news.b", "sport"}) {
    ps().Subscribe(c, PubsubKind::kChannel, name);
  }
  auto all = ps().ActiveNames(PubsubKind::kChannel, "", true);
  EXPECT_EQ(all.size(), 3u);
  auto news = ps().ActiveNames(PubsubKind::kChannel, "news.*", false);
  std::sort(news.begin(), news.end());
  EXPECT_EQ(news, (std::vector<std::string>{"news.a", "news.b"}));
}

// Many clients on few channels, subscribing and unsubscribing at random: after every step
// each channel's subscriber count and the clients a publish reaches match a simple model.
TEST_F(PubsubTest, SwapRemovalStaysConsistentUnderChurn) {
  constexpr int kClients = 60;
  const std::vector<std::string> channels = {"c0", "c1", "c2", "c3"};
  for (int i = 0; i < kClients; ++i) NewClient();
  std::vector<std::vector<bool>> model(kClients, std::vector<bool>(channels.size(), false));
  std::mt19937 rng(7);
  for (int step = 0; step < 5000; ++step) {
    int c = static_cast<int>(rng() % kClients);
    size_t ch = rng() % channels.size();
    int action = static_cast<int>(rng() % 10);
    if (action == 0) {
      ps().RemoveClient(*clients_[c]);
      model[c].assign(channels.size(), false);
    } else if (action < 6) {
      EXPECT_EQ(ps().Subscribe(*clients_[c], PubsubKind::kChannel, channels[ch]), !model[c][ch]);
      model[c][ch] = true;
    } else {
      EXPECT_EQ(ps().Unsubscribe(*clients_[c], PubsubKind::kChannel, channels[ch]),
                static_cast<bool>(model[c][ch]));
      model[c][ch] = false;
    }
    if (step % 250 != 0) continue;
    for (size_t k = 0; k < channels.size(); ++k) {
      size_t expected = 0;
      for (int i = 0; i < kClients; ++i) expected += model[i][k] ? 1 : 0;
      ASSERT_EQ(ps().SubscriberCount(PubsubKind::kChannel, channels[k]), expected);
      ASSERT_EQ(ps().Publish(channels[k], "m"), expected);
      for (int i = 0; i < kClients; ++i) {
        std::string got = Take(*clients_[i]);
        ASSERT_EQ(!got.empty(), static_cast<bool>(model[i][k])) << "client " << i;
      }
    }
  }
  for (auto& c : clients_) ps().RemoveClient(*c);
  EXPECT_EQ(ps().channel_count(), 0u);
}

}  // namespace
}  // namespace vireo
