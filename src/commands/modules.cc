// MODULE: vireo loads no modules (there is no module API to load them against), so LIST is
// always empty and LOAD/LOADEX fail the way a failed load fails in Redis. LOAD, LOADEX and
// UNLOAD are protected commands, refused unless enable-module-command allows them (the
// dispatcher checks; LIST and HELP are not protected, as in Redis).
#include <spdlog/spdlog.h>

#include "commands/families.h"
#include "commands/helpers.h"
#include "core/command_table.h"
#include "server/client.h"
#include "server/command_context.h"

namespace vireo {
namespace {

constexpr std::string_view kLoadFailed =
    "ERR Error loading the extension. Please check the server logs.";

void ModuleListCommand(CommandContext& ctx) { ctx.reply.Array(0); }

void ModuleLoadCommand(CommandContext& ctx) {
  spdlog::warn("Module {} failed to load: vireo does not support modules", ctx.arg(2));
  ctx.reply.Error(kLoadFailed);
}

void ModuleUnloadCommand(CommandContext& ctx) {
  spdlog::warn("Error unloading module {}: no such module with that name", ctx.arg(2));
  ctx.reply.Error("ERR Error unloading module: no such module with that name");
}

void ModuleHelpCommand(CommandContext& ctx) {
  ReplyHelp(ctx, "MODULE",
            {"LIST", "    Return a list of loaded modules.", "LOAD <path> [<arg> ...]",
             "    Load a module library from <path>, passing to it any optional arguments.",
             "LOADEX <path> [[CONFIG NAME VALUE] [CONFIG NAME VALUE]] [ARGS ...]",
             "    Load a module library from <path>, while passing it module configurations and "
             "optional arguments.",
             "UNLOAD <name>", "    Unload a module."});
}

}  // namespace

void RegisterModuleCommands(CommandTable& table) {
  table.Add({"module", -2, 0, Keys(), 0, "server", "4.0.0", "A container for module commands.", "",
             nullptr, "Depends on subcommand."});
  table.AddSubcommand("module", {"help", 2, kCmdLoading | kCmdStale, Keys(), 0, "server", "5.0.0",
                                 "Returns helpful text about the different subcommands.", "",
                                 ModuleHelpCommand, "O(1)"});
  table.AddSubcommand("module", {"list", 2, kCmdAdmin | kCmdNoScript, Keys(), 0, "server", "4.0.0",
                                 "Returns all loaded modules.", "", ModuleListCommand,
                                 "O(N) where N is the number of loaded modules."});
  constexpr uint64_t kLoadFlags = kCmdNoAsyncLoading | kCmdAdmin | kCmdNoScript | kCmdProtected;
  table.AddSubcommand("module",
                      {"load", -3, kLoadFlags, Keys(), 0, "server", "4.0.0", "Loads a module.",
                       "path [arg [arg ...]]", ModuleLoadCommand, "O(1)"});
  table.AddSubcommand("module",
                      {"loadex", -3, kLoadFlags, Keys(), 0, "server", "7.0.0",
                       "Loads a module using extended parameters.",
                       "path [configs=<CONFIG name value> [configs=<CONFIG name value> ...]] "
                       "[ARGS args ...]",
                       ModuleLoadCommand, "O(1)"});
  table.AddSubcommand("module", {"unload", 3, kLoadFlags, Keys(), 0, "server", "4.0.0",
                                 "Unloads a module.", "name", ModuleUnloadCommand, "O(1)"});
}

}  // namespace vireo
