#include "scripting/scripting.h"

#include <fmt/format.h>
#include <sys/wait.h>

#include <algorithm>
#include <cctype>
#include <csignal>

#include "core/key_slot.h"
#include "protocol/reply_builder.h"
#include "scripting/sha1.h"
#include "util/clock.h"
#include "util/strings.h"

namespace vireo {
namespace {

bool ValidName(std::string_view name) {
  if (name.empty()) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
  });
}

// FUNCTION LOAD may not run a library body for longer than this (as Redis).
constexpr int64_t kLoadTimeoutMs = 500;

}  // namespace

Shebang ParseShebang(std::string_view code) {
  Shebang out;
  if (!code.starts_with("#!")) return out;
  out.present = true;
  size_t eol = code.find('\n');
  out.body_offset = eol == std::string_view::npos ? code.size() : eol;
  std::string_view line = code.substr(0, out.body_offset);
  bool first = true;
  while (!line.empty()) {
    size_t start = line.find_first_not_of(" \t\r");
    if (start == std::string_view::npos) break;
    line.remove_prefix(start);
    size_t end = line.find_first_of(" \t\r");
    std::string_view token = line.substr(0, end);
    line = end == std::string_view::npos ? std::string_view() : line.substr(end);
    if (first) {
      out.engine = std::string(token);
      first = false;
    } else {
      out.options.emplace_back(token);
    }
  }
  return out;
}

Scripting::Scripting(ScriptHost& host, const CommandTable& commands, const ServerConfig& config)
    : host_(host), commands_(commands), config_(config), eval_(NewEngine(false)) {}

Scripting::~Scripting() {
  // A debugging session dies with its server (Redis kills them at shutdown).
  for (pid_t pid : debug_sessions_) {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
  }
}

void Scripting::ReapDebugSessions() {
  std::erase_if(debug_sessions_, [](pid_t pid) { return waitpid(pid, nullptr, WNOHANG) != 0; });
}

std::unique_ptr<LuaEngine> Scripting::NewEngine(bool functions_mode) {
  auto engine = std::make_unique<LuaEngine>(host_, commands_, config_, functions_mode);
  // Only EVAL scripts are debugged (as in Redis).
  if (!functions_mode) engine->set_debugger(&debugger_);
  return engine;
}

CachedScript* Scripting::FindScript(std::string_view sha) {
  if (sha.size() != 40) return nullptr;
  char lower[40];
  // ASCII folding inline: std::tolower is a locale-aware call per character, on every EVALSHA.
  for (size_t i = 0; i < 40; ++i) {
    char c = sha[i];
    lower[i] = (c >= 'A' && c <= 'Z') ? static_cast<char>(c + 32) : c;
  }
  auto it = scripts_.find(std::string_view(lower, 40));
  return it == scripts_.end() ? nullptr : &it->second;
}
void Scripting::Defrag(allocator::DefragCounters& counters) {
  // A std::string can't be given a buffer, so a copy is made: with the thread cache flushed
  // first, its regions come from the bin's current and fullest slabs, as a move past the cache
  // would.
  allocator::CtlString("thread.tcache.flush", std::string("VOID"));
  for (auto& [sha, script] : scripts_) {
    if (script.body.capacity() <= std::string().capacity() ||
        !allocator::ShouldMove(script.body.data())) {
      ++counters.misses;
      continue;
    }
    std::string copy(script.body);
    script.body.swap(copy);
    ++counters.hits;
  }
}

CachedScript* Scripting::LoadScript(std::string_view body, std::string* sha, std::string* error) {
  *sha = Sha1Hex(body);
  auto it = scripts_.find(*sha);
  if (it != scripts_.end()) return &it->second;
  uint32_t flags = 0;
  std::string_view code = body;
  Shebang shebang = ParseShebang(body);
  if (shebang.present) {
    if (shebang.engine != "#!lua") {
      *error = "ERR Unexpected engine in script shebang: " + shebang.engine;
      return nullptr;
    }
    for (const std::string& option : shebang.options) {
      if (!option.starts_with("flags=")) {
        *error = "ERR Unknown lua shebang option: " + option;
        return nullptr;
      }
      std::string bad;
      if (!ParseScriptFlags(std::string_view(option).substr(6), &flags, &bad)) {
        *error = "ERR Unexpected flag in script shebang: " + bad;
        return nullptr;
      }
    }
    // The shebang line stays as an empty line, so line numbers in errors match the source.
    code = body.substr(shebang.body_offset);
  } else {
    flags = kScriptEvalCompat;
  }
  std::string compile_error;
  int ref = eval_->Compile(code, "@user_script", &compile_error);
  if (ref == LUA_NOREF) {
    *error = "ERR Error compiling script (new function): " + compile_error;
    return nullptr;
  }
  CachedScript& script = scripts_[*sha];
  script.ref = ref;
  script.flags = flags;
  script.body = std::string(body);
  script.sha = *sha;
  scripts_bytes_ += body.size();
  return &script;
}

