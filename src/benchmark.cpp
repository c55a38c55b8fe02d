// Sample statistics.
#include "tunekit/benchmark.hpp"

#include <algorithm>
#include <cmath>
#include <tuple>

namespace tunekit {

namespace {
double median_of(std::vector<double>& values) {
  const std::size_t n = values.size();
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(n / 2),
                   values.end());
  const double upper = values[n / 2];
  if (n % 2 == 1) return upper;
  const double lower =
      *std::max_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(n / 2));
  return (lower + upper) / 2;
}
}  // namespace

SampleSummary summarize(std::vector<double> samples) {
  SampleSummary summary;
  if (samples.empty()) return summary;
  const auto [low, high] = std::minmax_element(samples.begin(), samples.end());
  summary.min = *low;
  summary.max = *high;
  summary.median = median_of(samples);
  std::vector<double> sorted = samples;
  std::sort(sorted.begin(), sorted.end());
  summary.lower_quartile = sorted[(sorted.size() - 1) / 4];
  std::tie(summary.low, summary.high) = median_interval(sorted);
  for (double& s : samples) s = std::fabs(s - summary.median);
  summary.spread = median_of(samples);
  return summary;
}

std::pair<double, double> median_interval(const std::vector<double>& sorted) {
  const std::size_t n = sorted.size();
  if (n == 0) return {0, 0};
  if (n < 6) return {sorted.front(), sorted.back()};
  // Ranks (1-based) n/2 -+ 1.96 sqrt(n)/2: the normal approximation of B(n, 1/2), rounded
  // outwards so that the coverage is at least 95%.
  const double half_width = 1.96 * std::sqrt(static_cast<double>(n)) / 2;
  const double centre = static_cast<double>(n) / 2;
  const auto lower_rank = static_cast<std::size_t>(std::max(1.0, std::floor(centre - half_width)));
  const auto upper_rank = static_cast<std::size_t>(
      std::min(static_cast<double>(n), std::ceil(centre + half_width + 1)));
  return {sorted[lower_rank - 1], sorted[upper_rank - 1]};
}

}  // namespace tunekit
