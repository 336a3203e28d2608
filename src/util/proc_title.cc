#include "util/proc_title.h"

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <vector>

namespace vireo {
namespace {

char* g_area = nullptr;  // argv[0]'s first byte
size_t g_area_size = 0;  // up to the end of the last adjacent argument or environment string
std::string g_program;
std::vector<std::string> g_args;  // the command line as started

// The end of `s` (past its NUL) when it starts at `at`, else `at` unchanged.
char* ExtendOver(char* at, char* s) { return s == at ? s + std::strlen(s) + 1 : at; }

}  // namespace

void ProcTitleInit(int argc, char** argv) {
  if (g_area != nullptr || argc <= 0 || argv[0] == nullptr) return;
  g_program = argv[0];
  g_args.assign(argv, argv + argc);
  char* end = argv[0] + std::strlen(argv[0]) + 1;
  for (int i = 1; i < argc; ++i) end = ExtendOver(end, argv[i]);
  // The kernel shows the argument area; a title longer than it runs on into the environment
  // strings that follow, so those move to the heap (getenv keeps working) and free their room.
  size_t env_count = 0;
  while (environ[env_count] != nullptr) ++env_count;
  char** env_copy = new char*[env_count + 1];
  for (size_t i = 0; i < env_count; ++i) {
    end = ExtendOver(end, environ[i]);
    env_copy[i] = strdup(environ[i]);
  }
  env_copy[env_count] = nullptr;
  environ = env_copy;
  g_area = argv[0];
  g_area_size = static_cast<size_t>(end - argv[0]);
}

const std::string& ProcTitleProgram() { return g_program; }

const std::vector<std::string>& ProcTitleOriginalArgs() { return g_args; }

void ProcTitleSet(std::string_view title) {
  if (g_area == nullptr || g_area_size < 2) return;
  const size_t n = std::min(title.size(), g_area_size - 1);
  std::memset(g_area, 0, g_area_size);
  std::memcpy(g_area, title.data(), n);
}

}  // namespace vireo
