// FUNCTION LOAD/DELETE/FLUSH/LIST/STATS/DUMP/RESTORE/KILL/HELP, FCALL and FCALL_RO.
#include <fmt/format.h>

#include "commands/families.h"
#include "commands/helpers.h"
#include "commands/numkeys.h"
#include "core/arg_parser.h"
#include "core/command_table.h"
#include "persistence/rdb_encoding.h"
#include "scripting/scripting.h"
#include "server/client.h"
#include "server/command_context.h"
#include "server/monitors.h"
#include "server/process_info.h"
#include "util/clock.h"
#include "util/glob.h"
#include "util/strings.h"

namespace vireo {

// scripting.cc
void KillRunningScript(CommandContext& ctx, bool eval);
void RunScriptFor(CommandContext& ctx, LuaEngine& engine, int ref, uint32_t flags, bool ro,
                  std::string_view name, size_t numkeys);

namespace {

void FcallGeneric(CommandContext& ctx, bool ro) {
  // FCALL has skip_monitor: fed first, so the commands the function runs follow it.
  ctx.monitors().Feed(ctx.client, ctx.argv);
  Scripting& scripting = ctx.scripting();
  FunctionInfo* fn = scripting.FindFunction(ctx.arg(1));
  if (fn == nullptr) {
    ctx.reply.Error("ERR Function not found");
    return;
  }
  ArgParser args(ctx, 2);
  const size_t numkeys = ReadScriptNumkeys(args, "ERR Bad number of keys provided");
  if (!args.Check()) return;
  RunScriptFor(ctx, scripting.function_engine(), fn->ref, fn->flags, ro, fn->name, numkeys);
}

void FcallCommand(CommandContext& ctx) { FcallGeneric(ctx, false); }
void FcallRoCommand(CommandContext& ctx) { FcallGeneric(ctx, true); }

void FunctionLoadCommand(CommandContext& ctx) {
  bool replace = false;
  ArgParser args(ctx, 2);
  // Options up to the last argument, which is the code.
  while (args.ok() && args.remaining() > 1) {
    if (args.Flag("REPLACE")) {
      replace = true;
    } else {
      args.Fail(fmt::format("ERR Unknown option given: {}", args.Peek()));
    }
  }
  if (!args.HasNext()) args.Fail("ERR Function code is missing");
  std::string_view code = args.Next();
  if (!args.Check()) return;
  std::string error;
  std::string name = ctx.scripting().LoadLibrary(code, replace, &error);
  if (name.empty()) {
    ctx.reply.Error(error);
    return;
  }
  ctx.process().AddDirty(1);
  ctx.reply.Bulk(name);
}

// Redis's reply for a subcommand given too many arguments (addReplySubcommandSyntaxError).
void ReplySubcommandSyntaxError(CommandContext& ctx) {
  ctx.reply.Error(fmt::format(
      "ERR unknown subcommand or wrong number of arguments for '{}'. Try FUNCTION HELP.",
      ctx.arg(1).substr(0, 128)));
}

void FunctionDeleteCommand(CommandContext& ctx) {
  if (!ctx.scripting().DeleteLibrary(ctx.arg(2))) {
    ctx.reply.Error("ERR Library not found");
    return;
  }
  ctx.process().AddDirty(1);
  ctx.reply.Ok();
}

void FunctionFlushCommand(CommandContext& ctx) {
  if (ctx.argc() > 3) {
    ReplySubcommandSyntaxError(ctx);
    return;
  }
  ArgParser args(ctx, 2);
  if (args.HasNext()) {
    args.Keyword({"SYNC", "ASYNC"}, "ERR FUNCTION FLUSH only supports SYNC|ASYNC option");
  }
  if (!args.Check()) return;
  ctx.scripting().FlushLibraries();
  ctx.process().AddDirty(1);
  ctx.reply.Ok();
}

void FunctionListCommand(CommandContext& ctx) {
  bool with_code = false;
  bool has_pattern = false;
  std::string_view pattern;
  ArgParser args(ctx, 2);
  while (args.HasNext()) {
    if (!with_code && args.Flag("WITHCODE")) {
      with_code = true;
    } else if (!has_pattern && args.Flag("LIBRARYNAME")) {
      if (!args.HasNext()) args.Fail("ERR library name argument was not given");
      pattern = args.Next();
      has_pattern = true;
    } else {
      args.Fail(fmt::format("ERR Unknown argument {}", args.Peek()));
    }
  }
  if (!args.Check()) return;
  std::vector<const Library*> libs;
  for (const auto& [name, lib] : ctx.scripting().libraries()) {
    if (has_pattern && !GlobMatch(pattern, name, true)) continue;
    libs.push_back(lib.get());
  }
  ReplyBuilder& r = ctx.reply;
  r.Array(libs.size());
  for (const Library* lib : libs) {
    r.Map(with_code ? 4 : 3);
    r.Bulk("library_name");
    r.Bulk(lib->name);
    r.Bulk("engine");
    r.Bulk(lib->engine);
    r.Bulk("functions");
    r.Array(lib->functions.size());
    for (const auto& fn : lib->functions) {
      r.Map(3);
      r.Bulk("name");
      r.Bulk(fn->name);
      r.Bulk("description");
      if (fn->description.empty()) {
        r.Null();
      } else {
        r.Bulk(fn->description);
      }
      r.Bulk("flags");
      std::vector<std::string_view> flags = ScriptFlagNames(fn->flags);
      r.Set(flags.size());
      for (std::string_view f : flags) r.SimpleString(f);
    }
    if (with_code) {
      r.Bulk("library_code");
      r.Bulk(lib->code);
    }
  }
}

void FunctionStatsCommand(CommandContext& ctx) {
  Scripting& scripting = ctx.scripting();
  ReplyBuilder& r = ctx.reply;
  r.Map(2);
  r.Bulk("running_script");
  ScriptRun* run = scripting.running();
  if (run == nullptr || run->eval_mode) {
    r.Null();
  } else {
    r.Map(3);
    r.Bulk("name");
    r.Bulk(run->name);
    r.Bulk("command");
    r.Array(run->argv.size());
    for (std::string_view arg : run->argv) r.Bulk(arg);
    r.Bulk("duration_ms");
    r.Integer((MonotonicUs() - run->start_us) / 1000);
  }
  r.Bulk("engines");
  r.Map(1);
  r.Bulk("LUA");
  r.Map(2);
  r.Bulk("libraries_count");
  r.Integer(static_cast<int64_t>(scripting.libraries().size()));
  r.Bulk("functions_count");
  r.Integer(static_cast<int64_t>(scripting.function_count()));
}

// The DUMP payload: for each library an RDB FUNCTION2 record (opcode, then its code as an RDB
// string), then the RDB version (2 bytes) and a CRC64 (8 bytes), both little-endian.
void FunctionDumpCommand(CommandContext& ctx) {
  std::string payload;
  for (const auto& [name, code] : ctx.scripting().EnumerateLibraries()) {
    payload.push_back(static_cast<char>(rdb::kOpFunction2));
    rdb::AppendString(&payload, code, false);
  }
  payload.push_back(static_cast<char>(rdb::kRdbVersion & 0xff));
  payload.push_back(static_cast<char>(rdb::kRdbVersion >> 8));
  uint64_t crc = rdb::Crc64(0, payload.data(), payload.size());
  for (int i = 0; i < 8; ++i) payload.push_back(static_cast<char>(crc >> (8 * i)));
  ctx.reply.Bulk(payload);
}

// Reads an RDB length at *pos; false on truncation or an encoded (special) length.
bool ReadRdbLength(std::string_view in, size_t* pos, uint64_t* len, bool* encoded) {
  if (*pos >= in.size()) return false;
  auto b = static_cast<uint8_t>(in[(*pos)++]);
  *encoded = false;
  switch (b >> 6) {
    case 0:
      *len = b & 0x3f;
      return true;
    case 1:
      if (*pos >= in.size()) return false;
      *len = (static_cast<uint64_t>(b & 0x3f) << 8) | static_cast<uint8_t>(in[(*pos)++]);
      return true;
    case 2: {
      size_t n = b == 0x80 ? 4 : b == 0x81 ? 8 : 0;
      if (n == 0 || *pos + n > in.size()) return false;
      uint64_t v = 0;
      for (size_t i = 0; i < n; ++i) v = (v << 8) | static_cast<uint8_t>(in[*pos + i]);
      *pos += n;
      *len = v;
      return true;
    }
    default:
      *encoded = true;
      *len = b & 0x3f;
      return true;
  }
}

// An RDB string (raw, integer-encoded or LZF) at *pos.
bool ReadRdbString(std::string_view in, size_t* pos, std::string* out) {
  uint64_t len = 0;
  bool encoded = false;
  if (!ReadRdbLength(in, pos, &len, &encoded)) return false;
  if (!encoded) {
    if (len > in.size() - *pos) return false;
    out->assign(in.substr(*pos, len));
    *pos += len;
    return true;
  }
  if (len <= 2) {
    size_t n = size_t{1} << len;
    if (*pos + n > in.size()) return false;
    int64_t v = 0;
    for (size_t i = 0; i < n; ++i) {
      v |= static_cast<int64_t>(static_cast<uint8_t>(in[*pos + i])) << (8 * i);
    }
    if (n == 1) v = static_cast<int8_t>(v);
    if (n == 2) v = static_cast<int16_t>(v);
    if (n == 4) v = static_cast<int32_t>(v);
    *pos += n;
    *out = std::to_string(v);
    return true;
  }
  if (len == 3) {
    uint64_t clen = 0, ulen = 0;
    bool e1 = false, e2 = false;
    if (!ReadRdbLength(in, pos, &clen, &e1) || !ReadRdbLength(in, pos, &ulen, &e2) || e1 || e2 ||
        clen > in.size() - *pos || ulen > (512ull << 20)) {
      return false;
    }
    out->resize(ulen);
    if (!rdb::LzfDecompress(in.data() + *pos, clen, out->data(), ulen)) return false;
    *pos += clen;
    return true;
  }
  return false;
}

void FunctionRestoreCommand(CommandContext& ctx) {
  enum class Policy { kAppend, kReplace, kFlush } policy = Policy::kAppend;
  if (ctx.argc() > 4) {
    ReplySubcommandSyntaxError(ctx);
    return;
  }
  ArgParser args(ctx, 3);
  if (args.HasNext()) {
    constexpr Policy kPolicies[] = {Policy::kFlush, Policy::kAppend, Policy::kReplace};
    const int which = args.Keyword(
        {"FLUSH", "APPEND", "REPLACE"},
        "ERR Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE.");
    if (!args.Check()) return;
    policy = kPolicies[which];
  }
  std::string_view payload = ctx.arg(2);
  if (payload.size() < 10) {
    ctx.reply.Error("ERR payload version or checksum are wrong");
    return;
  }
  size_t body = payload.size() - 10;
  int version =
      static_cast<uint8_t>(payload[body]) | (static_cast<uint8_t>(payload[body + 1]) << 8);
  uint64_t crc = 0;
  for (int i = 0; i < 8; ++i) {
    crc |= static_cast<uint64_t>(static_cast<uint8_t>(payload[body + 2 + i])) << (8 * i);
  }
  if (version > rdb::kMaxRdbVersion || rdb::Crc64(0, payload.data(), body + 2) != crc) {
    ctx.reply.Error("ERR payload version or checksum are wrong");
    return;
  }
  std::vector<std::string> codes;
  size_t pos = 0;
  while (pos < body) {
    if (static_cast<uint8_t>(payload[pos]) != rdb::kOpFunction2) {
      ctx.reply.Error("ERR given type is not a function");
      return;
    }
    ++pos;
    std::string code;
    if (!ReadRdbString(payload.substr(0, body), &pos, &code)) {
      ctx.reply.Error("ERR Bad data format");
      return;
    }
    codes.push_back(std::move(code));
  }
  Scripting& scripting = ctx.scripting();
  auto before = scripting.EnumerateLibraries();
  if (policy == Policy::kFlush) scripting.FlushLibraries();
  std::string error;
  for (const std::string& code : codes) {
    if (scripting.LoadLibrary(code, policy == Policy::kReplace, &error).empty()) break;
  }
  if (!error.empty()) {
    // All or nothing: put the libraries back as they were.
    scripting.FlushLibraries();
    std::string ignored;
    for (const auto& [name, code] : before) scripting.LoadLibrary(code, false, &ignored);
    // Redis words a clash found by RESTORE without the quotes FUNCTION LOAD puts around the name.
    constexpr std::string_view kPrefix = "ERR Library '", kSuffix = "' already exists";
    if (error.starts_with(kPrefix) && error.ends_with(kSuffix)) {
      error = "ERR Library " +
              error.substr(kPrefix.size(), error.size() - kPrefix.size() - kSuffix.size()) +
              " already exists";
    }
    ctx.reply.Error(error);
    return;
  }
  ctx.process().AddDirty(1);
  ctx.reply.Ok();
}

void FunctionKillCommand(CommandContext& ctx) { KillRunningScript(ctx, false); }

void FunctionHelpCommand(CommandContext& ctx) {
  ReplyHelp(
      ctx, "FUNCTION",
      {"LOAD [REPLACE] <FUNCTION CODE>",
       "    Create a new library with the given library name and code.",
       "DELETE <LIBRARY NAME>",
       "    Delete the given library.",
       "LIST [LIBRARYNAME PATTERN] [WITHCODE]",
       "    Return general information on all the libraries:",
       "    * Library name",
       "    * The engine used to run the Library",
       "    * Library description",
       "    * Functions list",
       "    * Library code (if WITHCODE is given)",
       "    It also possible to get only function that matches a pattern using LIBRARYNAME "
       "argument.",
       "STATS",
       "    Return information about the current function running:",
       "    * Function name",
       "    * Command used to run the function",
       "    * Duration in MS that the function is running",
       "    If no function is running, return nil",
       "    In addition, returns a list of available engines.",
       "KILL",
       "    Kill the current running function.",
       "FLUSH [ASYNC|SYNC]",
       "    Delete all the libraries.",
       "    When called without the optional mode argument, the behavior is determined by the",
       "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
       "    * ASYNC: Asynchronously flush the libraries.",
       "    * SYNC: Synchronously flush the libraries.",
       "DUMP",
       "    Return a serialized payload representing the current libraries, can be restored "
       "using FUNCTION RESTORE command",
       "RESTORE <PAYLOAD> [FLUSH|APPEND|REPLACE]",
       "    Restore the libraries represented by the given payload, it is possible to give a "
       "restore policy to",
       "    control how to handle existing libraries (default APPEND):",
       "    * FLUSH: delete all existing libraries.",
       "    * APPEND: appends the restored libraries to the existing libraries. On collision, "
       "abort.",
       "    * REPLACE: appends the restored libraries to the existing libraries, On collision, "
       "replace the old",
       "      libraries with the new libraries (notice that even on this option there is a "
       "chance of failure",
       "      in case of functions name collision with another library)."});
}

void FunctionContainer(CommandContext& ctx) {
  ctx.reply.Error("ERR wrong number of arguments for 'function' command");
}

std::vector<size_t> FcallKeys(std::span<const std::string_view> argv) {
  return NumkeysKeys(argv, 2);
}

}  // namespace

void RegisterFunctionCommands(CommandTable& table) {
  constexpr const char* kGroup = "scripting";
  constexpr const char* kComplexity = "Depends on the function that is executed.";
  table.Add({"fcall", -3,
             kCmdNoScript | kCmdStale | kCmdSkipMonitor | kCmdMayReplicate | kCmdNoMandatoryKeys |
                 kCmdRunsScript | kCmdRunsFunction,
             Keys(KeyNum(
                 2, 0, 1, 1, kKeyRW | kKeyAccess | kKeyUpdate,
                 "We cannot tell how the keys will be used so we assume the worst, RW and UPDATE")),
             kAclScripting, kGroup, "7.0.0", "Invokes a function.",
             "function numkeys [key [key ...]] [arg [arg ...]]", FcallCommand, kComplexity,
             FcallKeys});
  table.Add({"fcall_ro", -3,
             kCmdReadonly | kCmdNoScript | kCmdStale | kCmdSkipMonitor | kCmdNoMandatoryKeys |
                 kCmdRunsScript | kCmdRunsFunction,
             Keys(KeyNum(
                 2, 0, 1, 1, kKeyRO | kKeyAccess,
                 "We cannot tell how the keys will be used so we assume the worst, RO and ACCESS")),
             kAclScripting, kGroup, "7.0.0", "Invokes a read-only function.",
             "function numkeys [key [key ...]] [arg [arg ...]]", FcallRoCommand, kComplexity,
             FcallKeys});
  table.Add({"function", -2, 0, Keys(), 0, kGroup, "7.0.0", "A container for function commands.",
             "", FunctionContainer, "Depends on subcommand."});
  table.AddSubcommand("function", {"delete", 3, kCmdWrite | kCmdNoScript, Keys(), kAclScripting,
                                   kGroup, "7.0.0", "Deletes a library and its functions.",
                                   "library-name", FunctionDeleteCommand, "O(1)"});
  table.AddSubcommand("function", {"dump", 2, kCmdNoScript, Keys(), kAclScripting, kGroup, "7.0.0",
                                   "Dumps all libraries into a serialized binary payload.", "",
                                   FunctionDumpCommand, "O(N) where N is the number of functions"});
  table.AddSubcommand(
      "function", {"flush", -2, kCmdWrite | kCmdNoScript, Keys(), kAclScripting, kGroup, "7.0.0",
                   "Deletes all libraries and functions.", "[ASYNC | SYNC]", FunctionFlushCommand,
                   "O(N) where N is the number of functions deleted"});
  table.AddSubcommand(
      "function",
      {"help", 2, kCmdLoading | kCmdStale, Keys(), kAclScripting, kGroup, "7.0.0",
       "Returns helpful text about the different subcommands.", "", FunctionHelpCommand, "O(1)"});
  table.AddSubcommand(
      "function", {"kill", 2, kCmdNoScript | kCmdAllowBusy, Keys(), kAclScripting, kGroup, "7.0.0",
                   "Terminates a function during execution.", "", FunctionKillCommand, "O(1)"});
  table.AddSubcommand("function", {"list", -2, kCmdNoScript, Keys(), kAclScripting, kGroup, "7.0.0",
                                   "Returns information about all libraries.",
                                   "[LIBRARYNAME library-name-pattern] [WITHCODE]",
                                   FunctionListCommand, "O(N) where N is the number of functions"});
  table.AddSubcommand("function",
                      {"load", -3, kCmdWrite | kCmdDenyOom | kCmdNoScript, Keys(), kAclScripting,
                       kGroup, "7.0.0", "Creates a library.", "[REPLACE] function-code",
                       FunctionLoadCommand, "O(1) (considering compilation time is redundant)"});
  table.AddSubcommand(
      "function", {"restore", -3, kCmdWrite | kCmdDenyOom | kCmdNoScript, Keys(), kAclScripting,
                   kGroup, "7.0.0", "Restores all libraries from a payload.",
                   "serialized-value [policy=<FLUSH | APPEND | REPLACE>]", FunctionRestoreCommand,
                   "O(N) where N is the number of functions on the payload"});
  table.AddSubcommand(
      "function",
      {"stats", 2, kCmdNoScript | kCmdAllowBusy, Keys(), kAclScripting, kGroup, "7.0.0",
       "Returns information about a function during execution.", "", FunctionStatsCommand, "O(1)"});
}

}  // namespace vireo
