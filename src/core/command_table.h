// Every command is declared once here; the declaration drives dispatch, arity errors, key
// extraction, COMMAND / COMMAND DOCS and docs/commands.md.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace vireo {

class CommandContext;

// Command flags, one set for every family (Redis's names). COMMAND INFO lists the visible ones
// in Redis's order (see CommandFlagNames); kCmdMovableKeys is derived from the key specs.
enum CommandFlag : uint64_t {
  kCmdWrite = 1ull << 0,
  kCmdReadonly = 1ull << 1,
  kCmdDenyOom = 1ull << 2,
  kCmdAdmin = 1ull << 3,
  kCmdPubsub = 1ull << 4,
  kCmdNoScript = 1ull << 5,
  kCmdBlocking = 1ull << 6,
  kCmdLoading = 1ull << 7,
  kCmdStale = 1ull << 8,
  kCmdSkipMonitor = 1ull << 9,
  kCmdSkipSlowlog = 1ull << 10,
  kCmdFast = 1ull << 11,
  kCmdNoAuth = 1ull << 12,
  kCmdMayReplicate = 1ull << 13,  // hidden in COMMAND INFO, as in Redis
  kCmdNoMulti = 1ull << 14,
  kCmdAllowBusy = 1ull << 15,
  kCmdMovableKeys = 1ull << 16,  // derived: set by the table, never declared
  kCmdAsking = 1ull << 17,
  kCmdNoMandatoryKeys = 1ull << 18,
  kCmdNoAsyncLoading = 1ull << 19,
  kCmdProtected = 1ull << 20,             // hidden
  kCmdTouchesArbitraryKeys = 1ull << 21,  // hidden
  // What the dispatcher must know about a few commands that Redis recognises by their handler.
  // vireo declares it instead; none of these show in COMMAND INFO.
  //
  // Manages the transaction itself (MULTI, EXEC, DISCARD, WATCH, QUIT, RESET): runs at once
  // inside MULTI rather than being queued, and isn't refused for memory while queueing.
  kCmdTransactionControl = 1ull << 22,
  // Runs the client's queued commands (EXEC): it is a write, deny-oom, no-async-loading when
  // any of them is, and allowed while loading or stale only when all of them are; a rejection
  // discards the transaction, and cluster mode checks the queue's keys.
  kCmdRunsQueued = 1ull << 23,
  // Allowed in RESP2 subscribed mode (the (un)subscribe commands, PING, QUIT, RESET).
  kCmdSubscribedMode = 1ull << 24,
  // Refused like a write while disk writes fail (stop-writes-on-bgsave-error, a failing AOF),
  // though it writes nothing (PING: a client's health check must see the error).
  kCmdDiskErrorCheck = 1ull << 25,
  // Touches keys' LRU/LFU even for a CLIENT NO-TOUCH client (TOUCH exists to touch).
  kCmdIgnoresNoTouch = 1ull << 26,
  // With kCmdProtected: enable-debug-command governs it (DEBUG), not enable-module-command.
  kCmdDebugProtected = 1ull << 27,
  // Runs a script (EVAL*, FCALL*): the script's declared flags replace the command's for a
  // write pause, and client tracking remembers the keys the script's commands read, not its own.
  kCmdRunsScript = 1ull << 28,
  // Doesn't end ASKING's cover of the next command (ASKING itself).
  kCmdKeepsAsking = 1ull << 29,
  // Doesn't end CLIENT CACHING's cover of the next command (the CLIENT commands).
  kCmdKeepsCaching = 1ull << 30,
  // Moves its keys to another node (MIGRATE): cluster mode lets it run on a slot being
  // migrated or imported whatever the keys' whereabouts.
  kCmdMigratesKeys = 1ull << 31,
  // With kCmdRunsScript, what argv[1] names: a cached script's SHA1 (EVALSHA*) or a function
  // (FCALL*); neither means the script's body (EVAL*).
  kCmdScriptBySha = 1ull << 32,
  kCmdRunsFunction = 1ull << 33,
};

// The visible flags with their COMMAND INFO names, in Redis's order.
std::span<const std::pair<CommandFlag, std::string_view>> CommandFlagNames();

