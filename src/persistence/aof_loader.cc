#include "persistence/aof_loader.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "core/command_table.h"
#include "core/config.h"
#include "persistence/persistence_host.h"
#include "persistence/rdb.h"
#include "util/clock.h"

namespace vireo {
namespace {

// Redis reads the "*<argc>" and "$<len>" lines with a buffer of this size.
constexpr size_t kMaxLine = 1024;

// Buffered reads from a descriptor, starting at its current offset, that know their absolute
// offset (for truncation) and tell a clean end of file from a short read.
class Reader {
 public:
  Reader(int fd, int64_t start, int64_t size) : fd_(fd), offset_(start), size_(size) {}

  // Like fgets: up to and including '\n', at most max - 1 bytes. False at end of file with
  // nothing read, or on a read error (error() then says so).
  bool ReadLine(std::string* line, size_t max) {
    line->clear();
    while (line->size() + 1 < max) {
      if (pos_ == len_ && !Fill()) break;
      const char* start = buf_.get() + pos_;
      size_t avail = std::min(len_ - pos_, max - 1 - line->size());
      const void* nl = memchr(start, '\n', avail);
      size_t take = nl != nullptr ? static_cast<const char*>(nl) - start + 1 : avail;
      line->append(start, take);
      pos_ += take;
      offset_ += static_cast<int64_t>(take);
      if (nl != nullptr) break;
    }
    return !line->empty();
  }

  // Exactly n bytes, or false (short read or error). A length the rest of the file cannot
  // hold is a short read before anything is allocated for it.
  bool ReadExact(size_t n, std::string* out) {
    if (n > remaining()) return false;
    out->resize(n);
    size_t done = 0;
    while (done < n) {
      if (pos_ == len_) {
        // A large argument is read straight into its string, past the buffer.
        if (n - done >= kBufSize) {
          ssize_t r = read(fd_, out->data() + done, n - done);
          if (r < 0 && errno == EINTR) continue;
          if (r <= 0) {
            if (r < 0) error_ = errno;
            return false;
          }
          done += static_cast<size_t>(r);
          offset_ += r;
          continue;
        }
        if (!Fill()) return false;
      }
      size_t take = std::min(len_ - pos_, n - done);
      memcpy(out->data() + done, buf_.get() + pos_, take);
      pos_ += take;
      done += take;
      offset_ += static_cast<int64_t>(take);
    }
    return true;
  }

  bool Skip(size_t n) {
    std::string scratch;
    return ReadExact(n, &scratch);
  }

  int64_t offset() const { return offset_; }
  int error() const { return error_; }
  // Bytes left in the file (the file's size is taken when reading starts).
  uint64_t remaining() const {
    return offset_ >= size_ ? 0 : static_cast<uint64_t>(size_ - offset_);
  }

 private:
  static constexpr size_t kBufSize = 1 << 20;
  bool Fill() {
    while (true) {
      ssize_t r = read(fd_, buf_.get(), kBufSize);
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) error_ = errno;
      if (r <= 0) return false;
      pos_ = 0;
      len_ = static_cast<size_t>(r);
      return true;
    }
  }

  int fd_;
  std::unique_ptr<char[]> buf_{new char[kBufSize]};
  size_t pos_ = 0;
  size_t len_ = 0;
  int64_t offset_;
  int64_t size_;
  int error_ = 0;
};

// Runs parsed commands on the host's connection-less client: SELECT moves it between
// databases, MULTI ... EXEC is held back until EXEC so a transaction cut off by a crash never
// half applies.
class Replayer {
 public:
  explicit Replayer(PersistenceHost& host)
      : commands_(host.PersistenceCommands()), client_(host.NewAofReplayClient()) {}

  // Returns "" or the error to log (unknown command, wrong arity).
  std::string Run(std::vector<std::string>& argv, const std::string& filename) {
    const CommandSpec* spec = commands_.Find(argv[0]);
    if (spec != nullptr && !spec->subcommands.empty() && argv.size() >= 2) {
      spec = CommandTable::FindSubcommand(*spec, argv[1]);
    }
    if (spec == nullptr) {
      return fmt::format("Unknown command '{}' reading the append only file {}", argv[0], filename);
    }
    if (!spec->ArityOk(argv.size())) {
      return fmt::format("Wrong number of arguments for '{}' reading the append only file {}",
                         spec->name, filename);
    }
    if (spec->name == "multi") {
      in_multi_ = true;
      queue_.clear();
      return "";
    }
    if (in_multi_ && spec->name != "exec") {
      queue_.push_back({spec, std::move(argv)});
      return "";
    }
    if (spec->name == "exec") {
      in_multi_ = false;
      for (auto& [queued_spec, queued_argv] : queue_) Execute(*queued_spec, queued_argv);
      queue_.clear();
      return "";
    }
    Execute(*spec, argv);
    return "";
  }

  bool in_multi() const { return in_multi_; }

 private:
  void Execute(const CommandSpec& spec, const std::vector<std::string>& argv) {
    views_.assign(argv.begin(), argv.end());
    client_->Run(spec, views_);
  }

