// PackedStrings: a sequence of strings packed back to back in one buffer, the "listpack"
// encoding of small hashes (field, value, field, value...) and small sets.
//
// Each entry is a LEB128 length followed by the bytes, so a short string costs one byte over
// its length. Lookups are linear scans: the collections using this stay small (the
// *-max-listpack-entries limits), where a scan of one contiguous buffer beats any pointer
// structure and costs no per-entry allocation. Entries are addressed by byte offset;
// offsets stay valid until the next modification.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace vireo {

class PackedStrings {
 public:
  static constexpr size_t kNpos = static_cast<size_t>(-1);

  size_t count() const { return count_; }
  bool empty() const { return count_ == 0; }
  // Offsets run from 0 to end(); Next(end()) is undefined.
  size_t end() const { return buf_.size(); }
  std::string_view At(size_t off) const {
    size_t len;
    size_t header = DecodeLength(off, &len);
    return {buf_.data() + off + header, len};
  }
  size_t Next(size_t off) const {
    size_t len;
    size_t header = DecodeLength(off, &len);
    return off + header + len;
  }

  // The offset of the first entry equal to s among entries 0, stride, 2*stride..., or kNpos.
  size_t Find(std::string_view s, size_t stride = 1) const;
  // The offset of entry `index` (< count()).
  size_t OffsetOf(size_t index) const;

  void Append(std::string_view s);
  // Removes `entries` entries starting at offset `off`.
  void Erase(size_t off, size_t entries);
  // Replaces the entry at `off` with s.
  void Replace(size_t off, std::string_view s);
  void Reserve(size_t bytes) { buf_.reserve(bytes); }
  void ShrinkToFit() { buf_.shrink_to_fit(); }
  void Clear() {
    buf_.clear();
    count_ = 0;
  }

  // Calls fn(std::string_view) for each entry in order; fn returns false to stop.
  template <typename F>
  void ForEach(F&& fn) const {
    for (size_t off = 0; off < buf_.size();) {
      size_t len;
      size_t header = DecodeLength(off, &len);
      if (!fn(std::string_view(buf_.data() + off + header, len))) return;
      off += header + len;
    }
  }

  size_t MemoryUsage() const { return sizeof(*this) + buf_.capacity(); }
  size_t bytes() const { return buf_.size(); }

 private:
  size_t DecodeLength(size_t off, size_t* len) const {
    auto b = static_cast<uint8_t>(buf_[off]);
    if (b < 0x80) {
      *len = b;
      return 1;
    }
    size_t value = 0;
    size_t shift = 0;
    size_t i = 0;
    do {
      b = static_cast<uint8_t>(buf_[off + i]);
      value |= static_cast<size_t>(b & 0x7f) << shift;
      shift += 7;
      ++i;
    } while (b & 0x80);
    *len = value;
    return i;
  }
  static size_t EncodeLength(size_t len, char* out);

  std::string buf_;
  size_t count_ = 0;
};

}  // namespace vireo