// ACL categories (Redis's, in Redis's order: COMMAND INFO and ACL CAT list them so). A command
// declares the categories that say what it works on (@string, @keyspace, @dangerous...); the
// ones that follow from its flags (@write, @read, @admin, @fast or @slow, @blocking, @pubsub)
// are added by the table, as Redis does.
enum AclCategory : uint32_t {
  kAclKeyspace = 1u << 0,
  kAclRead = 1u << 1,
  kAclWrite = 1u << 2,
  kAclSet = 1u << 3,
  kAclSortedSet = 1u << 4,
  kAclList = 1u << 5,
  kAclHash = 1u << 6,
  kAclString = 1u << 7,
  kAclBitmap = 1u << 8,
  kAclHyperLogLog = 1u << 9,
  kAclGeo = 1u << 10,
  kAclStream = 1u << 11,
  kAclPubsub = 1u << 12,
  kAclAdmin = 1u << 13,
  kAclFast = 1u << 14,
  kAclSlow = 1u << 15,
  kAclBlocking = 1u << 16,
  kAclDangerous = 1u << 17,
  kAclConnection = 1u << 18,
  kAclTransaction = 1u << 19,
  kAclScripting = 1u << 20,
};
inline constexpr size_t kAclCategoryCount = 21;
// Bit i of an AclCategory mask is named kAclCategoryNames[i] (without the '@').
inline constexpr std::string_view kAclCategoryNames[kAclCategoryCount] = {
    "keyspace", "read",   "write",       "set",       "sortedset",  "list",        "hash",
    "string",   "bitmap", "hyperloglog", "geo",       "stream",     "pubsub",      "admin",
    "fast",     "slow",   "blocking",    "dangerous", "connection", "transaction", "scripting"};
// The mask of one category by name (case-insensitive, no '@'), 0 if unknown.
uint32_t AclCategoryByName(std::string_view name);
// The declared categories plus those Redis implies from the flags.
uint32_t ImplicitAclCategories(uint64_t flags, uint32_t declared);

// Key-spec flags (Redis 7's model). Exactly one of RO/RW/OW/RM says how the key's value is
// used; the rest say what the command does to the data. ACL and cluster redirection read them.
enum KeyFlag : uint32_t {
  kKeyRO = 1u << 0,  // read only
  kKeyRW = 1u << 1,  // read and modified
  kKeyOW = 1u << 2,  // overwritten without reading
  kKeyRM = 1u << 3,  // removed
  kKeyAccess = 1u << 4,
  kKeyUpdate = 1u << 5,
  kKeyInsert = 1u << 6,
  kKeyDelete = 1u << 7,
  kKeyNotKey = 1u << 8,  // a name hashed like a key (shard channels), not a keyspace key
  kKeyIncomplete = 1u << 9,
  kKeyVariableFlags = 1u << 10,
};
std::span<const std::pair<KeyFlag, std::string_view>> KeyFlagNames();

// Where a command's keys are: how to find the first (begin search) and how to step from it
// (find keys).
struct KeySpec {
  enum class Begin : uint8_t { kUnknown, kIndex, kKeyword };
  enum class Find : uint8_t { kUnknown, kRange, kKeyNum };
  uint32_t flags = 0;
  Begin begin = Begin::kUnknown;
  int index = 0;             // kIndex: the position; kKeyword: where the search starts
                             // (negative: from the end, searching backwards)
  const char* keyword = "";  // kKeyword
  Find find = Find::kUnknown;
  // kRange: last key relative to the first (negative: from the end), step, and limit (with
  // lastkey -1: only 1/limit of the remaining arguments are keys).
  // kKeyNum: where numkeys is (relative to the begin), where the first key is (relative to
  // the begin), step.
  int a = 0, b = 0, c = 0;
  const char* notes = "";
};

