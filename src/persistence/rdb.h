// RDB snapshots in Redis's own format (RDB version 10, as Redis 7.0/7.2 write it).
//
// API for the rest of the server (and the AOF code):
//
// RdbSave() writes a complete RDB image of every database of the server to a file descriptor:
// the "REDIS0010" header, AUX fields (redis-ver, redis-bits, ctime, used-mem, aof-base),
// FUNCTION2 records for function libraries, then per non-empty database SELECTDB + RESIZEDB
// and every key (with EXPIRETIME_MS when it has a TTL), then EOF and the CRC64 checksum (eight
// zero bytes when `checksum` is off, as Redis). It only reads server state and uses blocking
// write(2) calls through its own buffer, so it is safe to call in a forked child (BGSAVE,
// BGREWRITEAOF's RDB-preamble base) or on the main thread (SAVE, SHUTDOWN). It does not fsync
// or close the descriptor: the caller decides. RdbSaveFile() is the usual wrapper: it writes
// "temp-<pid>.rdb" next to `path`, fsyncs, and renames it over `path`.
//
// RdbLoad() reads one RDB image from a descriptor, starting at its current offset (an AOF base
// file starts with one), and adds its keys to the server's databases; keys must not exist yet
// (callers empty the databases first). When it succeeds the descriptor's offset has been moved
// to just past the image's checksum (stats->bytes_read bytes after where it started), so an
// AOF loader can continue reading commands from there. It loads every version up to 11 (what
// Redis 7.x writes) and every encoding Redis uses (ziplist, listpack, intset, quicklist 1/2,
// zipmap, stream listpacks 1-3). Keys whose TTL has passed are skipped unless
// `keep_expired` (Redis keeps them when loading an AOF preamble, and deletes them later).
// Returns "" on success or a message for the log ("Short read or OOM loading DB..." etc.).
//
// Thread safety: RdbLoad must run on the thread that owns the server; RdbSave only reads and
// is meant for the main thread or a forked child.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace vireo {

class Database;
class PersistenceHost;
class Value;
struct ServerConfig;

// Parts of the dataset a snapshot may leave out (REPLCONF rdb-filter-only).
enum RdbExclude : uint8_t {
  kRdbExcludeData = 1 << 0,       // the keys
  kRdbExcludeFunctions = 1 << 1,  // the function libraries
};

struct RdbSaveOptions {
  bool compress = true;   // rdbcompression: LZF-compress strings longer than 20 bytes
  bool checksum = true;   // rdbchecksum: a real CRC64 trailer, else eight zero bytes
  bool aof_base = false;  // writes AUX "aof-base" = 1 (the base of a multi-part AOF)
  // AUX repl-stream-db, repl-id, repl-offset when the server has a replication backlog or is a
  // replica, so a restarted replica can continue with a partial resync (as Redis's rsi).
  bool replication_info = true;
  uint8_t exclude = 0;  // RdbExclude bits: what a filtered replica asked to leave out
  // When set, the image goes here (in chunks of about 16 KB) instead of to the descriptor:
  // a diskless full sync writes it to replica sockets. Returns "" or the error that stops it.
  std::function<std::string(std::string_view bytes)> sink;
};

// The replication position an RDB was taken at (its repl-* AUX fields).
struct RdbReplicationInfo {
  std::string replid;  // empty when the image has none
  int64_t offset = -1;
  int stream_db = 0;
};
// Reads only the AUX fields at the start of the RDB at `path`. False if the file can't be read
// or has no replication fields.
bool RdbReadReplicationInfo(const std::string& path, RdbReplicationInfo* info);

// Writes the whole image to fd. Returns "" or an error (strerror text of the failed write).
std::string RdbSave(PersistenceHost& host, int fd, const RdbSaveOptions& options);
// Writes `path` atomically: temp-<pid>.rdb in the same directory, fsync, rename. The temp file
// is removed on failure. Returns "" or an error text.
std::string RdbSaveFile(PersistenceHost& host, const std::string& path,
                        const RdbSaveOptions& options);

