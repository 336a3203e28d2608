#include "commands/families.h"
#include "server/command_table.h"

namespace vireo {

void RegisterAllCommands(CommandTable& table) {
  RegisterConnectionCommands(table);
  RegisterTransactionCommands(table);
  RegisterStringCommands(table);
  RegisterKeyCommands(table);
  RegisterListCommands(table);
  RegisterServerCommands(table);
  RegisterIntrospectionCommands(table);
}

}  // namespace vireo
