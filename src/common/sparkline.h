// ASCII sparklines, drawn as Redis' LATENCY GRAPH draws them: each sample is a column, its
// height in `rows` text rows of three levels each, and its label is written vertically below.
#pragma once

#include <string>
#include <vector>

namespace kv {

struct SparklineSample {
  double value;
  std::string label;  // empty: none
};

// Renders `samples` in blocks of at most `columns` columns (blocks separated by an empty line),
// each `rows` rows high, scaled between the smallest and largest value of all samples. `fill`
// draws solid columns ("_o#" tops over '|'); otherwise only the tops ("_-`"). When any sample
// has a label, one blank row separates the graph from the labels. Every row ends in '\n'.
std::string RenderSparkline(const std::vector<SparklineSample>& samples, int columns, int rows,
                            bool fill);

}  // namespace kv
