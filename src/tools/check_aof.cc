#include "tools/check_aof.h"

#include <fmt/format.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>

#include "persistence/aof_manifest.h"
#include "tools/check_rdb.h"

namespace vireo::tools {
namespace {

// Ends the run with an exit code (thrown up to CheckAofMain, which returns it): the tool stops
// at its first fatal finding, as Redis's does.
struct Exit {
  int code;
};

[[noreturn]] void Abort(std::string_view message) {
  fmt::print("{}\n", message);
  throw Exit{1};
}

// Redis reads "*<argc>" / "$<len>" lines with a buffer of this size, and annotations with one
// of AOF_ANNOTATION_LINE_MAX_LEN.
constexpr int kNumberLineMax = 128;
constexpr int kAnnotationLineMax = 1024;
constexpr int kManifestLineMax = 1024;

enum class Outcome { kOk, kEmpty, kTruncated, kTimestampTruncated };

void PrintOutcome(Outcome outcome, const std::string& name, std::string_view kind,
                  int64_t to_timestamp) {
  switch (outcome) {
    case Outcome::kOk:
      fmt::print("{} {} is valid\n", kind, name);
      break;
    case Outcome::kEmpty:
      fmt::print("{} {} is empty\n", kind, name);
      break;
    case Outcome::kTimestampTruncated:
      fmt::print("Successfully truncated AOF {} to timestamp {}\n", name, to_timestamp);
      break;
    case Outcome::kTruncated:
      fmt::print("Successfully truncated AOF {}\n", name);
      break;
  }
}

// Opens path for reading or ends the run with Redis's message; *size gets its length.
FILE* OpenOrAbort(const std::string& path, const char* mode, off_t* size) {
  FILE* fp = std::fopen(path.c_str(), mode);
  if (fp == nullptr) Abort(fmt::format("Cannot open file {}: {}", path, strerror(errno)));
  struct stat st {};
  if (fstat(fileno(fp), &st) == -1) {
    std::fclose(fp);
    Abort(fmt::format("Cannot stat file: {}", path));
  }
  *size = st.st_size;
  return fp;
}

// An RDB image (an RDB-preamble AOF, or a multi-part AOF's base in RDB form) starts with the
// RDB magic; the file must at least hold the header.
bool FileIsRdb(const std::string& path) {
  off_t size = 0;
  FILE* fp = OpenOrAbort(path, "r", &size);
  char sig[5];
  bool rdb = size >= 8 && std::fread(sig, sizeof(sig), 1, fp) == 1 &&
             memcmp(sig, "REDIS", sizeof(sig)) == 0;
  std::fclose(fp);
  return rdb;
}

// A manifest's lines start with "file" (comment lines aside); an AOF's with '*' or '#'.
bool FileIsManifest(const std::string& path) {
  off_t size = 0;
  FILE* fp = OpenOrAbort(path, "r", &size);
  bool manifest = false;
  char buf[kManifestLineMax + 1];
  while (size > 0 && std::fgets(buf, sizeof(buf), fp) != nullptr) {
    if (buf[0] == '#') continue;
    if (strncmp(buf, "file", 4) != 0) break;
    manifest = true;
  }
  bool failed = std::ferror(fp) != 0;
  std::fclose(fp);
  if (failed) Abort(fmt::format("Cannot read file: {}", path));
  return manifest;
}

class AofChecker {
 public:
  AofChecker(bool fix, int64_t to_timestamp) : fix_(fix), to_timestamp_(to_timestamp) {}

  void CheckOldStyle(const std::string& path, bool preamble) {
    fmt::print("Start checking Old-Style AOF\n");
    PrintOutcome(CheckFile(path, path, true, preamble), path, "AOF", to_timestamp_);
  }

