// Each command family registers its commands in the table; one function per family file.
#pragma once

namespace vireo {

class CommandTable;

void RegisterConnectionCommands(CommandTable& table);   // connection.cc
void RegisterTransactionCommands(CommandTable& table);  // transactions.cc
void RegisterReplicationCommands(CommandTable& table);  // replication.cc
void RegisterStringCommands(CommandTable& table);       // strings.cc
void RegisterStringCasCommands(CommandTable& table);    // strings_cas.cc (DIGEST, DELEX...)
void RegisterBitmapCommands(CommandTable& table);       // bitmaps.cc
void RegisterKeyCommands(CommandTable& table);          // keys.cc
void RegisterListCommands(CommandTable& table);         // lists.cc
void RegisterPubsubCommands(CommandTable& table);      // pubsub.cc (SUBSCRIBE, PUBLISH, PUBSUB ...)
void RegisterHashCommands(CommandTable& table);        // hashes.cc
void RegisterHashExpireCommands(CommandTable& table);  // hash_expire.cc (HEXPIRE, HSETEX...)
void RegisterSetCommands(CommandTable& table);         // sets.cc
void RegisterZsetCommands(CommandTable& table);        // zsets.cc
void RegisterSortCommands(CommandTable& table);        // sort.cc (SORT, SORT_RO)
void RegisterStreamCommands(CommandTable& table);      // streams.cc
void RegisterHyperLogLogCommands(CommandTable& table);  // hyperloglog.cc
void RegisterScriptingCommands(
    CommandTable& table);  // scripting.cc (EVAL, SCRIPT, FUNCTION, FCALL)
void RegisterPersistenceCommands(
    CommandTable& table);  // persistence.cc (SAVE, BGSAVE, BGREWRITEAOF, DUMP, RESTORE)
void RegisterServerCommands(CommandTable& table);  // server_commands.cc
void RegisterDebugCommands(CommandTable& table);   // debug.cc
void RegisterModuleCommands(CommandTable& table);  // modules.cc (MODULE, no module support)
void RegisterLolwutCommands(CommandTable& table);  // lolwut.cc
void RegisterIntrospectionCommands(
    CommandTable& table);                           // introspection.cc (COMMAND, CLIENT, INFO...)
void RegisterMemoryCommands(CommandTable& table);   // memory.cc (MEMORY USAGE, STATS...)
void RegisterGeoCommands(CommandTable& table);      // geo.cc
void RegisterLatencyCommands(CommandTable& table);  // latency.cc (LATENCY ...)
void RegisterCommandlogCommands(CommandTable& table);     // commandlog.cc (SLOWLOG, COMMANDLOG)
void RegisterAclCommands(CommandTable& table);            // acl.cc (ACL ...)
void RegisterClusterClientCommands(CommandTable& table);  // cluster_client.cc (ASKING, READONLY)
void RegisterMigrateCommands(CommandTable& table);        // migrate.cc (MIGRATE, RESTORE-ASKING)
void RegisterClusterCommands(CommandTable& table);        // cluster.cc (CLUSTER ...)
// Redis's deprecation notes, doc flags and version history, added once every family is in
// (command_docs.cc).
void AddCommandDocNotes(CommandTable& table);

}  // namespace vireo
