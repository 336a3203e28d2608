#include "persistence/rdb.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <ctime>
#include <new>
#include <stdexcept>

#include "core/child_processes.h"
#include "core/version.h"
#include "db/database.h"
#include "db/eviction.h"
#include "persistence/persistence_host.h"
#include "persistence/rdb_internal.h"
#include "scripting/scripting.h"
#include "types/hash_object.h"
#include "util/clock.h"
#include "util/strings.h"

namespace vireo {

using namespace rdb;  // NOLINT: the format's constants are used throughout

namespace {

constexpr size_t kReadBuffer = 1 << 20;
constexpr size_t kWriteBuffer = 1 << 20;
constexpr const char* kShortReadOrOom =
    "Short read or OOM loading DB. Unrecoverable error, aborting now.";

uint64_t LoadLE(const char* p, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(p[i]);
  return v;
}

}  // namespace

// ---- Reader -----------------------------------------------------------------------------------

namespace rdb {

Reader::Reader(int fd) : fd_(fd), owned_(kReadBuffer) {
  data_ = owned_.data();
  struct stat st {};
  off_t at = lseek(fd, 0, SEEK_CUR);
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && at >= 0 && st.st_size >= at) {
    limit_ = static_cast<uint64_t>(st.st_size - at);
  }
}

Reader::Reader(std::string_view data) : data_(data.data()), end_(data.size()) {}

Reader::Reader(RdbByteSource source) : source_(std::move(source)), owned_(kReadBuffer) {
  data_ = owned_.data();
}

uint64_t Reader::remaining() const {
  if (memory()) return end_ - pos_;
  if (limit_ == UINT64_MAX) return UINT64_MAX;
  uint64_t used = static_cast<uint64_t>(consumed());
  return used >= limit_ ? 0 : limit_ - used;
}

bool Reader::Fill(size_t need) {
  if (end_ - pos_ >= need) return true;
  if (memory()) {
    hit_end_ = true;
    return false;
  }
  crc_ = Crc64(crc_, data_ + crc_pos_, pos_ - crc_pos_);
  size_t rem = end_ - pos_;
  memmove(owned_.data(), owned_.data() + pos_, rem);
  consumed_base_ += static_cast<int64_t>(pos_);
  pos_ = 0;
  crc_pos_ = 0;
  end_ = rem;
  if (need > owned_.size()) owned_.resize(need);
  data_ = owned_.data();
  while (end_ < need) {
    ssize_t n = source_ ? source_(owned_.data() + end_, owned_.size() - end_)
                        : ::read(fd_, owned_.data() + end_, owned_.size() - end_);
    if (n < 0 && errno == EINTR && !source_) continue;
    if (n <= 0) {
      if (n == 0) hit_end_ = true;
      return false;
    }
    end_ += static_cast<size_t>(n);
  }
  return true;
}

bool Reader::ReadByte(uint8_t* b) {
  if (pos_ == end_ && !Fill(1)) return false;
  *b = static_cast<uint8_t>(data_[pos_++]);
  return true;
}

bool Reader::Read(void* dst, size_t n) {
  auto* out = static_cast<char*>(dst);
  while (n > 0) {
    if (pos_ == end_ && !Fill(1)) return false;
    size_t take = std::min(n, end_ - pos_);
    memcpy(out, data_ + pos_, take);
    pos_ += take;
    out += take;
    n -= take;
  }
  return true;
}

bool Reader::Skip(size_t n) {
  while (n > 0) {
    if (pos_ == end_ && !Fill(1)) return false;
    size_t take = std::min(n, end_ - pos_);
    pos_ += take;
    n -= take;
  }
  return true;
}

bool Reader::ReadLength(uint64_t* len, bool* encoded) {
  if (encoded != nullptr) *encoded = false;
  uint8_t b;
  if (!ReadByte(&b)) return false;
  switch (b >> 6) {
    case 0:
      *len = b & 0x3f;
      return true;
    case 1: {
      uint8_t b2;
      if (!ReadByte(&b2)) return false;
      *len = ((b & 0x3f) << 8) | b2;
      return true;
    }
    case 2: {
      int n = b == 0x80 ? 4 : b == 0x81 ? 8 : 0;
      if (n == 0) return false;
      uint8_t bytes[8];
      if (!Read(bytes, n)) return false;
      uint64_t v = 0;
      for (int i = 0; i < n; ++i) v = (v << 8) | bytes[i];
      *len = v;
      return true;
    }
    default:
      if (encoded == nullptr) return false;
      *encoded = true;
      *len = b & 0x3f;
      return true;
  }
}

bool Reader::ReadString(std::string_view* out, std::string* scratch) {
  uint64_t len;
  bool encoded;
  if (!ReadLength(&len, &encoded)) return false;
  if (encoded) {
    if (len <= 2) {
      int n = 1 << len;
      char bytes[4];
      if (!Read(bytes, n)) return false;
      uint64_t u = LoadLE(bytes, n);
      int64_t v = n == 1   ? static_cast<int8_t>(u)
                  : n == 2 ? static_cast<int16_t>(u)
                           : static_cast<int32_t>(u);
      scratch->resize(kInt64BufSize);
      scratch->resize(FormatInt64(v, scratch->data()));
      *out = *scratch;
      return true;
    }
    if (len != 3) return false;
    uint64_t clen, ulen;
    if (!ReadLength(&clen) || !ReadLength(&ulen)) return false;
    // The compressed bytes must be there, and LZF expands at most kLzfMaxExpansion times:
    // both are checked before the output is allocated.
    if (clen > remaining()) return ReachedEnd();
    if (clen > (uint64_t{1} << 48) || ulen > clen * kLzfMaxExpansion) {
      return false;
    }
    std::string compressed;
    const char* src;
    if (clen <= kReadBuffer && Fill(clen)) {
      src = data_ + pos_;
      pos_ += clen;
    } else {
      if (!ReadGrowing(clen, &compressed)) return false;
      src = compressed.data();
    }
    scratch->resize(ulen);
    if (!LzfDecompress(src, clen, scratch->data(), ulen)) return false;
    *out = *scratch;
    return true;
  }
  if (len > remaining()) return ReachedEnd();
  if (len <= kReadBuffer || memory()) {
    if (!Fill(len)) return false;
    *out = std::string_view(data_ + pos_, len);
    pos_ += len;
    return true;
  }
  if (!ReadGrowing(len, scratch)) return false;
  *out = *scratch;
  return true;
}

bool Reader::ReadGrowing(uint64_t len, std::string* out) {
  // Grows with the bytes actually read, so a length from a pipe (no size to check it
  // against) costs no more memory than the data that really arrives.
  constexpr uint64_t kStep = uint64_t{64} << 20;
  out->clear();
  while (out->size() < len) {
    size_t at = out->size();
    size_t step = static_cast<size_t>(std::min<uint64_t>(len - at, kStep));
    out->resize(at + step);
    if (!Read(out->data() + at, step)) return false;
  }
  return true;
}

bool Reader::ReadString(std::string* out) {
  std::string scratch;
  std::string_view v;
  if (!ReadString(&v, &scratch)) return false;
  out->assign(v);
  return true;
}

bool Reader::ReadInt(int64_t* out) {
  std::string s;
  return ReadString(&s) && ParseInt64(s, out);
}

bool Reader::ReadMillis(int64_t* out) {
  char b[8];
  if (!Read(b, 8)) return false;
  *out = static_cast<int64_t>(LoadLE(b, 8));
  return true;
}

bool Reader::ReadDoubleBinary(double* out) {
  char b[8];
  if (!Read(b, 8)) return false;
  uint64_t bits = LoadLE(b, 8);
  memcpy(out, &bits, 8);
  return true;
}

bool Reader::ReadDoubleString(double* out) {
  uint8_t len;
  if (!ReadByte(&len)) return false;
  if (len == 253) {
    *out = NAN;
  } else if (len == 254) {
    *out = INFINITY;
  } else if (len == 255) {
    *out = -INFINITY;
  } else {
    char buf[256];
    if (!Read(buf, len)) return false;
    buf[len] = '\0';
    char* end;
    *out = strtod(buf, &end);
    if (end != buf + len) return false;
  }
  return true;
}

uint64_t Reader::crc() {
  crc_ = Crc64(crc_, data_ + crc_pos_, pos_ - crc_pos_);
  crc_pos_ = pos_;
  return crc_;
}

void Reader::RewindUnread() {
  if (fd_ >= 0 && end_ > pos_) lseek(fd_, -static_cast<off_t>(end_ - pos_), SEEK_CUR);
  end_ = pos_;
}

}  // namespace rdb

