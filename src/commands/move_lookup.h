// The two keys of a move between collections (LMOVE/LMOVEM, ZMOVE/BZMOVE/ZMOVEMEMBER).
#pragma once

#include <string_view>

#include "commands/helpers.h"

namespace vireo {

// The source as `read_source` finds it (a family's ReadList, LookupZset: nullptr when missing)
// and the destination's entry of `type` (nullptr when missing). The destination is looked at
// only when the source exists, so its type counts only then (Redis's LMOVE and redis.io's
// ZMOVE). False after a WRONGTYPE reply, before anything moved.
template <typename T, typename ReadSource>
bool LookupMoveKeys(CommandContext& ctx, std::string_view src, std::string_view dst, ValueType type,
                    ReadSource&& read_source, T** source, DbEntry** dst_entry) {
  auto [object, wrong_type] = read_source(ctx, src);
  if (wrong_type) return false;
  *source = object;
  *dst_entry = nullptr;
  if (object == nullptr) return true;
  auto [entry, dst_wrong_type] = LookupTyped(ctx, dst, type);
  if (dst_wrong_type) return false;
  *dst_entry = entry;
  return true;
}

}  // namespace vireo
