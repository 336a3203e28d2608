#include "persistence/aof_manifest.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>

#include "util/strings.h"

namespace vireo {
namespace {

// Redis reads manifest lines with a fixed buffer: a longer line is an error.
constexpr size_t kMaxManifestLine = 1024;

bool IsHexDigit(char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; }

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  return std::tolower(static_cast<unsigned char>(c)) - 'a' + 10;
}

bool NeedsQuoting(std::string_view s) {
  for (unsigned char c : s) {
    if (c == '\\' || c == '"' || !std::isprint(c) || std::isspace(c)) return true;
  }
  return false;
}

std::string FormatLine(const AofFileInfo& info) {
  return fmt::format("file {} seq {} type {}\n", QuoteManifestName(info.name), info.seq,
                     static_cast<char>(info.type));
}

std::string_view Trim(std::string_view s) {
  auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  while (!s.empty() && blank(s.front())) s.remove_prefix(1);
  while (!s.empty() && blank(s.back())) s.remove_suffix(1);
  return s;
}

}  // namespace

bool SplitManifestArgs(std::string_view line, std::vector<std::string>* out) {
  out->clear();
  size_t i = 0;
  const size_t n = line.size();
  auto space = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
  while (true) {
    while (i < n && space(line[i])) ++i;
    if (i >= n) return true;
    std::string word;
    bool in_double = false, in_single = false;
    while (true) {
      if (in_double) {
        if (i >= n) return false;
        char c = line[i];
        if (c == '\\' && i + 3 < n && line[i + 1] == 'x' && IsHexDigit(line[i + 2]) &&
            IsHexDigit(line[i + 3])) {
          word.push_back(static_cast<char>(HexValue(line[i + 2]) * 16 + HexValue(line[i + 3])));
          i += 3;
        } else if (c == '\\' && i + 1 < n) {
          char e = line[++i];
          switch (e) {
            case 'n':
              word.push_back('\n');
              break;
            case 'r':
              word.push_back('\r');
              break;
            case 't':
              word.push_back('\t');
              break;
            case 'b':
              word.push_back('\b');
              break;
            case 'a':
              word.push_back('\a');
              break;
            default:
              word.push_back(e);
          }
        } else if (c == '"') {
          // The closing quote must end the word.
          if (i + 1 < n && !space(line[i + 1])) return false;
          in_double = false;
          ++i;
          break;
        } else {
          word.push_back(c);
        }
        ++i;
      } else if (in_single) {
        if (i >= n) return false;
        char c = line[i];
        if (c == '\\' && i + 1 < n && line[i + 1] == '\'') {
          word.push_back('\'');
          ++i;
        } else if (c == '\'') {
          if (i + 1 < n && !space(line[i + 1])) return false;
          in_single = false;
          ++i;
          break;
        } else {
          word.push_back(c);
        }
        ++i;
      } else {
        if (i >= n || space(line[i])) break;
        char c = line[i];
        if (c == '"') {
          in_double = true;
        } else if (c == '\'') {
          in_single = true;
        } else {
          word.push_back(c);
        }
        ++i;
      }
    }
    out->push_back(std::move(word));
  }
}

std::string QuoteManifestName(std::string_view name) {
  if (!NeedsQuoting(name)) return std::string(name);
  return QuoteRepr(name);
}

std::string AofManifest::Parse(std::string_view text, int* error_line) {
  *this = AofManifest();
  if (error_line != nullptr) *error_line = 0;
  int64_t max_incr_seq = 0;
  int line_number = 0;
  std::vector<std::string> args;
  size_t pos = 0;
  auto fail = [&](const char* message) {
    if (error_line != nullptr) *error_line = line_number;
    return std::string(message);
  };
  while (pos < text.size()) {
    size_t eol = text.find('\n', pos);
    // Redis reads with a 1024-byte line buffer: what doesn't fit (or has no newline at all)
    // counts as a line too long.
    std::string_view raw =
        text.substr(pos, eol == std::string_view::npos ? std::string_view::npos : eol - pos);
    ++line_number;
    pos = eol == std::string_view::npos ? text.size() : eol + 1;
    if (!raw.empty() && raw[0] == '#') continue;
    if (eol == std::string_view::npos || raw.size() + 1 > kMaxManifestLine) {
      return fail("The AOF manifest file contains too long line");
    }
    std::string_view line = Trim(raw);
    if (line.empty()) return fail("Invalid AOF manifest file format");
    if (!SplitManifestArgs(line, &args) || args.size() < 6 || args.size() % 2 != 0) {
      return fail("Invalid AOF manifest file format");
    }
    AofFileInfo info;
    char type = 0;
    for (size_t i = 0; i < args.size(); i += 2) {
      const std::string& key = args[i];
      const std::string& value = args[i + 1];
      if (EqualsIgnoreCase(key, "file")) {
        if (value.find('/') != std::string::npos || value.find('\\') != std::string::npos) {
          return fail("File can't be a path, just a filename");
        }
        info.name = value;
      } else if (EqualsIgnoreCase(key, "seq")) {
        // atoll: leading digits, anything else reads as 0.
        info.seq = std::atoll(value.c_str());
      } else if (EqualsIgnoreCase(key, "type")) {
        type = value.empty() ? 0 : value[0];
      }
    }
    if (info.name.empty() || info.seq == 0 || type == 0) {
      return fail("Invalid AOF manifest file format");
    }
    if (type == 'b') {
      if (base.has_value()) return fail("Found duplicate base file information");
      info.type = AofFileType::kBase;
      base = info;
      base_seq = info.seq;
    } else if (type == 'h') {
      info.type = AofFileType::kHistory;
      history.push_back(info);
    } else if (type == 'i') {
      if (info.seq <= max_incr_seq) return fail("Found a non-monotonic sequence number");
      info.type = AofFileType::kIncr;
      incrs.push_back(info);
      incr_seq = info.seq;
      max_incr_seq = info.seq;
    } else {
      return fail("Unknown AOF file type");
    }
  }
  if (line_number == 0) return fail("Found an empty AOF manifest");
  return "";
}

