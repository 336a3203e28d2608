// The effect stream: units, MULTI/EXEC framing, fan-out to the sinks that accept.
#include "core/propagator.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace vireo {
namespace {

class RecordingSink : public EffectSink {
 public:
  bool Accepting() const override { return accepting; }
  uint8_t target() const override { return bit; }
  void AppendEffect(int db, std::string_view resp) override {
    log.push_back(std::to_string(db) + ":" + std::string(resp));
  }
  bool accepting = true;
  uint8_t bit = kEffectToAof;
  std::vector<std::string> log;
};

std::string Resp(std::initializer_list<std::string_view> argv) {
  std::string out = "*" + std::to_string(argv.size()) + "\r\n";
  for (std::string_view a : argv) {
    out += "$" + std::to_string(a.size()) + "\r\n" + std::string(a) + "\r\n";
  }
  return out;
}

constexpr std::string_view kMulti = "*1\r\n$5\r\nMULTI\r\n";
constexpr std::string_view kExec = "*1\r\n$4\r\nEXEC\r\n";

TEST(PropagatorTest, FeedOutsideACallIsItsOwnUnit) {
  Propagator p;
  RecordingSink sink;
  p.AddSink(&sink);
  std::string_view del[] = {"DEL", "k"};
  p.Feed(3, del);
  ASSERT_EQ(sink.log.size(), 1u);
  EXPECT_EQ(sink.log[0], "3:" + Resp({"DEL", "k"}));
}

TEST(PropagatorTest, SeveralEffectsOfOneCallAreWrappedOnce) {
  Propagator p;
  RecordingSink a, b;
  p.AddSink(&a);
  p.AddSink(&b);
  p.BeginCall();
  p.BeginCall();  // a nested command (EXEC, a script)
  std::string_view del[] = {"DEL", "x"};
  std::string_view set[] = {"SET", "y", "1"};
  p.Feed(0, del);
  p.Leave();
  EXPECT_TRUE(a.log.empty());  // nothing goes out before the top-level call ends
  p.Feed(1, set);
  p.Leave();
  // MULTI and EXEC carry no database (-1): a sink's SELECT goes inside the transaction.
  const std::vector<std::string> expected = {"-1:" + std::string(kMulti),
                                             "0:" + Resp({"DEL", "x"}),
                                             "1:" + Resp({"SET", "y", "1"}),
                                             "-1:" + std::string(kExec)};
  EXPECT_EQ(a.log, expected);
  EXPECT_EQ(b.log, expected);
}

TEST(PropagatorTest, NothingIsRecordedWithoutAnAcceptingSink) {
  Propagator p;
  RecordingSink sink;
  sink.accepting = false;
  p.AddSink(&sink);
  EXPECT_FALSE(p.Active());
  std::string_view del[] = {"DEL", "k"};
  p.Feed(0, del);
  EXPECT_TRUE(sink.log.empty());
  sink.accepting = true;
  EXPECT_TRUE(p.Active());
  p.BeginCall();
  EXPECT_EQ(p.depth(), 1);
  p.Leave();
  EXPECT_TRUE(sink.log.empty());  // a call that recorded nothing sends nothing
}

TEST(PropagatorTest, TargetsPickTheSinks) {
  // redis.set_repl: an effect meant for replicas only skips the AOF, and each sink's
  // transaction wraps only what it gets.
  Propagator p;
  RecordingSink aof, replicas;
  replicas.bit = kEffectToReplicas;
  p.AddSink(&aof);
  p.AddSink(&replicas);
  std::string_view a[] = {"SET", "a", "1"};
  std::string_view b[] = {"SET", "b", "2"};
  std::string_view c[] = {"SET", "c", "3"};
  p.BeginCall();
  p.Feed(0, a, kEffectToAll);
  p.Feed(0, b, kEffectToReplicas);
  p.Feed(0, c, kEffectToNone);
  p.Leave();
  EXPECT_EQ(aof.log, (std::vector<std::string>{"0:" + Resp({"SET", "a", "1"})}));
  EXPECT_EQ(replicas.log, (std::vector<std::string>{"-1:" + std::string(kMulti),
                                                    "0:" + Resp({"SET", "a", "1"}),
                                                    "0:" + Resp({"SET", "b", "2"}),
                                                    "-1:" + std::string(kExec)}));
}

}  // namespace
}  // namespace vireo
