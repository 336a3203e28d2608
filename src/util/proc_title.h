// The process title, as ps and /proc/<pid>/cmdline show it (Redis's set-proc-title).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace vireo {

// Claims the memory of argv's strings and of the environment strings that follow them, moving
// the environment to the heap first. Call once, early in main, after argv has been copied:
// the argument strings are overwritten by the first ProcTitleSet.
void ProcTitleInit(int argc, char** argv);

// The program name as started (argv[0]); "" before ProcTitleInit.
const std::string& ProcTitleProgram();

// argv as started, which /proc/self/cmdline no longer shows once a title is set (DEBUG RESTART
// starts the same command line again); empty before ProcTitleInit.
const std::vector<std::string>& ProcTitleOriginalArgs();

// Shows `title` instead of the command line, cut to the room ProcTitleInit found. Does nothing
// without ProcTitleInit.
void ProcTitleSet(std::string_view title);

}  // namespace vireo