// ---- Writer -----------------------------------------------------------------------------------

namespace {

class Writer {
 public:
  Writer(int fd, bool checksum, const std::function<std::string(std::string_view)>& sink)
      : fd_(fd), checksum_(checksum), sink_(sink) {
    buf_.reserve(kWriteBuffer * 2);
  }
  std::string& buf() { return buf_; }
  bool MaybeFlush() { return buf_.size() < kWriteBuffer ? error_.empty() : Flush(); }
  bool Flush() {
    if (!error_.empty()) return false;
    if (checksum_) crc_ = Crc64(crc_, buf_.data(), buf_.size());
    if (sink_) {
      error_ = sink_(buf_);
      buf_.clear();
      return error_.empty();
    }
    const char* p = buf_.data();
    size_t left = buf_.size();
    while (left > 0) {
      ssize_t n = ::write(fd_, p, left);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        error_ = n < 0 ? std::strerror(errno) : "short write";
        return false;
      }
      p += n;
      left -= static_cast<size_t>(n);
    }
    buf_.clear();
    return true;
  }
  uint64_t crc() const { return crc_; }
  const std::string& error() const { return error_; }

 private:
  int fd_;
  bool checksum_;
  const std::function<std::string(std::string_view)>& sink_;
  uint64_t crc_ = 0;
  std::string buf_;
  std::string error_;
};

