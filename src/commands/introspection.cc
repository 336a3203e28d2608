// Introspection: COMMAND, CLIENT, INFO, MONITOR (SLOWLOG is in commandlog.cc).
#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <climits>
#include <optional>
#include <vector>

#include "commands/families.h"
#include "commands/helpers.h"
#include "core/arg_parser.h"
#include "core/command_table.h"
#include "security/acl.h"
#include "server/blocking_service.h"
#include "server/client.h"
#include "server/client_pause.h"
#include "server/client_registry.h"
#include "server/command_context.h"
#include "server/info.h"
#include "server/monitors.h"
#include "server/tracking.h"
#include "util/clock.h"
#include "util/glob.h"
#include "util/strings.h"

namespace vireo {
namespace {

// ---------------------------------------------------------------------------------------------
// COMMAND

template <typename Flag>
void ReplyFlagSet(ReplyBuilder& r, uint64_t mask,
                  std::span<const std::pair<Flag, std::string_view>> names) {
  size_t n = 0;
  for (const auto& [flag, name] : names) n += (mask & flag) != 0 ? 1 : 0;
  r.Set(n);
  for (const auto& [flag, name] : names) {
    if ((mask & flag) != 0) r.SimpleString(name);
  }
}

void ReplyAclCategories(ReplyBuilder& r, uint32_t mask) {
  r.Set(static_cast<size_t>(std::popcount(mask)));
  for (size_t i = 0; i < kAclCategoryCount; ++i) {
    if ((mask & (1u << i)) != 0) r.SimpleString(fmt::format("@{}", kAclCategoryNames[i]));
  }
}

std::vector<const CommandSpec*> SortedSubcommands(const CommandSpec& spec) {
  std::vector<const CommandSpec*> subs;
  for (const auto& [name, sub] : spec.subcommands) subs.push_back(sub.get());
  std::sort(subs.begin(), subs.end(),
            [](const CommandSpec* a, const CommandSpec* b) { return a->name < b->name; });
  return subs;
}

std::vector<const CommandSpec*> SortedCommands(const CommandTable& table) {
  std::vector<const CommandSpec*> all;
  for (const auto& [name, spec] : table.all()) all.push_back(spec.get());
  std::sort(all.begin(), all.end(),
            [](const CommandSpec* a, const CommandSpec* b) { return a->name < b->name; });
  return all;
}

void ReplyStatusSet(ReplyBuilder& r, const std::vector<std::string_view>& items) {
  r.Set(items.size());
  for (std::string_view item : items) r.SimpleString(item);
}

void ReplyKeySpec(ReplyBuilder& r, const KeySpec& ks) {
  const bool notes = ks.notes[0] != '\0';
  r.Map(notes ? 4 : 3);
  if (notes) {
    r.Bulk("notes");
    r.Bulk(ks.notes);
  }
  r.Bulk("flags");
  ReplyFlagSet(r, ks.flags, KeyFlagNames());
  r.Bulk("begin_search");
  r.Map(2);
  r.Bulk("type");
  switch (ks.begin) {
    case KeySpec::Begin::kIndex:
      r.Bulk("index");
      r.Bulk("spec");
      r.Map(1);
      r.Bulk("index");
      r.Integer(ks.index);
      break;
    case KeySpec::Begin::kKeyword:
      r.Bulk("keyword");
      r.Bulk("spec");
      r.Map(2);
      r.Bulk("keyword");
      r.Bulk(ks.keyword);
      r.Bulk("startfrom");
      r.Integer(ks.index);
      break;
    case KeySpec::Begin::kUnknown:
      r.Bulk("unknown");
      r.Bulk("spec");
      r.Map(0);
      break;
  }
  r.Bulk("find_keys");
  r.Map(2);
  r.Bulk("type");
  switch (ks.find) {
    case KeySpec::Find::kRange:
      r.Bulk("range");
      r.Bulk("spec");
      r.Map(3);
      r.Bulk("lastkey");
      r.Integer(ks.a);
      r.Bulk("keystep");
      r.Integer(ks.b);
      r.Bulk("limit");
      r.Integer(ks.c);
      break;
    case KeySpec::Find::kKeyNum:
      r.Bulk("keynum");
      r.Bulk("spec");
      r.Map(3);
      r.Bulk("keynumidx");
      r.Integer(ks.a);
      r.Bulk("firstkey");
      r.Integer(ks.b);
      r.Bulk("keystep");
      r.Integer(ks.c);
      break;
    case KeySpec::Find::kUnknown:
      r.Bulk("unknown");
      r.Bulk("spec");
      r.Map(0);
      break;
  }
}

void ReplyCommandInfo(ReplyBuilder& r, const CommandSpec& spec) {
  r.Array(10);
  r.Bulk(spec.name);
  r.Integer(spec.arity);
  ReplyFlagSet(r, spec.flags, CommandFlagNames());
  r.Integer(spec.first_key);
  r.Integer(spec.last_key);
  r.Integer(spec.key_step);
  ReplyAclCategories(r, spec.acl_categories);
  r.Set(0);                      // tips
  r.Set(spec.key_specs.size());  // a set, as Redis replies
  for (const KeySpec& ks : spec.key_specs) ReplyKeySpec(r, ks);
  // Redis's quirk, kept for byte-identical RESP3: no subcommands is an empty set, not array.
  if (spec.subcommands.empty()) {
    r.Set(0);
    return;
  }
  std::vector<const CommandSpec*> subs = SortedSubcommands(spec);
  r.Array(subs.size());
  for (const CommandSpec* sub : subs) ReplyCommandInfo(r, *sub);
}

// Key arguments name their key spec; they are taken to follow the specs' order (ZUNIONSTORE's
// destination is spec 0, its keys spec 1), the last spec taking any extra key arguments. An
// argument may name its spec explicitly (SORT's BY pattern); the ones after it continue from
// there.
struct KeySpecCursor {
  size_t specs = 0;
  size_t next = 0;
  int Take(int explicit_index) {
    if (explicit_index >= 0) {
      next = std::max(next, static_cast<size_t>(explicit_index) + 1);
      return explicit_index;
    }
    size_t at = std::min(next, specs - 1);
    ++next;
    return static_cast<int>(at);
  }
};

void ReplyArgs(ReplyBuilder& r, const std::vector<CommandArg>& args, KeySpecCursor& cursor) {
  r.Array(args.size());
  for (const CommandArg& arg : args) {
    bool key_index = cursor.specs > 0 && (arg.type == "key" || arg.key_spec_index >= 0);
    bool nested = arg.type == "oneof" || arg.type == "block";
    bool display = !arg.display_text.empty();
    // A pure token always has one, even empty (MIGRATE's "" in place of the key).
    bool token = !arg.token.empty() || arg.type == "pure-token";
    std::vector<std::string_view> flags;
    if (arg.optional) flags.push_back("optional");
    if (arg.multiple) flags.push_back("multiple");
    if (arg.multiple_token) flags.push_back("multiple_token");
    r.Map(2 + (display ? 1 : 0) + (key_index ? 1 : 0) + (token ? 1 : 0) + (flags.empty() ? 0 : 1) +
          (nested ? 1 : 0));
    r.Bulk("name");
    r.Bulk(arg.name);
    r.Bulk("type");
    r.Bulk(arg.type);
    if (display) {
      r.Bulk("display_text");
      r.Bulk(arg.display_text);
    }
    if (key_index) {
      r.Bulk("key_spec_index");
      r.Integer(cursor.Take(arg.key_spec_index));
    }
    if (token) {
      // Redis generates its command table with tokens in upper case, whatever the
      // declaration's spelling ("m" of GEODIST's unit reads "M").
      r.Bulk("token");
      r.Bulk(ToUpper(arg.token));
    }
    if (!flags.empty()) {
      r.Bulk("flags");
      ReplyStatusSet(r, flags);
    }
    if (nested) {
      r.Bulk("arguments");
      ReplyArgs(r, arg.subargs, cursor);
    }
  }
}

void ReplyCommandDocs(ReplyBuilder& r, const CommandSpec& spec) {
  bool has_complexity = !spec.complexity.empty();
  bool has_args = !spec.args.empty();
  bool has_subs = !spec.subcommands.empty();
  bool deprecated = !spec.deprecated_since.empty();
  bool has_history = !spec.history.empty();
  r.Map(3 + (has_complexity ? 1 : 0) + (spec.doc_flags != 0 ? 1 : 0) + (deprecated ? 2 : 0) +
        (has_history ? 1 : 0) + (has_args ? 1 : 0) + (has_subs ? 1 : 0));
  r.Bulk("summary");
  r.Bulk(spec.summary);
  r.Bulk("since");
  r.Bulk(spec.since);
  r.Bulk("group");
  r.Bulk(spec.group);
  if (has_complexity) {
    r.Bulk("complexity");
    r.Bulk(spec.complexity);
  }
  if (spec.doc_flags != 0) {
    std::vector<std::string_view> flags;
    if (spec.doc_flags & kDocDeprecated) flags.push_back("deprecated");
    if (spec.doc_flags & kDocSyscmd) flags.push_back("syscmd");
    r.Bulk("doc_flags");
    ReplyStatusSet(r, flags);
  }
  if (deprecated) {
    r.Bulk("deprecated_since");
    r.Bulk(spec.deprecated_since);
    r.Bulk("replaced_by");
    r.Bulk(spec.replaced_by);
  }
  if (has_history) {
    r.Bulk("history");
    r.Array(spec.history.size());
    for (const auto& [version, change] : spec.history) {
      r.Array(2);
      r.Bulk(version);
      r.Bulk(change);
    }
  }
  if (has_args) {
    r.Bulk("arguments");
    KeySpecCursor cursor{spec.key_specs.size()};
    ReplyArgs(r, spec.args, cursor);
  }
  if (has_subs) {
    r.Bulk("subcommands");
    std::vector<const CommandSpec*> subs = SortedSubcommands(spec);
    r.Map(subs.size());
    for (const CommandSpec* sub : subs) {
      r.Bulk(sub->name);
      ReplyCommandDocs(r, *sub);
    }
  }
}

void CommandCommand(CommandContext& ctx) {
  std::vector<const CommandSpec*> all = SortedCommands(ctx.commands());
  ctx.reply.Array(all.size());
  for (const CommandSpec* spec : all) ReplyCommandInfo(ctx.reply, *spec);
}

void CommandCountCommand(CommandContext& ctx) {
  ctx.reply.Integer(static_cast<int64_t>(ctx.commands().all().size()));
}

void CommandInfoCommand(CommandContext& ctx) {
  if (ctx.argc() == 2) {
    CommandCommand(ctx);
    return;
  }
  ctx.reply.Array(ctx.argc() - 2);
  for (size_t i = 2; i < ctx.argc(); ++i) {
    const CommandSpec* spec = ctx.commands().FindByFullName(ctx.arg(i));
    if (spec == nullptr) {
      ctx.reply.Null();
    } else {
      ReplyCommandInfo(ctx.reply, *spec);
    }
  }
}

void CommandDocsCommand(CommandContext& ctx) {
  if (ctx.argc() == 2) {
    std::vector<const CommandSpec*> all = SortedCommands(ctx.commands());
    ctx.reply.Map(all.size());
    for (const CommandSpec* spec : all) {
      ctx.reply.Bulk(spec->name);
      ReplyCommandDocs(ctx.reply, *spec);
    }
    return;
  }
  std::vector<const CommandSpec*> found;
  for (size_t i = 2; i < ctx.argc(); ++i) {
    if (const CommandSpec* spec = ctx.commands().FindByFullName(ctx.arg(i))) found.push_back(spec);
  }
  ctx.reply.Map(found.size());
  for (const CommandSpec* spec : found) {
    ctx.reply.Bulk(spec->name);
    ReplyCommandDocs(ctx.reply, *spec);
  }
}

struct CommandListFilter {
  enum class Kind { kNone, kModule, kAclCat, kPattern } kind = Kind::kNone;
  std::string_view arg;

