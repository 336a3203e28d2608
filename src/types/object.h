// The base of every non-string value a key can hold (list, hash, set, zset, stream).
#pragma once

#include <cstddef>
#include <memory>

#include "util/allocator.h"

namespace vireo {

class HeapObject {
 public:
  virtual ~HeapObject() = default;
  // Bytes owned, for MEMORY USAGE and INFO memory estimates.
  virtual size_t MemoryUsage() const = 0;
  // A deep copy, for COPY.
  virtual std::unique_ptr<HeapObject> Clone() const = 0;
  // Roughly how many allocations freeing it takes: values above a threshold are handed to the
  // background free thread (UNLINK, lazyfree-lazy-*), small ones are cheaper to free in place.
  virtual size_t FreeEffort() const { return 1; }
  // Active defragmentation: moves the allocations the object owns that the allocator says to
  // (allocator::Defrag), fixing its own pointers; the object itself stays where it is.
  // Returns a cursor to continue from on the next call (0: the object is done), so a big
  // object is handled over several calls of at most about `budget` allocations each.
  virtual uint64_t Defrag(allocator::DefragCounters& counters, uint64_t cursor, size_t budget) {
    return 0;
  }
  // What OBJECT ENCODING answers ("listpack", "quicklist", "hashtable"...).
  virtual const char* EncodingName() const = 0;
};

}  // namespace vireo
