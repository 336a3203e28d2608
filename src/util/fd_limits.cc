#include "util/fd_limits.h"

#include <spdlog/spdlog.h>
#include <sys/resource.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace vireo {

int64_t FitMaxclientsToOpenFilesLimit(int64_t maxclients) {
  const auto wanted = static_cast<rlim_t>(maxclients + kReservedFds);
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) {
    spdlog::warn(
        "Unable to obtain the current NOFILE limit ({}), assuming 1024 and setting the max "
        "clients configuration accordingly.",
        strerror(errno));
    return std::min<int64_t>(maxclients, 1024 - kReservedFds);
  }
  const rlim_t old_limit = limit.rlim_cur;
  if (old_limit != RLIM_INFINITY && old_limit < wanted) {
    // First the whole wish (which raises the hard limit too, if we are allowed to), then as
    // much as the hard limit permits: one or two calls rather than a descending search.
    rlimit ask{wanted, std::max(wanted, limit.rlim_max)};
    int error = 0;
    if (setrlimit(RLIMIT_NOFILE, &ask) != 0) {
      error = errno;
      ask = {std::min(wanted, limit.rlim_max), limit.rlim_max};
      if (ask.rlim_cur > old_limit && setrlimit(RLIMIT_NOFILE, &ask) != 0) {
        ask.rlim_cur = old_limit;
      }
    }
    const rlim_t best = std::max(ask.rlim_cur, old_limit);
    if (best < wanted) {
      const int64_t fitted = static_cast<int64_t>(best) - kReservedFds;
      if (fitted < 1) {
        spdlog::warn(
            "Your current 'ulimit -n' of {} is not enough for the server to start. Please "
            "increase your open file limit to at least {}. Exiting.",
            old_limit, wanted);
        return fitted;
      }
      spdlog::warn("You requested maxclients of {} requiring at least {} max file descriptors.",
                   maxclients, wanted);
      spdlog::warn("Server can't set maximum open files to {} because of OS error: {}.", wanted,
                   strerror(error != 0 ? error : EPERM));
      spdlog::warn(
          "Current maximum open files is {}. maxclients has been reduced to {} to compensate "
          "for low ulimit. If you need higher maxclients increase 'ulimit -n'.",
          best, fitted);
      return fitted;
    }
    spdlog::info("Increased maximum number of open files to {} (it was originally set to {}).",
                 wanted, old_limit);
  }
  return maxclients;
}

}  // namespace vireo
