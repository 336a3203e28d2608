#include "types/packed_strings.h"

#include <cstring>

namespace vireo {

size_t PackedStrings::EncodeLength(size_t len, char* out) {
  size_t i = 0;
  do {
    uint8_t b = len & 0x7f;
    len >>= 7;
    if (len != 0) b |= 0x80;
    out[i++] = static_cast<char>(b);
  } while (len != 0);
  return i;
}

size_t PackedStrings::Find(std::string_view s, size_t stride) const {
  size_t index = 0;
  for (size_t off = 0; off < buf_.size(); ++index) {
    size_t len;
    size_t header = DecodeLength(off, &len);
    if (index % stride == 0 && len == s.size() &&
        (len == 0 || memcmp(buf_.data() + off + header, s.data(), len) == 0)) {
      return off;
    }
    off += header + len;
  }
  return kNpos;
}

size_t PackedStrings::OffsetOf(size_t index) const {
  size_t off = 0;
  while (index-- > 0) off = Next(off);
  return off;
}

void PackedStrings::Append(std::string_view s) {
  char header[10];
  size_t n = EncodeLength(s.size(), header);
  buf_.append(header, n);
  buf_.append(s);
  ++count_;
}

void PackedStrings::Erase(size_t off, size_t entries) {
  size_t stop = off;
  for (size_t i = 0; i < entries; ++i) stop = Next(stop);
  buf_.erase(off, stop - off);
  count_ -= entries;
}

void PackedStrings::Replace(size_t off, std::string_view s) {
  char header[10];
  size_t n = EncodeLength(s.size(), header);
  size_t old_end = Next(off);
  std::string entry(header, n);
  entry.append(s);
  buf_.replace(off, old_end - off, entry);
}

}  // namespace vireo
