#include "commands/numkeys.h"

#include <cstdint>

#include "core/arg_parser.h"

namespace vireo {

std::vector<size_t> NumkeysKeys(std::span<const std::string_view> argv, size_t numkeys_at) {
  // Parsed for COMMAND GETKEYS, so a bad numkeys yields no keys rather than a reply.
  ArgParser args(argv, nullptr, numkeys_at);
  const size_t n = args.NumKeys("").size();
  std::vector<size_t> out;
  for (size_t k = 1; k <= n; ++k) out.push_back(numkeys_at + k);
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
