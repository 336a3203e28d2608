// One logical database: the keyspace table, the expires table and lazy/active expiry.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "core/key_slot.h"
#include "db/access_clock.h"
#include "db/value.h"
#include "types/compact_string.h"
#include "types/hash_table.h"
#include "util/allocator.h"

namespace vireo {

struct DbEntry {
  DbEntry* next = nullptr;
  CompactString key;
  Value value;
  // Whether the key has a TTL, kept in the key's spare bit so the entry stays 56 bytes.
  bool has_expire() const { return key.flag(); }
};
static_assert(sizeof(DbEntry) == 56);

// The entry of a database that keeps the cluster slot index: it is also a node of its slot's
// doubly linked list, so adding or deleting a key stays O(1) and listing a slot's keys costs
// only that slot's keys. Only cluster mode allocates these (16 bytes more per key); entries of
// an ordinary database are plain DbEntry. The slot itself is not stored (it would cost another
// 16 bytes after alignment): deletion recomputes it from the key.
struct SlottedDbEntry : DbEntry {
  SlottedDbEntry* slot_prev = nullptr;
  SlottedDbEntry* slot_next = nullptr;
};

struct DbEntryKey {
  std::string_view operator()(const DbEntry& e) const { return e.key.view(); }
};

struct ExpireEntry {
  ExpireEntry* next = nullptr;
  DbEntry* entry;
  int64_t when_ms;
};

struct ExpireEntryKey {
  std::string_view operator()(const ExpireEntry& e) const { return e.entry->key.view(); }
};

// What the server wants to hear about keyspace changes: WATCH invalidation, blocked clients
// waiting for a key, keyspace statistics.
class KeyspaceListener {
 public:
  virtual ~KeyspaceListener() = default;
  // Any write to the key's value or existence (SET, DEL, expiry, FLUSHDB...).
  virtual void OnKeyModified(int db, std::string_view key) = 0;
  // A key was deleted because its TTL passed.
  virtual void OnKeyExpired(int db, std::string_view key) = 0;
  // A key was created or its value replaced: clients blocked on it may be servable now.
  virtual void OnKeyAdded(int db, std::string_view key) = 0;
  // A key that didn't exist was created (keyspace event "new"). Called before OnKeyAdded.
  virtual void OnKeyCreated(int db, std::string_view key) {}
  // An existing key's value was replaced whole by a write that sets the key (SET, MSET, the
  // *STORE commands...: Set, not an in-place change); keyspace events "overwritten" and, when
  // the type differs, "type_changed". Called before OnKeyAdded.
  virtual void OnKeyOverwritten(int db, std::string_view key, ValueType old_type,
                                ValueType new_type) {}
  // Fields of the hash at `key` were deleted because their TTL passed (lazily on lookup or by
  // the active cycle); key_deleted: that emptied the hash and the key is gone.
  virtual void OnHashFieldsExpired(int db, std::string_view key,
                                   std::span<const std::string> fields, bool key_deleted) {}
};

class LazyFreer;

// How a key past its TTL looks to the running command. A master deletes it on access (and
// propagates a DEL); a replica leaves expiry to its master: its own clients see nothing there
// (nil) but the key stays, and the commands its master sends see keys as stored, so they
// apply exactly as on the master.
enum class ExpiryView : uint8_t { kMaster, kReplicaClient, kReplicaMaster };

// Server-owned settings the keyspace consults on every access and deletion (several servers
// in one process each have their own).
struct KeyspaceOptions {
  // The time commands see, in ms: fixed for the duration of a command (and of EXEC or a
  // script), so a key can't expire half-way through one. The server sets it.
  int64_t now_ms = 0;
  AccessTracking access;
  LazyFreer* freer = nullptr;
  bool lazy_expire = false;      // lazyfree-lazy-expire: expired values freed in the background
  bool lazy_server_del = false;  // lazyfree-lazy-server-del: values replaced by a write
  ExpiryView expiry_view = ExpiryView::kMaster;
  // The running command is a writable replica's own client's (not its master's): a TTL it
  // sets is remembered, so that the replica itself expires the key (ExpireReplicaWritten).
  bool note_replica_expires = false;
  // Redis's dictExpandAllowed: whether `bytes` more (a grown bucket array) would still fit
  // under maxmemory. The keyspace's tables grow past it only when their load factor is over
  // kGrowPastMaxmemoryLoad, since a table that full costs more in chains than its array would.
  // Unset: always fits.
  std::function<bool(size_t bytes)> fits_in_maxmemory;
};

// Redis's HASHTABLE_MAX_LOAD_FACTOR (the golden ratio).
inline constexpr double kGrowPastMaxmemoryLoad = 1.618;

class Database {
 public:
  // Deletions don't shrink these tables; the server's cron does (TryShrink), as Redis's
  // tryResizeHashTables, so a burst of DELs doesn't resize between every few commands.
  using Table = HashTable<DbEntry, DbEntryKey, false>;
  using ExpireTable = HashTable<ExpireEntry, ExpireEntryKey, false>;

