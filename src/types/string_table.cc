#include "types/string_table.h"

#include <random>

namespace vireo {

uint64_t StringTable::Seed() {
  // One random seed per process: element hashes can't be predicted by clients (hash
  // flooding), and every table agrees, which costs nothing.
  static const uint64_t seed = [] {
    std::random_device rd;
    return (static_cast<uint64_t>(rd()) << 32) ^ rd();
  }();
  return seed;
}

bool StringTable::Put(std::string_view key, std::string_view value) {
  StringNode* n = table_.Find(key);
  if (n == nullptr) {
    PutNew(key, value);
    return true;
  }
  std::string_view old = n->value();
  if (old.size() == value.size()) {
    // Same length: overwrite in place (HINCRBY's common case), the node keeps its place.
    if (!value.empty()) memcpy(const_cast<char*>(old.data()), value.data(), value.size());
    return false;
  }
  table_.Unlink(n);
  Free(n);
  PutNew(key, value);
  return false;
}

}  // namespace vireo
