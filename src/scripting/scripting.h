// The scripting state of a server: the EVAL engine with its script cache (by SHA1), and the
// FUNCTION engine with its libraries. Commands live in commands/scripting.cc and functions.cc.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/command_table.h"
#include "core/config.h"
#include "core/propagator.h"
#include "scripting/lua_debugger.h"
#include "scripting/lua_engine.h"
#include "scripting/script_host.h"
#include "util/allocator.h"

namespace vireo {

class ReplyBuilder;

struct CachedScript {
  int ref = LUA_NOREF;
  uint32_t flags = 0;
  std::string body;
  std::string sha;
};

struct FunctionInfo {
  std::string name;
  int ref = LUA_NOREF;
  uint32_t flags = 0;
  std::string description;
  struct Library* library = nullptr;
};

struct Library {
  std::string name;
  std::string engine = "LUA";
  std::string code;
  std::vector<std::unique_ptr<FunctionInfo>> functions;
};

// A script or function to run, and for whom.
struct ScriptCall {
  LuaEngine* engine = nullptr;  // eval_engine() or function_engine()
  int ref = LUA_NOREF;
  uint32_t flags = 0;
  bool ro = false;  // EVAL_RO, EVALSHA_RO, FCALL_RO
  std::string_view name;
  std::span<const std::string_view> argv;  // the command that runs it
  size_t numkeys = 0;
  size_t first_key = 0;  // where the keys start in argv; the arguments follow them
  bool from_master = false;
};

// What is left for the command that ran a script, once the script has replied.
struct ScriptOutcome {
  bool ran = false;  // false: refused before it ran (the reply says why)
  // The reply is an error its command already counted: the script's command counts a failed
  // call (INFO commandstats) without counting the error again.
  bool uncounted_error = false;
  // What the script wrote, to propagate instead of the script.
  ScriptEffects effects;
};

class Scripting {
 public:
  // `host` runs the scripts' commands; `commands` and `config` outlive the scripting state.
  Scripting(ScriptHost& host, const CommandTable& commands, const ServerConfig& config);
  ~Scripting();

  // ---- EVAL ----
  LuaEngine& eval_engine() { return *eval_; }
  // Compiles and caches `body` unless already cached. Returns the cache entry, or nullptr with
  // Redis's error text in *error.
  CachedScript* LoadScript(std::string_view body, std::string* sha, std::string* error);
  CachedScript* FindScript(std::string_view sha);
  void FlushScripts();
  size_t script_count() const { return scripts_.size(); }
  size_t scripts_memory() const { return scripts_bytes_; }
  // Active defragmentation (src/db/defrag.h): each cached script's body moved to a fuller slab
  // where the allocator says it sits in an emptier one. The compiled functions live in the Lua
  // VM, whose objects point at each other, and stay.
  void Defrag(allocator::DefragCounters& counters);

  // ---- FUNCTION ----
  LuaEngine& function_engine();
  // Parses, compiles and registers a library. Returns its name, or "" with the error in *error.
  std::string LoadLibrary(std::string_view code, bool replace, std::string* error);
  bool DeleteLibrary(std::string_view name);
  void FlushLibraries();
  const std::map<std::string, std::unique_ptr<Library>>& libraries() const { return libraries_; }
  FunctionInfo* FindFunction(std::string_view name);
  size_t function_count() const { return functions_.size(); }

  // What an EVAL/EVALSHA/FCALL (or _RO) command's argv[1] names (its declared flags say which).
  enum class ScriptRef { kBody, kSha, kFunction };
  // The flags that command's script declares, found without running it (a cached script, a
  // shebang, a function): what decides, as in Redis, whether a write pause holds it. nullopt
  // when it declares none (a script without a shebang, an unknown script or function, a
  // shebang that doesn't parse: the command's own flags apply).
  std::optional<uint32_t> DeclaredFlags(ScriptRef ref, std::span<const std::string_view> argv);

  // For persistence (RDB aux "functions" / FUNCTION DUMP): every library as (name, code).
  std::vector<std::pair<std::string, std::string>> EnumerateLibraries() const;

  // Runs a script or function with all of Redis's checks and reply shapes.
  ScriptOutcome Run(const ScriptCall& call, ReplyBuilder& reply);

  // The script being executed, if any (SCRIPT KILL, FUNCTION KILL, FUNCTION STATS).
  ScriptRun* running() { return running_; }

  // ---- SCRIPT DEBUG ----
  LuaDebugger& debugger() { return debugger_; }
  // Forked debugging sessions (SCRIPT DEBUG YES): any number run beside the server's other
  // children. Reaped from the cron; killed when the server goes.
  void AddDebugSession(pid_t pid) { debug_sessions_.push_back(pid); }
  void ReapDebugSessions();
  size_t debug_sessions() const { return debug_sessions_.size(); }

 private:
  std::unique_ptr<LuaEngine> NewEngine(bool functions_mode);

  ScriptHost& host_;
  const CommandTable& commands_;
  const ServerConfig& config_;
  LuaDebugger debugger_;  // before eval_, which points at it
  std::vector<pid_t> debug_sessions_;
  std::unique_ptr<LuaEngine> eval_;
  std::unique_ptr<LuaEngine> functions_engine_;
  StringMap<CachedScript> scripts_;
  size_t scripts_bytes_ = 0;
  std::map<std::string, std::unique_ptr<Library>> libraries_;
  StringMap<FunctionInfo*> functions_;
  ScriptRun* running_ = nullptr;
};

// Splits a "#!lua flags=..." (EVAL) or "#!lua name=..." (FUNCTION LOAD) first line.
struct Shebang {
  bool present = false;
  std::string engine;
  std::vector<std::string> options;  // "flags=no-writes", "name=mylib"
  size_t body_offset = 0;            // where the line ends (at its '\n')
};
Shebang ParseShebang(std::string_view code);

}  // namespace vireo
