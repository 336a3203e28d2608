// The argument tail LMPOP/BLMPOP and ZMPOP/BZMPOP share:
// "numkeys key [key ...] <end-a | end-b> [COUNT count]".
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "core/arg_parser.h"

namespace vireo {

struct MpopArgs {
  std::span<const std::string_view> keys;
  bool second_end = false;  // end_b (RIGHT, MAX) rather than end_a (LEFT, MIN)
  int64_t count = 1;
};

// Reads the tail from `args` to the end; bad input fails `args` with Redis's error.
MpopArgs ReadMpopArgs(ArgParser& args, std::string_view end_a, std::string_view end_b);

}  // namespace vireo
