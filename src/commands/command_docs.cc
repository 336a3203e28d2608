// What COMMAND DOCS says about a command's past: deprecation (with its replacement), the
// "syscmd" documentation flag and the version history, as Redis 7.2 documents them. They are
// kept here, keyed by command name, rather than in each family's declaration: they describe
// Redis's releases, not vireo's behaviour, and a family added later (cluster, MIGRATE) gets
// its notes without touching this file.
#include <string_view>

#include "core/command_table.h"

namespace vireo {
namespace {

struct DocNote {
  std::string_view command;
  std::string_view a;  // deprecated: since;        history: version
  std::string_view b;  // deprecated: replaced by;  history: what changed
};

constexpr DocNote kDeprecated[] = {
    {"brpoplpush", "6.2.0", "`BLMOVE` with the `RIGHT` and `LEFT` arguments"},
    {"cluster|slaves", "5.0.0", "`CLUSTER REPLICAS`"},
    {"cluster|slots", "7.0.0", "`CLUSTER SHARDS`"},
    {"georadius", "6.2.0", "`GEOSEARCH` and `GEOSEARCHSTORE` with the `BYRADIUS` argument"},
    {"georadius_ro", "6.2.0", "`GEOSEARCH` with the `BYRADIUS` argument"},
    {"georadiusbymember", "6.2.0",
     "`GEOSEARCH` and `GEOSEARCHSTORE` with the `BYRADIUS` and `FROMMEMBER` arguments"},
    {"georadiusbymember_ro", "6.2.0", "`GEOSEARCH` with the `BYRADIUS` and `FROMMEMBER` arguments"},
    {"getset", "6.2.0", "`SET` with the `!GET` argument"},
    {"hmset", "4.0.0", "`HSET` with multiple field-value pairs"},
    {"psetex", "2.6.12", "`SET` with the `PX` argument"},
    {"quit", "7.2.0", "just closing the connection"},
    {"rpoplpush", "6.2.0", "`LMOVE` with the `RIGHT` and `LEFT` arguments"},
    {"sentinel|slaves", "5.0.0", "`SENTINEL REPLICAS`"},
    {"setex", "2.6.12", "`SET` with the `EX` argument"},
    {"setnx", "2.6.12", "`SET` with the `NX` argument"},
    {"slaveof", "5.0.0", "`REPLICAOF`"},
    {"substr", "2.0.0", "`GETRANGE`"},
    {"zrangebylex", "6.2.0", "`ZRANGE` with the `BYLEX` argument"},
    {"zrangebyscore", "6.2.0", "`ZRANGE` with the `BYSCORE` argument"},
    {"zrevrange", "6.2.0", "`ZRANGE` with the `REV` argument"},
    {"zrevrangebylex", "6.2.0", "`ZRANGE` with the `REV` and `BYLEX` arguments"},
    {"zrevrangebyscore", "6.2.0", "`ZRANGE` with the `REV` and `BYSCORE` arguments"},
};

constexpr std::string_view kSyscmd[] = {"debug", "pfdebug", "pfselftest", "replconf",
                                        "restore-asking"};

constexpr DocNote kHistory[] = {
    {"acl|getuser", "6.2.0", "Added Pub/Sub channel patterns."},
    {"acl|getuser", "7.0.0",
     "Added selectors and changed the format of key and channel patterns from a list to their rule "
     "representation."},
    {"acl|log", "7.2.0", "Added entry ID, timestamp created, and timestamp last updated."},
    {"acl|setuser", "6.2.0", "Added Pub/Sub channel patterns."},
    {"acl|setuser", "7.0.0", "Added selectors and key based permissions."},
    {"auth", "6.0.0", "Added ACL style (username and password)."},
    {"bgsave", "3.2.2", "Added the `SCHEDULE` option."},
    {"bitcount", "7.0.0", "Added the `BYTE|BIT` option."},
    {"bitpos", "7.0.0", "Added the `BYTE|BIT` option."},
    {"blpop", "6.0.0", "`timeout` is interpreted as a double instead of an integer."},
    {"brpop", "6.0.0", "`timeout` is interpreted as a double instead of an integer."},
    {"brpoplpush", "6.0.0", "`timeout` is interpreted as a double instead of an integer."},
    {"bzpopmax", "6.0.0", "`timeout` is interpreted as a double instead of an integer."},
    {"bzpopmin", "6.0.0", "`timeout` is interpreted as a double instead of an integer."},
    {"client|kill", "2.8.12", "Added new filter format."},
    {"client|kill", "2.8.12", "`ID` option."},
    {"client|kill", "3.2.0", "Added `master` type in for `TYPE` option."},
    {"client|kill", "5.0.0",
     "Replaced `slave` `TYPE` with `replica`. `slave` still supported for backward compatibility."},
    {"client|kill", "6.2.0", "`LADDR` option."},
    {"client|list", "2.8.12", "Added unique client `id` field."},
    {"client|list", "5.0.0", "Added optional `TYPE` filter."},
    {"client|list", "6.0.0", "Added `user` field."},
    {"client|list", "6.2.0",
     "Added `argv-mem`, `tot-mem`, `laddr` and `redir` fields and the optional `ID` filter."},
    {"client|list", "7.0.0", "Added `resp`, `multi-mem`, `rbs` and `rbp` fields."},
    {"client|list", "7.0.3", "Added `ssub` field."},
    {"client|pause", "6.2.0", "`CLIENT PAUSE WRITE` mode added along with the `mode` option."},
    {"cluster|meet", "4.0.0", "Added the optional `cluster_bus_port` argument."},
    {"cluster|slots", "4.0.0", "Added node IDs."},
    {"cluster|slots", "7.0.0", "Added additional networking metadata field."},
    {"command|info", "7.0.0", "Allowed to be called with no argument to get info on all commands."},
    {"config|get", "7.0.0", "Added the ability to pass multiple pattern parameters in one call"},
    {"config|set", "7.0.0", "Added the ability to set multiple parameters in one call."},
    {"exists", "3.0.3", "Accepts multiple `key` arguments."},
    {"expire", "7.0.0", "Added options: `NX`, `XX`, `GT` and `LT`."},
    {"expireat", "7.0.0", "Added options: `NX`, `XX`, `GT` and `LT`."},
    {"flushall", "4.0.0", "Added the `ASYNC` flushing mode modifier."},
    {"flushall", "6.2.0", "Added the `SYNC` flushing mode modifier."},
    {"flushdb", "4.0.0", "Added the `ASYNC` flushing mode modifier."},
    {"flushdb", "6.2.0", "Added the `SYNC` flushing mode modifier."},
    {"geoadd", "6.2.0", "Added the `CH`, `NX` and `XX` options."},
    {"georadius", "6.2.0", "Added the `ANY` option for `COUNT`."},
    {"georadius", "7.0.0", "Added support for uppercase unit names."},
    {"georadius_ro", "6.2.0", "Added the `ANY` option for `COUNT`."},
    {"georadiusbymember", "7.0.0", "Added support for uppercase unit names."},
    {"geosearch", "7.0.0", "Added support for uppercase unit names."},
    {"geosearchstore", "7.0.0", "Added support for uppercase unit names."},
    {"hdel", "2.4.0", "Accepts multiple `field` arguments."},
    {"hello", "6.2.0",
     "`protover` made optional; when called without arguments the command reports the current "
     "connection's context."},
    {"hset", "4.0.0", "Accepts multiple `field` and `value` arguments."},
    {"info", "7.0.0", "Added support for taking multiple section arguments."},
    {"lpop", "6.2.0", "Added the `count` argument."},
    {"lpush", "2.4.0", "Accepts multiple `element` arguments."},
    {"lpushx", "4.0.0", "Accepts multiple `element` arguments."},
    {"migrate", "3.0.0", "Added the `COPY` and `REPLACE` options."},
    {"migrate", "3.0.6", "Added the `KEYS` option."},
    {"migrate", "4.0.7", "Added the `AUTH` option."},
    {"migrate", "6.0.0", "Added the `AUTH2` option."},
    {"pexpire", "7.0.0", "Added options: `NX`, `XX`, `GT` and `LT`."},
    {"pexpireat", "7.0.0", "Added options: `NX`, `XX`, `GT` and `LT`."},
    {"pttl", "2.8.0", "Added the -2 reply."},
    {"renamenx", "3.2.0",
     "The command no longer returns an error when source and destination names are the same."},
    {"restore", "3.0.0", "Added the `REPLACE` modifier."},
    {"restore", "5.0.0", "Added the `ABSTTL` modifier."},
    {"restore", "5.0.0", "Added the `IDLETIME` and `FREQ` options."},
    {"restore-asking", "3.0.0", "Added the `REPLACE` modifier."},
    {"restore-asking", "5.0.0", "Added the `ABSTTL` modifier."},
    {"restore-asking", "5.0.0", "Added the `IDLETIME` and `FREQ` options."},
    {"rpop", "6.2.0", "Added the `count` argument."},
    {"rpush", "2.4.0", "Accepts multiple `element` arguments."},
    {"rpushx", "4.0.0", "Accepts multiple `element` arguments."},
    {"sadd", "2.4.0", "Accepts multiple `member` arguments."},
    {"scan", "6.0.0", "Added the `TYPE` subcommand."},
    {"script|flush", "6.2.0", "Added the `ASYNC` and `SYNC` flushing mode modifiers."},
    {"sentinel|config", "7.2.0",
     "Added the ability to set and get multiple parameters in one call."},
    {"set", "2.6.12", "Added the `EX`, `PX`, `NX` and `XX` options."},
    {"set", "6.0.0", "Added the `KEEPTTL` option."},
    {"set", "6.2.0", "Added the `GET`, `EXAT` and `PXAT` option."},
    {"set", "7.0.0", "Allowed the `NX` and `GET` options to be used together."},
    {"set", "8.4.0", "Added 'IFEQ', 'IFNE', 'IFDEQ', 'IFDNE' options."},
    {"shutdown", "7.0.0", "Added the `NOW`, `FORCE` and `ABORT` modifiers."},
    {"slowlog|get", "4.0.0", "Added client IP address, port and name to the reply."},
    {"spop", "3.2.0", "Added the `count` argument."},
    {"srandmember", "2.6.0", "Added the optional `count` argument."},
    {"srem", "2.4.0", "Accepts multiple `member` arguments."},
    {"ttl", "2.8.0", "Added the -2 reply."},
    {"xadd", "6.2.0",
     "Added the `NOMKSTREAM` option, `MINID` trimming strategy and the `LIMIT` option."},
    {"xadd", "7.0.0", "Added support for the `<ms>-*` explicit ID form."},
    {"xautoclaim", "7.0.0",
     "Added an element to the reply array, containing deleted entries the command cleared from the "
     "PEL"},
    {"xgroup|create", "7.0.0", "Added the `entries_read` named argument."},
    {"xgroup|setid", "7.0.0", "Added the optional `entries_read` argument."},
    {"xinfo|consumers", "7.2.0", "Added the `inactive` field."},
    {"xinfo|groups", "7.0.0", "Added the `entries-read` and `lag` fields"},
    {"xinfo|stream", "6.0.0", "Added the `FULL` modifier."},
    {"xinfo|stream", "7.0.0",
     "Added the `max-deleted-entry-id`, `entries-added`, `recorded-first-entry-id`, `entries-read` "
     "and `lag` fields"},
    {"xinfo|stream", "7.2.0",
     "Added the `active-time` field, and changed the meaning of `seen-time`."},
    {"xpending", "6.2.0", "Added the `IDLE` option and exclusive range intervals."},
    {"xrange", "6.2.0", "Added exclusive ranges."},
    {"xread", "8.10.0", "Added the `MAXCOUNT` and `MAXSIZE` options."},
    {"xreadgroup", "8.4.0", "Added the `CLAIM` option."},
    {"xreadgroup", "8.10.0", "Added the `MAXCOUNT` and `MAXSIZE` options."},
    {"xrevrange", "6.2.0", "Added exclusive ranges."},
    {"xsetid", "7.0.0", "Added the `entries_added` and `max_deleted_entry_id` arguments."},
    {"xtrim", "6.2.0", "Added the `MINID` trimming strategy and the `LIMIT` option."},
    {"zadd", "2.4.0", "Accepts multiple elements."},
    {"zadd", "3.0.2", "Added the `XX`, `NX`, `CH` and `INCR` options."},
    {"zadd", "6.2.0", "Added the `GT` and `LT` options."},
    {"zinter", "8.8.0", "Added `COUNT` aggregate option."},
    {"zinterstore", "8.8.0", "Added `COUNT` aggregate option."},
    {"zrange", "6.2.0", "Added the `REV`, `BYSCORE`, `BYLEX` and `LIMIT` options."},
    {"zrangebyscore", "2.0.0", "Added the `WITHSCORES` modifier."},
    {"zrank", "7.2.0", "Added the optional `WITHSCORE` argument."},
    {"zrem", "2.4.0", "Accepts multiple elements."},
    {"zrevrangebyscore", "2.1.6", "`min` and `max` can be exclusive."},
    {"zrevrank", "7.2.0", "Added the optional `WITHSCORE` argument."},
    {"zunion", "8.8.0", "Added `COUNT` aggregate option."},
    {"zunionstore", "8.8.0", "Added `COUNT` aggregate option."},
};

CommandSpec* FindSpec(CommandTable& table, std::string_view full_name) {
  size_t bar = full_name.find('|');
  const CommandSpec* spec = table.Find(full_name.substr(0, bar));
  if (spec != nullptr && bar != std::string_view::npos) {
    spec = CommandTable::FindSubcommand(*spec, full_name.substr(bar + 1));
  }
  // The table hands out const specs; the notes are filled in while it is being built.
  return const_cast<CommandSpec*>(spec);
}

}  // namespace

void AddCommandDocNotes(CommandTable& table) {
  for (const DocNote& note : kDeprecated) {
    if (CommandSpec* spec = FindSpec(table, note.command)) {
      spec->doc_flags |= kDocDeprecated;
      spec->deprecated_since = note.a;
      spec->replaced_by = note.b;
    }
  }
  for (std::string_view name : kSyscmd) {
    if (CommandSpec* spec = FindSpec(table, name)) spec->doc_flags |= kDocSyscmd;
  }
  for (const DocNote& note : kHistory) {
    if (CommandSpec* spec = FindSpec(table, note.command))
      spec->history.emplace_back(note.a, note.b);
  }
}

}  // namespace vireo
