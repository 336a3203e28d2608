#include "commands/families.h"
#include "server/command_table.h"

namespace vireo {

void RegisterAllCommands(CommandTable& table) {
  RegisterConnectionCommands(table);
  RegisterTransactionCommands(table);
  RegisterStringCommands(table);
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
  RegisterAclCommands(table);
  RegisterClusterClientCommands(table);
  RegisterMigrateCommands(table);
  RegisterClusterCommands(table);
  RegisterReplicationCommands(table);
}

}  // namespace vireo
