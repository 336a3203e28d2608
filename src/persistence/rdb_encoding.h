// The byte-level pieces of Redis's RDB format: CRC64 (Jones polynomial, reflected, as Redis's
// crc64), LZF, the length and string encodings, and the packed blobs Redis embeds in RDB
// files (listpack, ziplist, intset) — writers for what we save, readers for what we load.
//
// All readers are bounds-checked: a corrupt or hostile blob (RESTORE takes user input) makes
// them return false, never read out of bounds.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace vireo::rdb {

// RDB constants (Redis's rdb.h values, which are part of the file format).
inline constexpr int kRdbVersion = 10;     // what we write (Redis 7.0)
inline constexpr int kMaxRdbVersion = 11;  // what we load (Redis 7.2 writes 11)

enum RdbType : uint8_t {
  kTypeString = 0,
  kTypeList = 1,
  kTypeSet = 2,
  kTypeZset = 3,
  kTypeHash = 4,
  kTypeZset2 = 5,
  kTypeModule = 6,
  kTypeModule2 = 7,
  kTypeHashZipmap = 9,
  kTypeListZiplist = 10,
  kTypeSetIntset = 11,
  kTypeZsetZiplist = 12,
  kTypeHashZiplist = 13,
  kTypeListQuicklist = 14,
  kTypeStreamListpacks = 15,
  kTypeHashListpack = 16,
  kTypeZsetListpack = 17,
  kTypeListQuicklist2 = 18,
  kTypeStreamListpacks2 = 19,
  kTypeSetListpack = 20,
  kTypeStreamListpacks3 = 21,
  // Redis 7.4 hashes with field TTLs: written only for hashes that have some, so files of
  // data without them still load in Redis 7.0/7.2.
  kTypeHashMetadata = 24,    // min expiry, count, then [relative ttl][field][value]...
  kTypeHashListpackEx = 25,  // min expiry, then a listpack of field, value, ttl triplets
  // vireo's own stream type for streams with Redis 8.x state (IDMP, NACKed entries): the
  // STREAM_LISTPACKS_2 layout followed by extension sections (docs/persistence.md). Far above
  // every type number Redis uses, so Redis rejects such a file cleanly.
  kTypeStreamVireo = 120,
};

enum RdbOpcode : uint8_t {
  kOpFunction2 = 245,
  kOpFunctionPreGa = 246,
  kOpModuleAux = 247,
  kOpIdle = 248,
  kOpFreq = 249,
  kOpAux = 250,
  kOpResizeDb = 251,
  kOpExpireTimeMs = 252,
  kOpExpireTime = 253,
  kOpSelectDb = 254,
  kOpEof = 255,
};

// Quicklist 2 node containers.
inline constexpr uint64_t kQuicklistNodePlain = 1;
inline constexpr uint64_t kQuicklistNodePacked = 2;

// ---- checksum and compression ----------------------------------------------------------------

// Redis's crc64: Jones polynomial, reflected in and out, initial value as given (0 for a new
// checksum), no final xor. Crc64(0, "123456789") == 0xe9c6d914c4b8d9ca.
uint64_t Crc64(uint64_t crc, const void* data, size_t len);

// LZF (the format of liblzf 3.x, which Redis embeds). Compress returns the compressed size, or
// 0 when the output would not fit in out_cap bytes. Decompress returns false unless the input
// expands to exactly out_len bytes.
// The most LZF output per input byte: a 3-byte back reference yields 264 bytes.
inline constexpr uint64_t kLzfMaxExpansion = 88;
size_t LzfCompress(const char* in, size_t in_len, char* out, size_t out_cap);
bool LzfDecompress(const char* in, size_t in_len, char* out, size_t out_len);

// ---- lengths and strings ---------------------------------------------------------------------

void AppendLength(std::string* out, uint64_t len);
// Redis's string encoding: small canonical integers as INT8/16/32, LZF when `compress` and the
// string is longer than 20 bytes and shrinks, else raw.
// `scratch`, when given, is reused as the compression buffer (callers writing many strings).
void AppendString(std::string* out, std::string_view s, bool compress,
                  std::string* scratch = nullptr);