  // The keyspace and expires tables are keyed with a seed drawn from the OS for each
  // database, so clients can't pick keys that collide into one chain (HashDoS). Tests that
  // need reproducible layouts pass their own seed.
  Database(int index, KeyspaceListener* listener) : Database(index, listener, RandomSeed()) {}
  Database(int index, KeyspaceListener* listener, uint64_t seed)
      : index_(index), listener_(listener), table_(seed), expires_(SplitMix(seed)) {}
  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  int index() const { return index_; }

  // The time commands see (KeyspaceOptions::now_ms).
  int64_t now_ms() const { return options_->now_ms; }
  void set_now_ms(int64_t ms) { options_->now_ms = ms; }

  // The live entry for `key`, or nullptr. A key whose TTL has passed is deleted on the way.
  // Counts as an access (LRU clock / LFU counter) unless the options say not to.
  DbEntry* Find(std::string_view key);
  // Find that never counts as an access (TYPE, TTL, EXISTS, OBJECT: Redis's LOOKUP_NOTOUCH).
  DbEntry* FindNoTouch(std::string_view key);
  // Adds a key that must not exist.
  DbEntry* Add(std::string_view key, Value value);
  // Adds or replaces. A replaced key loses its TTL unless keep_ttl.
  DbEntry* Set(std::string_view key, Value value, bool keep_ttl = false);
  bool Delete(std::string_view key);
  // `lazy`: a big value goes to the background free thread (KeyspaceOptions::freer). Without
  // it, lazyfree-lazy-server-del decides: the server's own deletions (a key emptied by a pop,
  // RENAME's overwritten destination, RESTORE REPLACE...).
  void DeleteEntry(DbEntry* entry, bool lazy);
  void DeleteEntry(DbEntry* entry) { DeleteEntry(entry, options_->lazy_server_del); }
  // Removes the entry without freeing it, TTL dropped. The caller owns it and frees it with
  // FreeDetached (a slot-indexed database allocates a larger entry).
  DbEntry* Detach(std::string_view key);
  void FreeDetached(DbEntry* entry) { DestroyEntry(entry); }

  // The cluster slot index (cluster mode only): per slot, a count and a list of its keys, kept
  // by every insertion and deletion. Enable it while the database is empty; the per-slot
  // arrays are allocated with the first key. Without it the queries below answer 0 / nothing,
  // and the keyspace pays nothing for the feature.
  void EnableSlotIndex();
  bool slot_indexed() const { return slotted_; }
  // Keys stored in `slot`, expired ones not yet deleted included (as Redis counts them).
  size_t CountKeysInSlot(int slot) const;
  std::vector<std::string> KeysInSlot(int slot, size_t max_count) const;
  // Deletes every key of `slot` (the listener hears OnKeyModified for each); `on_deleted` is
  // called with each key after its deletion, for what the server adds (propagating DEL,
  // keyspace events). Returns the number deleted.
  size_t DeleteKeysInSlot(int slot);
  size_t DeleteKeysInSlot(int slot, const std::function<void(std::string_view)>& on_deleted);

  // -1 when the key has no TTL.
  int64_t GetExpire(const DbEntry* entry);
  void SetExpire(DbEntry* entry, int64_t when_ms);
  bool Persist(DbEntry* entry);
  bool IsExpired(const DbEntry* entry);
  // The key is still stored but its TTL has passed (no lazy deletion on the way).
  bool IsLogicallyExpired(std::string_view key);
  // Lookup without lazy expiry, for introspection that must not modify the keyspace.
  DbEntry* Peek(std::string_view key) { return table_.Find(key); }