  // Checks the base and then every incremental file the manifest lists, in order; only the
  // last of them may be truncated, so the others stay what later files build on.
  void CheckMultiPart(const std::string& dir, const std::string& manifest_path) {
    fmt::print("Start checking Multi Part AOF\n");
    AofManifest manifest = LoadManifest(manifest_path);
    const size_t total = (manifest.base.has_value() ? 1 : 0) + manifest.incrs.size();
    size_t checked = 0;
    if (manifest.base.has_value()) {
      const std::string& name = manifest.base->name;
      const std::string path = dir + "/" + name;
      const bool rdb = FileIsRdb(path);
      fmt::print("Start to check BASE AOF ({} format).\n", rdb ? "RDB" : "RESP");
      Outcome outcome = CheckFile(name, path, ++checked == total, rdb);
      PrintOutcome(outcome, name, "BASE AOF", to_timestamp_);
    }
    if (!manifest.incrs.empty()) fmt::print("Start to check INCR files.\n");
    for (const AofFileInfo& info : manifest.incrs) {
      Outcome outcome = CheckFile(info.name, dir + "/" + info.name, ++checked == total, false);
      PrintOutcome(outcome, info.name, "INCR AOF", to_timestamp_);
    }
    fmt::print("All AOF files and manifest are valid\n");
  }

 private:
  static AofManifest LoadManifest(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      Abort(fmt::format("Fatal error: can't open the AOF manifest file {} for reading: {}", path,
                        strerror(errno)));
    }
    std::stringstream text;
    text << in.rdbuf();
    const std::string content = text.str();
    AofManifest manifest;
    int line = 0;
    std::string error = manifest.Parse(content, &line);
    if (!error.empty()) Abort(AofManifestErrorReport(content, line, error));
    return manifest;
  }

  // Checks one file: `name` is what the report calls it, `last` whether it may be truncated,
  // `preamble` whether an RDB image comes before its commands.
  Outcome CheckFile(const std::string& name, const std::string& path, bool last, bool preamble) {
    off_t size = 0;
    fp_ = std::fopen(path.c_str(), "r+");
    if (fp_ == nullptr) {
      Abort(fmt::format("Cannot open file {}: {}, aborting...", path, strerror(errno)));
    }
    struct stat st {};
    if (fstat(fileno(fp_), &st) == -1)
      Abort(fmt::format("Cannot stat file: {}, aborting...", name));
    size = st.st_size;
    if (size == 0) {
      Close();
      return Outcome::kEmpty;
    }
    if (preamble) {
      // The image is read straight from the descriptor; the commands continue where it ends.
      if (!CheckRdbImage(fileno(fp_), path)) {
        Abort("RDB preamble of AOF file is not sane, aborting.");
      }
      fseeko(fp_, lseek(fileno(fp_), 0, SEEK_CUR), SEEK_SET);
      fmt::print("RDB preamble is OK, proceeding with AOF tail...\n");
    }

    off_t pos = 0;
    multi_ = 0;
    while (true) {
      // Inside MULTI the good part ends before the MULTI: a transaction is kept whole or not.
      if (multi_ == 0) pos = ftello(fp_);
      int c = std::fgetc(fp_);
      if (c == EOF) {
        if (std::feof(fp_)) break;
        Abort(fmt::format("Failed to read from AOF {}, aborting...", name));
      }
      std::ungetc(c, fp_);
      if (c == '#') {
        if (!ProcessAnnotation(path, last)) {
          Close();
          return Outcome::kTimestampTruncated;
        }
      } else if (c == '*') {
        if (!ReadCommand(path)) break;
      } else {
        fmt::print("AOF {} format error\n", name);
        break;
      }
    }
    if (std::feof(fp_) && multi_ != 0 && error_.empty()) {
      SetError("Reached EOF before reading EXEC for MULTI");
    }
    if (!error_.empty()) fmt::print("{}\n", error_);

    const off_t diff = size - pos;
    if (diff == 0 && to_timestamp_ != 0) {
      fmt::print("Truncate nothing in AOF {} to timestamp {}\n", name, to_timestamp_);
      Close();
      return Outcome::kOk;
    }
    fmt::print("AOF analyzed: filename={}, size={}, ok_up_to={}, ok_up_to_line={}, diff={}\n", name,
               size, pos, line_, diff);
    if (diff <= 0) {
      Close();
      return Outcome::kOk;
    }
    if (!fix_)
      Abort(fmt::format("AOF {} is not valid. Use the --fix option to try fixing it.", name));
    if (!last)
      Abort(fmt::format("Failed to truncate AOF {} because it is not the last file", name));
    fmt::print("This will shrink the AOF {} from {} bytes, with {} bytes, to {} bytes\n", name,
               size, diff, pos);
    fmt::print("Continue? [y/N]: ");
    std::fflush(stdout);
    char answer[2];
    if (std::fgets(answer, sizeof(answer), stdin) == nullptr || strncasecmp(answer, "y", 1) != 0) {
      Abort("Aborting...");
    }
    if (ftruncate(fileno(fp_), pos) == -1) Abort(fmt::format("Failed to truncate AOF {}", name));
    Close();
    return Outcome::kTruncated;
  }

