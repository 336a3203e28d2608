#include "commands/families.h"
#include "server/command_table.h"

namespace vireo {

void RegisterHashCommands(CommandTable& table) { (void)table; }

}  // namespace vireo
