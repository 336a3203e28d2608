// CommandSpec::GetKeys, the key extraction ACL and cluster routing use, and the legacy key range
// and implicit ACL categories the table derives from each declaration.
#include <gtest/gtest.h>

#include <string_view>
#include <utility>
#include <vector>

#include "core/command_table.h"
#include "test_commands.h"

namespace vireo {
namespace {

using Keys = std::vector<std::pair<size_t, uint32_t>>;

Keys KeysOf(std::vector<std::string_view> argv, bool* ok = nullptr) {
  const CommandSpec* spec = TestCommands().Find(argv[0]);
  EXPECT_NE(spec, nullptr) << argv[0];
  std::vector<KeyRef> refs;
  bool found = spec->GetKeys(argv, &refs);
  if (ok != nullptr) *ok = found;
  Keys out;
  for (const KeyRef& ref : refs) out.emplace_back(ref.pos, ref.flags);
  return out;
}

constexpr uint32_t kRead = kKeyRO | kKeyAccess;

TEST(CommandKeys, FixedPositions) {
  EXPECT_EQ(KeysOf({"get", "k"}), (Keys{{1, kRead}}));
  EXPECT_EQ(KeysOf({"mset", "a", "1", "b", "2"}),
            (Keys{{1, kKeyOW | kKeyUpdate}, {3, kKeyOW | kKeyUpdate}}));
  EXPECT_EQ(KeysOf({"lmove", "s", "d", "left", "right"}),
            (Keys{{1, kKeyRW | kKeyAccess | kKeyDelete}, {2, kKeyRW | kKeyInsert}}));
}

TEST(CommandKeys, VariableFlags) {
  EXPECT_EQ(KeysOf({"set", "k", "v"}), (Keys{{1, kKeyOW | kKeyUpdate}}));
  EXPECT_EQ(KeysOf({"set", "k", "v", "get"}), (Keys{{1, kKeyRW | kKeyAccess | kKeyUpdate}}));
}

TEST(CommandKeys, KeyNumAndKeyword) {
  EXPECT_EQ(KeysOf({"zunionstore", "d", "2", "a", "b"}),
            (Keys{{1, kKeyOW | kKeyUpdate}, {3, kRead}, {4, kRead}}));
  // Redis 8.10 marks XREAD's key spec incomplete (MAXCOUNT / MAXSIZE may precede STREAMS).
  EXPECT_EQ(KeysOf({"xread", "count", "1", "streams", "s1", "s2", "0", "0"}),
            (Keys{{4, kRead | kKeyIncomplete}, {5, kRead | kKeyIncomplete}}));
  bool ok = true;
  EXPECT_TRUE(KeysOf({"zunionstore", "d", "x", "a"}, &ok).empty());
  EXPECT_FALSE(ok);
  EXPECT_TRUE(KeysOf({"eval", "s", "0"}, &ok).empty());
  EXPECT_TRUE(ok);
}

// numkeys keys a step apart: MSETEX's key value pairs (Redis 8.4; redis/redis#14657 was this).
TEST(CommandKeys, KeyNumWithAStep) {
  constexpr uint32_t kWrite = kKeyOW | kKeyUpdate;
  EXPECT_EQ(KeysOf({"msetex", "3", "a", "1", "b", "2", "c", "3", "nx"}),
            (Keys{{2, kWrite}, {4, kWrite}, {6, kWrite}}));
  EXPECT_EQ(KeysOf({"msetex", "1", "a", "1", "keepttl"}), (Keys{{2, kWrite}}));
  bool ok = true;
  EXPECT_TRUE(KeysOf({"msetex", "3", "a", "1", "b"}, &ok).empty());
  EXPECT_FALSE(ok);
}

TEST(CommandKeys, ShardChannelsOnlyWhenAsked) {
  const CommandSpec* spec = TestCommands().Find("spublish");
  std::vector<std::string_view> argv = {"spublish", "ch", "m"};
  std::vector<KeyRef> refs;
  ASSERT_TRUE(spec->GetKeys(argv, &refs));
  EXPECT_TRUE(refs.empty());
  ASSERT_TRUE(spec->GetKeys(argv, &refs, /*include_not_keys=*/true));
  ASSERT_EQ(refs.size(), 1u);
  EXPECT_EQ(refs[0].pos, 1u);
  EXPECT_NE(refs[0].flags & kKeyNotKey, 0u);
}

TEST(CommandKeys, LegacyRangeAndMovableKeys) {
  const CommandTable& table = TestCommands();
  const CommandSpec* mset = table.Find("mset");
  EXPECT_EQ(std::make_tuple(mset->first_key, mset->last_key, mset->key_step),
            std::make_tuple(1, -1, 2));
  EXPECT_FALSE(mset->has(kCmdMovableKeys));
  const CommandSpec* zunionstore = table.Find("zunionstore");
  EXPECT_EQ(std::make_tuple(zunionstore->first_key, zunionstore->last_key, zunionstore->key_step),
            std::make_tuple(1, 1, 1));
  EXPECT_TRUE(zunionstore->has(kCmdMovableKeys));
  const CommandSpec* xread = table.Find("xread");
  EXPECT_EQ(xread->first_key, 0);
  EXPECT_TRUE(xread->has(kCmdMovableKeys));
}

TEST(CommandKeys, ImplicitAclCategories) {
  const CommandTable& table = TestCommands();
  EXPECT_EQ(table.Find("get")->acl_categories, kAclRead | kAclString | kAclFast);
  EXPECT_EQ(table.Find("blpop")->acl_categories, kAclWrite | kAclList | kAclSlow | kAclBlocking);
  // Read-only scripts are not @read.
  EXPECT_EQ(table.Find("eval_ro")->acl_categories & kAclRead, 0u);
  EXPECT_EQ(AclCategoryByName("SortedSet"), kAclSortedSet);
  EXPECT_EQ(AclCategoryByName("nope"), 0u);
}

}  // namespace
}  // namespace vireo
