// vireo-check-aof: checks and repairs append-only files the way Redis 7.2's redis-check-aof
// does, with the same command line, exit codes and report lines:
//
//   vireo-check-aof [--fix|--truncate-to-timestamp <unix-seconds>] <file.aof|file.manifest>
//
// The file may be a plain AOF of commands, an AOF with an RDB preamble (checked by
// vireo-check-rdb's code, then its command tail), or a multi-part AOF's manifest (parsed by
// the server's own manifest reader; the base and every incremental file it lists are checked,
// history files are not). --fix truncates a bad or unfinished tail after asking on stdin, and
// only in the last file; --truncate-to-timestamp cuts the last file at the first `#TS:`
// annotation later than the given time.
#pragma once

namespace vireo::tools {

// Runs the tool; returns the process's exit code (0: valid or repaired, 1: not valid,
// aborted, or a usage error).
int CheckAofMain(int argc, char** argv);

}  // namespace vireo::tools