// Builders for the declarations.
// One key, or a run of keys, at a fixed position: `KeysAt(1, -1, 1, ...)` is "every argument
// from 1 on".
constexpr KeySpec KeysAt(int pos, int lastkey, int step, uint32_t flags, int limit = 0,
                         const char* notes = "") {
  return {flags, KeySpec::Begin::kIndex, pos, "", KeySpec::Find::kRange, lastkey, step, limit,
          notes};
}
constexpr KeySpec KeyAt(int pos, uint32_t flags, const char* notes = "") {
  return KeysAt(pos, 0, 1, flags, 0, notes);
}
// `numkeys` keys: the count at pos+keynumidx, the keys from pos+firstkey.
constexpr KeySpec KeyNum(int pos, int keynumidx, int firstkey, int step, uint32_t flags,
                         const char* notes = "") {
  return {flags, KeySpec::Begin::kIndex, pos, "", KeySpec::Find::kKeyNum, keynumidx, firstkey, step,
          notes};
}
// Keys after a keyword ("STREAMS key [key ...]", "STORE destination").
constexpr KeySpec KeysAfter(const char* keyword, int startfrom, int lastkey, int step, int limit,
                            uint32_t flags, const char* notes = "") {
  return {flags,
          KeySpec::Begin::kKeyword,
          startfrom,
          keyword,
          KeySpec::Find::kRange,
          lastkey,
          step,
          limit,
          notes};
}
// Keys the table cannot locate (they depend on a value, or the keyword can be anywhere); the
// command's KeyFinder finds them.
constexpr KeySpec UnknownKeys(uint32_t flags, const char* notes = "") {
  return {flags, KeySpec::Begin::kUnknown, 0, "", KeySpec::Find::kUnknown, 0, 0, 0, notes};
}

// A command's key specs, in order (none: `Keys()`).
template <typename... Specs>
std::vector<KeySpec> Keys(Specs... specs) {
  return {specs...};
}

// One key argument of a call: its position in argv and its key-spec flags.
struct KeyRef {
  size_t pos;
  uint32_t flags;
};

using CommandHandler = void (*)(CommandContext& ctx);
// The key positions of a command whose keys move (LMPOP's numkeys); empty when the arguments
// name no keys.
using KeyFinder = std::vector<size_t> (*)(std::span<const std::string_view> argv);

struct KeyRef;
// The flags of one key for commands whose key specs say kKeyVariableFlags (SET's key is read
// only with GET): given the call and the key with its declared flags.
using KeyFlagsFn = uint32_t (*)(std::span<const std::string_view> argv, const KeyRef& key);

// Lets maps keyed by std::string be searched with a string_view, without allocating.
struct TransparentStringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
template <typename V>
using StringMap = std::unordered_map<std::string, V, TransparentStringHash, std::equal_to<>>;

// One node of a command's argument tree, for COMMAND DOCS (redis-cli builds its hints from it).
struct CommandArg {
  std::string name;
  std::string type;  // key, string, integer, double, pattern, unix-time, pure-token, oneof, block
  std::string display_text;  // what hints show instead of the name ("ip:port"), if set
  std::string token;
  int key_spec_index = -1;  // -1: key arguments take the key specs in order
  bool optional = false;
  bool multiple = false;
  bool multiple_token = false;  // the token repeats with each value ("[GET pattern ...]")
  std::vector<CommandArg> subargs;
};

// COMMAND DOCS doc_flags.
enum DocFlag : uint8_t {
  kDocDeprecated = 1u << 0,
  kDocSyscmd = 1u << 1,
};

struct CommandSpec {
  std::string name;    // lower case; "config|get" for subcommands
  int arity = 0;       // Redis convention: negative = at least -arity
  uint64_t flags = 0;  // declared flags, plus kCmdMovableKeys when the specs imply it
  // Redis's legacy key range, derived from the key specs as Redis derives it: what COMMAND
  // INFO reports as first key, last key and step.
  int first_key = 0;
  int last_key = 0;
  int key_step = 0;
  uint32_t acl_categories = 0;  // AclCategory mask, implicit categories included
  std::vector<KeySpec> key_specs;
  std::string group;  // "string", "generic", "server", ...
  std::string summary;
  std::string since;
  std::string complexity;
  std::string syntax;  // e.g. "key value [NX | XX]"; parsed into `args`
  CommandHandler handler = nullptr;
  // For keys the specs cannot locate (SORT's STORE, MIGRATE's KEYS...), as Redis's getkeys
  // procedures; else the specs are used.
  KeyFinder key_finder = nullptr;
  KeyFlagsFn key_flags = nullptr;
  std::vector<CommandArg> args;
  // Documentation only (COMMAND DOCS): from AddCommandDocNotes.
  uint8_t doc_flags = 0;  // DocFlag mask
  std::string_view deprecated_since;
  std::string_view replaced_by;
  std::vector<std::pair<std::string_view, std::string_view>> history;  // version, change
  StringMap<std::unique_ptr<CommandSpec>> subcommands;
  // Dense index among all specs (subcommands included): where a server keeps this command's
  // statistics (Server::command_stats).
  uint32_t id = 0;

