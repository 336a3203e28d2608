#include "replication/sync_payload.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstring>

namespace vireo {

size_t SyncPayloadReader::Feed(std::string_view in, std::string* payload) {
  size_t used = 0;
  while (used < in.size() && (state_ == State::kPreamble || state_ == State::kBody)) {
    std::string_view rest = in.substr(used);
    used += state_ == State::kPreamble ? FeedPreamble(rest) : FeedBody(rest, payload);
  }
  // An empty payload ($0) is complete as soon as its header is.
  if (state_ == State::kBody && !eof_mode_ && expected_ == 0) state_ = State::kDone;
  return used;
}

size_t SyncPayloadReader::FeedPreamble(std::string_view in) {
  size_t nl = in.find('\n');
  if (nl == std::string_view::npos) {
    line_.append(in);
    // A header is short; a peer sending a long line is not a master.
    if (line_.size() > 1024) {
      state_ = State::kError;
      error_ = "Bad protocol from MASTER, the header line is too long";
    }
    return in.size();
  }
  line_.append(in.substr(0, nl));
  if (!line_.empty() && line_.back() == '\r') line_.pop_back();
  std::string line;
  line.swap(line_);
  // Keep-alive newline while the master prepares the RDB.
  if (line.empty()) return nl + 1;
  if (line.front() == '-') {
    state_ = State::kError;
    error_ = fmt::format("MASTER aborted replication with an error: {}", line.substr(1));
    return nl + 1;
  }
  if (line.front() != '$') {
    state_ = State::kError;
    error_ = fmt::format(
        "Bad protocol from MASTER, the first byte is not '$' (we received '{}'), are you sure "
        "the host and port are right?",
        line);
    return nl + 1;
  }
  std::string_view header = std::string_view(line).substr(1);
  if (header.starts_with("EOF:") && header.size() == 4 + kMarkLength) {
    eof_mode_ = true;
    mark_ = std::string(header.substr(4));
  } else {
    int64_t len = -1;
    auto [end, ec] = std::from_chars(header.data(), header.data() + header.size(), len);
    if (ec != std::errc() || end != header.data() + header.size() || len < 0) {
      state_ = State::kError;
      error_ = fmt::format("Bad protocol from MASTER, invalid payload length '{}'", line);
      return nl + 1;
    }
    expected_ = len;
  }
  state_ = State::kBody;
  return nl + 1;
}

size_t SyncPayloadReader::FeedBody(std::string_view in, std::string* payload) {
  if (!eof_mode_) {
    size_t take = static_cast<size_t>(std::min<int64_t>(expected_ - received_, in.size()));
    payload->append(in.substr(0, take));
    received_ += static_cast<int64_t>(take);
    if (received_ == expected_) state_ = State::kDone;
    return take;
  }
  // The mark may straddle reads: look for it where the held-back bytes meet the new ones
  // first, then in the new bytes alone, without copying them together.
  const size_t held_size = held_.size();
  if (held_size > 0) {
    std::string seam = held_;
    seam.append(in.substr(0, std::min(in.size(), kMarkLength - 1)));
    size_t at = seam.find(mark_);
    if (at != std::string::npos) {
      payload->append(seam, 0, at);
      received_ += static_cast<int64_t>(at);
      held_.clear();
      state_ = State::kDone;
      return at + kMarkLength - held_size;
    }
  }
  const void* hit = memmem(in.data(), in.size(), mark_.data(), mark_.size());
  if (hit != nullptr) {
    size_t at = static_cast<size_t>(static_cast<const char*>(hit) - in.data());
    payload->append(held_);
    payload->append(in.substr(0, at));
    received_ += static_cast<int64_t>(held_size + at);
    held_.clear();
    state_ = State::kDone;
    return at + kMarkLength;
  }
  // Everything but the last kMarkLength - 1 bytes is certainly payload.
  const size_t total = held_size + in.size();
  const size_t keep = std::min(total, kMarkLength - 1);
  const size_t out = total - keep;
  if (out >= held_size) {
    payload->append(held_);
    payload->append(in.substr(0, out - held_size));
    held_.assign(in.substr(out - held_size));
  } else {
    payload->append(held_, 0, out);
    held_.erase(0, out);
    held_.append(in);
  }
  received_ += static_cast<int64_t>(out);
  return in.size();
}

}  // namespace vireo
