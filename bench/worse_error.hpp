// The larger of two errors where either may be NaN: the one rule by which the benchmarks and the
// tests fold a result's errors into its worst. Header-only, standard library only.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>

namespace tunekit::bench {

/// The larger of `worst` and `error`, NaN counted as infinite: std::max(worst, NaN) keeps
/// `worst`, so an output of NaN would pass as exact.
inline double worse_error(double worst, double error) {
  return std::isnan(error) ? std::numeric_limits<double>::infinity() : std::max(worst, error);
}

}  // namespace tunekit::bench
