// StringTable: the "hashtable" encoding of large hashes and sets.
//
// Built on the keyspace's intrusive HashTable (incremental rehash, reverse-binary SCAN
// cursors). Each element is ONE allocation: the chain link followed by the member (or the
// field and its value), each prefixed with a LEB128 length:
//
//   [next pointer][len][field bytes]            sets
//   [next pointer][len][field bytes][len][value] hashes
//
// Redis spends a 24-byte dictEntry plus one sds allocation per string (two for a hash
// field); here a field "f123456" with value "v123456" is a single 24-byte block.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string_view>

#include "types/hash_table.h"

namespace vireo {

struct StringNode {
  StringNode* next;

  const char* payload() const { return reinterpret_cast<const char*>(this + 1); }
  char* payload() { return reinterpret_cast<char*>(this + 1); }

  // Reads the length at p; returns the header size.
  static size_t ReadLength(const char* p, size_t* len) {
    auto b = static_cast<uint8_t>(p[0]);
    if (b < 0x80) {
      *len = b;
      return 1;
    }
    size_t value = 0, shift = 0, i = 0;
    do {
      b = static_cast<uint8_t>(p[i++]);
      value |= static_cast<size_t>(b & 0x7f) << shift;
      shift += 7;
    } while (b & 0x80);
    *len = value;
    return i;
  }
  static size_t LengthSize(size_t len) {
    size_t n = 1;
    while (len >= 0x80) {
      len >>= 7;
      ++n;
    }
    return n;
  }
  static char* WriteString(char* p, std::string_view s) {
    size_t len = s.size();
    do {
      uint8_t b = len & 0x7f;
      len >>= 7;
      if (len != 0) b |= 0x80;
      *p++ = static_cast<char>(b);
    } while (len != 0);
    if (!s.empty()) memcpy(p, s.data(), s.size());
    return p + s.size();
  }

  std::string_view key() const {
    size_t len;
    size_t h = ReadLength(payload(), &len);
    return {payload() + h, len};
  }
  // Only for nodes made with a value.
  std::string_view value() const {
    std::string_view k = key();
    const char* p = k.data() + k.size();
    size_t len;
    size_t h = ReadLength(p, &len);
    return {p + h, len};
  }

  static size_t SizeFor(std::string_view key) {
    return sizeof(StringNode) + LengthSize(key.size()) + key.size();
  }
  static size_t SizeFor(std::string_view key, std::string_view value) {
    return SizeFor(key) + LengthSize(value.size()) + value.size();
  }
  static StringNode* New(std::string_view key) {
    auto* n = static_cast<StringNode*>(std::malloc(SizeFor(key)));
    if (n == nullptr) throw std::bad_alloc();
    n->next = nullptr;
    WriteString(n->payload(), key);
    return n;
  }
  static StringNode* New(std::string_view key, std::string_view value) {
    auto* n = static_cast<StringNode*>(std::malloc(SizeFor(key, value)));
    if (n == nullptr) throw std::bad_alloc();
    n->next = nullptr;
    WriteString(WriteString(n->payload(), key), value);
    return n;
  }
  static void Free(StringNode* n) { std::free(n); }
};

struct StringNodeKey {
  std::string_view operator()(const StringNode& n) const { return n.key(); }
};

// A set of strings, or a map of string to string (with_values), owning its nodes.
class StringTable {
 public:
  using Table = HashTable<StringNode, StringNodeKey>;

  explicit StringTable(bool with_values) : table_(Seed()), with_values_(with_values) {}
  ~StringTable() { Clear(); }
  StringTable(const StringTable&) = delete;
  StringTable& operator=(const StringTable&) = delete;

  size_t size() const { return table_.size(); }
  bool with_values() const { return with_values_; }

  StringNode* Find(std::string_view key) { return table_.Find(key); }
  const StringNode* Peek(std::string_view key) const { return table_.Peek(key); }

  // Set: adds key; false if present.
  bool Add(std::string_view key) {
    if (table_.Find(key) != nullptr) return false;
    AddNew(key);
    return true;
  }
  // Set without the presence check (the caller knows the key is absent).
  void AddNew(std::string_view key) {
    node_bytes_ += StringNode::SizeFor(key);
    table_.Insert(StringNode::New(key));
  }
  // Map: sets key to value; true if the key was new.
  bool Put(std::string_view key, std::string_view value);
  void PutNew(std::string_view key, std::string_view value) {
    node_bytes_ += StringNode::SizeFor(key, value);
    table_.Insert(StringNode::New(key, value));
  }
  bool Remove(std::string_view key) {
    StringNode* n = table_.Remove(key);
    if (n == nullptr) return false;
    Free(n);
    return true;
  }
  // Removes a node found by Find/RandomNode.
  void RemoveNode(StringNode* n) {
    table_.Unlink(n);
    Free(n);
  }
  StringNode* RandomNode(uint64_t rand) const { return table_.RandomNode(rand); }
  bool rehashing() const { return table_.rehashing(); }
  // DEBUG HTSTATS-KEY: bucket array `index` (0 or 1), see HashTable::Stats.
  HashTableStats Stats(int index, bool full) const { return table_.Stats(index, full); }

  template <typename F>
  void ForEach(F&& fn) const {
    table_.ForEach([&](StringNode* n) { fn(n); });
  }
  template <typename F>
  uint64_t Scan(uint64_t cursor, F&& fn) const {
    return table_.Scan(cursor, std::forward<F>(fn));
  }
  void Clear() {
    table_.Clear([](StringNode* n) { StringNode::Free(n); });
    node_bytes_ = 0;
  }

  // The bucket arrays plus the nodes' requested bytes (allocator rounding not included).
  size_t MemoryUsage() const { return sizeof(*this) + table_.MemoryUsage() + node_bytes_; }

 private:
  static uint64_t Seed();
  void Free(StringNode* n) {
    node_bytes_ -=
        with_values_ ? StringNode::SizeFor(n->key(), n->value()) : StringNode::SizeFor(n->key());
    StringNode::Free(n);
  }

  Table table_;
  size_t node_bytes_ = 0;
  bool with_values_;
};

}  // namespace vireo
