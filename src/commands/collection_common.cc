#include "commands/collection_common.h"

#include <charconv>

#include "commands/helpers.h"
#include "server/server.h"
#include "util/strings.h"

namespace vireo {

bool ParseCollectionCursor(CommandContext& ctx, std::string_view arg, uint64_t* cursor) {
  // strtoul's grammar: optional sign, digits, a negative value wraps; "" is 0. A NUL ends the
  // text, as in C.
  std::string_view text = arg.substr(0, arg.find('\0'));
  bool ok = true;
  uint64_t value = 0;
  if (!text.empty()) {
    size_t i = 0;
    bool negative = false;
    if (text[0] == '+' || text[0] == '-') {
      negative = text[0] == '-';
      ++i;
    }
    if (i == text.size()) ok = false;
    for (; ok && i < text.size(); ++i) {
      char c = text[i];
      if (c < '0' || c > '9') {
        ok = false;
        break;
      }
      auto digit = static_cast<uint64_t>(c - '0');
      if (value > (UINT64_MAX - digit) / 10) {
        ok = false;
        break;
      }
      value = value * 10 + digit;
    }
    if (negative) value = 0 - value;
  }
  if (!ok) {
    ctx.reply.Error("ERR invalid cursor");
    return false;
  }
  *cursor = value;
  return true;
}

bool ParseCollectionScanOptions(CommandContext& ctx, size_t first, CollectionScanArgs* args,
                                std::optional<std::string_view>* type) {
  for (size_t i = first; i < ctx.argc(); i += 2) {
    bool has_value = i + 1 < ctx.argc();
    std::string_view opt = ctx.arg(i);
    if (IsArg(opt, "COUNT") && has_value) {
      std::optional<int64_t> count = ArgInt(ctx, ctx.arg(i + 1));
      if (!count) return false;
      if (*count < 1) {
        ctx.reply.Error(errors::kSyntax);
        return false;
      }
      args->count = *count;
    } else if (IsArg(opt, "MATCH") && has_value) {
      std::string_view pattern = ctx.arg(i + 1);
      if (pattern == "*") {
        args->pattern.reset();
      } else {
        args->pattern = pattern;
      }
    } else if (type != nullptr && IsArg(opt, "TYPE") && has_value) {
      // Redis 7.2 accepts unknown type names and simply matches nothing.
      *type = ctx.arg(i + 1);
    } else {
      ctx.reply.Error(errors::kSyntax);
      return false;
    }
  }
  return true;
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

std::mt19937_64& CollectionRng(CommandContext& ctx) { return ctx.server.rng(); }

uint64_t CollectionReplyLimit(CommandContext& ctx) {
  return static_cast<uint64_t>(ctx.server.cfg().proto_max_bulk_len);
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

}  // namespace vireo
