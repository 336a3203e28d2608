// A 24-byte string for keys: up to 23 bytes live inline, longer ones on the heap.
//
// Most keys are short, so storing them inside the table entry saves an allocation and a
// pointer chase per lookup, and keeps memory per key below Redis's.
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>

#include "util/allocator.h"

namespace vireo {

class CompactString {
 public:
  static constexpr size_t kInlineMax = 23;

  CompactString() { bytes_[kInlineMax] = 0; }
  explicit CompactString(std::string_view s) {
    bytes_[kInlineMax] = 0;
    Assign(s);
  }
  CompactString(const CompactString&) = delete;
  CompactString& operator=(const CompactString&) = delete;
  CompactString(CompactString&& other) noexcept {
    memcpy(bytes_, other.bytes_, sizeof(bytes_));
    other.bytes_[kInlineMax] = 0;
  }
  CompactString& operator=(CompactString&& other) noexcept {
    if (this != &other) {
      Release();
      memcpy(bytes_, other.bytes_, sizeof(bytes_));
      other.bytes_[kInlineMax] = 0;
    }
    return *this;
  }
  ~CompactString() { Release(); }

  // Keeps the user flag.
  void Assign(std::string_view s) {
    const uint8_t flag = meta() & kFlagBit;
    Release();
    if (s.size() <= kInlineMax) {
      if (!s.empty()) memcpy(bytes_, s.data(), s.size());
      bytes_[kInlineMax] = static_cast<char>(s.size() | flag);
    } else {
      char* data = new char[s.size()];
      memcpy(data, s.data(), s.size());
      uint64_t size = s.size();
      memcpy(bytes_, &data, sizeof(data));
      memcpy(bytes_ + 8, &size, sizeof(size));
      bytes_[kInlineMax] = static_cast<char>(kHeapTag | flag);
    }
  }

  // One bit for the owner's use (the keyspace marks keys that have a TTL with it), stored in
  // the length byte so it costs no space.
  bool flag() const { return meta() & kFlagBit; }
  void set_flag(bool on) {
    bytes_[kInlineMax] = static_cast<char>(on ? (meta() | kFlagBit) : (meta() & ~kFlagBit));
  }

  std::string_view view() const {
    if (!is_heap()) return {bytes_, static_cast<size_t>(meta() & kLengthMask)};
    return {heap_data(), heap_size()};
  }
  bool is_heap() const { return meta() & kHeapTag; }
  // Active defragmentation: the heap bytes moved if the allocator says so. True if moved.
  bool Defrag(allocator::DefragCounters& counters) {
    if (!is_heap()) return false;
    char* moved = allocator::Defrag(heap_data(), counters);
    if (moved == nullptr) return false;
    memcpy(bytes_, &moved, sizeof(moved));
    return true;
  }
  // Heap bytes owned beyond the object itself.
  size_t HeapUsage() const { return is_heap() ? heap_size() : 0; }

 private:
  static constexpr uint8_t kHeapTag = 0x80;
  static constexpr uint8_t kFlagBit = 0x40;
  static constexpr uint8_t kLengthMask = 0x3f;

  uint8_t meta() const { return static_cast<uint8_t>(bytes_[kInlineMax]); }

  char* heap_data() const {
    char* data;
    memcpy(&data, bytes_, sizeof(data));
    return data;
  }
  uint64_t heap_size() const {
    uint64_t size;
    memcpy(&size, bytes_ + 8, sizeof(size));
    return size;
  }
  void Release() {
    if (is_heap()) delete[] heap_data();
    bytes_[kInlineMax] = static_cast<char>(meta() & kFlagBit);
  }

  char bytes_[24];
};

static_assert(sizeof(CompactString) == 24);

}  // namespace vireo
