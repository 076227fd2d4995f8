#include "common/sparkline.h"

#include <algorithm>

namespace kv {
namespace {

constexpr char kTops[] = "_-`";
constexpr char kFilled[] = "_o#";
constexpr int kLevels = 3;  // characters per row

struct Scale {
  double min = 0, max = 0;
  bool labels = false;
};

// One block: samples [offset, offset + len).
void RenderRange(const std::vector<SparklineSample>& samples, const Scale& scale, int rows,
                 size_t offset, size_t len, bool fill, std::string* out) {
  double relmax = scale.max - scale.min;
  if (relmax == 0) relmax = 1;
  const int steps = kLevels * rows;
  std::string chars;
  for (int row = 0;; row++) {
    bool more = false;
    chars.assign(len, ' ');
    for (size_t j = 0; j < len; j++) {
      const SparklineSample& s = samples[offset + j];
      // As Redis computes it: the product truncated, then divided and truncated again.
      int step = static_cast<int>(static_cast<int>((s.value - scale.min) * steps) / relmax);
      step = std::clamp(step, 0, steps - 1);
      if (row < rows) {
        int level = step - (rows - row - 1) * kLevels;
        more = true;
        if (level >= 0 && level < kLevels) {
          chars[j] = fill ? kFilled[level] : kTops[level];
        } else if (fill && level >= kLevels) {
          chars[j] = '|';
        }
        continue;
      }
      if (scale.labels && row - rows < 1) {  // the blank row above the labels
        more = true;
        break;
      }
      size_t label_char = static_cast<size_t>(row - rows - 1);
      if (s.label.size() > label_char) {
        more = true;
        chars[j] = s.label[label_char];
      }
    }
    if (!more) break;
    out->append(chars);
    out->push_back('\n');
  }
}

}  // namespace

std::string RenderSparkline(const std::vector<SparklineSample>& samples, int columns, int rows,
                            bool fill) {
  Scale scale;
  for (size_t i = 0; i < samples.size(); i++) {
    double v = samples[i].value;
    scale.min = i == 0 ? v : std::min(scale.min, v);
    scale.max = i == 0 ? v : std::max(scale.max, v);
    if (!samples[i].label.empty()) scale.labels = true;
  }
  std::string out;
  for (size_t j = 0; j < samples.size(); j += columns) {
    size_t len = std::min(samples.size() - j, static_cast<size_t>(columns));
    if (j != 0) out.push_back('\n');
    RenderRange(samples, scale, rows, j, len, fill, &out);
  }
  return out;
}

}  // namespace kv
