// IntSet: a sorted array of distinct integers, the "intset" encoding of sets whose members
// all look like integers (as Redis would store them: canonical decimal within int64).
//
// Every element uses the width of the widest one (2, 4 or 8 bytes); adding an element that
// does not fit widens the whole array once. Sorted order gives O(log n) membership and is
// the order SMEMBERS reports, as in Redis.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

namespace vireo {

class IntSet {
 public:
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  int64_t Get(size_t i) const {
    const char* p = buf_.data() + i * width_;
    switch (width_) {
      case 2: {
        int16_t v;
        memcpy(&v, p, 2);
        return v;
      }
      case 4: {
        int32_t v;
        memcpy(&v, p, 4);
        return v;
      }
      default: {
        int64_t v;
        memcpy(&v, p, 8);
        return v;
      }
    }
  }
  int64_t min() const { return Get(0); }
  int64_t max() const { return Get(size_ - 1); }
  bool Contains(int64_t v) const {
    size_t pos;
    return Search(v, &pos);
  }
  // False if already present.
  bool Add(int64_t v);
  // False if absent.
  bool Remove(int64_t v);
  // Removes the element at index i.
  void RemoveAt(size_t i);
  size_t width() const { return width_; }
  size_t MemoryUsage() const { return sizeof(*this) + buf_.capacity(); }
  void ShrinkToFit() { buf_.shrink_to_fit(); }

 private:
  static size_t WidthFor(int64_t v) {
    if (v >= INT16_MIN && v <= INT16_MAX) return 2;
    if (v >= INT32_MIN && v <= INT32_MAX) return 4;
    return 8;
  }
  void Put(size_t i, int64_t v) {
    char* p = buf_.data() + i * width_;
    if (width_ == 2) {
      auto x = static_cast<int16_t>(v);
      memcpy(p, &x, 2);
    } else if (width_ == 4) {
      auto x = static_cast<int32_t>(v);
      memcpy(p, &x, 4);
    } else {
      memcpy(p, &v, 8);
    }
  }
  // True if found (at *pos); otherwise *pos is where v would be inserted.
  bool Search(int64_t v, size_t* pos) const;
  void Widen(size_t width);

  std::string buf_;
  size_t size_ = 0;
  size_t width_ = 2;
};

}  // namespace vireo
