// One Lua 5.1 interpreter with Redis's script environment: the sandboxed globals, the `redis`
// API (call/pcall through the command table with a client of its own), the cjson, bit, struct
// and cmsgpack libraries, and the Lua <-> RESP conversions.
//
// EVAL scripts and FUNCTION libraries each get an engine (as in Redis, the two never share
// globals).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

extern "C" {
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
}

#include "core/command_table.h"
#include "core/config.h"
#include "core/propagator.h"
#include "scripting/script_host.h"

namespace vireo {

class LuaAllocator;
class LuaDebugger;
class ReplyBuilder;

// Flags from a script's shebang line or a function's registration.
enum ScriptFlag : uint32_t {
  kScriptNoWrites = 1u << 0,
  kScriptAllowOom = 1u << 1,
  kScriptAllowStale = 1u << 2,
  kScriptNoCluster = 1u << 3,
  kScriptAllowCrossSlot = 1u << 4,
  // A script without a shebang: Redis's pre-7.0 rules (writes allowed, flags ignored).
  kScriptEvalCompat = 1u << 5,
};

// Parses "no-writes,allow-oom" into flags; false (and the offending flag in *bad) if unknown.
bool ParseScriptFlags(std::string_view list, uint32_t* flags, std::string* bad);
// The flag names in Redis's order, for FUNCTION LIST.
std::vector<std::string_view> ScriptFlagNames(uint32_t flags);

// The state of the script being executed.
struct ScriptRun {
  // The caller is our master: its scripts apply whatever min-replicas, replica-read-only or
  // the cluster's slots say.
  bool from_master = false;
  std::string name;                        // the SHA1 for EVAL, the function name for FCALL
  std::span<const std::string_view> argv;  // the command that runs it (FUNCTION STATS)
  bool eval_mode = true;
  bool read_only = false;
  int64_t start_us = 0;
  bool timed_out = false;
  bool killed = false;
  bool write_dirty = false;  // a write command ran: SCRIPT KILL refuses
  bool allow_oom = false;    // the allow-oom flag: deny-oom commands run even over maxmemory
  // The reply is an error its command already counted in INFO errorstats: the script's own
  // command counts a failed call without counting the error again.
  bool uncounted_error = false;
  // Cluster mode: the slot of the keys the script used so far (its declared keys first), -1
  // before any; with allow-cross-slot-keys the script may use keys of other local slots.
  int cluster_slot = -1;
  bool allow_cross_slot = false;
  // Effects to propagate instead of the script (Redis 7 replicates effects, not scripts).
  ScriptEffects effects;
};

class LuaEngine {
 public:
  // `host` runs the scripts' commands; `commands` and `config` outlive the engine.
  LuaEngine(ScriptHost& host, const CommandTable& commands, const ServerConfig& config,
            bool functions_mode);
  ~LuaEngine();
  LuaEngine(const LuaEngine&) = delete;
  LuaEngine& operator=(const LuaEngine&) = delete;

  lua_State* state() { return lua_; }
  ScriptHost& host() { return host_; }
  const CommandTable& commands() const { return commands_; }
  ScriptRun* current() { return run_; }
  // The EVAL engine's debugger (SCRIPT DEBUG); null for FUNCTION's. A script runs under it
  // while it has a session active.
  LuaDebugger* debugger() { return debugger_; }
  void set_debugger(LuaDebugger* debugger) { debugger_ = debugger; }

  // Compiles `code` under `chunk_name` ("@user_script") with the sandboxed globals as its
  // environment. Returns a registry reference, or LUA_NOREF with the Lua message in *error.
  int Compile(std::string_view code, const char* chunk_name, std::string* error);
  void Unref(int ref);

  // Runs the function held at `ref`. EVAL (eval_mode): KEYS and ARGV become globals and the
  // function takes no arguments; FCALL: the function receives (keys, args). The reply (or
  // Redis's error shape) goes to `reply`.
  void Run(ScriptRun& run, int ref, std::span<const std::string_view> keys,
           std::span<const std::string_view> args, ReplyBuilder& reply);

