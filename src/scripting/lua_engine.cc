#include "scripting/lua_engine.h"

#include <spdlog/spdlog.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "core/command_table.h"
#include "core/version.h"
#include "protocol/reply_builder.h"
#include "scripting/bitop.h"
#include "scripting/cjson.h"
#include "scripting/lua_alloc.h"
#include "scripting/lua_patterns.h"
#include "scripting/safe_unpack.h"
#include "scripting/sha1.h"
#include "security/acl.h"
#include "util/clock.h"
#include "util/strings.h"

namespace vireo {
namespace {

// An error outside any protected call (luaL_newstate installs the same kind of handler).
int PanicHandler(lua_State* L) {
  const char* message = lua_tostring(L, -1);
  spdlog::critical("Lua panic: {}", message != nullptr ? message : "(no message)");
  std::abort();
}

// Registry key under which each state keeps its engine, for the count hook.
char kEngineKey;

// Redis's instruction count between two looks at the clock.
constexpr int kHookInstructions = 100000;

// A state's heap bound, and the part of it scripts cannot take: the engine's own work after a
// script (converting its reply, the error table, stack growth) allocates outside any protected
// call, and must find room even when the script filled the heap to its bound.
constexpr size_t kHeapLimit = LuaAllocator::kDefaultLimit;
constexpr size_t kEngineReserve = size_t{16} << 20;

constexpr struct {
  uint32_t flag;
  std::string_view name;
} kFlagNames[] = {
    {kScriptNoWrites, "no-writes"},
    {kScriptAllowOom, "allow-oom"},
    {kScriptAllowStale, "allow-stale"},
    {kScriptNoCluster, "no-cluster"},
    {kScriptAllowCrossSlot, "allow-cross-slot-keys"},
};

LuaEngine* EngineOf(lua_State* L) {
  return static_cast<LuaEngine*>(lua_touserdata(L, lua_upvalueindex(1)));
}

}  // namespace

int NonexistentGlobal(lua_State* L) {
  const char* name = lua_tostring(L, 2);
  return luaL_error(L, "Script attempted to access nonexistent global variable '%s'",
                    name == nullptr ? "?" : name);
}

void PushErrorTable(lua_State* L, std::string_view text) {
  // "CODE rest": text starting with '-' carries its code up to the first space. Built from views
  // only: a Lua allocation below may raise, and nothing with a destructor may be alive then.
  std::string_view code = "ERR";
  std::string_view rest = text;
  if (!text.empty() && text[0] == '-') {
    size_t space = text.find(' ');
    if (space == std::string_view::npos) {
      rest = text.substr(1);
    } else {
      code = text.substr(1, space - 1);
      rest = text.substr(space + 1);
    }
  }
  while (!rest.empty() && (rest.back() == '\r' || rest.back() == '\n')) rest.remove_suffix(1);
  lua_createtable(L, 0, 1);
  lua_pushliteral(L, "err");
  lua_pushlstring(L, code.data(), code.size());
  lua_pushliteral(L, " ");
  lua_pushlstring(L, rest.data(), rest.size());
  lua_concat(L, 3);
  lua_rawset(L, -3);
}

namespace {

// Raises an error table from a C function (no C++ objects may be alive in the caller).
int RaiseError(lua_State* L, const char* text) {
  PushErrorTable(L, text);
  return lua_error(L);
}

int RedisCall(lua_State* L) {
  int r = EngineOf(L)->LuaCall(L, true);
  if (r < 0) return lua_error(L);
  return r;
}

int RedisPCall(lua_State* L) { return EngineOf(L)->LuaCall(L, false); }

// pcall that returns an error table's message, as Redis 7 does for compatibility.
int ProtectedCall(lua_State* L) {
  int argc = lua_gettop(L);
  luaL_checkany(L, 1);
  lua_pushboolean(L, 1);
  lua_insert(L, 1);
  if (lua_pcall(L, argc - 1, LUA_MULTRET, 0) != 0) {
    lua_remove(L, 1);
    if (lua_istable(L, -1)) {
      lua_getfield(L, -1, "err");
      if (lua_isstring(L, -1)) {
        lua_replace(L, -2);
      } else {
        lua_pop(L, 1);
      }
    }
    lua_pushboolean(L, 0);
    lua_insert(L, 1);
  }
  return lua_gettop(L);
}

int RedisSha1Hex(lua_State* L) {
  if (lua_gettop(L) != 1) return RaiseError(L, "wrong number of arguments");
  size_t len = 0;
  const char* s = lua_tolstring(L, 1, &len);
  char hex[41];
  {
    std::string digest = Sha1Hex(std::string_view(s == nullptr ? "" : s, s == nullptr ? 0 : len));
    memcpy(hex, digest.data(), 41);
  }
  lua_pushstring(L, hex);
  return 1;
}

int RedisErrorReply(lua_State* L) {
  if (lua_gettop(L) != 1 || lua_type(L, -1) != LUA_TSTRING) {
    PushErrorTable(L, "wrong number or type of arguments");
    return 1;
  }
  size_t len = 0;
  const char* s = lua_tolstring(L, -1, &len);
  std::string text(s, len);
  if (text.empty() || text[0] != '-') text.insert(text.begin(), '-');
  PushErrorTable(L, text);
  return 1;
}

int RedisStatusReply(lua_State* L) {
  if (lua_gettop(L) != 1 || lua_type(L, -1) != LUA_TSTRING) {
    PushErrorTable(L, "wrong number or type of arguments");
    return 1;
  }
  lua_createtable(L, 0, 1);
  lua_pushliteral(L, "ok");
  lua_pushvalue(L, -3);
  lua_rawset(L, -3);
  return 1;
}

int RedisLog(lua_State* L) {
  int argc = lua_gettop(L);
  if (argc < 2) return RaiseError(L, "redis.log() requires two arguments or more.");
  if (!lua_isnumber(L, 1)) return RaiseError(L, "First argument must be a number (log level).");
  int level = static_cast<int>(lua_tonumber(L, 1));
  if (level < 0 || level > 3) return RaiseError(L, "Invalid debug level.");
  std::string line;
  for (int i = 2; i <= argc; ++i) {
    size_t len = 0;
    const char* s = lua_tolstring(L, i, &len);
    if (s == nullptr) continue;
    if (i != 2) line.push_back(' ');
    line.append(s, len);
  }
  switch (level) {
    case 0:
      spdlog::debug("{}", line);
      break;
    case 1:
    case 2:
      spdlog::info("{}", line);
      break;
    default:
      spdlog::warn("{}", line);
  }
  return 0;
}

int RedisSetResp(lua_State* L) {
  int r = EngineOf(L)->LuaSetResp(L);
  if (r < 0) return lua_error(L);
  return r;
}

int RedisSetRepl(lua_State* L) {
  if (EngineOf(L)->current() == nullptr) {
    return RaiseError(L, "redis.set_repl can only be called inside a script invocation");
  }
  if (lua_gettop(L) != 1) return RaiseError(L, "redis.set_repl() requires two arguments.");
  int flags = static_cast<int>(lua_tonumber(L, -1));
  if ((flags & ~3) != 0) {
    return RaiseError(
        L, "Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE.");
  }
  // The script's next writes go only where the flags say (REPL_AOF 1, REPL_REPLICA 2).
  EngineOf(L)->current()->effects.current = static_cast<uint8_t>(flags);
  return 0;
}

int RedisReplicateCommands(lua_State* L) {
  lua_pushboolean(L, 1);
  return 1;
}

int RedisBreakpoint(lua_State* L) {
  lua_pushboolean(L, 0);
  return 1;
}

int RedisDebug(lua_State* L) { return 0; }

int RedisAclCheckCmd(lua_State* L) {
  LuaEngine* engine = EngineOf(L);
  if (engine->current() == nullptr) {
    return RaiseError(L, "redis.acl_check_cmd can only be called inside a script invocation");
  }
  if (lua_gettop(L) == 0) {
    return RaiseError(L, "Please specify at least one argument for this redis lib call");
  }
  // The arguments as a command line, as redis.call would take them.
  std::vector<std::string> args;
  for (int i = 1; i <= lua_gettop(L); ++i) {
    size_t len = 0;
    const char* arg = lua_type(L, i) == LUA_TNUMBER || lua_type(L, i) == LUA_TSTRING
                          ? lua_tolstring(L, i, &len)
                          : nullptr;
    if (arg == nullptr) {
      return RaiseError(L, "Lua redis lib command arguments must be strings or integers");
    }
    args.emplace_back(arg, len);
  }
  std::vector<std::string_view> argv(args.begin(), args.end());
  const CommandSpec* spec = engine->commands().Find(argv[0]);
  if (spec != nullptr && !spec->subcommands.empty() && argv.size() >= 2) {
    spec = CommandTable::FindSubcommand(*spec, argv[1]);
  }
  if (spec == nullptr) return RaiseError(L, "Invalid command passed to redis.acl_check_cmd()");
  // Checked against the calling client's user, without an ACL LOG entry (only a refused
  // command logs). Key positions need the arguments the command's arity promises.
  const AclUser* user = engine->host().ScriptCallerUser();
  bool allowed = true;
  if (user != nullptr && !user->unrestricted()) {
    size_t pos = 0;
    allowed = spec->ArityOk(argv.size()) && user->Check(*spec, argv, &pos) == AclResult::kOk;
  }
  lua_pushboolean(L, allowed ? 1 : 0);
  return 1;
}

int RedisRegisterFunction(lua_State* L) {
  int r = EngineOf(L)->LuaRegisterFunction(L);
  if (r < 0) return lua_error(L);
  return r;
}

int MathRandom(lua_State* L) {
  double r = EngineOf(L)->NextRandom();
  switch (lua_gettop(L)) {
    case 0:
      lua_pushnumber(L, r);
      break;
    case 1: {
      int u = luaL_checkint(L, 1);
      luaL_argcheck(L, 1 <= u, 1, "interval is empty");
      lua_pushnumber(L, std::floor(r * u) + 1);
      break;
    }
    case 2: {
      int l = luaL_checkint(L, 1);
      int u = luaL_checkint(L, 2);
      luaL_argcheck(L, l <= u, 2, "interval is empty");
      lua_pushnumber(L, std::floor(r * (u - l + 1)) + l);
      break;
    }
    default:
      return luaL_error(L, "wrong number of arguments");
  }
  return 1;
}

int MathRandomSeed(lua_State* L) {
  EngineOf(L)->SeedRandom(luaL_checkint(L, 1));
  return 0;
}

// Runs a script with nothing allocated outside the protected call: builds KEYS and ARGV (or the
// two FCALL arguments) and calls the function. Argument 1 is the RunSetup.
struct RunSetup {
  int ref;
  bool eval_mode;
  std::span<const std::string_view> keys;
  std::span<const std::string_view> args;
};

void PushStringArray(lua_State* L, std::span<const std::string_view> items) {
  lua_createtable(L, static_cast<int>(items.size()), 0);
  for (size_t i = 0; i < items.size(); ++i) {
    lua_pushlstring(L, items[i].data(), items[i].size());
    lua_rawseti(L, -2, static_cast<int>(i + 1));
  }
}

int RunTrampoline(lua_State* L) {
  const auto* setup = static_cast<const RunSetup*>(lua_touserdata(L, 1));
  lua_settop(L, 0);
  lua_rawgeti(L, LUA_REGISTRYINDEX, setup->ref);
  int nargs = 0;
  if (setup->eval_mode) {
    lua_pushliteral(L, "KEYS");
    PushStringArray(L, setup->keys);
    lua_rawset(L, LUA_GLOBALSINDEX);
    lua_pushliteral(L, "ARGV");
    PushStringArray(L, setup->args);
    lua_rawset(L, LUA_GLOBALSINDEX);
  } else {
    PushStringArray(L, setup->keys);
    PushStringArray(L, setup->args);
    nargs = 2;
  }
  lua_call(L, nargs, 1);
  return 1;
}

// Collections run inside lua_cpcall: they may run finalizers, and an error from one must come
// back as a status, never reach Lua's panic.
int GcStep(lua_State* L) {
  lua_gc(L, LUA_GCSTEP, 50);
  return 0;
}

int GcCollect(lua_State* L) {
  lua_gc(L, LUA_GCCOLLECT, 0);
  return 0;
}

void ProtectedGc(lua_State* L, lua_CFunction gc) {
  if (lua_cpcall(L, gc, nullptr) != 0) lua_pop(L, 1);
}

// Runs body(L) inside lua_cpcall, so a Lua error in it (running out of the heap's bound, above
// all) comes back as a status with the message on the stack instead of reaching the panic
// handler. A Lua error unwinds by longjmp: nothing with a destructor may be alive inside body
// across a Lua call.
template <typename Body>
int RunProtected(lua_State* L, Body& body) {
  return lua_cpcall(
      L,
      [](lua_State* state) -> int {
        Body& run = *static_cast<Body*>(lua_touserdata(state, 1));
        lua_pop(state, 1);
        run(state);
        return 0;
      },
      &body);
}

// Takes the message a failed RunProtected left on the stack.
std::string PopProtectedError(lua_State* L) {
  const char* msg = lua_tostring(L, -1);
  std::string text = msg == nullptr ? "unknown error" : msg;
  lua_pop(L, 1);
  return text;
}

// The message handler of every script call: turns the error into Redis's table
// {err=..., source=..., line=...} naming where the script failed.
int ErrorHandler(lua_State* L) {
  lua_Debug ar;
  bool have = false;
  if (lua_getstack(L, 1, &ar) != 0 && lua_getinfo(L, "Sl", &ar) != 0) {
    have = true;
    if (strcmp(ar.what, "C") == 0) {
      have = lua_getstack(L, 2, &ar) != 0 && lua_getinfo(L, "Sl", &ar) != 0;
    }
  }
  if (!lua_istable(L, 1)) {
    const char* msg = lua_tostring(L, 1);
    lua_pushfstring(L, "ERR %s", msg == nullptr ? "(null)" : msg);
    lua_createtable(L, 0, 3);
    lua_pushliteral(L, "err");
    lua_pushvalue(L, -3);
    lua_rawset(L, -3);
    lua_replace(L, 1);
    lua_settop(L, 1);
  }
  if (have) {
    lua_pushliteral(L, "source");
    lua_pushstring(L, ar.source);
    lua_rawset(L, 1);
    lua_pushliteral(L, "line");
    lua_pushinteger(L, ar.currentline);
    lua_rawset(L, 1);
  }
  lua_settop(L, 1);
  return 1;
}

void CountHook(lua_State* L, lua_Debug* ar) {
  lua_pushlightuserdata(L, &kEngineKey);
  lua_rawget(L, LUA_REGISTRYINDEX);
  auto* engine = static_cast<LuaEngine*>(lua_touserdata(L, -1));
  lua_pop(L, 1);
  if (engine != nullptr) engine->Hook(L);
}

void SetField(lua_State* L, const char* name, lua_CFunction fn, LuaEngine* engine) {
  lua_pushstring(L, name);
  lua_pushlightuserdata(L, engine);
  lua_pushcclosure(L, fn, 1);
  lua_rawset(L, -3);
}

void SetNumber(lua_State* L, const char* name, double value) {
  lua_pushstring(L, name);
  lua_pushnumber(L, value);
  lua_rawset(L, -3);
}

void SetString(lua_State* L, const char* name, std::string_view value) {
  lua_pushstring(L, name);
  lua_pushlstring(L, value.data(), value.size());
  lua_rawset(L, -3);
}

void RegisterLogAndVersion(lua_State* L, LuaEngine* engine) {
  SetField(L, "log", RedisLog, engine);
  SetNumber(L, "LOG_DEBUG", 0);
  SetNumber(L, "LOG_VERBOSE", 1);
  SetNumber(L, "LOG_NOTICE", 2);
  SetNumber(L, "LOG_WARNING", 3);
  SetString(L, "REDIS_VERSION", kRedisCompatVersion);
  int major = 0, minor = 0, patch = 0;
  sscanf(std::string(kRedisCompatVersion).c_str(), "%d.%d.%d", &major, &minor, &patch);
  SetNumber(L, "REDIS_VERSION_NUM", (major << 16) | (minor << 8) | patch);
}

}  // namespace

bool ParseScriptFlags(std::string_view list, uint32_t* flags, std::string* bad) {
  while (!list.empty()) {
    size_t comma = list.find(',');
    std::string_view name = list.substr(0, comma);
    list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
    bool found = false;
    for (const auto& f : kFlagNames) {
      if (f.name == name) {
        *flags |= f.flag;
        found = true;
      }
    }
    if (!found) {
      *bad = std::string(name);
      return false;
    }
  }
  return true;
}

std::vector<std::string_view> ScriptFlagNames(uint32_t flags) {
  std::vector<std::string_view> out;
  for (const auto& f : kFlagNames) {
    if ((flags & f.flag) != 0) out.push_back(f.name);
  }
  return out;
}

LuaEngine::LuaEngine(ScriptHost& host, const CommandTable& commands, const ServerConfig& config,
                     bool functions_mode)
    : host_(host), commands_(commands), config_(config), functions_mode_(functions_mode) {
  // The allocator outlives the state: the destructor frees it after lua_close.
  allocator_ = new LuaAllocator(kHeapLimit);
  lua_ = lua_newstate(LuaAllocator::Alloc, allocator_);
  lua_State* L = lua_;
  lua_atpanic(L, PanicHandler);
  lua_pushlightuserdata(L, &kEngineKey);
  lua_pushlightuserdata(L, this);
  lua_rawset(L, LUA_REGISTRYINDEX);
  OpenLibraries();
  InstallStringFunctions(L, this);
  InstallRedisApi();
  ProtectGlobals();
  lua_pushcfunction(L, ErrorHandler);
  handler_ref_ = luaL_ref(L, LUA_REGISTRYINDEX);
  lua_pushcfunction(L, RunTrampoline);
  trampoline_ref_ = luaL_ref(L, LUA_REGISTRYINDEX);
}

LuaEngine::~LuaEngine() {
  if (lua_ == nullptr) return;
  // Finish the collector's cycle in a protected call before closing (CVE-2024-46981: closing
  // mid-cycle could free userdata a finalizer still used). No script-defined finalizer exists
  // (newproxy is not offered), so this and lua_close only run vireo's own and stay bounded.
  lua_sethook(lua_, nullptr, 0, 0);
  ProtectedGc(lua_, GcCollect);
  lua_close(lua_);
  delete allocator_;
}

void LuaEngine::OpenLibraries() {
  lua_State* L = lua_;
  const struct {
    const char* name;
    lua_CFunction open;
  } kLibs[] = {{"", luaopen_base},
               {"", OpenSafeUnpack},  // replaces the base library's unpack
               {LUA_TABLIBNAME, luaopen_table},
               {LUA_STRLIBNAME, luaopen_string},
               {LUA_MATHLIBNAME, luaopen_math},
               {"cjson", OpenCjson},
               {"bit", OpenBit},
               {"struct", OpenStruct},
               {"cmsgpack", OpenCmsgpack}};
  for (const auto& lib : kLibs) {
    lua_pushcfunction(L, lib.open);
    lua_pushstring(L, lib.name);
    lua_call(L, 1, 1);
    // Some openers set the global themselves, some only return the table.
    if (lib.name[0] != '\0' && lua_istable(L, -1)) {
      lua_pushstring(L, lib.name);
      lua_pushvalue(L, -2);
      lua_rawset(L, LUA_GLOBALSINDEX);
    }
    lua_settop(L, 0);
  }
  // No file access and no console output from scripts. No newproxy either: Redis 7.2 offers it
  // (undocumented), but it is the only way a script can create a finalizer, and Lua 5.1 runs
  // finalizers with hooks off, at whatever later allocation triggers a collection step: a
  // looping __gc escapes the script time limit and SCRIPT KILL, and an erroring one fails an
  // unrelated script or, outside a protected call, panics.
  for (const char* name :
       {"print", "dofile", "loadfile", "module", "require", "package", "newproxy"}) {
    lua_pushstring(L, name);
    lua_pushnil(L);
    lua_rawset(L, LUA_GLOBALSINDEX);
  }
}

void LuaEngine::InstallRedisApi() {
  lua_State* L = lua_;
  // The full API, used by EVAL scripts and by functions when they run.
  lua_newtable(L);
  SetField(L, "call", RedisCall, this);
  SetField(L, "pcall", RedisPCall, this);
  RegisterLogAndVersion(L, this);
  SetField(L, "setresp", RedisSetResp, this);
  SetField(L, "sha1hex", RedisSha1Hex, this);
  SetField(L, "error_reply", RedisErrorReply, this);
  SetField(L, "status_reply", RedisStatusReply, this);
  SetField(L, "set_repl", RedisSetRepl, this);
  SetNumber(L, "REPL_NONE", 0);
  SetNumber(L, "REPL_AOF", 1);
  SetNumber(L, "REPL_SLAVE", 2);
  SetNumber(L, "REPL_REPLICA", 2);
  SetNumber(L, "REPL_ALL", 3);
  SetField(L, "replicate_commands", RedisReplicateCommands, this);
  SetField(L, "breakpoint", RedisBreakpoint, this);
  SetField(L, "debug", RedisDebug, this);
  SetField(L, "acl_check_cmd", RedisAclCheckCmd, this);
  full_api_ref_ = luaL_ref(L, LUA_REGISTRYINDEX);

  if (functions_mode_) {
    // What FUNCTION LOAD's library body sees: `redis` with registration and logging only.
    lua_newtable(L);
    SetField(L, "register_function", RedisRegisterFunction, this);
    RegisterLogAndVersion(L, this);
    // redis.call and the rest don't exist at load time: reading them is an error.
    lua_createtable(L, 0, 1);
    lua_pushcfunction(L, NonexistentGlobal);
    lua_setfield(L, -2, "__index");
    lua_setmetatable(L, -2);
    load_api_ref_ = luaL_ref(L, LUA_REGISTRYINDEX);
  }

  lua_pushliteral(L, "pcall");
  lua_pushcfunction(L, ProtectedCall);
  lua_rawset(L, LUA_GLOBALSINDEX);

  lua_getglobal(L, "math");
  SetField(L, "random", MathRandom, this);
  SetField(L, "randomseed", MathRandomSeed, this);
  lua_pop(L, 1);
}

int LuaEngine::Compile(std::string_view code, const char* chunk_name, std::string* error) {
  int ref = LUA_NOREF;
  auto body = [&](lua_State* L) {
    // The name is a string on the stack while the parser runs (CVE-2025-49844 anchors it).
    lua_pushstring(L, chunk_name);
    if (PushChunk(L, code.data(), code.size(), lua_tostring(L, -1)) != 1) {
      const char* msg = lua_tostring(L, -1);
      error->assign(msg == nullptr ? "unknown error" : msg);  // no Lua call follows
      return;
    }
    lua_rawgeti(L, LUA_REGISTRYINDEX, proxy_ref_);
    lua_setfenv(L, -2);
    ref = luaL_ref(L, LUA_REGISTRYINDEX);
  };
  if (RunProtected(lua_, body) != 0) {
    *error = PopProtectedError(lua_);
    return LUA_NOREF;
  }
  return ref;
}

void LuaEngine::Unref(int ref) { luaL_unref(lua_, LUA_REGISTRYINDEX, ref); }

size_t LuaEngine::MemoryBytes() {
  return static_cast<size_t>(lua_gc(lua_, LUA_GCCOUNT, 0)) * 1024 +
         static_cast<size_t>(lua_gc(lua_, LUA_GCCOUNTB, 0));
}

namespace {
// Redis 7's generator state is one per process, shared by EVAL and functions, carried from
// script to script (not reseeded per call since 7.0), starting from rand48's default seed.
// Per thread here, which is per server.
thread_local uint64_t rand48_state = 0x1234ABCD330EULL;
}  // namespace

double LuaEngine::NextRandom() {
  // POSIX lrand48 (a 48-bit LCG), as Redis's own rand48, so sequences match Redis's.
  rand48_state = (0x5DEECE66DULL * rand48_state + 0xB) & ((1ULL << 48) - 1);
  int64_t r = static_cast<int64_t>(rand48_state >> 17);
  constexpr int64_t kMax = 0x7fffffff;
  return static_cast<double>(r % kMax) / static_cast<double>(kMax);
}

void LuaEngine::SeedRandom(int64_t seed) {
  rand48_state = ((static_cast<uint64_t>(seed) & 0xffffffffULL) << 16) | 0x330E;
}

int LuaEngine::LuaSetResp(lua_State* L) {
  if (run_ == nullptr) {
    PushErrorTable(L, "redis.setresp can only be called inside a script invocation");
    return -1;
  }
  if (lua_gettop(L) != 1) {
    PushErrorTable(L, "redis.setresp() requires one argument.");
    return -1;
  }
  int resp = static_cast<int>(lua_tonumber(L, 1));
  if (resp != 2 && resp != 3) {
    PushErrorTable(L, "RESP version must be 2 or 3.");
    return -1;
  }
  resp_ = resp;
  return 0;
}

int LuaEngine::LuaCall(lua_State* L, bool raise) {
  // Returns 1 (one value pushed) or -1 (an error table pushed that the caller raises).
  auto fail = [&](const char* text) {
    PushErrorTable(L, text);
    return raise ? -1 : 1;
  };
  if (run_ == nullptr) {
    PushErrorTable(L, "redis.call/pcall can only be called inside a script invocation");
    return -1;
  }
  int argc = lua_gettop(L);
  if (argc == 0) return fail("Please specify at least one argument for this redis lib call");
  argv_.clear();
  size_t numbers = 0;
  for (int i = 1; i <= argc; ++i) {
    int type = lua_type(L, i);
    if (type == LUA_TNUMBER) {
      // lua_tolstring would use "%.14g" and lose precision. Redis 7.2 writes integral values
      // (|v| <= 2^62) as integers and others in the shortest round-trip form: FormatDouble,
      // except that -0 becomes "0" on this path.
      if (numbers == number_args_.size()) number_args_.emplace_back();
      std::string& text = number_args_[numbers++];
      double number = lua_tonumber(L, i);
      char buf[kDoubleBufSize];
      size_t n = number == 0 ? 1 : FormatDouble(number, buf);
      if (number == 0) buf[0] = '0';
      text.assign(buf, n);
      argv_.emplace_back(text);
    } else if (type == LUA_TSTRING) {
      size_t len = 0;
      const char* s = lua_tolstring(L, i, &len);
      argv_.emplace_back(s, len);
    } else {
      return fail("Lua redis lib command arguments must be strings or integers");
    }
  }
  // Number texts may have moved when number_args_ grew: refresh their views.
  for (size_t i = 0, n = 0; i < argv_.size(); ++i) {
    if (lua_type(L, static_cast<int>(i) + 1) == LUA_TNUMBER) argv_[i] = number_args_[n++];
  }
  const CommandSpec* spec = command_cache_.Find(commands_, argv_[0]);
  if (spec != nullptr && !spec->subcommands.empty() && argv_.size() >= 2) {
    spec = CommandTable::FindSubcommand(*spec, argv_[1]);
  }
  // Refused before running: counted as an error reply and the command's rejected call (INFO
  // errorstats, commandstats), as Redis counts a script's refused commands; the error table
  // says so, so the script returning it doesn't count it twice.
  auto reject = [&](const char* text) {
    host_.CountScriptRejection(spec, text);
    PushErrorTable(L, text);
    MarkErrorCounted(L);
    return raise ? -1 : 1;
  };
  if (spec == nullptr) return reject("Unknown Redis command called from script");
  if (!spec->ArityOk(argv_.size())) {
    return reject("Wrong number of args calling Redis command from script");
  }
  if (spec->has(kCmdNoScript) && !host_.DenyScriptsDisabled()) {
    return reject("This Redis command is not allowed from script");
  }
  // ACL: the script's commands are checked against the calling client's user.
  if (std::string denied = host_.ScriptAclError(*spec, argv_); !denied.empty()) {
    return reject(denied.c_str());
  }
  // min-replicas-to-write holds for a script's writes too (not for our master's scripts).
  if (spec->has(kCmdWrite) && !run_->from_master) {
    if (std::string_view err = host_.MinReplicasError(); !err.empty()) {
      return reject("-NOREPLICAS Not enough good replicas to write.");
    }
  }
  // Over maxmemory when the script started: until the script has written something (then
  // it must be allowed to finish what it began), deny-oom commands fail as they would outside.
  if (spec->has(kCmdDenyOom) && !run_->allow_oom && !run_->write_dirty && host_.PreCommandOom() &&
      config_.maxmemory > 0) {
    return reject("-OOM command not allowed when used memory > 'maxmemory'.");
  }
  // A read-only script may not replicate anything either (PUBLISH): that is what lets it run
  // through CLIENT PAUSE WRITE, as in Redis.
  if (run_->read_only && (spec->has(kCmdWrite) || spec->has(kCmdMayReplicate))) {
    return reject("Write commands are not allowed from read-only scripts.");
  }
  if (spec->has(kCmdWrite)) {
    // A read-only replica refuses a script's writes as it refuses a client's (not its
    // master's: it applies whatever the master sends).
    if (host_.IsReplica() && config_.replica_read_only && !run_->from_master) {
      return reject("-READONLY You can't write against a read only replica.");
    }
    run_->write_dirty = true;
  }
  if (!spec->has(kCmdStale) && !run_->from_master && host_.StaleReplica()) {
    return reject(
        "Can not execute the command on a stale replica. The replica is stale and "
        "'replica-serve-stale-data' is set to 'no'");
  }
  // Cluster mode: only keys of this node's slots, all in one slot (src/cluster/redirect.h).
  if (std::string err = host_.ScriptClusterError(*run_, *spec, argv_); !err.empty()) {
    return reject(err.c_str());
  }
  // No lua_checkstack here: with thousands of arguments (unpack of a large table) it would
  // refuse, and the error table needs only the LUA_MINSTACK slots every C function gets.
  std::string& out = host_.RunScriptCommand(*spec, argv_, resp_);
  // The arguments are done with: the reply gets the whole stack (CVE-2021-32626: with thousands
  // of arguments left below it, a nested reply would outgrow what lua_checkstack can grant).
  argv_.clear();
  lua_settop(L, 0);
  const char* p = out.data();
  bool is_error = !out.empty() && out[0] == '-';
  PushRespValue(&p, out.data() + out.size());
  out.clear();
  return is_error && raise ? -1 : 1;
}

void LuaEngine::Run(ScriptRun& run, int ref, std::span<const std::string_view> keys,
                    std::span<const std::string_view> args, ReplyBuilder& reply) {
  lua_State* L = lua_;
  run_ = &run;
  resp_ = 2;
  if (functions_mode_) {
    lua_rawgeti(L, LUA_REGISTRYINDEX, api_slot_ref_);
    lua_pushliteral(L, "__index");
    lua_pushvalue(L, LUA_GLOBALSINDEX);
    lua_rawset(L, -3);
    lua_pop(L, 1);
  }
  // Only registry reads and a light userdata outside the protected call: nothing here
  // allocates, so nothing can raise where Lua would panic.
  int base = lua_gettop(L) + 1;
  RunSetup setup{ref, run.eval_mode, keys, args};
  lua_rawgeti(L, LUA_REGISTRYINDEX, handler_ref_);
  lua_rawgeti(L, LUA_REGISTRYINDEX, trampoline_ref_);
  lua_pushlightuserdata(L, &setup);
  bool hooked = config_.busy_reply_threshold > 0;
  if (hooked) lua_sethook(L, CountHook, LUA_MASKCOUNT, kHookInstructions);
  host_.ScriptStarted(run);
  allocator_->set_limit(kHeapLimit - kEngineReserve);
  int status = lua_pcall(L, 1, 1, base);
  allocator_->set_limit(kHeapLimit);
  host_.ScriptEnded();
  if (hooked) lua_sethook(L, nullptr, 0, 0);
  if (status == LUA_ERRMEM) {
    // The script ran into the allocator's bound: free what it left before anything else
    // allocates (the reply below does).
    ProtectedGc(L, GcCollect);
    calls_since_gc_ = 0;
  } else if (++calls_since_gc_ == 50) {
    // A little incremental collection every few calls keeps Lua from a long full cycle later.
    ProtectedGc(L, GcStep);
    calls_since_gc_ = 0;
  }
  if (status != 0) {
    if (lua_istable(L, -1)) {
      lua_getfield(L, -1, "err");
      std::string msg = lua_isstring(L, -1) ? lua_tostring(L, -1) : "ERR unknown error";
      lua_pop(L, 1);
      lua_getfield(L, -1, "source");
      lua_getfield(L, -2, "line");
      if (lua_isstring(L, -2) && lua_isstring(L, -1)) {
        msg += " script: " + std::string(run.name) + ", on " + lua_tostring(L, -2) + ":" +
               lua_tostring(L, -1) + ".";
      }
      lua_pop(L, 2);
      if (ErrorCounted(L, -1)) {
        reply.ErrorUncounted(msg);
        run.uncounted_error = true;
      } else {
        reply.Error(msg);
      }
    } else {
      const char* msg = lua_tostring(L, -1);
      std::string text = std::string(msg == nullptr ? "execution failure" : msg).substr(0, 100);
      reply.Error("ERR Error running script " + std::string(run.name) + ", " + text);
    }
  } else {
    LuaToReply(L, reply, resp_, &run.uncounted_error);
  }
  lua_settop(L, base - 1);
  run_ = nullptr;
}

void LuaEngine::Hook(lua_State* L) {
  if (run_ == nullptr) {
    // FUNCTION LOAD: a library body may not run for long.
    if (load_deadline_us_ != 0 && MonotonicUs() > load_deadline_us_) {
      PushErrorTable(L, "FUNCTION LOAD timeout");
      lua_error(L);
    }
    return;
  }
  ScriptRun& run = *run_;
  if (!run.timed_out) {
    int64_t elapsed_ms = (MonotonicUs() - run.start_us) / 1000;
    if (elapsed_ms < config_.busy_reply_threshold) return;
    run.timed_out = true;
    spdlog::warn(
        "Slow script detected: still in execution after {} milliseconds. You can try killing "
        "the script using the {} command.",
        elapsed_ms, run.eval_mode ? "SCRIPT KILL" : "FUNCTION KILL");
    host_.SetBusyScript(run.eval_mode ? 1 : 2);
  }
  // Answer other clients (-BUSY, SCRIPT KILL, SHUTDOWN NOSAVE) while the script runs on.
  host_.ServeClientsWhileBusy();
  if (run.killed || host_.ShuttingDown()) {
    if (run.killed) spdlog::warn("Lua script killed by user with SCRIPT KILL.");
    // Every line from now on raises again, so a pcall in the script can't swallow the kill.
    lua_sethook(L, CountHook, LUA_MASKLINE, 0);
    PushErrorTable(L, "Script killed by user with SCRIPT KILL...");
    lua_error(L);
  }
}

void LuaEngine::CheckTime(lua_State* L) {
  if (run_ == nullptr ? load_deadline_us_ == 0 : config_.busy_reply_threshold <= 0) return;
  Hook(L);
}

std::string LuaEngine::RunLibraryLoad(int ref, std::vector<Registration>* out, int64_t timeout_ms) {
  lua_State* L = lua_;
  // While the body runs, its globals are only the load-time `redis`. (Built in a protected
  // call: these tables are allocations, and the heap may be at its bound.)
  auto install = [this](lua_State* state) {
    lua_rawgeti(state, LUA_REGISTRYINDEX, api_slot_ref_);
    lua_pushliteral(state, "__index");
    lua_createtable(state, 0, 1);
    lua_pushliteral(state, "redis");
    lua_rawgeti(state, LUA_REGISTRYINDEX, load_api_ref_);
    lua_rawset(state, -3);
    lua_createtable(state, 0, 1);
    lua_pushcfunction(state, NonexistentGlobal);
    lua_setfield(state, -2, "__index");
    lua_setmetatable(state, -2);
    lua_rawset(state, -3);
  };
  if (RunProtected(L, install) != 0) return "ERR " + PopProtectedError(L);

  registrations_ = out;
  load_deadline_us_ = MonotonicUs() + timeout_ms * 1000;
  lua_sethook(L, CountHook, LUA_MASKCOUNT, kHookInstructions);
  lua_rawgeti(L, LUA_REGISTRYINDEX, ref);
  allocator_->set_limit(kHeapLimit - kEngineReserve);
  int status = lua_pcall(L, 0, 0, 0);
  allocator_->set_limit(kHeapLimit);
  lua_sethook(L, nullptr, 0, 0);
  load_deadline_us_ = 0;
  registrations_ = nullptr;
  std::string error;
  if (status != 0) {
    if (lua_istable(L, -1)) {
      lua_getfield(L, -1, "err");
      error = lua_isstring(L, -1) ? lua_tostring(L, -1) : "ERR unknown error";
      lua_pop(L, 1);
    } else {
      const char* msg = lua_tostring(L, -1);
      error = std::string("ERR ") + (msg == nullptr ? "unknown error" : msg);
    }
    lua_pop(L, 1);
  }
  // Back to the run-time globals.
  lua_rawgeti(L, LUA_REGISTRYINDEX, api_slot_ref_);
  lua_pushliteral(L, "__index");
  lua_pushvalue(L, LUA_GLOBALSINDEX);
  lua_rawset(L, -3);
  lua_pop(L, 1);
  return error;
}

}  // namespace vireo