// An integer value as a string object: INT8/16/32 when it fits, else its decimal text.
void AppendIntegerString(std::string* out, int64_t v);
void AppendDoubleBinary(std::string* out, double v);
void AppendMillis(std::string* out, int64_t ms);  // 8 bytes little-endian

// A canonical decimal integer as Redis would store it as an int (no sign on zero, no leading
// zeros, within int64). The listpack and RDB int encodings both use this test.
bool StringToInt64Strict(std::string_view s, int64_t* out);

// ---- listpack --------------------------------------------------------------------------------

// Builds a listpack blob entry by entry.
class ListpackWriter {
 public:
  ListpackWriter() : buf_(64, '\0') {}
  void Add(std::string_view s);  // stored as an integer when it reads as one (as Redis)
  void AddInt(int64_t v);
  size_t count() const { return count_; }
  size_t bytes() const { return size_ + 1; }
  // The finished blob (header filled in, terminator appended). The writer is spent.
  std::string Finish();
  // The same, as a view into the writer, valid until Reset(); for a writer reused per blob.
  std::string_view FinishView();
  // Starts a new blob, keeping the buffer's capacity.
  void Reset() {
    size_ = kHeader;
    count_ = 0;
  }

 private:
  static constexpr size_t kHeader = 6;
  // Where `n` more bytes go; the buffer only grows (never cleared again), and size_ counts what
  // is written, so each element is stored with plain stores rather than string appends.
  char* Room(size_t n) {
    if (buf_.size() < size_ + n) buf_.resize(std::max(size_ + n, 2 * buf_.size()));
    return buf_.data() + size_;
  }
  std::string buf_;
  size_t size_ = kHeader;
  size_t count_ = 0;
};

// One element of a packed blob: a string or an integer.
struct PackedElem {
  bool is_int = false;
  int64_t ival = 0;
  std::string_view sval;
  // The element as text; integers are formatted into buf (>= 24 bytes).
  std::string_view View(char* buf) const;
};

// Forward iteration over a listpack blob with validation of the header and every entry.
// Every entry's bounds are always checked; `deep` also checks each entry's back-length and the
// header's element count (sanitize-dump-payload yes), which memory safety does not need.
class ListpackReader {
 public:
  // False when the header is inconsistent with the blob's size.
  bool Init(std::string_view blob, bool deep = false);
  // Next element; false at the end (then ok() says whether the end was reached cleanly).
  bool Next(PackedElem* e);
  bool ok() const { return ok_; }
  // The element count in the header (65535 means "count it").
  uint32_t header_count() const { return header_count_; }

 private:
  std::string_view blob_;
  size_t pos_ = 0;
  size_t count_ = 0;
  uint32_t header_count_ = 0;
  bool ok_ = false;
  bool done_ = false;
  bool deep_ = false;
};

// Forward iteration over a ziplist blob (RDB files written by Redis 6 and older). `deep`
// also checks the header's tail offset and count and every entry's previous-entry length.
class ZiplistReader {
 public:
  bool Init(std::string_view blob, bool deep = false);
  bool Next(PackedElem* e);
  bool ok() const { return ok_; }

 private:
  std::string_view blob_;
  size_t pos_ = 0;
  size_t count_ = 0;
  size_t prev_len_ = 0;
  size_t last_entry_ = 0;
  bool ok_ = false;
  bool done_ = false;
  bool deep_ = false;
};

// An intset blob: the members in order. False when malformed (`deep`: also when the members
// are not strictly ascending, as an intset must be).
bool IntsetForEach(std::string_view blob, void (*fn)(void*, int64_t), void* arg, bool deep = false);
size_t IntsetLength(std::string_view blob);  // 0 when malformed
bool IntsetValid(std::string_view blob);
int64_t IntsetGet(std::string_view blob, size_t i);  // requires IntsetValid

// Old zipmap (RDB < 4 hashes): field/value pairs. False when malformed, empty, or when the
// header's count (exact below 254) disagrees with the pairs present.
bool ZipmapForEach(std::string_view blob,
                   void (*fn)(void*, std::string_view field, std::string_view value), void* arg);

}  // namespace vireo::rdb
