// Writing the dataset as commands, for a rewrite base without the RDB preamble.
#pragma once

#include <string>

namespace vireo {

class PersistenceHost;

// Writes every database of the host as SELECT + commands that rebuild each key and its TTL. Returns
// "" or the error of the failed write. Only reads the dataset: safe in a forked child.
std::string WriteDatasetAsCommands(PersistenceHost& host, int fd);

}  // namespace vireo
