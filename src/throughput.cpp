// The roofline of a key's work on a device (tunekit/throughput.hpp).
#include "tunekit/throughput.hpp"

#include <algorithm>
#include <cmath>

namespace tunekit {

namespace {
bool usable(double figure) { return std::isfinite(figure) && figure > 0; }

// Seconds for the work's memory traffic; 0 when the peak says nothing of it.
double memory_seconds(const Work& work, const DevicePeak& peak) {
  if (!usable(work.bytes) || !usable(peak.bytes_per_second)) return 0;
  const double copy_rate = peak.bytes_per_second;  // bytes read plus written, per second
  // A read kernel slower than a copy's bytes is a poor measurement, not the device: every byte
  // then counts at the copy's rate, as with no read figure.
  const double read_rate =
      std::max(copy_rate, usable(peak.read_bytes_per_second) ? peak.read_bytes_per_second : 0.0);
  // A copy of B bytes takes 2B / copy_rate = B / read_rate + B * seconds_per_written_byte.
  const double seconds_per_written_byte = 2 / copy_rate - 1 / read_rate;
  const double written =
      std::isfinite(work.bytes_written) ? std::clamp(work.bytes_written, 0.0, work.bytes) : 0.0;
  const double modelled = (work.bytes - written) / read_rate + written * seconds_per_written_byte;
  // Never above the copy's bound (every byte at its rate): the model only loosens it. Work that
  // writes more than it reads would else be bounded by the read figure, which a planted stored
  // peak could raise to double the bound and stop a tuning on a candidate twice the best's time.
  return std::min(modelled, work.bytes / copy_rate);
}
}  // namespace

double least_seconds(const Work& work, const DevicePeak& peak) {
  const bool cached = !(work.bytes > 2 * peak.cache_bytes);
  const double arithmetic = usable(work.flops) && usable(peak.flops_per_second)
                                ? work.flops / peak.flops_per_second
                                : 0.0;
  return std::max(arithmetic, cached ? 0.0 : memory_seconds(work, peak));
}

}  // namespace tunekit