std::optional<uint32_t> Scripting::DeclaredFlags(ScriptRef ref,
                                                 std::span<const std::string_view> argv) {
  if (argv.size() < 2) return std::nullopt;
  uint32_t flags = kScriptEvalCompat;
  if (ref == ScriptRef::kFunction) {
    const FunctionInfo* fn = FindFunction(argv[1]);
    if (fn == nullptr) return std::nullopt;
    flags = fn->flags;
  } else if (ref == ScriptRef::kSha) {
    const CachedScript* script = FindScript(argv[1]);
    if (script == nullptr) return std::nullopt;
    flags = script->flags;
  } else if (const CachedScript* script = FindScript(Sha1Hex(argv[1])); script != nullptr) {
    flags = script->flags;
  } else {
    Shebang shebang = ParseShebang(argv[1]);
    if (!shebang.present || shebang.engine != "#!lua") return std::nullopt;
    flags = 0;
    std::string bad;
    for (const std::string& option : shebang.options) {
      if (!option.starts_with("flags=") ||
          !ParseScriptFlags(std::string_view(option).substr(6), &flags, &bad)) {
        return std::nullopt;
      }
    }
  }
  if ((flags & kScriptEvalCompat) != 0) return std::nullopt;
  return flags;
}

void Scripting::FlushScripts() {
  // A fresh interpreter, as Redis: globals a script may have left behind go too.
  scripts_.clear();
  scripts_bytes_ = 0;
  eval_ = NewEngine(false);
}

LuaEngine& Scripting::function_engine() {
  if (!functions_engine_) functions_engine_ = NewEngine(true);
  return *functions_engine_;
}

FunctionInfo* Scripting::FindFunction(std::string_view name) {
  // Function names are case-insensitive (Redis's function dict compares without case);
  // library names are not.
  auto it = functions_.find(ToLower(name));
  return it == functions_.end() ? nullptr : it->second;
}

std::string Scripting::LoadLibrary(std::string_view code, bool replace, std::string* error) {
  Shebang shebang = ParseShebang(code);
  if (!shebang.present) {
    *error = "ERR Missing library metadata";
    return "";
  }
  std::string name;
  bool has_name = false;
  for (const std::string& option : shebang.options) {
    if (option.starts_with("name=")) {
      if (has_name) {
        *error = "ERR Invalid metadata value, name argument was given multiple times";
        return "";
      }
      name = option.substr(5);
      // Redis splits the shebang like a command line, so name="foo" names foo.
      if (name.size() >= 2 && name.front() == '"' && name.back() == '"') {
        name = name.substr(1, name.size() - 2);
      }
      has_name = true;
    } else {
      *error = "ERR Invalid metadata value given: " + option;
      return "";
    }
  }
  if (!has_name) {
    *error = "ERR Library name was not given";
    return "";
  }
  std::string engine_name = shebang.engine.substr(2);
  if (!(engine_name.size() == 3 && std::tolower(engine_name[0]) == 'l' &&
        std::tolower(engine_name[1]) == 'u' && std::tolower(engine_name[2]) == 'a')) {
    *error = "ERR Engine '" + engine_name + "' not found";
    return "";
  }
  if (!ValidName(name)) {
    *error =
        "ERR Library names can only contain letters, numbers, or underscores(_) and must be at "
        "least one character long";
    return "";
  }
  auto existing = libraries_.find(name);
  if (existing != libraries_.end() && !replace) {
    *error = "ERR Library '" + name + "' already exists";
    return "";
  }
  LuaEngine& engine = function_engine();
  std::string compile_error;
  int ref = engine.Compile(code.substr(shebang.body_offset), "@user_function", &compile_error);
  if (ref == LUA_NOREF) {
    *error = "ERR Error compiling function: " + compile_error;
    return "";
  }
  std::vector<LuaEngine::Registration> regs;
  std::string load_error = engine.RunLibraryLoad(ref, &regs, kLoadTimeoutMs);
  engine.Unref(ref);
  auto drop = [&] {
    for (auto& r : regs) engine.Unref(r.ref);
  };
  if (!load_error.empty()) {
    drop();
    *error = "ERR Error registering functions: " + load_error;
    return "";
  }
  if (regs.empty()) {
    *error = "ERR No functions registered";
    return "";
  }
  for (const auto& r : regs) {
    FunctionInfo* other = FindFunction(r.name);
    if (other != nullptr && other->library->name != name) {
      drop();
      *error = "ERR Function " + r.name + " already exists";
      return "";
    }
  }
  if (existing != libraries_.end()) DeleteLibrary(name);
  auto lib = std::make_unique<Library>();
  lib->name = name;
  lib->code = std::string(code);
  for (auto& r : regs) {
    auto fn = std::make_unique<FunctionInfo>();
    fn->name = r.name;
    fn->ref = r.ref;
    fn->flags = r.flags;
    fn->description = r.description;
    fn->library = lib.get();
    functions_[ToLower(fn->name)] = fn.get();
    lib->functions.push_back(std::move(fn));
  }
  libraries_[name] = std::move(lib);
  return name;
}

