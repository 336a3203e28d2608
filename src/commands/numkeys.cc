#include "commands/numkeys.h"

#include <cstdint>

#include "core/arg_parser.h"
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

size_t ReadScriptNumkeys(ArgParser& args, std::string_view not_integer) {
  const int64_t n = args.Int(not_integer);
  if (!args.ok()) return 0;
  if (n > static_cast<int64_t>(args.remaining())) {
    args.Fail("ERR Number of keys can't be greater than number of args");
  } else if (n < 0) {
    args.Fail("ERR Number of keys can't be negative");
  }
  return args.ok() ? static_cast<size_t>(n) : 0;
}

}  // namespace vireo
