// Sample statistics and the translation of exceptions into AutotuneErrors.
#include "tunekit/benchmark.hpp"

#include <algorithm>
#include <cmath>

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
  for (double& s : samples) s = std::fabs(s - summary.median);
  summary.spread = median_of(samples);
  return summary;
}

AutotuneError error_from_exception(std::exception_ptr failure, const std::string& tunable) {
  try {
    std::rethrow_exception(failure);
  } catch (const AutotuneError& e) {
    return e.named(tunable);
  } catch (const std::bad_alloc&) {
    return AutotuneError(ErrorKind::allocation, "out of memory (std::bad_alloc)", tunable);
  } catch (const std::exception& e) {
    return AutotuneError(ErrorKind::runtime, std::string("threw: ") + e.what(), tunable);
  } catch (...) {
    return AutotuneError(ErrorKind::runtime, "threw an exception of unknown type", tunable);
  }
}

AutotuneError error_from_current_exception(const std::string& tunable) {
  return error_from_exception(std::current_exception(), tunable);
}

}  // namespace tunekit
