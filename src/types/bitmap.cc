#include "types/bitmap.h"

#include <algorithm>
#include <cstring>

namespace vireo::bitmap {
namespace {

uint64_t LoadWord(const char* p) {
  uint64_t w;
  memcpy(&w, p, sizeof(w));
  return w;
}

void StoreWord(char* p, uint64_t w) { memcpy(p, &w, sizeof(w)); }

// Big-endian load, so the string's first bit is the word's most significant one.
uint64_t LoadBigEndian(const char* p) { return __builtin_bswap64(LoadWord(p)); }

// The popcount instruction is several times faster than the portable fallback, but the build
// targets baseline x86-64; pick the instruction at run time where the CPU has it.
#if defined(__x86_64__)
__attribute__((target("popcnt"))) uint64_t PopcountWordsHw(const char* p, size_t words) {
  uint64_t a = 0, b = 0, c = 0, d = 0;
  size_t i = 0;
  for (; i + 4 <= words; i += 4) {
    a += __builtin_popcountll(LoadWord(p + i * 8));
    b += __builtin_popcountll(LoadWord(p + i * 8 + 8));
    c += __builtin_popcountll(LoadWord(p + i * 8 + 16));
    d += __builtin_popcountll(LoadWord(p + i * 8 + 24));
  }
  for (; i < words; ++i) a += __builtin_popcountll(LoadWord(p + i * 8));
  return a + b + c + d;
}
#endif

// Bit-slicing popcount for CPUs without the instruction: sums per-byte counts of a word.
uint64_t PopcountWordsSoft(const char* p, size_t words) {
  uint64_t total = 0;
  for (size_t i = 0; i < words; ++i) {
    uint64_t x = LoadWord(p + i * 8);
    x = x - ((x >> 1) & 0x5555555555555555ULL);
    x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
    x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0fULL;
    total += (x * 0x0101010101010101ULL) >> 56;
  }
  return total;
}

uint64_t PopcountWords(const char* p, size_t words) {
#if defined(__x86_64__)
  if (__builtin_cpu_supports("popcnt")) return PopcountWordsHw(p, words);
#endif
  return PopcountWordsSoft(p, words);
}

unsigned ByteCount(uint8_t b) { return static_cast<unsigned>(__builtin_popcount(b)); }

// out[i] = f(out[i], src[i]) for i < n, eight bytes at a time.
template <typename F>
void Fold(char* out, const char* src, size_t n, F f) {
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    // Four independent words per step keep the loads in flight.
    StoreWord(out + i, f(LoadWord(out + i), LoadWord(src + i)));
    StoreWord(out + i + 8, f(LoadWord(out + i + 8), LoadWord(src + i + 8)));
    StoreWord(out + i + 16, f(LoadWord(out + i + 16), LoadWord(src + i + 16)));
    StoreWord(out + i + 24, f(LoadWord(out + i + 24), LoadWord(src + i + 24)));
  }
  for (; i + 8 <= n; i += 8) StoreWord(out + i, f(LoadWord(out + i), LoadWord(src + i)));
  for (; i < n; ++i) {
    out[i] = static_cast<char>(
        f(static_cast<uint64_t>(static_cast<uint8_t>(out[i])), static_cast<uint8_t>(src[i])));
  }
}

// Copies `src` into `out` (already sized) and zero-fills the rest.
void CopyPadded(std::string* out, std::string_view src) {
  if (!src.empty()) memcpy(out->data(), src.data(), src.size());
  if (src.size() < out->size()) memset(out->data() + src.size(), 0, out->size() - src.size());
}

}  // namespace

uint64_t Popcount(std::string_view bytes) {
  const size_t words = bytes.size() / 8;
  uint64_t total = PopcountWords(bytes.data(), words);
  for (size_t i = words * 8; i < bytes.size(); ++i) total += ByteCount(bytes[i]);
  return total;
}

uint64_t CountRange(std::string_view bytes, uint64_t first, uint64_t last) {
  const uint64_t first_byte = first >> 3;
  const uint64_t last_byte = last >> 3;
  // Masks keeping the bits of the edge bytes that are inside the range.
  const uint8_t head_mask = 0xffu >> (first & 7);
  const uint8_t tail_mask = static_cast<uint8_t>(0xff00u >> ((last & 7) + 1));
  const auto byte_at = [&](uint64_t i) { return static_cast<uint8_t>(bytes[i]); };
  if (first_byte == last_byte) return ByteCount(byte_at(first_byte) & head_mask & tail_mask);
  return ByteCount(byte_at(first_byte) & head_mask) +
         Popcount(bytes.substr(first_byte + 1, last_byte - first_byte - 1)) +
         ByteCount(byte_at(last_byte) & tail_mask);
}

