// The Lua debugger (LDB) of SCRIPT DEBUG YES|SYNC and `redis-cli --ldb`: one debugging session
// of an EVAL script, spoken directly on the client's socket from inside Lua's line hook.
//
// Redis's design, which clients depend on: while the script is stopped, the debugger reads the
// client's commands (step, continue, list, print, break, eval, redis, ...) with blocking reads
// and answers each with an array of status lines ("<redis> ...", "<reply> ...", "<value> ...",
// "<error> ..."), never returning to the event loop. In async mode (YES) the session runs in a
// fork()ed child that owns the socket, so the server keeps serving everyone else and whatever
// the script writes is thrown away with the child; SYNC runs it in the server itself, which
// blocks meanwhile and keeps the changes.
//
// The session state belongs to the Scripting of one server (no process-wide state); the
// command layer starts and ends sessions (it owns the client's socket).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

extern "C" {
#include <lauxlib.h>
#include <lua.h>
}

namespace vireo {

// The debugging client's connection, read and written with read(2)/write(2) semantics.
struct LdbConnection {
  std::function<ssize_t(void*, size_t)> read;
  std::function<ssize_t(const void*, size_t)> write;
};

// Parses one debugger command, a RESP array of bulk strings, from the start of `buf`. The
// parser is as forgiving and as strict as Redis's: 1 to 1024 arguments of 1 to 1024 bytes.
enum class LdbParse { kNeedMore, kOk, kProtocolError };
LdbParse ParseLdbCommand(std::string_view buf, std::vector<std::string>* argv);

// Appends the RESP reply at the start of `resp` in the debugger's human form (`"+OK"`,
// `[1,"a"]`, `{"k" => 1}`, `~(...)`, `#true`, `(double) 1.5`, `NULL`) to *out. Returns the
// bytes consumed (0 for an unknown type byte).
size_t RespToHuman(std::string_view resp, std::string* out);

class LuaDebugger {
 public:
  static constexpr size_t kMaxBreakpoints = 64;
  static constexpr size_t kDefaultMaxLen = 256;

  // SCRIPT DEBUG YES|SYNC: the next EVAL of that client is debugged, from its first line.
  void Enable();

  // The EVAL starts: `source` is the script (its lines are what `list` shows), `conn` the
  // client's socket, now blocking.
  void BeginSession(std::string_view source, LdbConnection conn);
  // Sends what is left of the log and "<endsession>"; the EVAL's reply follows it.
  void EndSession();
  bool active() const { return active_; }
  // Commands a script runs, their replies and errors are logged while stepping (Redis's
  // ldbIsEnabled).
  bool logging() const { return active_ && step_; }

  // ---- called by the engine ----
  // redis.breakpoint(): stop at the next line. Returns whether a session is active.
  bool RequestBreak();
  // redis.debug(...): logs the values on the stack as "<debug> line N: v1, v2".
  void LogDebugCall(lua_State* L);
  void LogRedisCommand(std::span<const std::string_view> argv);
  void LogRedisReply(std::string_view resp);
  void LogError(std::string_view text);

  // The line/count hook of a debugged script. `start_us` is the script's start (reset after
  // each stop, so the time the user spends stopped is not the script's); `threshold_ms` the
  // busy-reply-threshold. Returns nullptr to go on, or the text of an error the hook must
  // raise (a literal: the caller raises it after this returns, with no C++ object alive).
  const char* LineHook(lua_State* L, lua_Debug* ar, int64_t* start_us, int64_t threshold_ms);

 private:
  enum class ReplResult { kResume, kDisconnected, kAbort, kProtocolError, kBufferFull };
  ReplResult Repl(lua_State* L);
  void Log(std::string entry);
  void LogWithMaxLen(std::string entry);
  void SendLogs();
  std::string_view SourceLine(int line) const;
  bool IsBreakpoint(int line) const;
  void LogSourceLine(int line);
  void List(int around, int context);
  void LogStackValue(lua_State* L, std::string prefix);
  void Print(lua_State* L, const std::string& name);
  void PrintAll(lua_State* L);
  void Break(const std::vector<std::string>& argv);
  void Eval(lua_State* L, const std::vector<std::string>& argv);
  void Redis(lua_State* L, const std::vector<std::string>& argv);
  void Trace(lua_State* L);
  void MaxLen(const std::vector<std::string>& argv);
  void Help();

  LdbConnection conn_;
  bool active_ = false;
  bool step_ = false;       // stop at the next line
  bool lua_break_ = false;  // redis.breakpoint() was called
  std::vector<int> breakpoints_;
  std::vector<std::string> source_;
  int current_line_ = -1;
  std::string input_;  // the debugging client's unparsed bytes
  std::vector<std::string> logs_;
  size_t max_len_ = kDefaultMaxLen;
  bool max_len_hint_sent_ = false;
};

// Appends a human form of the Lua value at `index` (strings quoted, tables as {a; b} or
// {[k]=v}) to *out, as `print` and redis.debug() show it.
void LdbAppendValue(lua_State* L, int index, std::string* out);

}  // namespace vireo
