// ClientEviction tests: what a client is measured at, the limit maxmemory-clients gives, and
// eviction going biggest first and stopping once under the limit. Clients here own a
// descriptor on /dev/null (an evictable client has a connection) and are not in the server's
// client table, so they are filed by hand.
#include "server/client_eviction.h"

#include <fcntl.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "server/client.h"
#include "server/server.h"
#include "test_commands.h"

namespace vireo {
namespace {

constexpr size_t kKb = 1024;

class ClientEvictionTest : public ::testing::Test {
 protected:
  ClientEvictionTest() : server_(Config(), TestCommands()) {}

  Client& NewClient(size_t query_bytes) {
    int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    clients_.push_back(std::make_unique<Client>(&server_, clients_.size() + 1, fd));
    Client& c = *clients_.back();
    if (query_bytes > 0) c.read_buffer.EnsureWritable(query_bytes, query_bytes);
    return c;
  }
  void SetConfig(const std::string& name, const std::string& value) {
    ASSERT_EQ(server_.config().Set({{name, value}}), "");
  }
  size_t Measure(const Client& c) {
    return MeasureClient(server_.pubsub(), server_.tracking(), c).total();
  }
  ClientEviction& eviction() { return server_.client_eviction(); }

  Server server_;
  std::vector<std::unique_ptr<Client>> clients_;
};

TEST_F(ClientEvictionTest, MeasureCountsEachPart) {
  Client& c = NewClient(0);
  size_t base = Measure(c);
  EXPECT_GE(base, sizeof(Client));

  c.read_buffer.EnsureWritable(100 * kKb, 100 * kKb);
  EXPECT_EQ(MeasureClient(server_.pubsub(), server_.tracking(), c).query_buffer,
            100 * kKb);  // exactly, not 128 KB
  c.output().append(50 * kKb, 'x');
  EXPECT_GE(MeasureClient(server_.pubsub(), server_.tracking(), c).output_buffer, 50 * kKb);

  c.QueueForExec({{"set", "k", std::string(10 * kKb, 'v')}, nullptr});
  EXPECT_GE(MeasureClient(server_.pubsub(), server_.tracking(), c).multi, 10 * kKb + 4);

  server_.pubsub().Subscribe(c, PubsubKind::kChannel, std::string(1000, 'c'));
  server_.pubsub().Subscribe(c, PubsubKind::kPattern, "p*");
  size_t pubsub = MeasureClient(server_.pubsub(), server_.tracking(), c).pubsub;
  EXPECT_GT(pubsub, 1002u);
  server_.pubsub().Unsubscribe(c, PubsubKind::kChannel, std::string(1000, 'c'));
  EXPECT_LT(MeasureClient(server_.pubsub(), server_.tracking(), c).pubsub, pubsub - 1000);

  server_.watched_keys().Watch(c, 0, std::string(2000, 'w'));
  EXPECT_GT(MeasureClient(server_.pubsub(), server_.tracking(), c).watched, 2000u);
  server_.watched_keys().UnwatchAll(c);
  EXPECT_LT(MeasureClient(server_.pubsub(), server_.tracking(), c).watched, 2000u);
  server_.pubsub().RemoveClient(c);
}

TEST_F(ClientEvictionTest, LimitFromBytesOrPercentage) {
  EXPECT_FALSE(eviction().enabled());
  EXPECT_EQ(eviction().Limit(), 0u);
  SetConfig("maxmemory-clients", "1mb");
  EXPECT_EQ(eviction().Limit(), 1024 * kKb);
  SetConfig("maxmemory-clients", "1");  // never below 128 KB
  EXPECT_EQ(eviction().Limit(), 128 * kKb);
  SetConfig("maxmemory-clients", "10%");
  EXPECT_TRUE(eviction().enabled());
  EXPECT_EQ(eviction().Limit(), 0u);  // a share of no maxmemory
  SetConfig("maxmemory", "100mb");
  EXPECT_EQ(eviction().Limit(), 10 * 1024 * kKb);
  SetConfig("maxmemory-clients", "0");
  EXPECT_FALSE(eviction().enabled());
}

TEST_F(ClientEvictionTest, BiggestFirstUntilUnderTheLimit) {
  SetConfig("maxmemory-clients", "100mb");
  Client& small = NewClient(200 * kKb);
  Client& medium = NewClient(400 * kKb);
  Client& near = NewClient(450 * kKb);  // the same power-of-two bucket as `medium`
  Client& big = NewClient(800 * kKb);
  Client& protected_client = NewClient(4000 * kKb);
  protected_client.set(kClientNoEvict);
  for (Client* c : {&small, &medium, &near, &big, &protected_client}) eviction().Update(*c);
  size_t total = Measure(small) + Measure(medium) + Measure(near) + Measure(big);
  EXPECT_EQ(eviction().tracked_total(), total);  // the NO-EVICT client doesn't count

  eviction().EvictIfOver();
  EXPECT_EQ(server_.stats().evicted_clients, 0u);

  // Room for all but the biggest.
  SetConfig("maxmemory-clients", std::to_string(total - Measure(big) + 1));
  eviction().EvictIfOver();
  EXPECT_TRUE(big.closed);
  EXPECT_FALSE(near.closed || medium.closed || small.closed || protected_client.closed);
  // Within a bucket too, the bigger goes first.
  total -= Measure(big);
  SetConfig("maxmemory-clients", std::to_string(total - Measure(near) + 1));
  eviction().EvictIfOver();
  EXPECT_TRUE(near.closed);
  EXPECT_FALSE(medium.closed || small.closed);
  EXPECT_EQ(server_.stats().evicted_clients, 2u);
  EXPECT_EQ(eviction().tracked_total(), Measure(medium) + Measure(small));

  // At the floor everyone evictable goes; the NO-EVICT client is never a candidate.
  SetConfig("maxmemory-clients", "128kb");
  eviction().EvictIfOver();
  EXPECT_TRUE(medium.closed && small.closed);
  EXPECT_FALSE(protected_client.closed);
  EXPECT_EQ(eviction().tracked_total(), 0u);
}

}  // namespace
}  // namespace vireo
