#include "types/field_ttl.h"

namespace vireo {

int64_t FieldTtls::Get(std::string_view field) const {
  auto it = by_field_.find(field);
  return it == by_field_.end() ? kNoTtl : it->second;
}

void FieldTtls::Set(std::string_view field, int64_t when_ms) {
  auto it = by_field_.find(field);
  if (it != by_field_.end()) {
    if (it->second == when_ms) return;
    // Re-key the tree node in place (extract keeps the string where the index's view points).
    auto node = by_time_.extract({it->second, std::string(field)});
    node.value().first = when_ms;
    it->second = when_ms;
    by_time_.insert(std::move(node));
    return;
  }
  auto [pos, inserted] = by_time_.emplace(when_ms, std::string(field));
  by_field_.emplace(std::string_view(pos->second), when_ms);
}

bool FieldTtls::Remove(std::string_view field) {
  auto it = by_field_.find(field);
  if (it == by_field_.end()) return false;
  int64_t when = it->second;
  by_field_.erase(it);
  by_time_.erase({when, std::string(field)});
  return true;
}

size_t FieldTtls::MemoryUsage() const {
  // Tree node: three pointers and a colour word, then the pair. Index node: next pointer,
  // the key/value pair and the cached hash; plus the bucket array.
  constexpr size_t kTreeNode = 4 * sizeof(void*) + sizeof(std::pair<int64_t, std::string>);
  constexpr size_t kIndexNode =
      sizeof(void*) + sizeof(std::pair<const std::string_view, int64_t>) + sizeof(size_t);
  size_t bytes = sizeof(*this) + by_field_.bucket_count() * sizeof(void*) +
                 by_time_.size() * (kTreeNode + kIndexNode);
  for (const auto& [when, field] : by_time_) {
    if (field.size() > 15) bytes += field.capacity() + 1;
  }
  return bytes;
}

}  // namespace vireo
