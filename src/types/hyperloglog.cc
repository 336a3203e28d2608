#include "types/hyperloglog.h"

#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

namespace vireo::hll {
namespace {

constexpr uint64_t kHashSeed = 0xadc83b19ULL;
constexpr size_t kCardByte = 8;  // the cached count: header bytes 8..15
constexpr uint8_t kStaleBit = 0x80;
constexpr uint32_t kValMaxLen = 4;
constexpr uint32_t kZeroMaxLen = 64;
constexpr uint32_t kXZeroMaxLen = 16384;

// ---- dense registers ---------------------------------------------------------------------------
// Register i occupies bits 6i..6i+5 of the register bytes, low bits first; it straddles two bytes
// when it starts at bit 4 or 6 of a byte. The last register starts at bit 2, so no access reads
// past the end.

uint8_t DenseGet(const uint8_t* regs, size_t i) {
  const size_t bit = i * 6;
  const size_t byte = bit >> 3;
  const unsigned shift = bit & 7;
  unsigned v = regs[byte] >> shift;
  if (shift > 2) v |= static_cast<unsigned>(regs[byte + 1]) << (8 - shift);
  return static_cast<uint8_t>(v & 63);
}

void DenseSet(uint8_t* regs, size_t i, uint8_t value) {
  const size_t bit = i * 6;
  const size_t byte = bit >> 3;
  const unsigned shift = bit & 7;
  regs[byte] = static_cast<uint8_t>((regs[byte] & ~(63u << shift)) | (unsigned{value} << shift));
  if (shift > 2) {
    const unsigned high = 8 - shift;
    regs[byte + 1] =
        static_cast<uint8_t>((regs[byte + 1] & ~(63u >> high)) | (unsigned{value} >> high));
  }
}

// Calls fn(first_register, values[4]) for every group of four registers (three bytes), the
// unit in which the 6-bit packing repeats; the hot loops of counting and merging use it.
template <typename Fn>
void ForEachDenseQuad(const uint8_t* regs, Fn&& fn) {
  for (size_t i = 0; i < kRegisters; i += 4, regs += 3) {
    const unsigned b0 = regs[0], b1 = regs[1], b2 = regs[2];
    fn(i, b0 & 63, ((b0 >> 6) | (b1 << 2)) & 63, ((b1 >> 4) | (b2 << 4)) & 63, b2 >> 2);
  }
}

// ---- sparse opcodes ----------------------------------------------------------------------------

bool IsZero(uint8_t b) { return (b & 0xc0) == 0; }
bool IsXZero(uint8_t b) { return (b & 0xc0) == 0x40; }
bool IsVal(uint8_t b) { return (b & 0x80) != 0; }
uint32_t ZeroLen(uint8_t b) { return (b & 0x3fu) + 1; }
uint32_t XZeroLen(uint8_t b0, uint8_t b1) { return ((b0 & 0x3fu) << 8 | b1) + 1; }
uint8_t ValValue(uint8_t b) { return static_cast<uint8_t>(((b >> 2) & 0x1f) + 1); }
uint32_t ValLen(uint8_t b) { return (b & 3u) + 1; }
uint8_t ValOp(uint32_t value, uint32_t len) {
  return static_cast<uint8_t>(0x80 | ((value - 1) << 2) | (len - 1));
}

// Appends the zero run `len` (1..16384) as ZERO or XZERO; returns the bytes written.
size_t PutZeros(uint8_t* out, uint32_t len) {
  if (len > kZeroMaxLen) {
    out[0] = static_cast<uint8_t>(0x40 | ((len - 1) >> 8));
    out[1] = static_cast<uint8_t>((len - 1) & 0xff);
    return 2;
  }
  out[0] = static_cast<uint8_t>(len - 1);
  return 1;
}

// One decoded opcode.
struct Op {
  uint32_t len;   // registers covered
  uint8_t value;  // 0 for ZERO and XZERO
  uint8_t bytes;  // 1, or 2 for XZERO
};

// Decodes the opcode at `pos`. An XZERO cut short by the end of the string reads its second
// byte as 0, as Redis does (it finds the string's terminator there).
Op DecodeAt(const uint8_t* p, size_t pos, size_t end) {
  const uint8_t b = p[pos];
  if (IsZero(b)) return {ZeroLen(b), 0, 1};
  if (IsVal(b)) return {ValLen(b), ValValue(b), 1};
  return {XZeroLen(b, pos + 1 < end ? p[pos + 1] : 0), 0, 2};
}

const uint8_t* Bytes(std::string_view s) { return reinterpret_cast<const uint8_t*>(s.data()); }
uint8_t* Bytes(std::string* s) { return reinterpret_cast<uint8_t*>(s->data()); }

// Calls fn(first_register, op) for each opcode of a sparse value; stops early when fn returns
// false. Returns the number of registers the opcodes covered.
template <typename Fn>
uint64_t WalkSparse(std::string_view hll, Fn&& fn) {
  const uint8_t* p = Bytes(hll);
  const size_t end = hll.size();
  uint64_t index = 0;
  for (size_t pos = kHeaderSize; pos < end;) {
    const Op op = DecodeAt(p, pos, end);
    if (!fn(index, op)) return index;
    index += op.len;
    pos += op.bytes;
  }
  return index;
}

// Sets one register per VAL opcode into `max`, keeping the larger value; false when a run goes
// past the last register or the runs do not cover exactly kRegisters.
bool MergeSparse(std::string_view hll, uint8_t* max) {
  bool overrun = false;
  const uint64_t covered = WalkSparse(hll, [&](uint64_t first, const Op& op) {
    if (op.value == 0) return true;
    if (first + op.len > kRegisters) {
      overrun = true;
      return false;
    }
    for (uint64_t i = first; i < first + op.len; ++i) {
      if (op.value > max[i]) max[i] = op.value;
    }
    return true;
  });
  return !overrun && covered == kRegisters;
}

// Counts of registers per value (0..63).
using Histogram = std::array<uint32_t, 64>;

double Sigma(double x) {
  if (x == 1.) return std::numeric_limits<double>::infinity();
  double y = 1;
  double z = x;
  double previous;
  do {
    x *= x;
    previous = z;
    z += x * y;
    y += y;
  } while (previous != z);
  return z;
}

double Tau(double x) {
  if (x == 0. || x == 1.) return 0.;
  double y = 1.0;
  double z = 1 - x;
  double previous;
  do {
    x = std::sqrt(x);
    previous = z;
    y *= 0.5;
    z -= std::pow(1 - x, 2) * y;
  } while (previous != z);
  return z / 3;
}

// Ertl, "New cardinality estimation algorithms for HyperLogLog sketches" (arXiv:1702.01284),
// evaluated in the same order as Redis so the doubles, and the rounded result, match.
uint64_t EstimateFromHistogram(const Histogram& h) {
  constexpr double kAlphaInf = 0.721347520444481703680;  // 0.5 / ln(2)
  const double m = kRegisters;
  double z = m * Tau((m - h[kQ + 1]) / m);
  for (int j = kQ; j >= 1; --j) {
    z += h[j];
    z *= 0.5;
  }
  z += m * Sigma(h[0] / m);
  return static_cast<uint64_t>(std::llround(kAlphaInf * m * m / z));
}

bool Promote(std::string* hll, uint32_t index, uint8_t value) {
  if (!ToDense(hll)) return false;
  DenseSet(Bytes(hll) + kHeaderSize, index, value);
  return true;
}

// The sparse case of SetRegister. It edits the opcode run in place the way Redis does, so the
// bytes (and hence GET/DUMP payloads) stay identical to Redis's for the same adds: find the
// opcode covering the register, split it into at most three opcodes, then merge equal VAL
// neighbours around the edit.
int SparseSet(std::string* hll, uint32_t index, uint8_t value, size_t sparse_max_bytes) {
  if (value > kSparseMaxValue) return Promote(hll, index, value) ? 1 : -1;

  const uint8_t* p = Bytes(*hll);
  size_t end = hll->size();
  size_t pos = kHeaderSize;
  size_t prev = 0;  // 0: none
  uint64_t first = 0;
  Op op{0, 0, 0};
  while (pos < end) {
    op = DecodeAt(p, pos, end);
    if (index <= first + op.len - 1) break;
    prev = pos;
    pos += op.bytes;
    first += op.len;
  }
  if (pos >= end) return -1;  // the opcodes end before the register: corrupt

  const bool is_val = IsVal(p[pos]);
  if (is_val) {
    if (op.value >= value) return 0;
  }
  size_t edit_start = pos;
  if ((is_val || IsZero(p[pos])) && op.len == 1) {
    Bytes(hll)[pos] = ValOp(value, 1);
  } else {
    uint8_t seq[5];
    size_t n = 0;
    const uint64_t last = first + op.len - 1;
    if (is_val) {
      if (index != first) seq[n++] = ValOp(op.value, static_cast<uint32_t>(index - first));
      seq[n++] = ValOp(value, 1);
      if (index != last) seq[n++] = ValOp(op.value, static_cast<uint32_t>(last - index));
    } else {
      if (index != first) n += PutZeros(seq + n, static_cast<uint32_t>(index - first));
      seq[n++] = ValOp(value, 1);
      if (index != last) n += PutZeros(seq + n, static_cast<uint32_t>(last - index));
    }
    if (n > op.bytes && hll->size() + (n - op.bytes) > sparse_max_bytes) {
      return Promote(hll, index, value) ? 1 : -1;
    }
    hll->replace(edit_start, op.bytes, reinterpret_cast<const char*>(seq), n);
  }

  // Merge adjacent VALs of equal value, scanning up to five opcodes from the one before the
  // edit.
  uint8_t* q = Bytes(hll);
  end = hll->size();
  size_t at = prev != 0 ? prev : kHeaderSize;
  int scan = 5;
  while (at < end && scan-- > 0) {
    if (IsXZero(q[at])) {
      at += 2;
      continue;
    }
    if (IsZero(q[at])) {
      ++at;
      continue;
    }
    if (at + 1 < end && IsVal(q[at + 1]) && ValValue(q[at]) == ValValue(q[at + 1])) {
      const uint32_t len = ValLen(q[at]) + ValLen(q[at + 1]);
      if (len <= kValMaxLen) {
        q[at + 1] = ValOp(ValValue(q[at]), len);
        hll->erase(at, 1);
        q = Bytes(hll);
        --end;
        continue;  // the merged opcode may merge again with its right neighbour
      }
    }
    ++at;
  }
  return 1;
}

}  // namespace

uint64_t MurmurHash64A(const void* data, size_t len, uint64_t seed) {
  constexpr uint64_t m = 0xc6a4a7935bd1e995ULL;
  constexpr int r = 47;
  const auto* bytes = static_cast<const uint8_t*>(data);
  uint64_t h = seed ^ (len * m);
  const size_t blocks = len / 8;
  for (size_t i = 0; i < blocks; ++i, bytes += 8) {
    // Little-endian regardless of the host, so hashes (and registers) match across machines.
    uint64_t k;
    if constexpr (std::endian::native == std::endian::little) {
      memcpy(&k, bytes, 8);
    } else {
      k = 0;
      for (int b = 7; b >= 0; --b) k = (k << 8) | bytes[b];
    }
    k *= m;
    k ^= k >> r;
    k *= m;
    h ^= k;
    h *= m;
  }
  const size_t tail = len & 7;
  if (tail != 0) {
    for (size_t b = tail; b-- > 0;) h ^= static_cast<uint64_t>(bytes[b]) << (8 * b);
    h *= m;
  }
  h ^= h >> r;
  h *= m;
  h ^= h >> r;
  return h;
}

uint8_t PatternLength(std::string_view element, uint32_t* index) {
  uint64_t hash = MurmurHash64A(element.data(), element.size(), kHashSeed);
  *index = static_cast<uint32_t>(hash & (kRegisters - 1));
  hash >>= kPrecision;
  hash |= uint64_t{1} << kQ;  // bounds the run at kQ + 1
  return static_cast<uint8_t>(std::countr_zero(hash) + 1);
}

std::string NewSparse() {
  std::string s(kHeaderSize, '\0');
  memcpy(s.data(), "HYLL", 4);
  s[4] = static_cast<char>(kSparse);
  uint8_t run[2];
  PutZeros(run, kXZeroMaxLen);
  s.append(reinterpret_cast<const char*>(run), 2);
  return s;
}

bool HasValidHeader(std::string_view hll) {
  if (hll.size() < kHeaderSize || hll.substr(0, 4) != "HYLL") return false;
  const uint8_t encoding = Encoding(hll);
  if (encoding > kSparse) return false;
  return encoding != kDense || hll.size() == kDenseSize;
}

int SetRegister(std::string* hll, uint32_t index, uint8_t value, size_t sparse_max_bytes) {
  switch (Encoding(*hll)) {
    case kDense: {
      uint8_t* regs = Bytes(hll) + kHeaderSize;
      if (value <= DenseGet(regs, index)) return 0;
      DenseSet(regs, index, value);
      return 1;
    }
    case kSparse:
      return SparseSet(hll, index, value, sparse_max_bytes);
    default:
      return -1;
  }
}

int Add(std::string* hll, std::string_view element, size_t sparse_max_bytes) {
  uint32_t index;
  const uint8_t value = PatternLength(element, &index);
  return SetRegister(hll, index, value, sparse_max_bytes);
}

bool Unpack(std::string_view hll, uint8_t* registers) {
  memset(registers, 0, kRegisters);
  return MergeInto(hll, registers);
}

bool ToDense(std::string* hll) {
  if (Encoding(*hll) == kDense) return true;
  uint8_t values[kRegisters];
  if (!Unpack(*hll, values)) return false;
  // Header (magic, reserved bytes, cached count) carries over; only the encoding changes.
  std::string dense(kDenseSize, '\0');
  memcpy(dense.data(), hll->data(), kHeaderSize);
  dense[4] = static_cast<char>(kDense);
  uint8_t* regs = Bytes(&dense) + kHeaderSize;
  for (size_t i = 0; i < kRegisters; ++i) {
    if (values[i] != 0) DenseSet(regs, i, values[i]);
  }
  *hll = std::move(dense);
  return true;
}

bool MergeInto(std::string_view hll, uint8_t* max) {
  if (Encoding(hll) != kDense) return MergeSparse(hll, max);
  ForEachDenseQuad(Bytes(hll) + kHeaderSize,
                   [max](size_t i, unsigned r0, unsigned r1, unsigned r2, unsigned r3) {
                     uint8_t* m = max + i;
                     if (r0 > m[0]) m[0] = static_cast<uint8_t>(r0);
                     if (r1 > m[1]) m[1] = static_cast<uint8_t>(r1);
                     if (r2 > m[2]) m[2] = static_cast<uint8_t>(r2);
                     if (r3 > m[3]) m[3] = static_cast<uint8_t>(r3);
                   });
  return true;
}

std::optional<uint64_t> Estimate(std::string_view hll) {
  Histogram h{};
  if (Encoding(hll) == kDense) {
    ForEachDenseQuad(Bytes(hll) + kHeaderSize,
                     [&h](size_t, unsigned r0, unsigned r1, unsigned r2, unsigned r3) {
                       ++h[r0];
                       ++h[r1];
                       ++h[r2];
                       ++h[r3];
                     });
  } else {
    const uint64_t covered = WalkSparse(hll, [&h](uint64_t, const Op& op) {
      h[op.value] += op.len;
      return true;
    });
    if (covered != kRegisters) return std::nullopt;
  }
  return EstimateFromHistogram(h);
}

uint64_t EstimateRegisters(const uint8_t* registers) {
  Histogram h{};
  for (size_t i = 0; i < kRegisters; i += 8) {
    uint64_t word;
    memcpy(&word, registers + i, 8);
    if (word == 0) {
      h[0] += 8;
      continue;
    }
    for (size_t j = 0; j < 8; ++j) ++h[registers[i + j] & 63];
  }
  return EstimateFromHistogram(h);
}

std::optional<uint64_t> CachedCount(std::string_view hll) {
  const uint8_t* card = Bytes(hll) + kCardByte;
  if ((card[7] & kStaleBit) != 0) return std::nullopt;
  uint64_t count = 0;
  for (int i = 7; i >= 0; --i) count = (count << 8) | card[i];
  return count;
}

void StoreCachedCount(std::string* hll, uint64_t count) {
  uint8_t* card = Bytes(hll) + kCardByte;
  for (int i = 0; i < 8; ++i) card[i] = static_cast<uint8_t>(count >> (8 * i));
}

void InvalidateCache(std::string* hll) { Bytes(hll)[kCardByte + 7] |= kStaleBit; }

std::string DecodeSparse(std::string_view hll) {
  std::string out;
  const uint8_t* p = Bytes(hll);
  for (size_t pos = kHeaderSize; pos < hll.size();) {
    const Op op = DecodeAt(p, pos, hll.size());
    if (!out.empty()) out += ' ';
    if (op.value != 0) {
      out += "v:" + std::to_string(op.value) + "," + std::to_string(op.len);
    } else {
      out += (op.bytes == 2 ? "Z:" : "z:") + std::to_string(op.len);
    }
    pos += op.bytes;
  }
  return out;
}

std::string SelfTest(uint64_t seed, size_t sparse_max_bytes) {
  // splitmix64: any decent generator does; the test only needs varied values.
  auto next = [&seed]() {
    uint64_t z = (seed += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  };

  // 1: every register keeps its value and leaves its neighbours alone.
  std::string dense(kDenseSize, '\0');
  uint8_t* regs = Bytes(&dense) + kHeaderSize;
  uint8_t expected[kRegisters];
  for (int cycle = 0; cycle < 1000; ++cycle) {
    for (size_t i = 0; i < kRegisters; ++i) {
      expected[i] = static_cast<uint8_t>(next() & 63);
      DenseSet(regs, i, expected[i]);
    }
    for (size_t i = 0; i < kRegisters; ++i) {
      const uint8_t got = DenseGet(regs, i);
      if (got != expected[i]) {
        return "TESTFAILED Register " + std::to_string(i) + " should be " +
               std::to_string(expected[i]) + " but is " + std::to_string(got);
      }
    }
  }

  // 2: estimates of a dense and a sparse HLL fed the same distinct elements.
  memcpy(dense.data(), "HYLL", 4);
  memset(regs, 0, kDenseSize - kHeaderSize);
  std::string sparse = NewSparse();
  const double relative_error = 1.04 / std::sqrt(static_cast<double>(kRegisters));
  const uint64_t salt = next();
  uint64_t checkpoint = 1;
  for (uint64_t j = 1; j <= 10000000; ++j) {
    const uint64_t element = j ^ salt;
    const std::string_view bytes(reinterpret_cast<const char*>(&element), sizeof(element));
    Add(&dense, bytes, sparse_max_bytes);
    Add(&sparse, bytes, sparse_max_bytes);
    if (j != checkpoint) continue;
    if (j < sparse_max_bytes / 2 && Encoding(sparse) != kSparse) {
      return "TESTFAILED sparse encoding not used";
    }
    const uint64_t estimate = *Estimate(dense);
    if (Estimate(sparse) != estimate) return "TESTFAILED dense/sparse disagree";
    const uint64_t error = estimate > j ? estimate - j : j - estimate;
    // Around 10 a collision alone moves the estimate; Redis allows exactly 1 there.
    const uint64_t max_error =
        j == 10 ? 1 : static_cast<uint64_t>(std::ceil(relative_error * 6 * static_cast<double>(j)));
    if (error > max_error) {
      return "TESTFAILED Too big error. card:" + std::to_string(j) +
             " abserr:" + std::to_string(error);
    }
    checkpoint *= 10;
  }
  return {};
}

}  // namespace vireo::hll
