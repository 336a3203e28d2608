// The receiving half of one cluster bus connection, without the socket: the bus engine feeds it
// whatever a read returned and takes whole decoded messages out. Framing follows Redis's
// reader: the 8-byte prefix first (a bad one breaks the link for good), then the declared total
// length; a whole message that fails validation is skipped and the link keeps going.
#ifndef VIREO_CLUSTER_BUS_LINK_H_
#define VIREO_CLUSTER_BUS_LINK_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "cluster/bus_message.h"

namespace vireo::cluster {

class ClusterBusLink {
 public:
  enum class Result {
    kMessage,   // *msg holds the next message
    kNeedMore,  // no whole message is buffered yet: read more
    kInvalid,   // a whole message failed validation and was dropped (*error says why); call
                // Next again. Redis logs and ignores these.
    kBroken,    // bad signature or length (*error says which): close the link. Sticky.
  };

  // max_message_bytes: a declared length above it breaks the link. 0 = no limit, as in Redis,
  // where a PUBLISH may carry up to two 512 MB bulk strings.
  explicit ClusterBusLink(size_t max_message_bytes = 0) : max_message_bytes_(max_message_bytes) {}

  // Appends bytes read from the connection. Ignored once the link is broken.
  void Feed(std::string_view bytes);

  // Takes the next whole message out of the buffer.
  Result Next(BusMessage* msg, std::string* error);

  // Bytes still missing before Next can return something other than kNeedMore: what a reader
  // can ask the socket for (Redis reads at most this much per call). 0 when a whole message is
  // buffered, the link is broken or the buffered prefix is bad (Next then says kBroken).
  size_t Wanted() const;

  size_t buffered() const { return buf_.size() - pos_; }
  bool broken() const { return broken_; }

 private:
  std::string_view Pending() const { return std::string_view(buf_).substr(pos_); }
  void Consume(size_t n);

  const size_t max_message_bytes_;
  std::string buf_;
  size_t pos_ = 0;  // start of the unconsumed bytes in buf_
  bool broken_ = false;
  std::string broken_reason_;
};

}  // namespace vireo::cluster

#endif  // VIREO_CLUSTER_BUS_LINK_H_
