#include "db/database.h"

#include <utility>

#include "db/lazy_free.h"
#include "types/hash_object.h"
#include "util/clock.h"

namespace vireo {

Database::~Database() { Clear(); }

void Database::FreeEntry(DbEntry* entry, bool lazy) {
  if (lazy && options_->freer != nullptr) {
    options_->freer->Free(std::move(entry->value));
  }
  DestroyEntry(entry);
}

void Database::UnlinkEntry(DbEntry* entry) {
  table_.Unlink(entry);
  if (slotted_) UnlinkSlot(static_cast<SlottedDbEntry*>(entry));
}

void Database::LinkSlot(SlottedDbEntry* entry) {
  if (slots_ == nullptr) slots_ = std::make_unique<SlotIndex>();
  const int slot = cluster::KeySlot(entry->key.view());
  SlotKeys& keys = (*slots_)[slot];
  entry->slot_prev = nullptr;
  entry->slot_next = keys.head;
  if (keys.head != nullptr) keys.head->slot_prev = entry;
  keys.head = entry;
  ++keys.count;
}

void Database::UnlinkSlot(SlottedDbEntry* entry) {
  SlotKeys& keys = (*slots_)[cluster::KeySlot(entry->key.view())];
  if (entry->slot_prev != nullptr) {
    entry->slot_prev->slot_next = entry->slot_next;
  } else {
    keys.head = entry->slot_next;
  }
  if (entry->slot_next != nullptr) entry->slot_next->slot_prev = entry->slot_prev;
  --keys.count;
  entry->slot_prev = entry->slot_next = nullptr;
}

DbEntry* Database::DefragEntry(DbEntry* entry, allocator::DefragCounters& counters) {
  // The expires node is found while the old entry is still readable: its table compares keys
  // through the entry pointer.
  ExpireEntry* expire = entry->has_expire() ? expires_.Peek(entry->key.view()) : nullptr;
  DbEntry* moved = allocator::Defrag(entry, counters);
  if (moved == nullptr) return entry;
  if (expire != nullptr) expire->entry = moved;
  if (slotted_) {
    auto* slotted = static_cast<SlottedDbEntry*>(moved);
    if (slotted->slot_prev != nullptr) {
      slotted->slot_prev->slot_next = slotted;
    } else {
      (*slots_)[cluster::KeySlot(slotted->key.view())].head = slotted;
    }
    if (slotted->slot_next != nullptr) slotted->slot_next->slot_prev = slotted;
  }
  return moved;
}

uint64_t Database::DefragExpires(uint64_t cursor, allocator::DefragCounters& counters) {
  return expires_.ScanReplace(cursor, [&](ExpireEntry* e) {
    ExpireEntry* moved = allocator::Defrag(e, counters);
    return moved != nullptr ? moved : e;
  });
}

void Database::EnableSlotIndex() {
  if (slotted_) return;
  // Existing entries are plain DbEntry; the index can only start from an empty keyspace.
  if (table_.size() != 0) return;
  slotted_ = true;
}

size_t Database::CountKeysInSlot(int slot) const {
  if (slots_ == nullptr || slot < 0 || slot >= cluster::kSlotCount) return 0;
  return (*slots_)[slot].count;
}

std::vector<std::string> Database::KeysInSlot(int slot, size_t max_count) const {
  std::vector<std::string> keys;
  if (slots_ == nullptr || slot < 0 || slot >= cluster::kSlotCount) return keys;
  for (const SlottedDbEntry* e = (*slots_)[slot].head; e != nullptr && keys.size() < max_count;
       e = e->slot_next) {
    keys.emplace_back(e->key.view());
  }
  return keys;
}

size_t Database::DeleteKeysInSlot(int slot) { return DeleteKeysInSlot(slot, {}); }

size_t Database::DeleteKeysInSlot(int slot,
                                  const std::function<void(std::string_view)>& on_deleted) {
  if (slots_ == nullptr || slot < 0 || slot >= cluster::kSlotCount) return 0;
  size_t deleted = 0;
  while (SlottedDbEntry* e = (*slots_)[slot].head) {
    std::string key(e->key.view());
    DeleteEntry(e);
    ++deleted;
    NotifyModified(key);
    if (on_deleted) on_deleted(key);
  }
  return deleted;
}

bool Database::IsExpired(const DbEntry* entry) {
  if (!entry->has_expire()) return false;
  ExpireEntry* e = expires_.Find(entry->key.view());
  return e != nullptr && e->when_ms <= now_ms();
}

bool Database::IsLogicallyExpired(std::string_view key) {
  DbEntry* entry = table_.Find(key);
  return entry != nullptr && IsExpired(entry);
}

void Database::ExpireNow(DbEntry* entry) {
  // The key text must outlive the entry for the listener: copy it first.
  std::string key(entry->key.view());
  Persist(entry);
  UnlinkEntry(entry);
  FreeEntry(entry, options_->lazy_expire);
  if (listener_ != nullptr) {
    listener_->OnKeyExpired(index_, key);
    listener_->OnKeyModified(index_, key);
  }
}

DbEntry* Database::FindNoTouch(std::string_view key) {
  DbEntry* entry = table_.Find(key);
  if (entry == nullptr) return nullptr;
  if (entry->has_expire() && IsExpired(entry)) {
    switch (options_->expiry_view) {
      case ExpiryView::kMaster:
        ExpireNow(entry);
        return nullptr;
      case ExpiryView::kReplicaClient:
        return nullptr;
      case ExpiryView::kReplicaMaster:
        return entry;
    }
  }
  // Field TTLs follow the key's rule: a master deletes expired fields on access; a replica
  // waits for its master's HDELs.
  if (entry->value.type() == ValueType::kHash && options_->expiry_view == ExpiryView::kMaster &&
      ExpireHashFields(entry, SIZE_MAX)) {
    return nullptr;
  }
  return entry;
}

void Database::NoteFieldTtls(const DbEntry* entry) {
  if (entry->value.type() != ValueType::kHash) return;
  const auto* hash = entry->value.As<HashObject>();
  if (!hash->has_field_ttls()) return;
  const int64_t when = hash->NextFieldExpire();
  std::string key(entry->key.view());
  auto [it, inserted] = hfe_noted_.try_emplace(key, when);
  if (!inserted) {
    if (it->second <= when) return;  // it comes due no later than needed
    hfe_queue_.erase({it->second, key});
    it->second = when;
  }
  hfe_queue_.emplace(when, std::move(key));
}

bool Database::ExpireHashFields(DbEntry* entry) { return ExpireHashFields(entry, SIZE_MAX); }

bool Database::ExpireHashFields(DbEntry* entry, size_t max) {
  auto* hash = entry->value.As<HashObject>();
  if (hash->NextFieldExpire() > now_ms()) return false;
  std::vector<std::string> fields;
  hash->ExpireFields(now_ms(), max, [&](std::string_view f) { fields.emplace_back(f); });
  if (fields.empty()) return false;
  std::string key(entry->key.view());
  bool deleted = hash->empty();
  if (deleted) DeleteEntry(entry);
  if (listener_ != nullptr) {
    listener_->OnHashFieldsExpired(index_, key, fields, deleted);
    listener_->OnKeyModified(index_, key);
  }
  return deleted;
}

size_t Database::CountHashesWithFieldTtls() {
  size_t n = 0;
  for (auto it = hfe_noted_.begin(); it != hfe_noted_.end();) {
    DbEntry* entry = table_.Find(it->first);
    if (entry == nullptr || entry->value.type() != ValueType::kHash ||
        !entry->value.As<HashObject>()->has_field_ttls()) {
      hfe_queue_.erase({it->second, it->first});
      it = hfe_noted_.erase(it);
    } else {
      ++n;
      ++it;
    }
  }
  return n;
}

size_t Database::ActiveExpireFields(int64_t deadline_us) {
  // Bounded work: the deadline is checked every kVisitsPerCheck hashes, and a big hash gives
  // up its turn after kFieldsPerVisit fields (it is re-queued, still due, behind the others).
  constexpr size_t kVisitsPerCheck = 16;
  constexpr size_t kFieldsPerVisit = 64;
  size_t deleted = 0;
  size_t visits = 0;
  while (!hfe_queue_.empty() && hfe_queue_.begin()->first <= now_ms()) {
    auto node = hfe_queue_.extract(hfe_queue_.begin());
    const std::string& key = node.value().second;
    hfe_noted_.erase(key);
    DbEntry* entry = table_.Find(key);
    // Gone, replaced, or without TTLs now: nothing to do. A key that is itself expired is
    // left to the key cycle.
    if (entry != nullptr && entry->value.type() == ValueType::kHash &&
        entry->value.As<HashObject>()->has_field_ttls() &&
        !(entry->has_expire() && IsExpired(entry))) {
      auto* hash = entry->value.As<HashObject>();
      const size_t before = hash->size();
      const bool gone = ExpireHashFields(entry, kFieldsPerVisit);
      deleted += gone ? before : before - hash->size();
      if (!gone) NoteFieldTtls(entry);
    }
    if (++visits % kVisitsPerCheck == 0 && MonotonicUs() >= deadline_us) {
      if (!hfe_queue_.empty() && hfe_queue_.begin()->first <= now_ms()) expire_backlog_ = true;
      break;
    }
  }
  return deleted;
}

DbEntry* Database::Find(std::string_view key) {
  DbEntry* entry = FindNoTouch(key);
  if (entry != nullptr && options_->access.touch) Touch(entry);
  return entry;
}

DbEntry* Database::Add(std::string_view key, Value value) {
  // A writable replica's client saw an expired key as absent; its write replaces it.
  if (options_->expiry_view != ExpiryView::kMaster) {
    if (DbEntry* stale = table_.Find(key)) DeleteEntry(stale);
  }
  DbEntry* entry = NewEntry();
  entry->key.Assign(key);
  entry->value = std::move(value);
  entry->value.set_access_clock(NewKeyClock(options_->access, now_ms()));
  table_.Insert(entry, [this](size_t bytes, double load) { return GrowAllowed(bytes, load); });
  if (slotted_) LinkSlot(static_cast<SlottedDbEntry*>(entry));
  NoteFieldTtls(entry);
  if (listener_ != nullptr) {
    listener_->OnKeyCreated(index_, key);
    listener_->OnKeyAdded(index_, key);
  }
  return entry;
}

DbEntry* Database::Set(std::string_view key, Value value, bool keep_ttl) {
  DbEntry* entry = Find(key);
  if (entry == nullptr) return Add(key, std::move(value));
  const ValueType old_type = entry->value.type();
  const ValueType new_type = value.type();
  if (options_->lazy_server_del && options_->freer != nullptr && LazyFreer::WorthIt(entry->value)) {
    Value old = std::move(entry->value);
    entry->value = std::move(value);
    options_->freer->Free(std::move(old));
  } else {
    entry->value = std::move(value);
  }
  if (!keep_ttl) Persist(entry);
  NoteFieldTtls(entry);
  if (listener_ != nullptr) {
    listener_->OnKeyOverwritten(index_, key, old_type, new_type);
    listener_->OnKeyAdded(index_, key);
  }
  return entry;
}

bool Database::Delete(std::string_view key) {
  DbEntry* entry = Find(key);
  if (entry == nullptr) return false;
  DeleteEntry(entry);
  return true;
}

DbEntry* Database::Detach(std::string_view key) {
  DbEntry* entry = Find(key);
  if (entry == nullptr) return nullptr;
  Persist(entry);
  UnlinkEntry(entry);
  return entry;
}

void Database::DeleteEntry(DbEntry* entry, bool lazy) {
  Persist(entry);
  UnlinkEntry(entry);
  FreeEntry(entry, lazy);
}

int64_t Database::GetExpire(const DbEntry* entry) {
  if (!entry->has_expire()) return -1;
  ExpireEntry* e = expires_.Find(entry->key.view());
  return e == nullptr ? -1 : e->when_ms;
}

void Database::SetExpire(DbEntry* entry, int64_t when_ms) {
  if (options_->note_replica_expires) replica_expiring_.emplace(entry->key.view());
  if (entry->has_expire()) {
    ExpireEntry* e = expires_.Find(entry->key.view());
    if (e != nullptr) {
      e->when_ms = when_ms;
      return;
    }
  }
  auto* e = new ExpireEntry{nullptr, entry, when_ms};
  entry->key.set_flag(true);
  expires_.Insert(e, [this](size_t bytes, double load) { return GrowAllowed(bytes, load); });
}

bool Database::Persist(DbEntry* entry) {
  if (!entry->has_expire()) return false;
  ExpireEntry* e = expires_.Remove(entry->key.view());
  entry->key.set_flag(false);
  delete e;
  return e != nullptr;
}

void Database::Clear() {
  expires_.Clear([](ExpireEntry* e) { delete e; });
  table_.Clear([this](DbEntry* e) { DestroyEntry(e); });
  slots_.reset();
  hfe_queue_.clear();
  hfe_noted_.clear();
  replica_expiring_.clear();
  expire_cursor_ = 0;
  avg_ttl_ms_ = 0;
}

void Database::SwapContents(Database& other) {
  std::swap(table_, other.table_);
  std::swap(expires_, other.expires_);
  // The kind of entries goes with the table. A slot-indexed database that received an empty
  // plain table (FLUSHALL ASYNC hands its keys to a doomed database) keeps indexing.
  const bool was_slotted = slotted_, other_was_slotted = other.slotted_;
  std::swap(slotted_, other.slotted_);
  std::swap(slots_, other.slots_);
  if (was_slotted) EnableSlotIndex();
  if (other_was_slotted) other.EnableSlotIndex();
  std::swap(expire_cursor_, other.expire_cursor_);
  std::swap(hfe_queue_, other.hfe_queue_);
  std::swap(hfe_noted_, other.hfe_noted_);
  std::swap(replica_expiring_, other.replica_expiring_);
  std::swap(avg_ttl_ms_, other.avg_ttl_ms_);
  std::swap(expire_backlog_, other.expire_backlog_);
}

size_t Database::ExpireReplicaWritten() {
  size_t deleted = 0;
  for (auto it = replica_expiring_.begin(); it != replica_expiring_.end();) {
    DbEntry* entry = table_.Find(*it);
    if (entry != nullptr && entry->has_expire() && !IsExpired(entry)) {
      ++it;
      continue;
    }
    if (entry != nullptr && entry->has_expire()) {
      ExpireNow(entry);
      ++deleted;
    }
    it = replica_expiring_.erase(it);
  }
  return deleted;
}

size_t Database::ActiveExpireCycle(int64_t deadline_us) {
  expire_backlog_ = false;
  // A replica's keys expire only through its master's DELs.
  if (options_->expiry_view != ExpiryView::kMaster) return 0;
  size_t deleted = 0;
  if (MonotonicUs() < deadline_us) ActiveExpireFields(deadline_us);
  if (expires_.size() == 0) return deleted;
  std::vector<DbEntry*> expired;
  // A double: a handful of TTLs near the int64 limit would overflow an integer sum.
  double ttl_sum = 0;
  int64_t ttl_samples = 0;
  // Walk the expires table with a persistent cursor, a few buckets at a time. Stop at the
  // deadline, or when a round finds under a quarter of its samples expired: then the
  // remaining expired keys are few and lazy expiry can deal with them.
  while (true) {
    size_t sampled = 0;
    expired.clear();
    for (int i = 0; i < 20 && sampled < 20; ++i) {
      expire_cursor_ = expires_.Scan(expire_cursor_, [&](ExpireEntry* e) {
        ++sampled;
        if (e->when_ms <= now_ms()) {
          expired.push_back(e->entry);
        } else {
          ttl_sum += e->when_ms - now_ms();
          ++ttl_samples;
        }
      });
      if (expire_cursor_ == 0) break;
    }
    for (DbEntry* entry : expired) ExpireNow(entry);
    deleted += expired.size();
    if (expires_.size() == 0 || expired.size() * 4 < sampled || expire_cursor_ == 0) break;
    if (MonotonicUs() >= deadline_us) {
      expire_backlog_ = true;
      break;
    }
  }
  if (ttl_samples > 0) {
    int64_t avg = static_cast<int64_t>(ttl_sum / static_cast<double>(ttl_samples));
    // A running average, as INFO's avg_ttl is only an estimate.
    avg_ttl_ms_ = avg_ttl_ms_ == 0 ? avg : (avg_ttl_ms_ / 50) * 49 + avg / 50;
  }
  return deleted;
}

}  // namespace vireo
