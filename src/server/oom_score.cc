#include "server/oom_score.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace vireo {
namespace {

constexpr char kPath[] = "/proc/self/oom_score_adj";
constexpr char kFailed[] = "Failed to set current oom_score_adj. Check server logs.";

bool ReadScore(int* out) {
  int fd = open(kPath, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char buf[32] = {};
  ssize_t n = read(fd, buf, sizeof(buf) - 1);
  close(fd);
  if (n <= 0) return false;
  *out = std::atoi(buf);
  return true;
}

bool WriteScore(int value) {
  int fd = open(kPath, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  std::string text = std::to_string(value) + "\n";
  bool ok = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  close(fd);
  return ok;
}

}  // namespace

std::string OomScore::Apply(const ServerConfig& c, OomRole role) {
  int value;
  if (c.oom_score_adj != "no") {
    if (!adjusted_) {
      if (!ReadScore(&base_)) {
        spdlog::warn("Unable to read oom_score_adj: {}", std::strerror(errno));
        return kFailed;
      }
      adjusted_ = true;
    }
    int64_t v = c.oom_score_adj_values[static_cast<int>(role)];
    // "yes" (relative) adds to the score the process started with; "absolute" replaces it.
    if (c.oom_score_adj == "yes") v += base_;
    value = static_cast<int>(std::clamp<int64_t>(v, -1000, 1000));
  } else if (adjusted_) {
    adjusted_ = false;
    value = base_;
  } else {
    return "";
  }
  if (value == last_written_ && adjusted_) return "";
  if (!WriteScore(value)) {
    spdlog::warn("Unable to write oom_score_adj: {}", std::strerror(errno));
    return kFailed;
  }
  last_written_ = adjusted_ ? value : INT32_MIN;
  return "";
}

}  // namespace vireo
