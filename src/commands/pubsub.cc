#include "commands/families.h"
#include "server/command_table.h"

namespace vireo {

void RegisterPubsubCommands(CommandTable& table) { (void)table; }

}  // namespace vireo
