// The replication backlog: the newest repl-backlog-size bytes of the replication stream in a
// ring, so a replica that lost its link can continue (PSYNC +CONTINUE) from the byte after
// the last one it processed, as long as that byte is still here.
//
// Offsets are Redis's: end_offset() is the stream's total length so far (master_repl_offset);
// the ring holds bytes first_offset() .. end_offset(), numbered from 1.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace vireo {

class ReplicationBacklog {
 public:
  // Allocates the ring (`capacity` bytes), empty, continuing from the current end offset.
  void Create(size_t capacity);
  // Drops the ring; the offset is kept (a later Create continues from it).
  void Free();
  bool created() const { return ring_ != nullptr; }
  // Changes the capacity, keeping the newest bytes that fit.
  void Resize(size_t capacity);
  // Empties the ring and makes `end_offset` the offset of the last byte written.
  void Reset(int64_t end_offset);

  // Appends stream bytes; the offset advances even without a ring.
  void Append(std::string_view bytes);

  int64_t end_offset() const { return end_offset_; }
  // The first byte held (Redis's repl_backlog_first_byte_offset): end_offset + 1 when empty.
  int64_t first_offset() const { return end_offset_ - static_cast<int64_t>(histlen_) + 1; }
  size_t histlen() const { return histlen_; }
  size_t capacity() const { return capacity_; }
  // Whether a replica asking for the stream from byte `from` can continue from here.
  bool CanContinueFrom(int64_t from) const {
    return created() && from >= first_offset() && from <= end_offset_ + 1;
  }
  // Appends bytes from offset `from` to the end to `out` (requires CanContinueFrom(from)).
  void CopyFrom(int64_t from, std::string* out) const;

 private:
  std::unique_ptr<char[]> ring_;
  size_t capacity_ = 0;
  size_t histlen_ = 0;
  size_t write_pos_ = 0;  // where the next byte goes
  int64_t end_offset_ = 0;
};

}  // namespace vireo
