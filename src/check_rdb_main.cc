// vireo-check-rdb <file.rdb>: the same command line as redis-check-rdb (src/tools/check_rdb.h).
#include "tools/check_rdb.h"

int main(int argc, char** argv) { return vireo::tools::CheckRdbMain(argc, argv); }