  void Close() {
    std::fclose(fp_);
    fp_ = nullptr;
  }

  // The report's error line: the offset where the failed read started, then what failed.
  void SetError(std::string_view message) {
    error_ = fmt::format("0x{:16x}: {}", static_cast<uint64_t>(epos_), message);
  }

  // "\r\n" must follow; a line counts as read once its end is.
  bool ConsumeNewline(const char* p, size_t available) {
    if (available >= 2 && p[0] == '\r' && p[1] == '\n') {
      ++line_;
      return true;
    }
    auto byte = [&](size_t i) { return i < available ? static_cast<uint8_t>(p[i]) : 0; };
    SetError(fmt::format("Expected \\r\\n, got: {:02x}{:02x}", byte(0), byte(1)));
    return false;
  }

  // A "<prefix><number>\r\n" line. False at the end of the file (no error: the tail is
  // merely short) or on a malformed line (error set).
  bool ReadNumber(char prefix, long* out) {
    epos_ = ftello(fp_);
    char buf[kNumberLineMax];
    if (std::fgets(buf, sizeof(buf), fp_) == nullptr) return false;
    if (buf[0] != prefix) {
      SetError(fmt::format("Expected prefix '{}', got: '{}'", prefix, buf[0]));
      return false;
    }
    char* end = nullptr;
    *out = std::strtol(buf + 1, &end, 10);
    return ConsumeNewline(end, strlen(end));
  }

  // A "$<len>\r\n<bytes>\r\n" bulk string. Only its first few bytes are kept (enough to tell
  // MULTI and EXEC), so a huge length in a damaged file allocates nothing.
  bool ReadString(std::string* head) {
    long len = 0;
    if (!ReadNumber('$', &len)) return false;
    if (len < 0 || len > LONG_MAX - 2) {
      SetError(fmt::format(
          "Expected to read string of {} bytes, which is not in the suitable range", len));
      return false;
    }
    epos_ = ftello(fp_);
    const uint64_t want = static_cast<uint64_t>(len) + 2;
    uint64_t got = 0;
    char chunk[1 << 16];
    char tail[2] = {0, 0};
    head->clear();
    while (got < want) {
      size_t n = std::fread(chunk, 1, std::min<uint64_t>(sizeof(chunk), want - got), fp_);
      if (n == 0) break;
      if (head->size() < 8) head->append(chunk, std::min<size_t>(n, 8 - head->size()));
      // The last two bytes read, which must be the string's "\r\n".
      if (n >= 2) {
        tail[0] = chunk[n - 2];
        tail[1] = chunk[n - 1];
      } else {
        tail[0] = tail[1];
        tail[1] = chunk[0];
      }
      got += n;
    }
    if (got != want) {
      SetError(fmt::format("Expected to read {} bytes, got {} bytes", want, got));
      return false;
    }
    if (head->size() > static_cast<size_t>(len)) head->resize(static_cast<size_t>(len));
    if (static_cast<uint64_t>(len) > head->size()) head->append("+");  // longer than any keyword
    return ConsumeNewline(tail, 2);
  }

