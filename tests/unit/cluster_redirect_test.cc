// The cluster redirection decision (Redis 7.2's getNodeByQuery rules) against a fake routing
// table: MOVED, ASK, ASKING, TRYAGAIN, CROSSSLOT, CLUSTERDOWN, READONLY on replicas, EXEC
// queues, shard channels, MIGRATE, and the error texts clients parse.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "cluster/redirect.h"
#include "core/command_table.h"
#include "core/key_slot.h"
#include "fake_slot_routing.h"
#include "test_commands.h"

namespace vireo::cluster {
namespace {

class RedirectTest : public ::testing::Test {
 protected:
  // Decides for one command (argv as text).
  RedirectDecision Decide(std::vector<std::string_view> argv, RedirectRequest base = {}) {
    const CommandSpec* spec = TestCommands().Find(argv[0]);
    EXPECT_NE(spec, nullptr) << argv[0];
    RoutedCommand cmd{spec, argv};
    base.commands = {&cmd, 1};
    if (spec->has(kCmdWrite)) base.command_is_write = base.any_write = true;
    if (spec->has(kCmdAsking)) base.asking = true;
    const std::string_view name = argv[0];
    base.pubsub_shard = name == "spublish" || name == "ssubscribe" || name == "sunsubscribe";
    base.migrate = name == "migrate";
    return DecideRedirect(base, routing, options, exists);
  }
  void Own(std::string_view key, SlotOwner owner) { routing.owners[KeySlot(key)] = owner; }

