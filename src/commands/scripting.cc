#include "commands/families.h"
#include "server/command_table.h"

namespace vireo {

void RegisterScriptingCommands(CommandTable& table) { (void)table; }

}  // namespace vireo
