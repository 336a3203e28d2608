#include "scripting/lua_debugger.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "util/clock.h"
#include "util/strings.h"

namespace vireo {
namespace {

// atoi's reading of a field ("12abc" is 12, "x" is 0): what Redis's debugger parser accepts.
int LooseInt(std::string_view s) {
  std::string text(s.substr(0, 32));
  return std::atoi(text.c_str());
}

// A strict integer (string2l): the whole text, an optional '-', no leading zeros or '+'.
bool StrictLong(std::string_view s, long* out) {
  if (s.empty() || s.size() > 20) return false;
  size_t i = s[0] == '-' ? 1 : 0;
  if (i == s.size()) return false;
  if (s[i] == '0' && s.size() > i + 1) return false;
  long v = 0;
  for (; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    v = v * 10 + (s[i] - '0');
  }
  *out = s[0] == '-' ? -v : v;
  return true;
}

bool Is(const std::string& arg, const char* a, const char* b) {
  return strcasecmp(arg.c_str(), a) == 0 || strcasecmp(arg.c_str(), b) == 0;
}

constexpr int kMaxValueDepth = LUA_MINSTACK / 2;
constexpr size_t kMaxInputBytes = size_t{1} << 20;

void AppendValue(lua_State* L, int index, std::string* out, int level) {
  if (level++ == kMaxValueDepth) {
    out->append("<max recursion level reached! Nested table?>");
    return;
  }
  if (index < 0 && index > LUA_REGISTRYINDEX) index = lua_gettop(L) + index + 1;
  const int type = lua_type(L, index);
  switch (type) {
    case LUA_TSTRING: {
      size_t len = 0;
      const char* s = lua_tolstring(L, index, &len);
      out->append(QuoteRepr(std::string_view(s, len)));
      break;
    }
    case LUA_TBOOLEAN:
      out->append(lua_toboolean(L, index) ? "true" : "false");
      break;
    case LUA_TNUMBER: {
      char buf[64];
      std::snprintf(buf, sizeof(buf), "%g", static_cast<double>(lua_tonumber(L, index)));
      out->append(buf);
      break;
    }
    case LUA_TNIL:
      out->append("nil");
      break;
    case LUA_TTABLE: {
      // Both forms are built at once: only at the end is it known whether the keys were 1..n.
      if (!lua_checkstack(L, 3)) {
        out->append("<max recursion level reached! Nested table?>");
        break;
      }
      int expected = 1;
      bool is_array = true;
      std::string as_array, as_map;
      lua_pushnil(L);
      while (lua_next(L, index) != 0) {
        if (is_array && (lua_type(L, -2) != LUA_TNUMBER || lua_tonumber(L, -2) != expected)) {
          is_array = false;
        }
        AppendValue(L, -1, &as_array, level);
        as_array.append("; ");
        as_map.push_back('[');
        AppendValue(L, -2, &as_map, level);
        as_map.append("]=");
        AppendValue(L, -1, &as_map, level);
        as_map.append("; ");
        lua_pop(L, 1);
        ++expected;
      }
      std::string& chosen = is_array ? as_array : as_map;
      if (!chosen.empty()) chosen.resize(chosen.size() - 2);
      out->push_back('{');
      out->append(chosen);
      out->push_back('}');
      break;
    }
    case LUA_TFUNCTION:
    case LUA_TUSERDATA:
    case LUA_TTHREAD:
    case LUA_TLIGHTUSERDATA: {
      const char* name = type == LUA_TFUNCTION   ? "function"
                         : type == LUA_TUSERDATA ? "userdata"
                         : type == LUA_TTHREAD   ? "thread"
                                                 : "light-userdata";
      char buf[64];
      std::snprintf(buf, sizeof(buf), "\"%s@%p\"", name, lua_topointer(L, index));
      out->append(buf);
      break;
    }
    default:
      out->append("\"<unknown-lua-type>\"");
  }
}

// One RESP value in human form; returns the bytes consumed, 0 when it can't be read.
size_t HumanValue(std::string_view r, std::string* out) {
  if (r.empty()) return 0;
  const size_t eol = r.find("\r\n");
  if (eol == std::string_view::npos) return 0;
  const std::string_view head = r.substr(1, eol - 1);
  size_t used = eol + 2;
  auto aggregate = [&](const char* open, const char* close, bool map) {
    const long long n = LooseInt(head);
    if (n < 0) {  // a RESP2 null array
      out->append("NULL");
      return used;
    }
    out->append(open);
    for (long long i = 0; i < n; ++i) {
      size_t k = HumanValue(r.substr(used), out);
      if (k == 0) return size_t{0};
      used += k;
      if (map) {
        out->append(" => ");
        k = HumanValue(r.substr(used), out);
        if (k == 0) return size_t{0};
        used += k;
      }
      if (i != n - 1) out->push_back(',');
    }
    out->append(close);
    return used;
  };
  switch (r[0]) {
    case ':':
      out->append(head);
      return used;
    case '$': {
      const long long len = LooseInt(head);
      if (len < 0) {
        out->append("NULL");
        return used;
      }
      if (r.size() < used + len + 2) return 0;
      out->append(QuoteRepr(r.substr(used, len)));
      return used + len + 2;
    }
    case '+':
    case '-':
      out->append(QuoteRepr(r.substr(0, eol)));
      return used;
    case '*':
      return aggregate("[", "]", false);
    case '~':
      return aggregate("~(", ")", false);
    case '%':
      return aggregate("{", "}", true);
    case '_':
      out->append("(null)");
      return used;
    case '#':
      out->append(r.size() > 1 && r[1] == 't' ? "#true" : "#false");
      return used;
    case ',':
      out->append("(double) ");
      out->append(head);
      return used;
    default:
      return 0;
  }
}

}  // namespace

void LdbAppendValue(lua_State* L, int index, std::string* out) { AppendValue(L, index, out, 0); }

size_t RespToHuman(std::string_view resp, std::string* out) { return HumanValue(resp, out); }

LdbParse ParseLdbCommand(std::string_view buf, std::vector<std::string>* argv) {
  argv->clear();
  if (buf.empty()) return LdbParse::kNeedMore;
  size_t p = buf.find('*');
  if (p == std::string_view::npos) return LdbParse::kProtocolError;
  size_t eol = buf.find("\r\n", p);
  if (eol == std::string_view::npos) return LdbParse::kNeedMore;
  const int argc = LooseInt(buf.substr(p + 1, eol - p - 1));
  if (argc <= 0 || argc > 1024) return LdbParse::kProtocolError;
  p = eol + 2;
  while (static_cast<int>(argv->size()) < argc) {
    if (p >= buf.size()) return LdbParse::kNeedMore;
    if (buf[p] != '$') return LdbParse::kProtocolError;
    eol = buf.find("\r\n", p);
    if (eol == std::string_view::npos) return LdbParse::kNeedMore;
    const int len = LooseInt(buf.substr(p + 1, eol - p - 1));
    if (len <= 0 || len > 1024) return LdbParse::kProtocolError;
    p = eol + 2;
    if (p + len + 2 > buf.size()) return LdbParse::kNeedMore;
    argv->emplace_back(buf.substr(p, len));
    p += len;
    if (buf[p] != '\r' || buf[p + 1] != '\n') return LdbParse::kProtocolError;
    p += 2;
  }
  return LdbParse::kOk;
}

void LuaDebugger::Enable() {
  logs_.clear();
  step_ = true;
  breakpoints_.clear();
  lua_break_ = false;
  input_.clear();
  max_len_ = kDefaultMaxLen;
  max_len_hint_sent_ = false;
}

void LuaDebugger::BeginSession(std::string_view source, LdbConnection conn) {
  conn_ = std::move(conn);
  active_ = true;
  while (!source.empty() && (source.back() == '\n' || source.back() == '\r')) {
    source.remove_suffix(1);
  }
  source_.clear();
  while (!source.empty()) {
    size_t nl = source.find('\n');
    source_.emplace_back(source.substr(0, nl));
    if (nl == std::string_view::npos) break;
    source.remove_prefix(nl + 1);
    if (source.empty()) source_.emplace_back();
  }
}

void LuaDebugger::EndSession() {
  Log("<endsession>");
  SendLogs();
  active_ = false;
  source_.clear();
  conn_ = {};
}

bool LuaDebugger::RequestBreak() {
  if (!active_) return false;
  lua_break_ = true;
  return true;
}

void LuaDebugger::LogDebugCall(lua_State* L) {
  if (!active_) return;
  std::string entry = fmt::format("<debug> line {}: ", current_line_);
  const int argc = lua_gettop(L);
  for (int i = 1; i <= argc; ++i) {
    AppendValue(L, i, &entry, 0);
    if (i != argc) entry.append(", ");
  }
  Log(std::move(entry));
}

void LuaDebugger::LogRedisCommand(std::span<const std::string_view> argv) {
  std::string entry = "<redis>";
  for (size_t j = 0; j < argv.size(); ++j) {
    if (j == 10) {
      // Redis's count (one less than what is left), kept for identical output.
      entry.append(fmt::format(" ... ({} more)", static_cast<int>(argv.size() - j) - 1));
      break;
    }
    entry.push_back(' ');
    entry.append(argv[j]);
  }
  Log(std::move(entry));
}

void LuaDebugger::LogRedisReply(std::string_view resp) {
  std::string entry = "<reply> ";
  RespToHuman(resp, &entry);
  LogWithMaxLen(std::move(entry));
}

void LuaDebugger::LogError(std::string_view text) { Log(fmt::format("<error> {}", text)); }

void LuaDebugger::Log(std::string entry) { logs_.push_back(std::move(entry)); }

void LuaDebugger::LogWithMaxLen(std::string entry) {
  bool trimmed = false;
  if (max_len_ != 0 && entry.size() > max_len_) {
    entry.resize(max_len_);
    entry.append(" ...");
    trimmed = true;
  }
  Log(std::move(entry));
  if (trimmed && !max_len_hint_sent_) {
    max_len_hint_sent_ = true;
    Log("<hint> The above reply was trimmed. Use 'maxlen 0' to disable trimming.");
  }
}

void LuaDebugger::SendLogs() {
  // One array of status lines; a line break inside an entry would end the line early.
  std::string out = fmt::format("*{}\r\n", logs_.size());
  for (std::string& entry : logs_) {
    std::replace(entry.begin(), entry.end(), '\r', ' ');
    std::replace(entry.begin(), entry.end(), '\n', ' ');
    out.push_back('+');
    out.append(entry);
    out.append("\r\n");
  }
  logs_.clear();
  // A failed write is noticed by the next read, which ends the session.
  size_t done = 0;
  while (done < out.size() && conn_.write) {
    ssize_t n = conn_.write(out.data() + done, out.size() - done);
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
}

std::string_view LuaDebugger::SourceLine(int line) const {
  if (line < 1 || line > static_cast<int>(source_.size())) {
    return "<out of range source code line>";
  }
  return source_[line - 1];
}

bool LuaDebugger::IsBreakpoint(int line) const {
  return std::find(breakpoints_.begin(), breakpoints_.end(), line) != breakpoints_.end();
}

void LuaDebugger::LogSourceLine(int line) {
  const bool bp = IsBreakpoint(line);
  const bool current = current_line_ == line;
  const char* prefix = current && bp ? "->#" : current ? "-> " : bp ? "  #" : "   ";
  Log(fmt::format("{}{:<3} {}", prefix, line, SourceLine(line)));
}

void LuaDebugger::List(int around, int context) {
  for (int j = 1; j <= static_cast<int>(source_.size()); ++j) {
    if (around != 0 && std::abs(around - j) > context) continue;
    LogSourceLine(j);
  }
}

void LuaDebugger::LogStackValue(lua_State* L, std::string prefix) {
  AppendValue(L, -1, &prefix, 0);
  LogWithMaxLen(std::move(prefix));
}

void LuaDebugger::Print(lua_State* L, const std::string& name) {
  lua_Debug ar;
  for (int level = 0; lua_getstack(L, level, &ar) != 0; ++level) {
    const char* local;
    for (int i = 1; (local = lua_getlocal(L, &ar, i)) != nullptr; ++i) {
      if (name == local) {
        LogStackValue(L, "<value> ");
        lua_pop(L, 1);
        return;
      }
      lua_pop(L, 1);
    }
  }
  // The two globals a script is given.
  if (name == "ARGV" || name == "KEYS") {
    lua_pushstring(L, name.c_str());
    lua_rawget(L, LUA_GLOBALSINDEX);
    LogStackValue(L, "<value> ");
    lua_pop(L, 1);
  } else {
    Log("No such variable.");
  }
}

void LuaDebugger::PrintAll(lua_State* L) {
  lua_Debug ar;
  int vars = 0;
  if (lua_getstack(L, 0, &ar) != 0) {
    const char* local;
    for (int i = 1; (local = lua_getlocal(L, &ar, i)) != nullptr; ++i) {
      if (std::strstr(local, "(*temporary)") == nullptr) {
        LogStackValue(L, fmt::format("<value> {} = ", local));
        ++vars;
      }
      lua_pop(L, 1);
    }
  }
  if (vars == 0) Log("No local variables in the current context.");
}

void LuaDebugger::Break(const std::vector<std::string>& argv) {
  if (argv.size() == 1) {
    if (breakpoints_.empty()) {
      Log("No breakpoints set. Use 'b <line>' to add one.");
      return;
    }
    Log(fmt::format("{} breakpoints set:", breakpoints_.size()));
    for (int line : breakpoints_) LogSourceLine(line);
    return;
  }
  for (size_t j = 1; j < argv.size(); ++j) {
    long line = 0;
    if (!StrictLong(argv[j], &line)) {
      Log(fmt::format("Invalid argument:'{}'", argv[j]));
    } else if (line == 0) {
      breakpoints_.clear();
      Log("All breakpoints removed.");
    } else if (line > 0) {
      if (breakpoints_.size() == kMaxBreakpoints) {
        Log("Too many breakpoints set.");
      } else if (line <= static_cast<long>(source_.size()) && !IsBreakpoint(line)) {
        breakpoints_.push_back(static_cast<int>(line));
        List(static_cast<int>(line), 1);
      } else {
        // Redis says this also for a line that already has a breakpoint.
        Log("Wrong line number.");
      }
    } else {
      auto it = std::find(breakpoints_.begin(), breakpoints_.end(), -line);
      if (it != breakpoints_.end()) {
        breakpoints_.erase(it);
        Log("Breakpoint removed.");
      } else {
        Log("No breakpoint in the specified line.");
      }
    }
  }
}

void LuaDebugger::Eval(lua_State* L, const std::vector<std::string>& argv) {
  std::string code;
  for (size_t j = 1; j < argv.size(); ++j) {
    if (j > 1) code.push_back(' ');
    code.append(argv[j]);
  }
  // An expression first (its value is shown), then a statement.
  const std::string expr = "return " + code;
  if (luaL_loadbuffer(L, expr.data(), expr.size(), "@ldb_eval") != 0) {
    lua_pop(L, 1);
    if (luaL_loadbuffer(L, code.data(), code.size(), "@ldb_eval") != 0) {
      Log(fmt::format("<error> {}", lua_tostring(L, -1)));
      lua_pop(L, 1);
      return;
    }
  }
  if (lua_pcall(L, 0, 1, 0) != 0) {
    const char* msg = lua_tostring(L, -1);
    Log(fmt::format("<error> {}", msg == nullptr ? "(error object is not a string)" : msg));
    lua_pop(L, 1);
    return;
  }
  LogStackValue(L, "<retval> ");
  lua_pop(L, 1);
}

void LuaDebugger::Redis(lua_State* L, const std::vector<std::string>& argv) {
  const int argc = static_cast<int>(argv.size());
  if (!lua_checkstack(L, argc + 1)) {
    Log("<reply> ");  // Redis logs its "max lua stack reached" through the RESP reader
    return;
  }
  // Through redis.call itself, stepping: the command and its reply are logged as a script's.
  lua_pushliteral(L, "redis");
  lua_rawget(L, LUA_GLOBALSINDEX);
  lua_pushliteral(L, "call");
  lua_gettable(L, -2);
  for (int j = 1; j < argc; ++j) lua_pushlstring(L, argv[j].data(), argv[j].size());
  step_ = true;
  lua_pcall(L, argc - 1, 1, 0);
  step_ = false;
  lua_pop(L, 2);
}

void LuaDebugger::Trace(lua_State* L) {
  lua_Debug ar;
  int level = 0;
  for (; lua_getstack(L, level, &ar) != 0; ++level) {
    lua_getinfo(L, "Snl", &ar);
    if (std::strstr(ar.short_src, "user_script") == nullptr) continue;
    Log(fmt::format("{} {}:", level == 0 ? "In" : "From",
                    ar.name != nullptr ? ar.name : "top level"));
    LogSourceLine(ar.currentline);
  }
  if (level == 0) Log("<error> Can't retrieve Lua stack.");
}

void LuaDebugger::MaxLen(const std::vector<std::string>& argv) {
  if (argv.size() == 2) {
    int len = LooseInt(argv[1]);
    max_len_hint_sent_ = true;  // the user knows about maxlen
    if (len != 0 && len <= 60) len = 60;
    max_len_ = static_cast<size_t>(len);
  }
  if (max_len_ != 0) {
    Log(fmt::format("<value> replies are truncated at {} bytes.", max_len_));
  } else {
    Log("<value> replies are unlimited.");
  }
}

void LuaDebugger::Help() {
  static constexpr const char* kLines[] = {
      "Redis Lua debugger help:",
      "[h]elp               Show this help.",
      "[s]tep               Run current line and stop again.",
      "[n]ext               Alias for step.",
      "[c]ontinue           Run till next breakpoint.",
      "[l]ist               List source code around current line.",
      "[l]ist [line]        List source code around [line].",
      "                     line = 0 means: current position.",
      "[l]ist [line] [ctx]  In this form [ctx] specifies how many lines",
      "                     to show before/after [line].",
      "[w]hole              List all source code. Alias for 'list 1 1000000'.",
      "[p]rint              Show all the local variables.",
      "[p]rint <var>        Show the value of the specified variable.",
      "                     Can also show global vars KEYS and ARGV.",
      "[b]reak              Show all breakpoints.",
      "[b]reak <line>       Add a breakpoint to the specified line.",
      "[b]reak -<line>      Remove breakpoint from the specified line.",
      "[b]reak 0            Remove all breakpoints.",
      "[t]race              Show a backtrace.",
      "[e]val <code>        Execute some Lua code (in a different callframe).",
      "[r]edis <cmd>        Execute a Redis command.",
      "[m]axlen [len]       Trim logged Redis replies and Lua var dumps to len.",
      "                     Specifying zero as <len> means unlimited.",
      "[a]bort              Stop the execution of the script. In sync",
      "                     mode dataset changes will be retained.",
      "",
      "Debugger functions you can call from Lua scripts:",
      "redis.debug()        Produce logs in the debugger console.",
      "redis.breakpoint()   Stop execution like if there was a breakpoint in the",
      "                     next line of code.",
  };
  for (const char* line : kLines) Log(line);
}

LuaDebugger::ReplResult LuaDebugger::Repl(lua_State* L) {
  std::vector<std::string> argv;
  while (true) {
    LdbParse parsed;
    while ((parsed = ParseLdbCommand(input_, &argv)) != LdbParse::kOk) {
      if (parsed == LdbParse::kProtocolError) return ReplResult::kProtocolError;
      char buf[1024];
      ssize_t n = conn_.read ? conn_.read(buf, sizeof(buf)) : -1;
      if (n <= 0) {
        // The client is gone: let the script run to its end without stopping.
        step_ = false;
        breakpoints_.clear();
        return ReplResult::kDisconnected;
      }
      input_.append(buf, static_cast<size_t>(n));
      if (input_.size() > kMaxInputBytes) {
        input_.clear();
        return ReplResult::kBufferFull;
      }
    }
    // What followed the command in the buffer is dropped, as Redis does.
    input_.clear();
    const std::string& cmd = argv[0];
    if (Is(cmd, "h", "help")) {
      Help();
    } else if (Is(cmd, "s", "step") || Is(cmd, "n", "next")) {
      step_ = true;
      return ReplResult::kResume;
    } else if (Is(cmd, "c", "continue")) {
      return ReplResult::kResume;
    } else if (Is(cmd, "t", "trace")) {
      Trace(L);
    } else if (Is(cmd, "m", "maxlen")) {
      MaxLen(argv);
    } else if (Is(cmd, "b", "break")) {
      Break(argv);
    } else if (Is(cmd, "e", "eval")) {
      Eval(L, argv);
    } else if (Is(cmd, "a", "abort")) {
      return ReplResult::kAbort;
    } else if (argv.size() > 1 && Is(cmd, "r", "redis")) {
      Redis(L, argv);
    } else if (Is(cmd, "p", "print")) {
      if (argv.size() == 2) {
        Print(L, argv[1]);
      } else {
        PrintAll(L);
      }
    } else if (Is(cmd, "l", "list")) {
      int around = current_line_;
      int context = 5;
      if (argv.size() > 1) {
        int line = LooseInt(argv[1]);
        if (line > 0) around = line;
      }
      if (argv.size() > 2) context = LooseInt(argv[2]);
      List(around, context);
    } else if (Is(cmd, "w", "whole")) {
      List(1, 1000000);
    } else {
      Log("<error> Unknown Redis Lua debugger command or wrong number of arguments.");
    }
    SendLogs();
  }
}

const char* LuaDebugger::LineHook(lua_State* L, lua_Debug* ar, int64_t* start_us,
                                  int64_t threshold_ms) {
  lua_getstack(L, 0, ar);
  lua_getinfo(L, "Sl", ar);
  current_line_ = ar->currentline;
  const bool bp = IsBreakpoint(current_line_) || lua_break_;
  // Lines of other chunks (the debugger's own eval) are not the script's.
  if (std::strstr(ar->short_src, "user_script") == nullptr) return nullptr;
  bool timeout = false;
  if (ar->event == LUA_HOOKCOUNT && !step_ && !bp) {
    // Running free for too long: stop as if stepping, it may be an infinite loop.
    const int64_t limit_ms = threshold_ms > 0 ? threshold_ms : 5000;
    if ((MonotonicUs() - *start_us) / 1000 < limit_ms) return nullptr;
    timeout = true;
    step_ = true;
  }
  if (!step_ && !bp) return nullptr;
  const char* reason = bp        ? (lua_break_ ? "redis.breakpoint() called" : "break point")
                       : timeout ? "timeout reached, infinite loop?"
                                 : "step over";
  step_ = false;
  lua_break_ = false;
  Log(fmt::format("* Stopped at {}, stop reason = {}", current_line_, reason));
  LogSourceLine(current_line_);
  SendLogs();
  switch (Repl(L)) {
    case ReplResult::kResume:
      break;
    case ReplResult::kDisconnected:
      // Nobody will ever stop a runaway script now: end it.
      if (timeout) return "timeout during Lua debugging with client closing connection";
      break;
    case ReplResult::kAbort:
      return "script aborted for user request";
    case ReplResult::kProtocolError:
      return "protocol error";
    case ReplResult::kBufferFull:
      return "max client buffer reached";
  }
  *start_us = MonotonicUs();
  return nullptr;
}

}  // namespace vireo
