// FieldTtls: the expiry times of a hash's fields (HEXPIRE, HSETEX...).
//
// A side structure a HashObject allocates only once one of its fields gets a TTL, so hashes
// without field TTLs pay one null pointer. It holds only the fields that have a TTL, ordered by
// expiry time so the earliest is found in O(1) and the expired ones are removed in order
// (lazy and active expiry touch only what has expired), with an index by field name for
// HTTL/HPERSIST and for dropping a TTL when its field is overwritten or deleted.
//
// Memory per field with a TTL: one tree node (expiry + the field's name, inline up to 15
// bytes) and one index node (a view of that name + the expiry), about 120 bytes on 64-bit.
#pragma once

#include <cstdint>
#include <limits>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

namespace vireo {

class FieldTtls {
 public:
  static constexpr int64_t kNoTtl = -1;
  static constexpr int64_t kNever = std::numeric_limits<int64_t>::max();

  FieldTtls() = default;
  FieldTtls(const FieldTtls& other) { CopyFrom(other); }
  FieldTtls& operator=(const FieldTtls& other) {
    if (this != &other) {
      by_field_.clear();
      by_time_.clear();
      CopyFrom(other);
    }
    return *this;
  }

  size_t size() const { return by_field_.size(); }
  bool empty() const { return by_field_.empty(); }

  // The field's expiry in unix ms, or kNoTtl.
  int64_t Get(std::string_view field) const;
  // Sets or moves the field's expiry.
  void Set(std::string_view field, int64_t when_ms);
  // False if the field had no TTL.
  bool Remove(std::string_view field);
  // The earliest expiry, or kNever when empty.
  int64_t Earliest() const { return by_time_.empty() ? kNever : by_time_.begin()->first; }

  // Removes up to `max` fields whose expiry is at or before now_ms, earliest first, calling
  // fn(field) for each after it left the index. Returns how many were removed.
  template <typename F>
  size_t PopExpired(int64_t now_ms, size_t max, F&& fn) {
    size_t n = 0;
    while (n < max && !by_time_.empty() && by_time_.begin()->first <= now_ms) {
      auto node = by_time_.extract(by_time_.begin());
      by_field_.erase(node.value().second);
      fn(std::string_view(node.value().second));
      ++n;
    }
    return n;
  }

  // fn(field, when_ms) in expiry order.
  template <typename F>
  void ForEach(F&& fn) const {
    for (const auto& [when, field] : by_time_) fn(std::string_view(field), when);
  }

  size_t MemoryUsage() const;

 private:
  void CopyFrom(const FieldTtls& other) {
    for (const auto& [when, field] : other.by_time_) Set(field, when);
  }

  // Ordered by (expiry, field); the index's views point at the strings in these nodes, which
  // never move while the node lives.
  std::set<std::pair<int64_t, std::string>> by_time_;
  std::unordered_map<std::string_view, int64_t> by_field_;
};

}  // namespace vireo
