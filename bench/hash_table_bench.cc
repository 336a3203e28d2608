// Keyspace table vs std::unordered_map<std::string, ...> on 1M short keys.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "types/hash_table.h"

namespace vireo {
namespace {

constexpr int kKeys = 1'000'000;

struct BenchNode {
  BenchNode* next = nullptr;
  std::string key;
};

struct BenchKeyOf {
  std::string_view operator()(const BenchNode& n) const { return n.key; }
};

using Table = HashTable<BenchNode, BenchKeyOf>;
using Map = std::unordered_map<std::string, BenchNode*>;

// Shared data, built once: nodes for present keys, a shuffled lookup order (so lookups are not
// cache-friendly sequential walks), and keys that are never inserted.
struct Data {
  std::vector<BenchNode> nodes;
  std::vector<std::string> hits;
  std::vector<std::string> misses;

  Data() : nodes(kKeys) {
    for (int i = 0; i < kKeys; ++i) nodes[i].key = "key:" + std::to_string(i);
    for (int i = 0; i < kKeys; ++i) hits.push_back(nodes[i].key);
    for (int i = 0; i < kKeys; ++i) misses.push_back("miss:" + std::to_string(i));
    std::mt19937_64 rng(42);
    std::shuffle(hits.begin(), hits.end(), rng);
    std::shuffle(misses.begin(), misses.end(), rng);
  }
};

Data& GetData() {
  static Data data;
  return data;
}

Table& GetTable() {
  static Table table = [] {
    Table t;
    for (BenchNode& n : GetData().nodes) t.Insert(&n);
    while (t.rehashing()) t.RehashStep(1000);
    return t;
  }();
  return table;
}

Map& GetMap() {
  static Map map = [] {
    Map m;
    for (BenchNode& n : GetData().nodes) m.emplace(n.key, &n);
    return m;
  }();
  return map;
}

void BM_HashKey(benchmark::State& state) {
  const auto& keys = GetData().hits;
  size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(HashKey(keys[i]));
    if (++i == keys.size()) i = 0;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_HashKey);

void BM_HashTable_FindHit(benchmark::State& state) {
  Table& t = GetTable();
  const auto& keys = GetData().hits;
  size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(t.Find(keys[i]));
    if (++i == keys.size()) i = 0;
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["bucket_bytes_per_key"] =
      static_cast<double>(t.MemoryUsage()) / static_cast<double>(t.size());
}
BENCHMARK(BM_HashTable_FindHit);

void BM_UnorderedMap_FindHit(benchmark::State& state) {
  Map& m = GetMap();
  const auto& keys = GetData().hits;
  size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(m.find(keys[i]));
    if (++i == keys.size()) i = 0;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_UnorderedMap_FindHit);

void BM_HashTable_FindMiss(benchmark::State& state) {
  Table& t = GetTable();
  const auto& keys = GetData().misses;
  size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(t.Find(keys[i]));
    if (++i == keys.size()) i = 0;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_HashTable_FindMiss);

void BM_UnorderedMap_FindMiss(benchmark::State& state) {
  Map& m = GetMap();
  const auto& keys = GetData().misses;
  size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(m.find(keys[i]));
    if (++i == keys.size()) i = 0;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_UnorderedMap_FindMiss);

// Builds a 1M-key table from empty, including every incremental grow along the way. Nodes are
// preallocated (the keyspace allocates them outside the table anyway).
void BM_HashTable_Insert1M(benchmark::State& state) {
  auto& nodes = GetData().nodes;
  for (auto _ : state) {
    Table t;
    for (BenchNode& n : nodes) t.Insert(&n);
    benchmark::DoNotOptimize(t.size());
    state.PauseTiming();
    t.Clear([](BenchNode*) {});
    state.ResumeTiming();
  }
  state.SetItemsProcessed(state.iterations() * kKeys);
}
BENCHMARK(BM_HashTable_Insert1M)->Unit(benchmark::kMillisecond);

// The map owns its node (and a copy of the key string), which is the honest comparison: a
// keyspace built on unordered_map pays that allocation per key.
void BM_UnorderedMap_Insert1M(benchmark::State& state) {
  auto& nodes = GetData().nodes;
  for (auto _ : state) {
    Map m;
    for (BenchNode& n : nodes) m.emplace(n.key, &n);
    benchmark::DoNotOptimize(m.size());
    state.PauseTiming();
    m = Map();
    state.ResumeTiming();
  }
  state.SetItemsProcessed(state.iterations() * kKeys);
}
BENCHMARK(BM_UnorderedMap_Insert1M)->Unit(benchmark::kMillisecond);

// Insert + Remove churn at steady 1M size: exercises the Remove path on a large table.
void BM_HashTable_RemoveInsert(benchmark::State& state) {
  Table& t = GetTable();
  auto& nodes = GetData().nodes;
  size_t i = 0;
  for (auto _ : state) {
    BenchNode* n = t.Remove(nodes[i].key);
    t.Insert(n);
    if (++i == nodes.size()) i = 0;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_HashTable_RemoveInsert);

}  // namespace
}  // namespace vireo