  // FUNCTION LOAD support: while loading, `redis` in the library environment is the limited
  // load-time API (register_function, log, ...) and registrations go to the callback.
  struct Registration {
    std::string name;
    int ref = LUA_NOREF;
    uint32_t flags = 0;
    std::string description;
  };
  // Runs the compiled library body at `ref` in load mode. Returns "" or the error text.
  std::string RunLibraryLoad(int ref, std::vector<Registration>* out, int64_t timeout_ms);

  // Lua memory in bytes (INFO used_memory_lua / FUNCTION STATS).
  size_t MemoryBytes();

  // Called by the redis.* C functions.
  int LuaCall(lua_State* L, bool raise);
  int LuaSetResp(lua_State* L);
  int LuaRegisterFunction(lua_State* L);
  double NextRandom();
  void SeedRandom(int64_t seed);
  void Hook(lua_State* L);
  // The line hook of a debugged script: the error text to raise, or nullptr.
  const char* DebugHook(lua_State* L, lua_Debug* ar);
  // The time check of long C calls (the pattern matcher): as the count hook, it serves other
  // clients past busy-reply-threshold and raises after SCRIPT KILL or the FUNCTION LOAD
  // deadline. Returns at once when no limit applies.
  void CheckTime(lua_State* L);

 private:
  void OpenLibraries();
  void InstallRedisApi();
  void ProtectGlobals();
  int PushRespValue(const char** p, const char* end);

  ScriptHost& host_;
  const CommandTable& commands_;
  CommandLookupCache command_cache_;  // redis.call's argv[0]
  const ServerConfig& config_;
  bool functions_mode_;
  lua_State* lua_ = nullptr;
  ScriptRun* run_ = nullptr;
  LuaDebugger* debugger_ = nullptr;
  int resp_ = 2;  // the protocol the running script chose with redis.setresp
  std::vector<std::string_view> argv_;
  std::vector<std::string> number_args_;  // "%.17g" texts of number arguments
  LuaAllocator* allocator_ = nullptr;     // owned: freed after lua_close
  int calls_since_gc_ = 0;
  int handler_ref_ = LUA_NOREF;     // ErrorHandler, pushed without allocating
  int trampoline_ref_ = LUA_NOREF;  // RunTrampoline, likewise
  int globals_ref_ = LUA_NOREF;     // the real globals table
  int proxy_ref_ = LUA_NOREF;       // what scripts see as _G: reads through, writes refused
  int api_slot_ref_ = LUA_NOREF;    // functions mode: the table holding `redis` (load/run API)
  int full_api_ref_ = LUA_NOREF;    // the redis table with call/pcall
  int load_api_ref_ = LUA_NOREF;    // the redis table offered to FUNCTION LOAD
  std::vector<Registration>* registrations_ = nullptr;
  std::string load_error_;
  int64_t load_deadline_us_ = 0;
};

// Pushes Redis's error table {err="CODE message"}: text starting with '-' carries its own
// code (up to the first space); other text gets "ERR".
void PushErrorTable(lua_State* L, std::string_view text);

// Marks the error table on top of the stack as already counted in INFO errorstats (the reply
// of a script's command, or its refusal): returned by the script, it isn't counted again.
void MarkErrorCounted(lua_State* L);
// Whether the error table at `index` (negative: from the top) is so marked.
bool ErrorCounted(lua_State* L, int index);

// Converts the Lua value on top of the stack to a reply (and pops it). `script_resp` is the
// protocol the script selected with redis.setresp (booleans differ between 2 and 3). An
// error already counted is written uncounted, and sets *uncounted_error (the script then
// failed without an error of its own: its failed_calls counts it).
void LuaToReply(lua_State* L, ReplyBuilder& reply, int script_resp, bool* uncounted_error);

// The __index of the globals: reading a name that does not exist is an error, as in Redis.
int NonexistentGlobal(lua_State* L);

// Compiles [s, s + len) as Lua source under `name` and pushes the function, or nil and the
// message. Never loads precompiled bytecode, nor chunks of kMaxChunkBytes or more (whose
// content it does not read). `name` must point into a string on the Lua stack.
inline constexpr size_t kMaxChunkBytes = size_t{1} << 30;
int PushChunk(lua_State* L, const char* s, size_t len, const char* name);

// The library openers of the modules written here (cmsgpack.cc, struct.cc).
int OpenCmsgpack(lua_State* L);
int OpenStruct(lua_State* L);

}  // namespace vireo
