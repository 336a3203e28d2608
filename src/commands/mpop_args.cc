#include "commands/mpop_args.h"

#include "commands/helpers.h"
#include "util/strings.h"

namespace vireo {

bool ParseMpopArgs(CommandContext& ctx, size_t first, std::string_view end_a,
                   std::string_view end_b, MpopArgs* out) {
  int64_t numkeys;
  if (!ParseInt64(ctx.arg(first), &numkeys) || numkeys <= 0) {
    ctx.reply.Error("ERR numkeys should be greater than 0");
    return false;
  }
  size_t keys_at = first + 1;
  // The direction must follow the keys (checked without overflowing on a huge numkeys).
  if (static_cast<uint64_t>(numkeys) >= ctx.argc() - keys_at) {
    ctx.reply.Error(errors::kSyntax);
    return false;
  }
  out->keys = ctx.argv.subspan(keys_at, static_cast<size_t>(numkeys));
  size_t i = keys_at + static_cast<size_t>(numkeys);
  if (IsArg(ctx.arg(i), end_a)) {
    out->second_end = false;
  } else if (IsArg(ctx.arg(i), end_b)) {
    out->second_end = true;
  } else {
    ctx.reply.Error(errors::kSyntax);
    return false;
  }
  bool seen_count = false;
  for (++i; i < ctx.argc();) {
    if (IsArg(ctx.arg(i), "COUNT") && i + 1 < ctx.argc() && !seen_count) {
      int64_t count;
      if (!ParseInt64(ctx.arg(i + 1), &count) || count <= 0) {
        ctx.reply.Error("ERR count should be greater than 0");
        return false;
      }
      out->count = count;
      seen_count = true;
      i += 2;
    } else {
      ctx.reply.Error(errors::kSyntax);
      return false;
    }
  }
  return true;
}

}  // namespace vireo
