#include "tools/check_rdb.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <new>
#include <stdexcept>
#include <string>
#include <string_view>

#include "core/config.h"
#include "persistence/rdb_encoding.h"
#include "persistence/rdb_internal.h"
#include "util/clock.h"

namespace vireo::tools {
namespace {

using rdb::Reader;

// What the checker was doing when an error struck: the report names it as Redis's does
// ("[additional info] While doing: read-key").
enum class Doing {
  kStart,
  kReadType,
  kReadExpire,
  kReadKey,
  kReadValue,
  kChecksum,
  kReadLen,
  kReadAux,
  kReadModuleAux,
  kReadFunctions
};

const char* DoingName(Doing doing) {
  switch (doing) {
    case Doing::kStart:
      return "start";
    case Doing::kReadType:
      return "read-type";
    case Doing::kReadExpire:
      return "read-expire";
    case Doing::kReadKey:
      return "read-key";
    case Doing::kReadValue:
      return "read-object-value";
    case Doing::kChecksum:
      return "check-sum";
    case Doing::kReadLen:
      return "read-len";
    case Doing::kReadAux:
      return "read-aux";
    case Doing::kReadModuleAux:
      return "read-module-aux";
    case Doing::kReadFunctions:
      return "read-functions";
  }
  return "unknown";
}

// The names Redis's report gives each value type number; "" for a number that is no type.
const char* TypeName(int type) {
  switch (type) {
    case rdb::kTypeString:
      return "string";
    case rdb::kTypeList:
      return "list-linked";
    case rdb::kTypeSet:
      return "set-hashtable";
    case rdb::kTypeZset:
      return "zset-v1";
    case rdb::kTypeHash:
      return "hash-hashtable";
    case rdb::kTypeZset2:
      return "zset-v2";
    case rdb::kTypeModule:
      return "module-pre-release";
    case rdb::kTypeModule2:
      return "module-value";
    case rdb::kTypeHashZipmap:
      return "hash-zipmap";
    case rdb::kTypeListZiplist:
      return "list-ziplist";
    case rdb::kTypeSetIntset:
      return "set-intset";
    case rdb::kTypeZsetZiplist:
      return "zset-ziplist";
    case rdb::kTypeHashZiplist:
      return "hash-ziplist";
    case rdb::kTypeListQuicklist:
      return "quicklist";
    case rdb::kTypeStreamListpacks:
      return "stream";
    case rdb::kTypeHashListpack:
      return "hash-listpack";
    case rdb::kTypeZsetListpack:
      return "zset-listpack";
    case rdb::kTypeListQuicklist2:
      return "quicklist-v2";
    case rdb::kTypeStreamListpacks2:
      return "stream-v2";
    case rdb::kTypeSetListpack:
      return "set-listpack";
    case rdb::kTypeStreamListpacks3:
      return "stream-v3";
    // The types vireo writes beyond Redis 7.2's (rdb_encoding.h).
    case rdb::kTypeHashMetadata:
      return "hash-metadata";
    case rdb::kTypeHashListpackEx:
      return "hash-listpack-ex";
    case rdb::kTypeStreamVireo:
      return "stream-vireo";
    default:
      return "";
  }
}

// One run over an image: the counters and the state an error report shows.
class RdbCheck {
 public:
  RdbCheck(Reader& reader, std::string name) : r_(reader), name_(std::move(name)) {}

  bool Run() {
    Info(fmt::format("Checking RDB file {}", name_));
    bool ok = false;
    // Lengths are checked against the file before anything is allocated for them; what is
    // left (a huge but well-formed value) is reported like a short read.
    try {
      ok = Check();
    } catch (const std::bad_alloc&) {
      Error("Unexpected EOF reading RDB file");
    } catch (const std::length_error&) {
      Error("Unexpected EOF reading RDB file");
    }
    if (ok) {
      Info("\\o/ RDB looks OK! \\o/");
      ShowCounters();
    }
    std::fflush(stdout);
    return ok;
  }