bool Scripting::DeleteLibrary(std::string_view name) {
  auto it = libraries_.find(std::string(name));
  if (it == libraries_.end()) return false;
  for (auto& fn : it->second->functions) {
    functions_.erase(ToLower(fn->name));
    function_engine().Unref(fn->ref);
  }
  libraries_.erase(it);
  return true;
}

void Scripting::FlushLibraries() {
  libraries_.clear();
  functions_.clear();
  functions_engine_.reset();
}

std::vector<std::pair<std::string, std::string>> Scripting::EnumerateLibraries() const {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [name, lib] : libraries_) out.emplace_back(name, lib->code);
  return out;
}

ScriptOutcome Scripting::Run(const ScriptCall& call, ReplyBuilder& reply) {
  const uint32_t flags = call.flags;
  const bool compat = (flags & kScriptEvalCompat) != 0;
  const bool may_write = !compat && (flags & kScriptNoWrites) == 0;
  ScriptOutcome outcome;
  if (!compat && (flags & kScriptNoCluster) != 0 && config_.cluster_enabled) {
    reply.Error("ERR Can not run script on cluster, 'no-cluster' flag is set.");
    return outcome;
  }
  if (may_write && call.ro) {
    reply.Error("ERR Can not execute a script with write flag using *_ro command.");
    return outcome;
  }
  // A script that declares flags and may write is refused up front on a read-only replica
  // (not for our master, whose commands always apply).
  if (may_write && host_.IsReplica() && config_.replica_read_only && !call.from_master) {
    reply.Error("READONLY You can't write against a read only replica.");
    return outcome;
  }
  // Like a write command, it is refused while the last save or the AOF failed (MISCONF).
  if (may_write && !call.from_master) {
    if (std::string err = host_.DiskWriteError(); !err.empty()) {
      reply.Error(err);
      return outcome;
    }
  }
  // A script that declares flags and may write is a deny-oom command (Redis 7): refused
  // before it runs when memory is over the limit. allow-oom and no-writes scripts run.
  if (!compat && (flags & (kScriptAllowOom | kScriptNoWrites)) == 0 && host_.PreCommandOom() &&
      config_.maxmemory > 0) {
    reply.Error("OOM command not allowed when used memory > 'maxmemory'.");
    return outcome;
  }
  // And like any write, it needs min-replicas-to-write good replicas (Redis 7).
  if (may_write && !call.from_master) {
    if (std::string_view err = host_.MinReplicasError(); !err.empty()) {
      reply.Error(std::string(err));
      return outcome;
    }
  }
  ScriptRun run;
  run.from_master = call.from_master;
  run.allow_oom = (flags & kScriptAllowOom) != 0;
  // A script without a shebang keeps the pre-7.0 freedom to reach keys of any local slot.
  run.allow_cross_slot = compat || (flags & kScriptAllowCrossSlot) != 0;
  run.name = call.name;
  run.argv = call.argv;
  run.eval_mode = call.engine == eval_.get();
  run.read_only = call.ro || (!compat && (flags & kScriptNoWrites) != 0);
  run.start_us = MonotonicUs();
  auto keys = call.argv.subspan(call.first_key, call.numkeys);
  auto args = call.argv.subspan(call.first_key + call.numkeys);
  // The declared keys were routed with the command (all in one slot): undeclared keys the
  // script reaches must be in that slot too (the host's cluster check reads it).
  if (!keys.empty()) run.cluster_slot = cluster::KeySlot(keys[0]);
  running_ = &run;
  call.engine->Run(run, call.ref, keys, args, reply);
  running_ = nullptr;
  if (run.timed_out) host_.SetBusyScript(0);
  outcome.ran = true;
  outcome.uncounted_error = run.uncounted_error;
  outcome.effects = std::move(run.effects);
  return outcome;
}

}  // namespace vireo