  // One command; keeps count of MULTI ... EXEC nesting, which must stay 0 or 1.
  bool ReadCommand(const std::string& path) {
    long argc = 0;
    if (!ReadNumber('*', &argc)) return false;
    std::string head;
    for (long i = 0; i < argc; ++i) {
      if (!ReadString(&head)) return false;
      if (i != 0) continue;
      if (strcasecmp(head.c_str(), "multi") == 0 && multi_++ != 0) {
        SetError(fmt::format("Unexpected MULTI in AOF {}", path));
        return false;
      }
      if (strcasecmp(head.c_str(), "exec") == 0 && --multi_ != 0) {
        SetError(fmt::format("Unexpected EXEC in AOF {}", path));
        return false;
      }
    }
    return true;
  }

  // A '#' line. With --truncate-to-timestamp, the first "#TS:<seconds>" later than the limit
  // cuts the file there (returns false: truncated).
  bool ProcessAnnotation(const std::string& path, bool last) {
    epos_ = ftello(fp_);
    char buf[kAnnotationLineMax];
    if (std::fgets(buf, sizeof(buf), fp_) == nullptr) {
      Abort(fmt::format("Failed to read annotations from AOF {}, aborting...", path));
    }
    if (to_timestamp_ == 0 || strncmp(buf, "#TS:", 4) != 0) return true;
    char* end = nullptr;
    errno = 0;
    int64_t ts = std::strtol(buf + 4, &end, 10);
    if (errno != 0 || *end != '\r') Abort("Invalid timestamp annotation");
    if (ts <= to_timestamp_) return true;
    if (epos_ == 0) {
      Abort(
          fmt::format("AOF {} has nothing before timestamp {}, aborting...", path, to_timestamp_));
    }
    if (!last) {
      Abort(fmt::format(
          "Failed to truncate AOF {} to timestamp {} to offset {} because it is not the last "
          "file.\nIf you insist, please delete all files after this file according to the "
          "manifest file and delete the corresponding records in manifest file manually. Then "
          "re-run vireo-check-aof.",
          path, to_timestamp_, epos_));
    }
    if (ftruncate(fileno(fp_), epos_) == -1) {
      Abort(fmt::format("Failed to truncate AOF {} to timestamp {}", path, to_timestamp_));
    }
    return false;
  }

  const bool fix_;
  const int64_t to_timestamp_;
  FILE* fp_ = nullptr;
  int multi_ = 0;
  // As in Redis's tool, the line count and the error carry over from file to file.
  std::string error_;
  off_t epos_ = 0;
  long long line_ = 1;
};

int Usage(const char* program) {
  fmt::print("Usage: {} [--fix|--truncate-to-timestamp $timestamp] <file.manifest|file.aof>\n",
             program);
  return 1;
}

int Run(int argc, char** argv) {
  bool fix = false;
  int64_t to_timestamp = 0;
  std::string path;
  if (argc == 2) {
    path = argv[1];
  } else if (argc == 3 && strcmp(argv[1], "--fix") == 0) {
    fix = true;
    path = argv[2];
  } else if (argc == 4 && strcmp(argv[1], "--truncate-to-timestamp") == 0) {
    char* end = nullptr;
    errno = 0;
    to_timestamp = std::strtol(argv[2], &end, 10);
    if (errno != 0 || *end != '\0') Abort("Invalid timestamp, aborting...");
    path = argv[3];
  } else {
    return Usage(argv[0]);
  }
  // A manifest's files are named relative to the manifest's directory.
  const size_t slash = path.rfind('/');
  const std::string dir =
      slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  AofChecker checker(fix, to_timestamp);
  if (FileIsManifest(path)) {
    checker.CheckMultiPart(dir, path);
  } else {
    checker.CheckOldStyle(path, FileIsRdb(path));
  }
  return 0;
}

}  // namespace

int CheckAofMain(int argc, char** argv) {
  int code = 0;
  try {
    code = Run(argc, argv);
  } catch (const Exit& exit) {
    code = exit.code;
  }
  std::fflush(stdout);
  return code;
}

}  // namespace vireo::tools