  bool has(CommandFlag flag) const { return (flags & flag) != 0; }
  bool ArityOk(size_t argc) const {
    return arity >= 0 ? argc == static_cast<size_t>(arity) : argc >= static_cast<size_t>(-arity);
  }
  bool HasKeys() const { return !key_specs.empty(); }
  // The key arguments of a call (argv[0] is the command name) with their key-spec flags, in
  // spec order. Shard channels (kKeyNotKey) are left out unless `include_not_keys` (cluster
  // routing hashes them). Returns false when the arguments are malformed for the specs (a bad
  // numkeys, a keyword-less range running off argv); `out` then holds nothing. Callers (ACL,
  // cluster redirection, COMMAND GETKEYS) all use this one function.
  bool GetKeys(std::span<const std::string_view> argv, std::vector<KeyRef>* out,
               bool include_not_keys = false) const;
  // The positions only.
  std::vector<size_t> KeyPositions(std::span<const std::string_view> argv) const;
};

// Declaration helper used by each command family's Register function:
//   {name, arity, CommandFlag mask, key specs, declared AclCategory mask, group, since,
//    summary, syntax, handler, complexity, key finder}
struct CommandDef {
  const char* name;
  int arity;
  uint64_t flags;
  std::vector<KeySpec> keys;
  uint32_t acl;
  const char* group;
  const char* since;
  const char* summary;
  const char* syntax;
  CommandHandler handler;
  const char* complexity = "";
  KeyFinder key_finder = nullptr;
  KeyFlagsFn key_flags = nullptr;
};

// Per-command statistics for INFO commandstats; each server keeps its own.
struct CommandStats {
  uint64_t calls = 0;
  uint64_t usec = 0;
  uint64_t rejected_calls = 0;
  uint64_t failed_calls = 0;
};

// Built once at start-up by BuildCommandTable() (commands/) and read-only afterwards, so servers
// share it; what changes at run time (statistics, the lookup cache) belongs to each server.
class CommandTable {
 public:
  CommandSpec* Add(const CommandDef& def);
  // Adds "parent|sub"; the parent must exist (a container command).
  CommandSpec* AddSubcommand(const char* parent, const CommandDef& def);
  // Case-insensitive.
  const CommandSpec* Find(std::string_view name) const;
  // How many specs (commands and subcommands) have been added: ids are below this.
  uint32_t spec_count() const { return next_id_; }
  const StringMap<std::unique_ptr<CommandSpec>>& all() const { return commands_; }
  // rename-command, at start-up before any server reads the table: the command answers to
  // `to` instead of `from` (COMMAND INFO still shows its own name); an empty `to` removes it.
  // Returns "" or Redis's error ("No such command in rename-command", "Target command name
  // already exists").
  std::string Rename(std::string_view from, std::string_view to);
  // "get" or "config|get", any case; nullptr for an unknown name or subcommand.
  const CommandSpec* FindByFullName(std::string_view name) const;
  // Resolves a container command's subcommand, or returns nullptr.
  static const CommandSpec* FindSubcommand(const CommandSpec& parent, std::string_view sub);

 private:
  StringMap<std::unique_ptr<CommandSpec>> commands_;
  std::vector<std::unique_ptr<CommandSpec>> removed_;  // by rename-command to ""
  uint32_t next_id_ = 0;
};

// A direct-mapped cache in front of CommandTable::Find, keyed by the lowered name: the map's
// string hash and bucket walk were a few percent of a pipelined simple command. One per
// server, always used with that server's table (which never changes after start-up).
class CommandLookupCache {
 public:
  const CommandSpec* Find(const CommandTable& table, std::string_view name);

 private:
  static constexpr size_t kSlots = 256;
  struct Slot {
    const CommandSpec* spec = nullptr;
    uint8_t len = 0;
    char name[23];
  };
  Slot slots_[kSlots] = {};
};

// Parses the syntax mini-language ("key value [NX | XX] [EX seconds | PX milliseconds]") into
// an argument tree; see command_table.cc for the notation.
std::vector<CommandArg> ParseCommandSyntax(std::string_view syntax);

}  // namespace vireo