  size_t size() const { return table_.size(); }
  size_t expires_size() const { return expires_.size(); }

  // Hash field TTLs: a command that gave a field of the hash at `entry` a TTL registers the
  // key here, so the active cycle visits it (keys added or replaced with such a hash through
  // Add/Set register themselves). Stale registrations are dropped when visited.
  void NoteFieldTtls(const DbEntry* entry);
  // Hashes that have fields with a TTL (INFO keyspace subexpiry).
  size_t CountHashesWithFieldTtls();
  // Deletes the hash's expired fields now (the lookups do it on their own; RESTORE, the
  // loaders call it after building a value). True if that deleted the key.
  bool ExpireHashFields(DbEntry* entry);
  void Clear();
  void SwapContents(Database& other);

  template <typename F>
  uint64_t Scan(uint64_t cursor, F&& fn) {
    return table_.Scan(cursor, std::forward<F>(fn));
  }
  template <typename F>
  void ForEach(F&& fn) {
    table_.ForEach(std::forward<F>(fn));
  }
  DbEntry* RandomEntry(uint64_t rand) { return table_.RandomNode(rand); }
  // Up to `count` keys (or keys with a TTL, with their expiry) from a random stretch of the
  // table, for eviction (HashTable::SampleNodes: cheap, not uniform).
  ExpireEntry* RandomExpiring(uint64_t rand) { return expires_.RandomNode(rand); }
  template <typename F>
  size_t SampleEntries(uint64_t rand, size_t count, F&& fn) const {
    return table_.SampleNodes(rand, count, std::forward<F>(fn));
  }
  template <typename F>
  size_t SampleExpiring(uint64_t rand, size_t count, F&& fn) const {
    return expires_.SampleNodes(rand, count, std::forward<F>(fn));
  }

  // The server's options; a database on its own (tests, a keyspace being freed) has its own.
  void set_options(KeyspaceOptions* options) { options_ = options; }
  // Records an access now, as a lookup does.
  void Touch(DbEntry* entry) {
    entry->value.set_access_clock(
        TouchedClock(entry->value.access_clock(), options_->access, now_ms()));
  }

  // Deletes expired keys, sampling the expires table until `deadline_us` (MonotonicUs) or
  // until a pass finds few expired keys. Returns the number deleted.
  size_t ActiveExpireCycle(int64_t deadline_us);
  // A replica's active expiry (its master's keys wait for the master's DELs): deletes the
  // keys its own clients gave a TTL (noted while KeyspaceOptions::note_replica_expires) once
  // that TTL has passed, and forgets the ones that are gone or lost their TTL. Returns the
  // number deleted.
  size_t ExpireReplicaWritten();
  size_t replica_written_expires() const { return replica_expiring_.size(); }
  // The last ActiveExpireCycle stopped at its deadline with expired keys still left.
  bool expire_backlog() const { return expire_backlog_; }
  // Background rehash work for idle periods.
  void RehashStep(int buckets) {
    table_.RehashStep(buckets);
    expires_.RehashStep(buckets);
  }
  // Starts shrinking a table left under its minimum fill (HashTable::TryShrink).
  void TryShrink() {
    table_.TryShrink();
    expires_.TryShrink();
  }
  // DEBUG HTSTATS: the keyspace's and the expires' bucket array `index` (0 or 1).
  HashTableStats KeyspaceStats(int index, bool full) const { return table_.Stats(index, full); }
  HashTableStats ExpiresStats(int index, bool full) const { return expires_.Stats(index, full); }
  bool keyspace_rehashing() const { return table_.rehashing(); }
  bool expires_rehashing() const { return expires_.rehashing(); }
  // Active defragmentation (src/db/defrag.h), one bucket of the keyspace per call with SCAN's
  // cursor: each key's entry, key bytes and string value moved where the allocator says so,
  // the table, the key's expires entry and its slot list updated. Objects are left to the
  // caller: `on_key(entry, moved)` is called for each key after that (moved: something of it
  // was), and does the object's part.
  template <typename F>
  uint64_t DefragKeys(uint64_t cursor, allocator::DefragCounters& counters, F&& on_key) {
    return table_.ScanReplace(cursor, [&](DbEntry* entry) {
      const uint64_t hits_before = counters.hits;
      entry->key.Defrag(counters);
      entry->value.DefragString(counters);
      DbEntry* moved = DefragEntry(entry, counters);
      on_key(moved, counters.hits > hits_before);
      return moved;
    });
  }
  // The expires table's nodes, one bucket per call likewise.
  uint64_t DefragExpires(uint64_t cursor, allocator::DefragCounters& counters);

