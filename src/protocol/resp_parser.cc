#include "protocol/resp_parser.h"

#include <climits>
#include <cstring>

#include "util/strings.h"

namespace vireo {
namespace {

// Lengths in RESP headers: an optional '-' and digits, nothing else. Anything else is a
// protocol error, which the caller reports with its own message.
bool ParseLength(std::string_view text, int64_t* out) { return ParseInt64(text, out); }

constexpr int64_t kUnauthenticatedMaxMultibulk = 10;
constexpr int64_t kUnauthenticatedMaxBulk = 16384;
// Argument slots kept between commands; more are released when the next command starts.
constexpr size_t kKeptScratchArgs = 1024;

}  // namespace

void RespParser::Reset() {
  multibulk_left_ = -1;
  pos_ = 0;
  bulk_len_ = -1;
  bytes_wanted_ = 0;
  arg_spans_.clear();
  pending_arg_bytes_ = 0;
}

size_t RespParser::MemoryUsage() const {
  // The inline arguments' own heap bytes are left out to stay O(1): an inline request is at
  // most 64 KB.
  return arg_spans_.capacity() * sizeof(arg_spans_[0]) +
         args_.capacity() * sizeof(std::string_view) +
         inline_args_.capacity() * sizeof(std::string) + error_.capacity();
}

RespParser::Result RespParser::Fail(std::string message) {
  error_ = std::move(message);
  Reset();
  return Result::kError;
}

RespParser::Result RespParser::Parse(std::string_view data, size_t* consumed) {
  *consumed = 0;
  args_.clear();
  if (multibulk_left_ < 0) {
    // A new command: what a huge one left (32 bytes an argument) goes back to the allocator,
    // as Redis frees a command's argv array, so used_memory falls once it is done.
    if (args_.capacity() > kKeptScratchArgs) std::vector<std::string_view>().swap(args_);
    if (arg_spans_.capacity() > kKeptScratchArgs) {
      std::vector<std::pair<size_t, size_t>>().swap(arg_spans_);
    }
    if (data.empty()) return Result::kNeedMore;
    if (data[0] != '*') return ParseInline(data, consumed);
  }
  return ParseMultibulk(data, consumed);
}

RespParser::Result RespParser::ParseInline(std::string_view data, size_t* consumed) {
  size_t newline = data.find('\n');
  if (newline == std::string_view::npos) {
    if (data.size() > limits_.max_inline_len) {
      return Fail("ERR Protocol error: too big inline request");
    }
    return Result::kNeedMore;
  }
  std::string_view line = data.substr(0, newline);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  bool ok = true;
  inline_args_ = SplitArgs(line, &ok);
  if (!ok) return Fail("ERR Protocol error: unbalanced quotes in request");
  *consumed = newline + 1;
  if (inline_args_.empty()) return Result::kNeedMore;  // an empty line is skipped
  args_.reserve(inline_args_.size());
  for (const std::string& arg : inline_args_) args_.emplace_back(arg);
  return Result::kCommand;
}

RespParser::Result RespParser::ParseMultibulk(std::string_view data, size_t* consumed) {
  if (multibulk_left_ < 0) {
    // The header "*<count>\r\n".
    // The size limit applies only while no '\r' has arrived (as in Redis): once it has, the
    // header is complete but for its '\n', and the answer must not depend on how the bytes
    // were split into reads (the protocol fuzzer checks this).
    size_t cr = data.find('\r');
    if (cr == std::string_view::npos) {
      if (data.size() > limits_.max_inline_len) {
        return Fail("ERR Protocol error: too big mbulk count string");
      }
      return Result::kNeedMore;
    }
    if (cr + 1 >= data.size()) return Result::kNeedMore;
    int64_t count = 0;
    if (!ParseLength(data.substr(1, cr - 1), &count) || count > INT_MAX ||
        count > limits_.max_multibulk_len) {
      return Fail("ERR Protocol error: invalid multibulk length");
    }
    if (!authenticated_ && count > kUnauthenticatedMaxMultibulk) {
      return Fail("ERR Protocol error: unauthenticated multibulk length");
    }
    if (count <= 0) {  // "*0" and "*-1" carry no command
      *consumed = cr + 2;
      return Result::kNeedMore;
    }
    multibulk_left_ = count;
    pos_ = cr + 2;
    arg_spans_.clear();
    pending_arg_bytes_ = 0;
    // Reserve a little: the count is client-controlled and the args may never arrive.
    arg_spans_.reserve(static_cast<size_t>(count < 1024 ? count : 1024));
  }

  while (multibulk_left_ > 0) {
    if (bulk_len_ < 0) {
      if (pos_ >= data.size()) {
        bytes_wanted_ = 0;
        return Result::kNeedMore;
      }
      if (data[pos_] != '$') {
        char got = data[pos_];
        return Fail(std::string("ERR Protocol error: expected '$', got '") + got + "'");
      }
      // Fast path for the usual "$<digits>\r\n": read the digits in one pass. Anything else
      // (a sign, a leading zero, a long or incomplete number) takes the general path below,
      // which gives the exact errors.
      const char* digits = data.data() + pos_ + 1;
      const char* end = data.data() + data.size();
      const char* q = digits;
      int64_t fast_len = 0;
      while (q < end && q - digits < 18 && static_cast<unsigned>(*q - '0') <= 9) {
        fast_len = fast_len * 10 + (*q - '0');
        ++q;
      }
      if (q > digits && q + 1 < end && *q == '\r' && (*digits != '0' || q - digits == 1) &&
          fast_len <= limits_.max_bulk_len &&
          (authenticated_ || fast_len <= kUnauthenticatedMaxBulk)) {
        bulk_len_ = fast_len;
        pos_ = static_cast<size_t>(q - data.data()) + 2;
      } else {
        const void* cr_ptr = memchr(digits - 1, '\r', data.size() - pos_);
        if (cr_ptr == nullptr || static_cast<const char*>(cr_ptr) + 1 >= end) {
          if (cr_ptr == nullptr && data.size() - pos_ > limits_.max_inline_len) {
            return Fail("ERR Protocol error: too big bulk count string");
          }
          bytes_wanted_ = 0;
          return Result::kNeedMore;
        }
        size_t cr = static_cast<const char*>(cr_ptr) - data.data();
        int64_t len = 0;
        if (!ParseLength(data.substr(pos_ + 1, cr - pos_ - 1), &len) || len < 0 ||
            len > limits_.max_bulk_len) {
          return Fail("ERR Protocol error: invalid bulk length");
        }
        if (!authenticated_ && len > kUnauthenticatedMaxBulk) {
          return Fail("ERR Protocol error: unauthenticated bulk length");
        }
        bulk_len_ = len;
        pos_ = cr + 2;
      }
    }
    size_t need = pos_ + static_cast<size_t>(bulk_len_) + 2;
    if (data.size() < need) {
      bytes_wanted_ = need;
      return Result::kNeedMore;
    }
    arg_spans_.emplace_back(pos_, static_cast<size_t>(bulk_len_));
    pending_arg_bytes_ += static_cast<size_t>(bulk_len_);
    pos_ = need;  // like Redis, the two bytes after the payload are skipped unchecked
    bulk_len_ = -1;
    --multibulk_left_;
  }

  args_.reserve(arg_spans_.size());
  for (const auto& [offset, length] : arg_spans_) args_.emplace_back(data.data() + offset, length);
  *consumed = pos_;
  Reset();
  return Result::kCommand;
}

}  // namespace vireo