int64_t FindFirst(std::string_view bytes, bool bit, uint64_t first, uint64_t last) {
  const uint64_t first_byte = first >> 3;
  const uint64_t last_byte = last >> 3;
  // Searching for a 0 is searching for a 1 in the complement.
  const uint64_t flip = bit ? 0 : ~uint64_t{0};
  uint64_t b = first_byte;
  while (b <= last_byte) {
    // Whole words strictly inside the range skip runs of the other bit quickly.
    if (b != first_byte && b + 8 <= last_byte) {
      const uint64_t w = LoadBigEndian(bytes.data() + b) ^ flip;
      if (w != 0) return static_cast<int64_t>(b * 8 + __builtin_clzll(w));
      b += 8;
      continue;
    }
    uint8_t v = static_cast<uint8_t>(bytes[b]) ^ static_cast<uint8_t>(flip);
    if (b == first_byte) v &= 0xffu >> (first & 7);
    if (b == last_byte) v &= static_cast<uint8_t>(0xff00u >> ((last & 7) + 1));
    if (v != 0) return static_cast<int64_t>(b * 8 + (__builtin_clz(v) - 24));
    ++b;
  }
  return -1;
}

void Combine(Op op, std::span<const std::string_view> sources, std::string* out) {
  size_t max_len = 0;
  for (std::string_view s : sources) max_len = std::max(max_len, s.size());
  out->resize(max_len);
  if (max_len == 0) return;
  char* o = out->data();
  switch (op) {
    case Op::kAnd:
      CopyPadded(out, sources[0]);
      for (size_t i = 1; i < sources.size(); ++i) {
        Fold(o, sources[i].data(), sources[i].size(), [](uint64_t a, uint64_t b) { return a & b; });
        // Missing bytes of a shorter source are zeros: they clear the rest.
        memset(o + sources[i].size(), 0, max_len - sources[i].size());
      }
      return;
    case Op::kOr:
    case Op::kXor:
    case Op::kOne: {
      CopyPadded(out, sources[0]);
      // ONE: bits seen in two or more sources so far; they are cleared at the end.
      std::string seen_twice(op == Op::kOne ? max_len : 0, '\0');
      for (size_t i = 1; i < sources.size(); ++i) {
        const std::string_view s = sources[i];
        if (op == Op::kOr) {
          Fold(o, s.data(), s.size(), [](uint64_t a, uint64_t b) { return a | b; });
        } else if (op == Op::kXor) {
          Fold(o, s.data(), s.size(), [](uint64_t a, uint64_t b) { return a ^ b; });
        } else {
          std::string both(o, s.size());
          Fold(both.data(), s.data(), s.size(), [](uint64_t a, uint64_t b) { return a & b; });
          Fold(seen_twice.data(), both.data(), s.size(),
               [](uint64_t a, uint64_t b) { return a | b; });
          Fold(o, s.data(), s.size(), [](uint64_t a, uint64_t b) { return a ^ b; });
        }
      }
      if (op == Op::kOne) {
        Fold(o, seen_twice.data(), max_len, [](uint64_t a, uint64_t b) { return a & ~b; });
      }
      return;
    }
    case Op::kNot:
      CopyPadded(out, sources[0]);
      for (size_t i = 0; i < max_len; ++i) o[i] = static_cast<char>(~o[i]);
      return;
    case Op::kDiff:
    case Op::kDiff1:
    case Op::kAndOr: {
      // The disjunction of every source but the first, then combined with the first.
      CopyPadded(out, sources[1]);
      for (size_t i = 2; i < sources.size(); ++i) {
        Fold(o, sources[i].data(), sources[i].size(), [](uint64_t a, uint64_t b) { return a | b; });
      }
      std::string first(max_len, '\0');
      CopyPadded(&first, sources[0]);
      if (op == Op::kDiff) {
        Fold(o, first.data(), max_len, [](uint64_t rest, uint64_t x) { return x & ~rest; });
      } else if (op == Op::kDiff1) {
        Fold(o, first.data(), max_len, [](uint64_t rest, uint64_t x) { return ~x & rest; });
      } else {
        Fold(o, first.data(), max_len, [](uint64_t rest, uint64_t x) { return x & rest; });
      }
      return;
    }
  }
}

