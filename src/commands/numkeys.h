// COMMAND GETKEYS for commands whose keys follow a numkeys argument (EVAL, FCALL, SINTERCARD,
// ZUNION, ZMPOP...).
#pragma once

#include <cstddef>
#include <span>
#include <string_view>
#include <vector>

namespace vireo {

class ArgParser;

// The argv indexes of the `numkeys` keys that follow argv[numkeys_at]; none when numkeys is not
// an integer in [1, arguments left].
std::vector<size_t> NumkeysKeys(std::span<const std::string_view> argv, size_t numkeys_at);

// EVAL's and FCALL's numkeys from `args`: an integer (`not_integer` otherwise) in
// [0, arguments left], with Redis's errors for too many and for negative.
size_t ReadScriptNumkeys(ArgParser& args, std::string_view not_integer);

}  // namespace vireo
