// Replaying AOF files at start-up: the base (an RDB image, possibly followed by commands, or
// only commands) and then each incremental file, command by command through a client with no
// connection (the host's AofReplayClient, persistence_host.h). A file cut short in its last command
// (a crash mid-write) is truncated at the last complete command and loading continues when
// aof-load-truncated is yes, as in Redis; anything else malformed stops the server.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "persistence/aof_manifest.h"

namespace vireo {

class PersistenceHost;

enum class AofLoadStatus { kOk, kNotExist, kEmpty, kOpenError, kFailed, kTruncated };

struct AofLoadOptions {
  bool load_truncated = true;  // aof-load-truncated
  // At start-up: clients are served (and refused with -LOADING) every 1024 commands and every
  // loading-process-events-interval-bytes of an RDB base (PersistenceHost::StartupLoad*).
  bool serve_clients = false;
  // Bytes of the files loaded before this one: progress counts across the whole manifest.
  int64_t progress_base = 0;
};

// Replays dir/name into the host's databases. kTruncated: the file was cut at its last complete
// command (only acceptable for the last file; LoadAofFiles checks).
AofLoadStatus LoadAofFile(PersistenceHost& host, const std::string& dir, const std::string& name,
                          const AofLoadOptions& options);

// LoadAofFiles's error when a file failed to load: the reason is already the log's last line
// (as in Redis, which exits right after it), so start-up prints nothing more.
inline constexpr std::string_view kAofFileLoadFailed = "Failed loading the append only file";

// Replays every file the manifest lists (base, then incremental files). Returns "" or the
// reason loading failed (in Redis's words; the caller logs it and refuses to start). A listed
// file that does not exist fails before anything is loaded, as in Redis: starting without it
// would serve part of the data. *loaded_any: some file was loaded.
std::string LoadAofFiles(PersistenceHost& host, const std::string& dir, const AofManifest& manifest,
                         const AofLoadOptions& options, bool* loaded_any);

}  // namespace vireo
