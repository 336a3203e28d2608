#include "types/intset.h"

namespace vireo {

bool IntSet::Search(int64_t v, size_t* pos) const {
  size_t lo = 0;
  size_t hi = size_;
  // Values outside [min, max] are answered without a search; appends at either end are the
  // common case for ascending inserts.
  if (size_ > 0) {
    if (v > max()) {
      *pos = size_;
      return false;
    }
    if (v < min()) {
      *pos = 0;
      return false;
    }
  }
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    int64_t x = Get(mid);
    if (x == v) {
      *pos = mid;
      return true;
    }
    if (x < v) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  *pos = lo;
  return false;
}

void IntSet::Widen(size_t width) {
  std::string wider(size_ * width, '\0');
  size_t old_width = width_;
  std::string old = std::move(buf_);
  buf_ = std::move(wider);
  for (size_t i = 0; i < size_; ++i) {
    width_ = old_width;
    int64_t v;
    {
      // Read from the old buffer with the old width.
      const char* p = old.data() + i * old_width;
      if (old_width == 2) {
        int16_t x;
        memcpy(&x, p, 2);
        v = x;
      } else {
        int32_t x;
        memcpy(&x, p, 4);
        v = x;
      }
    }
    width_ = width;
    Put(i, v);
  }
  width_ = width;
}

bool IntSet::Add(int64_t v) {
  size_t need = WidthFor(v);
  if (need > width_) {
    // A value that needs a wider encoding is beyond every current element, so it goes at one
    // end.
    Widen(need);
    buf_.resize((size_ + 1) * width_);
    if (v < 0) {
      memmove(buf_.data() + width_, buf_.data(), size_ * width_);
      Put(0, v);
    } else {
      Put(size_, v);
    }
    ++size_;
    return true;
  }
  size_t pos;
  if (Search(v, &pos)) return false;
  buf_.resize((size_ + 1) * width_);
  memmove(buf_.data() + (pos + 1) * width_, buf_.data() + pos * width_, (size_ - pos) * width_);
  Put(pos, v);
  ++size_;
  return true;
}

bool IntSet::Remove(int64_t v) {
  if (WidthFor(v) > width_) return false;
  size_t pos;
  if (!Search(v, &pos)) return false;
  RemoveAt(pos);
  return true;
}

void IntSet::RemoveAt(size_t i) {
  memmove(buf_.data() + i * width_, buf_.data() + (i + 1) * width_, (size_ - i - 1) * width_);
  --size_;
  buf_.resize(size_ * width_);
}

}  // namespace vireo
