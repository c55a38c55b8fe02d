// The roofline of a key's work on a device (tunekit/throughput.hpp).
#include "tunekit/throughput.hpp"

#include <algorithm>
#include <cmath>

namespace tunekit {

double least_seconds(const Work& work, const DevicePeak& peak) {
  const auto part = [](double amount, double rate) {
    return std::isfinite(amount) && amount > 0 && std::isfinite(rate) && rate > 0 ? amount / rate
                                                                                  : 0.0;
  };
  const bool cached = !(work.bytes > 2 * peak.cache_bytes);
  return std::max(part(work.flops, peak.flops_per_second),
                  cached ? 0.0 : part(work.bytes, peak.bytes_per_second));
}

}  // namespace tunekit
