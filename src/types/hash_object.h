// HashObject: the value of a hash key (HSET, HGET...).
//
// Two encodings, switched at Redis's thresholds so OBJECT ENCODING answers as Redis does:
//  - "listpack": a PackedStrings of field, value, field, value... in insertion order, while
//    the hash has at most hash-max-listpack-entries fields and no field or value longer than
//    hash-max-listpack-value bytes;
//  - "hashtable": a StringTable with one allocation per field.
// A hash never converts back to listpack (as in Redis).
//
// Field TTLs (HEXPIRE...) live in an optional FieldTtls side structure, allocated only for a
// hash that has at least one; the encoding (and OBJECT ENCODING) does not change with them.
// Expired fields are removed by ExpireFields, which the keyspace calls on lookup and from its
// active expiry cycle; until then they are ordinary fields here.
//
// Public read API for other families (SORT BY/GET hash fields): Find(field).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "types/field_ttl.h"
#include "types/object.h"
#include "types/packed_strings.h"
#include "types/string_table.h"

namespace vireo {

struct HashLimits {
  size_t max_listpack_entries = 128;  // hash-max-listpack-entries
  size_t max_listpack_value = 64;     // hash-max-listpack-value
};

class HashObject : public HeapObject {
 public:
  HashObject() = default;

  bool is_listpack() const { return table_ == nullptr; }
  size_t size() const { return table_ ? table_->size() : packed_.count() / 2; }
  bool empty() const { return size() == 0; }

  // The field's value, or nullopt. The view is valid until the hash is modified.
  std::optional<std::string_view> Find(std::string_view field) const;
  bool Contains(std::string_view field) const { return Find(field).has_value(); }

  // Redis's conversion check before a write of these field/value arguments: converts to a
  // hashtable when there are more than max entries pairs or any argument is too long.
  void PrepareForArgs(std::span<const std::string_view> fields_and_values,
                      const HashLimits& limits);
  // Sets field to value; true if the field is new. Converts when the field or value is too
  // long for a listpack, or when the listpack grows past max entries. An overwritten field
  // loses its TTL unless keep_ttl (HINCRBY, HSETEX KEEPTTL).
  bool Set(std::string_view field, std::string_view value, const HashLimits& limits,
           bool keep_ttl = false);
  // False if the field was absent. The field's TTL goes with it.
  bool Delete(std::string_view field);

  // ---- field TTLs (unix ms) ----
  bool has_field_ttls() const { return ttls_ != nullptr; }
  size_t field_ttl_count() const { return ttls_ ? ttls_->size() : 0; }
  // FieldTtls::kNoTtl when the field has none (or doesn't exist).
  int64_t FieldExpire(std::string_view field) const {
    return ttls_ ? ttls_->Get(field) : FieldTtls::kNoTtl;
  }
  // The field must exist.
  void SetFieldExpire(std::string_view field, int64_t when_ms);
  // False if the field had no TTL.
  bool PersistField(std::string_view field);
  // The earliest field expiry, FieldTtls::kNever when no field has a TTL.
  int64_t NextFieldExpire() const { return ttls_ ? ttls_->Earliest() : FieldTtls::kNever; }
  // Deletes up to `max` fields whose TTL is at or before now_ms; fn(field) for each.
  template <typename F>
  size_t ExpireFields(int64_t now_ms, size_t max, F&& fn) {
    if (!ttls_) return 0;
    size_t n = ttls_->PopExpired(now_ms, max, [&](std::string_view field) {
      fn(field);
      Delete(field);
    });
    if (ttls_->empty()) ttls_.reset();
    return n;
  }
  // fn(field, when_ms) for each field with a TTL, earliest first.
  template <typename F>
  void ForEachFieldTtl(F&& fn) const {
    if (ttls_) ttls_->ForEach(fn);
  }

  // fn(field, value) for every field; fn returns nothing.
  template <typename F>
  void ForEach(F&& fn) const {
    if (table_) {
      table_->ForEach([&](const StringNode* n) { fn(n->key(), n->value()); });
      return;
    }
    for (size_t off = 0; off < packed_.end();) {
      std::string_view f = packed_.At(off);
      off = packed_.Next(off);
      std::string_view v = packed_.At(off);
      off = packed_.Next(off);
      fn(f, v);
    }
  }
  // The i-th field and value of the listpack encoding (i < size()).
  std::pair<std::string_view, std::string_view> PackedAt(size_t i) const;
  // A random field and value (a hashtable one is close to uniform). Non-empty hash only.
  std::pair<std::string_view, std::string_view> Random(uint64_t rand) const;

  // HSCAN over the hashtable encoding: fn(field, value) per element of the visited buckets.
  // Listpacks are returned whole with cursor 0 by the caller.
  template <typename F>
  uint64_t ScanTable(uint64_t cursor, F&& fn) const {
    return table_->Scan(cursor, [&](const StringNode* n) { fn(n->key(), n->value()); });
  }
  const StringTable* table() const { return table_.get(); }

  void ConvertToTable();

  size_t MemoryUsage() const override;
  std::unique_ptr<HeapObject> Clone() const override;
  const char* EncodingName() const override { return table_ ? "hashtable" : "listpack"; }
  size_t FreeEffort() const override { return table_ ? size() : 1; }

 private:
  PackedStrings packed_;
  std::unique_ptr<StringTable> table_;
  std::unique_ptr<FieldTtls> ttls_;
};

}  // namespace vireo
