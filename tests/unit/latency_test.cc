#include <gtest/gtest.h>

#include "core/latency_monitor.h"
#include "util/strings.h"

namespace vireo {
namespace {

TEST(LatencyHistogramTest, BucketsAreExactBelow256AndLogLinearAbove) {
  for (int64_t v = 0; v < 256; ++v) {
    EXPECT_EQ(LatencyHistogram::IndexOf(v), static_cast<size_t>(v));
  }
  // 2^17 ns: a bucket of 1024 ns (128 per power of two).
  const size_t i = LatencyHistogram::IndexOf(131072);
  EXPECT_EQ(LatencyHistogram::LowestAt(i), 131072);
  EXPECT_EQ(LatencyHistogram::HighestAt(i), 132095);
  EXPECT_EQ(LatencyHistogram::IndexOf(132095), i);
  EXPECT_EQ(LatencyHistogram::IndexOf(132096), i + 1);
  // Every value maps into a bucket that contains it, up to the maximum.
  for (int64_t v = 1; v <= LatencyHistogram::kMaxValue; v = v * 3 / 2 + 1) {
    const size_t idx = LatencyHistogram::IndexOf(v);
    EXPECT_LE(LatencyHistogram::LowestAt(idx), v);
    EXPECT_GE(LatencyHistogram::HighestAt(idx), v);
  }
  EXPECT_LE(LatencyHistogram::HighestAt(LatencyHistogram::IndexOf(LatencyHistogram::kMaxValue)),
            (int64_t{1} << 30) - 1);
}

TEST(LatencyHistogramTest, PercentilesReportTheBucketsHighestValue) {
  LatencyHistogram h;
  EXPECT_EQ(h.ValueAtPercentile(50), 0);
  // Redis: DEBUG SLEEP 0.003 took 3.12x ms and INFO said p50=3129.343.
  h.Record(3'120'000);
  EXPECT_EQ(h.ValueAtPercentile(50), 3'129'343);
  EXPECT_EQ(h.ValueAtPercentile(0), 3'112'960);
  h.Record(0);              // clamped to 1 ns
  h.Record(2'000'000'000);  // clamped to 1 s
  EXPECT_EQ(h.total(), 3u);
  EXPECT_EQ(h.ValueAtPercentile(0), 1);
  EXPECT_EQ(h.ValueAtPercentile(10), 1);  // at least one sample is wanted
  EXPECT_EQ(h.ValueAtPercentile(50), 3'129'343);
  EXPECT_EQ(h.ValueAtPercentile(99.9), 1'002'438'655);
  EXPECT_EQ(h.ValueAtPercentile(150), 1'002'438'655);
}

TEST(LatencyHistogramTest, PowerOfTwoBucketsAsRedisReportsThem) {
  LatencyHistogram h;
  EXPECT_TRUE(h.PowerOfTwoBuckets().empty());
  // Durations Redis 7 reported with these bounds for DEBUG SLEEP 0.0001 .. 1.1.
  for (int64_t ns : {120'000, 250'000, 500'000, 2'000'000, 4'000'000, 1'000'000'000}) h.Record(ns);
  h.Record(1000);  // 1 µs: the first bucket
  const auto b = h.PowerOfTwoBuckets();
  const std::vector<std::pair<int64_t, uint64_t>> want = {
      {1, 1}, {132, 2}, {264, 3}, {528, 4}, {2113, 5}, {4227, 6}, {1073741, 7}};
  EXPECT_EQ(b, want);
}

TEST(LatencyMonitorTest, OneSamplePerSecondKeepsTheWorst) {
  LatencyMonitor m;
  m.AddSample("command", 30, 1000);
  m.AddSample("command", 50, 1000);
  m.AddSample("command", 40, 1000);
  m.AddSample("command", 20, 1001);
  const LatencyMonitor::Series* s = m.Find("command");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->latest().time, 1001);
  EXPECT_EQ(s->latest().ms, 20);
  EXPECT_EQ(s->max_ms, 50);
  EXPECT_EQ(s->samples[0].ms, 50);
  EXPECT_EQ(m.Find("COMMAND"), nullptr);  // HISTORY is case-sensitive, RESET is not
  EXPECT_EQ(m.Reset("COMMAND"), 1u);
  EXPECT_TRUE(m.events().empty());
}

TEST(LatencyMonitorTest, HistoryWrapsAfter160Seconds) {
  LatencyMonitor m;
  for (int64_t t = 1; t <= 200; ++t) m.AddSample("fork", t, t);
  const LatencyMonitor::Series& s = *m.Find("fork");
  EXPECT_EQ(s.latest().time, 200);
  // The oldest kept is second 41.
  EXPECT_EQ(s.samples[s.next].time, 41);
}

TEST(LatencyMonitorTest, ThresholdGatesSamples) {
  LatencyMonitor m;
  m.AddSampleIfNeeded("command", 1000);  // monitor off
  EXPECT_TRUE(m.events().empty());
  m.set_threshold_ms(10);
  m.AddSampleIfNeeded("command", 9);
  EXPECT_TRUE(m.events().empty());
  m.AddSampleIfNeeded("command", 10);
  EXPECT_EQ(m.events().size(), 1u);
  EXPECT_EQ(m.Reset(""), 1u);
}

TEST(LatencyMonitorTest, GraphShape) {
  LatencyMonitor m;
  m.AddSample("command", 300, 100);
  m.AddSample("command", 500, 102);
  const std::string g = m.Graph("command", *m.Find("command"), 105);
  EXPECT_EQ(g, "command - high 500 ms, low 300 ms (all time high 500 ms)\n" + std::string(80, '-') +
                   "\n"
                   " #\n"
                   " |\n"
                   " |\n"
                   "_|\n"
                   "  \n"
                   "53\n"
                   "ss\n");
}

TEST(LatencyMonitorTest, DoctorTexts) {
  LatencyMonitor m;
  LatencyDoctorInputs in;
  EXPECT_NE(m.Doctor(in, 10).find("Latency monitoring is disabled"), std::string::npos);
  m.set_threshold_ms(100);
  EXPECT_NE(m.Doctor(in, 10).find("no latency spike"), std::string::npos);
  m.AddSample("expire-cycle", 200, 5);
  const std::string d = m.Doctor(in, 10);
  EXPECT_NE(d.find("1. expire-cycle: 1 latency spikes (average 200ms, mean deviation 0ms, "
                   "period 5.00 sec). Worst all time event 200ms."),
            std::string::npos);
  EXPECT_NE(d.find("'hz'"), std::string::npos);
}

TEST(LatencyFormatTest, PercentilesTrimZeros) {
  EXPECT_EQ(FormatPercentile(50), "50");
  EXPECT_EQ(FormatPercentile(99.9), "99.9");
  EXPECT_EQ(FormatPercentile(0), "0");
  EXPECT_EQ(FormatPercentile(25.25), "25.25");
}

}  // namespace
}  // namespace vireo
