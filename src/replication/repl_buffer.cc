#include "replication/repl_buffer.h"

#include <malloc.h>

#include <algorithm>

namespace vireo {

namespace {

// A block is at least this big, so small writes share one, and at most a 16th of the backlog,
// so a replica holding on to its last bytes of a block doesn't keep a huge one alive.
constexpr size_t kMinBlock = 16 * 1024;

}  // namespace

// What the block really takes from the allocator (a 16 KB block is a 20 KB size class in
// jemalloc): used_memory counts that, and the part of it maxmemory leaves out must match.
size_t ReplicationBuffer::BlockMemory(const Block& b) {
  return malloc_usable_size(const_cast<char*>(b.data.data())) + sizeof(Block);
}

size_t ReplicationBuffer::BlockSize(size_t wanted) const {
  const size_t limit = std::max(capacity_ / 16, kMinBlock);
  return std::min(std::max(wanted, kMinBlock), limit);
}

void ReplicationBuffer::Create(size_t capacity) {
  backlog_on_ = true;
  capacity_ = std::max<size_t>(capacity, 1);
}

void ReplicationBuffer::Free() {
  backlog_on_ = false;
  capacity_ = 0;
  Trim();
}

void ReplicationBuffer::Resize(size_t capacity) {
  if (!backlog_on_) return;
  capacity_ = std::max<size_t>(capacity, 1);
  Trim();
}

void ReplicationBuffer::Reset(int64_t end_offset) {
  blocks_.clear();
  memory_ = 0;
  end_offset_ = end_offset;
  for (auto& [id, next] : readers_) next = end_offset + 1;
}

void ReplicationBuffer::Rebase(int64_t delta) {
  end_offset_ += delta;
  for (Block& b : blocks_) b.first += delta;
  for (auto& [id, next] : readers_) next += delta;
}

void ReplicationBuffer::Append(std::string_view bytes) {
  if (!backlog_on_ && readers_.empty()) {
    end_offset_ += static_cast<int64_t>(bytes.size());
    return;
  }
  bool added = false;
  while (!bytes.empty()) {
    if (blocks_.empty() || blocks_.back().data.size() == blocks_.back().data.capacity()) {
      Block block;
      block.first = end_offset_ + 1;
      block.data.reserve(BlockSize(bytes.size()));
      memory_ += BlockMemory(block);
      blocks_.push_back(std::move(block));
      added = true;
    }
    std::string& tail = blocks_.back().data;
    const size_t n = std::min(bytes.size(), tail.capacity() - tail.size());
    tail.append(bytes.data(), n);
    bytes.remove_prefix(n);
    end_offset_ += static_cast<int64_t>(n);
  }
  // Only a new block can make an old one unnecessary (as in Redis, which trims on new blocks).
  if (added) Trim();
}

void ReplicationBuffer::Trim() {
  while (!blocks_.empty()) {
    const Block& front = blocks_.front();
    // Never the last block with a backlog: it is where the stream continues.
    if (backlog_on_ && blocks_.size() == 1) break;
    bool needed = false;
    for (const auto& [id, next] : readers_) {
      if (next <= front.last()) {
        needed = true;
        break;
      }
    }
    if (needed) break;
    if (backlog_on_ && histlen() - front.data.size() <= capacity_) break;
    memory_ -= BlockMemory(front);
    blocks_.pop_front();
  }
}

size_t ReplicationBuffer::BlockOf(int64_t offset) const {
  auto it = std::upper_bound(blocks_.begin(), blocks_.end(), offset,
                             [](int64_t o, const Block& b) { return o < b.first; });
  return static_cast<size_t>(it - blocks_.begin()) - 1;
}

void ReplicationBuffer::AddReader(uint64_t id, int64_t from) {
  readers_[id] = std::clamp(from, first_offset(), end_offset_ + 1);
}

void ReplicationBuffer::RemoveReader(uint64_t id) {
  if (readers_.erase(id) != 0) Trim();
}

size_t ReplicationBuffer::Unread(uint64_t id) const {
  auto it = readers_.find(id);
  return it == readers_.end() ? 0 : static_cast<size_t>(end_offset_ + 1 - it->second);
}

size_t ReplicationBuffer::Held(uint64_t id) const {
  auto it = readers_.find(id);
  if (it == readers_.end() || it->second > end_offset_) return 0;
  return static_cast<size_t>(end_offset_ + 1 - blocks_[BlockOf(it->second)].first);
}

size_t ReplicationBuffer::Read(uint64_t id, size_t max, std::string* out) {
  auto it = readers_.find(id);
  if (it == readers_.end()) return 0;
  int64_t& next = it->second;
  size_t done = 0;
  const bool was_first = !blocks_.empty() && next <= blocks_.front().last();
  while (done < max && next <= end_offset_) {
    const Block& b = blocks_[BlockOf(next)];
    const size_t at = static_cast<size_t>(next - b.first);
    const size_t n = std::min(max - done, b.data.size() - at);
    out->append(b.data, at, n);
    next += static_cast<int64_t>(n);
    done += n;
  }
  // It may have been what kept the oldest block.
  if (was_first && next > blocks_.front().last()) Trim();
  return done;
}

}  // namespace vireo
