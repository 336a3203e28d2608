// vireo-check-rdb: checks an RDB file the way Redis 7.2's redis-check-rdb does, with the same
// command line, exit codes and report lines ("[offset N] AUX FIELD ...", "[offset N] Checksum
// OK", "\o/ RDB looks OK! \o/", "--- RDB ERROR DETECTED ---"), so scripts and people used to
// Redis's tool read it the same way. Values are decoded by the server's own RDB code
// (persistence/rdb_internal.h) with deep sanitization on, as redis-check-rdb does.
#pragma once

#include <string>

namespace vireo::tools {

// Checks one RDB image read from fd's current offset, printing the report to stdout; `name`
// is the file name the report shows. True when the image is sane; fd's offset is then just
// past the image's checksum (an AOF's commands may follow it).
bool CheckRdbImage(int fd, const std::string& name);

// The vireo-check-rdb command line: `vireo-check-rdb <file.rdb>` or `-v` / `--version`.
// Returns the process's exit code: 0 when the file looks sane, 1 otherwise.
int CheckRdbMain(int argc, char** argv);

}  // namespace vireo::tools