  bool Matches(const CommandSpec& spec) const {
    switch (kind) {
      case Kind::kNone:
        return true;
      case Kind::kModule:
        return false;  // no modules
      case Kind::kAclCat:
        return (spec.acl_categories & AclCategoryByName(arg)) != 0;
      case Kind::kPattern:
        return GlobMatch(arg, spec.name, true);
    }
    return false;
  }
};

void CommandListCommand(CommandContext& ctx) {
  static constexpr CommandListFilter::Kind kKinds[] = {CommandListFilter::Kind::kModule,
                                                       CommandListFilter::Kind::kAclCat,
                                                       CommandListFilter::Kind::kPattern};
  CommandListFilter filter;
  ArgParser args(ctx, 2);
  // At most one "FILTERBY <kind> <value>", and nothing after it.
  if (args.HasNext()) {
    args.ExpectRemaining(3, 3);
    if (!args.Flag("FILTERBY")) args.SyntaxError();
    const int kind = args.Keyword({"MODULE", "ACLCAT", "PATTERN"});
    if (kind >= 0) filter.kind = kKinds[kind];
    filter.arg = args.Next();
  }
  if (!args.Check()) return;
  std::vector<std::string_view> names;
  for (const CommandSpec* spec : SortedCommands(ctx.commands())) {
    if (filter.Matches(*spec)) names.push_back(spec->name);
    for (const CommandSpec* sub : SortedSubcommands(*spec)) {
      if (filter.Matches(*sub)) names.push_back(sub->name);
    }
  }
  ctx.reply.Array(names.size());
  for (std::string_view name : names) ctx.reply.Bulk(name);
}

void GetKeys(CommandContext& ctx, bool with_flags) {
  std::span<const std::string_view> argv = ctx.argv.subspan(2);
  const CommandSpec* spec = ctx.commands().Find(argv[0]);
  if (spec != nullptr && !spec->subcommands.empty() && argv.size() >= 2) {
    spec = CommandTable::FindSubcommand(*spec, argv[1]);
  }
  if (spec == nullptr) {
    ctx.reply.Error("ERR Invalid command specified");
    return;
  }
  bool has_keys = spec->key_finder != nullptr;
  for (const KeySpec& ks : spec->key_specs) has_keys |= (ks.flags & kKeyNotKey) == 0;
  if (!has_keys) {
    ctx.reply.Error("ERR The command has no key arguments");
    return;
  }
  if (!spec->ArityOk(argv.size())) {
    ctx.reply.Error("ERR Invalid number of arguments specified for command");
    return;
  }
  std::vector<KeyRef> keys;
  if (!spec->GetKeys(argv, &keys) || keys.empty()) {
    if (spec->has(kCmdNoMandatoryKeys)) {
      ctx.reply.Array(0);
    } else {
      ctx.reply.Error("ERR Invalid arguments specified for command");
    }
    return;
  }
  ctx.reply.Array(keys.size());
  for (const KeyRef& key : keys) {
    if (with_flags) {
      ctx.reply.Array(2);
      ctx.reply.Bulk(argv[key.pos]);
      ReplyFlagSet(ctx.reply, key.flags, KeyFlagNames());
    } else {
      ctx.reply.Bulk(argv[key.pos]);
    }
  }
}

void CommandGetKeysCommand(CommandContext& ctx) { GetKeys(ctx, false); }
void CommandGetKeysAndFlagsCommand(CommandContext& ctx) { GetKeys(ctx, true); }

void CommandHelpCommand(CommandContext& ctx) {
  ReplyHelp(ctx, "COMMAND",
            {"(no subcommand)", "    Return details about all Redis commands.", "COUNT",
             "    Return the total number of commands in this Redis server.", "LIST",
             "    Return a list of all commands in this Redis server.", "INFO [<command-name> ...]",
             "    Return details about multiple Redis commands.",
             "    If no command names are given, documentation details for all",
             "    commands are returned.", "DOCS [<command-name> ...]",
             "    Return documentation details about multiple Redis commands.",
             "    If no command names are given, documentation details for all",
             "    commands are returned.", "GETKEYS <full-command>",
             "    Return the keys from a full Redis command.", "GETKEYSANDFLAGS <full-command>",
             "    Return the keys and the access flags from a full Redis command."});
}

// ---------------------------------------------------------------------------------------------
// CLIENT

enum class ClientType { kNormal, kReplica, kPubsub, kMaster };

// Reads a client type (CLIENT LIST TYPE, CLIENT KILL TYPE).
ClientType ReadClientType(ArgParser& args) {
  static constexpr ClientType kTypes[] = {ClientType::kNormal, ClientType::kReplica,
                                          ClientType::kReplica, ClientType::kPubsub,
                                          ClientType::kMaster};
  const std::string_view name = args.Peek();
  const int type = args.Keyword({"NORMAL", "SLAVE", "REPLICA", "PUBSUB", "MASTER"},
                                fmt::format("ERR Unknown client type '{}'", name));
  return type < 0 ? ClientType::kNormal : kTypes[type];
}

// A MONITOR counts as a normal client, as in Redis.
ClientType TypeOf(const Client& client) {
  if (client.has(kClientMaster)) return ClientType::kMaster;
  if (client.has(kClientReplica) && !client.has(kClientMonitor)) return ClientType::kReplica;
  return client.has(kClientPubsub) ? ClientType::kPubsub : ClientType::kNormal;
}

// Names, library names and versions appear unquoted in CLIENT LIST, so they must not contain
// anything that would break splitting it on spaces.
bool ValidClientAttribute(std::string_view value) {
  return std::all_of(value.begin(), value.end(),
                     [](unsigned char c) { return c >= '!' && c <= '~'; });
}

void ClientIdCommand(CommandContext& ctx) {
  ctx.reply.Integer(static_cast<int64_t>(ctx.client.id()));
}

void ClientGetnameCommand(CommandContext& ctx) {
  if (ctx.client.name.empty()) {
    ctx.reply.Null();
  } else {
    ctx.reply.Bulk(ctx.client.name);
  }
}

void ClientSetnameCommand(CommandContext& ctx) {
  if (!ValidClientAttribute(ctx.arg(2))) {
    ctx.reply.Error("ERR Client names cannot contain spaces, newlines or special characters.");
    return;
  }
  ctx.client.name = std::string(ctx.arg(2));
  ctx.reply.Ok();
}

void ClientSetinfoCommand(CommandContext& ctx) {
  std::string_view attr = ctx.arg(2);
  ArgParser args(ctx, 2);
  const int which =
      args.Keyword({"LIB-NAME", "LIB-VER"}, fmt::format("ERR Unrecognized option '{}'", attr));
  if (!args.Check()) return;
  std::string* target = which == 0 ? &ctx.client.lib_name : &ctx.client.lib_ver;
  if (!ValidClientAttribute(ctx.arg(3))) {
    ctx.reply.Error(
        fmt::format("ERR {} cannot contain spaces, newlines or special characters.", attr));
    return;
  }
  *target = std::string(ctx.arg(3));
  ctx.reply.Ok();
}

size_t ArgvBytes(const CommandContext& ctx) {
  size_t bytes = 0;
  for (std::string_view arg : ctx.argv) bytes += arg.size();
  return bytes;
}

void ClientInfoCommand(CommandContext& ctx) {
  ctx.reply.Verbatim(ctx.reports().ClientLine(ctx.client, ArgvBytes(ctx)) + "\n");
}

void ClientListCommand(CommandContext& ctx) {
  std::optional<ClientType> type;
  std::vector<uint64_t> ids;
  ArgParser args(ctx, 2);
  const bool by_id = ctx.argc() > 3 && IsArg(ctx.arg(2), "ID");
  if (ctx.argc() == 4 && args.Flag("TYPE")) {
    type = ReadClientType(args);
  } else if (by_id) {
    args.Seek(3);
    while (args.HasNext()) {
      const int64_t id = args.Int("ERR Invalid client ID");
      if (id > 0) ids.push_back(static_cast<uint64_t>(id));
    }
  } else {
    args.ExpectEnd();
  }
  if (!args.Check()) return;
  std::string text;
  auto add = [&](Client& client) {
    text += ctx.reports().ClientLine(client, &client == &ctx.client ? ArgvBytes(ctx) : 0);
    text += '\n';
  };
  if (by_id) {
    for (uint64_t id : ids) {
      Client* client = ctx.clients().FindClient(id);
      if (client != nullptr && !client->closed) add(*client);
    }
  } else {
    for (const auto& [id, client] : ctx.clients().All()) {
      if (client->closed || (type && TypeOf(*client) != *type)) continue;
      add(*client);
    }
  }
  ctx.reply.Verbatim(text);
}

struct KillFilter {
  std::optional<uint64_t> id;
  std::optional<ClientType> type;
  std::optional<std::string_view> addr;
  std::optional<std::string_view> laddr;
  std::optional<std::string_view> user;
  std::optional<int64_t> max_age;
  bool skip_me = true;

