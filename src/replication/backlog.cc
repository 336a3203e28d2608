#include "replication/backlog.h"

#include <algorithm>
#include <cstring>

namespace vireo {

void ReplicationBacklog::Create(size_t capacity) {
  capacity_ = std::max<size_t>(capacity, 1);
  ring_ = std::make_unique<char[]>(capacity_);
  histlen_ = 0;
  write_pos_ = 0;
}

void ReplicationBacklog::Free() {
  ring_.reset();
  capacity_ = histlen_ = write_pos_ = 0;
}

void ReplicationBacklog::Resize(size_t capacity) {
  if (!created() || capacity == capacity_) return;
  std::string keep;
  int64_t from = end_offset_ - static_cast<int64_t>(std::min(histlen_, capacity)) + 1;
  CopyFrom(from, &keep);
  Create(capacity);
  const int64_t end = end_offset_;
  end_offset_ -= static_cast<int64_t>(keep.size());
  Append(keep);
  end_offset_ = end;
}

void ReplicationBacklog::Reset(int64_t end_offset) {
  end_offset_ = end_offset;
  histlen_ = 0;
  write_pos_ = 0;
}

void ReplicationBacklog::Append(std::string_view bytes) {
  end_offset_ += static_cast<int64_t>(bytes.size());
  if (!created()) return;
  // Only the newest capacity_ bytes can survive.
  if (bytes.size() > capacity_) bytes.remove_prefix(bytes.size() - capacity_);
  while (!bytes.empty()) {
    size_t n = std::min(bytes.size(), capacity_ - write_pos_);
    std::memcpy(ring_.get() + write_pos_, bytes.data(), n);
    write_pos_ = (write_pos_ + n) % capacity_;
    bytes.remove_prefix(n);
    histlen_ = std::min(capacity_, histlen_ + n);
  }
}

void ReplicationBacklog::CopyFrom(int64_t from, std::string* out) const {
  if (!created() || from > end_offset_) return;
  size_t len = static_cast<size_t>(end_offset_ - from + 1);
  if (len > histlen_) len = histlen_;
  // The last byte is at write_pos_ - 1; the first wanted one is len bytes back.
  size_t start = (write_pos_ + capacity_ - len) % capacity_;
  size_t first = std::min(len, capacity_ - start);
  out->append(ring_.get() + start, first);
  out->append(ring_.get(), len - first);
}

}  // namespace vireo
