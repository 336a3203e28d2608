// Cluster redirections through a real Server with a fake routing table (what the cluster state
// will provide): the dispatcher's check on commands and EXEC, ASKING lasting one command,
// READONLY / READWRITE, scripts reaching keys of other slots, clients blocked on a slot that
// moves away, and db 0's slot index in cluster mode. Clients are socketpairs whose output stays
// in their buffers (the loop never runs here).
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "cluster/routing.h"
#include "core/key_slot.h"
#include "fake_slot_routing.h"
#include "protocol/resp_command.h"
#include "server/client.h"
#include "server/server.h"
#include "test_commands.h"

namespace vireo {
namespace {

using cluster::KeySlot;
using cluster::SlotOwner;

Config ClusterConfig() {
  Config config;
  config.values().cluster_enabled = true;
  return config;
}

class ClusterDispatchTest : public ::testing::Test {
 protected:
  ClusterDispatchTest() : server_(ClusterConfig(), TestCommands()) {
    server_.cluster_services().set_slot_routing(&routing_);
  }
  ~ClusterDispatchTest() override {
    for (int fd : peers_) close(fd);
  }

  Client& NewClient() {
    int fds[2];
    EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
    peers_.push_back(fds[1]);
    return server_.clients().AdoptConnection(fds[0], 0, nullptr);
  }
  // Runs one command and returns what it replied.
  std::string Run(Client& c, std::initializer_list<std::string_view> args) {
    server_.clients().InjectInput(c, RespCommand(args));
    std::string out = c.output().substr(c.output_written);
    c.output_written = c.output().size();
    return out;
  }
  void Elsewhere(std::string_view key) { routing_.owners[KeySlot(key)] = SlotOwner::kOther; }
  static std::string Moved(std::string_view key) {
    return "-MOVED " + std::to_string(KeySlot(key)) + " 127.0.0.1:7001\r\n";
  }

