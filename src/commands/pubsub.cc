// Pub/Sub commands: SUBSCRIBE, UNSUBSCRIBE, PSUBSCRIBE, PUNSUBSCRIBE, PUBLISH, SSUBSCRIBE,
// SUNSUBSCRIBE, SPUBLISH and PUBSUB. The engine (subscriptions, delivery) is server/pubsub.h.
#include "server/pubsub.h"

#include <fmt/format.h>

#include "cluster/bus.h"
#include "commands/families.h"
#include "commands/helpers.h"
#include "core/command_table.h"
#include "server/client.h"
#include "server/command_context.h"

namespace vireo {
namespace {

struct KindNames {
  PubsubKind kind;
  std::string_view subscribe;
  std::string_view unsubscribe;
};
constexpr KindNames kChannelNames{PubsubKind::kChannel, "subscribe", "unsubscribe"};
constexpr KindNames kPatternNames{PubsubKind::kPattern, "psubscribe", "punsubscribe"};
constexpr KindNames kShardNames{PubsubKind::kShard, "ssubscribe", "sunsubscribe"};

// The count in a confirmation: shard channels are counted apart from channels + patterns.
int64_t ConfirmationCount(CommandContext& ctx, PubsubKind kind) {
  const PubsubEngine& pubsub = ctx.pubsub();
  if (kind == PubsubKind::kShard) {
    return static_cast<int64_t>(pubsub.CountOf(ctx.client, PubsubKind::kShard));
  }
  return static_cast<int64_t>(pubsub.ChannelAndPatternCount(ctx.client));
}

// Confirmations are pushes in RESP3 and arrays in RESP2, one per name, even for duplicates.
void ReplyConfirmation(CommandContext& ctx, std::string_view what, const std::string_view* name,
                       PubsubKind kind) {
  const size_t begin = ctx.client.output().size();
  ctx.reply.Push(3);
  ctx.reply.Bulk(what);
  if (name == nullptr) {
    ctx.reply.Null();
  } else {
    ctx.reply.Bulk(*name);
  }
  ctx.reply.Integer(ConfirmationCount(ctx, kind));
  // A push even in RESP2: CLIENT REPLY OFF/SKIP doesn't drop it.
  ctx.client.NotePush(begin);
}

void SubscribeGeneric(CommandContext& ctx, const KindNames& names) {
  PubsubEngine& pubsub = ctx.pubsub();
  for (size_t i = 1; i < ctx.argc(); ++i) {
    std::string_view name = ctx.arg(i);
    pubsub.Subscribe(ctx.client, names.kind, name);
    ReplyConfirmation(ctx, names.subscribe, &name, names.kind);
  }
}

void UnsubscribeGeneric(CommandContext& ctx, const KindNames& names) {
  PubsubEngine& pubsub = ctx.pubsub();
  if (ctx.argc() == 1) {
    std::vector<std::string> mine = pubsub.SubscriptionsOf(ctx.client, names.kind);
    if (mine.empty()) {
      ReplyConfirmation(ctx, names.unsubscribe, nullptr, names.kind);
      return;
    }
    for (const std::string& name : mine) {
      pubsub.Unsubscribe(ctx.client, names.kind, name);
      std::string_view view = name;
      ReplyConfirmation(ctx, names.unsubscribe, &view, names.kind);
    }
    return;
  }
  for (size_t i = 1; i < ctx.argc(); ++i) {
    std::string_view name = ctx.arg(i);
    pubsub.Unsubscribe(ctx.client, names.kind, name);
    ReplyConfirmation(ctx, names.unsubscribe, &name, names.kind);
  }
}

void SubscribeCommand(CommandContext& ctx) { SubscribeGeneric(ctx, kChannelNames); }
void UnsubscribeCommand(CommandContext& ctx) { UnsubscribeGeneric(ctx, kChannelNames); }
void PsubscribeCommand(CommandContext& ctx) { SubscribeGeneric(ctx, kPatternNames); }
void PunsubscribeCommand(CommandContext& ctx) { UnsubscribeGeneric(ctx, kPatternNames); }

void SsubscribeCommand(CommandContext& ctx) {
  // Unlike SUBSCRIBE, Redis has no MULTI exemption here: inside EXEC the client "can't block".
  if (ctx.in_exec) {
    ctx.reply.Error("ERR SSUBSCRIBE isn't allowed for a DENY BLOCKING client");
    return;
  }
  SubscribeGeneric(ctx, kShardNames);
}
void SunsubscribeCommand(CommandContext& ctx) { UnsubscribeGeneric(ctx, kShardNames); }

// Replicas get every message too (their subscribers hear what the master's do), but the AOF
// doesn't: a message is not data. In cluster mode the bus carries them instead.
void PropagateMessage(CommandContext& ctx, const char* command) {
  if (cluster::ClusterBus* bus = ctx.cluster_bus()) {
    bus->Publish(ctx.arg(1), ctx.arg(2), command[0] == 'S');
    ctx.PropagateNothing();
    return;
  }
  ctx.PropagateInstead({command, std::string(ctx.arg(1)), std::string(ctx.arg(2))},
                       kEffectToReplicas);
}

void PublishCommand(CommandContext& ctx) {
  size_t receivers = ctx.pubsub().Publish(ctx.arg(1), ctx.arg(2));
  ctx.reply.Integer(static_cast<int64_t>(receivers));
  PropagateMessage(ctx, "PUBLISH");
}

void SpublishCommand(CommandContext& ctx) {
  size_t receivers = ctx.pubsub().PublishShard(ctx.arg(1), ctx.arg(2));
  ctx.reply.Integer(static_cast<int64_t>(receivers));
  PropagateMessage(ctx, "SPUBLISH");
}

// PUBSUB CHANNELS / SHARDCHANNELS take at most one pattern; Redis words the excess as a
// subcommand syntax error, naming the subcommand as typed.
void ActiveChannels(CommandContext& ctx, PubsubKind kind) {
  if (ctx.argc() > 3) {
    ctx.reply.Error(fmt::format(
        "ERR unknown subcommand or wrong number of arguments for '{}'. Try PUBSUB HELP.",
        ctx.arg(1).substr(0, 128)));
    return;
  }
  bool all = ctx.argc() == 2;
  std::vector<std::string> names =
      ctx.pubsub().ActiveNames(kind, all ? std::string_view() : ctx.arg(2), all);
  ctx.reply.Array(names.size());
  for (const std::string& name : names) ctx.reply.Bulk(name);
}

// A flat name, count, name, count... array in both protocols, as Redis replies.
void NumSub(CommandContext& ctx, PubsubKind kind) {
  const PubsubEngine& pubsub = ctx.pubsub();
  ctx.reply.Array((ctx.argc() - 2) * 2);
  for (size_t i = 2; i < ctx.argc(); ++i) {
    ctx.reply.Bulk(ctx.arg(i));
    ctx.reply.Integer(static_cast<int64_t>(pubsub.SubscriberCount(kind, ctx.arg(i))));
  }
}

void PubsubChannelsCommand(CommandContext& ctx) { ActiveChannels(ctx, PubsubKind::kChannel); }
void PubsubShardchannelsCommand(CommandContext& ctx) { ActiveChannels(ctx, PubsubKind::kShard); }
void PubsubNumsubCommand(CommandContext& ctx) { NumSub(ctx, PubsubKind::kChannel); }
void PubsubShardnumsubCommand(CommandContext& ctx) { NumSub(ctx, PubsubKind::kShard); }
void PubsubNumpatCommand(CommandContext& ctx) {
  ctx.reply.Integer(static_cast<int64_t>(ctx.pubsub().pattern_count()));
}

void PubsubHelpCommand(CommandContext& ctx) {
  ReplyHelp(ctx, "PUBSUB",
            {"CHANNELS [<pattern>]",
             "    Return the currently active channels matching a <pattern> (default: '*').",
             "NUMPAT", "    Return number of subscriptions to patterns.", "NUMSUB [<channel> ...]",
             "    Return the number of subscribers for the specified channels, excluding",
             "    pattern subscriptions(default: no channels).", "SHARDCHANNELS [<pattern>]",
             "    Return the currently active shard level channels matching a <pattern> "
             "(default: '*').",
             "SHARDNUMSUB [<shardchannel> ...]",
             "    Return the number of subscribers for the specified shard level channel(s)"});
}

}  // namespace

void RegisterPubsubCommands(CommandTable& table) {
  table.Add({"subscribe", -2,
             kCmdPubsub | kCmdNoScript | kCmdLoading | kCmdStale | kCmdSubscribedMode, Keys(), 0,
             "pubsub", "2.0.0", "Listens for messages published to channels.",
             "channel [channel ...]", SubscribeCommand,
             "O(N) where N is the number of channels to subscribe to."});
  table.Add({"unsubscribe", -1,
             kCmdPubsub | kCmdNoScript | kCmdLoading | kCmdStale | kCmdSubscribedMode, Keys(), 0,
             "pubsub", "2.0.0", "Stops listening to messages posted to channels.",
             "[channel [channel ...]]", UnsubscribeCommand,
             "O(N) where N is the number of clients already subscribed to a channel."});
  table.Add({"psubscribe", -2,
             kCmdPubsub | kCmdNoScript | kCmdLoading | kCmdStale | kCmdSubscribedMode, Keys(), 0,
             "pubsub", "2.0.0",
             "Listens for messages published to channels that match one or more patterns.",
             "pattern [pattern ...]", PsubscribeCommand,
             "O(N) where N is the number of patterns to subscribe to."});
  table.Add({"punsubscribe", -1,
             kCmdPubsub | kCmdNoScript | kCmdLoading | kCmdStale | kCmdSubscribedMode, Keys(), 0,
             "pubsub", "2.0.0",
             "Stops listening to messages published to channels that match one or more "
             "patterns.",
             "[pattern [pattern ...]]", PunsubscribeCommand,
             "O(N) where N is the number of patterns to unsubscribe."});
  table.Add({"publish", 3, kCmdPubsub | kCmdLoading | kCmdStale | kCmdFast | kCmdMayReplicate,
             Keys(), 0, "pubsub", "2.0.0", "Posts a message to a channel.", "channel message",
             PublishCommand,
             "O(N+M) where N is the number of clients subscribed to the receiving channel and M "
             "is the total number of subscribed patterns (by any client)."});
  table.Add({"ssubscribe", -2,
             kCmdPubsub | kCmdNoScript | kCmdLoading | kCmdStale | kCmdSubscribedMode,
             Keys(KeysAt(1, -1, 1, kKeyNotKey, 0)), 0, "pubsub", "7.0.0",
             "Listens for messages published to shard channels.", "shardchannel [shardchannel ...]",
             SsubscribeCommand, "O(N) where N is the number of shard channels to subscribe to."});
  table.Add(
      {"sunsubscribe", -1, kCmdPubsub | kCmdNoScript | kCmdLoading | kCmdStale | kCmdSubscribedMode,
       Keys(KeysAt(1, -1, 1, kKeyNotKey, 0)), 0, "pubsub", "7.0.0",
       "Stops listening to messages posted to shard channels.", "[shardchannel [shardchannel ...]]",
       SunsubscribeCommand, "O(N) where N is the number of shard channels to unsubscribe."});
  table.Add({"spublish", 3, kCmdPubsub | kCmdLoading | kCmdStale | kCmdFast | kCmdMayReplicate,
             Keys(KeyAt(1, kKeyNotKey)), 0, "pubsub", "7.0.0", "Post a message to a shard channel",
             "shardchannel message", SpublishCommand,
             "O(N) where N is the number of clients subscribed to the receiving shard channel."});

  table.Add({"pubsub", -2, 0, Keys(), 0, "pubsub", "2.8.0", "A container for Pub/Sub commands.", "",
             nullptr, "Depends on subcommand."});
  table.AddSubcommand(
      "pubsub", {"channels", -2, kCmdPubsub | kCmdLoading | kCmdStale, Keys(), 0, "pubsub", "2.8.0",
                 "Returns the active channels.", "[pattern]", PubsubChannelsCommand,
                 "O(N) where N is the number of active channels, and assuming constant time "
                 "pattern matching (relatively short channels and patterns)"});
  table.AddSubcommand("pubsub", {"help", 2, kCmdLoading | kCmdStale, Keys(), 0, "pubsub", "6.2.0",
                                 "Returns helpful text about the different subcommands.", "",
                                 PubsubHelpCommand, "O(1)"});
  table.AddSubcommand(
      "pubsub",
      {"numpat", 2, kCmdPubsub | kCmdLoading | kCmdStale, Keys(), 0, "pubsub", "2.8.0",
       "Returns a count of unique pattern subscriptions.", "", PubsubNumpatCommand, "O(1)"});
  table.AddSubcommand(
      "pubsub", {"numsub", -2, kCmdPubsub | kCmdLoading | kCmdStale, Keys(), 0, "pubsub", "2.8.0",
                 "Returns a count of subscribers to channels.", "[channel [channel ...]]",
                 PubsubNumsubCommand,
                 "O(N) for the NUMSUB subcommand, where N is the number of requested channels"});
  table.AddSubcommand(
      "pubsub",
      {"shardchannels", -2, kCmdPubsub | kCmdLoading | kCmdStale, Keys(), 0, "pubsub", "7.0.0",
       "Returns the active shard channels.", "[pattern]", PubsubShardchannelsCommand,
       "O(N) where N is the number of active shard channels, and assuming constant "
       "time pattern matching (relatively short shard channels)."});
  table.AddSubcommand(
      "pubsub", {"shardnumsub", -2, kCmdPubsub | kCmdLoading | kCmdStale, Keys(), 0, "pubsub",
                 "7.0.0", "Returns the count of subscribers of shard channels.",
                 "[shardchannel [shardchannel ...]]", PubsubShardnumsubCommand,
                 "O(N) for the SHARDNUMSUB subcommand, where N is the number of requested shard "
                 "channels"});
}

}  // namespace vireo
