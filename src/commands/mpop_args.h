// The argument tail LMPOP/BLMPOP and ZMPOP/BZMPOP share:
// "numkeys key [key ...] <end-a | end-b> [COUNT count]".
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "server/command_context.h"

namespace vireo {

struct MpopArgs {
  std::span<const std::string_view> keys;
  bool second_end = false;  // end_b (RIGHT, MAX) rather than end_a (LEFT, MIN)
  int64_t count = 1;
};

// Parses from argv[first]; on bad input replies Redis's error and returns false.
bool ParseMpopArgs(CommandContext& ctx, size_t first, std::string_view end_a,
                   std::string_view end_b, MpopArgs* out);

}  // namespace vireo
