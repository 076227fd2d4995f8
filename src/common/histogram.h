// A log-linear histogram of integer values with the layout and answers of the one Redis keeps
// per command for LATENCY HISTOGRAM and INFO latencystats (nanoseconds from 1 to 1e9, 2
// significant figures).
//
// Layout: buckets double in width; each holds `sub_bucket_count` sub-buckets, the lower half of
// which overlaps the previous bucket and is not stored, so a value is counted at a resolution
// of 1 part in 10^significant_figures (within a factor of two). Two values are "equivalent"
// when they land in the same counter; queries report the lowest or highest equivalent value.
//
// Not thread-safe; the server keeps its histograms under the keyspace lock.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kv {

class Histogram {
 public:
  // Tracks [lowest, highest] at `significant_figures` (1..5) decimal digits. Requires
  // lowest >= 1 and highest >= 2 * lowest.
  Histogram(int64_t lowest, int64_t highest, int significant_figures);

  // Counts `value`; false, counting nothing, when it is outside the tracked range.
  bool Record(int64_t value);
  void Reset();
  int64_t total_count() const { return total_; }

  // As Redis reads a percentile from its histogram: the value below which `percentile` (0..100,
  // above 100 taken as 100) of the counts fall, reported as the highest value equivalent to it
  // (the lowest for percentile 0). 0 when nothing was counted.
  int64_t ValueAtPercentile(double percentile) const;

  // One step of a logarithmic walk: the highest value equivalent to the counter the walk stopped
  // at, and the number of counts at or below it.
  struct Step {
    int64_t highest_equivalent;
    int64_t cumulative_count;
  };
  // The logarithmic walk Redis' LATENCY HISTOGRAM makes (it starts at 1024 with base 2): one
  // step per reporting level first, first*base, first*base^2, ... for as long as counts remain
  // at or above the level and the level lies inside the counters. Steps that add no counts are
  // included; callers filter them.
  std::vector<Step> LogarithmicSteps(int64_t first, int64_t base) const;

  int64_t LowestEquivalent(int64_t value) const;
  int64_t HighestEquivalent(int64_t value) const;

 private:
  int32_t BucketIndex(int64_t value) const;
  int32_t SubBucketIndex(int64_t value, int32_t bucket) const;
  int32_t CountsIndex(int64_t value) const;
  int64_t ValueAtIndex(int32_t index) const;
  int64_t EquivalentRange(int64_t value) const;

  int32_t unit_magnitude_;
  int32_t sub_bucket_half_count_magnitude_;
  int32_t sub_bucket_count_;
  int32_t sub_bucket_half_count_;
  int64_t sub_bucket_mask_;
  int32_t bucket_count_;
  std::vector<int64_t> counts_;
  int64_t total_ = 0;
};

// A percentile as Redis writes it (CONFIG GET latency-tracking-info-percentiles, INFO
// latencystats): "%f" without trailing zeros or point, so 99.9, 50, 0.001.
std::string PercentileToString(double percentile);

}  // namespace kv