std::string AofManifest::ToString() const {
  std::string out;
  if (base.has_value()) out += FormatLine(*base);
  for (const AofFileInfo& info : history) out += FormatLine(info);
  for (const AofFileInfo& info : incrs) out += FormatLine(info);
  return out;
}

AofFileInfo AofManifest::NextBase(const std::string& prefix, bool rdb_format) {
  AofFileInfo info;
  info.seq = ++base_seq;
  info.type = AofFileType::kBase;
  info.name = fmt::format("{}.{}.base{}", prefix, info.seq, rdb_format ? ".rdb" : ".aof");
  return info;
}

AofFileInfo AofManifest::NextIncr(const std::string& prefix) {
  AofFileInfo info;
  info.seq = ++incr_seq;
  info.type = AofFileType::kIncr;
  info.name = fmt::format("{}.{}.incr.aof", prefix, info.seq);
  return info;
}

void AofManifest::ReplaceBase(AofFileInfo new_base, size_t keep_last_incrs) {
  // Newest history first, as Redis lists it: the old base goes to the head, then each retired
  // incremental file in turn (so the last retired one ends up first).
  auto retire_to_history = [this](AofFileInfo old) {
    old.type = AofFileType::kHistory;
    history.insert(history.begin(), std::move(old));
  };
  if (base.has_value()) retire_to_history(*base);
  new_base.type = AofFileType::kBase;
  base = std::move(new_base);
  size_t retire = incrs.size() > keep_last_incrs ? incrs.size() - keep_last_incrs : 0;
  for (size_t i = 0; i < retire; ++i) retire_to_history(incrs[i]);
  incrs.erase(incrs.begin(), incrs.begin() + static_cast<ptrdiff_t>(retire));
}

std::string AofManifestErrorReport(std::string_view content, int error_line,
                                   std::string_view error) {
  std::string message = "\n*** FATAL AOF MANIFEST FILE ERROR ***\n";
  if (error_line > 0) {
    std::string_view rest = content;
    for (int i = 1; i < error_line; ++i) {
      rest.remove_prefix(std::min(rest.size(), rest.find('\n') + 1));
    }
    std::string_view bad = rest.substr(0, rest.find('\n'));
    message += fmt::format("Reading the manifest file, at line {}\n>>> '{}'\n", error_line, bad);
  }
  message += error;
  return message;
}

std::string AofManifestName(const std::string& appendfilename) {
  return appendfilename + ".manifest";
}

std::string AofTempIncrName(const std::string& appendfilename) {
  return "temp-" + appendfilename + ".incr";
}

void FsyncDir(const std::string& dir) {
  int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  fsync(fd);
  close(fd);
}

std::string WriteFileAtomically(const std::string& dir, const std::string& name,
                                std::string_view text) {
  std::string temp_path = dir + "/temp-" + name;
  std::string path = dir + "/" + name;
  int fd = open(temp_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return fmt::format("Can't open {}: {}", temp_path, strerror(errno));
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = write(fd, text.data() + done, text.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      std::string err = fmt::format("Can't write {}: {}", temp_path, strerror(errno));
      close(fd);
      unlink(temp_path.c_str());
      return err;
    }
    done += static_cast<size_t>(n);
  }
  if (fsync(fd) != 0) {
    std::string err = fmt::format("Can't fsync {}: {}", temp_path, strerror(errno));
    close(fd);
    unlink(temp_path.c_str());
    return err;
  }
  close(fd);
  if (rename(temp_path.c_str(), path.c_str()) != 0) {
    std::string err = fmt::format("Can't rename {} to {}: {}", temp_path, path, strerror(errno));
    unlink(temp_path.c_str());
    return err;
  }
  FsyncDir(dir);
  return "";
}

}  // namespace vireo
