// The replication buffer: one copy of the recent replication stream, shared by the backlog and
// every replica's output (Redis 7's design), so N replicas don't cost N copies of what they
// have not read yet.
//
// The stream is kept as a list of blocks, oldest first. Each reader (a replica, by client id)
// holds the offset of the next byte it will send; the backlog holds the newest
// `capacity` bytes at least. A block goes once nobody needs it: no reader has it ahead, and
// without it the backlog still holds `capacity` bytes. So a slow replica makes the backlog
// grow past its size (the extra is useful: a replica that reconnects can continue from it),
// and the backlog shrinks back once that replica reads on or goes.
//
// Offsets are Redis's: end_offset() is the stream's total length so far (master_repl_offset);
// the blocks hold bytes first_offset() .. end_offset(), numbered from 1.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <string_view>

namespace vireo {

class ReplicationBuffer {
 public:
  // Turns the backlog on (`capacity` bytes kept for partial resyncs), continuing from the
  // current end offset.
  void Create(size_t capacity);
  // Turns the backlog off; the offset is kept (a later Create continues from it) and readers
  // keep what they haven't read.
  void Free();
  bool created() const { return backlog_on_; }
  // Changes the backlog's size (repl-backlog-size at run time); a smaller one trims.
  void Resize(size_t capacity);
  // Drops every byte and makes `end_offset` the offset of the last byte written; readers
  // continue from the byte after it.
  void Reset(int64_t end_offset);

  // Moves every offset (bytes, readers) `delta` on: a master that restarted from an RDB taken
  // at offset `delta` continues that stream with what it wrote while loading.
  void Rebase(int64_t delta);

  // Appends stream bytes; the offset advances even with nobody to keep them for.
  void Append(std::string_view bytes);

  int64_t end_offset() const { return end_offset_; }
  // The first byte held (Redis's repl_backlog_first_byte_offset): end_offset + 1 when empty.
  int64_t first_offset() const { return blocks_.empty() ? end_offset_ + 1 : blocks_.front().first; }
  // Bytes held (Redis's repl_backlog_histlen).
  size_t histlen() const { return static_cast<size_t>(end_offset_ + 1 - first_offset()); }
  size_t capacity() const { return capacity_; }
  // Memory the blocks take (INFO's mem_total_replication_buffers).
  size_t memory() const { return memory_; }
  size_t block_count() const { return blocks_.size(); }
  // Whether a replica asking for the stream from byte `from` can continue from here.
  bool CanContinueFrom(int64_t from) const {
    return backlog_on_ && from >= first_offset() && from <= end_offset_ + 1;
  }

  // ---- readers ----
  // `id` reads from byte `from` on (requires first_offset() <= from <= end_offset() + 1).
  void AddReader(uint64_t id, int64_t from);
  void RemoveReader(uint64_t id);
  bool HasReader(uint64_t id) const { return readers_.count(id) != 0; }
  // Bytes `id` has not read yet (0 for an unknown reader).
  size_t Unread(uint64_t id) const;
  // Bytes of the blocks `id` keeps alive, from the one holding its next byte to the end
  // (what client-output-buffer-limit counts for a replica, as Redis does).
  size_t Held(uint64_t id) const;
  // Appends up to `max` unread bytes of `id` to `out` and moves it past them; returns how many.
  size_t Read(uint64_t id, size_t max, std::string* out);

 private:
  struct Block {
    int64_t first = 0;  // offset of data[0]
    std::string data;   // reserved to the block's size up front, filled as the stream grows
    int64_t last() const { return first + static_cast<int64_t>(data.size()) - 1; }
  };
  // Index of the block holding offset `offset` (first_offset() <= offset <= end_offset()).
  size_t BlockOf(int64_t offset) const;
  // Drops the oldest blocks nobody needs any more.
  void Trim();
  size_t BlockSize(size_t wanted) const;
  static size_t BlockMemory(const Block& b);

  std::deque<Block> blocks_;
  std::map<uint64_t, int64_t> readers_;  // id -> offset of its next byte
  bool backlog_on_ = false;
  size_t capacity_ = 0;
  size_t memory_ = 0;
  int64_t end_offset_ = 0;
};

}  // namespace vireo