  const CommandTable& commands_;
  std::unique_ptr<AofReplayClient> client_;
  bool in_multi_ = false;
  std::vector<std::pair<const CommandSpec*, std::vector<std::string>>> queue_;
  std::vector<std::string_view> views_;
};

}  // namespace

AofLoadStatus LoadAofFile(PersistenceHost& host, const std::string& dir, const std::string& name,
                          const AofLoadOptions& options) {
  const std::string path = dir + "/" + name;
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    if (err != ENOENT) {
      spdlog::warn("Fatal error: can't open the append log file {} for reading: {}", name,
                   strerror(err));
      return AofLoadStatus::kOpenError;
    }
    spdlog::warn("The append log file {} doesn't exist: {}", name, strerror(err));
    return AofLoadStatus::kNotExist;
  }
  struct stat st {};
  if (fstat(fd, &st) != 0) {
    spdlog::warn("Unable to check the AOF length: {}", strerror(errno));
    close(fd);
    return AofLoadStatus::kFailed;
  }
  if (st.st_size == 0) {
    close(fd);
    return AofLoadStatus::kEmpty;
  }

  int64_t start = 0;
  char sig[5];
  if (pread(fd, sig, sizeof(sig), 0) == 5 && LooksLikeRdb(std::string_view(sig, 5))) {
    spdlog::info("Reading RDB base file on AOF loading...");
    RdbLoadOptions rdb_options;
    rdb_options.keep_expired = true;
    rdb_options.deep_sanitize = host.PersistenceConfig().sanitize_dump_payload == "yes";
    if (options.serve_clients) {
      rdb_options.progress_interval =
          host.PersistenceConfig().loading_process_events_interval_bytes;
      rdb_options.progress = [&host, &options](int64_t bytes) {
        return host.StartupLoadProgressed(options.progress_base + bytes);
      };
    }
    RdbLoadStats stats;
    std::string err = RdbLoad(host, fd, rdb_options, &stats);
    if (!err.empty()) {
      spdlog::warn("Error reading the RDB base file {}, AOF loading aborted", name);
      spdlog::warn("Unrecoverable error reading the append only file {}: {}", name, err);
      close(fd);
      return AofLoadStatus::kFailed;
    }
    start = stats.bytes_read;
    if (lseek(fd, start, SEEK_SET) < 0) {
      close(fd);
      return AofLoadStatus::kFailed;
    }
  }

  Reader reader(fd, start, st.st_size);
  Replayer replayer(host);
  const int64_t key_load_delay = host.PersistenceConfig().key_load_delay;
  uint64_t delay_calls = 0, commands = 0;
  int64_t valid_up_to = start;
  int64_t valid_before_multi = start;
  std::string line, arg;
  std::vector<std::string> argv;
  enum class End { kClean, kShortRead, kFormat, kFailed } end = End::kClean;
  std::string failure;
  while (true) {
    if (!reader.ReadLine(&line, kMaxLine)) {
      end = reader.error() != 0 ? End::kShortRead : End::kClean;
      break;
    }
    if (line[0] == '#') continue;  // annotations (#TS:...)
    if (++commands % 1024 == 0) {
      // What goes on while a load blocks the server (DEBUG LOADAOF's too), as Redis's
      // whileBlockedCron: active defragmentation.
      host.WhileBlockedCron();
    }
    if (options.serve_clients && commands % 1024 == 0) {
      const bool go_on = host.StartupLoadProgressed(options.progress_base + reader.offset());
      host.SetCommandTimeMs(0);  // serving clients moved the clock; replaying keeps it at 0
      if (!go_on) {
        failure = "Loading aborted";
        end = End::kFailed;
        break;
      }
    }
    if (line[0] != '*') {
      end = End::kFormat;
      break;
    }
    if (line.size() == 1) {
      end = End::kShortRead;
      break;
    }
    long argc = std::atol(line.c_str() + 1);
    if (argc < 1) {
      end = End::kFormat;
      break;
    }
    // Each argument takes at least 6 bytes ("$0\r\n\r\n"): a count the rest of the file
    // cannot hold is a truncated tail, found before anything is allocated for it.
    if (static_cast<uint64_t>(argc) > reader.remaining() / 6) {
      end = End::kShortRead;
      break;
    }
    argv.resize(static_cast<size_t>(argc));
    for (long j = 0; j < argc && end == End::kClean; ++j) {
      if (!reader.ReadLine(&line, kMaxLine)) {
        end = End::kShortRead;
      } else if (line[0] != '$') {
        end = End::kFormat;
      } else {
        long len = std::strtol(line.c_str() + 1, nullptr, 10);
        if (len < 0) len = 0;
        // The trailing CRLF is read but not checked, as Redis does.
        if (!reader.ReadExact(static_cast<size_t>(len), &argv[j]) || !reader.Skip(2)) {
          end = End::kShortRead;
        }
      }
    }
    if (end != End::kClean) break;
    if (argv[0].size() == 5 && strncasecmp(argv[0].c_str(), "multi", 5) == 0) {
      valid_before_multi = valid_up_to;
    }
    failure = replayer.Run(argv, name);
    if (!failure.empty()) {
      end = End::kFailed;
      break;
    }
    RdbTestDelay(key_load_delay, &delay_calls);
    valid_up_to = reader.offset();
  }
  close(fd);

  if (end == End::kClean && replayer.in_multi()) {
    // Well-formed but cut inside a transaction: drop the incomplete MULTI like a short read.
    spdlog::warn("Revert incomplete MULTI/EXEC transaction in AOF file {}", name);
    valid_up_to = valid_before_multi;
    end = End::kShortRead;
  }
  switch (end) {
    case End::kClean:
      return AofLoadStatus::kOk;
    case End::kFailed:
      spdlog::warn("{}", failure);
      return AofLoadStatus::kFailed;
    case End::kFormat:
      spdlog::warn(
          "Bad file format reading the append only file {}: make a backup of your AOF file, then "
          "use ./redis-check-aof --fix <filename.manifest>",
          name);
      return AofLoadStatus::kFailed;
    case End::kShortRead:
      break;
  }
  if (reader.error() != 0) {
    spdlog::warn("Unrecoverable error reading the append only file {}: {}", name,
                 strerror(reader.error()));
    return AofLoadStatus::kFailed;
  }
  if (options.load_truncated) {
    spdlog::warn("!!! Warning: short read while loading the AOF file {}!!!", name);
    spdlog::warn("!!! Truncating the AOF {} at offset {} !!!", name, valid_up_to);
    if (truncate(path.c_str(), valid_up_to) == -1) {
      spdlog::warn("Error truncating the AOF file {}: {}", name, strerror(errno));
    } else {
      spdlog::warn("AOF {} loaded anyway because aof-load-truncated is enabled", name);
      return AofLoadStatus::kTruncated;
    }
  }
  spdlog::warn(
      "Unexpected end of file reading the append only file {}. You can: 1) Make a backup of your "
      "AOF file, then use ./redis-check-aof --fix <filename.manifest>. 2) Alternatively you can "
      "set the 'aof-load-truncated' configuration option to yes and restart the server.",
      name);
  return AofLoadStatus::kFailed;
}

