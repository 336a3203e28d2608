// Pieces shared by the stream command files (streams.cc: the log and XREAD/XREADGROUP;
// stream_groups_cmd.cc: XGROUP, XACK, XPENDING, XCLAIM, XAUTOCLAIM, XINFO).
#pragma once

#include <limits>
#include <string>
#include <string_view>

#include "commands/helpers.h"
#include "core/arg_parser.h"
#include "core/command_table.h"
#include "types/stream.h"
#include "types/stream_groups.h"

namespace vireo {
namespace stream_cmd {

inline constexpr std::string_view kInvalidId =
    "ERR Invalid stream ID specified as stream command argument";

// The next argument of `args` as a stream ID (see ParseStreamID); records kInvalidId when it is
// not one.
StreamID NextStreamID(ArgParser& args, uint64_t missing_seq, bool strict, bool* seq_star = nullptr);

// The next argument as an interval's start or end (XRANGE, XPENDING, XAUTOCLAIM): "-", "+", an
// ID (an incomplete one gets the sequence that includes all of its millisecond), or "(" + ID,
// which excludes that ID. Records kInvalidId, or "ERR invalid start/end ID for the interval"
// when an exclusive bound has no next (previous) ID.
StreamID NextIntervalBound(ArgParser& args, bool start);

// The stream at `key` (see TypedObject).
TypedObject<Stream> LookupStream(CommandContext& ctx, std::string_view key);
// The stream at `key` for a command that needs it to exist (XSETID, XCFGSET, XIDMPRECORD):
// nullptr after replying WRONGTYPE or "ERR no such key".
Stream* LookupExistingStream(CommandContext& ctx, std::string_view key);
// The same for a command that reads (counts keyspace hits and misses).
TypedObject<Stream> LookupStreamRead(CommandContext& ctx, std::string_view key);

void ReplyId(ReplyBuilder& reply, StreamID id);
// [id, [field, value, ...]]
void ReplyEntry(ReplyBuilder& reply, const StreamEntryView& entry);

// The node limits from the configuration (stream-node-max-bytes / -entries).
Stream::NodeLimits NodeLimits(CommandContext& ctx);

// The command's wall-clock time in ms (fixed for a command, EXEC or script), for IDs, PEL
// delivery times and consumer seen-times.
int64_t CommandTimeMs(const CommandContext& ctx);

// Milliseconds from `since` to `now`, saturating instead of overflowing: delivery and seen times
// come from clients (XCLAIM TIME/IDLE) and from RDB files, so either can be anywhere in int64.
inline int64_t ElapsedMs(int64_t now, int64_t since) {
  int64_t d;
  if (__builtin_sub_overflow(now, since, &d)) {
    return since < 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
  }
  return d;
}

// A write Redis counts (dirty: logged, replicated) but that leaves WATCH alone: consumer-group
// state (XGROUP, XREADGROUP, XACK, XCLAIM...) and XSETID, as in Redis.
void GroupStateWritten(CommandContext& ctx, uint64_t dirty = 1);

// Propagation commands Redis uses for consumer-group side effects.
std::vector<std::string> XClaimPropagation(std::string_view key, std::string_view group,
                                           const ConsumerGroup& cg, const PendingEntry& pending,
                                           std::string_view id_arg);
std::vector<std::string> SetIdPropagation(std::string_view key, std::string_view group,
                                          const ConsumerGroup& cg);
std::vector<std::string> CreateConsumerPropagation(std::string_view key, std::string_view group,
                                                   std::string_view consumer);
// How a claim logs dropping a pending entry whose stream entry is gone: an XCLAIM to its owner
// (as Redis), or an XACK for a NACKed entry, which has no owner (stream_groups_cmd.cc).
std::vector<std::string> GhostDropPropagation(std::string_view key, std::string_view group,
                                              const ConsumerGroup& cg, const PendingEntry& pending,
                                              std::string_view id_arg);

// --- Redis 8 extensions (stream_delete.cc) ------------------------------------------------------

// How trimming and XDELEX/XACKDEL treat consumer-group references (KEEPREF | DELREF | ACKED).
enum class RefMode { kKeepRef, kDelRef, kAcked };
bool ParseRefMode(std::string_view arg, RefMode* mode);
// The stream's trim hooks for `mode`: empty (no checks) for KEEPREF or when no group could
// hold a reference.
Stream::TrimRefs TrimReferences(Stream& s, RefMode mode);
// True if some consumer group still needs `id`: not yet delivered to it, or pending in it.
bool EntryReferenced(const Stream& s, StreamID id);
// Removes `id` from every group's PEL; returns how many PELs held it.
uint64_t RemoveReferences(Stream& s, StreamID id);

// XINFO STREAM's IDMP fields (6 name/value pairs, Redis 8.6), from stream_idmp_cmd.cc.
void ReplyIdmpInfo(CommandContext& ctx, Stream& s);

}  // namespace stream_cmd

// Registered by RegisterStreamCommands (streams.cc).
void RegisterStreamGroupCommands(CommandTable& table);
void RegisterStreamDeleteCommands(CommandTable& table);
void RegisterStreamIdmpCommands(CommandTable& table);

}  // namespace vireo
