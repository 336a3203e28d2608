// The cost of the cluster slot index on the keyspace: adding and deleting keys in a Database
// with and without it (cluster-enabled yes / no), and a lookup, which the index must not
// slow down at all. Arg(1) = slot index on.
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "db/database.h"

namespace vireo {
namespace {

constexpr int kKeys = 100'000;

const std::vector<std::string>& Keys() {
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> k;
    for (int i = 0; i < kKeys; ++i) k.push_back("key:" + std::to_string(i));
    return k;
  }();
  return keys;
}

// SET of a new key then DEL of it, over 100k distinct keys (the table stays small and warm).
void BM_AddDelete(benchmark::State& state) {
  Database db(0, nullptr, 42);
  if (state.range(0) != 0) db.EnableSlotIndex();
  const auto& keys = Keys();
  size_t i = 0;
  for (auto _ : state) {
    const std::string& k = keys[i++ % keys.size()];
    db.Set(k, Value::String("v"));
    benchmark::DoNotOptimize(db.Delete(k));
  }
}
BENCHMARK(BM_AddDelete)->Arg(0)->Arg(1);

// Filling a keyspace of 100k keys, then clearing it.
void BM_Fill(benchmark::State& state) {
  const auto& keys = Keys();
  for (auto _ : state) {
    Database db(0, nullptr, 42);
    if (state.range(0) != 0) db.EnableSlotIndex();
    for (const std::string& k : keys) db.Set(k, Value::String("v"));
    benchmark::DoNotOptimize(db.size());
  }
  state.SetItemsProcessed(state.iterations() * kKeys);
}
BENCHMARK(BM_Fill)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

// Overwriting existing keys (GET/SET on a full keyspace: the index is not involved).
void BM_Overwrite(benchmark::State& state) {
  Database db(0, nullptr, 42);
  if (state.range(0) != 0) db.EnableSlotIndex();
  const auto& keys = Keys();
  for (const std::string& k : keys) db.Set(k, Value::String("v"));
  size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(db.Set(keys[i++ % keys.size()], Value::String("w")));
  }
}
BENCHMARK(BM_Overwrite)->Arg(0)->Arg(1);

}  // namespace
}  // namespace vireo
