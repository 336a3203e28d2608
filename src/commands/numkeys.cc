#include "commands/numkeys.h"

#include <cstdint>

#include "util/strings.h"

namespace vireo {

std::vector<size_t> NumkeysKeys(std::span<const std::string_view> argv, size_t numkeys_at) {
  std::vector<size_t> out;
  if (numkeys_at >= argv.size()) return out;
  int64_t n;
  if (!ParseInt64(argv[numkeys_at], &n) || n < 1 ||
      n > static_cast<int64_t>(argv.size() - numkeys_at - 1)) {
    return out;
  }
  for (int64_t k = 1; k <= n; ++k) out.push_back(numkeys_at + static_cast<size_t>(k));
  return out;
}

}  // namespace vireo
