#include "db/blocking.h"

#include <algorithm>

namespace vireo {

std::string BlockingEngine::MapKey(int db, std::string_view key) {
  std::string out = std::to_string(db);
  out.push_back(':');
  out.append(key);
  return out;
}

void BlockingEngine::Block(uint64_t id, int db, std::vector<std::string> keys, int64_t deadline_ms,
                           ValueType type) {
  Unblock(id);
  // A key named twice (BLPOP k k 0) waits once.
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  for (const std::string& key : keys) key_waiters_[MapKey(db, key)].push_back(id);
  if (deadline_ms > 0) deadlines_.emplace(deadline_ms, id);
  waiters_.emplace(id, Waiter{id, db, std::move(keys), deadline_ms, type});
}

bool BlockingEngine::Unblock(uint64_t id) {
  auto it = waiters_.find(id);
  if (it == waiters_.end()) return false;
  const Waiter& w = it->second;
  for (const std::string& key : w.keys) {
    auto kit = key_waiters_.find(MapKey(w.db, key));
    if (kit == key_waiters_.end()) continue;
    auto& fifo = kit->second;
    fifo.erase(std::remove(fifo.begin(), fifo.end(), id), fifo.end());
    if (fifo.empty()) key_waiters_.erase(kit);
  }
  if (w.deadline_ms > 0) deadlines_.erase({w.deadline_ms, id});
  waiters_.erase(it);
  return true;
}

const BlockingEngine::Waiter* BlockingEngine::Find(uint64_t id) const {
  auto it = waiters_.find(id);
  return it == waiters_.end() ? nullptr : &it->second;
}

void BlockingEngine::SignalKeyAsReady(int db, std::string_view key) {
  if (key_waiters_.empty()) return;
  std::string map_key = MapKey(db, key);
  if (key_waiters_.count(map_key) == 0) return;
  if (!ready_set_.insert(map_key).second) return;
  ready_.push_back({db, std::string(key)});
}

std::vector<BlockedKey> BlockingEngine::TakeReadyKeys() {
  std::vector<BlockedKey> out;
  out.swap(ready_);
  ready_set_.clear();
  return out;
}

std::vector<uint64_t> BlockingEngine::WaitersOf(int db, std::string_view key) const {
  auto it = key_waiters_.find(MapKey(db, key));
  if (it == key_waiters_.end()) return {};
  return {it->second.begin(), it->second.end()};
}

bool BlockingEngine::HasWaiters(int db, std::string_view key) const {
  return !key_waiters_.empty() && key_waiters_.count(MapKey(db, key)) != 0;
}

std::vector<std::string> BlockingEngine::KeysWithWaiters(int db) const {
  std::vector<std::string> out;
  std::string prefix = std::to_string(db) + ":";
  for (const auto& [map_key, fifo] : key_waiters_) {
    if (map_key.compare(0, prefix.size(), prefix) == 0)
      out.push_back(map_key.substr(prefix.size()));
  }
  return out;
}

int64_t BlockingEngine::NextDeadline() const {
  return deadlines_.empty() ? 0 : deadlines_.begin()->first;
}

std::vector<uint64_t> BlockingEngine::Expired(int64_t now_ms) const {
  std::vector<uint64_t> out;
  for (const auto& [deadline, id] : deadlines_) {
    if (deadline > now_ms) break;
    out.push_back(id);
  }
  return out;
}

}  // namespace vireo
