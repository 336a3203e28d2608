// The framing of the RDB a master sends after +FULLRESYNC, read incrementally as it arrives.
//
// Before the payload the master may send "\n" keep-alives (while its RDB child starts). Then
// either "$<len>\r\n" and exactly len bytes (disk-based sync), or "$EOF:<40 chars>\r\n", the
// bytes, and the same 40 characters as the end mark (diskless sync, length unknown). Whatever
// follows the payload in the same read is the start of the replication stream and is left
// to the caller.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace vireo {

class SyncPayloadReader {
 public:
  static constexpr size_t kMarkLength = 40;
  enum class State { kPreamble, kBody, kDone, kError };

  // Consumes bytes of `in`, appending payload bytes to *payload. Returns how many bytes of
  // `in` were used; after kDone the rest belong to the replication stream.
  size_t Feed(std::string_view in, std::string* payload);

  State state() const { return state_; }
  bool eof_mode() const { return eof_mode_; }
  // The announced payload size, -1 with EOF framing (unknown) or before the header.
  int64_t expected() const { return expected_; }
  // Payload bytes produced so far.
  int64_t received() const { return received_; }
  const std::string& error() const { return error_; }

 private:
  size_t FeedPreamble(std::string_view in);
  size_t FeedBody(std::string_view in, std::string* payload);

  State state_ = State::kPreamble;
  std::string line_;  // the header line being read
  bool eof_mode_ = false;
  std::string mark_;
  std::string held_;  // EOF framing: trailing bytes that may be the start of the mark
  int64_t expected_ = -1;
  int64_t received_ = 0;
  std::string error_;
};

}  // namespace vireo
