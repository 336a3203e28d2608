// Each command family registers its commands in the table; one function per family file.
#pragma once

namespace vireo {

class CommandTable;

void RegisterConnectionCommands(CommandTable& table);   // connection.cc
void RegisterTransactionCommands(CommandTable& table);  // transactions.cc
void RegisterStringCommands(CommandTable& table);       // strings.cc
void RegisterKeyCommands(CommandTable& table);          // keys.cc
void RegisterListCommands(CommandTable& table);         // lists.cc
void RegisterServerCommands(CommandTable& table);       // server_commands.cc
void RegisterIntrospectionCommands(
    CommandTable& table);  // introspection.cc (COMMAND, CLIENT, INFO...)

}  // namespace vireo
