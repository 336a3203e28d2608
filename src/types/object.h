// The base of every non-string value a key can hold (list, hash, set, zset, stream).
#pragma once

#include <cstddef>
#include <memory>

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
  // What OBJECT ENCODING answers ("listpack", "quicklist", "hashtable"...).
  virtual const char* EncodingName() const = 0;
};

}  // namespace vireo
