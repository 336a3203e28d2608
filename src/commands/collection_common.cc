#include "commands/collection_common.h"

#include <charconv>
#include <limits>

#include "commands/helpers.h"
#include "core/config.h"
#include "server/client.h"
#include "server/command_context.h"
#include "util/strings.h"

namespace vireo {

void ReadCollectionScanOptions(ArgParser& args, CollectionScanArgs* out,
                               std::optional<std::string_view>* type, std::string_view omit_flag) {
  while (args.HasNext()) {
    std::string_view value;
    if (args.OptionName("COUNT")) {
      out->count = args.IntAtLeast(1, errors::kSyntax);  // as Redis words a COUNT below 1
    } else if (args.Option("MATCH", &value)) {
      if (value == "*") {
        out->pattern.reset();
      } else {
        out->pattern = value;
      }
    } else if (type != nullptr && args.Option("TYPE", &value)) {
      // Redis 7.2 accepts unknown type names and simply matches nothing.
      *type = value;
    } else if (!omit_flag.empty() && args.Flag(omit_flag)) {
      out->omit_values = true;
    } else {
      args.SyntaxError();
    }
  }
}

void ReplyEmptyScan(CommandContext& ctx) {
  ctx.reply.Array(2);
  ReplyScanCursor(ctx, 0);
  ctx.reply.EmptyArray();
}

void ReplyScanCursor(CommandContext& ctx, uint64_t cursor) {
  char buf[kInt64BufSize];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), cursor);
  ctx.reply.Bulk(std::string_view(buf, static_cast<size_t>(end - buf)));
}

std::mt19937_64& CollectionRng(CommandContext& ctx) { return ctx.rng(); }

uint64_t CollectionReplyLimit(CommandContext& ctx) {
  return static_cast<uint64_t>(ctx.cfg().proto_max_bulk_len);
}

std::vector<size_t> SampleIndexes(std::mt19937_64& rng, size_t n, size_t count) {
  std::vector<size_t> out;
  out.reserve(count);
  for (size_t i = 0; i < n && out.size() < count; ++i) {
    // Take index i with probability (still needed) / (still left).
    size_t needed = count - out.size();
    size_t left = n - i;
    if (rng() % left < needed) out.push_back(i);
  }
  return out;
}

int64_t ReadRandomCount(ArgParser& args, std::string_view with_keyword, bool* with) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  int64_t count = args.IntInRange(-kMax, kMax);
  *with = args.Flag(with_keyword);
  args.ExpectEnd();
  if (*with && (count < -kMax / 2 || count > kMax / 2)) args.Fail("ERR value is out of range");
  return count;
}

}  // namespace vireo
