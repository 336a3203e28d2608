// Frees values and whole keyspaces off the event loop (UNLINK, FLUSHALL ASYNC, the
// lazyfree-lazy-* configs), so dropping millions of allocations doesn't stall clients. One
// worker thread per server, joined when the server goes, so nothing is left half-freed.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "db/value.h"

namespace vireo {

class Database;

class LazyFreer {
 public:
  // Values whose FreeEffort is at most this are freed in place: handing them over costs more
  // than freeing them (Redis uses the same cut-off).
  static constexpr size_t kEffortThreshold = 64;

  LazyFreer();
  ~LazyFreer();
  LazyFreer(const LazyFreer&) = delete;
  LazyFreer& operator=(const LazyFreer&) = delete;

  // Whether freeing `value` is worth a trip to the worker.
  static bool WorthIt(const Value& value) {
    const HeapObject* object = value.object();
    return object != nullptr && object->FreeEffort() > kEffortThreshold;
  }
  // Frees `value` on the worker when WorthIt, else now.
  void Free(Value value);
  void Free(std::unique_ptr<Database> db);

  // INFO memory lazyfree_pending_objects / lazyfreed_objects.
  uint64_t pending_objects() const { return pending_.load(std::memory_order_relaxed); }
  uint64_t freed_objects() const { return freed_.load(std::memory_order_relaxed); }
  void ResetStats() { freed_.store(0, std::memory_order_relaxed); }
  // Blocks until everything queued so far is freed (DEBUG, tests, shutdown).
  void Drain();

 private:
  void Run();

  std::mutex mu_;
  std::condition_variable cv_;
  std::condition_variable idle_cv_;
  std::vector<Value> values_;
  std::vector<std::unique_ptr<Database>> dbs_;
  bool busy_ = false;
  bool stop_ = false;
  std::atomic<uint64_t> pending_{0};
  std::atomic<uint64_t> freed_{0};
  std::thread worker_;
};

}  // namespace vireo
