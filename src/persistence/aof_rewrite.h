// Writing the dataset as commands, for a rewrite base without the RDB preamble.
#pragma once

#include <string>

namespace vireo {

class Server;

// Writes every database as SELECT + commands that rebuild each key and its TTL. Returns "" or
// the error of the failed write. Only reads server state: safe in a forked child.
std::string WriteDatasetAsCommands(Server& server, int fd);

}  // namespace vireo
