// Writing the dataset as commands, for a rewrite base without the RDB preamble.
#pragma once

#include <string>
#include <string_view>

namespace vireo {

class PersistenceHost;

// Writes `annotation` (e.g. a "#TS:<seconds>\r\n" line, or "") and then every database of the
// host as SELECT + commands that rebuild each key and its TTL. Returns "" or the error of the
// failed write. Only reads the dataset: safe in a forked child.
std::string WriteDatasetAsCommands(PersistenceHost& host, int fd, std::string_view annotation);

}  // namespace vireo
