// Incremental RESP2 request parser (multibulk and inline).
//
// The parser is fed the unconsumed part of a client's read buffer, always starting at the first
// byte of the command being parsed. It remembers how far it got (as offsets, so the caller may
// grow or move the buffer between calls) and never rescans a bulk payload it has already
// skipped, so a 100 MB argument arriving in many reads costs linear time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace vireo {

struct ParserLimits {
  int64_t max_bulk_len = 512LL * 1024 * 1024;  // proto-max-bulk-len
  int64_t max_multibulk_len = 1024LL * 1024 * 1024;
  size_t max_inline_len = 64 * 1024;  // Redis's PROTO_INLINE_MAX_SIZE
};

class RespParser {
 public:
  enum class Result { kCommand, kNeedMore, kError };

  RespParser() = default;

  // Parses one command from `data` (which must begin where the previous kNeedMore call's data
  // began). On kCommand, args() views into `data` (or into parser-owned storage for inline
  // commands) and stay valid until the next Parse call; *consumed is the command's size.
  // On kNeedMore, *consumed is the number of leading bytes that carry no command (empty
  // inline lines, "*0"), which the caller may drop. On kError, error() holds the reply text
  // ("ERR Protocol error: ...") and the connection must be closed after replying.
  Result Parse(std::string_view data, size_t* consumed);

  const std::vector<std::string_view>& args() const { return args_; }
  const std::string& error() const { return error_; }
  // True while the command being parsed is a multibulk (so inline-size limits don't apply).
  bool in_multibulk() const { return multibulk_left_ >= 0; }
  // The number of bytes the current command needs in the buffer before parsing can progress,
  // counted from the start of the command; 0 when unknown. Lets the reader size its buffer
  // for a large bulk once instead of growing it read by read.
  size_t bytes_wanted() const { return bytes_wanted_; }

  // The part of a multibulk command still being received that is already parsed (its header
  // and complete arguments), and those arguments' lengths. Redis has moved such arguments
  // out of its query buffer into argv, so CLIENT LIST shows them as argv-mem, not qbuf.
  size_t parsed_prefix() const { return multibulk_left_ >= 0 ? pos_ : 0; }
  size_t pending_arg_bytes() const { return multibulk_left_ >= 0 ? pending_arg_bytes_ : 0; }
  // Heap bytes of the parser's own scratch (client eviction counts them).
  size_t MemoryUsage() const;

  void set_limits(const ParserLimits& limits) { limits_ = limits; }
  // Unauthenticated clients get tighter limits, as in Redis, so a stranger can't make the
  // server allocate big buffers before AUTH.
  void set_authenticated(bool authenticated) { authenticated_ = authenticated; }
  void Reset();

 private:
  Result ParseInline(std::string_view data, size_t* consumed);
  Result ParseMultibulk(std::string_view data, size_t* consumed);
  Result Fail(std::string message);

  ParserLimits limits_;
  bool authenticated_ = true;
  // Resume state for a partially received multibulk command.
  int64_t multibulk_left_ = -1;  // args still to read; -1 = not inside a multibulk
  size_t pos_ = 0;               // offset of the next unparsed byte
  int64_t bulk_len_ = -1;        // length of a bulk whose header is parsed but not its payload
  std::vector<std::pair<size_t, size_t>> arg_spans_;  // (offset, length) of parsed args
  size_t pending_arg_bytes_ = 0;                      // their lengths' sum
  size_t bytes_wanted_ = 0;
  std::vector<std::string_view> args_;
  std::vector<std::string> inline_args_;
  std::string error_;
};

}  // namespace vireo
