// The manifest of a multi-part AOF (Redis 7): which base and incremental files, in which
// order, make up the append-only log. The text format is Redis's, so redis-server and vireo can
// load each other's AOF directories:
//
//   file appendonly.aof.2.base.rdb seq 2 type b
//   file appendonly.aof.1.incr.aof seq 1 type h
//   file appendonly.aof.3.incr.aof seq 3 type i
//
// One line per file: "file <name> seq <n> type <b|h|i>" (base, history, incremental). Names
// that need it are double-quoted with C-style escapes; readers ignore unknown keys (forward
// compatibility) and '#' comment lines. Pure data: no I/O besides the file helpers at the end.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace vireo {

enum class AofFileType : char { kBase = 'b', kHistory = 'h', kIncr = 'i' };

struct AofFileInfo {
  std::string name;
  int64_t seq = 0;
  AofFileType type = AofFileType::kIncr;
  bool operator==(const AofFileInfo&) const = default;
};

struct AofManifest {
  std::optional<AofFileInfo> base;
  std::vector<AofFileInfo> history;  // old files not yet deleted
  std::vector<AofFileInfo> incrs;    // replayed after the base, in this order
  int64_t base_seq = 0;              // the sequence numbers the next files continue from
  int64_t incr_seq = 0;

  // Parses manifest text. Returns "" or Redis's error text; *error_line is the 1-based line
  // number of the offending line (0 when the error is not about one line).
  std::string Parse(std::string_view text, int* error_line = nullptr);
  // Base first, then history, then incremental files, one line each.
  std::string ToString() const;

  bool empty() const { return !base.has_value() && incrs.empty(); }
  // Names for the next files: "<prefix>.<seq>.base.rdb|aof" and "<prefix>.<seq>.incr.aof".
  // They advance the sequence counters.
  AofFileInfo NextBase(const std::string& prefix, bool rdb_format);
  AofFileInfo NextIncr(const std::string& prefix);
  // After a rewrite: the base becomes `new_base`, and every incremental file except the last
  // `keep_last_incrs` becomes history (with the old base).
  void ReplaceBase(AofFileInfo new_base, size_t keep_last_incrs);
};

// What the server logs (and vireo-check-aof prints) when Parse fails: Redis's "FATAL AOF
// MANIFEST FILE ERROR" banner, the offending line of `content` when there is one, and `error`.
std::string AofManifestErrorReport(std::string_view content, int error_line,
                                   std::string_view error);

// The manifest's file name for an appendfilename ("appendonly.aof.manifest").
std::string AofManifestName(const std::string& appendfilename);
// The temporary incremental file used while AOF is being turned on at run time.
std::string AofTempIncrName(const std::string& appendfilename);

// Splits a line into arguments like Redis's sdssplitargs: whitespace-separated words, "double
// quoted" with \n \r \t \b \a \xHH escapes, 'single quoted' with \' only. A closing quote must
// be followed by whitespace or the end. Returns false on unbalanced quotes.
bool SplitManifestArgs(std::string_view line, std::vector<std::string>* out);
// Quotes a name the way Redis's sdscatrepr does when the name has spaces, quotes, backslashes
// or unprintable bytes; otherwise returns it unchanged.
std::string QuoteManifestName(std::string_view name);

// Writes `text` to dir/name atomically: a temp file in dir, fsync, rename, fsync of dir.
// Returns "" or an error text.
std::string WriteFileAtomically(const std::string& dir, const std::string& name,
                                std::string_view text);
// fsyncs a directory so a rename in it is durable.
void FsyncDir(const std::string& dir);

}  // namespace vireo
