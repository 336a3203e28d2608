// Persistence commands: SAVE, BGSAVE, BGREWRITEAOF, DUMP, RESTORE.
#include <string>

#include "commands/families.h"
#include "commands/helpers.h"
#include "core/arg_parser.h"
#include "core/command_table.h"
#include "core/config.h"
#include "persistence/aof.h"
#include "persistence/rdb.h"
#include "persistence/snapshot.h"
#include "security/acl.h"
#include "server/client.h"
#include "server/command_context.h"
#include "server/debug_settings.h"
#include "server/memory_view.h"
#include "util/strings.h"

namespace vireo {

namespace {

void SaveCommand(CommandContext& ctx) {
  if (RdbChildActive(ctx.persistence())) {
    ctx.reply.Error("ERR Background save already in progress");
    return;
  }
  ++RdbStateOf(ctx.persistence()).saves;
  if (RdbSaveNow(ctx.persistence()).empty()) {
    ctx.reply.Ok();
  } else {
    ctx.reply.Error("ERR");
  }
}

void BgsaveCommand(CommandContext& ctx) {
  ArgParser args(ctx);
  args.ExpectRemaining(0, 1);
  const bool schedule = args.ok() && args.Flag("SCHEDULE");
  args.ExpectEnd();
  if (!args.Check()) return;
  RdbState& st = RdbStateOf(ctx.persistence());
  if (RdbChildActive(ctx.persistence())) {
    ctx.reply.Error("ERR Background save already in progress");
  } else if (OtherChildActive(ctx.persistence()) || ctx.in_exec) {
    if (schedule || ctx.in_exec) {
      st.bgsave_scheduled = true;
      ctx.reply.SimpleString("Background saving scheduled");
    } else {
      ctx.reply.Error(
          "ERR Another child process is active (AOF?): can't BGSAVE right now. Use BGSAVE "
          "SCHEDULE in order to schedule a BGSAVE whenever possible.");
    }
  } else if (RdbBackgroundSave(ctx.persistence()).empty()) {
    ctx.reply.SimpleString("Background saving started");
  } else {
    ctx.reply.Error("ERR");
  }
}

void DumpCommand(CommandContext& ctx) {
  DbEntry* entry = LookupRead(ctx, ctx.arg(1));
  if (entry == nullptr) {
    ctx.reply.Null();
    return;
  }
  ctx.reply.Bulk(RdbDumpValue(entry->value, ctx.cfg().rdbcompression));
}

struct RestoreArgs {
  bool replace = false;
  bool absttl = false;
  int64_t idletime = -1;
  int64_t freq = -1;
  int64_t ttl = 0;
};

// Options first, then the key, then the TTL: Redis's order of checks.
bool ParseRestoreOptions(CommandContext& ctx, RestoreArgs* a) {
  ArgParser args(ctx, 4);
  while (args.HasNext()) {
    if (args.Flag("REPLACE")) {
      a->replace = true;
    } else if (args.Flag("ABSTTL")) {
      a->absttl = true;
    } else if (a->freq == -1 && args.OptionName("IDLETIME")) {
      a->idletime = args.IntAtLeast(0, "ERR Invalid IDLETIME value, must be >= 0");
    } else if (a->idletime == -1 && args.OptionName("FREQ")) {
      const int64_t freq = args.Int();
      if (args.ok() && (freq < 0 || freq > 255)) {
        args.Fail("ERR Invalid FREQ value, must be >= 0 and <= 255");
      }
      a->freq = freq;
    } else {
      args.SyntaxError();
    }
  }
  return args.Check();
}

// sanitize-dump-payload: "yes" validates every payload deeply, "clients" every payload but
// the ones the server must obey (the AOF being replayed, its master's stream) and those of
// users flagged skip-sanitize-payload, "no" only what memory safety needs.
bool DeepSanitize(CommandContext& ctx) {
  const std::string& mode = ctx.cfg().sanitize_dump_payload;
  if (mode != "clients") return mode == "yes";
  const AclUser* user = ctx.client.acl_user();
  return !ctx.aof().loading() && !ctx.client.has(kClientMaster) &&
         !(user != nullptr && (user->flags() & kAclUserSkipSanitize) != 0);
}

void RestoreCommand(CommandContext& ctx) {
  RestoreArgs a;
  if (!ParseRestoreOptions(ctx, &a)) return;
  std::string_view key = ctx.arg(1);
  if (!a.replace && ctx.db.Find(key) != nullptr) {
    ctx.reply.Error("BUSYKEY Target key name already exists.");
    return;
  }
  ArgParser args(ctx, 2);
  const int64_t ttl = args.IntAtLeast(0, "ERR Invalid TTL value, must be >= 0");
  if (!args.Check()) return;
  Value value;
  std::string error;
  if (!RdbRestoreValue(ctx.cfg(), ctx.arg(3), &value, &error, DeepSanitize(ctx),
                       !ctx.debug_settings().skip_checksum_validation)) {
    ctx.reply.Error(error);
    return;
  }
  bool deleted = a.replace && ctx.db.Delete(key);
  int64_t when = ttl;
  if (when != 0 && !a.absttl) when += ctx.db.now_ms();
  if (when != 0 && when <= ctx.db.now_ms()) {
    // Already expired: the key is not created, but a replaced one is gone.
    if (deleted) {
      // Replicas delete it the way this server did (Redis: lazyfree-lazy-server-del).
      ctx.PropagateInstead(
          {ctx.cfg().lazyfree_lazy_server_del ? "UNLINK" : "DEL", std::string(key)});
      Notify(ctx, kNotifyGeneric, "del", key);
      KeyWritten(ctx, key);
    } else {
      ctx.PropagateNothing();
    }
    ctx.reply.Ok();
    return;
  }
  DbEntry* entry = ctx.db.Add(key, std::move(value));
  // IDLETIME counts under an LRU-or-other policy, FREQ under an LFU one; the other is ignored.
  uint32_t clock;
  if (ClockFromHints(ctx.memory().keyspace_options().access, a.freq, a.idletime, ctx.db.now_ms(),
                     &clock)) {
    entry->value.set_access_clock(clock);
  }
  if (when != 0) {
    ctx.db.SetExpire(entry, when);
    if (!a.absttl) {
      // Replicas and the AOF get the absolute time, so a replay can't extend the TTL.
      std::vector<std::string> argv(ctx.argv.begin(), ctx.argv.end());
      argv[2] = Int64ToString(when);
      argv.push_back("ABSTTL");
      ctx.PropagateInstead(std::move(argv));
    }
  }
  Notify(ctx, kNotifyGeneric, "restore", key);
  KeyWritten(ctx, key);
  ctx.reply.Ok();
}

void BgRewriteAofCommand(CommandContext& ctx) {
  switch (ctx.aof().RequestRewrite(ctx.in_exec)) {
    case Aof::RewriteRequest::kInProgress:
      ctx.reply.Error("ERR Background append only file rewriting already in progress");
      break;
    case Aof::RewriteRequest::kScheduled:
      ctx.reply.SimpleString("Background append only file rewriting scheduled");
      break;
    case Aof::RewriteRequest::kStarted:
      ctx.reply.SimpleString("Background append only file rewriting started");
      break;
    case Aof::RewriteRequest::kFailed:
      ctx.reply.Error(
          "ERR Can't execute an AOF background rewriting. Please check the server logs for more "
          "information.");
      break;
  }
}

}  // namespace

void RegisterPersistenceCommands(CommandTable& table) {
  constexpr const char* kRestoreComplexity =
      "O(1) to create the new key and additional O(N*M) to reconstruct the serialized value, "
      "where N is the number of Redis objects composing the value and M their average size. For "
      "small string values the time complexity is thus O(1)+O(1*M) where M is small, so simply "
      "O(1). However for sorted set values the complexity is O(N*M*log(N)) because inserting "
      "values into sorted sets is O(log(N)).";
  table.Add({"save", 1, kCmdAdmin | kCmdNoScript | kCmdNoAsyncLoading | kCmdNoMulti, Keys(), 0,
             "server", "1.0.0", "Synchronously saves the database(s) to disk.", "", SaveCommand,
             "O(N) where N is the total number of keys in all databases"});
  table.Add({"bgsave", -1, kCmdAdmin | kCmdNoScript | kCmdNoAsyncLoading, Keys(), 0, "server",
             "1.0.0", "Asynchronously saves the database(s) to disk.", "[SCHEDULE]", BgsaveCommand,
             "O(1)"});
  table.Add({"bgrewriteaof", 1, kCmdAdmin | kCmdNoScript | kCmdNoAsyncLoading, Keys(), 0, "server",
             "1.0.0", "Asynchronously rewrites the append-only file to disk.", "",
             BgRewriteAofCommand, "O(1)"});
  table.Add({"dump", 2, kCmdReadonly, Keys(KeyAt(1, kKeyRO | kKeyAccess)), kAclKeyspace, "generic",
             "2.6.0", "Returns a serialized representation of the value stored at a key.", "key",
             DumpCommand,
             "O(1) to access the key and additional O(N*M) to serialize it, where N is the number "
             "of Redis objects composing the value and M their average size. For small string "
             "values the time complexity is thus O(1)+O(1*M) where M is small, so simply O(1)."});
  table.Add({"restore", -4, kCmdWrite | kCmdDenyOom, Keys(KeyAt(1, kKeyOW | kKeyUpdate)),
             kAclKeyspace | kAclDangerous, "generic", "2.6.0",
             "Creates a key from the serialized representation of a value.",
             "key ttl:integer serialized-value [REPLACE] [ABSTTL] [IDLETIME seconds] "
             "[FREQ frequency:integer]",
             RestoreCommand, kRestoreComplexity});
  // MIGRATE's form of RESTORE in cluster mode (src/commands/migrate.cc): the same command,
  // flagged "asking" so a node importing the key's slot accepts it without ASKING.
  table.Add({"restore-asking", -4, kCmdWrite | kCmdDenyOom | kCmdAsking,
             Keys(KeyAt(1, kKeyOW | kKeyUpdate)), kAclKeyspace | kAclDangerous, "server", "3.0.0",
             "An internal command for migrating keys in a cluster.",
             "key ttl:integer serialized-value [REPLACE] [ABSTTL] [IDLETIME seconds] "
             "[FREQ frequency:integer]",
             RestoreCommand, kRestoreComplexity});
}

}  // namespace vireo
