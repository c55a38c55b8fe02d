// libFuzzer target for the stored device peak's decoder (cl::detail::decode_stored_peak, what
// StoredPeaks::load trusts). It returns a peak or a problem, never both, never neither; a peak it
// accepts is plausible, and written again (encode_stored_peak) reads back to the same figures.
// Build and run: fuzz/run.sh stored_peak [seconds]   (or cmake -DTUNEKIT_FUZZ=ON with clang++)
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <tunekit/cl/stored_peaks.hpp>

namespace {

void require(bool ok) {
  if (!ok) std::abort();
}

// The identity a file names (the line after "identity N"), so that the seeds' checksums hold.
std::string identity_in(std::string_view bytes) {
  const auto line = bytes.find("\nidentity ");
  if (line == std::string_view::npos) return "fuzz device";
  const auto start = bytes.find('\n', line + 1);
  if (start == std::string_view::npos) return "fuzz device";
  const auto end = bytes.find('\n', start + 1);
  return std::string(bytes.substr(start + 1, end == std::string_view::npos ? 0 : end - start - 1));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  for (const std::string& identity : {identity_in(bytes), std::string("fuzz device")}) {
    const auto decoded = tunekit::cl::detail::decode_stored_peak(bytes, identity);
    require(decoded.peak.has_value() == decoded.problem.empty());
    if (!decoded.peak) continue;
    const auto& peak = *decoded.peak;
    require(std::isfinite(peak.flops_per_second) && peak.flops_per_second >= 0);
    require(std::isfinite(peak.bytes_per_second) && peak.bytes_per_second > 0);
    require(std::isfinite(peak.read_bytes_per_second) && peak.read_bytes_per_second >= 0);
    const auto again = tunekit::cl::detail::decode_stored_peak(
        tunekit::cl::detail::encode_stored_peak(identity, peak), identity);
    require(again.peak && again.peak->flops_per_second == peak.flops_per_second &&
            again.peak->bytes_per_second == peak.bytes_per_second &&
            again.peak->read_bytes_per_second == peak.read_bytes_per_second);
  }
  return 0;
}
