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
#include "scripting/lua_engine.h"

namespace vireo {

class Server;
class CommandContext;

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

class Scripting {
 public:
  explicit Scripting(Server& server);
  ~Scripting();

  Server& server() { return server_; }

  // ---- EVAL ----
  LuaEngine& eval_engine() { return *eval_; }
  // Compiles and caches `body` unless already cached. Returns the cache entry, or nullptr with
  // Redis's error text in *error.
  CachedScript* LoadScript(std::string_view body, std::string* sha, std::string* error);
  CachedScript* FindScript(std::string_view sha);
  void FlushScripts();
  size_t script_count() const { return scripts_.size(); }
  size_t scripts_memory() const { return scripts_bytes_; }

  // ---- FUNCTION ----
  LuaEngine& function_engine();
  // Parses, compiles and registers a library. Returns its name, or "" with the error in *error.
  std::string LoadLibrary(std::string_view code, bool replace, std::string* error);
  bool DeleteLibrary(std::string_view name);
  void FlushLibraries();
  const std::map<std::string, std::unique_ptr<Library>>& libraries() const { return libraries_; }
  FunctionInfo* FindFunction(std::string_view name);
  size_t function_count() const { return functions_.size(); }

  // The flags an EVAL/EVALSHA/FCALL (or _RO) command's script declares, found without running
  // it (a cached script, a shebang, a function): what decides, as in Redis, whether a write
  // pause holds it. `command` is a command table name (lower case). nullopt when it declares
  // none (another command, a script without a shebang, an unknown script or function, a
  // shebang that doesn't parse: the command's own flags apply).
  std::optional<uint32_t> DeclaredFlags(std::string_view command,
                                        std::span<const std::string_view> argv);

  // For persistence (RDB aux "functions" / FUNCTION DUMP): every library as (name, code).
  std::vector<std::pair<std::string, std::string>> EnumerateLibraries() const;

  // The script being executed, if any (SCRIPT KILL, FUNCTION KILL, FUNCTION STATS).
  ScriptRun* running() { return running_; }
  void set_running(ScriptRun* run) { running_ = run; }

 private:
  Server& server_;
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

// Runs a script or function for `ctx` with all of Redis's checks and reply shapes.
void RunScript(CommandContext& ctx, LuaEngine& engine, int ref, uint32_t flags, bool ro,
               std::string_view name, size_t numkeys, size_t first_key);

}  // namespace vireo
