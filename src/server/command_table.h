// Every command is declared once here; the declaration drives dispatch, arity errors, key
// extraction, COMMAND / COMMAND DOCS and docs/commands.md.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace vireo {

class CommandContext;

enum CommandFlag : uint32_t {
  kCmdWrite = 1u << 0,
  kCmdReadonly = 1u << 1,
  kCmdDenyOom = 1u << 2,
  kCmdAdmin = 1u << 3,
  kCmdPubsub = 1u << 4,
  kCmdNoScript = 1u << 5,
  kCmdBlocking = 1u << 6,
  kCmdLoading = 1u << 7,
  kCmdStale = 1u << 8,
  kCmdSkipMonitor = 1u << 9,
  kCmdSkipSlowlog = 1u << 10,
  kCmdFast = 1u << 11,
  kCmdNoAuth = 1u << 12,
  kCmdMayReplicate = 1u << 13,
  kCmdNoMulti = 1u << 14,
  kCmdAllowBusy = 1u << 15,
  kCmdMovableKeys = 1u << 16,
};

using CommandHandler = void (*)(CommandContext& ctx);
// The key positions of a command whose keys move (LMPOP's numkeys); empty when the arguments
// name no keys.
using KeyFinder = std::vector<size_t> (*)(std::span<const std::string_view> argv);

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
  std::string token;
  bool optional = false;
  bool multiple = false;
  bool multiple_token = false;  // the token repeats with each value ("[GET pattern ...]")
  std::vector<CommandArg> subargs;
};

struct CommandSpec {
  std::string name;  // lower case; "config|get" for subcommands
  int arity = 0;     // Redis convention: negative = at least -arity
  uint32_t flags = 0;
  int first_key = 0;
  int last_key = 0;
  int key_step = 0;
  std::string acl_categories;  // space separated, e.g. "@write @string @fast"
  std::string group;           // "string", "generic", "server", ...
  std::string summary;
  std::string since;
  std::string complexity;
  std::string syntax;  // e.g. "key value [NX | XX]"; parsed into `args`
  CommandHandler handler = nullptr;
  KeyFinder key_finder = nullptr;  // for movable keys; else first_key/last_key/key_step
  std::vector<CommandArg> args;
  StringMap<std::unique_ptr<CommandSpec>> subcommands;
  // Dense index among all specs (subcommands included): where a server keeps this command's
  // statistics (Server::command_stats).
  uint32_t id = 0;

  bool has(CommandFlag flag) const { return (flags & flag) != 0; }
  bool ArityOk(size_t argc) const {
    return arity >= 0 ? argc == static_cast<size_t>(arity) : argc >= static_cast<size_t>(-arity);
  }
  // The positions of the key arguments in argv, from first_key/last_key/key_step.
  std::vector<size_t> KeyPositions(std::span<const std::string_view> argv) const;
};

// Declaration helper used by each command family's Register function.
struct CommandDef {
  const char* name;
  int arity;
  uint32_t flags;
  int first_key, last_key, key_step;
  const char* acl;
  const char* group;
  const char* since;
  const char* summary;
  const char* syntax;
  CommandHandler handler;
  const char* complexity = "";
  KeyFinder key_finder = nullptr;
};

// Per-command statistics for INFO commandstats; each server keeps its own.
struct CommandStats {
  uint64_t calls = 0;
  uint64_t usec = 0;
  uint64_t rejected_calls = 0;
  uint64_t failed_calls = 0;
};

class CommandTable {
 public:
  // The table is filled once at start-up and read-only afterwards, so servers share it; what
  // changes at run time (statistics, the lookup cache) belongs to each server.
  static CommandTable& Instance();

  CommandSpec* Add(const CommandDef& def);
  // Adds "parent|sub"; the parent must exist (a container command).
  CommandSpec* AddSubcommand(const char* parent, const CommandDef& def);
  // Case-insensitive.
  const CommandSpec* Find(std::string_view name) const;
  // How many specs (commands and subcommands) have been added: ids are below this.
  uint32_t spec_count() const { return next_id_; }
  const StringMap<std::unique_ptr<CommandSpec>>& all() const { return commands_; }
  // Resolves a container command's subcommand, or returns nullptr.
  static const CommandSpec* FindSubcommand(const CommandSpec& parent, std::string_view sub);

 private:
  StringMap<std::unique_ptr<CommandSpec>> commands_;
  uint32_t next_id_ = 0;
};

// A direct-mapped cache in front of CommandTable::Find, keyed by the lowered name: the map's
// string hash and bucket walk were a few percent of a pipelined simple command. One per
// server; it starts over whenever the table has gained commands since it was filled.
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
  uint32_t filled_for_ = 0;  // the table's spec_count() when the slots were filled
};

// Parses the syntax mini-language ("key value [NX | XX] [EX seconds | PX milliseconds]") into
// an argument tree.
std::vector<CommandArg> ParseCommandSyntax(std::string_view syntax);

// Registers every command family. Called once at startup.
void RegisterAllCommands(CommandTable& table);

}  // namespace vireo
