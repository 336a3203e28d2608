// The command table for tests that look commands up or build servers in-process: built once
// per test binary (servers keep a reference to it).
#pragma once

#include "commands/build_command_table.h"

namespace vireo {

inline const CommandTable& TestCommands() {
  static const CommandTable table = BuildCommandTable();
  return table;
}

}  // namespace vireo
