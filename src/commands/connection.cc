// Connection commands: PING, ECHO, QUIT, RESET, AUTH, HELLO, SELECT.
#include <fmt/format.h>

#include "commands/families.h"
#include "commands/helpers.h"
#include "core/arg_parser.h"
#include "core/command_table.h"
#include "core/config.h"
#include "security/acl.h"
#include "server/acl_server.h"
#include "server/client.h"
#include "server/client_registry.h"
#include "server/command_context.h"
#include "server/info.h"
#include "server/watched_keys.h"
#include "util/strings.h"

namespace vireo {
namespace {

void PingCommand(CommandContext& ctx) {
  if (ctx.argc() > 2) {
    ctx.reply.Error("ERR wrong number of arguments for 'ping' command");
    return;
  }
  // A RESP2 subscriber can only receive arrays, so PING answers with one there.
  if (ctx.client.has(kClientPubsub) && ctx.client.resp() == 2) {
    ctx.reply.Array(2);
    ctx.reply.Bulk("pong");
    ctx.reply.Bulk(ctx.argc() == 2 ? ctx.arg(1) : "");
    return;
  }
  if (ctx.argc() == 2) {
    ctx.reply.Bulk(ctx.arg(1));
  } else {
    ctx.reply.Raw("+PONG\r\n");
  }
}

void EchoCommand(CommandContext& ctx) { ctx.reply.Bulk(ctx.arg(1)); }

void QuitCommand(CommandContext& ctx) {
  ctx.reply.Ok();
  ctx.clients().CloseAfterReply(ctx.client);
}

constexpr std::string_view kWrongPass =
    "WRONGPASS invalid username-password pair or user is disabled.";

void AuthCommand(CommandContext& ctx) {
  ArgParser args(ctx, 1);
  args.ExpectRemaining(1, 2);  // [username] password
  if (!args.Check()) return;
  std::string_view user = ctx.argc() == 3 ? ctx.arg(1) : "default";
  std::string_view pass = ctx.argc() == 3 ? ctx.arg(2) : ctx.arg(1);
  if (ctx.argc() == 2 && ctx.acl().default_user()->nopass()) {
    ctx.reply.Error(
        "ERR AUTH <password> called without any password configured for the default user. Are "
        "you sure your configuration is correct?");
    return;
  }
  if (!ctx.acl_service().Authenticate(ctx.client, user, pass)) {
    ctx.reply.Error(kWrongPass);
    return;
  }
  ctx.reply.Ok();
}

constexpr std::string_view kBadClientName =
    "ERR Client names cannot contain spaces, newlines or special characters.";

bool ValidClientName(std::string_view name) {
  for (unsigned char c : name) {
    if (c < '!' || c > '~') return false;
  }
  return true;
}

void HelloCommand(CommandContext& ctx) {
  int64_t protover = 0;
  ArgParser args(ctx, 1);
  if (args.HasNext()) {
    protover = args.Int("ERR Protocol version is not an integer or out of range");
    if (args.ok() && (protover < 2 || protover > 3)) {
      args.Fail("NOPROTO unsupported protocol version");
    }
  }
  std::string_view auth_user, auth_pass, setname;
  bool has_auth = false, has_setname = false;
  while (args.HasNext()) {
    if (args.remaining() >= 3 && args.Flag("AUTH")) {
      auth_user = args.Next();
      auth_pass = args.Next();
      has_auth = true;
    } else if (args.Option("SETNAME", &setname)) {
      has_setname = true;
      // Checked while parsing, before AUTH is tried (Redis 7.2's order).
      if (!ValidClientName(setname)) args.Fail(kBadClientName);
    } else {
      args.Fail(fmt::format("ERR Syntax error in HELLO option '{}'", args.Peek()));
    }
  }
  if (!args.Check()) return;
  if (has_auth && !ctx.acl_service().Authenticate(ctx.client, auth_user, auth_pass)) {
    ctx.reply.Error(kWrongPass);
    return;
  }
  if (!ctx.client.authenticated()) {
    ctx.reply.Error(
        "NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO "
        "<proto> AUTH <user> <pass> option can be used to authenticate the client and select the "
        "RESP protocol version at the same time");
    return;
  }
  if (has_setname) {
    ctx.client.name = std::string(setname);
  }
  if (protover != 0) ctx.client.set_resp(static_cast<int>(protover));
  ReplyBuilder& r = ctx.reply;
  r.Map(7);
  r.Bulk("server");
  r.Bulk("redis");
  r.Bulk("version");
  r.Bulk(kRedisCompatVersion);
  r.Bulk("proto");
  r.Integer(ctx.client.resp());
  r.Bulk("id");
  r.Integer(static_cast<int64_t>(ctx.client.id()));
  r.Bulk("mode");
  r.Bulk("standalone");
  r.Bulk("role");
  r.Bulk("master");
  r.Bulk("modules");
  r.EmptyArray();
}

void SelectCommand(CommandContext& ctx) {
  ArgParser args(ctx, 1);
  const int index = args.DbIndex();
  // A cluster has only db 0.
  if (args.ok() && index != 0 && ctx.cfg().cluster_enabled) {
    args.Fail("ERR SELECT is not allowed in cluster mode");
  }
  if (args.ok() && (index < 0 || index >= ctx.db_count())) {
    args.Fail(errors::kDbIndexOutOfRange);
  }
  if (!args.Check()) return;
  ctx.client.set_db_index(index);
  ctx.reply.Ok();
}

void ResetCommand(CommandContext& ctx) {
  Client& c = ctx.client;
  c.multi_queue.clear();
  c.clear(kClientMulti);
  c.clear(kClientDirtyCas);
  c.clear(kClientDirtyExec);
  ctx.watched_keys().UnwatchAll(c);
  c.set_db_index(0);
  c.set_resp(2);
  c.clear(kClientNoEvict);
  c.clear(kClientNoTouch);
  c.clear(kClientReplyOff);
  c.clear(kClientReplySkip);
  c.clear(kClientReplySkipNext);
  ctx.clients().ResetClientState(c);
  // Back to the default user, authenticated only if it needs no password (as a new connection).
  c.set_acl_user(ctx.acl().default_user());
  c.set_authenticated(ctx.acl_service().DefaultUserNoAuth());
  ctx.reply.Raw("+RESET\r\n");
}

}  // namespace

void RegisterConnectionCommands(CommandTable& table) {
  table.Add({"ping", -1, kCmdFast | kCmdSubscribedMode | kCmdDiskErrorCheck, Keys(), kAclConnection,
             "connection", "1.0.0", "Returns the server's liveliness response.", "[message]",
             PingCommand, "O(1)"});
  table.Add({"echo", 2, kCmdLoading | kCmdStale | kCmdFast, Keys(), kAclConnection, "connection",
             "1.0.0", "Returns the given string.", "message", EchoCommand, "O(1)"});
  table.Add({"quit", -1,
             kCmdNoScript | kCmdLoading | kCmdStale | kCmdFast | kCmdNoAuth | kCmdAllowBusy |
                 kCmdTransactionControl | kCmdSubscribedMode,
             Keys(), kAclConnection, "connection", "1.0.0", "Closes the connection.", "",
             QuitCommand, "O(1)"});
  table.Add({"reset", 1,
             kCmdNoScript | kCmdLoading | kCmdStale | kCmdFast | kCmdNoAuth | kCmdAllowBusy |
                 kCmdTransactionControl | kCmdSubscribedMode,
             Keys(), kAclConnection, "connection", "6.2.0", "Resets the connection.", "",
             ResetCommand, "O(1)"});
  table.Add({"auth", -2,
             kCmdNoScript | kCmdLoading | kCmdStale | kCmdFast | kCmdNoAuth | kCmdAllowBusy, Keys(),
             kAclConnection, "connection", "1.0.0", "Authenticates the connection.",
             "[username] password", AuthCommand,
             "O(N) where N is the number of passwords defined for the user"});
  table.Add({"hello", -1,
             kCmdNoScript | kCmdLoading | kCmdStale | kCmdFast | kCmdNoAuth | kCmdAllowBusy, Keys(),
             kAclConnection, "connection", "6.0.0", "Handshakes with the Redis server.",
             "[arguments=<protover [AUTH username password] [SETNAME clientname]>]", HelloCommand,
             "O(1)"});
  table.Add({"select", 2, kCmdLoading | kCmdStale | kCmdFast, Keys(), kAclConnection, "connection",
             "1.0.0", "Changes the selected database.", "index", SelectCommand, "O(1)"});
}

}  // namespace vireo
