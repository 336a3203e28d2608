// The ACL rule parser, descriptions and the permission check as pure functions.
#include "security/acl.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/command_table.h"
#include "test_commands.h"
#include "util/glob.h"

namespace vireo {
namespace {

const CommandSpec& Spec(std::string_view name) {
  const CommandSpec* spec = TestCommands().Find(name);
  EXPECT_NE(spec, nullptr) << name;
  return *spec;
}

const CommandSpec& Sub(std::string_view name, std::string_view sub) {
  const CommandSpec* spec = CommandTable::FindSubcommand(Spec(name), sub);
  EXPECT_NE(spec, nullptr) << name << "|" << sub;
  return *spec;
}

AclUser Make(std::vector<std::string> rules) {
  AclUser user(TestCommands(), "u", false);
  std::string error;
  EXPECT_TRUE(user.ApplyAll(rules, &error)) << error;
  return user;
}

AclResult Check(const AclUser& user, std::vector<std::string_view> argv, size_t* pos = nullptr) {
  size_t p = 0;
  const CommandSpec* spec = &Spec(argv[0]);
  if (!spec->subcommands.empty() && argv.size() >= 2) spec = &Sub(argv[0], argv[1]);
  AclResult r = user.Check(*spec, argv, &p);
  if (pos) *pos = p;
  return r;
}

TEST(AclTest, HashIsSha256Hex) {
  EXPECT_EQ(AclHashPassword("foo"),
            "2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae");
}

TEST(AclTest, NewUserDescription) {
  AclUser user(TestCommands(), "u", false);
  EXPECT_EQ(user.Describe(), "off sanitize-payload resetchannels -@all");
  EXPECT_FALSE(user.unrestricted());
}

TEST(AclTest, DescriptionKeepsRuleOrder) {
  AclUser user = Make({"on", "nopass", "~app:*", "%R~ro:*", "%W~wo:*", "&chan", "+@read", "-get",
                       "+config|get", "+select|0"});
  EXPECT_EQ(user.Describe(),
            "on nopass sanitize-payload ~app:* %R~ro:* %W~wo:* resetchannels &chan -@all +@read "
            "-get +config|get +select|0");
  // A later rule for the same command replaces the earlier one; a whole-command rule drops
  // its subcommand rules.
  AclUser again = Make({"+config|get", "+config|set", "-config", "+get", "-get"});
  EXPECT_EQ(again.selectors()[0].DescribeCommands(), "-@all -config -get");
}

TEST(AclTest, ErrorsLeaveUserUnchanged) {
  AclUser user = Make({"on", "+get", "~k"});
  std::string before = user.Describe();
  std::string error;
  std::vector<std::string> rules = {"+set", "+nosuchcommand"};
  EXPECT_FALSE(user.ApplyAll(rules, &error));
  EXPECT_EQ(error,
            "Error in ACL SETUSER modifier '+nosuchcommand': Unknown command or category name in "
            "ACL");
  EXPECT_EQ(user.Describe(), before);
  rules = {"allkeys", "~foo"};
  EXPECT_FALSE(user.ApplyAll(rules, &error));
  EXPECT_NE(error.find("Adding a pattern after the * pattern (or the 'allkeys' flag)"),
            std::string::npos);
  rules = {"#abc"};
  EXPECT_FALSE(user.ApplyAll(rules, &error));
  EXPECT_NE(error.find("exactly 64 characters"), std::string::npos);
  rules = {"<nope"};
  EXPECT_FALSE(user.ApplyAll(rules, &error));
  EXPECT_NE(error.find("does not exist"), std::string::npos);
  rules = {"+config|get|x"};
  EXPECT_FALSE(user.ApplyAll(rules, &error));
  EXPECT_NE(error.find("first-arg of a subcommand"), std::string::npos);
  rules = {"(+get", "~x"};
  EXPECT_FALSE(user.ApplyAll(rules, &error));
  EXPECT_EQ(error, "Unmatched parenthesis in acl selector starting at '(+get'.");
  rules = {"bogus"};
  EXPECT_FALSE(user.ApplyAll(rules, &error));
  EXPECT_EQ(error, "Error in ACL SETUSER modifier 'bogus': Syntax error");
  EXPECT_EQ(user.Describe(), before);
}

TEST(AclTest, Passwords) {
  AclUser user = Make({"on", ">secret", ">other"});
  EXPECT_TRUE(user.CheckPassword("secret"));
  EXPECT_TRUE(user.CheckPassword("other"));
  EXPECT_FALSE(user.CheckPassword("wrong"));
  std::string error;
  std::vector<std::string> rules = {"<secret"};
  ASSERT_TRUE(user.ApplyAll(rules, &error));
  EXPECT_FALSE(user.CheckPassword("secret"));
  rules = {"off"};
  ASSERT_TRUE(user.ApplyAll(rules, &error));
  EXPECT_FALSE(user.CheckPassword("other"));  // disabled
  rules = {"on", "nopass"};
  ASSERT_TRUE(user.ApplyAll(rules, &error));
  EXPECT_TRUE(user.CheckPassword("anything"));
  rules = {"resetpass"};
  ASSERT_TRUE(user.ApplyAll(rules, &error));
  EXPECT_FALSE(user.CheckPassword("anything"));
}

TEST(AclTest, CommandsAndCategories) {
  AclUser user = Make({"+@string", "-append", "+client|id", "+select|0"});
  EXPECT_EQ(Check(user, {"get", "k"}), AclResult::kDeniedKey);  // no keys yet
  AclUser keys = Make({"+@string", "-append", "+client|id", "+select|0", "allkeys"});
  EXPECT_EQ(Check(keys, {"get", "k"}), AclResult::kOk);
  EXPECT_EQ(Check(keys, {"append", "k", "v"}), AclResult::kDeniedCmd);
  EXPECT_EQ(Check(keys, {"lpush", "k", "v"}), AclResult::kDeniedCmd);
  EXPECT_EQ(Check(keys, {"client", "id"}), AclResult::kOk);
  EXPECT_EQ(Check(keys, {"client", "kill", "x"}), AclResult::kDeniedCmd);
  EXPECT_EQ(Check(keys, {"select", "0"}), AclResult::kOk);
  EXPECT_EQ(Check(keys, {"select", "1"}), AclResult::kDeniedCmd);
  // AUTH and HELLO are always allowed.
  EXPECT_EQ(Check(keys, {"auth", "a", "b"}), AclResult::kOk);
}

TEST(AclTest, KeyPermissionsFollowKeySpecs) {
  AclUser user = Make({"+@all", "%R~r:*", "%W~w:*", "~rw:*"});
  EXPECT_EQ(Check(user, {"get", "r:1"}), AclResult::kOk);
  EXPECT_EQ(Check(user, {"set", "r:1", "v"}), AclResult::kDeniedKey);
  EXPECT_EQ(Check(user, {"set", "w:1", "v"}), AclResult::kOk);
  EXPECT_EQ(Check(user, {"get", "w:1"}), AclResult::kDeniedKey);
  EXPECT_EQ(Check(user, {"incr", "w:1"}), AclResult::kDeniedKey);  // reads and writes
  EXPECT_EQ(Check(user, {"incr", "rw:1"}), AclResult::kOk);
  // Variable key flags on the single-key path: SET ... GET reads the old value too, and
  // BITFIELD with only GET reads.
  EXPECT_EQ(Check(user, {"set", "w:1", "v", "GET"}), AclResult::kDeniedKey);
  EXPECT_EQ(Check(user, {"set", "rw:1", "v", "GET"}), AclResult::kOk);
  EXPECT_EQ(Check(user, {"bitfield", "r:1", "GET", "u8", "0"}), AclResult::kOk);
  EXPECT_EQ(Check(user, {"bitfield", "r:1", "SET", "u8", "0", "1"}), AclResult::kDeniedKey);
  size_t pos = 0;
  EXPECT_EQ(Check(user, {"copy", "r:1", "r:2"}, &pos), AclResult::kDeniedKey);
  EXPECT_EQ(pos, 2u);
  EXPECT_EQ(Check(user, {"copy", "r:1", "w:2"}), AclResult::kOk);
  EXPECT_EQ(Check(user, {"mget", "r:1", "x"}, &pos), AclResult::kDeniedKey);
  EXPECT_EQ(pos, 2u);
}

TEST(AclTest, Channels) {
  AclUser user = Make({"+@all", "allkeys", "&news.*", "&exact"});
  EXPECT_EQ(Check(user, {"publish", "news.x", "m"}), AclResult::kOk);
  EXPECT_EQ(Check(user, {"publish", "other", "m"}), AclResult::kDeniedChannel);
  EXPECT_EQ(Check(user, {"subscribe", "exact", "news.1"}), AclResult::kOk);
  size_t pos = 0;
  EXPECT_EQ(Check(user, {"subscribe", "exact", "zzz"}, &pos), AclResult::kDeniedChannel);
  EXPECT_EQ(pos, 2u);
  // A pattern subscription needs the same pattern literally.
  EXPECT_EQ(Check(user, {"psubscribe", "news.*"}), AclResult::kOk);
  EXPECT_EQ(Check(user, {"psubscribe", "news.a*"}), AclResult::kDeniedChannel);
  EXPECT_EQ(Check(user, {"unsubscribe", "zzz"}), AclResult::kOk);
}

TEST(AclTest, SelectorsAnyMayAllow) {
  AclUser user = Make({"on", "+get", "~a:*", "(+set ~b:*)"});
  EXPECT_EQ(Check(user, {"get", "a:1"}), AclResult::kOk);
  EXPECT_EQ(Check(user, {"set", "b:1", "v"}), AclResult::kOk);
  EXPECT_EQ(Check(user, {"set", "a:1", "v"}), AclResult::kDeniedKey);
  EXPECT_EQ(Check(user, {"get", "b:1"}), AclResult::kDeniedKey);
  EXPECT_EQ(Check(user, {"del", "a:1"}), AclResult::kDeniedCmd);
  EXPECT_EQ(user.Describe(),
            "on sanitize-payload ~a:* resetchannels -@all +get (~b:* resetchannels -@all +set)");
  std::string error;
  std::vector<std::string> rules = {"clearselectors"};
  ASSERT_TRUE(user.ApplyAll(rules, &error));
  EXPECT_EQ(user.selectors().size(), 1u);
}

TEST(AclTest, UnrestrictedFastPath) {
  AclUser user = Make({"+@all", "~*", "&*"});
  EXPECT_TRUE(user.unrestricted());
  std::string error;
  std::vector<std::string> rules = {"-debug"};
  ASSERT_TRUE(user.ApplyAll(rules, &error));
  EXPECT_FALSE(user.unrestricted());
  EXPECT_EQ(user.selectors()[0].DescribeCommands(), "+@all -debug");
}

TEST(AclTest, ResetRestoresNewUser) {
  AclUser user = Make({"on", ">x", "~*", "&*", "+@all", "(+get ~k)"});
  std::string error;
  std::vector<std::string> rules = {"reset"};
  ASSERT_TRUE(user.ApplyAll(rules, &error));
  EXPECT_EQ(user.Describe(), "off sanitize-payload resetchannels -@all");
}

TEST(AclTest, GlobFastPathsAgreeWithGlobMatch) {
  for (std::string pattern : {"*", "app:*", "exact", "a?c", "[ab]*", "app:"}) {
    AclGlob glob(pattern);
    for (std::string s : {"", "app:", "app:1", "exact", "abc", "b", "x"}) {
      EXPECT_EQ(glob.Matches(s), GlobMatch(pattern, s)) << pattern << " " << s;
    }
  }
  EXPECT_FALSE(AclGlob("*").Matches(""));
  EXPECT_TRUE(AclGlob("*").Matches("x"));
  EXPECT_TRUE(AclGlob("app:*").Matches("app:1"));
  EXPECT_FALSE(AclGlob("app:*").Matches("ap"));
  EXPECT_TRUE(AclGlob("exact").Matches("exact"));
  EXPECT_FALSE(AclGlob("exact").Matches("exact1"));
  EXPECT_TRUE(AclGlob("a?c").Matches("abc"));
}

TEST(AclTest, RegistryParseAndReplace) {
  AclRegistry registry(TestCommands());
  std::map<std::string, std::unique_ptr<AclUser>, std::less<>> users;
  std::string err =
      registry.Parse("user alice on >p ~* +@all\n\nuser bob off\n", "users.acl", &users);
  EXPECT_EQ(err, "");
  EXPECT_EQ(users.size(), 2u);
  err =
      registry.Parse("user alice on\nfoo bar\nuser bob +nosuch\nuser alice\n", "users.acl", &users);
  EXPECT_EQ(err,
            "users.acl:2 should start with user keyword followed by the username. users.acl:3: "
            "Error in applying operation '+nosuch': Unknown command or category name in ACL. "
            "WARNING: Duplicate user 'alice' found on line 4. WARNING: ACL errors detected, no "
            "change to the previously active ACL rules was performed");
  AclUser* def = registry.default_user();
  registry.Parse("user default on >pw +@all ~*\nuser carol on nopass\n", "f", &users);
  auto dropped = registry.Replace(std::move(users));
  EXPECT_EQ(registry.default_user(), def);
  EXPECT_TRUE(def->CheckPassword("pw"));
  EXPECT_EQ(registry.users().size(), 2u);
  EXPECT_NE(registry.Find("carol"), nullptr);
}

TEST(AclTest, LogGroupsSimilarEntries) {
  AclRegistry registry(TestCommands());
  AclRegistry::LogEntry e{1, AclResult::kDeniedKey, "toplevel", "k", "u", 1000, "info", 0, 0};
  registry.AddLog(e, 5);
  registry.AddLog(e, 5);
  ASSERT_EQ(registry.log().size(), 1u);
  EXPECT_EQ(registry.log()[0].count, 2u);
  e.object = "other";
  for (int i = 0; i < 10; ++i) {
    e.object = "o" + std::to_string(i);
    registry.AddLog(e, 5);
  }
  EXPECT_EQ(registry.log().size(), 5u);
  EXPECT_EQ(registry.denied_key, 12u);
}

}  // namespace
}  // namespace vireo