 private:
  bool Check() {
    char magic[9];
    if (!r_.Read(magic, sizeof(magic))) return Eof();
    if (memcmp(magic, "REDIS", 5) != 0) {
      return Error("Wrong signature trying to load DB from file");
    }
    const int version = std::atoi(std::string(magic + 5, 4).c_str());
    if (version < 1 || version > rdb::kMaxRdbVersion) {
      return Error(fmt::format("Can't handle RDB format version {}", version));
    }
    const int64_t now = NowMs();
    int64_t expire = -1;
    std::string aux_key, aux_value, library;
    while (true) {
      doing_ = Doing::kReadType;
      uint8_t type;
      if (!r_.ReadByte(&type)) return Eof();
      uint64_t len = 0;
      switch (type) {
        case rdb::kOpExpireTime: {
          doing_ = Doing::kReadExpire;
          char b[4];
          if (!r_.Read(b, 4)) return Eof();
          int32_t seconds;
          memcpy(&seconds, b, 4);  // little-endian, as every host vireo runs on
          expire = static_cast<int64_t>(seconds) * 1000;
          continue;
        }
        case rdb::kOpExpireTimeMs:
          doing_ = Doing::kReadExpire;
          if (!r_.ReadMillis(&expire)) return Eof();
          continue;
        case rdb::kOpFreq: {
          uint8_t freq;
          if (!r_.ReadByte(&freq)) return Eof();
          continue;
        }
        case rdb::kOpIdle:
          if (!r_.ReadLength(&len)) return Eof();
          continue;
        case rdb::kOpSelectDb:
          doing_ = Doing::kReadLen;
          if (!r_.ReadLength(&len)) return Eof();
          Info(fmt::format("Selecting DB ID {}", len));
          continue;
        case rdb::kOpResizeDb:
          doing_ = Doing::kReadLen;
          if (!r_.ReadLength(&len) || !r_.ReadLength(&len)) return Eof();
          continue;
        case rdb::kOpAux:
          doing_ = Doing::kReadAux;
          if (!r_.ReadString(&aux_key) || !r_.ReadString(&aux_value)) return Eof();
          Info(fmt::format("AUX FIELD {} = '{}'", aux_key, aux_value));
          continue;
        case rdb::kOpModuleAux:
          doing_ = Doing::kReadModuleAux;
          return Error("Module auxiliary data is not supported");
        case rdb::kOpFunctionPreGa:
          return Error(fmt::format("Pre-release function format not supported {}", version));
        case rdb::kOpFunction2:
          // The library's code is only read: compiling it needs the scripting engine, and
          // redis-check-rdb does not compile it either.
          doing_ = Doing::kReadFunctions;
          if (!r_.ReadString(&library)) return Eof();
          continue;
        case rdb::kOpEof:
          return CheckChecksum(version);
        default:
          break;
      }
      if (*TypeName(type) == '\0') return Error(fmt::format("Invalid object type: {}", type));
      key_type_ = type;
      doing_ = Doing::kReadKey;
      if (!r_.ReadString(&key_)) return Eof();
      reading_key_ = true;
      ++keys_;
      doing_ = Doing::kReadValue;
      Value value;
      std::string error;
      if (!rdb::ReadValue(r_, type, config_, &value, &error)) {
        // A value cut off by the end of the file fails its decoder in many ways.
        if (error == "short read" || r_.hit_end()) return Eof();
        return Error(fmt::format("Bad value of type {}: {}", type, error));
      }
      if (expire != -1) {
        ++expires_;
        if (expire < now) ++already_expired_;
      }
      reading_key_ = false;
      key_type_ = -1;
      expire = -1;
    }
  }

  bool CheckChecksum(int version) {
    // Images before version 5 carry no checksum.
    if (version < 5) return true;
    doing_ = Doing::kChecksum;
    const uint64_t expected = r_.crc();
    char b[8];
    if (!r_.Read(b, 8)) return Eof();
    uint64_t stored;
    memcpy(&stored, b, 8);
    if (stored == 0) {
      Info("RDB file was saved with checksum disabled: no check performed.");
    } else if (stored != expected) {
      return Error("RDB CRC error");
    } else {
      Info("Checksum OK");
    }
    return true;
  }

  void Info(std::string_view message) { fmt::print("[offset {}] {}\n", r_.consumed(), message); }

  bool Eof() { return Error("Unexpected EOF reading RDB file"); }

  bool Error(std::string_view message) {
    fmt::print("--- RDB ERROR DETECTED ---\n");
    Info(message);
    fmt::print("[additional info] While doing: {}\n", DoingName(doing_));
    if (reading_key_) fmt::print("[additional info] Reading key '{}'\n", key_);
    if (key_type_ != -1) {
      const char* name = TypeName(key_type_);
      fmt::print("[additional info] Reading type {} ({})\n", key_type_,
                 *name != '\0' ? name : "unknown");
    }
    ShowCounters();
    return false;
  }

  void ShowCounters() {
    fmt::print("[info] {} keys read\n", keys_);
    fmt::print("[info] {} expires\n", expires_);
    fmt::print("[info] {} already expired\n", already_expired_);
  }

  Reader& r_;
  const std::string name_;
  // Defaults: the encodings a decoded value gets do not matter to the check.
  const ServerConfig config_;
  Doing doing_ = Doing::kStart;
  std::string key_;
  bool reading_key_ = false;
  int key_type_ = -1;
  uint64_t keys_ = 0, expires_ = 0, already_expired_ = 0;
};

}  // namespace

bool CheckRdbImage(int fd, const std::string& name) {
  Reader reader(fd);
  // Deep sanitization, as redis-check-rdb turns on sanitize-dump-payload.
  reader.set_deep(true);
  RdbCheck check(reader, name);
  bool ok = check.Run();
  if (ok) reader.RewindUnread();
  return ok;
}

int CheckRdbMain(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "Usage: %s <rdb-file-name>\n", argv[0]);
    return 1;
  }
  if (strcmp(argv[1], "-v") == 0 || strcmp(argv[1], "--version") == 0) {
    std::printf("vireo-check-rdb %s\n", VIREO_VERSION);
    return 0;
  }
  const std::string path = argv[1];
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    fmt::print("[offset 0] Checking RDB file {}\n", path);
    fmt::print("--- RDB ERROR DETECTED ---\n[offset 0] Cannot open file {}: {}\n", path,
               strerror(errno));
    return 1;
  }
  bool ok = CheckRdbImage(fd, path);
  close(fd);
  return ok ? 0 : 1;
}

}  // namespace vireo::tools
