#include "types/stream_idmp.h"

#include <xxhash.h>

#include <cstring>

namespace vireo {

size_t StreamIdmp::Hash::operator()(std::string_view s) const {
  return static_cast<size_t>(XXH3_64bits(s.data(), s.size()));
}

bool StreamIdmp::Configure(int64_t duration_s, int64_t maxsize) {
  if (duration_s == duration_s_ && maxsize == maxsize_) return false;
  duration_s_ = duration_s;
  maxsize_ = maxsize;
  Clear();
  return true;
}

void StreamIdmp::Clear() {
  last_producer_ = nullptr;
  producers_.clear();
  by_oldest_.clear();
  iids_tracked_ = 0;
}

const StreamID* StreamIdmp::Find(std::string_view pid, std::string_view iid, int64_t now_ms) {
  Expire(now_ms);
  Producer* p = last_producer_;
  if (p == nullptr || p->pid != pid) {
    auto found = producers_.find(pid);
    if (found == producers_.end()) return nullptr;
    p = last_producer_ = found->second.get();
  }
  auto it = p->index.find(iid);
  return it == p->index.end() ? nullptr : &it->second;
}

void StreamIdmp::Expire(int64_t now_ms) {
  const int64_t window_ms = duration_s_ * 1000;
  while (!by_oldest_.empty()) {
    auto [oldest, producer] = *by_oldest_.begin();
    // An ID time in the future (XSETID, clock steps) just keeps its record longer.
    if (static_cast<int64_t>(oldest.ms) > now_ms - window_ms) return;
    by_oldest_.erase(by_oldest_.begin());
    std::deque<Entry>& fifo = producer->fifo;
    // The key may be stale (maxsize evictions don't update it): it is never newer than the
    // producer's real oldest record, so re-queue under the real one and look again.
    if (!fifo.empty() && fifo.front().id != oldest &&
        static_cast<int64_t>(fifo.front().id.ms) > now_ms - window_ms) {
      by_oldest_.emplace(fifo.front().id, producer);
      continue;
    }
    while (!fifo.empty() && static_cast<int64_t>(fifo.front().id.ms) <= now_ms - window_ms) {
      producer->index.erase(fifo.front().iid);
      fifo.pop_front();
      --iids_tracked_;
    }
    if (fifo.empty()) {
      if (last_producer_ == producer) last_producer_ = nullptr;
      // By iterator: the key lives in the producer being destroyed.
      producers_.erase(producers_.find(std::string_view(producer->pid)));
    } else {
      by_oldest_.emplace(fifo.front().id, producer);
    }
  }
}

StreamIdmp::Producer* StreamIdmp::GetOrCreate(std::string_view pid) {
  // XADD looks a producer up twice (Find, then Record): remember the last one.
  if (last_producer_ != nullptr && last_producer_->pid == pid) return last_producer_;
  auto it = producers_.find(pid);
  if (it != producers_.end()) {
    last_producer_ = it->second.get();
    return last_producer_;
  }
  auto p = std::make_unique<Producer>();
  p->pid = std::string(pid);
  Producer* out = p.get();
  producers_.emplace(out->pid, std::move(p));
  last_producer_ = out;
  return out;
}

void StreamIdmp::Append(Producer* p, std::string_view iid, StreamID id) {
  bool was_empty = p->fifo.empty();
  p->fifo.push_back({std::string(iid), id});
  p->index.emplace(p->fifo.back().iid, id);
  ++iids_tracked_;
  if (was_empty) by_oldest_.emplace(id, p);
  while (static_cast<int64_t>(p->fifo.size()) > maxsize_) PopOldest(p);
}

void StreamIdmp::PopOldest(Producer* p) {
  // Leaves the producer's by_oldest_ key behind (stale but older): Expire corrects it.
  p->index.erase(p->fifo.front().iid);
  p->fifo.pop_front();
  --iids_tracked_;
}

void StreamIdmp::Record(std::string_view pid, std::string_view iid, StreamID id) {
  Append(GetOrCreate(pid), iid, id);
  ++iids_added_;
}

void StreamIdmp::Restore(std::string_view pid, std::string_view iid, StreamID id) {
  Producer* p = GetOrCreate(pid);
  if (p->index.count(iid) != 0) return;  // a corrupt payload must not break the index
  Append(p, iid, id);
}

bool StreamIdmp::IsTrivial(int64_t default_duration, int64_t default_maxsize) const {
  return producers_.empty() && iids_added_ == 0 && iids_duplicates_ == 0 &&
         duration_s_ == default_duration && maxsize_ == default_maxsize;
}

void StreamIdmp::ForEachProducer(
    const std::function<void(std::string_view pid, size_t count)>& producer,
    const std::function<void(std::string_view iid, StreamID id)>& record) const {
  for (const auto& [pid, p] : producers_) {
    producer(pid, p->fifo.size());
    for (const Entry& r : p->fifo) record(r.iid, r.id);
  }
}

std::unique_ptr<StreamIdmp> StreamIdmp::Clone() const {
  auto copy = std::make_unique<StreamIdmp>(duration_s_, maxsize_);
  for (const auto& [pid, p] : producers_) {
    for (const Entry& r : p->fifo) copy->Restore(pid, r.iid, r.id);
  }
  copy->iids_added_ = iids_added_;
  copy->iids_duplicates_ = iids_duplicates_;
  return copy;
}

size_t StreamIdmp::MemoryUsage() const {
  // Hash nodes: next pointer, cached hash, key and value; deque slots; set nodes.
  constexpr size_t kIndexNode = 16 + sizeof(std::string_view) + sizeof(StreamID);
  constexpr size_t kSetNode = 32 + sizeof(std::pair<StreamID, Producer*>);
  size_t total = sizeof(StreamIdmp);
  for (const auto& [pid, p] : producers_) {
    total += sizeof(Producer) + 16 + sizeof(void*) * 2 + pid.capacity() * 2 + kSetNode;
    total += p->index.bucket_count() * sizeof(void*);
    for (const Entry& r : p->fifo) {
      total += sizeof(Entry) + kIndexNode;
      if (r.iid.capacity() > 15) total += r.iid.capacity() + 1;
    }
  }
  return total;
}

std::string StreamIdmp::AutoIid(std::span<const std::string_view> fv) {
  // Each pair gets a 128-bit digest: the value hashed with the field's 64-bit hash as the seed
  // (so "ab"+"c" and "a"+"bc" differ). The digests are summed: addition is order-independent
  // and, unlike XOR, does not cancel a pair that appears twice. The sum and the pair count are
  // hashed once more so the result is a uniform digest. No allocation: this runs per XADD.
  uint64_t sum_lo = 0, sum_hi = 0;
  for (size_t i = 0; i + 1 < fv.size(); i += 2) {
    uint64_t seed = XXH3_64bits_withSeed(fv[i].data(), fv[i].size(), fv[i].size());
    XXH128_hash_t h = XXH3_128bits_withSeed(fv[i + 1].data(), fv[i + 1].size(), seed);
    uint64_t lo = sum_lo + h.low64;
    sum_hi += h.high64 + (lo < sum_lo ? 1 : 0);
    sum_lo = lo;
  }
  uint64_t words[3] = {sum_lo, sum_hi, fv.size() / 2};
  XXH128_hash_t digest = XXH3_128bits(words, sizeof(words));
  XXH128_canonical_t canonical;
  XXH128_canonicalFromHash(&canonical, digest);
  return std::string(reinterpret_cast<const char*>(canonical.digest), kAutoIidSize);
}

}  // namespace vireo