  bool Matches(const Client& client, const Client& self, int64_t now_ms) const {
    if (id && client.id() != *id) return false;
    if (type && TypeOf(client) != *type) return false;
    if (addr && client.addr != *addr) return false;
    if (laddr && client.laddr != *laddr) return false;
    if (user && client.user() != *user) return false;
    if (max_age && (now_ms - client.created_ms) / 1000 < *max_age) return false;
    if (skip_me && &client == &self) return false;
    return true;
  }
};

// Parses "CLIENT KILL <filter> <value> ...". False after replying an error.
bool ParseKillFilter(CommandContext& ctx, KillFilter* filter) {
  ArgParser args(ctx, 2);
  while (args.HasNext()) {
    if (args.OptionName("ID")) {
      filter->id = static_cast<uint64_t>(args.Positive("ERR client-id should be greater than 0"));
    } else if (args.OptionName("TYPE")) {
      filter->type = ReadClientType(args);
    } else if (args.OptionName("ADDR")) {
      filter->addr = args.Next();
    } else if (args.OptionName("LADDR")) {
      filter->laddr = args.Next();
    } else if (args.OptionName("USER")) {
      const std::string_view user = args.Next();
      if (ctx.acl().Find(user) == nullptr) args.Fail(fmt::format("ERR No such user '{}'", user));
      filter->user = user;
    } else if (args.OptionName("SKIPME")) {
      filter->skip_me = args.Keyword({"YES", "NO"}) == 0;
    } else if (args.OptionName("MAXAGE")) {
      filter->max_age = args.Int("ERR maxage is not an integer or out of range");
    } else {
      args.SyntaxError();
    }
  }
  return args.Check();
}

void KillClient(CommandContext& ctx, Client& victim) {
  // The killer's own connection still gets its reply.
  if (&victim == &ctx.client) {
    ctx.clients().CloseAfterReply(victim);
  } else {
    ctx.clients().CloseClient(victim);
  }
}

void ClientKillCommand(CommandContext& ctx) {
  if (ctx.argc() == 3) {
    // The old form: CLIENT KILL ip:port.
    for (const auto& [id, client] : ctx.clients().All()) {
      if (client->closed || client->addr != ctx.arg(2)) continue;
      ctx.reply.Ok();
      KillClient(ctx, *client);
      return;
    }
    ctx.reply.Error("ERR No such client");
    return;
  }
  KillFilter filter;
  if (!ParseKillFilter(ctx, &filter)) return;
  int64_t now = NowMs();
  std::vector<Client*> victims;
  for (const auto& [id, client] : ctx.clients().All()) {
    if (!client->closed && filter.Matches(*client, ctx.client, now))
      victims.push_back(client.get());
  }
  ctx.reply.Integer(static_cast<int64_t>(victims.size()));
  for (Client* victim : victims) KillClient(ctx, *victim);
}

void ClientReplyCommand(CommandContext& ctx) {
  Client& c = ctx.client;
  ArgParser args(ctx, 2);
  const int mode = args.Keyword({"ON", "OFF", "SKIP"});
  if (!args.Check()) return;
  if (mode == 0) {
    c.clear(kClientReplyOff);
    c.clear(kClientReplySkip);
    c.clear(kClientReplySkipNext);
    ctx.reply.Ok();
  } else if (mode == 1) {
    c.set(kClientReplyOff);
  } else if (!c.has(kClientReplyOff)) {
    c.set(kClientReplySkipNext);
  }
}

// CLIENT PAUSE timeout [WRITE | ALL]: commands of the paused kind wait until the pause ends.
void ClientPauseCommand(CommandContext& ctx) {
  // Redis checks the mode before the timeout.
  ArgParser args(ctx, 3);
  uint32_t actions = kPauseAll;
  if (args.ExpectRemaining(0, 1) && args.HasNext()) {
    int mode = args.OneOf({"WRITE", "ALL"});
    if (mode < 0) args.Fail("ERR CLIENT PAUSE mode must be WRITE or ALL");
    if (mode == 0) actions = kPauseWrite;
  }
  args.Seek(2);
  // Range-checked against the unix clock as Redis does; the pause itself runs on the monotonic one.
  const int64_t timeout_ms = args.TimeoutMs(ctx.db.now_ms());
  if (!args.Check()) return;
  const int64_t now_ms = MonotonicUs() / 1000;
  const int64_t end = timeout_ms > INT64_MAX - now_ms ? INT64_MAX : now_ms + timeout_ms;
  ctx.client_pause().Pause(PausePurpose::kClient, end, actions);
  ctx.reply.Ok();
}

void ClientUnpauseCommand(CommandContext& ctx) {
  ctx.client_pause().Unpause(PausePurpose::kClient);
  ctx.reply.Ok();
}

// CLIENT NO-EVICT / NO-TOUCH on|off.
void ClientUnblockCommand(CommandContext& ctx) {
  ArgParser args(ctx, 2);
  args.ExpectRemaining(0, 2);
  const int64_t id = args.Int();
  UnblockReason reason = UnblockReason::kTimeout;
  if (args.HasNext()) {
    int which = args.OneOf({"TIMEOUT", "ERROR"});
    if (which < 0) args.Fail("ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR");
    if (which == 1) reason = UnblockReason::kError;
  }
  if (!args.Check()) return;
  Client* target = ctx.clients().FindClient(static_cast<uint64_t>(id));
  bool unblocked = target != nullptr && !target->closed && target->has(kClientBlocked) &&
                   ctx.blocking().UnblockClient(*target, reason, {});
  ctx.reply.Integer(unblocked ? 1 : 0);
}

void SetClientFlagFromArg(CommandContext& ctx, ClientFlag flag) {
  ArgParser args(ctx, 2);
  const int on_off = args.Keyword({"ON", "OFF"});
  if (!args.Check()) return;
  if (on_off == 0) {
    ctx.client.set(flag);
  } else {
    ctx.client.clear(flag);
  }
  ctx.reply.Ok();
}

void ClientNoEvictCommand(CommandContext& ctx) { SetClientFlagFromArg(ctx, kClientNoEvict); }
void ClientNoTouchCommand(CommandContext& ctx) { SetClientFlagFromArg(ctx, kClientNoTouch); }

// CLIENT TRACKING ON|OFF [REDIRECT id] [PREFIX p ...] [BCAST] [OPTIN] [OPTOUT] [NOLOOP]
// (src/server/tracking.h).
void ClientTrackingCommand(CommandContext& ctx) {
  TrackingOptions options;
  ArgParser args(ctx, 3);
  std::string_view prefix;
  while (args.HasNext()) {
    if (args.OptionName("REDIRECT")) {
      if (options.redirect != 0) {
        args.Fail("ERR A client can only redirect to a single other client");
        break;
      }
      const int64_t id = args.Int();
      if (!args.ok()) break;
      Client* target = ctx.clients().FindClient(static_cast<uint64_t>(id));
      if (target == nullptr || target->closed) {
        args.Fail("ERR The client ID you want redirect to does not exist");
        break;
      }
      options.redirect = static_cast<uint64_t>(id);
    } else if (args.Flag("BCAST")) {
      options.bcast = true;
    } else if (args.Flag("OPTIN")) {
      options.optin = true;
    } else if (args.Flag("OPTOUT")) {
      options.optout = true;
    } else if (args.Flag("NOLOOP")) {
      options.noloop = true;
    } else if (args.Option("PREFIX", &prefix)) {
      options.prefixes.push_back(prefix);
    } else {
      args.SyntaxError();
    }
  }
  // ON | OFF is looked at once the options parsed.
  args.Seek(2);
  const bool on = args.Keyword({"ON", "OFF"}) == 0;
  if (!args.Check()) return;
  if (on) {
    if (std::string err = ctx.tracking().Enable(ctx.client, options); !err.empty()) {
      ctx.reply.Error(err);
      return;
    }
  } else {
    ctx.tracking().Disable(ctx.client);
  }
  ctx.reply.Ok();
}

void ClientCachingCommand(CommandContext& ctx) {
  // Redis checks that tracking is on before it looks at the argument.
  ArgParser args(ctx, 2);
  const bool yes = ctx.tracking().StateOf(ctx.client) != nullptr ? args.Keyword({"YES", "NO"}) == 0
                                                                 : args.Flag("YES");
  if (!args.Check()) return;
  if (std::string err = ctx.tracking().Caching(ctx.client, yes); !err.empty()) {
    ctx.reply.Error(err);
    return;
  }
  ctx.reply.Ok();
}

void ClientGetredirCommand(CommandContext& ctx) {
  const TrackingState* s = ctx.tracking().StateOf(ctx.client);
  ctx.reply.Integer(s == nullptr ? -1 : static_cast<int64_t>(s->redirect));
}

void ClientTrackinginfoCommand(CommandContext& ctx) {
  const TrackingState* s = ctx.tracking().StateOf(ctx.client);
  std::vector<std::string_view> flags{s != nullptr ? "on" : "off"};
  if (s != nullptr) {
    if (s->bcast) flags.push_back("bcast");
    if (s->optin) flags.push_back("optin");
    if (s->optin && s->caching) flags.push_back("caching-yes");
    if (s->optout) flags.push_back("optout");
    if (s->optout && s->caching) flags.push_back("caching-no");
    if (s->noloop) flags.push_back("noloop");
    if (s->broken_redirect) flags.push_back("broken_redirect");
  }
  ReplyBuilder& r = ctx.reply;
  r.Map(3);
  r.Bulk("flags");
  r.Set(flags.size());
  for (std::string_view f : flags) r.Bulk(f);
  r.Bulk("redirect");
  r.Integer(s == nullptr ? -1 : static_cast<int64_t>(s->redirect));
  r.Bulk("prefixes");
  r.Array(s == nullptr ? 0 : s->prefixes.size());
  if (s != nullptr) {
    for (const std::string& p : s->prefixes) r.Bulk(p);
  }
}

void ClientHelpCommand(CommandContext& ctx) {
  ReplyHelp(ctx, "CLIENT",
            {"CACHING (YES|NO)",
             "    Enable/disable tracking of the keys for next command in OPTIN/OPTOUT modes.",
             "GETREDIR",
             "    Return the client ID we are redirecting to when tracking is enabled.",
             "GETNAME",
             "    Return the name of the current connection.",
             "ID",
             "    Return the ID of the current connection.",
             "INFO",
             "    Return information about the current client connection.",
             "KILL <ip:port>",
             "    Kill connection made from <ip:port>.",
             "KILL <option> <value> [<option> <value> [...]]",
             "    Kill connections. Options are:",
             "    * ADDR (<ip:port>|<unixsocket>:0)",
             "      Kill connections made from the specified address",
             "    * LADDR (<ip:port>|<unixsocket>:0)",
             "      Kill connections made to specified local address",
             "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
             "      Kill connections by type.",
             "    * USER <username>",
             "      Kill connections authenticated by <username>.",
             "    * SKIPME (YES|NO)",
             "      Skip killing current connection (default: yes).",
             "    * ID <client-id>",
             "      Kill connections by client id.",
             "    * MAXAGE <maxage>",
             "      Kill connections older than the specified age.",
             "LIST [options ...]",
             "    Return information about client connections. Options:",
             "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
             "      Return clients of specified type.",
             "REPLY (ON|OFF|SKIP)",
             "    Control the replies sent to the current connection.",
             "SETNAME <name>",
             "    Assign the name <name> to the current connection.",
             "SETINFO <option> <value>",
             "    Set client meta attr. Options are:",
             "    * LIB-NAME: the client lib name.",
             "    * LIB-VER: the client lib version.",
             "TRACKING (ON|OFF) [REDIRECT <id>] [BCAST] [PREFIX <prefix> [...]]",
             "         [OPTIN] [OPTOUT] [NOLOOP]",
             "    Control server assisted client side caching.",
             "TRACKINGINFO",
             "    Report tracking status for the current connection.",
             "UNBLOCK <clientid> [TIMEOUT|ERROR]",
             "    Unblock the specified blocked client.",
             "NO-EVICT (ON|OFF)",
             "    Protect current client connection from eviction.",
             "NO-TOUCH (ON|OFF)",
             "    Will not touch LRU/LFU stats when this mode is on."});
}

// ---------------------------------------------------------------------------------------------
// INFO, MONITOR

void InfoCommand(CommandContext& ctx) {
  ctx.reply.Verbatim(ctx.reports().Info(ctx.argv.subspan(1)));
}

void MonitorCommand(CommandContext& ctx) {
  // Inside EXEC the client expects one reply per command, which a monitor stream would break.
  if (ctx.in_exec) {
    ctx.reply.Error("ERR MONITOR isn't allowed for DENY BLOCKING client");
    return;
  }
  if (ctx.client.has(kClientMonitor)) return;
  ctx.monitors().Add(ctx.client);
  ctx.reply.Ok();
}

}  // namespace

void RegisterIntrospectionCommands(CommandTable& table) {
  constexpr const char* kHelpSummary = "Returns helpful text about the different subcommands.";

  table.Add({"command", -1, kCmdLoading | kCmdStale, Keys(), kAclConnection, "server", "2.8.13",
             "Returns detailed information about all commands.", "", CommandCommand,
             "O(N) where N is the total number of Redis commands"});
  table.AddSubcommand(
      "command", {"count", 2, kCmdLoading | kCmdStale, Keys(), kAclConnection, "server", "2.8.13",
                  "Returns a count of commands.", "", CommandCountCommand, "O(1)"});
  table.AddSubcommand(
      "command", {"docs", -2, kCmdLoading | kCmdStale, Keys(), kAclConnection, "server", "7.0.0",
                  "Returns documentary information about one, multiple or all commands.",
                  "[command-name [command-name ...]]", CommandDocsCommand,
                  "O(N) where N is the number of commands to look up"});
  table.AddSubcommand(
      "command",
      {"getkeys", -3, kCmdLoading | kCmdStale, Keys(), kAclConnection, "server", "2.8.13",
       "Extracts the key names from an arbitrary command.", "command [arg [arg ...]]",
       CommandGetKeysCommand, "O(N) where N is the number of arguments to the command"});
  table.AddSubcommand(
      "command",
      {"getkeysandflags", -3, kCmdLoading | kCmdStale, Keys(), kAclConnection, "server", "7.0.0",
       "Extracts the key names and access flags for an arbitrary command.", "command [arg ...]",
       CommandGetKeysAndFlagsCommand, "O(N) where N is the number of arguments to the command"});
  table.AddSubcommand("command", {"help", 2, kCmdLoading | kCmdStale, Keys(), kAclConnection,
                                  "server", "5.0.0", kHelpSummary, "", CommandHelpCommand, "O(1)"});
  table.AddSubcommand(
      "command", {"info", -2, kCmdLoading | kCmdStale, Keys(), kAclConnection, "server", "2.8.13",
                  "Returns information about one, multiple or all commands.",
                  "[command-name [command-name ...]]", CommandInfoCommand,
                  "O(N) where N is the number of commands to look up"});
  table.AddSubcommand(
      "command", {"list", -2, kCmdLoading | kCmdStale, Keys(), kAclConnection, "server", "7.0.0",
                  "Returns a list of command names.",
                  "[FILTERBY filterby=<MODULE module-name | ACLCAT category | PATTERN "
                  "pattern>]",
                  CommandListCommand, "O(N) where N is the total number of Redis commands"});

  table.Add({"client", -2, kCmdKeepsCaching, Keys(), 0, "connection", "2.4.0",
             "A container for client connection commands.", "", nullptr, "Depends on subcommand."});
  table.AddSubcommand(
      "client",
      {"caching", 3, kCmdNoScript | kCmdLoading | kCmdStale, Keys(), kAclConnection, "connection",
       "6.0.0", "Instructs the server whether to track the keys in the next request.",
       "mode=<YES | NO>", ClientCachingCommand, "O(1)"});
  table.AddSubcommand(
      "client",
      {"getname", 2, kCmdNoScript | kCmdLoading | kCmdStale, Keys(), kAclConnection, "connection",
       "2.6.9", "Returns the name of the connection.", "", ClientGetnameCommand, "O(1)"});
  table.AddSubcommand(
      "client",
      {"getredir", 2, kCmdNoScript | kCmdLoading | kCmdStale, Keys(), kAclConnection, "connection",
       "6.0.0",
       "Returns the client ID to which the connection's tracking notifications are redirected.", "",
       ClientGetredirCommand, "O(1)"});
  table.AddSubcommand(
      "client", {"help", 2, kCmdLoading | kCmdStale, Keys(), kAclConnection, "connection", "5.0.0",
                 kHelpSummary, "", ClientHelpCommand, "O(1)"});
  table.AddSubcommand(
      "client",
      {"id", 2, kCmdNoScript | kCmdLoading | kCmdStale, Keys(), kAclConnection, "connection",
       "5.0.0", "Returns the unique client ID of the connection.", "", ClientIdCommand, "O(1)"});
  table.AddSubcommand(
      "client",
      {"info", 2, kCmdNoScript | kCmdLoading | kCmdStale, Keys(), kAclConnection, "connection",
       "6.2.0", "Returns information about the connection.", "", ClientInfoCommand, "O(1)"});
  table.AddSubcommand("client",
                      {"kill", -3, kCmdAdmin | kCmdNoScript | kCmdLoading | kCmdStale, Keys(),
                       kAclConnection, "connection", "2.4.0", "Terminates open connections.",
                       "filter=<old-format=ip:port | new-format=<[ID client-id] | [TYPE "
                       "client-type=<'normal' | 'master' | 'slave' | 'replica' | 'pubsub'>] | "
                       "[USER username] | [ADDR addr=ip:port] | [LADDR laddr=ip:port] | [SKIPME "
                       "skipme=<YES | NO>] | [MAXAGE maxage:integer]> ...>",
                       ClientKillCommand, "O(N) where N is the number of client connections"});
  table.AddSubcommand("client",
                      {"list", -2, kCmdAdmin | kCmdNoScript | kCmdLoading | kCmdStale, Keys(),
                       kAclConnection, "connection", "2.4.0", "Lists open connections.",
                       "[TYPE client-type=<'normal' | 'master' | 'replica' | 'pubsub'>] [ID "
                       "client-id ...]",
                       ClientListCommand, "O(N) where N is the number of client connections"});
  table.AddSubcommand("client", {"no-evict", 3, kCmdAdmin | kCmdNoScript | kCmdLoading | kCmdStale,
                                 Keys(), kAclConnection, "connection", "7.0.0",
                                 "Sets the client eviction mode of the connection.",
                                 "enabled=<ON | OFF>", ClientNoEvictCommand, "O(1)"});
  table.AddSubcommand(
      "client",
      {"no-touch", 3, kCmdNoScript | kCmdLoading | kCmdStale, Keys(), kAclConnection, "connection",
       "7.2.0", "Controls whether commands sent by the client affect the LRU/LFU of accessed keys.",
       "enabled=<ON | OFF>", ClientNoTouchCommand, "O(1)"});
  table.AddSubcommand("client", {"unblock", -3, kCmdAdmin | kCmdNoScript | kCmdLoading | kCmdStale,
                                 Keys(), kAclConnection, "connection", "5.0.0",
                                 "Unblocks a client blocked by a blocking command from a different "
                                 "connection.",
                                 "client-id [unblock-type=<TIMEOUT | ERROR>]", ClientUnblockCommand,
                                 "O(log N) where N is the number of client connections"});
  table.AddSubcommand("client",
                      {"pause", -3, kCmdAdmin | kCmdNoScript | kCmdLoading | kCmdStale, Keys(),
                       kAclConnection, "connection", "3.0.0", "Suspends commands processing.",
                       "timeout:integer [mode=<WRITE | ALL>]", ClientPauseCommand, "O(1)"});
  table.AddSubcommand(
      "client",
      {"unpause", 2, kCmdAdmin | kCmdNoScript | kCmdLoading | kCmdStale, Keys(), kAclConnection,
       "connection", "6.2.0", "Resumes processing of clients that were paused.", "",
       ClientUnpauseCommand, "O(N) Where N is the number of paused clients"});
  table.AddSubcommand("client",
                      {"reply", 3, kCmdNoScript | kCmdLoading | kCmdStale, Keys(), kAclConnection,
                       "connection", "3.2.0", "Instructs the server whether to reply to commands.",
                       "action=<ON | OFF | SKIP>", ClientReplyCommand, "O(1)"});
  table.AddSubcommand(
      "client", {"setinfo", 4, kCmdNoScript | kCmdLoading | kCmdStale, Keys(), kAclConnection,
                 "connection", "7.2.0", "Sets information specific to the client or connection.",
                 "attr=<'lib-name' libname | 'lib-ver' libver>", ClientSetinfoCommand, "O(1)"});
  table.AddSubcommand("client", {"setname", 3, kCmdNoScript | kCmdLoading | kCmdStale, Keys(),
                                 kAclConnection, "connection", "2.6.9", "Sets the connection name.",
                                 "connection-name", ClientSetnameCommand, "O(1)"});
  table.AddSubcommand(
      "client",
      {"tracking", -3, kCmdNoScript | kCmdLoading | kCmdStale, Keys(), kAclConnection, "connection",
       "6.0.0", "Controls server-assisted client-side caching for the connection.",
       "status=<ON | OFF> [REDIRECT client-id] [PREFIX prefix [PREFIX prefix "
       "...]] [bcast=BCAST] [optin=OPTIN] [optout=OPTOUT] [noloop=NOLOOP]",
       ClientTrackingCommand, "O(1). Some options may introduce additional complexity."});
  table.AddSubcommand(
      "client",
      {"trackinginfo", 2, kCmdNoScript | kCmdLoading | kCmdStale, Keys(), kAclConnection,
       "connection", "6.2.0",
       "Returns information about server-assisted client-side caching for the connection.", "",
       ClientTrackinginfoCommand, "O(1)"});

  table.Add({"info", -1, kCmdLoading | kCmdStale, Keys(), kAclDangerous, "server", "1.0.0",
             "Returns information and statistics about the server.", "[section [section ...]]",
             InfoCommand, "O(1)"});

  table.Add({"monitor", 1, kCmdAdmin | kCmdNoScript | kCmdLoading | kCmdStale, Keys(), 0, "server",
             "1.0.0", "Listens for all requests received by the server in real-time.", "",
             MonitorCommand, ""});
}

}  // namespace vireo
