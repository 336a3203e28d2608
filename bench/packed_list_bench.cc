// PackedList: push/pop at both ends, LRANGE-style range walks, and memory per element.
#include <benchmark/benchmark.h>
#include <malloc.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "types/packed_list.h"

namespace vireo {
namespace {

std::string Element(int i) {
  char buf[32];
  snprintf(buf, sizeof(buf), "element:%08d", i % 100'000'000);
  return std::string(buf, 16);
}

std::unique_ptr<PackedList> Filled(int n, int fill = -2) {
  auto l = std::make_unique<PackedList>(fill);
  for (int i = 0; i < n; ++i) l->PushBack(Element(i));
  return l;
}

// Pushes 1M elements into a fresh list per iteration.
void BM_PushBack(benchmark::State& state) {
  const std::string v = Element(42);
  for (auto _ : state) {
    PackedList l;
    for (int i = 0; i < state.range(0); ++i) l.PushBack(v);
    benchmark::DoNotOptimize(l.size());
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_PushBack)->Arg(1'000'000);

void BM_PushFront(benchmark::State& state) {
  const std::string v = Element(42);
  for (auto _ : state) {
    PackedList l;
    for (int i = 0; i < state.range(0); ++i) l.PushFront(v);
    benchmark::DoNotOptimize(l.size());
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_PushFront)->Arg(1'000'000);

// Drains a 1M-element list from one end (refilled outside the timing).
void BM_PopFront(benchmark::State& state) {
  std::string out;
  for (auto _ : state) {
    state.PauseTiming();
    auto l = Filled(static_cast<int>(state.range(0)));
    state.ResumeTiming();
    while (l->PopFront(&out)) {
    }
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_PopFront)->Arg(1'000'000);

void BM_PopBack(benchmark::State& state) {
  std::string out;
  for (auto _ : state) {
    state.PauseTiming();
    auto l = Filled(static_cast<int>(state.range(0)));
    state.ResumeTiming();
    while (l->PopBack(&out)) {
    }
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_PopBack)->Arg(1'000'000);

// Queue patterns on a list holding range(0) elements: LPUSH+RPOP and RPUSH+LPOP.
void BM_QueueLPushRPop(benchmark::State& state) {
  auto l = Filled(static_cast<int>(state.range(0)));
  const std::string v = Element(7);
  std::string out;
  for (auto _ : state) {
    l->PushFront(v);
    l->PopBack(&out);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_QueueLPushRPop)->Arg(10)->Arg(300)->Arg(100'000);

void BM_QueueRPushLPop(benchmark::State& state) {
  auto l = Filled(static_cast<int>(state.range(0)));
  const std::string v = Element(7);
  std::string out;
  for (auto _ : state) {
    l->PushBack(v);
    l->PopFront(&out);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_QueueRPushLPop)->Arg(10)->Arg(300)->Arg(100'000);

// LRANGE key start start+n-1 on a 10k-element list (range(0) = n, range(1) = start).
void BM_LRange(benchmark::State& state) {
  auto l = Filled(10'000);
  int64_t n = state.range(0), start = state.range(1);
  for (auto _ : state) {
    size_t bytes = 0;
    l->ForRange(start, start + n - 1, [&](std::string_view v) {
      bytes += v.size();
      return true;
    });
    benchmark::DoNotOptimize(bytes);
  }
  state.SetItemsProcessed(state.iterations() * n);
}
BENCHMARK(BM_LRange)->Args({100, 0})->Args({600, 0})->Args({100, 5000})->Args({600, 5000});

void BM_LRangeReverse(benchmark::State& state) {
  auto l = Filled(10'000);
  int64_t n = state.range(0);
  for (auto _ : state) {
    size_t bytes = 0;
    l->ForRangeReverse(10'000 - n, 9'999, [&](std::string_view v) {
      bytes += v.size();
      return true;
    });
    benchmark::DoNotOptimize(bytes);
  }
  state.SetItemsProcessed(state.iterations() * n);
}
BENCHMARK(BM_LRangeReverse)->Arg(100)->Arg(600);

void BM_LIndexMiddle(benchmark::State& state) {
  auto l = Filled(1'000'000);
  std::string out;
  for (auto _ : state) {
    l->Get(500'000, &out);
    benchmark::DoNotOptimize(out);
  }
}
BENCHMARK(BM_LIndexMiddle);

// Memory for 1M 16-byte strings: MemoryUsage() and the malloc heap delta, per element.
void BM_MemoryPerElement(benchmark::State& state) {
  constexpr int kCount = 1'000'000;
  double reported = 0, heap = 0;
  for (auto _ : state) {
    state.PauseTiming();
    size_t before = mallinfo2().uordblks;
    state.ResumeTiming();
    auto l = Filled(kCount);
    state.PauseTiming();
    size_t after = mallinfo2().uordblks;
    reported = static_cast<double>(l->MemoryUsage()) / kCount;
    heap = static_cast<double>(after - before) / kCount;
    l.reset();
    state.ResumeTiming();
  }
  state.counters["bytes_per_elem"] = reported;
  state.counters["heap_bytes_per_elem"] = heap;
  static bool printed = false;
  if (!printed) {
    printed = true;
    fprintf(stderr,
            "PackedList, 1M x 16-byte strings, default fill: %.2f bytes/element (MemoryUsage), "
            "%.2f bytes/element (malloc heap delta)\n",
            reported, heap);
  }
}
BENCHMARK(BM_MemoryPerElement)->Iterations(1)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace vireo
