#include "server/watched_keys.h"

#include <algorithm>

#include "db/database.h"
#include "server/client.h"

namespace vireo {

namespace {

Client::WatchedKey* FindWatchedKey(Client& client, int db, std::string_view key) {
  for (auto& w : client.watched_keys) {
    if (w.db == db && w.key == key) return &w;
  }
  return nullptr;
}

}  // namespace

void WatchedKeys::Watch(Client& client, int db, std::string_view key) {
  for (const auto& w : client.watched_keys) {
    if (w.db == db && w.key == key) return;
  }
  client.watched_keys.push_back({db, std::string(key), dbs_[db]->IsLogicallyExpired(key)});
  client.watched_key_bytes += key.size();
  if (by_db_.size() < dbs_.size()) by_db_.resize(dbs_.size());
  by_db_[db][std::string(key)].push_back(&client);
}

void WatchedKeys::UnwatchAll(Client& client) {
  for (const auto& w : client.watched_keys) {
    auto& map = by_db_[w.db];
    auto it = map.find(w.key);
    if (it == map.end()) continue;
    std::erase(it->second, &client);
    if (it->second.empty()) map.erase(it);
  }
  client.watched_keys.clear();
  client.watched_key_bytes = 0;
}

void WatchedKeys::Touch(int db, std::string_view key) {
  if (static_cast<size_t>(db) >= by_db_.size()) return;
  auto& map = by_db_[db];
  if (map.empty()) return;
  auto it = map.find(std::string(key));
  if (it == map.end()) return;
  const bool stored = dbs_[db]->Peek(key) != nullptr;
  for (Client* c : it->second) {
    // A key that was already expired when watched and is now deleted has not logically
    // changed (Redis 7: "Delete WATCHed stale keys should not fail EXEC"); from here on it is
    // an ordinary missing key.
    Client::WatchedKey* w = FindWatchedKey(*c, db, key);
    if (w != nullptr && w->expired_at_watch && !stored) {
      w->expired_at_watch = false;
      continue;
    }
    c->set(kClientDirtyCas);
  }
}

void WatchedKeys::TouchAllInDb(int db, Database* replaced_with) {
  if (static_cast<size_t>(db) >= by_db_.size()) return;
  // Looks only at what is stored (no lazy expiry on the way): stale keys are judged by the
  // rules below, as Redis does for FLUSHDB, SWAPDB and a replica's new data set.
  Database& emptied = *dbs_[db];
  for (auto& [key, watchers] : by_db_[db]) {
    const bool in_emptied = emptied.Peek(key) != nullptr;
    const DbEntry* incoming = replaced_with != nullptr ? replaced_with->Peek(key) : nullptr;
    if (!in_emptied && incoming == nullptr) continue;
    const bool incoming_stale = incoming != nullptr && replaced_with->IsExpired(incoming);
    for (Client* c : watchers) {
      Client::WatchedKey* w = FindWatchedKey(*c, db, key);
      if (w != nullptr && w->expired_at_watch) {
        if (incoming == nullptr) {
          w->expired_at_watch = false;  // a stale key is gone: no logical change
          continue;
        }
        if (incoming_stale) continue;  // stale before, stale after
      } else if (w != nullptr && !in_emptied && incoming_stale) {
        w->expired_at_watch = true;  // missing before, replaced by a stale key
        continue;
      }
      c->set(kClientDirtyCas);
    }
  }
}

bool WatchedKeys::AnyExpired(const Client& client) const {
  for (const auto& w : client.watched_keys) {
    if (!w.expired_at_watch && dbs_[w.db]->IsLogicallyExpired(w.key)) return true;
  }
  return false;
}

}  // namespace vireo
