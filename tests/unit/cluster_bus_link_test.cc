#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "cluster/bus_link.h"

namespace vireo::cluster {
namespace {

using Result = ClusterBusLink::Result;

BusMessage Publish(const std::string& channel, size_t size) {
  BusMessage m;
  m.type = BusType::kPublish;
  m.header.sender = std::string(40, 'a');
  m.header.port = 7000;
  m.publish = {channel, std::string(size, 'p')};
  return m;
}

BusMessage Ping(int gossip) {
  BusMessage m;
  m.type = BusType::kPing;
  m.header.sender = std::string(40, 'b');
  m.gossip.resize(gossip);
  for (int i = 0; i < gossip; ++i) m.gossip[i].name = std::string(40, char('0' + i));
  m.extensions = {PingExt::Hostname("node.example"), PingExt::ShardId(std::string(40, 'c'))};
  return m;
}

// Drains every message Next can give now.
std::vector<BusMessage> Drain(ClusterBusLink& link) {
  std::vector<BusMessage> out;
  BusMessage m;
  std::string error;
  while (true) {
    Result r = link.Next(&m, &error);
    if (r == Result::kNeedMore) return out;
    EXPECT_EQ(r, Result::kMessage) << error;
    if (r != Result::kMessage) return out;
    out.push_back(m);
  }
}

TEST(ClusterBusLink, ReassemblesMessagesFromAnyChunking) {
  const std::vector<BusMessage> sent = {Ping(3), Publish("ch", 100000), Ping(0), Publish("x", 0)};
  std::string stream;
  for (const BusMessage& m : sent) stream += Encode(m);

  std::mt19937 rng(5);
  for (int round = 0; round < 20; ++round) {
    ClusterBusLink link;
    std::vector<BusMessage> got;
    size_t at = 0;
    while (at < stream.size()) {
      // Byte at a time in round 0, then random chunks up to 20000 bytes.
      size_t n = round == 0 ? 1 : 1 + rng() % 20000;
      n = std::min(n, stream.size() - at);
      link.Feed(std::string_view(stream).substr(at, n));
      at += n;
      for (BusMessage& m : Drain(link)) got.push_back(std::move(m));
    }
    ASSERT_EQ(got, sent) << "round " << round;
    EXPECT_EQ(link.buffered(), 0u);
    EXPECT_EQ(link.Wanted(), 8u);  // back to waiting for a prefix
  }
}

TEST(ClusterBusLink, WantedFollowsTheFraming) {
  std::string bytes = Encode(Publish("ch", 10));
  ClusterBusLink link;
  EXPECT_EQ(link.Wanted(), 8u);
  link.Feed(bytes.substr(0, 5));
  EXPECT_EQ(link.Wanted(), 3u);
  link.Feed(bytes.substr(5, 3));
  EXPECT_EQ(link.Wanted(), bytes.size() - 8);
  link.Feed(bytes.substr(8, 100));
  EXPECT_EQ(link.Wanted(), bytes.size() - 108);
  BusMessage m;
  std::string error;
  EXPECT_EQ(link.Next(&m, &error), Result::kNeedMore);
  link.Feed(bytes.substr(108));
  EXPECT_EQ(link.Wanted(), 0u);
  EXPECT_EQ(link.Next(&m, &error), Result::kMessage);
  EXPECT_EQ(m.publish.channel, "ch");
}

TEST(ClusterBusLink, InvalidMessageIsSkippedAndTheLinkGoesOn) {
  std::string bad = Encode(Ping(1));
  bad[9] = 2;  // protocol version 2: Redis ignores the message, keeps the link
  ClusterBusLink link;
  link.Feed(bad + Encode(Publish("after", 3)));
  BusMessage m;
  std::string error;
  EXPECT_EQ(link.Next(&m, &error), Result::kInvalid);
  EXPECT_NE(error.find("version 2"), std::string::npos);
  EXPECT_EQ(link.Next(&m, &error), Result::kMessage);
  EXPECT_EQ(m.publish.channel, "after");
  EXPECT_FALSE(link.broken());
}

TEST(ClusterBusLink, BadPrefixBreaksTheLinkForGood) {
  for (std::string prefix : {std::string("RCmX\0\0\x08\xd0", 8), std::string("RCmb\0\0\x08\xcf", 8),
                             std::string("GET / HTTP/1.1\r\n")}) {
    ClusterBusLink link;
    link.Feed(Encode(Ping(0)));
    link.Feed(prefix);
    BusMessage m;
    std::string error;
    EXPECT_EQ(link.Next(&m, &error), Result::kMessage);
    EXPECT_EQ(link.Next(&m, &error), Result::kBroken);
    EXPECT_NE(error.find("Bad message length or signature"), std::string::npos);
    EXPECT_TRUE(link.broken());
    link.Feed(Encode(Ping(0)));  // nothing after a bad frame is trusted
    EXPECT_EQ(link.Next(&m, &error), Result::kBroken);
    EXPECT_EQ(link.buffered(), 0u);
    EXPECT_EQ(link.Wanted(), 0u);
  }
}

TEST(ClusterBusLink, OptionalSizeLimit) {
  ClusterBusLink link(4096);
  link.Feed(Encode(Ping(1)));
  link.Feed(Encode(Publish("big", 5000)).substr(0, 8));  // the prefix alone is enough to refuse
  BusMessage m;
  std::string error;
  EXPECT_EQ(link.Next(&m, &error), Result::kMessage);
  EXPECT_EQ(link.Next(&m, &error), Result::kBroken);
  EXPECT_NE(error.find("exceeds the limit of 4096"), std::string::npos);
}

}  // namespace
}  // namespace vireo::cluster
