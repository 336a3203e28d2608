// ACL: SETUSER, GETUSER, DELUSER, USERS, LIST, WHOAMI, CAT, GENPASS, LOG, DRYRUN, SAVE, LOAD,
// HELP. The users and the check live in src/security/.
#include "security/acl.h"

#include <fmt/format.h>
#include <openssl/rand.h>

#include <algorithm>

#include "commands/families.h"
#include "commands/helpers.h"
#include "core/arg_parser.h"
#include "core/command_table.h"
#include "core/config.h"
#include "server/acl_server.h"
#include "server/client.h"
#include "server/command_context.h"
#include "util/clock.h"
#include "util/strings.h"

namespace vireo {
namespace {

// Redis's addReplySubcommandSyntaxError: names the subcommand as typed.
void ReplySubcommandSyntaxError(CommandContext& ctx) {
  ctx.reply.Error(
      fmt::format("ERR unknown subcommand or wrong number of arguments for '{}'. Try "
                  "ACL HELP.",
                  ctx.arg(1).substr(0, 128)));
}

void AclSetuserCommand(CommandContext& ctx) {
  std::string_view name = ctx.arg(2);
  if (AclHasSpaceOrNul(name)) {
    ctx.reply.Error("ERR Usernames can't contain spaces or null characters");
    return;
  }
  std::vector<std::string> rules(ctx.argv.begin() + 3, ctx.argv.end());
  AclRegistry& acl = ctx.acl();
  std::string error;
  AclUser* user = acl.Find(name);
  if (user == nullptr) {
    AclUser staged(ctx.commands(), std::string(name), acl.pubsub_all_default());
    if (!staged.ApplyAll(rules, &error)) {
      ctx.reply.Error("ERR " + error);
      return;
    }
    acl.Create(name)->CopyRulesFrom(staged);
  } else {
    const bool was_enabled = user->enabled();
    if (!user->ApplyAll(rules, &error)) {
      ctx.reply.Error("ERR " + error);
      return;
    }
    // Issue 18: the clients of a user switched off go (Redis 7.2 keeps them connected and
    // only refuses new AUTHs; docs/security.md). Subscribers whose channels the new rules no
    // longer allow are disconnected, as in Redis.
    if (was_enabled && !user->enabled()) ctx.acl_service().DisconnectDisabledUser(user);
    ctx.acl_service().DisconnectRevokedSubscribers(user);
  }
  ctx.reply.Ok();
}

void AclDeluserCommand(CommandContext& ctx) {
  for (size_t i = 2; i < ctx.argc(); ++i) {
    if (ctx.arg(i) == "default") {
      ctx.reply.Error("ERR The 'default' user cannot be removed");
      return;
    }
  }
  AclRegistry& acl = ctx.acl();
  int64_t deleted = 0;
  for (size_t i = 2; i < ctx.argc(); ++i) {
    AclUser* user = acl.Find(ctx.arg(i));
    if (user == nullptr) continue;
    ctx.acl_service().DisconnectUser(user);
    acl.Remove(ctx.arg(i));
    ++deleted;
  }
  ctx.reply.Integer(deleted);
}

void ReplySelector(ReplyBuilder& r, const AclSelector& s) {
  r.Bulk("commands");
  r.Bulk(s.DescribeCommands());
  r.Bulk("keys");
  r.Bulk(s.DescribeKeys());
  r.Bulk("channels");
  r.Bulk(s.DescribeChannels());
}

void AclGetuserCommand(CommandContext& ctx) {
  const AclUser* user = ctx.acl().Find(ctx.arg(2));
  ReplyBuilder& r = ctx.reply;
  if (user == nullptr) {
    r.Null();
    return;
  }
  static constexpr std::pair<uint32_t, std::string_view> kFlags[] = {
      {kAclUserOn, "on"},
      {kAclUserOff, "off"},
      {kAclUserNoPass, "nopass"},
      {kAclUserSkipSanitize, "skip-sanitize-payload"},
      {kAclUserSanitize, "sanitize-payload"}};
  r.Map(6);
  r.Bulk("flags");
  size_t nflags = 0;
  for (const auto& [flag, name] : kFlags) nflags += (user->flags() & flag) != 0;
  r.Set(nflags);
  for (const auto& [flag, name] : kFlags) {
    if (user->flags() & flag) r.Bulk(name);
  }
  r.Bulk("passwords");
  r.Array(user->passwords().size());
  for (const std::string& p : user->passwords()) r.Bulk(p);
  ReplySelector(r, user->selectors()[0]);
  r.Bulk("selectors");
  r.Array(user->selectors().size() - 1);
  for (size_t i = 1; i < user->selectors().size(); ++i) {
    r.Map(3);
    ReplySelector(r, user->selectors()[i]);
  }
}

void AclUsersCommand(CommandContext& ctx) {
  const auto& users = ctx.acl().users();
  ctx.reply.Array(users.size());
  for (const auto& [name, user] : users) ctx.reply.Bulk(name);
}

void AclListCommand(CommandContext& ctx) {
  std::vector<std::string> lines = ctx.acl().ListLines();
  ctx.reply.Array(lines.size());
  for (const std::string& line : lines) ctx.reply.Bulk(line);
}

void AclWhoamiCommand(CommandContext& ctx) { ctx.reply.Bulk(ctx.client.user()); }

constexpr std::string_view kNoAclFile =
    "ERR This Redis instance is not configured to use an ACL file. You may want to specify "
    "users via the ACL SETUSER command and then issue a CONFIG REWRITE (assuming you have a "
    "Redis configuration file set) in order to store users in the Redis configuration.";

void AclLoadCommand(CommandContext& ctx) {
  if (ctx.cfg().aclfile.empty()) {
    ctx.reply.Error(kNoAclFile);
    return;
  }
  if (std::string err = ctx.acl_service().LoadFile(); !err.empty()) {
    ctx.reply.Error("ERR " + err);
    return;
  }
  ctx.reply.Ok();
}

void AclSaveCommand(CommandContext& ctx) {
  if (ctx.cfg().aclfile.empty()) {
    ctx.reply.Error(kNoAclFile);
    return;
  }
  if (!ctx.acl_service().SaveFile()) {
    ctx.reply.Error(
        "ERR There was an error trying to save the ACLs. Please check the server logs for more "
        "information");
    return;
  }
  ctx.reply.Ok();
}

void AclCatCommand(CommandContext& ctx) {
  if (ctx.argc() == 2) {
    ctx.reply.Array(kAclCategoryCount);
    for (std::string_view name : kAclCategoryNames) ctx.reply.Bulk(name);
    return;
  }
  if (ctx.argc() > 3) {
    ReplySubcommandSyntaxError(ctx);
    return;
  }
  uint32_t mask = AclCategoryByName(ctx.arg(2));
  if (mask == 0) {
    ctx.reply.Error(fmt::format("ERR Unknown category '{}'", ctx.arg(2).substr(0, 128)));
    return;
  }
  std::vector<std::string_view> names;
  for (const auto& [name, spec] : ctx.commands().all()) {
    if (spec->acl_categories & mask) names.push_back(spec->name);
    for (const auto& [subname, sub] : spec->subcommands) {
      if (sub->acl_categories & mask) names.push_back(sub->name);
    }
  }
  ctx.reply.Array(names.size());
  for (std::string_view n : names) ctx.reply.Bulk(n);
}

void AclGenpassCommand(CommandContext& ctx) {
  constexpr int64_t kMaxBits = 4096;
  int64_t bits = 256;
  if (ctx.argc() > 3) {
    ReplySubcommandSyntaxError(ctx);
    return;
  }
  ArgParser args(ctx, 2);
  if (args.HasNext()) {
    bits = args.IntBetween(
        1, kMaxBits,
        fmt::format("ERR ACL GENPASS argument must be the number of bits for the output "
                    "password, a positive number up to {}",
                    kMaxBits));
  }
  if (!args.Check()) return;
  const size_t chars = static_cast<size_t>((bits + 3) / 4);
  unsigned char random[kMaxBits / 8];
  RAND_bytes(random, static_cast<int>((chars + 1) / 2));
  // An odd number of hex digits drops the last byte's low nibble.
  std::string out = HexEncode(random, (chars + 1) / 2);
  out.resize(chars);
  ctx.reply.Bulk(out);
}

std::string_view ReasonName(AclResult reason) {
  switch (reason) {
    case AclResult::kDeniedCmd:
      return "command";
    case AclResult::kDeniedKey:
      return "key";
    case AclResult::kDeniedChannel:
      return "channel";
    case AclResult::kDeniedAuth:
      return "auth";
    default:
      return "unknown";
  }
}

void AclLogCommand(CommandContext& ctx) {
  AclRegistry& acl = ctx.acl();
  int64_t count = 10;
  if (ctx.argc() > 3) {
    ReplySubcommandSyntaxError(ctx);
    return;
  }
  ArgParser args(ctx, 2);
  if (args.Flag("RESET")) {
    acl.ResetLog();
    ctx.reply.Ok();
    return;
  }
  if (args.HasNext()) count = std::max<int64_t>(args.Int(), 0);
  if (!args.Check()) return;
  const auto& log = acl.log();
  size_t n = std::min(static_cast<size_t>(count), log.size());
  const int64_t now = NowMs();
  ReplyBuilder& r = ctx.reply;
  r.Array(n);
  for (size_t i = 0; i < n; ++i) {
    const AclRegistry::LogEntry& e = log[i];
    r.Map(10);
    r.Bulk("count");
    r.Integer(static_cast<int64_t>(e.count));
    r.Bulk("reason");
    r.Bulk(ReasonName(e.reason));
    r.Bulk("context");
    r.Bulk(e.context);
    r.Bulk("object");
    r.Bulk(e.object);
    r.Bulk("username");
    r.Bulk(e.username);
    r.Bulk("age-seconds");
    r.Double(static_cast<double>(now - e.ctime_ms) / 1000);
    r.Bulk("client-info");
    r.Bulk(e.client_info);
    r.Bulk("entry-id");
    r.Integer(static_cast<int64_t>(e.entry_id));
    r.Bulk("timestamp-created");
    r.Integer(e.created_ms);
    r.Bulk("timestamp-last-updated");
    r.Integer(e.ctime_ms);
  }
}

void AclDryrunCommand(CommandContext& ctx) {
  AclUser* user = ctx.acl().Find(ctx.arg(2));
  if (user == nullptr) {
    ctx.reply.Error(fmt::format("ERR User '{}' not found", ctx.arg(2)));
    return;
  }
  std::span<const std::string_view> argv = ctx.argv.subspan(3);
  const CommandSpec* spec = ctx.LookupCommand(argv[0]);
  if (spec != nullptr && !spec->subcommands.empty() && argv.size() >= 2) {
    spec = CommandTable::FindSubcommand(*spec, argv[1]);
  }
  if (spec == nullptr) {
    ctx.reply.Error(fmt::format("ERR Command '{}' not found", argv[0]));
    return;
  }
  if (!spec->ArityOk(argv.size())) {
    ctx.reply.Error(fmt::format("ERR wrong number of arguments for '{}' command", spec->name));
    return;
  }
  size_t pos = 0;
  AclResult result = user->Check(*spec, argv, &pos);
  if (result != AclResult::kOk) {
    ctx.reply.Bulk(AclErrorMessage(result, user->name(), *spec, argv[pos], true));
    return;
  }
  ctx.reply.Ok();
}

void AclHelpCommand(CommandContext& ctx) {
  ReplyHelp(ctx, "ACL",
            {"CAT [<category>]",
             "    List all commands that belong to <category>, or all command categories",
             "    when no category is specified.",
             "DELUSER <username> [<username> ...]",
             "    Delete a list of users.",
             "DRYRUN <username> <command> [<arg> ...]",
             "    Returns whether the user can execute the given command without executing the "
             "command.",
             "GETUSER <username>",
             "    Get the user's details.",
             "GENPASS [<bits>]",
             "    Generate a secure 256-bit user password. The optional `bits` argument can",
             "    be used to specify a different size.",
             "LIST",
             "    Show users details in config file format.",
             "LOAD",
             "    Reload users from the ACL file.",
             "LOG [<count> | RESET]",
             "    Show the ACL log entries.",
             "SAVE",
             "    Save the current config to the ACL file.",
             "SETUSER <username> <attribute> [<attribute> ...]",
             "    Create or modify a user with the specified attributes.",
             "USERS",
             "    List all the registered usernames.",
             "WHOAMI",
             "    Return the current connection username."});
}

void AclContainerCommand(CommandContext& ctx) {
  ctx.reply.Error("ERR unknown subcommand or wrong number of arguments for '" +
                  std::string(ctx.argc() > 1 ? ctx.arg(1).substr(0, 128) : "") +
                  "'. Try ACL HELP.");
}

}  // namespace

void RegisterAclCommands(CommandTable& table) {
  constexpr const char* kGroup = "server";
  constexpr uint64_t kAdmin = kCmdAdmin | kCmdNoScript | kCmdLoading | kCmdStale;
  constexpr uint64_t kUser = kCmdNoScript | kCmdLoading | kCmdStale;
  constexpr const char* kUsersN = "O(N). Where N is the number of configured users.";
  table.Add({"acl", -2, 0, Keys(), 0, kGroup, "6.0.0",
             "A container for Access List Control commands.", "", AclContainerCommand,
             "Depends on subcommand."});
  table.AddSubcommand(
      "acl", {"setuser", -3, kAdmin, Keys(), 0, kGroup, "6.0.0",
              "Creates and modifies an ACL user and its rules.", "username [rule [rule ...]]",
              AclSetuserCommand, "O(N). Where N is the number of rules provided."});
  table.AddSubcommand("acl", {"getuser", 3, kAdmin, Keys(), 0, kGroup, "6.0.0",
                              "Lists the ACL rules of a user.", "username", AclGetuserCommand,
                              "O(N). Where N is the number of password, command and pattern "
                              "rules that the user has."});
  table.AddSubcommand(
      "acl", {"deluser", -3, kAdmin, Keys(), 0, kGroup, "6.0.0",
              "Deletes ACL users, and terminates their connections.", "username [username ...]",
              AclDeluserCommand, "O(1) amortized time considering the typical user."});
  table.AddSubcommand("acl", {"users", 2, kAdmin, Keys(), 0, kGroup, "6.0.0",
                              "Lists all ACL users.", "", AclUsersCommand, kUsersN});
  table.AddSubcommand(
      "acl", {"list", 2, kAdmin, Keys(), 0, kGroup, "6.0.0",
              "Dumps the effective rules in ACL file format.", "", AclListCommand, kUsersN});
  table.AddSubcommand("acl", {"whoami", 2, kUser, Keys(), 0, kGroup, "6.0.0",
                              "Returns the authenticated username of the current connection.", "",
                              AclWhoamiCommand, "O(1)"});
  table.AddSubcommand("acl",
                      {"cat", -2, kUser, Keys(), 0, kGroup, "6.0.0",
                       "Lists the ACL categories, or the commands inside a category.", "[category]",
                       AclCatCommand, "O(1) since the categories and commands are a fixed set."});
  table.AddSubcommand("acl", {"genpass", -2, kUser, Keys(), 0, kGroup, "6.0.0",
                              "Generates a pseudorandom, secure password that can be used to "
                              "identify ACL users.",
                              "[bits:integer]", AclGenpassCommand, "O(1)"});
  table.AddSubcommand("acl", {"log", -2, kAdmin, Keys(), 0, kGroup, "6.0.0",
                              "Lists recent security events generated due to ACL rules.",
                              "[operation=<count | RESET>]", AclLogCommand,
                              "O(N) with N being the number of entries shown."});
  table.AddSubcommand("acl", {"dryrun", -4, kAdmin, Keys(), 0, kGroup, "7.0.0",
                              "Simulates the execution of a command by a user, without executing "
                              "the command.",
                              "username command [arg [arg ...]]", AclDryrunCommand, "O(1)."});
  table.AddSubcommand("acl", {"save", 2, kAdmin, Keys(), 0, kGroup, "6.0.0",
                              "Saves the effective ACL rules in the configured ACL file.", "",
                              AclSaveCommand, kUsersN});
  table.AddSubcommand(
      "acl", {"load", 2, kAdmin, Keys(), 0, kGroup, "6.0.0",
              "Reloads the rules from the configured ACL file.", "", AclLoadCommand, kUsersN});
  table.AddSubcommand(
      "acl", {"help", 2, kCmdLoading | kCmdStale, Keys(), 0, kGroup, "6.0.0",
              "Returns helpful text about the different subcommands.", "", AclHelpCommand, "O(1)"});
}

}  // namespace vireo
