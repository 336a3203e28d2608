// vireo-check-aof [--fix|--truncate-to-timestamp <unix-seconds>] <file.aof|file.manifest>:
// the same command line as redis-check-aof (src/tools/check_aof.h).
#include "tools/check_aof.h"

int main(int argc, char** argv) { return vireo::tools::CheckAofMain(argc, argv); }
