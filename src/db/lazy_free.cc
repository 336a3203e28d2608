#include "db/lazy_free.h"

#include "db/database.h"

namespace vireo {

LazyFreer::LazyFreer() : worker_([this] { Run(); }) {}

LazyFreer::~LazyFreer() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_one();
  worker_.join();
}

void LazyFreer::Free(Value value) {
  if (!WorthIt(value)) return;  // `value` is freed here, on return
  pending_.fetch_add(1, std::memory_order_relaxed);
  std::lock_guard lock(mu_);
  values_.push_back(std::move(value));
  cv_.notify_one();
}

void LazyFreer::Free(std::unique_ptr<Database> db) {
  // Redis counts a flushed keyspace as one object per key.
  pending_.fetch_add(db->size(), std::memory_order_relaxed);
  std::lock_guard lock(mu_);
  dbs_.push_back(std::move(db));
  cv_.notify_one();
}

void LazyFreer::Drain() {
  std::unique_lock lock(mu_);
  idle_cv_.wait(lock, [this] { return values_.empty() && dbs_.empty() && !busy_; });
}

void LazyFreer::Run() {
  std::unique_lock lock(mu_);
  while (true) {
    cv_.wait(lock, [this] { return stop_ || !values_.empty() || !dbs_.empty(); });
    if (values_.empty() && dbs_.empty()) return;  // stop requested and drained
    std::vector<Value> values;
    std::vector<std::unique_ptr<Database>> dbs;
    values.swap(values_);
    dbs.swap(dbs_);
    busy_ = true;
    lock.unlock();
    uint64_t objects = values.size();
    for (const auto& db : dbs) objects += db->size();
    values.clear();
    dbs.clear();
    pending_.fetch_sub(objects, std::memory_order_relaxed);
    freed_.fetch_add(objects, std::memory_order_relaxed);
    lock.lock();
    busy_ = false;
    if (values_.empty() && dbs_.empty()) idle_cv_.notify_all();
  }
}

}  // namespace vireo
