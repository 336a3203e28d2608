// Pieces shared by the hash and set families: HSCAN/SSCAN argument parsing and the random
// source for HRANDFIELD, SRANDMEMBER and SPOP.
#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <string_view>
#include <vector>

#include "server/command_context.h"

namespace vireo {

struct CollectionScanArgs {
  uint64_t cursor = 0;
  std::optional<std::string_view> pattern;  // absent for no filtering (or "*")
  int64_t count = 10;
};

// The cursor argument as Redis reads it (strtoul); replies "ERR invalid cursor" on failure.
bool ParseCollectionCursor(CommandContext& ctx, std::string_view arg, uint64_t* cursor);
// [MATCH pattern] [COUNT count] from argv[first] on; replies the error on failure.
bool ParseCollectionScanOptions(CommandContext& ctx, size_t first, CollectionScanArgs* args);
// The cursor as the first element of the two-element scan reply (a bulk string).
void ReplyScanCursor(CommandContext& ctx, uint64_t cursor);

std::mt19937_64& CollectionRng();

// `count` distinct indexes of [0, n), ascending, uniformly chosen (selection sampling).
std::vector<size_t> SampleIndexes(size_t n, size_t count);

}  // namespace vireo
