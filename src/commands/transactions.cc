// MULTI, EXEC, DISCARD, WATCH, UNWATCH.
#include "commands/families.h"
#include "commands/helpers.h"
#include "core/command_table.h"
#include "server/acl_server.h"
#include "server/client.h"
#include "server/command_context.h"
#include "server/watched_keys.h"

namespace vireo {
namespace {

void DiscardTransaction(const CommandContext& ctx, Client& client) {
  client.multi_queue.clear();
  client.clear(kClientMulti);
  client.clear(kClientDirtyExec);
  client.clear(kClientDirtyCas);
  ctx.watched_keys().UnwatchAll(client);
}

void MultiCommand(CommandContext& ctx) {
  if (ctx.client.has(kClientMulti)) {
    ctx.reply.Error("ERR MULTI calls can not be nested");
    return;
  }
  ctx.client.set(kClientMulti);
  ctx.reply.Ok();
}

void ExecCommand(CommandContext& ctx) {
  Client& client = ctx.client;
  if (!client.has(kClientMulti)) {
    ctx.reply.Error("ERR EXEC without MULTI");
    return;
  }
  if (client.has(kClientDirtyExec)) {
    ctx.reply.Error("EXECABORT Transaction discarded because of previous errors.");
    DiscardTransaction(ctx, client);
    return;
  }
  if (client.has(kClientDirtyCas) || ctx.watched_keys().AnyExpired(client)) {
    ctx.reply.NullArray();
    DiscardTransaction(ctx, client);
    return;
  }
  // Unwatch first: the transaction's own writes must not mark this client dirty.
  ctx.watched_keys().UnwatchAll(client);
  std::vector<QueuedCommand> queue;
  queue.swap(client.multi_queue);
  client.clear(kClientMulti);
  ctx.reply.Array(queue.size());
  std::vector<std::string_view> argv;
  for (const QueuedCommand& cmd : queue) {
    argv.assign(cmd.argv.begin(), cmd.argv.end());
    // Permissions may have changed since the command was queued.
    if (std::string denied; !ctx.acl_service().CheckCommand(
            client, *cmd.spec, argv, AclContext::kExec, &denied, client.acl_user())) {
      ctx.reply.Error(denied);
      continue;
    }
    ctx.CallQueued(client, *cmd.spec, argv);
  }
  client.clear(kClientDirtyCas);
}

void DiscardCommand(CommandContext& ctx) {
  if (!ctx.client.has(kClientMulti)) {
    ctx.reply.Error("ERR DISCARD without MULTI");
    return;
  }
  DiscardTransaction(ctx, ctx.client);
  ctx.reply.Ok();
}

void WatchCommand(CommandContext& ctx) {
  if (ctx.client.has(kClientMulti)) {
    ctx.reply.Error("ERR WATCH inside MULTI is not allowed");
    return;
  }
  // Watching from a client whose transaction already failed is pointless but harmless.
  for (size_t i = 1; i < ctx.argc(); ++i) {
    ctx.watched_keys().Watch(ctx.client, ctx.client.db_index(), ctx.arg(i));
  }
  ctx.reply.Ok();
}

void UnwatchCommand(CommandContext& ctx) {
  ctx.watched_keys().UnwatchAll(ctx.client);
  ctx.client.clear(kClientDirtyCas);
  ctx.reply.Ok();
}

}  // namespace

void RegisterTransactionCommands(CommandTable& table) {
  table.Add(
      {"multi", 1,
       kCmdNoScript | kCmdLoading | kCmdStale | kCmdFast | kCmdAllowBusy | kCmdTransactionControl,
       Keys(), kAclTransaction, "transactions", "1.2.0", "Starts a transaction.", "", MultiCommand,
       "O(1)"});
  table.Add({"exec", 1,
             kCmdNoScript | kCmdLoading | kCmdStale | kCmdSkipSlowlog | kCmdTransactionControl |
                 kCmdRunsQueued,
             Keys(), kAclTransaction, "transactions", "1.2.0",
             "Executes all commands in a transaction.", "", ExecCommand,
             "Depends on commands in the transaction"});
  table.Add(
      {"discard", 1,
       kCmdNoScript | kCmdLoading | kCmdStale | kCmdFast | kCmdAllowBusy | kCmdTransactionControl,
       Keys(), kAclTransaction, "transactions", "2.0.0", "Discards a transaction.", "",
       DiscardCommand, "O(N), when N is the number of queued commands"});
  table.Add(
      {"watch", -2,
       kCmdNoScript | kCmdLoading | kCmdStale | kCmdFast | kCmdAllowBusy | kCmdTransactionControl,
       Keys(KeysAt(1, -1, 1, kKeyRO, 0)), kAclTransaction, "transactions", "2.2.0",
       "Monitors changes to keys to determine the execution of a transaction.", "key ...",
       WatchCommand, "O(1) for every key."});
  table.Add({"unwatch", 1, kCmdNoScript | kCmdLoading | kCmdStale | kCmdFast | kCmdAllowBusy,
             Keys(), kAclTransaction, "transactions", "2.2.0",
             "Forgets about watched keys of a transaction.", "", UnwatchCommand, "O(1)"});
}

}  // namespace vireo