  FakeSlotRouting routing = [] {
    FakeSlotRouting r;
    r.default_owner = SlotOwner::kOther;
    return r;
  }();
  RedirectOptions options;
  std::set<std::string, std::less<>> present;
  KeyExistsFn exists = [this](std::string_view k) { return present.count(k) != 0; };
};

// The fast path's key scan must find exactly GetKeys's keys whenever it answers: for every
// command and subcommand, argument counts up to 9, each argument in turn moved to another slot.
TEST(FixedKeysSlotTest, AgreesWithGetKeys) {
  std::vector<const CommandSpec*> specs;
  for (const auto& [name, spec] : TestCommands().all()) {
    specs.push_back(spec.get());
    for (const auto& [sub_name, sub] : spec->subcommands) specs.push_back(sub.get());
  }
  const int t_slot = KeySlot("{t}");
  int fast_answers = 0;
  for (const CommandSpec* spec : specs) {
    const size_t bar = spec->name.find('|');
    const bool is_sub = bar != std::string::npos;
    for (size_t argc = is_sub ? 2 : 1; argc <= 9; ++argc) {
      for (size_t odd = 0; odd <= argc; ++odd) {  // odd == argc: every argument in {t}
        std::vector<std::string> args;
        if (is_sub) {
          args = {spec->name.substr(0, bar), spec->name.substr(bar + 1)};
        } else {
          args = {spec->name};
        }
        while (args.size() < argc) {
          const size_t i = args.size();
          args.push_back((i == odd ? "{u}" : "{t}") + std::to_string(i));
        }
        const std::vector<std::string_view> argv(args.begin(), args.end());
        const int slot = FixedKeysSlot(*spec, argv);
        EXPECT_EQ(FixedKeysSlot(*spec, std::span<const std::string>(args)), slot);
        std::vector<KeyRef> keys;
        const bool ok = spec->GetKeys(argv, &keys, /*include_not_keys=*/true);
        std::set<int> slots;
        for (const KeyRef& k : keys) slots.insert(KeySlot(argv[k.pos]));
        if (slot == kNoKeys) {
          EXPECT_TRUE(spec->key_specs.empty()) << spec->name;
        } else if (slot >= 0) {
          ++fast_answers;
          ASSERT_TRUE(ok) << spec->name << " argc " << argc;
          EXPECT_EQ(slots, std::set<int>{slot}) << spec->name << " argc " << argc;
        } else if (ok && odd == argc && !keys.empty()) {
          // All keys in {t}: the scan may only give up on specs it doesn't follow.
          bool fixed = true;
          for (const KeySpec& ks : spec->key_specs) {
            fixed &= ks.begin == KeySpec::Begin::kIndex && ks.find == KeySpec::Find::kRange &&
                     !(ks.flags & kKeyIncomplete) && !(ks.a < 0 && ks.c != 0);
          }
          EXPECT_FALSE(fixed) << spec->name << " argc " << argc;
        }
        if (slot >= 0 && odd == argc) {
          EXPECT_EQ(slot, t_slot) << spec->name;
        }
      }
    }
  }
  EXPECT_GT(fast_answers, 1000);
}

TEST(FixedKeysSlotTest, CommonCommands) {
  auto slot_of = [](std::vector<std::string_view> argv) {
    return FixedKeysSlot(*TestCommands().Find(argv[0]), argv);
  };
  EXPECT_EQ(slot_of({"get", "foo"}), KeySlot("foo"));
  EXPECT_EQ(slot_of({"set", "foo", "v", "EX", "10"}), KeySlot("foo"));
  EXPECT_EQ(slot_of({"mset", "{u}a", "1", "{u}b", "2"}), KeySlot("{u}"));
  EXPECT_EQ(slot_of({"mset", "a", "1", "b", "2"}), kSlowPath);  // CROSSSLOT is for the rules
  EXPECT_EQ(slot_of({"lmove", "{u}a", "{u}b", "left", "right"}), KeySlot("{u}"));
  EXPECT_EQ(slot_of({"ping"}), kNoKeys);
  EXPECT_EQ(slot_of({"spublish", "ch", "m"}), KeySlot("ch"));     // shard channels route
  EXPECT_EQ(slot_of({"eval", "return 1", "1", "k"}), kSlowPath);  // numkeys
  EXPECT_EQ(slot_of({"xread", "streams", "s", "0"}), kSlowPath);  // keyword
}

TEST(StableSlotTest, DefaultAsksOwnerMigrationAndState) {
  FakeSlotRouting r;
  r.owners[1] = SlotOwner::kOther;
  r.owners[2] = SlotOwner::kMyMaster;
  r.owners[3] = SlotOwner::kUnassigned;
  r.migrating.insert(4);
  r.importing.insert(5);
  const SlotRouting& base = r;
  EXPECT_TRUE(base.ServesStableSlot(0));
  for (int slot = 1; slot <= 5; ++slot) EXPECT_FALSE(base.ServesStableSlot(slot)) << slot;
  r.up = false;
  EXPECT_FALSE(base.ServesStableSlot(0));
}

TEST_F(RedirectTest, CommandsWithoutKeysAreServedAnywhere) {
  routing.up = false;
  EXPECT_EQ(Decide({"ping"}).kind, Redirect::kNone);
  EXPECT_EQ(Decide({"ping"}).slot, -1);
  // A script that declares no keys.
  EXPECT_EQ(Decide({"eval", "return 1", "0"}).kind, Redirect::kNone);
}

TEST_F(RedirectTest, OwnSlotServedOtherSlotMoved) {
  Own("mine", SlotOwner::kMyself);
  EXPECT_EQ(Decide({"get", "mine"}).kind, Redirect::kNone);
  EXPECT_EQ(Decide({"get", "mine"}).slot, KeySlot("mine"));
  RedirectDecision d = Decide({"get", "theirs"});
  EXPECT_EQ(d.kind, Redirect::kMoved);
  EXPECT_EQ(d.slot, KeySlot("theirs"));
  EXPECT_EQ(RedirectError(d), "MOVED " + std::to_string(KeySlot("theirs")) + " 127.0.0.1:7001");
}

TEST_F(RedirectTest, UnassignedSlotIsClusterDownBeforeAnythingElse) {
  Own("nobody", SlotOwner::kUnassigned);
  RedirectDecision d = Decide({"mget", "nobody", "other"});
  EXPECT_EQ(d.kind, Redirect::kDownUnbound);
  EXPECT_EQ(RedirectError(d), "CLUSTERDOWN Hash slot not served");
}

TEST_F(RedirectTest, CrossSlotAndHashTags) {
  Own("{u}a", SlotOwner::kMyself);
  EXPECT_EQ(Decide({"mget", "{u}a", "{u}b", "{u}c"}).kind, Redirect::kNone);
  EXPECT_EQ(Decide({"rpoplpush", "{u}a", "{u}a"}).kind, Redirect::kNone);
  ASSERT_NE(KeySlot("a"), KeySlot("b"));
  Own("a", SlotOwner::kMyself);
  Own("b", SlotOwner::kMyself);
  RedirectDecision d = Decide({"mget", "a", "b"});
  EXPECT_EQ(d.kind, Redirect::kCrossSlot);
  EXPECT_EQ(RedirectError(d), "CROSSSLOT Keys in request don't hash to the same slot");
  // Cross slot wins over MOVED when the keys are elsewhere too.
  EXPECT_EQ(Decide({"mset", "x", "1", "y", "2"}).kind, Redirect::kCrossSlot);
  // Keys after a keyword and numkeys keys count too.
  EXPECT_EQ(Decide({"eval", "return 1", "2", "a", "b"}).kind, Redirect::kCrossSlot);
  EXPECT_EQ(Decide({"zunionstore", "{u}d", "2", "{u}a", "b"}).kind, Redirect::kCrossSlot);
}

TEST_F(RedirectTest, MigratingSlotAsksForMissingKeys) {
  Own("{m}a", SlotOwner::kMyself);
  routing.migrating.insert(KeySlot("{m}"));
  present = {"{m}a"};
  EXPECT_EQ(Decide({"get", "{m}a"}).kind, Redirect::kNone);
  RedirectDecision d = Decide({"get", "{m}gone"});
  EXPECT_EQ(d.kind, Redirect::kAsk);
  EXPECT_EQ(RedirectError(d), "ASK " + std::to_string(KeySlot("{m}")) + " 127.0.0.1:7002");
  // A write to a key that is gone goes to the target too.
  EXPECT_EQ(Decide({"set", "{m}gone", "v"}).kind, Redirect::kAsk);
  // Some here, some gone: the client must retry later.
  d = Decide({"mget", "{m}a", "{m}gone"});
  EXPECT_EQ(d.kind, Redirect::kTryAgain);
  EXPECT_EQ(RedirectError(d), "TRYAGAIN Multiple keys request during rehashing of slot");
  EXPECT_EQ(Decide({"mget", "{m}gone", "{m}gone2"}).kind, Redirect::kAsk);
  EXPECT_EQ(Decide({"mget", "{m}a", "{m}a"}).kind, Redirect::kNone);
}

TEST_F(RedirectTest, MigratingToMyselfServesWhatWouldBeAskedHere) {
  // CLUSTER SETSLOT s MIGRATING <own id>: the -ASK would name this node, so Redis serves the
  // request; a partial multi-key request still gets -TRYAGAIN.
  Own("{m}a", SlotOwner::kMyself);
  routing.migrating.insert(KeySlot("{m}"));
  routing.migrating_to_myself.insert(KeySlot("{m}"));
  present = {"{m}a"};
  EXPECT_EQ(Decide({"get", "{m}gone"}).kind, Redirect::kNone);
  EXPECT_EQ(Decide({"set", "{m}gone", "v"}).kind, Redirect::kNone);
  EXPECT_EQ(Decide({"mget", "{m}gone", "{m}gone2"}).kind, Redirect::kNone);
  EXPECT_EQ(Decide({"mget", "{m}a", "{m}gone"}).kind, Redirect::kTryAgain);
}

TEST_F(RedirectTest, ImportingSlotServesOnlyAskingClients) {
  routing.importing.insert(KeySlot("{i}"));  // owned by another node until SETSLOT NODE
  present = {"{i}here"};
  EXPECT_EQ(Decide({"get", "{i}here"}).kind, Redirect::kMoved);
  RedirectRequest asking;
  asking.asking = true;
  EXPECT_EQ(Decide({"get", "{i}here"}, asking).kind, Redirect::kNone);
  EXPECT_EQ(Decide({"set", "{i}new", "v"}, asking).kind, Redirect::kNone);
  // One key named twice, missing: fine (RPOPLPUSH l l).
  EXPECT_EQ(Decide({"rpoplpush", "{i}new", "{i}new"}, asking).kind, Redirect::kNone);
  // Several different keys, one not imported yet: TRYAGAIN.
  EXPECT_EQ(Decide({"mget", "{i}here", "{i}new"}, asking).kind, Redirect::kTryAgain);
  present.insert("{i}new");
  EXPECT_EQ(Decide({"mget", "{i}here", "{i}new"}, asking).kind, Redirect::kNone);
  // RESTORE-ASKING carries the asking flag itself.
  EXPECT_EQ(Decide({"restore-asking", "{i}x", "0", "payload"}).kind, Redirect::kNone);
  EXPECT_EQ(Decide({"restore", "{i}x", "0", "payload"}).kind, Redirect::kMoved);
}

TEST_F(RedirectTest, MigrateRunsOnOpenSlots) {
  Own("{m}a", SlotOwner::kMyself);
  routing.migrating.insert(KeySlot("{m}"));
  EXPECT_EQ(Decide({"migrate", "h", "1", "{m}gone", "0", "10"}).kind, Redirect::kNone);
  EXPECT_EQ(Decide({"migrate", "h", "1", "", "0", "10", "KEYS", "{m}a", "{m}b"}).kind,
            Redirect::kNone);
  // On a stable slot of another node it is redirected like anything else.
  EXPECT_EQ(Decide({"migrate", "h", "1", "elsewhere", "0", "10"}).kind, Redirect::kMoved);
}

TEST_F(RedirectTest, ReadonlyClientsReadFromReplicas) {
  Own("{r}", SlotOwner::kMyMaster);
  EXPECT_EQ(Decide({"get", "{r}a"}).kind, Redirect::kMoved);
  RedirectRequest readonly;
  readonly.readonly = true;
  EXPECT_EQ(Decide({"get", "{r}a"}, readonly).kind, Redirect::kNone);
  EXPECT_EQ(Decide({"set", "{r}a", "v"}, readonly).kind, Redirect::kMoved);
  // Only the slots of our own master.
  EXPECT_EQ(Decide({"get", "other"}, readonly).kind, Redirect::kMoved);
}

TEST_F(RedirectTest, ExecChecksEveryQueuedCommand) {
  Own("{t}", SlotOwner::kMyself);
  std::vector<std::string_view> a{"set", "{t}a", "1"}, b{"get", "{t}b"}, c{"get", "x"};
  const CommandTable& table = TestCommands();
  std::vector<RoutedCommand> queue{{table.Find("set"), a}, {table.Find("get"), b}};
  RedirectRequest exec;
  exec.commands = queue;
  exec.any_write = true;
  EXPECT_EQ(DecideRedirect(exec, routing, options, exists).kind, Redirect::kNone);
  queue.push_back({table.Find("get"), c});
  exec.commands = queue;
  EXPECT_EQ(DecideRedirect(exec, routing, options, exists).kind, Redirect::kCrossSlot);
  // A READONLY client's EXEC with a write in it isn't a read.
  routing.owners[KeySlot("{t}")] = SlotOwner::kMyMaster;
  queue.pop_back();
  exec.commands = queue;
  exec.readonly = true;
  EXPECT_EQ(DecideRedirect(exec, routing, options, exists).kind, Redirect::kMoved);
  exec.any_write = false;
  EXPECT_EQ(DecideRedirect(exec, routing, options, exists).kind, Redirect::kNone);
  // An empty queue names no key.
  exec.commands = {};
  EXPECT_EQ(DecideRedirect(exec, routing, options, exists).kind, Redirect::kNone);
}

TEST_F(RedirectTest, ClusterDown) {
  Own("k", SlotOwner::kMyself);
  routing.up = false;
  RedirectDecision d = Decide({"get", "k"});
  EXPECT_EQ(d.kind, Redirect::kDownState);
  EXPECT_EQ(RedirectError(d), "CLUSTERDOWN The cluster is down");
  options.allow_reads_when_down = true;
  EXPECT_EQ(Decide({"get", "k"}).kind, Redirect::kNone);
  d = Decide({"set", "k", "v"});
  EXPECT_EQ(d.kind, Redirect::kDownReadOnly);
  EXPECT_EQ(RedirectError(d), "CLUSTERDOWN The cluster is down and only accepts read commands");
  // Reads of other nodes' slots are still redirected.
  EXPECT_EQ(Decide({"get", "elsewhere"}).kind, Redirect::kMoved);
  EXPECT_EQ(Decide({"ping"}).kind, Redirect::kNone);
}

TEST_F(RedirectTest, ShardChannels) {
  Own("{c}", SlotOwner::kMyMaster);
  // A replica serves its master's shard channels without READONLY.
  EXPECT_EQ(Decide({"ssubscribe", "{c}1", "{c}2"}).kind, Redirect::kNone);
  EXPECT_EQ(Decide({"spublish", "{c}1", "msg"}).kind, Redirect::kNone);
  EXPECT_EQ(Decide({"ssubscribe", "a", "b"}).kind, Redirect::kCrossSlot);
  EXPECT_EQ(Decide({"ssubscribe", "elsewhere"}).kind, Redirect::kMoved);
  // Channels aren't keys: a migrating slot keeps serving them here.
  Own("{s}", SlotOwner::kMyself);
  routing.migrating.insert(KeySlot("{s}"));
  EXPECT_EQ(Decide({"spublish", "{s}ch", "msg"}).kind, Redirect::kNone);
  routing.up = false;
  EXPECT_EQ(Decide({"spublish", "{s}ch", "msg"}).kind, Redirect::kNone);
  options.allow_pubsubshard_when_down = false;
  EXPECT_EQ(Decide({"spublish", "{s}ch", "msg"}).kind, Redirect::kDownState);
}

TEST_F(RedirectTest, ScriptErrorTexts) {
  EXPECT_EQ(ScriptRedirectError(Redirect::kMoved),
            "Script attempted to access a non local key in a cluster node");
  EXPECT_EQ(ScriptRedirectError(Redirect::kCrossSlot),
            "Script attempted to access a non local key in a cluster node");
  EXPECT_EQ(ScriptRedirectError(Redirect::kDownState),
            "Script attempted to execute a command while the cluster is down");
  EXPECT_EQ(ScriptRedirectError(Redirect::kDownReadOnly),
            "Script attempted to execute a write command while the cluster is down and "
            "readonly");
}

}  // namespace
}  // namespace vireo::cluster
