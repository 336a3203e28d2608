// MIGRATE: moves keys to another instance (vireo or Redis) as RESTORE commands carrying DUMP
// payloads, over a cached connection, then deletes them here (propagated as DEL) unless COPY.
// In cluster mode the target gets RESTORE-ASKING, so it accepts keys of a slot it imports.
// Like Redis, the transfer is synchronous: the server waits for the target, within `timeout`.
#include <algorithm>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "cluster/migrate_conn.h"
#include "commands/families.h"
#include "commands/helpers.h"
#include "core/arg_parser.h"
#include "core/command_table.h"
#include "core/config.h"
#include "persistence/rdb.h"
#include "protocol/resp_command.h"
#include "security/tls.h"
#include "server/client.h"
#include "server/cluster_services.h"
#include "server/command_context.h"
#include "server/notify.h"
#include "util/clock.h"
#include "util/strings.h"

namespace vireo {
namespace {

using cluster::MigrateConnections;

struct MigrateArgs {
  bool copy = false;
  bool replace = false;
  std::string_view username;  // AUTH2
  std::string_view password;  // AUTH / AUTH2; empty: no authentication
  bool auth = false;
  size_t first_key = 3;
  size_t num_keys = 1;
  int64_t timeout_ms = 0;
  int64_t dbid = 0;
};

// Options first, then timeout and db: Redis's order of checks.
bool ParseMigrateArgs(CommandContext& ctx, MigrateArgs* a) {
  ArgParser args(ctx, 6);
  while (args.HasNext()) {
    if (args.Flag("COPY")) {
      a->copy = true;
    } else if (args.Flag("REPLACE")) {
      a->replace = true;
    } else if (args.Flag("AUTH")) {
      // A missing value fails Next() with a syntax error.
      a->auth = true;
      a->password = args.Next();
    } else if (args.Flag("AUTH2")) {
      a->auth = true;
      a->username = args.Next();
      a->password = args.Next();
    } else if (args.Flag("KEYS")) {
      if (!ctx.arg(3).empty()) {
        args.Fail(
            "ERR When using MIGRATE KEYS option, the key argument must be set to the empty "
            "string");
        break;
      }
      a->first_key = args.pos();
      a->num_keys = args.remaining();
      break;  // the rest are keys
    } else {
      args.SyntaxError();
    }
  }
  if (!args.Check()) return false;
  ArgParser numbers(ctx, 5);
  a->timeout_ms = numbers.Int();
  if (!numbers.Check()) return false;
  numbers.Seek(4);
  a->dbid = numbers.Int();
  if (!numbers.Check()) return false;
  if (a->timeout_ms <= 0) a->timeout_ms = 1000;
  // Deadlines are computed in microseconds: a timeout beyond a century changes nothing and
  // must not overflow them.
  a->timeout_ms = std::min<int64_t>(a->timeout_ms, int64_t{100} * 365 * 24 * 3600 * 1000);
  return true;
}

// A key that goes: its name and what is sent for it.
struct Outgoing {
  std::string_view key;
  DbEntry* entry;
};

void MigrateCommand(CommandContext& ctx) {
  MigrateArgs a;
  if (!ParseMigrateArgs(ctx, &a)) return;
  // Keys that vanished (expired, say) are no error; none at all is NOKEY.
  std::vector<Outgoing> outgoing;
  for (size_t i = 0; i < a.num_keys; ++i) {
    std::string_view key = ctx.arg(a.first_key + i);
    if (DbEntry* entry = LookupRead(ctx, key)) outgoing.push_back({key, entry});
  }
  if (outgoing.empty()) {
    ctx.PropagateNothing();
    ctx.reply.Raw("+NOKEY\r\n");
    return;
  }
  MigrateConnections& pool = ctx.cluster_services().migrate_connections();
  const std::string_view host = ctx.arg(1), port = ctx.arg(2);
  const bool cluster = ctx.cfg().cluster_enabled;
  const bool compress = ctx.cfg().rdbcompression;
  std::vector<std::string> deleted{"DEL"};
  // A cached connection may have been closed by the target meanwhile: one retry on a fresh
  // one, unless the failure was a timeout or a reply already came.
  bool may_retry = true;
  while (true) {
    // tls-cluster yes: MIGRATE speaks TLS to its target, as Redis's connTypeOfCluster().
    MigrateConnections::Conn* conn = pool.Get(host, port, a.timeout_ms, NowMs() / 1000,
                                              ctx.cfg().tls_cluster ? &ctx.tls() : nullptr);
    if (conn == nullptr) {
      ctx.PropagateNothing();
      ctx.reply.Error("IOERR error or timeout connecting to the client");
      return;
    }
    std::string out;
    if (a.auth) {
      if (a.username.empty()) {
        AppendRespCommand(&out, std::initializer_list<std::string_view>{"AUTH", a.password});
      } else {
        AppendRespCommand(&out,
                          std::initializer_list<std::string_view>{"AUTH", a.username, a.password});
      }
    }
    const bool select = conn->last_dbid != a.dbid;
    if (select) {
      const std::string db = Int64ToString(a.dbid);
      AppendRespCommand(&out, std::initializer_list<std::string_view>{"SELECT", db});
    }
    // Keys that expired since the lookup are left out.
    std::vector<Outgoing> sent;
    for (const Outgoing& o : outgoing) {
      int64_t ttl = 0;
      const int64_t expire_at = ctx.db.GetExpire(o.entry);
      if (expire_at != -1) {
        ttl = expire_at - ctx.db.now_ms();
        if (ttl < 0) continue;
        if (ttl < 1) ttl = 1;
      }
      sent.push_back(o);
      const std::string ttl_text = Int64ToString(ttl);
      const std::string payload = RdbDumpValue(o.entry->value, compress);
      std::vector<std::string_view> restore{cluster ? "RESTORE-ASKING" : "RESTORE", o.key, ttl_text,
                                            payload};
      if (a.replace) restore.push_back("REPLACE");
      AppendRespCommand(&out, restore);
    }
    bool timed_out = false;
    bool writing = true;
    std::string auth_reply, select_reply, line;
    bool socket_error = !MigrateConnections::Write(*conn, out, a.timeout_ms, &timed_out);
    if (!socket_error) {
      writing = false;
      socket_error =
          (a.auth && !MigrateConnections::ReadLine(*conn, &auth_reply, a.timeout_ms, &timed_out)) ||
          (select && !MigrateConnections::ReadLine(*conn, &select_reply, a.timeout_ms, &timed_out));
    }
    size_t replies = 0;
    bool target_error = false;
    if (!socket_error) {
      for (; replies < sent.size(); ++replies) {
        if (!MigrateConnections::ReadLine(*conn, &line, a.timeout_ms, &timed_out)) {
          socket_error = true;
          break;
        }
        const std::string* error = a.auth && auth_reply.starts_with('-')     ? &auth_reply
                                   : select && select_reply.starts_with('-') ? &select_reply
                                   : line.starts_with('-')                   ? &line
                                                                             : nullptr;
        if (error != nullptr) {
          // Only the first error is reported; the db the target has selected is unknown now.
          if (!target_error) {
            conn->last_dbid = -1;
            target_error = true;
            ctx.reply.Error("ERR Target instance replied with error: " + error->substr(1));
          }
        } else if (!a.copy) {
          const Outgoing& o = sent[replies];
          std::string key(o.key);
          ctx.db.Delete(key);
          KeyWritten(ctx, key);
          Notify(ctx, kNotifyGeneric, "del", key);
          deleted.push_back(std::move(key));
        }
      }
    }
    // Nothing was answered yet: a stale cached connection, most likely. Try a new one.
    if (socket_error && !target_error && replies == 0 && may_retry && !timed_out) {
      pool.Close(host, port);
      may_retry = false;
      continue;
    }
    if (socket_error) pool.Close(host, port);
    // What was deleted goes to replicas and the AOF as a DEL of exactly those keys.
    if (deleted.size() > 1) {
      ctx.PropagateInstead(std::move(deleted));
    } else {
      ctx.PropagateNothing();
    }
    if (target_error) return;
    if (socket_error) {
      ctx.reply.Error(writing ? "IOERR error or timeout writing to target instance"
                              : "IOERR error or timeout reading to target instance");
      return;
    }
    conn->last_dbid = a.dbid;
    ctx.reply.Ok();
    return;
  }
}

// MIGRATE's keys: the key argument, or with KEYS everything after it (none when the key
// argument isn't empty then: MIGRATE itself reports that error).
std::vector<size_t> MigrateKeys(std::span<const std::string_view> argv) {
  size_t first = 3, num = 1;
  for (size_t i = 6; i < argv.size(); ++i) {
    if (IsArg(argv[i], "KEYS")) {
      if (!argv[3].empty()) {
        num = 0;
      } else {
        first = i + 1;
        num = argv.size() - first;
      }
      break;
    }
    if (IsArg(argv[i], "AUTH")) {
      i += 1;
    } else if (IsArg(argv[i], "AUTH2")) {
      i += 2;
    }
  }
  std::vector<size_t> out;
  for (size_t i = 0; i < num && first + i < argv.size(); ++i) out.push_back(first + i);
  return out;
}

}  // namespace

void RegisterMigrateCommands(CommandTable& table) {
  constexpr uint32_t kKeyFlags = kKeyRW | kKeyAccess | kKeyDelete;
  table.Add({"migrate", -6, kCmdWrite | kCmdMigratesKeys,
             Keys(KeyAt(3, kKeyFlags), KeysAfter("KEYS", -2, -1, 1, 0, kKeyFlags | kKeyIncomplete)),
             kAclKeyspace | kAclDangerous, "generic", "2.6.0",
             "Atomically transfers a key from one Redis instance to another.",
             "host port:integer key-selector=<key | empty-string=''> "
             "destination-db:integer timeout:integer [COPY] [REPLACE] [authentication=<auth=<AUTH "
             "password> | auth2=<AUTH2 username password>>] [KEYS keys=key [keys=key ...]]",
             MigrateCommand,
             "This command actually executes a DUMP+DEL in the source instance, and a RESTORE in "
             "the target instance. See the pages of these commands for time complexity. Also an "
             "O(N) data transfer between the two instances is performed.",
             MigrateKeys});
}

}  // namespace vireo
