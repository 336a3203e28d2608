#include "cluster/bus_link.h"

#include <fmt/format.h>

namespace vireo::cluster {

namespace {
// Consumed bytes are dropped from the front once they are this many and at least half the
// buffer, so a steady stream costs amortised O(1) per byte without an erase per message.
constexpr size_t kCompactThreshold = 64 * 1024;
}  // namespace

void ClusterBusLink::Feed(std::string_view bytes) {
  if (broken_) return;
  buf_.append(bytes);
}

void ClusterBusLink::Consume(size_t n) {
  pos_ += n;
  if (pos_ == buf_.size()) {
    buf_.clear();
    pos_ = 0;
  } else if (pos_ >= kCompactThreshold && pos_ * 2 >= buf_.size()) {
    buf_.erase(0, pos_);
    pos_ = 0;
  }
}

ClusterBusLink::Result ClusterBusLink::Next(BusMessage* msg, std::string* error) {
  if (broken_) {
    *error = broken_reason_;
    return Result::kBroken;
  }
  const BusFrame frame = PeekBusFrame(Pending());
  if (frame.bad || (max_message_bytes_ != 0 && frame.length > max_message_bytes_)) {
    broken_ = true;
    broken_reason_ = frame.bad ? "Bad message length or signature received on the Cluster bus"
                               : fmt::format("message of {} bytes exceeds the limit of {}",
                                             frame.length, max_message_bytes_);
    buf_.clear();
    pos_ = 0;
    *error = broken_reason_;
    return Result::kBroken;
  }
  if (!frame.complete) return Result::kNeedMore;
  const bool ok = Decode(Pending().substr(0, frame.length), msg, error);
  Consume(frame.length);
  return ok ? Result::kMessage : Result::kInvalid;
}

size_t ClusterBusLink::Wanted() const {
  if (broken_) return 0;
  const BusFrame frame = PeekBusFrame(Pending());
  if (frame.bad || frame.complete) return 0;
  return frame.length - buffered();
}

}  // namespace vireo::cluster