void AppendAux(std::string* out, std::string_view key, std::string_view value) {
  out->push_back(static_cast<char>(kOpAux));
  AppendString(out, key, false);
  AppendString(out, value, false);
}

// Which access data goes before each key: Redis writes the idle time under the LRU policies
// and the (decayed) counter under the LFU ones, nothing under the others.
struct AccessHintMode {
  bool idle = false;
  bool freq = false;
  int lfu_decay_time = 1;
  int64_t now_ms = 0;
};

AccessHintMode AccessHintModeOf(PersistenceHost& host) {
  const EvictionPolicy policy = host.PersistedEvictionPolicy();
  AccessHintMode mode;
  mode.idle = policy == EvictionPolicy::kAllKeysLru || policy == EvictionPolicy::kVolatileLru;
  mode.freq = IsLfu(policy);
  mode.lfu_decay_time = host.PersistedKeyspaceOptions().access.lfu_decay_time;
  mode.now_ms = NowMs();
  return mode;
}

void AppendAccessHint(std::string* out, uint32_t clock, const AccessHintMode& mode) {
  if (mode.idle) {
    out->push_back(static_cast<char>(kOpIdle));
    AppendLength(out, static_cast<uint64_t>(LruIdleMs(clock, mode.now_ms) / 1000));
  }
  if (mode.freq) {
    out->push_back(static_cast<char>(kOpFreq));
    out->push_back(static_cast<char>(LfuDecayed(clock, mode.now_ms, mode.lfu_decay_time)));
  }
}

}  // namespace

void RdbTestDelay(int64_t usec, uint64_t* calls) {
  if (usec == 0) return;
  if (usec < 0) {
    if (++*calls % static_cast<uint64_t>(-usec) != 0) return;
    usec = 1;
  }
  usleep(static_cast<useconds_t>(usec));
}

