#include "common/histogram.h"

#include <gtest/gtest.h>

#include "common/sparkline.h"

namespace kv {
namespace {

// The configuration Redis keeps per command: nanoseconds, 1 to 1e9, 2 significant figures.
Histogram LatencyHistogram() { return Histogram(1, 1000000000, 2); }

TEST(Histogram, EquivalentValuesFollowTheLogLinearLayout) {
  Histogram h = LatencyHistogram();
  // Below 256 every value has its own counter; then each doubling halves the resolution.
  EXPECT_EQ(h.LowestEquivalent(200), 200);
  EXPECT_EQ(h.HighestEquivalent(200), 200);
  EXPECT_EQ(h.LowestEquivalent(1000), 1000);
  EXPECT_EQ(h.HighestEquivalent(1000), 1003);
  // Figures redis-server 7.0 reports in INFO latencystats (p0=6.976, p50=7.007 for one ~7us
  // call; 51.199 and 64.255 for others).
  EXPECT_EQ(h.LowestEquivalent(7000), 6976);
  EXPECT_EQ(h.HighestEquivalent(7000), 7007);
  EXPECT_EQ(h.HighestEquivalent(51000), 51199);
  EXPECT_EQ(h.HighestEquivalent(64100), 64255);
  EXPECT_EQ(h.HighestEquivalent(1000000), 1003519);
}

TEST(Histogram, PercentilesPickTheCounterHoldingTheRankedValue) {
  Histogram h = LatencyHistogram();
  EXPECT_EQ(h.ValueAtPercentile(50), 0);  // empty
  for (int i = 0; i < 99; i++) ASSERT_TRUE(h.Record(1000));
  ASSERT_TRUE(h.Record(1000000));
  EXPECT_EQ(h.total_count(), 100);
  EXPECT_EQ(h.ValueAtPercentile(0), 1000);  // the lowest equivalent value at percentile 0
  EXPECT_EQ(h.ValueAtPercentile(50), 1003);
  EXPECT_EQ(h.ValueAtPercentile(99), 1003);       // rank 99
  EXPECT_EQ(h.ValueAtPercentile(99.4), 1003);     // rank 99.4 rounds to 99
  EXPECT_EQ(h.ValueAtPercentile(99.5), 1003519);  // rank 99.5 rounds to 100
  EXPECT_EQ(h.ValueAtPercentile(100), 1003519);
  EXPECT_EQ(h.ValueAtPercentile(250), 1003519);  // above 100 counts as 100
  h.Reset();
  EXPECT_EQ(h.total_count(), 0);
  EXPECT_EQ(h.ValueAtPercentile(100), 0);
}

TEST(Histogram, RecordRefusesValuesPastTheLastBucket) {
  Histogram h = LatencyHistogram();
  EXPECT_TRUE(h.Record(0));
  EXPECT_TRUE(h.Record(1000000000));
  EXPECT_FALSE(h.Record(-1));
  EXPECT_FALSE(h.Record(int64_t{1} << 40));
  EXPECT_EQ(h.total_count(), 2);
}

TEST(Histogram, LogarithmicStepsStopAtEachPowerOfTwoLevel) {
  Histogram h = LatencyHistogram();
  for (int i = 0; i < 3; i++) h.Record(5000);
  h.Record(20000);
  auto steps = h.LogarithmicSteps(1024, 2);
  // Levels 1024 .. 32768 ns; each step reports the top of the counter at its level.
  ASSERT_EQ(steps.size(), 6u);
  const int64_t tops[] = {1031, 2063, 4127, 8255, 16511, 33023};
  const int64_t cumulative[] = {0, 0, 0, 3, 3, 4};
  for (size_t i = 0; i < steps.size(); i++) {
    EXPECT_EQ(steps[i].highest_equivalent, tops[i]) << i;
    EXPECT_EQ(steps[i].cumulative_count, cumulative[i]) << i;
  }
  EXPECT_TRUE(LatencyHistogram().LogarithmicSteps(1024, 2).empty());
}

TEST(Histogram, LogarithmicStepsMissCountsAboveTheLastReachableLevel) {
  // The 2^30 ns level lies past the last counter, so a value clamped to 1e9 ns never shows in
  // the walk: Redis' LATENCY HISTOGRAM leaves it out the same way.
  Histogram h = LatencyHistogram();
  h.Record(1000);
  h.Record(1000000000);
  auto steps = h.LogarithmicSteps(1024, 2);
  ASSERT_FALSE(steps.empty());
  EXPECT_EQ(steps.back().highest_equivalent, (int64_t{1} << 29) + (int64_t{1} << 22) - 1);
  EXPECT_EQ(steps.back().cumulative_count, 1);
}

TEST(Histogram, PercentilesPrintAsRedisPrintsThem) {
  EXPECT_EQ(PercentileToString(50), "50");
  EXPECT_EQ(PercentileToString(99.9), "99.9");
  EXPECT_EQ(PercentileToString(0), "0");
  EXPECT_EQ(PercentileToString(100), "100");
  EXPECT_EQ(PercentileToString(0.0000001), "0");  // %f keeps six decimals
  EXPECT_EQ(PercentileToString(12.3456789), "12.345679");
}

TEST(Sparkline, FilledColumnsWithVerticalLabels) {
  std::vector<SparklineSample> s = {{1, "2s"}, {2, "1s"}, {3, "0s"}};
  EXPECT_EQ(RenderSparkline(s, 80, 4, true),
            "  #\n"
            " _|\n"
            " ||\n"
            "_||\n"
            "   \n"
            "210\n"
            "sss\n");
  EXPECT_EQ(RenderSparkline(s, 80, 4, false),
            "  `\n"
            " _ \n"
            "   \n"
            "_  \n"
            "   \n"
            "210\n"
            "sss\n");
}

TEST(Sparkline, SplitsIntoBlocksOfColumnsAndFlatSeriesSitAtTheBottom) {
  std::vector<SparklineSample> s = {{5, ""}, {5, ""}, {5, ""}};
  EXPECT_EQ(RenderSparkline(s, 2, 2, true), "  \n__\n\n \n_\n");
  EXPECT_EQ(RenderSparkline({}, 80, 4, true), "");
}

}  // namespace
}  // namespace kv
