// What the server knows about its memory and the keyspace's shared settings, for INFO, MEMORY,
// LATENCY DOCTOR and the commands that free or stamp values. The server implements it (the
// accounting in src/server/maxmemory.cc) and hands it out as Server::memory(), so these
// readers don't need the rest of the server's surface.
#pragma once

#include <cstddef>
#include <cstdint>

#include "db/database.h"
#include "db/defrag.h"
#include "db/eviction.h"
#include "db/lazy_free.h"

namespace vireo {

class MemoryView {
 public:
  virtual ~MemoryView() = default;

  // Bytes allocated by this process (src/util/alloc_counter.h).
  virtual size_t UsedMemory() const = 0;
  // Used memory that maxmemory leaves out (replica and AOF buffers).
  virtual size_t MemoryNotCountedForEviction() const = 0;
  // Microseconds memory has been over the limit in the current period (0 if not over).
  virtual uint64_t current_eviction_exceeded_us() const = 0;
  // Where large values go to be freed off the command path (UNLINK, FLUSHALL ASYNC).
  virtual LazyFreer& lazy_freer() = 0;
  // Active defragmentation's state and counters (src/db/defrag.h).
  virtual Defragmenter& defragmenter() = 0;
  // The options every database shares (the expiry view, the access clock).
  virtual const KeyspaceOptions& keyspace_options() const = 0;
  // The maxmemory-policy in effect (RDB saves keys' idle times under the LRU ones).
  virtual EvictionPolicy eviction_policy() const = 0;
};

}  // namespace vireo