std::string RdbSave(PersistenceHost& host, int fd, const RdbSaveOptions& options) {
  Writer w(fd, options.checksum, options.sink);
  std::string& b = w.buf();
  char version[16];
  snprintf(version, sizeof(version), "REDIS%04d", kRdbVersion);
  b.append(version);
  AppendAux(&b, "redis-ver", kRedisCompatVersion);
  AppendAux(&b, "redis-bits", "64");
  AppendAux(&b, "ctime", std::to_string(time(nullptr)));
  AppendAux(&b, "used-mem", std::to_string(host.PersistedUsedMemory()));
  AppendAux(&b, "aof-base", options.aof_base ? "1" : "0");
  RdbReplicationInfo repl;
  if (options.replication_info && host.PersistedReplicationInfo(&repl)) {
    AppendAux(&b, "repl-stream-db", std::to_string(repl.stream_db));
    AppendAux(&b, "repl-id", repl.replid);
    AppendAux(&b, "repl-offset", std::to_string(repl.offset));
  }
  if ((options.exclude & kRdbExcludeFunctions) == 0) {
    for (const auto& [name, code] : host.FunctionLibraries().EnumerateLibraries()) {
      b.push_back(static_cast<char>(kOpFunction2));
      AppendString(&b, code, options.compress);
    }
  }
  const AccessHintMode access = AccessHintModeOf(host);
  // A big stream goes out node by node rather than whole.
  const rdb::Spill spill = [&w] { w.MaybeFlush(); };
  uint64_t delay_calls = 0;
  const ServerConfig& config = host.PersistenceConfig();
  for (int i = 0; i < host.PersistedDbCount() && (options.exclude & kRdbExcludeData) == 0; ++i) {
    Database& db = host.PersistedDb(i);
    if (db.size() == 0) continue;
    b.push_back(static_cast<char>(kOpSelectDb));
    AppendLength(&b, static_cast<uint64_t>(i));
    b.push_back(static_cast<char>(kOpResizeDb));
    AppendLength(&b, db.size());
    AppendLength(&b, db.expires_size());
    bool ok = true;
    db.ForEach([&](DbEntry* entry) {
      DbEntry& e = *entry;
      if (!ok) return;
      if (e.has_expire()) {
        b.push_back(static_cast<char>(kOpExpireTimeMs));
        AppendMillis(&b, db.GetExpire(&e));
      }
      AppendAccessHint(&b, e.value.access_clock(), access);
      b.push_back(static_cast<char>(ValueRdbType(e.value)));
      AppendString(&b, e.key.view(), options.compress);
      AppendValue(&b, e.value, options.compress, spill);
      ok = w.MaybeFlush();
      host.PersistenceChildren().ChildKeyProcessed();
      RdbTestDelay(config.rdb_key_save_delay, &delay_calls);
    });
    if (!ok) return w.error();
  }
  b.push_back(static_cast<char>(kOpEof));
  if (!w.Flush()) return w.error();
  AppendMillis(&b, options.checksum ? static_cast<int64_t>(w.crc()) : 0);
  if (!w.Flush()) return w.error();
  return "";
}

std::string RdbSaveFile(PersistenceHost& host, const std::string& path,
                        const RdbSaveOptions& options) {
  std::string dir = ".";
  if (size_t slash = path.rfind('/'); slash != std::string::npos) dir = path.substr(0, slash);
  std::string temp = dir + "/temp-" + std::to_string(getpid()) + ".rdb";
  int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return std::strerror(errno);
  std::string err = RdbSave(host, fd, options);
  if (err.empty() && fsync(fd) != 0) err = std::strerror(errno);
  if (::close(fd) != 0 && err.empty()) err = std::strerror(errno);
  if (err.empty() && rename(temp.c_str(), path.c_str()) != 0) err = std::strerror(errno);
  if (!err.empty()) unlink(temp.c_str());
  return err;
}

// ---- Loader -----------------------------------------------------------------------------------

