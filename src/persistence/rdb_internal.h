// Shared between the RDB writer/loader (rdb.cc) and the per-type value codecs
// (rdb_values.cc): a buffered reader over a file descriptor or a memory block that keeps the
// running CRC64, and the per-type encode/decode entry points.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "db/value.h"
#include "persistence/rdb.h"
#include "persistence/rdb_encoding.h"

namespace vireo {
struct ServerConfig;
}

namespace vireo::rdb {

class Reader {
 public:
  // Reads from fd (its current offset) through a buffer.
  explicit Reader(int fd);
  // Reads a memory block (DUMP payloads).
  explicit Reader(std::string_view data);
  // Reads what a source produces (a socket), through a buffer.
  explicit Reader(RdbByteSource source);

  bool ReadByte(uint8_t* b);
  bool Read(void* dst, size_t n);
  bool Skip(size_t n);
  // A length; *encoded is set for the 11xxxxxx special string encodings (then *len is the
  // encoding number).
  bool ReadLength(uint64_t* len, bool* encoded = nullptr);
  // A string in any of Redis's encodings. The view points into the reader's buffer (valid
  // until the next read) or into *scratch.
  bool ReadString(std::string_view* out, std::string* scratch);
  bool ReadString(std::string* out);
  // An integer stored as a string object (AUX values, stream fields).
  bool ReadInt(int64_t* out);
  bool ReadMillis(int64_t* out);       // 8 bytes little-endian
  bool ReadDoubleBinary(double* out);  // 8 bytes
  bool ReadDoubleString(double* out);  // the old ZSET format: length byte + text

  // An upper bound of the bytes left to read: exact for memory blocks and regular files,
  // unbounded for pipes. Every count or length taken from the data is checked against it
  // before anything is allocated for it (each element costs at least one byte).
  uint64_t remaining() const;
  // Deep validation (sanitize-dump-payload): structural consistency that memory safety does
  // not need (header counts, intset order, listpack back-lengths, stream node bookkeeping) is
  // checked too, as Redis does with sanitize-dump-payload yes.
  bool deep() const { return deep_; }
  void set_deep(bool deep) { deep_ = deep; }

  // Bytes consumed so far, and the CRC64 over them.
  int64_t consumed() const { return consumed_base_ + static_cast<int64_t>(pos_); }
  uint64_t crc();
  // For fd readers: moves the descriptor's offset back to just after the consumed bytes.
  void RewindUnread();
  // Bytes read ahead from the descriptor or source but not consumed.
  size_t buffered() const { return end_ - pos_; }
  bool memory() const { return fd_ < 0 && !source_; }
  // A read failed because the data ended (rather than because it was malformed): a checker
  // reports a truncated file as such, whatever decoder was reading when it ran out.
  bool hit_end() const { return hit_end_; }

 private:
  bool Fill(size_t need);
  bool ReadGrowing(uint64_t len, std::string* out);
  bool ReachedEnd() {
    hit_end_ = true;
    return false;
  }

  int fd_ = -1;
  RdbByteSource source_;
  std::vector<char> owned_;
  const char* data_ = nullptr;
  size_t pos_ = 0;
  size_t end_ = 0;
  size_t crc_pos_ = 0;
  int64_t consumed_base_ = 0;
  uint64_t crc_ = 0;
  uint64_t limit_ = UINT64_MAX;  // fd readers: bytes from the start offset to end of file
  bool deep_ = false;
  bool hit_end_ = false;
};

// The most a count read from the data may reserve up front; larger collections grow as their
// elements are actually read.
inline size_t ReserveHint(Reader& r, uint64_t count) {
  uint64_t cap = std::min<uint64_t>(r.remaining(), 1024);
  return static_cast<size_t>(std::min(count, cap));
}

// What a value decoder reports when it fails: the reason part of Redis's "Internal error in RDB
// reading" log line. Redis's wording ("Ziplist integrity check failed." etc.) where it has one.
inline constexpr const char* kShortReadDetail = "short read";
// The value decoded to an empty container (older Redis versions could write them): loading a
// file skips the key, as Redis does ("rdbLoadObject skipping empty key"); RESTORE refuses it.
inline constexpr const char* kEmptyKeyDetail = "empty key";
inline bool Fail(std::string* error, std::string_view what) {
  *error = std::string(what);
  return false;
}

// Called between the parts of a big value (a stream's nodes), so the writer can pass on what
// it has buffered instead of holding the whole value.
using Spill = std::function<void()>;

// The RDB type a value is written as, and its encoding (appended to out).
uint8_t ValueRdbType(const Value& value);
void AppendValue(std::string* out, const Value& value, bool compress, const Spill& spill = {});

// Decodes a value of RDB type `type`. False with *error set when the data is malformed or the
// type is not supported. Containers come out in the encoding Redis would choose for them
// under the server's configuration.
bool ReadValue(Reader& reader, uint8_t type, const ServerConfig& config, Value* out,
               std::string* error);

// Hashes, sets, sorted sets (rdb_types.cc) and streams (rdb_stream.cc).
uint8_t OtherRdbType(const Value& value);
uint8_t StreamRdbType(const Value& value);
void AppendStream(std::string* out, const Value& value, bool compress, const Spill& spill);
bool ReadStream(Reader& reader, uint8_t type, const ServerConfig& config, Value* out,
                std::string* error);
void AppendOtherType(std::string* out, const Value& value, bool compress, const Spill& spill);
bool ReadOtherType(Reader& reader, uint8_t type, const ServerConfig& config, Value* out,
                   std::string* error);

}  // namespace vireo::rdb