bool ParseFieldType(std::string_view text, FieldType* out) {
  if (text.size() < 2 || (text[0] != 'i' && text[0] != 'u')) return false;
  const std::string_view digits = text.substr(1);
  // Redis's integer grammar: no sign, no leading zero.
  if (digits.size() > 2 || digits[0] < '1' || digits[0] > '9') return false;
  unsigned bits = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return false;
    bits = bits * 10 + static_cast<unsigned>(c - '0');
  }
  const bool is_signed = text[0] == 'i';
  // u64 would not fit the protocol's signed integers.
  if (bits > (is_signed ? 64u : 63u)) return false;
  out->is_signed = is_signed;
  out->bits = static_cast<uint8_t>(bits);
  return true;
}

uint64_t GetUnsigned(std::string_view bytes, uint64_t offset, unsigned bits) {
  // A field of up to 64 bits at any bit offset spans at most 9 bytes: gather them zero-padded
  // into a 128-bit window, then shift the field down.
  const uint64_t first_byte = offset >> 3;
  unsigned __int128 window = 0;
  for (uint64_t i = 0; i < 9; ++i) {
    const uint64_t at = first_byte + i;
    const uint8_t b = at < bytes.size() ? static_cast<uint8_t>(bytes[at]) : 0;
    window = (window << 8) | b;
  }
  const unsigned shift = 72 - static_cast<unsigned>(offset & 7) - bits;
  const uint64_t mask = bits == 64 ? ~uint64_t{0} : ((uint64_t{1} << bits) - 1);
  return static_cast<uint64_t>(window >> shift) & mask;
}

int64_t GetSigned(std::string_view bytes, uint64_t offset, unsigned bits) {
  uint64_t v = GetUnsigned(bytes, offset, bits);
  if (bits < 64 && (v >> (bits - 1)) != 0) v |= ~uint64_t{0} << bits;
  return static_cast<int64_t>(v);
}

void SetField(char* bytes, uint64_t offset, unsigned bits, uint64_t value) {
  for (unsigned j = 0; j < bits; ++j) {
    SetBit(bytes, offset + j, ((value >> (bits - 1 - j)) & 1) != 0);
  }
}

bool AddUnsigned(uint64_t value, int64_t incr, unsigned bits, Overflow mode, uint64_t* result) {
  const uint64_t max = (uint64_t{1} << bits) - 1;  // bits <= 63
  int direction = 0;                               // +1 overflow, -1 underflow
  if (value > max) {
    direction = 1;
  } else if (incr > 0 && static_cast<uint64_t>(incr) > max - value) {
    direction = 1;
  } else if (incr < 0 && (static_cast<uint64_t>(-(incr + 1)) + 1) > value) {
    direction = -1;
  }
  if (direction == 0) {
    *result = value + static_cast<uint64_t>(incr);
    return true;
  }
  switch (mode) {
    case Overflow::kFail:
      return false;
    case Overflow::kSat:
      *result = direction > 0 ? max : 0;
      return true;
    case Overflow::kWrap:
      *result = (value + static_cast<uint64_t>(incr)) & max;
      return true;
  }
  return false;
}

bool AddSigned(int64_t value, int64_t incr, unsigned bits, Overflow mode, int64_t* result) {
  const int64_t max = bits == 64 ? INT64_MAX : (int64_t{1} << (bits - 1)) - 1;
  const int64_t min = -max - 1;
  // Headroom above and below the value, computed modulo 2^64 as Redis does; for narrow types
  // that is what makes a very negative SET count as overflow upwards (see the header).
  const auto wrap_sub = [](int64_t a, int64_t b) {
    return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
  };
  const int64_t up = wrap_sub(max, value);
  const int64_t down = wrap_sub(min, value);
  int direction = 0;
  if (bits < 64) {
    if (value > max || incr > up) {
      direction = 1;
    } else if (value < min || incr < down) {
      direction = -1;
    }
  } else if (value >= 0 && incr > 0 && incr > up) {
    direction = 1;
  } else if (value < 0 && incr < 0 && incr < down) {
    direction = -1;
  }
  const uint64_t sum = static_cast<uint64_t>(value) + static_cast<uint64_t>(incr);
  if (direction == 0) {
    *result = static_cast<int64_t>(sum);
    return true;
  }
  switch (mode) {
    case Overflow::kFail:
      return false;
    case Overflow::kSat:
      *result = direction > 0 ? max : min;
      return true;
    case Overflow::kWrap: {
      uint64_t wrapped = sum;
      if (bits < 64) {
        const uint64_t high = ~uint64_t{0} << bits;
        wrapped = ((wrapped >> (bits - 1)) & 1) != 0 ? (wrapped | high) : (wrapped & ~high);
      }
      *result = static_cast<int64_t>(wrapped);
      return true;
    }
  }
  return false;
}

}  // namespace vireo::bitmap