namespace {

void ReadReplicationAux(std::string_view key, std::string_view value, RdbReplicationInfo* info) {
  int64_t n = 0;
  if (key == "repl-id") {
    info->replid = std::string(value);
  } else if (key == "repl-offset" && ParseInt64(value, &n)) {
    info->offset = n;
  } else if (key == "repl-stream-db" && ParseInt64(value, &n) && n >= 0 && n < 1 << 16) {
    info->stream_db = static_cast<int>(n);
  }
}

// What Redis logs of an image's AUX fields as it loads them (tools and tests watch for
// "Loading RDB produced by version").
void LogAux(std::string_view key, std::string_view value) {
  int64_t n = 0;
  if (key == "redis-ver") {
    spdlog::info("Loading RDB produced by version {}", value);
  } else if (key == "ctime" && ParseInt64(value, &n)) {
    spdlog::info("RDB age {} seconds", std::max<int64_t>(0, time(nullptr) - n));
  } else if (key == "used-mem" && ParseInt64(value, &n)) {
    spdlog::info("RDB memory usage when created {:.2f} Mb", static_cast<double>(n) / (1024 * 1024));
  } else if (key == "aof-preamble" && ParseInt64(value, &n) && n != 0) {
    spdlog::info("RDB has an AOF tail");
  } else if (key == "aof-base" && ParseInt64(value, &n) && n != 0) {
    spdlog::info("RDB is base AOF");
  }
}

std::string LoadImage(PersistenceHost& host, Reader& r, const RdbLoadOptions& options,
                      RdbLoadStats* stats) {
  const std::string kShort = kShortReadOrOom;
  const ServerConfig& config = host.PersistenceConfig();
  const int db_count = host.PersistedDbCount();
  uint64_t delay_calls = 0;
  char magic[9];
  if (!r.Read(magic, 9)) return kShort;
  if (memcmp(magic, "REDIS", 5) != 0) return "Wrong signature trying to load DB from file";
  int version = 0;
  for (int i = 5; i < 9; ++i) {
    if (magic[i] < '0' || magic[i] > '9') return "Wrong signature trying to load DB from file";
    version = version * 10 + (magic[i] - '0');
  }
  if (version < 1 || version > kMaxRdbVersion) {
    return "Can't handle RDB format version " + std::to_string(version);
  }
  stats->rdb_version = version;
  int64_t now = NowMs();
  int dbid = 0;
  int64_t expire = -1;
  // IDLE / FREQ opcodes before the next key; -1 when absent.
  int64_t lru_idle = -1, lfu_freq = -1;
  std::string key_scratch, error;
  auto target_db = [&](int index) -> Database& {
    return options.target_dbs.empty() ? host.PersistedDb(index) : *options.target_dbs[index];
  };
  int64_t next_progress = options.progress_interval;
  while (true) {
    if (options.progress && r.consumed() >= next_progress) {
      next_progress = r.consumed() + options.progress_interval;
      if (!options.progress(r.consumed())) return "Loading aborted";
    }
    uint8_t type;
    if (!r.ReadByte(&type)) return kShort;
    if (type == kOpExpireTime) {
      char b[4];
      if (!r.Read(b, 4)) return kShort;
      expire = static_cast<int64_t>(static_cast<int32_t>(LoadLE(b, 4))) * 1000;
      continue;
    }
    if (type == kOpExpireTimeMs) {
      if (!r.ReadMillis(&expire)) return kShort;
      continue;
    }
    if (type == kOpFreq) {
      uint8_t freq;
      if (!r.ReadByte(&freq)) return kShort;
      lfu_freq = freq;
      continue;
    }
    if (type == kOpIdle) {
      uint64_t idle;
      if (!r.ReadLength(&idle)) return kShort;
      lru_idle = idle > static_cast<uint64_t>(INT64_MAX) ? INT64_MAX : static_cast<int64_t>(idle);
      continue;
    }
    if (type == kOpEof) break;
    if (type == kOpSelectDb) {
      uint64_t id;
      if (!r.ReadLength(&id)) return kShort;
      if (id >= static_cast<uint64_t>(db_count)) {
        return "FATAL: Data file was created with a Redis server configured to handle more "
               "than " +
               std::to_string(db_count) + " databases. Exiting\n";
      }
      dbid = static_cast<int>(id);
      continue;
    }
    if (type == kOpResizeDb) {
      uint64_t a, b;
      if (!r.ReadLength(&a) || !r.ReadLength(&b)) return kShort;
      continue;
    }
    if (type == kOpAux) {
      std::string k, v;
      if (!r.ReadString(&k) || !r.ReadString(&v)) return kShort;
      if (k == "aof-base") stats->aof_base = v == "1";
      ReadReplicationAux(k, v, &stats->replication);
      LogAux(k, v);
      continue;
    }
    if (type == kOpModuleAux) return "Module auxiliary data is not supported";
    if (type == kOpFunctionPreGa) return "Pre-release function format not supported.";
    if (type == kOpFunction2) {
      std::string code;
      if (!r.ReadString(&code)) return kShort;
      if (options.deferred_libraries != nullptr) {
        options.deferred_libraries->push_back(std::move(code));
        continue;
      }
      std::string err;
      if (host.FunctionLibraries().LoadLibrary(code, options.allow_duplicates, &err).empty()) {
        return "Failed loading library: " + err;
      }
      continue;
    }
    std::string_view key_view;
    if (!r.ReadString(&key_view, &key_scratch)) return kShort;
    std::string key(key_view);
    Value value;
    if (!ReadValue(r, type, config, &value, &error)) {
      if (error == kEmptyKeyDetail) {
        // Older Redis versions could save empty containers; Redis skips them and says so.
        if (stats->empty_keys_skipped++ < 10) {
          spdlog::info("rdbLoadObject skipping empty key: {}", key);
        }
        expire = -1;
        lru_idle = lfu_freq = -1;
        continue;
      }
      spdlog::warn("{}", RdbErrorLine(r.consumed(), error));
      return "Bad RDB value for key '" + key + "' (type " + std::to_string(type) + "): " + error;
    }
    // Hash fields whose TTL passed are dropped on load as expired keys are (a hash left
    // empty goes with them); a replica keeps them for its master's HDELs.
    if (!options.keep_expired && value.type() == ValueType::kHash) {
      auto* hash = value.As<HashObject>();
      hash->ExpireFields(now, SIZE_MAX, [](std::string_view) {});
      if (hash->empty()) {
        expire = -1;
        lru_idle = lfu_freq = -1;
        continue;
      }
    }
    if (expire != -1 && !options.keep_expired && expire < now) {
      ++stats->keys_expired;
      if (options.expired) options.expired(dbid, key);
    } else {
      Database& db = target_db(dbid);
      if (db.Peek(key) != nullptr) {
        if (!options.allow_duplicates) return "RDB has duplicated key '" + key + "'";
        db.Delete(key);
      }
      DbEntry* entry = db.Add(key, std::move(value));
      if (expire != -1) db.SetExpire(entry, expire);
      RdbTestDelay(config.key_load_delay, &delay_calls);
      uint32_t clock;
      if (ClockFromHints(host.PersistedKeyspaceOptions().access, lfu_freq, lru_idle, now, &clock)) {
        entry->value.set_access_clock(clock);
      }
      ++stats->keys_loaded;
    }
    expire = -1;
    lru_idle = lfu_freq = -1;
  }
  if (version >= 5) {
    uint64_t expected = r.crc();
    char b[8];
    if (!r.Read(b, 8)) return kShort;
    uint64_t stored = LoadLE(b, 8);
    // rdbchecksum no skips the check, as in Redis; a zero trailer means "written without one".
    if (config.rdbchecksum && stored != 0 && stored != expected) {
      spdlog::warn("Wrong RDB checksum expected: ({:x}) but got ({:x}). Aborting now.", expected,
                   stored);
      return RdbErrorLine(r.consumed(), "RDB CRC error");
    }
  }
  stats->bytes_read = r.consumed();
  return "";
}

}  // namespace