  // Average TTL of sampled keys (INFO keyspace avg_ttl).
  int64_t avg_ttl() const { return avg_ttl_ms_; }
  size_t MemoryUsage() const { return table_.MemoryUsage() + expires_.MemoryUsage(); }
  uint64_t seed() const { return table_.seed(); }

  KeyspaceListener* listener() const { return listener_; }
  void set_listener(KeyspaceListener* listener) { listener_ = listener; }
  void NotifyModified(std::string_view key) {
    if (listener_ != nullptr) listener_->OnKeyModified(index_, key);
  }

 private:
  static uint64_t RandomSeed() {
    std::random_device rd;
    return (static_cast<uint64_t>(rd()) << 32) ^ rd();
  }
  // A second, independent-looking seed for the expires table.
  static uint64_t SplitMix(uint64_t x) {
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
  }
  // A slot's list head and count side by side: one cache line per insert or delete.
  struct SlotKeys {
    SlottedDbEntry* head = nullptr;
    size_t count = 0;
  };
  using SlotIndex = std::array<SlotKeys, cluster::kSlotCount>;
  DbEntry* NewEntry() { return slotted_ ? new SlottedDbEntry : new DbEntry; }
  void DestroyEntry(DbEntry* entry) {
    if (slotted_) {
      delete static_cast<SlottedDbEntry*>(entry);
    } else {
      delete entry;
    }
  }
  // Removes the entry from the keyspace table (and its slot list); does not free it.
  void UnlinkEntry(DbEntry* entry);
  void LinkSlot(SlottedDbEntry* entry);
  void UnlinkSlot(SlottedDbEntry* entry);
  void FreeEntry(DbEntry* entry, bool lazy = false);
  bool GrowAllowed(size_t bytes, double load) const {
    return load > kGrowPastMaxmemoryLoad || !options_->fits_in_maxmemory ||
           options_->fits_in_maxmemory(bytes);
  }
  // The entry itself moved (allocator::Defrag), with what points at it besides the keyspace
  // table's link; returns its address, new or not.
  DbEntry* DefragEntry(DbEntry* entry, allocator::DefragCounters& counters);
  void ExpireNow(DbEntry* entry);
  // Deletes up to `max` expired fields of the hash; true if the key went with them.
  bool ExpireHashFields(DbEntry* entry, size_t max);
  // The active cycle's part for hash fields; returns the fields deleted.
  size_t ActiveExpireFields(int64_t deadline_us);

  int index_;
  KeyspaceListener* listener_;
  KeyspaceOptions own_options_;
  KeyspaceOptions* options_ = &own_options_;
  Table table_;
  ExpireTable expires_;
  // Whether the table's entries are SlottedDbEntry and the slot index is kept. Travels with
  // the table in SwapContents; slots_ is allocated with the first key.
  bool slotted_ = false;
  std::unique_ptr<SlotIndex> slots_;
  uint64_t expire_cursor_ = 0;
  // Hashes with field TTLs, ordered by the earliest field expiry noted for each (a noted time
  // may be earlier than the hash's real one, never later), so the active cycle pops only the
  // hashes that are due; hfe_noted_ maps a key to its time in the queue. Entries made stale by
  // HPERSIST, HDEL, DEL... are dropped or re-queued when they come due.
  std::set<std::pair<int64_t, std::string>> hfe_queue_;
  std::unordered_map<std::string, int64_t> hfe_noted_;
  int64_t avg_ttl_ms_ = 0;
  bool expire_backlog_ = false;
  // Keys a writable replica's clients gave a TTL (Redis's slaveKeysWithExpire). A name may
  // outlive its key or stand for a key rewritten since: each pass checks the key as stored.
  std::unordered_set<std::string> replica_expiring_;
};

}  // namespace vireo
