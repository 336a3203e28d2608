// The internal flags the dispatcher decides by instead of command names: declared on exactly
// the commands Redis recognises by handler, and never shown by COMMAND INFO.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>

#include "core/command_table.h"
#include "test_commands.h"

namespace vireo {
namespace {

// Every command and subcommand of the table declaring `flag`, by full name.
std::set<std::string> CommandsWith(CommandFlag flag) {
  std::set<std::string> names;
  for (const auto& [name, spec] : TestCommands().all()) {
    if (spec->has(flag)) names.insert(spec->name);
    for (const auto& [sub_name, sub] : spec->subcommands) {
      if (sub->has(flag)) names.insert(sub->name);
    }
  }
  return names;
}

using Names = std::set<std::string>;

TEST(CommandFlags, DeclaredOnTheCommandsDispatchSinglesOut) {
  EXPECT_EQ(CommandsWith(kCmdTransactionControl),
            (Names{"discard", "exec", "multi", "quit", "reset", "watch"}));
  EXPECT_EQ(CommandsWith(kCmdRunsQueued), (Names{"exec"}));
  EXPECT_EQ(CommandsWith(kCmdSubscribedMode),
            (Names{"ping", "psubscribe", "punsubscribe", "quit", "reset", "ssubscribe", "subscribe",
                   "sunsubscribe", "unsubscribe"}));
  EXPECT_EQ(CommandsWith(kCmdDiskErrorCheck), (Names{"ping"}));
  EXPECT_EQ(CommandsWith(kCmdIgnoresNoTouch), (Names{"touch"}));
  EXPECT_EQ(CommandsWith(kCmdDebugProtected), (Names{"debug"}));
  EXPECT_EQ(CommandsWith(kCmdRunsScript),
            (Names{"eval", "eval_ro", "evalsha", "evalsha_ro", "fcall", "fcall_ro"}));
  EXPECT_EQ(CommandsWith(kCmdScriptBySha), (Names{"evalsha", "evalsha_ro"}));
  EXPECT_EQ(CommandsWith(kCmdRunsFunction), (Names{"fcall", "fcall_ro"}));
  EXPECT_EQ(CommandsWith(kCmdKeepsAsking), (Names{"asking"}));
  EXPECT_EQ(CommandsWith(kCmdKeepsCaching), (Names{"client"}));
  EXPECT_EQ(CommandsWith(kCmdMigratesKeys), (Names{"migrate"}));
}

// Cluster redirection tells the shard pub/sub commands by their flag and channel key specs.
TEST(CommandFlags, ShardPubsubAreThePubsubCommandsWithKeys) {
  Names shard;
  for (const std::string& name : CommandsWith(kCmdPubsub)) {
    if (TestCommands().FindByFullName(name)->HasKeys()) shard.insert(name);
  }
  EXPECT_EQ(shard, (Names{"spublish", "ssubscribe", "sunsubscribe"}));
}

TEST(CommandFlags, DebugProtectedOnlyWithProtected) {
  for (const std::string& name : CommandsWith(kCmdDebugProtected)) {
    EXPECT_TRUE(TestCommands().FindByFullName(name)->has(kCmdProtected)) << name;
  }
}

TEST(CommandFlags, InternalFlagsAreHiddenFromCommandInfo) {
  constexpr CommandFlag kInternal[] = {
      kCmdMayReplicate,   kCmdProtected,      kCmdTouchesArbitraryKeys, kCmdTransactionControl,
      kCmdRunsQueued,     kCmdSubscribedMode, kCmdDiskErrorCheck,       kCmdIgnoresNoTouch,
      kCmdDebugProtected, kCmdRunsScript,     kCmdKeepsAsking,          kCmdKeepsCaching,
      kCmdMigratesKeys,   kCmdScriptBySha,    kCmdRunsFunction};
  for (CommandFlag flag : kInternal) {
    const auto names = CommandFlagNames();
    EXPECT_TRUE(std::none_of(names.begin(), names.end(), [flag](const auto& named) {
      return named.first == flag;
    })) << flag;
  }
}

}  // namespace
}  // namespace vireo
