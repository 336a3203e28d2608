#include "commands/build_command_table.h"

#include "commands/families.h"

namespace vireo {

CommandTable BuildCommandTable() {
  CommandTable table;
  RegisterConnectionCommands(table);
  RegisterTransactionCommands(table);
  RegisterStringCommands(table);
  RegisterStringCasCommands(table);
  RegisterBitmapCommands(table);
  RegisterKeyCommands(table);
  RegisterListCommands(table);
  RegisterPubsubCommands(table);
  RegisterHashCommands(table);
  RegisterHashExpireCommands(table);
  RegisterSetCommands(table);
  RegisterZsetCommands(table);
  RegisterGeoCommands(table);
  RegisterSortCommands(table);
  RegisterStreamCommands(table);
  RegisterHyperLogLogCommands(table);
  RegisterScriptingCommands(table);
  RegisterPersistenceCommands(table);
  RegisterServerCommands(table);
  RegisterDebugCommands(table);
  RegisterModuleCommands(table);
  RegisterLolwutCommands(table);
  RegisterIntrospectionCommands(table);
  RegisterMemoryCommands(table);
  RegisterLatencyCommands(table);
  RegisterCommandlogCommands(table);
  RegisterAclCommands(table);
  RegisterClusterClientCommands(table);
  RegisterMigrateCommands(table);
  RegisterClusterCommands(table);
  RegisterReplicationCommands(table);
  AddCommandDocNotes(table);
  return table;
}

}  // namespace vireo