  cluster::FakeSlotRouting routing_;
  Server server_;
  std::vector<int> peers_;
};

TEST_F(ClusterDispatchTest, KeysOfOtherNodesAreRedirected) {
  Client& c = NewClient();
  Elsewhere("far");
  EXPECT_EQ(Run(c, {"SET", "near", "1"}), "+OK\r\n");
  EXPECT_EQ(Run(c, {"GET", "far"}), Moved("far"));
  EXPECT_EQ(Run(c, {"SET", "far", "1"}), Moved("far"));
  EXPECT_EQ(Run(c, {"MGET", "a", "b"}),
            "-CROSSSLOT Keys in request don't hash to the same slot\r\n");
  EXPECT_EQ(Run(c, {"PING"}), "+PONG\r\n");
  EXPECT_EQ(server_.db(0).Peek("far"), nullptr);
  routing_.up = false;
  EXPECT_EQ(Run(c, {"GET", "near"}), "-CLUSTERDOWN The cluster is down\r\n");
  EXPECT_EQ(Run(c, {"PING"}), "+PONG\r\n");
}

TEST_F(ClusterDispatchTest, TransactionsRedirectedWhole) {
  Client& c = NewClient();
  Elsewhere("far");
  // A queued command for another node flags the transaction; EXEC then aborts.
  EXPECT_EQ(Run(c, {"MULTI"}), "+OK\r\n");
  EXPECT_EQ(Run(c, {"SET", "far", "1"}), Moved("far"));
  EXPECT_EQ(Run(c, {"EXEC"}), "-EXECABORT Transaction discarded because of previous errors.\r\n");
  // Queued commands in different slots: EXEC replies CROSSSLOT itself and discards.
  EXPECT_EQ(Run(c, {"MULTI"}), "+OK\r\n");
  EXPECT_EQ(Run(c, {"SET", "a", "1"}), "+QUEUED\r\n");
  EXPECT_EQ(Run(c, {"SET", "b", "1"}), "+QUEUED\r\n");
  EXPECT_EQ(Run(c, {"EXEC"}), "-CROSSSLOT Keys in request don't hash to the same slot\r\n");
  EXPECT_FALSE(c.has(kClientMulti));
  EXPECT_EQ(server_.db(0).Peek("a"), nullptr);
  EXPECT_EQ(Run(c, {"MULTI"}), "+OK\r\n");
  EXPECT_EQ(Run(c, {"SET", "{t}a", "1"}), "+QUEUED\r\n");
  EXPECT_EQ(Run(c, {"GET", "{t}a"}), "+QUEUED\r\n");
  EXPECT_EQ(Run(c, {"EXEC"}), "*2\r\n+OK\r\n$1\r\n1\r\n");
}

TEST_F(ClusterDispatchTest, AskingCoversOneCommand) {
  Client& c = NewClient();
  const int slot = KeySlot("{imp}");
  routing_.owners[slot] = SlotOwner::kOther;
  routing_.importing.insert(slot);
  EXPECT_EQ(Run(c, {"SET", "{imp}k", "v"}), Moved("{imp}"));
  EXPECT_EQ(Run(c, {"ASKING"}), "+OK\r\n");
  EXPECT_EQ(Run(c, {"SET", "{imp}k", "v"}), "+OK\r\n");
  EXPECT_EQ(Run(c, {"GET", "{imp}k"}), Moved("{imp}"));
  // An error in between still uses it up.
  EXPECT_EQ(Run(c, {"ASKING"}), "+OK\r\n");
  Run(c, {"NOSUCHCOMMAND"});
  EXPECT_EQ(Run(c, {"GET", "{imp}k"}), Moved("{imp}"));
  // In MULTI it lasts until EXEC.
  EXPECT_EQ(Run(c, {"ASKING"}), "+OK\r\n");
  EXPECT_EQ(Run(c, {"MULTI"}), "+OK\r\n");
  EXPECT_EQ(Run(c, {"GET", "{imp}k"}), "+QUEUED\r\n");
  EXPECT_EQ(Run(c, {"EXEC"}), "*1\r\n$1\r\nv\r\n");
  EXPECT_FALSE(c.has(kClientAsking));
  // RESET clears it.
  EXPECT_EQ(Run(c, {"ASKING"}), "+OK\r\n");
  EXPECT_EQ(Run(c, {"RESET"}), "+RESET\r\n");
  EXPECT_FALSE(c.has(kClientAsking));
}

TEST_F(ClusterDispatchTest, MigratingSlotAsksForMissingKeys) {
  Client& c = NewClient();
  const int slot = KeySlot("{mig}");
  EXPECT_EQ(Run(c, {"SET", "{mig}here", "v"}), "+OK\r\n");
  routing_.migrating.insert(slot);
  // A new key of a migrating slot is created on the target.
  EXPECT_EQ(Run(c, {"SET", "{mig}new", "v"}),
            "-ASK " + std::to_string(slot) + " 127.0.0.1:7002\r\n");
  EXPECT_EQ(Run(c, {"GET", "{mig}here"}), "$1\r\nv\r\n");
  EXPECT_EQ(Run(c, {"GET", "{mig}gone"}), "-ASK " + std::to_string(slot) + " 127.0.0.1:7002\r\n");
  EXPECT_EQ(Run(c, {"MGET", "{mig}here", "{mig}gone"}),
            "-TRYAGAIN Multiple keys request during rehashing of slot\r\n");
}

TEST_F(ClusterDispatchTest, ReadonlyClientsReadFromReplicas) {
  Client& c = NewClient();
  routing_.owners[KeySlot("r")] = SlotOwner::kMyMaster;
  EXPECT_EQ(Run(c, {"GET", "r"}), Moved("r"));
  EXPECT_EQ(Run(c, {"READONLY"}), "+OK\r\n");
  EXPECT_EQ(Run(c, {"GET", "r"}), "$-1\r\n");
  EXPECT_EQ(Run(c, {"SET", "r", "1"}), Moved("r"));
  EXPECT_EQ(Run(c, {"READWRITE"}), "+OK\r\n");
  EXPECT_EQ(Run(c, {"GET", "r"}), Moved("r"));
}

TEST_F(ClusterDispatchTest, ScriptsStayOnLocalKeysOfOneSlot) {
  Client& c = NewClient();
  Elsewhere("far");
  EXPECT_EQ(Run(c, {"EVAL", "return redis.call('get', KEYS[1])", "1", "far"}), Moved("far"));
  std::string out = Run(c, {"EVAL", "return redis.call('get', 'far')", "0"});
  EXPECT_NE(out.find("-ERR Script attempted to access a non local key in a cluster node"),
            std::string::npos)
      << out;
  // A script with a shebang stays in one slot; one without keeps the pre-7.0 freedom to reach
  // keys of any local slot (Redis 7.0 and 7.2 alike).
  out = Run(c, {"EVAL", "#!lua\nredis.call('set', KEYS[1], 1) return redis.call('get', 'b')", "1",
                "a"});
  EXPECT_NE(out.find("-ERR Script attempted to access keys that do not hash to the same slot"),
            std::string::npos)
      << out;
  EXPECT_EQ(Run(c, {"EVAL", "redis.call('set', KEYS[1], 1) return redis.call('get', 'b')", "1",
                    "a"}),
            "$-1\r\n");
  EXPECT_EQ(Run(c, {"EVAL", "return redis.call('incr', '{x}2') + redis.call('incr', '{x}3')", "0"}),
            ":2\r\n");
  // allow-cross-slot-keys lets a script use keys of several local slots.
  EXPECT_EQ(Run(c, {"EVAL",
                    "#!lua flags=allow-cross-slot-keys\n"
                    "return redis.call('incr', 'a') + redis.call('incr', 'b')",
                    "0"}),
            ":3\r\n");
  out = Run(c, {"EVAL", "#!lua flags=no-cluster\nreturn 1", "0"});
  EXPECT_EQ(out, "-ERR Can not run script on cluster, 'no-cluster' flag is set.\r\n");
}

TEST_F(ClusterDispatchTest, BlockedClientsOfAMovedSlotAreRedirected) {
  Client& blocked = NewClient();
  Client& other = NewClient();
  Client& wait_elsewhere = NewClient();
  EXPECT_EQ(Run(blocked, {"BLPOP", "{q}list", "0"}), "");
  EXPECT_EQ(Run(other, {"BLPOP", "{stay}list", "0"}), "");
  EXPECT_EQ(Run(wait_elsewhere, {"BLPOP", "{imp}list", "0"}), "");
  ASSERT_TRUE(blocked.has(kClientBlocked));
  server_.cluster_services().RedirectBlockedClientsOfSlots();  // nothing moved yet
  EXPECT_TRUE(blocked.has(kClientBlocked));
  Elsewhere("{q}");
  // A slot moved away but being imported back keeps its waiters.
  Elsewhere("{imp}");
  routing_.importing.insert(KeySlot("{imp}"));
  server_.cluster_services().RedirectBlockedClientsOfSlots();
  EXPECT_FALSE(blocked.has(kClientBlocked));
  EXPECT_EQ(blocked.output().substr(blocked.output_written), Moved("{q}"));
  EXPECT_TRUE(other.has(kClientBlocked));
  EXPECT_TRUE(wait_elsewhere.has(kClientBlocked));
  // Cluster down: everyone blocked on keys hears it.
  routing_.up = false;
  server_.cluster_services().RedirectBlockedClientsOfSlots();
  EXPECT_FALSE(other.has(kClientBlocked));
  EXPECT_EQ(other.output().substr(other.output_written), "-CLUSTERDOWN The cluster is down\r\n");
  EXPECT_FALSE(wait_elsewhere.has(kClientBlocked));
}

TEST_F(ClusterDispatchTest, FastPathAgreesWithTheFullRules) {
  // Slots in every state the rules know, keys present and absent.
  const int mig = KeySlot("{m}"), imp = KeySlot("{i}");
  Client& setup = NewClient();
  for (std::string_view key : {"{a}k", "{m}here", "{i}here"}) {
    ASSERT_EQ(Run(setup, {"SET", key, "1"}), "+OK\r\n");
  }
  Elsewhere("{o}");
  routing_.owners[KeySlot("{r}")] = SlotOwner::kMyMaster;
  routing_.migrating.insert(mig);
  routing_.owners[imp] = SlotOwner::kOther;
  routing_.importing.insert(imp);
  // Idempotent commands, so running each twice leaves the same state for the second run.
  const std::vector<std::vector<std::string_view>> commands = {
      {"GET", "{a}k"},
      {"GET", "{o}k"},
      {"SET", "{a}k", "1"},
      {"SET", "{o}k", "1"},
      {"GET", "{r}k"},
      {"SET", "{r}k", "1"},
      {"GET", "{m}here"},
      {"GET", "{m}gone"},
      {"SET", "{m}here", "2"},
      {"MGET", "{m}here", "{m}gone"},
      {"GET", "{i}here"},
      {"MGET", "{i}here", "{i}gone"},
      {"MGET", "{a}k", "{a}j"},
      {"MGET", "{a}k", "{o}k"},
      {"MSET", "{a}k", "1", "{a}j", "1"},
      {"EXISTS", "{a}k", "{a}k"},
      {"LMOVE", "{a}x", "{a}y", "LEFT", "RIGHT"},
      {"PING"},
      {"SPUBLISH", "{o}ch", "m"},
  };
  Client& plain = NewClient();
  Client& asking = NewClient();
  Client& readonly = NewClient();
  ASSERT_EQ(Run(readonly, {"READONLY"}), "+OK\r\n");
  auto run = [&](Client& c, const std::vector<std::string_view>& argv, bool fast) {
    routing_.fast_path = fast;
    if (&c == &asking) Run(c, {"ASKING"});
    server_.clients().InjectInput(c, RespCommand(argv));
    std::string out = c.output().substr(c.output_written);
    c.output_written = c.output().size();
    return out;
  };
  for (bool up : {true, false}) {
    routing_.up = up;
    for (Client* c : {&plain, &asking, &readonly}) {
      for (const auto& argv : commands) {
        const std::string full = run(*c, argv, false);
        routing_.stable_slot_calls = 0;
        EXPECT_EQ(run(*c, argv, true), full) << argv[0] << " " << argv.size() << " up " << up;
      }
    }
  }
  // A transaction on one stable slot is decided by the fast path alone.
  routing_.up = true;
  EXPECT_EQ(Run(plain, {"MULTI"}), "+OK\r\n");
  EXPECT_EQ(Run(plain, {"SET", "{a}k", "5"}), "+QUEUED\r\n");
  EXPECT_EQ(Run(plain, {"PING"}), "+QUEUED\r\n");
  EXPECT_EQ(Run(plain, {"GET", "{a}k"}), "+QUEUED\r\n");
  routing_.stable_slot_calls = 0;
  EXPECT_EQ(Run(plain, {"EXEC"}), "*3\r\n+OK\r\n+PONG\r\n$1\r\n5\r\n");
  EXPECT_EQ(routing_.stable_slot_calls, 1);
}

TEST_F(ClusterDispatchTest, Db0KeepsTheSlotIndex) {
  Client& c = NewClient();
  EXPECT_TRUE(server_.db(0).slot_indexed());
  Run(c, {"MSET", "{s}a", "1", "{s}b", "2"});
  EXPECT_EQ(server_.db(0).CountKeysInSlot(KeySlot("{s}")), 2u);
  Run(c, {"DEL", "{s}a"});
  EXPECT_EQ(server_.db(0).CountKeysInSlot(KeySlot("{s}")), 1u);
  Run(c, {"FLUSHALL", "ASYNC"});
  EXPECT_EQ(server_.db(0).CountKeysInSlot(KeySlot("{s}")), 0u);
  Run(c, {"SET", "{s}c", "1"});
  EXPECT_EQ(server_.db(0).KeysInSlot(KeySlot("{s}"), 10), std::vector<std::string>{"{s}c"});
}

}  // namespace
}  // namespace vireo
