// Fitting maxclients to the process's descriptor limit (RLIMIT_NOFILE), as Redis does.
#pragma once

#include <cstdint>

namespace vireo {

// Descriptors kept free beyond one per client: listeners, the epoll and event fds, AOF and
// RDB files, the spare descriptor OnAccept uses to refuse clients when the table is full.
inline constexpr int64_t kReservedFds = 32;

// Raises the soft RLIMIT_NOFILE towards maxclients + kReservedFds (and the hard limit too
// where the process may) and returns the largest maxclients the resulting limit supports:
// `maxclients` itself, or less when the system refuses. Logs what it did in Redis's words.
// A result below 1 means not even one client fits (start-up must fail).
int64_t FitMaxclientsToOpenFilesLimit(int64_t maxclients);

}  // namespace vireo
