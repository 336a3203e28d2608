// Bit-level operations on string values (SETBIT, BITCOUNT, BITPOS, BITOP, BITFIELD).
//
// A bitmap is a plain byte string; bit 0 is the most significant bit of byte 0, so bit n lives
// in byte n / 8 at mask 0x80 >> (n % 8). Reads past the end see zero bits, as if the string
// were padded with zero bytes. These functions know nothing of keys or replies.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace vireo::bitmap {

// Bits set in the whole span, a machine word at a time.
uint64_t Popcount(std::string_view bytes);

// Bits set between bit positions first and last, both inclusive and both inside the string.
uint64_t CountRange(std::string_view bytes, uint64_t first, uint64_t last);

// The position of the first bit equal to `bit` between bit positions first and last (inclusive,
// inside the string), or -1 when there is none.
int64_t FindFirst(std::string_view bytes, bool bit, uint64_t first, uint64_t last);

inline bool GetBit(std::string_view bytes, uint64_t pos) {
  const uint64_t byte = pos >> 3;
  if (byte >= bytes.size()) return false;
  return (static_cast<uint8_t>(bytes[byte]) & (0x80u >> (pos & 7))) != 0;
}

// Sets bit `pos` (inside the string) to `on`; returns its previous value.
inline bool SetBit(char* bytes, uint64_t pos, bool on) {
  auto& byte = reinterpret_cast<uint8_t&>(bytes[pos >> 3]);
  const uint8_t mask = 0x80u >> (pos & 7);
  const bool old = (byte & mask) != 0;
  byte = on ? (byte | mask) : (byte & ~mask);
  return old;
}

// BITOP's operations. Diff, Diff1, AndOr and One are Redis 8.2's:
//   DIFF  = X & ~(Y1 | Y2 | ...)     members of X in none of the others
//   DIFF1 = ~X & (Y1 | Y2 | ...)     members of some other but not of X
//   ANDOR = X & (Y1 | Y2 | ...)
//   ONE   = bits set in exactly one source
enum class Op : uint8_t { kAnd, kOr, kXor, kNot, kDiff, kDiff1, kAndOr, kOne };

// Combines the sources (shorter ones zero-padded) into *out, as long as the longest source.
// kNot takes exactly one source; kDiff, kDiff1 and kAndOr at least two (callers check).
void Combine(Op op, std::span<const std::string_view> sources, std::string* out);

// ---------------------------------------------------------------------------------------------
// BITFIELD integers: big-endian bit order, any width 1..64 signed or 1..63 unsigned, at any bit
// offset.

struct FieldType {
  bool is_signed = false;
  uint8_t bits = 0;
};

// Parses "i8", "u16"...: 'i' or 'u' (lower case) then a width in 1..64 (signed) or 1..63.
bool ParseFieldType(std::string_view text, FieldType* out);

// Reads a field that may extend past the end of the string (zero bits there). Signed fields are
// sign-extended; the result's bits are what BITFIELD replies.
uint64_t GetUnsigned(std::string_view bytes, uint64_t offset, unsigned bits);
int64_t GetSigned(std::string_view bytes, uint64_t offset, unsigned bits);
// Writes the low `bits` bits of value; the string must already cover the field.
void SetField(char* bytes, uint64_t offset, unsigned bits, uint64_t value);

enum class Overflow : uint8_t { kWrap, kSat, kFail };

// The value a field takes when `value + incr` is stored in it (SET passes the new value and 0).
// Returns false when the result does not fit and the mode is kFail; otherwise *result is the
// sum, wrapped or saturated per `mode`. Signed results are sign-extended to 64 bits.
// Keeps Redis's quirk for SET of a value 2^63 or more below the type's maximum (a very negative
// argument to a narrow signed type): it counts as overflow upwards, so SAT stores the maximum.
bool AddSigned(int64_t value, int64_t incr, unsigned bits, Overflow mode, int64_t* result);
bool AddUnsigned(uint64_t value, int64_t incr, unsigned bits, Overflow mode, uint64_t* result);

}  // namespace vireo::bitmap
