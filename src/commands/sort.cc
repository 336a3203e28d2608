#include "commands/families.h"
#include "server/command_table.h"

namespace vireo {

void RegisterSortCommands(CommandTable& table) { (void)table; }

}  // namespace vireo