std::string RdbLoad(PersistenceHost& host, int fd, const RdbLoadOptions& options,
                    RdbLoadStats* stats) {
  Reader reader(fd);
  reader.set_deep(options.deep_sanitize);
  std::string err;
  // Lengths are checked against the file before allocating; a failure that remains (a valid
  // but too large dataset) is reported as Redis words it, and the caller refuses to start.
  try {
    err = LoadImage(host, reader, options, stats);
  } catch (const std::bad_alloc&) {
    err = kShortReadOrOom;
  } catch (const std::length_error&) {
    err = kShortReadOrOom;
  }
  if (err.empty()) reader.RewindUnread();
  return err;
}

std::string RdbLoadFromSource(PersistenceHost& host, RdbByteSource source,
                              const RdbLoadOptions& options, RdbLoadStats* stats) {
  Reader reader(std::move(source));
  reader.set_deep(options.deep_sanitize);
  try {
    std::string err = LoadImage(host, reader, options, stats);
    if (err.empty() && reader.buffered() > 0) err = kRdbTrailingBytes;
    return err;
  } catch (const std::bad_alloc&) {
    return kShortReadOrOom;
  } catch (const std::length_error&) {
    return kShortReadOrOom;
  }
}

std::string RdbLoadFile(PersistenceHost& host, const std::string& path,
                        const RdbLoadOptions& options, RdbLoadStats* stats, bool* missing) {
  if (missing != nullptr) *missing = false;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) {
      if (missing != nullptr) *missing = true;
      return "";
    }
    return std::strerror(errno);
  }
  posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  std::string err = RdbLoad(host, fd, options, stats);
  ::close(fd);
  return err;
}

