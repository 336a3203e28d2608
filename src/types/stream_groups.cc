#include "types/stream_groups.h"

namespace vireo {
namespace {

// A std::map node: three pointers and a colour word, then the value.
constexpr size_t kMapNodeOverhead = 32;

}  // namespace

StreamConsumer* ConsumerGroup::FindConsumer(std::string_view name) const {
  auto it = consumers_.find(name);
  return it == consumers_.end() ? nullptr : it->second.get();
}

StreamConsumer* ConsumerGroup::GetOrCreateConsumer(std::string_view name, int64_t now_ms,
                                                   bool* created) {
  auto it = consumers_.find(name);
  if (it != consumers_.end()) {
    *created = false;
    return it->second.get();
  }
  *created = true;
  auto consumer = std::make_unique<StreamConsumer>(name, now_ms);
  StreamConsumer* out = consumer.get();
  consumers_.emplace(std::string(name), std::move(consumer));
  return out;
}

int64_t ConsumerGroup::DeleteConsumer(std::string_view name) {
  auto it = consumers_.find(name);
  if (it == consumers_.end()) return -1;
  StreamConsumer* consumer = it->second.get();
  // Only owned entries go: NACKed ones belong to nobody and stay claimable.
  auto pending = static_cast<int64_t>(consumer->pel.size());
  for (const auto& [id, entry] : consumer->pel) pel_.erase(id);
  consumers_.erase(it);
  return pending;
}

PendingEntry* ConsumerGroup::FindPending(StreamID id) {
  auto it = pel_.find(id);
  return it == pel_.end() ? nullptr : &it->second;
}

PendingEntry* ConsumerGroup::Deliver(StreamID id, StreamConsumer* consumer, int64_t now_ms) {
  auto [it, inserted] = pel_.try_emplace(id);
  PendingEntry& entry = it->second;
  if (inserted) {
    entry.id = id;
  } else if (entry.consumer != nullptr) {
    entry.consumer->pel.erase(id);
  }
  LeaveNackZone(entry);
  entry.consumer = consumer;
  entry.delivery_time_ms = now_ms;
  entry.delivery_count = 1;
  consumer->pel.emplace(id, &entry);
  return &entry;
}

void ConsumerGroup::Reassign(PendingEntry* entry, StreamConsumer* consumer) {
  LeaveNackZone(*entry);
  if (entry->consumer == consumer) return;
  if (entry->consumer != nullptr) entry->consumer->pel.erase(entry->id);
  entry->consumer = consumer;
  consumer->pel.emplace(entry->id, entry);
}

PendingEntry* ConsumerGroup::AddPending(StreamID id, StreamConsumer* consumer,
                                        int64_t delivery_time_ms, uint64_t delivery_count) {
  auto [it, inserted] = pel_.try_emplace(id);
  PendingEntry& entry = it->second;
  entry.id = id;
  if (!inserted && entry.consumer != nullptr && entry.consumer != consumer) {
    entry.consumer->pel.erase(id);
  }
  if (consumer != nullptr) LeaveNackZone(entry);
  entry.consumer = consumer;
  entry.delivery_time_ms = delivery_time_ms;
  entry.delivery_count = delivery_count;
  if (consumer != nullptr) consumer->pel.emplace(id, &entry);
  return &entry;
}

bool ConsumerGroup::Ack(StreamID id) {
  auto it = pel_.find(id);
  if (it == pel_.end()) return false;
  if (it->second.consumer != nullptr) it->second.consumer->pel.erase(id);
  LeaveNackZone(it->second);
  pel_.erase(it);
  return true;
}

void ConsumerGroup::LeaveNackZone(PendingEntry& entry) {
  if (entry.nack_seq == 0) return;
  nacked_.erase(entry.nack_seq);
  entry.nack_seq = 0;
}

std::vector<const PendingEntry*> ConsumerGroup::NackedInOrder() const {
  std::vector<const PendingEntry*> out;
  out.reserve(nacked_.size());
  for (const auto& [seq, entry] : nacked_) out.push_back(entry);
  return out;
}

PendingEntry* ConsumerGroup::AddNacked(StreamID id, uint64_t delivery_count) {
  auto [it, inserted] = pel_.try_emplace(id);
  PendingEntry& entry = it->second;
  entry.id = id;
  if (entry.consumer != nullptr) entry.consumer->pel.erase(id);
  LeaveNackZone(entry);
  entry.consumer = nullptr;
  entry.delivery_time_ms = 0;
  entry.delivery_count = delivery_count;
  entry.nack_seq = next_nack_seq_++;
  nacked_.emplace(entry.nack_seq, &entry);
  return &entry;
}

size_t ConsumerGroup::MemoryUsage() const {
  size_t total = sizeof(ConsumerGroup) + name_.capacity();
  total += pel_.size() * (kMapNodeOverhead + sizeof(StreamID) + sizeof(PendingEntry));
  total += nacked_.size() * (kMapNodeOverhead + sizeof(uint64_t) + sizeof(void*));
  for (const auto& [name, consumer] : consumers_) {
    total += kMapNodeOverhead + sizeof(std::string) + sizeof(void*) + sizeof(StreamConsumer) +
             name.capacity() * 2;
    total += consumer->pel.size() * (kMapNodeOverhead + sizeof(StreamID) + sizeof(void*));
  }
  return total;
}

ConsumerGroup* StreamGroups::Find(std::string_view name) const {
  auto it = groups_.find(name);
  return it == groups_.end() ? nullptr : it->second.get();
}

ConsumerGroup* StreamGroups::Create(std::string_view name, StreamID last_id, int64_t entries_read) {
  if (groups_.find(name) != groups_.end()) return nullptr;
  auto group = std::make_unique<ConsumerGroup>(name, last_id, entries_read);
  ConsumerGroup* out = group.get();
  groups_.emplace(std::string(name), std::move(group));
  return out;
}

bool StreamGroups::Destroy(std::string_view name) {
  auto it = groups_.find(name);
  if (it == groups_.end()) return false;
  groups_.erase(it);
  return true;
}

std::unique_ptr<StreamGroups> StreamGroups::Clone() const {
  auto copy = std::make_unique<StreamGroups>();
  for (const auto& [name, group] : groups_) {
    ConsumerGroup* g = copy->Create(name, group->last_id, group->entries_read);
    for (const auto& [cname, consumer] : group->consumers()) {
      bool created;
      StreamConsumer* c = g->GetOrCreateConsumer(cname, consumer->seen_time_ms, &created);
      c->active_time_ms = consumer->active_time_ms;
    }
    for (const auto& [id, entry] : group->pel()) {
      if (entry.nacked()) continue;  // added below, in NACK order
      StreamConsumer* owner =
          entry.consumer == nullptr ? nullptr : g->FindConsumer(entry.consumer->name());
      g->AddPending(id, owner, entry.delivery_time_ms, entry.delivery_count);
    }
    for (const PendingEntry* entry : group->NackedInOrder()) {
      g->AddNacked(entry->id, entry->delivery_count);
    }
  }
  return copy;
}

size_t StreamGroups::MemoryUsage() const {
  size_t total = sizeof(StreamGroups);
  for (const auto& [name, group] : groups_) total += kMapNodeOverhead + group->MemoryUsage();
  return total;
}

}  // namespace vireo
