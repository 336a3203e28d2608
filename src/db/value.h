// The value a key holds: a string (inline, heap or integer-encoded) or a typed object.
//
// 24 bytes, so a keyspace entry (next pointer, key, value) fits a 64-byte allocation. Three of
// them hold the key's access clock (src/db/access_clock.h): bytes 19..21 are never string data
// (inline strings stop at 19 bytes) nor pointer/integer bits (those use bytes 0..7).
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>

#include "types/object.h"

namespace vireo {

enum class ValueType : uint8_t { kString = 0, kList, kSet, kZSet, kHash, kStream };

// The name TYPE replies with.
const char* ValueTypeName(ValueType type);

class Value {
 public:
  static constexpr size_t kInlineMax = 19;
  // Redis answers "embstr" for strings up to this many bytes created in one piece.
  static constexpr size_t kEmbstrMax = 44;

  Value() {
    SetTag(ValueType::kString, Storage::kInline, false);
    bytes_[kLenByte] = 0;
  }
  Value(const Value&) = delete;
  Value& operator=(const Value&) = delete;
  Value(Value&& other) noexcept {
    memcpy(bytes_, other.bytes_, sizeof(bytes_));
    other.ResetToEmpty();
  }
  // The access clock stays: it describes the key slot, not the content (overwriting a key
  // keeps its LFU history, as in Redis; an LRU write touches the clock anyway).
  Value& operator=(Value&& other) noexcept {
    if (this != &other) {
      Release();
      const uint32_t clock = access_clock();
      memcpy(bytes_, other.bytes_, sizeof(bytes_));
      set_access_clock(clock);
      other.ResetToEmpty();
    }
    return *this;
  }
  ~Value() { Release(); }

  // A string value. Integer-looking strings (as Redis would encode them) are stored as int64.
  static Value String(std::string_view s);
  // A string kept as given, never int-encoded ("embstr" up to kEmbstrMax bytes, else "raw"), as
  // Redis stores computed strings such as INCRBYFLOAT results.
  static Value PlainString(std::string_view s);
  // A string that Redis would report as "raw" (built by APPEND, SETRANGE...). Never int-encoded.
  static Value RawString(std::string s);
  static Value Integer(int64_t v);
  static Value Object(ValueType type, std::unique_ptr<HeapObject> object);

  ValueType type() const { return static_cast<ValueType>(tag() & 0x0f); }
  bool is_string() const { return type() == ValueType::kString; }
  bool is_int() const { return storage() == Storage::kInt; }

  // The string's bytes. Integer-encoded strings are formatted into `scratch`.
  std::string_view StringView(char (&scratch)[24]) const;
  size_t StringLength() const;
  // True and *out set when the string is integer-encoded.
  bool GetInt(int64_t* out) const;
  // A mutable string for in-place edits (APPEND, SETRANGE); converts to a raw heap string.
  std::string* MutableString();

  HeapObject* object() const;
  template <typename T>
  T* As() const {
    return static_cast<T*>(object());
  }

  // 24 bits of per-key access data (LRU clock or LFU counter, src/db/access_clock.h).
  uint32_t access_clock() const {
    return static_cast<uint32_t>(static_cast<uint8_t>(bytes_[kClockByte])) |
           static_cast<uint32_t>(static_cast<uint8_t>(bytes_[kClockByte + 1])) << 8 |
           static_cast<uint32_t>(static_cast<uint8_t>(bytes_[kClockByte + 2])) << 16;
  }
  void set_access_clock(uint32_t clock) {
    bytes_[kClockByte] = static_cast<char>(clock & 0xff);
    bytes_[kClockByte + 1] = static_cast<char>((clock >> 8) & 0xff);
    bytes_[kClockByte + 2] = static_cast<char>((clock >> 16) & 0xff);
  }

  // Active defragmentation of a string's heap bytes (a block moved; an edited "raw" string
  // rebuilt as a block in a fuller slab, content and encoding unchanged). Objects defragment
  // themselves (HeapObject::Defrag).
  void DefragString(allocator::DefragCounters& counters);

  // "int", "embstr", "raw" or the object's encoding name.
  const char* EncodingName() const;
  size_t MemoryUsage() const;
  Value Clone() const;

 private:
  enum class Storage : uint8_t { kInline = 0, kHeap = 1, kInt = 2, kObject = 3 };
  static constexpr size_t kClockByte = 19;  // 3 bytes
  static constexpr size_t kLenByte = 22;
  static constexpr size_t kTagByte = 23;
  static constexpr uint8_t kRawFlag = 0x40;
  // kHeap strings come in two layouts. Block (this flag): one malloc'd block holding only the
  // bytes, its length in bytes 8..15 of the value; what SET and loading create, one allocation
  // per value. Boxed (no flag): a std::string, for strings edited in place (APPEND, SETRANGE),
  // which need room to grow.
  static constexpr uint8_t kBlockFlag = 0x80;
  static constexpr size_t kBlockLenByte = 8;

  uint8_t tag() const { return static_cast<uint8_t>(bytes_[kTagByte]); }
  Storage storage() const { return static_cast<Storage>((tag() >> 4) & 0x3); }
  void SetTag(ValueType type, Storage storage, bool raw, bool block = false) {
    bytes_[kTagByte] =
        static_cast<char>(static_cast<uint8_t>(type) | (static_cast<uint8_t>(storage) << 4) |
                          (raw ? kRawFlag : 0) | (block ? kBlockFlag : 0));
  }
  bool is_block() const { return (tag() & kBlockFlag) != 0; }
  uint64_t block_len() const {
    uint64_t n;
    memcpy(&n, bytes_ + kBlockLenByte, sizeof(n));
    return n;
  }
  void StoreBlock(std::string_view s, bool raw);
  template <typename T>
  T LoadPointer() const {
    T p;
    memcpy(&p, bytes_, sizeof(p));
    return p;
  }
  template <typename T>
  void StorePointer(T p) {
    memcpy(bytes_, &p, sizeof(p));
  }
  void Release();
  void ResetToEmpty() {
    SetTag(ValueType::kString, Storage::kInline, false);
    bytes_[kLenByte] = 0;
  }

  char bytes_[24];
};

static_assert(sizeof(Value) == 24);

}  // namespace vireo
