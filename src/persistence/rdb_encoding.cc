#include "persistence/rdb_encoding.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>

#include "util/strings.h"

namespace vireo::rdb {

namespace {

// ---- CRC64 (slicing by 8) ---------------------------------------------------------------------

// 0xad93d23594c935a9 with its bits reversed: the table-driven form of a reflected CRC.
constexpr uint64_t kCrc64PolyReflected = 0x95ac9329ac4bc9b5ULL;

struct Crc64Tables {
  std::array<std::array<uint64_t, 256>, 8> t;
  Crc64Tables() {
    for (int i = 0; i < 256; ++i) {
      uint64_t crc = static_cast<uint64_t>(i);
      for (int b = 0; b < 8; ++b) crc = (crc & 1) ? (crc >> 1) ^ kCrc64PolyReflected : crc >> 1;
      t[0][i] = crc;
    }
    for (int i = 0; i < 256; ++i) {
      for (int k = 1; k < 8; ++k) t[k][i] = (t[k - 1][i] >> 8) ^ t[0][t[k - 1][i] & 0xff];
    }
  }
};

const Crc64Tables& Tables() {
  static const Crc64Tables tables;
  return tables;
}

inline uint64_t Load64(const uint8_t* p) {
  uint64_t v;
  memcpy(&v, p, 8);
  return v;
}

void PutLE(std::string* out, uint64_t v, int bytes) {
  char b[8];
  for (int i = 0; i < bytes; ++i) b[i] = static_cast<char>((v >> (8 * i)) & 0xff);
  out->append(b, bytes);
}

uint64_t GetLE(const uint8_t* p, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

// A listpack back-length of `bytes` bytes, as ListpackWriter's PutBacklen writes it (the most
// significant 7-bit group first; every byte but the first has the high bit set).
size_t DecodeBacklen(const uint8_t* p, size_t bytes) {
  size_t v = 0;
  for (size_t i = 0; i < bytes; ++i) {
    bool continued = (p[i] & 0x80) != 0;
    if (continued != (i > 0)) return SIZE_MAX;
    v = (v << 7) | (p[i] & 0x7f);
  }
  return v;
}

int64_t SignExtend(uint64_t v, int bits) {
  if (bits < 64 && (v >> (bits - 1)) & 1) v |= ~uint64_t{0} << bits;
  return static_cast<int64_t>(v);
}

}  // namespace

uint64_t Crc64(uint64_t crc, const void* data, size_t len) {
  const auto& t = Tables().t;
  const auto* p = static_cast<const uint8_t*>(data);
  while (len >= 8) {
    crc ^= Load64(p);  // little-endian host assumed (x86-64, aarch64)
    crc = t[7][crc & 0xff] ^ t[6][(crc >> 8) & 0xff] ^ t[5][(crc >> 16) & 0xff] ^
          t[4][(crc >> 24) & 0xff] ^ t[3][(crc >> 32) & 0xff] ^ t[2][(crc >> 40) & 0xff] ^
          t[1][(crc >> 48) & 0xff] ^ t[0][crc >> 56];
    p += 8;
    len -= 8;
  }
  while (len-- > 0) crc = t[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
  return crc;
}

// ---- LZF --------------------------------------------------------------------------------------
//
// The format: a control byte below 32 starts a run of (ctrl + 1) literal bytes; otherwise the
// top 3 bits are (match length - 2), 7 meaning "add the next byte", and the low 5 bits plus the
// following byte are (distance - 1) back into the output.

namespace {

uint32_t Load24(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) << 16 | static_cast<uint32_t>(p[1]) << 8 | p[2];
}

// How many bytes a and b share from the start, up to `max`; compares eight at a time.
size_t MatchLength(const uint8_t* a, const uint8_t* b, size_t max) {
  size_t n = 0;
  while (n + 8 <= max) {
    uint64_t x, y;
    memcpy(&x, a + n, 8);
    memcpy(&y, b + n, 8);
    if (x != y) return n + static_cast<size_t>(std::countr_zero(x ^ y) / 8);
    n += 8;
  }
  while (n < max && a[n] == b[n]) ++n;
  return n;
}

}  // namespace

size_t LzfCompress(const char* in_chars, size_t in_len, char* out_chars, size_t out_cap) {
  constexpr size_t kHashBits = 14;
  constexpr size_t kMaxOffset = 1 << 13;
  constexpr size_t kMaxMatch = 264;
  constexpr size_t kMaxLiteral = 32;
  const auto* in = reinterpret_cast<const uint8_t*>(in_chars);
  auto* out = reinterpret_cast<uint8_t*>(out_chars);
  if (in_len == 0 || out_cap < 2) return 0;
  // Position + 1 of the last occurrence of a 3-byte hash. A short input uses (and clears) only
  // part of the table: clearing all of it cost more than compressing a 4 KB stream node.
  uint32_t table[1 << kHashBits];
  const int bits =
      std::clamp(static_cast<int>(std::bit_width(in_len)) - 1, 8, static_cast<int>(kHashBits));
  std::fill_n(table, size_t{1} << bits, 0u);
  auto hash = [bits](uint32_t v) { return (v * 2654435761u) >> (32 - bits); };
  size_t ip = 0, op = 1;  // out[0] is the control byte of the first literal run
  size_t lit = 0;
  auto add_literal = [&]() -> bool {
    if (op + 2 > out_cap) return false;
    out[op++] = in[ip++];
    if (++lit == kMaxLiteral) {
      out[op - lit - 1] = static_cast<uint8_t>(lit - 1);
      lit = 0;
      out[op++] = 0;  // next run's control byte
    }
    return true;
  };
  while (ip + 2 < in_len) {
    const uint32_t v = Load24(in + ip);
    uint32_t& slot = table[hash(v)];
    size_t ref = slot;
    slot = static_cast<uint32_t>(ip + 1);
    if (ref != 0 && ip - (ref - 1) <= kMaxOffset && Load24(in + ref - 1) == v) {
      --ref;
      size_t len = 3 + MatchLength(in + ref + 3, in + ip + 3, std::min(kMaxMatch, in_len - ip) - 3);
      // Close the literal run (or take back its unused control byte).
      if (lit > 0) {
        out[op - lit - 1] = static_cast<uint8_t>(lit - 1);
      } else {
        --op;
      }
      if (op + 4 > out_cap) return 0;
      size_t off = ip - ref - 1;
      size_t l = len - 2;
      if (l < 7) {
        out[op++] = static_cast<uint8_t>((l << 5) | (off >> 8));
      } else {
        out[op++] = static_cast<uint8_t>((7 << 5) | (off >> 8));
        out[op++] = static_cast<uint8_t>(l - 7);
      }
      out[op++] = static_cast<uint8_t>(off & 0xff);
      out[op++] = 0;
      lit = 0;
      // Index the positions the match covered (cheaply: its last two), for later matches.
      size_t end = ip + len;
      for (size_t i = end >= 2 ? end - 2 : end; i < end && i + 2 < in_len; ++i) {
        table[hash(Load24(in + i))] = static_cast<uint32_t>(i + 1);
      }
      ip = end;
    } else if (!add_literal()) {
      return 0;
    }
  }
  while (ip < in_len) {
    if (!add_literal()) return 0;
  }
  if (lit > 0) {
    out[op - lit - 1] = static_cast<uint8_t>(lit - 1);
  } else {
    --op;
  }
  return op;
}

bool LzfDecompress(const char* in_chars, size_t in_len, char* out_chars, size_t out_len) {
  const auto* ip = reinterpret_cast<const uint8_t*>(in_chars);
  const auto* in_end = ip + in_len;
  auto* out = reinterpret_cast<uint8_t*>(out_chars);
  size_t op = 0;
  while (ip < in_end) {
    size_t ctrl = *ip++;
    if (ctrl < 32) {
      size_t len = ctrl + 1;
      if (static_cast<size_t>(in_end - ip) < len || out_len - op < len) return false;
      // A run is at most 32 bytes: copy a fixed 32 when both sides have room (the extra bytes
      // are overwritten later), which compiles to two vector moves instead of a memcpy call.
      if (static_cast<size_t>(in_end - ip) >= 32 && out_len - op >= 32) {
        memcpy(out + op, ip, 32);
      } else {
        memcpy(out + op, ip, len);
      }
      ip += len;
      op += len;
    } else {
      size_t len = ctrl >> 5;
      if (len == 7) {
        if (ip >= in_end) return false;
        len += *ip++;
      }
      if (ip >= in_end) return false;
      size_t back = ((ctrl & 0x1f) << 8) + *ip++ + 1;
      len += 2;
      if (back > op || out_len - op < len) return false;
      uint8_t* ref = out + op - back;
      if (back >= len) {
        memcpy(out + op, ref, len);
      } else {
        for (size_t i = 0; i < len; ++i) out[op + i] = ref[i];  // overlaps: byte by byte
      }
      op += len;
    }
  }
  return op == out_len;
}

// ---- lengths and strings ----------------------------------------------------------------------

void AppendLength(std::string* out, uint64_t len) {
  if (len < (1 << 6)) {
    out->push_back(static_cast<char>(len));
  } else if (len < (1 << 14)) {
    out->push_back(static_cast<char>(0x40 | (len >> 8)));
    out->push_back(static_cast<char>(len & 0xff));
  } else if (len <= UINT32_MAX) {
    out->push_back(static_cast<char>(0x80));
    for (int i = 3; i >= 0; --i) out->push_back(static_cast<char>((len >> (8 * i)) & 0xff));
  } else {
    out->push_back(static_cast<char>(0x81));
    for (int i = 7; i >= 0; --i) out->push_back(static_cast<char>((len >> (8 * i)) & 0xff));
  }
}

bool StringToInt64Strict(std::string_view s, int64_t* out) {
  return !s.empty() && s.size() <= 20 && ParseInt64(s, out);
}

namespace {

// INT8/16/32 string encodings; false when v needs more than 32 bits.
bool AppendEncodedInt(std::string* out, int64_t v) {
  if (v >= INT8_MIN && v <= INT8_MAX) {
    out->push_back(static_cast<char>(0xC0));
    PutLE(out, static_cast<uint64_t>(v), 1);
  } else if (v >= INT16_MIN && v <= INT16_MAX) {
    out->push_back(static_cast<char>(0xC1));
    PutLE(out, static_cast<uint64_t>(v), 2);
  } else if (v >= INT32_MIN && v <= INT32_MAX) {
    out->push_back(static_cast<char>(0xC2));
    PutLE(out, static_cast<uint64_t>(v), 4);
  } else {
    return false;
  }
  return true;
}

}  // namespace

void AppendString(std::string* out, std::string_view s, bool compress, std::string* scratch) {
  int64_t v;
  if (s.size() <= 11 && StringToInt64Strict(s, &v) && AppendEncodedInt(out, v)) return;
  if (compress && s.size() > 20) {
    // Worth it only if it saves more than the 4+ bytes of extra header, as in Redis.
    size_t cap = s.size() - 4;
    std::string local;
    std::string* buf = scratch != nullptr ? scratch : &local;
    // Grown, never shrunk: a reused scratch is not cleared again for every string.
    if (buf->size() < cap) buf->resize(cap);
    size_t n = LzfCompress(s.data(), s.size(), buf->data(), cap);
    if (n > 0) {
      out->push_back(static_cast<char>(0xC3));
      AppendLength(out, n);
      AppendLength(out, s.size());
      out->append(buf->data(), n);
      return;
    }
  }
  AppendLength(out, s.size());
  out->append(s);
}

void AppendIntegerString(std::string* out, int64_t v) {
  if (AppendEncodedInt(out, v)) return;
  char buf[kInt64BufSize];
  size_t n = FormatInt64(v, buf);
  AppendLength(out, n);
  out->append(buf, n);
}

void AppendDoubleBinary(std::string* out, double v) {
  uint64_t bits;
  memcpy(&bits, &v, 8);
  PutLE(out, bits, 8);
}

void AppendMillis(std::string* out, int64_t ms) { PutLE(out, static_cast<uint64_t>(ms), 8); }

// ---- listpack ---------------------------------------------------------------------------------

namespace {

// Writes the back-length of an entry of `l` bytes at p (the most significant 7-bit group
// first, every later byte with the high bit set); returns the end.
char* PutBacklen(char* p, size_t l) {
  int groups = l <= 127 ? 1 : l < 16383 ? 2 : l < 2097151 ? 3 : l < 268435455 ? 4 : 5;
  for (int g = groups - 1; g >= 0; --g) {
    auto b = static_cast<char>((l >> (7 * g)) & 127);
    *p++ = g == groups - 1 ? b : static_cast<char>(b | 128);
  }
  return p;
}

char* PutLEBytes(char* p, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) *p++ = static_cast<char>((v >> (8 * i)) & 0xff);
  return p;
}

}  // namespace

void ListpackWriter::AddInt(int64_t v) {
  char* const e = Room(16);
  char* p = e;
  if (v >= 0 && v <= 127) {
    *p++ = static_cast<char>(v);
  } else if (v >= -4096 && v <= 4095) {
    uint64_t u = v < 0 ? (uint64_t{1} << 13) + v : static_cast<uint64_t>(v);
    *p++ = static_cast<char>((u >> 8) | 0xC0);
    *p++ = static_cast<char>(u & 0xff);
  } else if (v >= INT16_MIN && v <= INT16_MAX) {
    *p++ = static_cast<char>(0xF1);
    p = PutLEBytes(p, static_cast<uint64_t>(v), 2);
  } else if (v >= -8388608 && v <= 8388607) {
    *p++ = static_cast<char>(0xF2);
    p = PutLEBytes(p, static_cast<uint64_t>(v), 3);
  } else if (v >= INT32_MIN && v <= INT32_MAX) {
    *p++ = static_cast<char>(0xF3);
    p = PutLEBytes(p, static_cast<uint64_t>(v), 4);
  } else {
    *p++ = static_cast<char>(0xF4);
    p = PutLEBytes(p, static_cast<uint64_t>(v), 8);
  }
  p = PutBacklen(p, static_cast<size_t>(p - e));
  size_ += static_cast<size_t>(p - e);
  ++count_;
}

void ListpackWriter::Add(std::string_view s) {
  int64_t v;
  if (StringToInt64Strict(s, &v)) {
    AddInt(v);
    return;
  }
  size_t len = s.size();
  char* const e = Room(len + 10);
  char* p = e;
  if (len < 64) {
    *p++ = static_cast<char>(0x80 | len);
  } else if (len < 4096) {
    *p++ = static_cast<char>(0xE0 | (len >> 8));
    *p++ = static_cast<char>(len & 0xff);
  } else {
    *p++ = static_cast<char>(0xF0);
    p = PutLEBytes(p, len, 4);
  }
  memcpy(p, s.data(), len);
  p += len;
  p = PutBacklen(p, static_cast<size_t>(p - e));
  size_ += static_cast<size_t>(p - e);
  ++count_;
}

std::string ListpackWriter::Finish() {
  FinishView();
  buf_.resize(size_);
  return std::move(buf_);
}

std::string_view ListpackWriter::FinishView() {
  *Room(1) = static_cast<char>(0xFF);
  ++size_;
  uint32_t total = static_cast<uint32_t>(size_);
  uint16_t n = count_ < 65535 ? static_cast<uint16_t>(count_) : 65535;
  for (int i = 0; i < 4; ++i) buf_[i] = static_cast<char>((total >> (8 * i)) & 0xff);
  buf_[4] = static_cast<char>(n & 0xff);
  buf_[5] = static_cast<char>(n >> 8);
  return {buf_.data(), size_};
}

std::string_view PackedElem::View(char* buf) const {
  if (!is_int) return sval;
  return {buf, FormatInt64(ival, buf)};
}

bool ListpackReader::Init(std::string_view blob, bool deep) {
  blob_ = blob;
  ok_ = false;
  done_ = false;
  deep_ = deep;
  count_ = 0;
  if (blob.size() < 7) return false;
  const auto* p = reinterpret_cast<const uint8_t*>(blob.data());
  if (GetLE(p, 4) != blob.size() || p[blob.size() - 1] != 0xFF) return false;
  header_count_ = static_cast<uint32_t>(GetLE(p + 4, 2));
  // A header that says "empty" over entries is corrupt even without deep checks: Redis reads
  // the count from the header and would take the value for an empty one.
  if (header_count_ == 0 && blob.size() != 7) return false;
  pos_ = 6;
  return true;
}

bool ListpackReader::Next(PackedElem* e) {
  if (done_) return false;
  const auto* p = reinterpret_cast<const uint8_t*>(blob_.data());
  size_t n = blob_.size();
  if (pos_ >= n) {
    done_ = true;
    return false;
  }
  uint8_t b = p[pos_];
  // Fast paths for the commonest elements (small integers, short strings: most of a stream
  // node), when no back-length needs checking. Both have a one-byte back-length.
  if (!deep_) {
    if (b < 0x80 && pos_ + 2 < n) {
      e->is_int = true;
      e->ival = b;
      pos_ += 2;
      ++count_;
      return true;
    }
    const size_t len = b & 0x3f;
    if ((b & 0xC0) == 0x80 && pos_ + len + 2 < n) {
      e->is_int = false;
      e->sval = std::string_view(blob_.data() + pos_ + 1, len);
      pos_ += len + 2;
      ++count_;
      return true;
    }
  }
  if (b == 0xFF) {
    done_ = true;
    ok_ = pos_ + 1 == n && (!deep_ || header_count_ == 65535 || header_count_ == count_);
    return false;
  }
  size_t avail = n - 1 - pos_;  // bytes before the terminator
  size_t header = 1, data = 0;
  e->is_int = true;
  if ((b & 0x80) == 0) {
    e->ival = b;
  } else if ((b & 0xC0) == 0x80) {
    e->is_int = false;
    data = b & 0x3f;
  } else if ((b & 0xE0) == 0xC0) {
    if (avail < 2) return done_ = true, false;
    header = 2;
    e->ival = SignExtend(((b & 0x1f) << 8) | p[pos_ + 1], 13);
  } else if ((b & 0xF0) == 0xE0) {
    if (avail < 2) return done_ = true, false;
    header = 2;
    e->is_int = false;
    data = ((b & 0x0f) << 8) | p[pos_ + 1];
  } else if (b == 0xF0) {
    if (avail < 5) return done_ = true, false;
    header = 5;
    e->is_int = false;
    data = GetLE(p + pos_ + 1, 4);
  } else if (b >= 0xF1 && b <= 0xF4) {
    static constexpr int kBytes[] = {2, 3, 4, 8};
    int nb = kBytes[b - 0xF1];
    if (avail < 1 + static_cast<size_t>(nb)) return done_ = true, false;
    header = 1 + nb;
    e->ival = SignExtend(GetLE(p + pos_ + 1, nb), nb * 8);
  } else {
    done_ = true;
    return false;
  }
  size_t entry = header + data;
  size_t back = entry <= 127        ? 1
                : entry < 16383     ? 2
                : entry < 2097151   ? 3
                : entry < 268435455 ? 4
                                    : 5;
  if (data > avail || entry + back > avail) {
    done_ = true;
    return false;
  }
  if (deep_ && DecodeBacklen(p + pos_ + entry, back) != entry) {
    done_ = true;
    return false;
  }
  if (!e->is_int) e->sval = std::string_view(blob_.data() + pos_ + header, data);
  pos_ += entry + back;
  ++count_;
  return true;
}

// ---- ziplist ----------------------------------------------------------------------------------

bool ZiplistReader::Init(std::string_view blob, bool deep) {
  blob_ = blob;
  ok_ = false;
  done_ = false;
  deep_ = deep;
  count_ = prev_len_ = last_entry_ = 0;
  if (blob.size() < 11) return false;
  const auto* p = reinterpret_cast<const uint8_t*>(blob.data());
  if (GetLE(p, 4) != blob.size() || p[blob.size() - 1] != 0xFF) return false;
  pos_ = 10;
  last_entry_ = 10;
  return true;
}

bool ZiplistReader::Next(PackedElem* e) {
  if (done_) return false;
  const auto* p = reinterpret_cast<const uint8_t*>(blob_.data());
  size_t n = blob_.size();
  auto fail = [&] {
    done_ = true;
    return false;
  };
  if (pos_ >= n) return fail();
  if (p[pos_] == 0xFF) {
    done_ = true;
    ok_ = pos_ + 1 == n;
    if (deep_) {
      uint64_t zllen = GetLE(p + 8, 2), tail = GetLE(p + 4, 4);
      ok_ = ok_ && tail == last_entry_ && (zllen == 65535 || zllen == count_);
    }
    return false;
  }
  size_t at = pos_;
  if (deep_) {
    if (p[at] == 255) return fail();
    size_t prev = p[at];
    if (prev == 254) prev = at + 5 < n ? GetLE(p + at + 1, 4) : SIZE_MAX;
    if (prev != prev_len_) return fail();
  }
  at += p[at] < 254 ? 1 : 5;  // previous entry length
  if (at >= n - 1) return fail();
  uint8_t b = p[at];
  size_t avail = n - 1 - at;
  size_t header = 1, data = 0;
  e->is_int = false;
  switch (b >> 6) {
    case 0:
      data = b & 0x3f;
      break;
    case 1:
      if (avail < 2) return fail();
      header = 2;
      data = ((b & 0x3f) << 8) | p[at + 1];
      break;
    case 2:
      if (avail < 5) return fail();
      header = 5;
      data =
          (static_cast<size_t>(p[at + 1]) << 24) | (p[at + 2] << 16) | (p[at + 3] << 8) | p[at + 4];
      break;
    default: {
      e->is_int = true;
      int nb;
      if (b == 0xC0) {
        nb = 2;
      } else if (b == 0xD0) {
        nb = 4;
      } else if (b == 0xE0) {
        nb = 8;
      } else if (b == 0xF0) {
        nb = 3;
      } else if (b == 0xFE) {
        nb = 1;
      } else if (b >= 0xF1 && b <= 0xFD) {
        nb = 0;
        e->ival = (b & 0x0f) - 1;
      } else {
        return fail();
      }
      if (avail < 1 + static_cast<size_t>(nb)) return fail();
      if (nb > 0) e->ival = SignExtend(GetLE(p + at + 1, nb), nb * 8);
      header = 1 + nb;
    }
  }
  if (header + data > avail) return fail();
  if (!e->is_int) e->sval = std::string_view(blob_.data() + at + header, data);
  last_entry_ = pos_;
  prev_len_ = at + header + data - pos_;
  pos_ = at + header + data;
  ++count_;
  return true;
}

// ---- intset -----------------------------------------------------------------------------------

bool IntsetValid(std::string_view blob) {
  if (blob.size() < 8) return false;
  const auto* p = reinterpret_cast<const uint8_t*>(blob.data());
  uint64_t enc = GetLE(p, 4), len = GetLE(p + 4, 4);
  if (enc != 2 && enc != 4 && enc != 8) return false;
  return blob.size() == 8 + enc * len;
}

size_t IntsetLength(std::string_view blob) {
  if (!IntsetValid(blob)) return 0;
  return GetLE(reinterpret_cast<const uint8_t*>(blob.data()) + 4, 4);
}

int64_t IntsetGet(std::string_view blob, size_t i) {
  const auto* p = reinterpret_cast<const uint8_t*>(blob.data());
  int enc = static_cast<int>(GetLE(p, 4));
  return SignExtend(GetLE(p + 8 + i * enc, enc), enc * 8);
}

bool IntsetForEach(std::string_view blob, void (*fn)(void*, int64_t), void* arg, bool deep) {
  if (!IntsetValid(blob)) return false;
  size_t n = IntsetLength(blob);
  for (size_t i = 0; i < n; ++i) {
    if (deep && i > 0 && IntsetGet(blob, i) <= IntsetGet(blob, i - 1)) return false;
  }
  for (size_t i = 0; i < n; ++i) fn(arg, IntsetGet(blob, i));
  return true;
}

// ---- zipmap -----------------------------------------------------------------------------------

bool ZipmapForEach(std::string_view blob,
                   void (*fn)(void*, std::string_view field, std::string_view value), void* arg) {
  const auto* p = reinterpret_cast<const uint8_t*>(blob.data());
  size_t n = blob.size(), pos = 1;
  auto read_len = [&](size_t* len) {
    if (pos >= n) return false;
    if (p[pos] < 254) {
      *len = p[pos++];
      return true;
    }
    if (p[pos] != 254 || pos + 5 > n) return false;
    *len = GetLE(p + pos + 1, 4);
    pos += 5;
    return true;
  };
  if (n < 2) return false;
  size_t count = 0;
  while (pos < n && p[pos] != 255) {
    size_t flen, vlen;
    if (!read_len(&flen) || flen > n - pos) return false;
    std::string_view field(blob.data() + pos, flen);
    pos += flen;
    if (!read_len(&vlen) || pos >= n) return false;
    size_t free = p[pos++];
    if (vlen > n - pos || free > n - pos - vlen) return false;
    std::string_view value(blob.data() + pos, vlen);
    pos += vlen + free;
    fn(arg, field, value);
    ++count;
  }
  // An empty zipmap was never written by Redis, and a header count below 254 is exact.
  return pos + 1 == n && count > 0 && (p[0] >= 254 || p[0] == count);
}

}  // namespace vireo::rdb
