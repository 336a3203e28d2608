#include "db/blocking.h"

#include <algorithm>

namespace vireo {

BlockingEngine::KeyWaiters* BlockingEngine::FindKey(int db, std::string_view key) {
  if (db < 0 || static_cast<size_t>(db) >= keys_by_db_.size()) return nullptr;
  KeyMap& map = keys_by_db_[db];
  auto it = map.find(key);
  return it == map.end() ? nullptr : &it->second;
}

const BlockingEngine::KeyWaiters* BlockingEngine::FindKey(int db, std::string_view key) const {
  return const_cast<BlockingEngine*>(this)->FindKey(db, key);
}

void BlockingEngine::Block(uint64_t id, int db, std::vector<std::string> keys, int64_t deadline_ms,
                           ValueType type, std::shared_ptr<const WaitCondition> condition) {
  Unblock(id);
  // A key named twice (BLPOP k k 0) waits once.
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  if (static_cast<size_t>(db) >= keys_by_db_.size()) keys_by_db_.resize(db + 1);
  KeyMap& map = keys_by_db_[db];
  bool watches_changes = condition != nullptr && condition->WakeOnChange();
  for (const std::string& key : keys) {
    auto [it, inserted] = map.try_emplace(key);
    if (inserted) ++waited_keys_;
    it->second.fifo.push_back(id);
    if (watches_changes && it->second.change_watchers++ == 0) ++change_watched_keys_;
  }
  if (deadline_ms > 0) deadlines_.emplace(deadline_ms, id);
  waiters_.emplace(id, Waiter{id, db, std::move(keys), deadline_ms, type, std::move(condition)});
}

bool BlockingEngine::Unblock(uint64_t id) {
  auto it = waiters_.find(id);
  if (it == waiters_.end()) return false;
  const Waiter& w = it->second;
  KeyMap& map = keys_by_db_[w.db];
  bool watches_changes = w.condition != nullptr && w.condition->WakeOnChange();
  for (const std::string& key : w.keys) {
    auto kit = map.find(key);
    if (kit == map.end()) continue;
    if (watches_changes && --kit->second.change_watchers == 0) --change_watched_keys_;
    auto& fifo = kit->second.fifo;
    fifo.erase(std::remove(fifo.begin(), fifo.end(), id), fifo.end());
    if (fifo.empty()) {
      map.erase(kit);
      --waited_keys_;
    }
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
  if (waited_keys_ == 0) return;
  KeyWaiters* waiters = FindKey(db, key);
  if (waiters == nullptr || waiters->ready) return;
  waiters->ready = true;
  ready_.push_back({db, std::string(key)});
}

void BlockingEngine::SignalKeyChanged(int db, std::string_view key) {
  if (waited_keys_ == 0) return;
  KeyWaiters* waiters = FindKey(db, key);
  if (waiters == nullptr || waiters->change_watchers == 0 || waiters->ready) return;
  waiters->ready = true;
  ready_.push_back({db, std::string(key)});
}

bool BlockingEngine::CanServe(const Waiter& waiter, std::string_view key, const Value* value) {
  if (waiter.condition != nullptr) return waiter.condition->Ready(key, value);
  return value != nullptr && value->type() == waiter.type;
}

std::vector<BlockedKey> BlockingEngine::TakeReadyKeys() {
  std::vector<BlockedKey> out;
  out.swap(ready_);
  for (const BlockedKey& k : out) {
    if (KeyWaiters* waiters = FindKey(k.db, k.key); waiters != nullptr) waiters->ready = false;
  }
  return out;
}

std::vector<uint64_t> BlockingEngine::WaitersOf(int db, std::string_view key) const {
  const KeyWaiters* waiters = FindKey(db, key);
  if (waiters == nullptr) return {};
  return {waiters->fifo.begin(), waiters->fifo.end()};
}

bool BlockingEngine::HasWaiters(int db, std::string_view key) const {
  return waited_keys_ != 0 && FindKey(db, key) != nullptr;
}

std::vector<std::string> BlockingEngine::KeysWithWaiters(int db) const {
  std::vector<std::string> out;
  if (db < 0 || static_cast<size_t>(db) >= keys_by_db_.size()) return out;
  for (const auto& [key, waiters] : keys_by_db_[db]) out.push_back(key);
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
