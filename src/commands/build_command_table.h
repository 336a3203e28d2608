// The command table: every family's declarations, built once at start-up. main() and the
// embedding API build it and hand it to each Server, which only reads it.
#pragma once

#include "core/command_table.h"

namespace vireo {

CommandTable BuildCommandTable();

}  // namespace vireo
