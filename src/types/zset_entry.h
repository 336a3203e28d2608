// ZEntry: one member of a large sorted set, held in a single allocation that both the ordered
// index (ScoreTree) and the member lookup (MemberIndex) point at.
//
// Layout: [double score][length prefix][member bytes]. The length prefix is one byte for
// members shorter than 255 bytes, else 0xff followed by a 4-byte length. A 13-byte member so
// costs 22 bytes, one 32-byte malloc chunk: sharing the allocation between both indexes is
// what keeps a member's total cost near half of Redis's skiplist node + dict entry + sds.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string_view>

namespace vireo {

class ZEntry {
 public:
  static ZEntry* Create(std::string_view member, double score) {
    size_t prefix = member.size() < 255 ? 1 : 5;
    auto* raw = static_cast<uint8_t*>(malloc(sizeof(double) + prefix + member.size()));
    memcpy(raw, &score, sizeof(double));
    uint8_t* p = raw + sizeof(double);
    if (prefix == 1) {
      *p++ = static_cast<uint8_t>(member.size());
    } else {
      *p++ = 0xff;
      auto len = static_cast<uint32_t>(member.size());
      memcpy(p, &len, 4);
      p += 4;
    }
    if (!member.empty()) memcpy(p, member.data(), member.size());
    return reinterpret_cast<ZEntry*>(raw);
  }
  static void Destroy(ZEntry* e) { free(e); }

  double score() const {
    double s;
    memcpy(&s, bytes(), sizeof(double));
    return s;
  }
  void set_score(double s) { memcpy(bytes(), &s, sizeof(double)); }

  std::string_view member() const {
    const uint8_t* p = bytes() + sizeof(double);
    if (*p != 0xff) return {reinterpret_cast<const char*>(p + 1), *p};
    uint32_t len;
    memcpy(&len, p + 1, 4);
    return {reinterpret_cast<const char*>(p + 5), len};
  }

 private:
  ZEntry() = delete;
  uint8_t* bytes() { return reinterpret_cast<uint8_t*>(this); }
  const uint8_t* bytes() const { return reinterpret_cast<const uint8_t*>(this); }
};

// The sorted-set order: by score, then by member bytes (unsigned, shorter first on a common
// prefix), as Redis orders its skiplist.
inline int CompareScoreMember(double a_score, std::string_view a_member, double b_score,
                              std::string_view b_member) {
  if (a_score < b_score) return -1;
  if (a_score > b_score) return 1;
  int c = a_member.compare(b_member);
  return c < 0 ? -1 : (c > 0 ? 1 : 0);
}

}  // namespace vireo
