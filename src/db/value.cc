#include "db/value.h"

#include <malloc.h>

#include <cstdlib>
#include <new>

#include "util/alloc_counter.h"
#include "util/strings.h"

namespace vireo {

const char* ValueTypeName(ValueType type) {
  switch (type) {
    case ValueType::kString:
      return "string";
    case ValueType::kList:
      return "list";
    case ValueType::kSet:
      return "set";
    case ValueType::kZSet:
      return "zset";
    case ValueType::kHash:
      return "hash";
    case ValueType::kStream:
      return "stream";
  }
  return "none";
}

Value Value::String(std::string_view s) {
  int64_t n;
  // Redis int-encodes strings of up to 20 chars that round-trip exactly as a long long.
  if (s.size() <= 20 && ParseInt64(s, &n)) return Integer(n);
  return PlainString(s);
}

Value Value::PlainString(std::string_view s) {
  Value v;
  if (s.size() <= kInlineMax) {
    if (!s.empty()) memcpy(v.bytes_, s.data(), s.size());
    v.bytes_[kLenByte] = static_cast<char>(s.size());
    v.SetTag(ValueType::kString, Storage::kInline, false);
    return v;
  }
  v.StoreBlock(s, s.size() > kEmbstrMax);
  return v;
}

void Value::StoreBlock(std::string_view s, bool raw) {
  void* block = std::malloc(s.size());
  if (block == nullptr) throw std::bad_alloc();
  memcpy(block, s.data(), s.size());
  StorePointer(block);
  const uint64_t n = s.size();
  memcpy(bytes_ + kBlockLenByte, &n, sizeof(n));
  SetTag(ValueType::kString, Storage::kHeap, raw, true);
}

Value Value::RawString(std::string s) {
  Value v;
  v.StorePointer(new std::string(std::move(s)));
  v.SetTag(ValueType::kString, Storage::kHeap, true);
  return v;
}

Value Value::Integer(int64_t n) {
  Value v;
  v.StorePointer(n);
  v.SetTag(ValueType::kString, Storage::kInt, false);
  return v;
}

Value Value::Object(ValueType type, std::unique_ptr<HeapObject> object) {
  Value v;
  v.StorePointer(object.release());
  v.SetTag(type, Storage::kObject, false);
  return v;
}

std::string_view Value::StringView(char (&scratch)[24]) const {
  switch (storage()) {
    case Storage::kInline:
      return {bytes_, static_cast<size_t>(static_cast<uint8_t>(bytes_[kLenByte]))};
    case Storage::kHeap:
      if (is_block()) return {LoadPointer<const char*>(), block_len()};
      return *LoadPointer<std::string*>();
    case Storage::kInt: {
      size_t len = FormatInt64(LoadPointer<int64_t>(), scratch);
      return {scratch, len};
    }
    case Storage::kObject:
      break;
  }
  return {};
}

size_t Value::StringLength() const {
  char scratch[24];
  return StringView(scratch).size();
}

bool Value::GetInt(int64_t* out) const {
  if (storage() != Storage::kInt) return false;
  *out = LoadPointer<int64_t>();
  return true;
}

std::string* Value::MutableString() {
  if (storage() == Storage::kHeap && !is_block()) {
    SetTag(ValueType::kString, Storage::kHeap, true);
    return LoadPointer<std::string*>();
  }
  if (storage() == Storage::kHeap) {
    char* block = LoadPointer<char*>();
    auto* s = new std::string(block, block_len());
    std::free(block);
    StorePointer(s);
    SetTag(ValueType::kString, Storage::kHeap, true);
    return s;
  }
  char scratch[24];
  auto* s = new std::string(StringView(scratch));
  StorePointer(s);
  SetTag(ValueType::kString, Storage::kHeap, true);
  return s;
}

HeapObject* Value::object() const {
  return storage() == Storage::kObject ? LoadPointer<HeapObject*>() : nullptr;
}

const char* Value::EncodingName() const {
  switch (storage()) {
    case Storage::kInline:
      return "embstr";
    case Storage::kHeap:
      return (tag() & kRawFlag) ? "raw" : "embstr";
    case Storage::kInt:
      return "int";
    case Storage::kObject:
      return object()->EncodingName();
  }
  return "unknown";
}

size_t Value::MemoryUsage() const {
  switch (storage()) {
    case Storage::kHeap:
      if (is_block()) return malloc_usable_size(LoadPointer<void*>());
      return sizeof(std::string) + LoadPointer<std::string*>()->capacity();
    case Storage::kObject:
      return object()->MemoryUsage();
    default:
      return 0;
  }
}

Value Value::Clone() const {
  Value v;
  switch (storage()) {
    case Storage::kInline:
    case Storage::kInt:
      memcpy(v.bytes_, bytes_, sizeof(bytes_));
      break;
    case Storage::kHeap:
      if (is_block()) {
        char scratch[24];
        v.StoreBlock(StringView(scratch), (tag() & kRawFlag) != 0);
        break;
      }
      v.StorePointer(new std::string(*LoadPointer<std::string*>()));
      v.bytes_[kTagByte] = bytes_[kTagByte];
      break;
    case Storage::kObject:
      v.StorePointer(object()->Clone().release());
      v.bytes_[kTagByte] = bytes_[kTagByte];
      break;
  }
  return v;
}

void Value::DefragString(allocator::DefragCounters& counters) {
  if (storage() != Storage::kHeap) return;
  if (is_block()) {
    if (void* moved = allocator::Defrag(LoadPointer<void*>(), counters)) StorePointer(moved);
    return;
  }
  // An edited string is a std::string (its bytes inline or on the heap), which can't be moved
  // bytewise: when it or its bytes sit in an emptier slab it becomes a block, one allocation
  // placed past the thread cache. Room to grow is lost; the next edit makes it a std::string
  // again.
  auto* boxed = LoadPointer<std::string*>();
  const bool heap_bytes = boxed->capacity() > std::string().capacity();
  if (!allocator::ShouldMove(boxed) && !(heap_bytes && allocator::ShouldMove(boxed->data()))) {
    ++counters.misses;
    return;
  }
  void* block = AllocateUncached(boxed->size());
  if (block == nullptr) {
    ++counters.misses;
    return;
  }
  ++counters.hits;
  memcpy(block, boxed->data(), boxed->size());
  StorePointer(block);
  const uint64_t n = boxed->size();
  memcpy(bytes_ + kBlockLenByte, &n, sizeof(n));
  SetTag(ValueType::kString, Storage::kHeap, (tag() & kRawFlag) != 0, true);
  delete boxed;
}

void Value::Release() {
  switch (storage()) {
    case Storage::kHeap:
      if (is_block()) {
        std::free(LoadPointer<void*>());
      } else {
        delete LoadPointer<std::string*>();
      }
      break;
    case Storage::kObject:
      delete LoadPointer<HeapObject*>();
      break;
    default:
      break;
  }
  ResetToEmpty();
}

}  // namespace vireo
