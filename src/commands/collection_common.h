// Pieces shared by the hash and set families: SCAN/HSCAN/SSCAN/ZSCAN options (the cursor is
// read by ArgParser::Cursor) and the random source for HRANDFIELD, SRANDMEMBER and SPOP.
#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <string_view>
#include <vector>

#include "commands/helpers.h"
#include "core/arg_parser.h"
#include "server/command_context.h"

namespace vireo {

struct CollectionScanArgs {
  uint64_t cursor = 0;
  std::optional<std::string_view> pattern;  // absent for no filtering (or "*")
  int64_t count = 10;
  bool omit_values = false;  // HSCAN NOVALUES (7.4), ZSCAN NOSCORES (Valkey 8.0)
};

// [MATCH pattern] [COUNT count] to the end of `args`. With `type` non-null (SCAN),
// [TYPE type] is accepted too; with `omit_flag` ("NOVALUES", "NOSCORES") that flag, which sets
// omit_values.
void ReadCollectionScanOptions(ArgParser& args, CollectionScanArgs* out,
                               std::optional<std::string_view>* type = nullptr,
                               std::string_view omit_flag = {});
// ZRANDMEMBER's and HRANDFIELD's "count [WITHSCORES | WITHVALUES]" from `args` on, in Redis's
// order: the count (its range is symmetric, so -count can't overflow), the syntax, then with the
// keyword (two replies per element) a count whose reply length stays representable.
int64_t ReadRandomCount(ArgParser& args, std::string_view with_keyword, bool* with);

// The cursor as the first element of the two-element scan reply (a bulk string).
void ReplyScanCursor(CommandContext& ctx, uint64_t cursor);

// The reply to a scan of a missing key: cursor 0, no elements.
void ReplyEmptyScan(CommandContext& ctx);

// The COUNT-hinted walk of a hash-table encoding (SCAN, HSCAN, SSCAN): calls `step(cursor)`,
// which scans one bucket and returns the next cursor, until the walk ends or `found()` reaches
// `count`, giving up after 10x `count` buckets so a sparse table can't make one call walk it all.
template <typename Step, typename Found>
uint64_t ScanWithCountHint(uint64_t cursor, int64_t count, Step step, Found found) {
  int64_t max_steps = count > INT64_MAX / 10 ? INT64_MAX : count * 10;
  do {
    cursor = step(cursor);
  } while (cursor != 0 && max_steps-- > 0 && found() < static_cast<uint64_t>(count));
  return cursor;
}

// The server's random generator for random picks (SRANDMEMBER, SPOP, HRANDFIELD, ...).
std::mt19937_64& CollectionRng(CommandContext& ctx);

// proto-max-bulk-len, the byte bound of a reply whose length the client picks freely.
uint64_t CollectionReplyLimit(CommandContext& ctx);

// The error that replaces a reply whose size the client chose independently of the data and
// that grew past proto-max-bulk-len (see ReplyRepeatedDraws).
inline constexpr std::string_view kReplyTooLarge =
    "ERR value is out of range, the reply would exceed proto-max-bulk-len";

// The reply to a negative-count ZRANDMEMBER, HRANDFIELD or SRANDMEMBER: an array header of
// `header_len` elements, then `count` independent draws, each written by `draw()`. Redis
// streams such a reply to the socket while it builds it; vireo builds a reply in one piece, so
// a count near INT64_MAX would grow it until the allocator gives up. Past proto-max-bulk-len
// bytes (Redis's own bound for one transient allocation, as for LCS) the partial reply is
// dropped and replaced by kReplyTooLarge, so the client (or the script) sees a well-formed error.
template <typename Draw>
void ReplyRepeatedDraws(CommandContext& ctx, uint64_t count, uint64_t header_len, Draw draw) {
  std::string* out = ctx.reply.buffer();
  const size_t mark = out->size();
  const uint64_t limit = CollectionReplyLimit(ctx);
  ctx.reply.Array(header_len);
  for (uint64_t i = 0; i < count; ++i) {
    draw();
    // Checked after every draw: one member can be hundreds of megabytes.
    if (out->size() - mark > limit) {
      out->resize(mark);
      ctx.reply.Error(kReplyTooLarge);
      return;
    }
    if (i % 1024 == 1023 && ctx.reply_over_output_limit()) return;
  }
}

// HDEL / SREM: removes each of argv[2..] with `remove(member)` (true if it was there) until the
// collection is empty, deletes the emptied key, does the write bookkeeping (dirty count,
// `event` and `del` notifications) and replies the number removed.
template <typename RemoveFn, typename EmptyFn>
void RemoveMembersAndReply(CommandContext& ctx, std::string_view key, uint32_t notify_class,
                           std::string_view event, RemoveFn remove, EmptyFn empty) {
  int64_t removed = 0;
  bool key_removed = false;
  for (size_t i = 2; i < ctx.argc(); ++i) {
    if (!remove(ctx.arg(i))) continue;
    ++removed;
    if (empty()) {
      ctx.db.Delete(key);
      key_removed = true;
      break;
    }
  }
  if (removed > 0) {
    KeyWritten(ctx, key, static_cast<uint64_t>(removed));
    Notify(ctx, notify_class, event, key);
    if (key_removed) Notify(ctx, kNotifyGeneric, "del", key);
  }
  ctx.reply.Integer(removed);
}

// `count` distinct indexes of [0, n), ascending, uniformly chosen (selection sampling).
std::vector<size_t> SampleIndexes(std::mt19937_64& rng, size_t n, size_t count);

}  // namespace vireo
