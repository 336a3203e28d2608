// WATCH: which clients watch which keys, and marking them dirty (kClientDirtyCas) when a
// watched key changes, so their EXEC fails. Each client also lists its own watched keys
// (Client::watched_keys), with whether the key was already past its TTL when watched: a key
// that was stale when watched and is then deleted has not logically changed (Redis 7's rule).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace vireo {

class Client;
class Database;

class WatchedKeys {
 public:
  // `dbs` (the server's databases, filled before the first WATCH) outlives this.
  explicit WatchedKeys(const std::vector<std::unique_ptr<Database>>& dbs) : dbs_(dbs) {}
  WatchedKeys(const WatchedKeys&) = delete;
  WatchedKeys& operator=(const WatchedKeys&) = delete;

  void Watch(Client& client, int db, std::string_view key);
  void UnwatchAll(Client& client);
  // A write to `key` of `db`: its watchers become dirty.
  void Touch(int db, std::string_view key);
  // FLUSHDB, SWAPDB, a new data set: clients watching a key of `db` that exists there, or in
  // `replaced_with`, become dirty (keys stale when watched follow Redis 7's rules).
  void TouchAllInDb(int db, Database* replaced_with = nullptr);
  // True if a key watched by `client` has passed its TTL since WATCH (EXEC must fail).
  bool AnyExpired(const Client& client) const;

 private:
  // Per database: key -> clients watching it (sized on the first WATCH).
  using KeyWatchers = std::unordered_map<std::string, std::vector<Client*>>;
  std::vector<KeyWatchers> by_db_;
  const std::vector<std::unique_ptr<Database>>& dbs_;
};

}  // namespace vireo
