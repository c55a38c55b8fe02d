// compare_buffers' rule for one value (tunekit/cl/buffers.hpp).
#include "tunekit/cl/buffers.hpp"

#include <algorithm>
#include <cmath>

namespace tunekit::cl::detail {

bool within_tolerance(double expected, double actual, double tolerance) {
  // A NaN or an infinity where the reference has one (log of a negative, say) is the same result.
  if (std::isnan(expected) || std::isinf(expected)) {
    return std::isnan(expected) ? std::isnan(actual) : actual == expected;
  }
  return std::fabs(expected - actual) <= tolerance * std::max(1.0, std::fabs(expected));
}

}  // namespace tunekit::cl::detail