std::string LoadAofFiles(PersistenceHost& host, const std::string& dir, const AofManifest& manifest,
                         const AofLoadOptions& options, bool* loaded_any) {
  *loaded_any = false;
  std::vector<const AofFileInfo*> files;
  if (manifest.base.has_value()) files.push_back(&*manifest.base);
  for (const AofFileInfo& info : manifest.incrs) files.push_back(&info);
  if (files.empty()) return "";
  // Every file the manifest lists must exist: loading around a missing one would start with
  // part of the data (or none) and then log on top of it. Redis refuses to start, so do we.
  std::vector<int64_t> file_sizes;
  int64_t total_bytes = 0;
  for (const AofFileInfo* info : files) {
    struct stat st {};
    const std::string path = dir + "/" + info->name;
    if (stat(path.c_str(), &st) != 0) {
      // The caller logs the returned reason (once: the suite counts the line).
      return fmt::format("Unable to obtain the AOF file {} length. stat: {}", info->name,
                         strerror(errno));
    }
    file_sizes.push_back(st.st_size);
    total_bytes += st.st_size;
  }

  // While replaying nothing expires: the log already holds the DEL of every key that expired,
  // at the point it did, and a key must not vanish between its SET and a later command of
  // the log that still saw it. Time 0 puts every TTL in the future; the real clock comes back
  // afterwards, and keys past their TTL then expire as usual.
  host.SetCommandTimeMs(0);
  int64_t start_us = MonotonicUs();
  std::string error;
  AofLoadOptions file_options = options;
  host.StartupLoadBegan(total_bytes);  // DEBUG LOADAOF's reload shows loading:1 too, as Redis
  for (size_t i = 0; i < files.size(); ++i) {
    const bool last = i + 1 == files.size();
    const AofFileInfo& info = *files[i];
    if (info.type == AofFileType::kBase) {
      spdlog::info("Loading base AOF file {}", info.name);
    }
    const int64_t file_start_us = MonotonicUs();
    AofLoadStatus status = LoadAofFile(host, dir, info.name, file_options);
    file_options.progress_base += file_sizes[i];
    if (status == AofLoadStatus::kOk || status == AofLoadStatus::kEmpty ||
        (status == AofLoadStatus::kTruncated && last)) {
      *loaded_any = true;
      if (status != AofLoadStatus::kEmpty) {
        spdlog::info("DB loaded from {} file {}: {:.3f} seconds",
                     info.type == AofFileType::kBase ? "base" : "incr", info.name,
                     static_cast<double>(MonotonicUs() - file_start_us) / 1e6);
      }
      continue;
    }
    if (status == AofLoadStatus::kTruncated) {
      spdlog::warn("Fatal error: the truncated file is not the last file");
    }
    error = fmt::format("{} {}", kAofFileLoadFailed, info.name);
    break;
  }
  host.StartupLoadEnded();
  host.RefreshCommandTime();
  if (error.empty() && *loaded_any) {
    spdlog::info("DB loaded from append only file: {:.3f} seconds",
                 static_cast<double>(MonotonicUs() - start_us) / 1e6);
  }
  return error;
}

}  // namespace vireo