struct RdbLoadOptions {
  bool keep_expired = false;   // load keys whose TTL has passed (AOF preamble)
  bool deep_sanitize = false;  // sanitize-dump-payload yes: deep structural validation
  // The databases the keys go to (one per server database); empty: the server's own. A
  // replica loading with repl-diskless-load swapdb fills detached databases while its old
  // data stays in place.
  std::span<Database* const> target_dbs;
  // When set, function libraries are collected here instead of being loaded into the scripting
  // engine (swapdb: the old libraries stay until the new data replaces them).
  std::vector<std::string>* deferred_libraries = nullptr;
  // Called about every `progress_interval` bytes of the image (Redis's
  // loading-process-events-interval-bytes): the loader serves other clients from it. Returning
  // false aborts the load.
  std::function<bool(int64_t bytes_read)> progress;
  int64_t progress_interval = 2 * 1024 * 1024;
  // A key or function library already in memory is replaced instead of failing the load
  // (DEBUG RELOAD MERGE).
  bool allow_duplicates = false;
  // A key skipped because its TTL had passed (database, name): a master loading at start-up
  // writes its DEL into the replication stream, as Redis does, so replicas that continue
  // from the RDB's offset delete it too.
  std::function<void(int db, std::string_view key)> expired;
};

struct RdbLoadStats {
  uint64_t keys_loaded = 0;
  uint64_t keys_expired = 0;        // skipped because their TTL had passed
  uint64_t empty_keys_skipped = 0;  // empty containers (older Redis versions wrote them)
  int64_t bytes_read = 0;           // bytes of the image consumed, checksum included
  int rdb_version = 0;
  bool aof_base = false;           // the image carried AUX aof-base = 1
  RdbReplicationInfo replication;  // AUX repl-id / repl-offset / repl-stream-db
};

// Loads one image from fd's current offset (see the file comment). Returns "" or an error.
std::string RdbLoad(PersistenceHost& host, int fd, const RdbLoadOptions& options,
                    RdbLoadStats* stats);
// Where an image comes from when it isn't a descriptor (a replica loading straight from its
// master's socket): fills up to `cap` bytes of dst and returns how many (> 0), or 0 at the end
// of the image's bytes, or -1 on an error (already logged by the source). The source holds
// one image and nothing after it: bytes after the image fail the load with
// kRdbTrailingBytes.
inline constexpr const char* kRdbTrailingBytes = "Bytes after the end of the RDB image";
using RdbByteSource = std::function<ssize_t(char* dst, size_t cap)>;
std::string RdbLoadFromSource(PersistenceHost& host, RdbByteSource source,
                              const RdbLoadOptions& options, RdbLoadStats* stats);
// Opens `path` and loads it. A missing file is not an error: returns "" with *missing = true.
std::string RdbLoadFile(PersistenceHost& host, const std::string& path,
                        const RdbLoadOptions& options, RdbLoadStats* stats,
                        bool* missing = nullptr);

// rdb-key-save-delay / key-load-delay (test knobs, also for the AOF's commands): sleeps `usec`
// per call; a negative value -n sleeps one microsecond every n calls (a delay shorter than any
// sleep, as Redis's debugDelay averages it). `calls` counts them across one save or load.
void RdbTestDelay(int64_t usec, uint64_t* calls);

// True if the bytes at the start of a file look like an RDB image ("REDIS" magic): an AOF
// base file is either an RDB image or a file of commands.
inline bool LooksLikeRdb(std::string_view head) { return head.substr(0, 5) == "REDIS"; }

// DUMP / RESTORE payloads: type byte + value encoding + 2-byte RDB version + CRC64, exactly as
// Redis 7 writes them.
std::string RdbDumpValue(const Value& value, bool compress);
// Bytes of the value's RDB encoding, without type byte or key (DEBUG OBJECT serializedlength).
size_t RdbSerializedLength(const Value& value, bool compress);
// Checks the footer (version <= ours, checksum) and decodes. Returns false with *error set
// ("ERR DUMP payload version or checksum are wrong", "ERR Bad data format") on failure.
// Containers get the encodings `config` chooses. Malformed payloads never crash and leave *out
// untouched; `deep` adds the structural checks of sanitize-dump-payload yes (see
// rdb::Reader::deep).
// `verify_checksum` false (DEBUG SET-SKIP-CHECKSUM-VALIDATION 1) accepts any CRC. Why a payload
// was refused is logged (info) the way Redis words it ("... -> Ziplist integrity check failed.").
bool RdbRestoreValue(const ServerConfig& config, std::string_view payload, Value* out,
                     std::string* error, bool deep = false, bool verify_checksum = true);
// Redis's log line for a value it could not decode: "Internal error in RDB reading offset N,
// function at rdb.c:0 -> <reason>" (vireo has no rdb.c line to name).
std::string RdbErrorLine(int64_t offset, std::string_view reason);

}  // namespace vireo