bool RdbReadReplicationInfo(const std::string& path, RdbReplicationInfo* info) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  *info = RdbReplicationInfo();
  {
    Reader r(fd);
    char magic[9];
    if (r.Read(magic, 9) && memcmp(magic, "REDIS", 5) == 0) {
      // AUX fields come first; the first other opcode ends them.
      uint8_t type = 0;
      while (r.ReadByte(&type) && type == kOpAux) {
        std::string k, v;
        if (!r.ReadString(&k) || !r.ReadString(&v)) break;
        ReadReplicationAux(k, v, info);
      }
    }
  }
  ::close(fd);
  return !info->replid.empty() && info->offset >= 0;
}

std::string RdbErrorLine(int64_t offset, std::string_view reason) {
  return "Internal error in RDB reading offset " + std::to_string(offset) +
         ", function at rdb.c:0 -> " + std::string(reason);
}

// ---- DUMP / RESTORE ---------------------------------------------------------------------------

std::string RdbDumpValue(const Value& value, bool compress) {
  std::string out;
  out.push_back(static_cast<char>(ValueRdbType(value)));
  AppendValue(&out, value, compress);
  out.push_back(static_cast<char>(kRdbVersion & 0xff));
  out.push_back(static_cast<char>(kRdbVersion >> 8));
  AppendMillis(&out, static_cast<int64_t>(Crc64(0, out.data(), out.size())));
  return out;
}

size_t RdbSerializedLength(const Value& value, bool compress) {
  std::string out;
  AppendValue(&out, value, compress);
  return out.size();
}

bool RdbRestoreValue(const ServerConfig& config, std::string_view payload, Value* out,
                     std::string* error, bool deep, bool verify_checksum) {
  const char* kBadPayload = "ERR DUMP payload version or checksum are wrong";
  if (payload.size() < 10) {
    *error = kBadPayload;
    return false;
  }
  const char* footer = payload.data() + payload.size() - 10;
  uint64_t version = LoadLE(footer, 2);
  uint64_t crc = LoadLE(footer + 2, 8);
  if (version > static_cast<uint64_t>(kMaxRdbVersion) ||
      (verify_checksum && crc != Crc64(0, payload.data(), payload.size() - 8))) {
    *error = kBadPayload;
    return false;
  }
  Reader r(payload.substr(0, payload.size() - 10));
  r.set_deep(deep);
  uint8_t type = 0;
  std::string detail;
  bool ok = false;
  // Sizes are checked against the payload before anything is allocated; an allocation that
  // still fails (a large but well-formed value under memory pressure) is bad data too, and the
  // value under construction is freed on the way out, never half-added.
  try {
    Value value;
    ok = r.ReadByte(&type) &&
         !((type > kTypeStreamListpacks3 && type != kTypeStreamVireo && type != kTypeHashMetadata &&
            type != kTypeHashListpackEx) ||
           type == 8) &&
         ReadValue(r, type, config, &value, &detail);
    if (ok) *out = std::move(value);
  } catch (const std::bad_alloc&) {
    ok = false;
    detail = "OOM decoding the value";
  } catch (const std::length_error&) {
    ok = false;
    detail = "OOM decoding the value";
  }
  if (!ok) {
    // Redis logs why at verbose level (an empty container is no corruption to log) and
    // replies only "Bad data format".
    if (detail.empty()) detail = "Unknown RDB encoding type " + std::to_string(type);
    if (detail != kEmptyKeyDetail) spdlog::info("{}", RdbErrorLine(r.consumed(), detail));
    *error = "ERR Bad data format";
  }
  return ok;
}

}  // namespace vireo
