#include "common/histogram.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdio>

namespace kv {

Histogram::Histogram(int64_t lowest, int64_t highest, int significant_figures) {
  assert(lowest >= 1 && highest >= 2 * lowest);
  assert(significant_figures >= 1 && significant_figures <= 5);
  // The bucket configuration of Redis' histograms, computed the same way (floating point
  // included) so the layout, and every answer, is the same.
  int64_t single_unit_limit = 2 * static_cast<int64_t>(std::pow(10, significant_figures));
  auto count_magnitude = static_cast<int32_t>(
      std::ceil(std::log(static_cast<double>(single_unit_limit)) / std::log(2)));
  sub_bucket_half_count_magnitude_ = std::max(count_magnitude, 1) - 1;
  unit_magnitude_ = static_cast<int32_t>(std::log(static_cast<double>(lowest)) / std::log(2));
  sub_bucket_count_ = 1 << (sub_bucket_half_count_magnitude_ + 1);
  sub_bucket_half_count_ = sub_bucket_count_ / 2;
  sub_bucket_mask_ = static_cast<int64_t>(sub_bucket_count_ - 1) << unit_magnitude_;
  // Buckets needed for `highest`: each doubles the range the previous ones cover.
  int64_t smallest_untrackable = static_cast<int64_t>(sub_bucket_count_) << unit_magnitude_;
  bucket_count_ = 1;
  while (smallest_untrackable <= highest) {
    if (smallest_untrackable > INT64_MAX / 2) {
      bucket_count_++;
      break;
    }
    smallest_untrackable <<= 1;
    bucket_count_++;
  }
  counts_.assign(static_cast<size_t>(bucket_count_ + 1) * sub_bucket_half_count_, 0);
}

int32_t Histogram::BucketIndex(int64_t value) const {
  int32_t pow2_ceiling = 64 - __builtin_clzll(static_cast<uint64_t>(value | sub_bucket_mask_));
  return pow2_ceiling - unit_magnitude_ - (sub_bucket_half_count_magnitude_ + 1);
}

int32_t Histogram::SubBucketIndex(int64_t value, int32_t bucket) const {
  return static_cast<int32_t>(value >> (bucket + unit_magnitude_));
}

int32_t Histogram::CountsIndex(int64_t value) const {
  int32_t bucket = BucketIndex(value);
  int32_t sub = SubBucketIndex(value, bucket);
  return ((bucket + 1) << sub_bucket_half_count_magnitude_) + (sub - sub_bucket_half_count_);
}

int64_t Histogram::ValueAtIndex(int32_t index) const {
  int32_t bucket = (index >> sub_bucket_half_count_magnitude_) - 1;
  int32_t sub = (index & (sub_bucket_half_count_ - 1)) + sub_bucket_half_count_;
  if (bucket < 0) {  // the first bucket stores its lower half too
    sub -= sub_bucket_half_count_;
    bucket = 0;
  }
  return static_cast<int64_t>(sub) << (bucket + unit_magnitude_);
}

int64_t Histogram::EquivalentRange(int64_t value) const {
  int32_t bucket = BucketIndex(value);
  int32_t sub = SubBucketIndex(value, bucket);
  int32_t adjusted = sub >= sub_bucket_count_ ? bucket + 1 : bucket;
  return int64_t{1} << (unit_magnitude_ + adjusted);
}

int64_t Histogram::LowestEquivalent(int64_t value) const {
  int32_t bucket = BucketIndex(value);
  return static_cast<int64_t>(SubBucketIndex(value, bucket)) << (bucket + unit_magnitude_);
}

int64_t Histogram::HighestEquivalent(int64_t value) const {
  return LowestEquivalent(value) + EquivalentRange(value) - 1;
}

bool Histogram::Record(int64_t value) {
  if (value < 0) return false;
  int32_t index = CountsIndex(value);
  if (index < 0 || static_cast<size_t>(index) >= counts_.size()) return false;
  counts_[index]++;
  total_++;
  return true;
}

void Histogram::Reset() {
  std::fill(counts_.begin(), counts_.end(), 0);
  total_ = 0;
}

int64_t Histogram::ValueAtPercentile(double percentile) const {
  double requested = percentile < 100.0 ? percentile : 100.0;
  auto wanted = static_cast<int64_t>(requested / 100 * static_cast<double>(total_) + 0.5);
  wanted = std::max<int64_t>(wanted, 1);
  int64_t seen = 0, value = 0;
  for (size_t i = 0; i < counts_.size(); i++) {
    seen += counts_[i];
    if (seen >= wanted) {
      value = ValueAtIndex(static_cast<int32_t>(i));
      break;
    }
  }
  return percentile == 0.0 ? LowestEquivalent(value) : HighestEquivalent(value);
}

// The state machine of the logarithmic walk Redis' histograms make: it moves counter by counter
// and stops at the first counter whose value reaches the current level's lowest equivalent value.
std::vector<Histogram::Step> Histogram::LogarithmicSteps(int64_t first, int64_t base) const {
  std::vector<Step> steps;
  int64_t level = first;
  int64_t level_lowest = LowestEquivalent(level);
  auto len = static_cast<int32_t>(counts_.size());
  int32_t index = -1;
  int64_t cumulative = 0, value = 0, highest = 0;
  for (;;) {
    if (cumulative >= total_ && ValueAtIndex(index + 1) <= level_lowest) break;
    bool reported = false;
    for (;;) {
      if (value >= level_lowest) {
        steps.push_back({highest, cumulative});
        level *= base;
        level_lowest = LowestEquivalent(level);
        reported = true;
        break;
      }
      if (++index >= len) break;
      cumulative += counts_[index];
      value = ValueAtIndex(index);
      highest = HighestEquivalent(value);
    }
    if (!reported) break;
  }
  return steps;
}

std::string PercentileToString(double percentile) {
  char buf[400];  // "%f" of a double up to 1e308
  int n = snprintf(buf, sizeof(buf), "%f", percentile);
  std::string s(buf, n > 0 ? static_cast<size_t>(n) : 0);
  if (s.find('.') != std::string::npos) {
    while (!s.empty() && s.back() == '0') s.pop_back();
    if (!s.empty() && s.back() == '.') s.pop_back();
  }
  return s;
}

}  // namespace kv
