// HyperLogLog in Redis's exact byte format, so values move between vireo and Redis unchanged
// (DUMP/RESTORE, RDB, replication) and estimates agree to the unit.
//
// The value is a plain string: a 16-byte header ("HYLL", encoding byte, 3 reserved bytes, the
// cached cardinality little endian with bit 63 set when the cache is stale) followed by the
// registers, P = 14 (16384 registers of 6 bits):
//   dense:  12288 bytes, register i at bit 6*i, least significant bits first;
//   sparse: run-length opcodes, ZERO 00xxxxxx (1..64 zero registers), XZERO 01xxxxxx yyyyyyyy
//           (1..16384 zero registers), VAL 1vvvvvxx (1..4 registers of value 1..32).
// Elements hash with MurmurHash64A (seed 0xadc83b19): the low 14 bits pick the register, the
// run of zeros above them (plus one) is the candidate value.
//
// Functions take the string itself; none of them knows about keys or clients.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace vireo::hll {

inline constexpr int kPrecision = 14;
inline constexpr int kQ = 64 - kPrecision;  // hash bits left for the zero run
inline constexpr size_t kRegisters = size_t{1} << kPrecision;
inline constexpr size_t kHeaderSize = 16;
inline constexpr size_t kDenseSize = kHeaderSize + (kRegisters * 6 + 7) / 8;
inline constexpr uint8_t kDense = 0;
inline constexpr uint8_t kSparse = 1;
inline constexpr uint8_t kSparseMaxValue = 32;  // larger values force the dense encoding

inline constexpr std::string_view kCorruptError = "INVALIDOBJ Corrupted HLL object detected";
inline constexpr std::string_view kNotHllError =
    "WRONGTYPE Key is not a valid HyperLogLog string value.";

uint64_t MurmurHash64A(const void* data, size_t len, uint64_t seed);

// The register `element` falls in (*index) and the length of its 0...01 pattern (1..kQ+1).
uint8_t PatternLength(std::string_view element, uint32_t* index);

// An empty HyperLogLog, sparse (one XZERO run covering every register), cached count 0.
std::string NewSparse();

// Whether a string value passes Redis's HLL check: at least a header, "HYLL", a known
// encoding and, when dense, exactly the dense size. The sparse opcodes are checked lazily,
// by the operations that walk them.
bool HasValidHeader(std::string_view hll);
inline uint8_t Encoding(std::string_view hll) { return static_cast<uint8_t>(hll[4]); }

// Raises register `index` to `value` if it is lower. Returns 1 when it changed, 0 when not, -1
// when the sparse opcodes are corrupt. Promotes a sparse value to dense when `value` exceeds
// kSparseMaxValue or the sparse form would outgrow `sparse_max_bytes`
// (hll-sparse-max-bytes). Does not touch the cached count.
int SetRegister(std::string* hll, uint32_t index, uint8_t value, size_t sparse_max_bytes);
// Adds an element: hashes it and raises its register. Same return values as SetRegister.
int Add(std::string* hll, std::string_view element, size_t sparse_max_bytes);

// Rewrites a sparse value as dense (header and cached count kept). False, leaving the value
// alone, when the opcodes are corrupt. A dense value is left as is.
bool ToDense(std::string* hll);

// max[i] = MAX(max[i], register i) over the kRegisters bytes of `max`. False when the sparse
// opcodes are corrupt (they overrun or do not cover every register).
bool MergeInto(std::string_view hll, uint8_t* max);

// The register values one per byte (kRegisters of them); false when corrupt.
bool Unpack(std::string_view hll, uint8_t* registers);

// The estimate from the registers (Ertl's improved estimator, as Redis 5+). nullopt when a
// sparse value is corrupt.
std::optional<uint64_t> Estimate(std::string_view hll);
// The same from one byte per register (kRegisters bytes), as a multi-key PFCOUNT merges them.
uint64_t EstimateRegisters(const uint8_t* registers);

// The cached count, when the cache is valid.
std::optional<uint64_t> CachedCount(std::string_view hll);
void StoreCachedCount(std::string* hll, uint64_t count);
void InvalidateCache(std::string* hll);

// PFDEBUG DECODE's text for a sparse value: "z:len", "Z:len", "v:value,len" separated by
// single spaces.
std::string DecodeSparse(std::string_view hll);

// PFSELFTEST: dense register access, then estimates of the dense and sparse forms for a stream
// of distinct elements (they must agree, stay sparse while small and within 6 standard errors).
// Returns an empty string on success, else Redis's TESTFAILED message.
std::string SelfTest(uint64_t seed, size_t sparse_max_bytes);

}  // namespace vireo::hll
