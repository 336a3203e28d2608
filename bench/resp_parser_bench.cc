// Parser throughput: small pipelined commands (the redis-benchmark shape) and a large bulk.
#include <benchmark/benchmark.h>

#include <string>

#include "protocol/reply_builder.h"
#include "protocol/resp_parser.h"

namespace vireo {
namespace {

void BM_ParsePipelinedSet(benchmark::State& state) {
  std::string one = "*3\r\n$3\r\nSET\r\n$16\r\nkey:000000001234\r\n$3\r\nxxx\r\n";
  std::string stream;
  for (int i = 0; i < 16; ++i) stream += one;
  RespParser parser;
  for (auto _ : state) {
    std::string_view rest = stream;
    while (!rest.empty()) {
      size_t consumed;
      parser.Parse(rest, &consumed);
      benchmark::DoNotOptimize(parser.args().data());
      rest.remove_prefix(consumed);
    }
  }
  state.SetItemsProcessed(state.iterations() * 16);
  state.SetBytesProcessed(state.iterations() * stream.size());
}
BENCHMARK(BM_ParsePipelinedSet);

void BM_ParseInline(benchmark::State& state) {
  std::string line = "SET key:000000001234 \"some value\"\r\n";
  RespParser parser;
  for (auto _ : state) {
    size_t consumed;
    parser.Parse(line, &consumed);
    benchmark::DoNotOptimize(parser.args().data());
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_ParseInline);

// A 64 MB bulk arriving in 64 KB reads: total work must stay linear in the size.
void BM_ParseLargeBulkIncrementally(benchmark::State& state) {
  const size_t size = 64 << 20;
  std::string payload =
      "*2\r\n$4\r\nECHO\r\n$" + std::to_string(size) + "\r\n" + std::string(size, 'x') + "\r\n";
  for (auto _ : state) {
    RespParser parser;
    size_t fed = 0;
    RespParser::Result result = RespParser::Result::kNeedMore;
    while (result == RespParser::Result::kNeedMore) {
      fed = std::min(payload.size(), fed + (64 << 10));
      size_t consumed;
      result = parser.Parse(std::string_view(payload.data(), fed), &consumed);
    }
    benchmark::DoNotOptimize(parser.args().data());
  }
  state.SetBytesProcessed(state.iterations() * payload.size());
}
BENCHMARK(BM_ParseLargeBulkIncrementally)->Unit(benchmark::kMillisecond);

void BM_ReplyBulk(benchmark::State& state) {
  std::string out;
  ReplyBuilder reply(&out);
  for (auto _ : state) {
    out.clear();
    for (int i = 0; i < 16; ++i) reply.Bulk("some value of 16");
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations() * 16);
}
BENCHMARK(BM_ReplyBulk);

}  // namespace
}  // namespace vireo
