// Client::peak(): a device's arithmetic and memory peaks, measured once per device
// (kernels/peak.cl) and kept on disk (StoredPeaks), and measured again before a tuning stops on
// them (peak_now), for the throughput bounds that end a tuning early.
#include <algorithm>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>

#include "../warnings.hpp"
#include "cache_root.hpp"
#include "tunekit/cl/client.hpp"
#include "tunekit/cl/stored_peaks.hpp"

namespace tunekit::cl {
namespace {

std::mutex peaks_mutex;
std::map<std::string, DevicePeak>& known_peaks() {  // by device identity
  static std::map<std::string, DevicePeak> peaks;
  return peaks;
}
std::set<std::string>& declared_peaks() {  // never measured again (Client::peak_now)
  static std::set<std::string> declared;
  return declared;
}

// The shortest of three runs of `work` once it takes long enough to time well.
template <class Work>
double best_of_three(Client& client, Work&& work) {
  double best = client.measure(FunctionRef<void()>(work), 1);
  for (int i = 0; i < 2; ++i) best = std::min(best, client.measure(FunctionRef<void()>(work), 1));
  return best;
}

// Long enough that the timer's tick (1 us on NVIDIA) and launch overheads do not matter.
constexpr double least_timed_seconds = 5e-3;

double measure_flops(Client& client) {
  const DeviceInfo& device = client.device();
  const std::size_t local = std::min<std::size_t>(256, device.max_work_group_size);
  const std::size_t items = local * std::max<std::size_t>(device.compute_units, 1) * 8;
  ::cl::Buffer out = client.allocate(items * sizeof(float));
  ::cl::Kernel kernel = client.kernel(KernelSpec::embedded("peak.cl", "", "peak_fma"));
  cl_int iterations = 64;
  const auto run = [&] {
    set_args(kernel, iterations, 0.5f, out);
    client.launch(kernel, ::cl::NDRange(items), ::cl::NDRange(local));
  };
  double seconds = client.measure(FunctionRef<void()>(run), 1);  // also the first launch
  while (seconds < least_timed_seconds && iterations < (1 << 22)) {
    iterations *= 2;
    seconds = client.measure(FunctionRef<void()>(run), 1);
  }
  seconds = best_of_three(client, run);
  const double flops = 256.0 * static_cast<double>(iterations) * static_cast<double>(items);
  return seconds > 0 ? flops / seconds : 0;
}

// Bytes read per second by peak_read over `a` and `b` (`bytes` each), or 0 when not timed.
double measure_read(Client& client, const ::cl::Buffer& a, const ::cl::Buffer& b,
                    std::uint64_t bytes) {
  const DeviceInfo& device = client.device();
  // Both buffers read (the copy's traffic, so that the two are timed alike). On a GPU by about
  // one wave of work-items (2048 per compute unit, the most one holds) striding through them:
  // one buffer read a work-item per 16 float4s ran at 3.8 TB/s on the H200, under its copy,
  // while its reduce reads at 4.4; a wave with eight strides a step at 4.2 (two: 4.0). On a CPU
  // by a work-item per two float4s of each: PoCL read 128 MiB at 4 GB/s with the GPU's long
  // loops, 22 with 8 float4s a work-item, 42 with two. At most 256 MiB a buffer: the count fits
  // the kernel's uint.
  const std::uint64_t vectors = bytes / 16;
  const std::uint64_t readers = std::max<std::uint64_t>(
      1, std::min<std::uint64_t>(
             vectors, device.is_cpu() ? vectors / 2
                                      : std::uint64_t{2048} *
                                            std::max<std::uint64_t>(device.compute_units, 1)));
  ::cl::Buffer sums = client.allocate(readers * sizeof(float));
  ::cl::Kernel read = client.kernel(KernelSpec::embedded("peak.cl", "", "peak_read"));
  set_args(read, a, b, sums, static_cast<cl_uint>(vectors));
  const auto run_read = [&] { client.launch(read, ::cl::NDRange(readers)); };
  (void)client.measure(FunctionRef<void()>(run_read), 1);
  const double read_seconds = best_of_three(client, run_read);
  return read_seconds > 0 ? 2.0 * static_cast<double>(bytes) / read_seconds : 0;
}

// The device's memory rates: a copy's (bytes read and written, per second) and a read-only
// sum's (bytes read per second). Memory reads faster than a copy moves (on the H200 the reduce
// op at 105-108% of the copy, peak_read at 106%): against the copy's figure alone, a reduction's
// tuning could stop "near the roofline" on a candidate well behind the best. A failed read
// measurement leaves the read rate unknown (reads then count at the copy's rate).
struct MemoryRates {
  double copy = 0;
  double read = 0;
};
MemoryRates measure_memory(Client& client) {
  const DeviceInfo& device = client.device();
  // Beyond every cache (the H100's L2 holds 50 MB), within the device's limits.
  std::uint64_t bytes = device.is_cpu() ? (64u << 20) : (256u << 20);
  bytes = std::min<std::uint64_t>({bytes, device.max_allocation, device.global_memory / 8});
  bytes -= bytes % 16;  // whole float4s
  if (bytes == 0) return {};
  ::cl::Buffer in = client.allocate(bytes), out = client.allocate(bytes);
  client.fill(in, 1.0f, bytes / sizeof(float));
  ::cl::Kernel copy = client.kernel(KernelSpec::embedded("peak.cl", "", "peak_copy"));
  set_args(copy, in, out);
  const auto run_copy = [&] { client.launch(copy, ::cl::NDRange(bytes / 16)); };
  (void)client.measure(FunctionRef<void()>(run_copy), 1);  // the first launch
  const double copy_seconds = best_of_three(client, run_copy);

  MemoryRates rates;
  if (copy_seconds > 0) rates.copy = 2.0 * static_cast<double>(bytes) / copy_seconds;
  try {
    rates.read = measure_read(client, in, out, bytes);
  } catch (const std::exception& e) {  // the copy's rate stands: reads count at it
    warn("tunekit: measuring the read rate of " + device.describe() +
         " failed; reads are bounded by the copy's rate: " + e.what());
  }
  return rates;
}

// Not on a CPU device: there the kernel's speed is what the OpenCL compiler makes of its
// vectors, not the cores' limit. On PoCL (2 AVX-512 cores) it gave 93 GFLOP/s where a matmul
// candidate ran 170, so a tuning stopped "near the roofline" on a candidate 2.1x slower than the
// best. Unknown (0): no arithmetic bound there, whatever a stored peak says.
bool arithmetic_peak_measurable(const DeviceInfo& device) { return !device.is_cpu(); }

// The peak measured now; nothing when the measurement failed (said once per call).
std::optional<DevicePeak> measure_peak(Client& client, const DeviceInfo& device) {
  try {
    DevicePeak peak;
    if (arithmetic_peak_measurable(device)) peak.flops_per_second = measure_flops(client);
    const MemoryRates memory = measure_memory(client);
    peak.bytes_per_second = memory.copy;
    peak.read_bytes_per_second = memory.read;
    peak.cache_bytes = static_cast<double>(device.global_memory_cache);
    return peak;
  } catch (const std::exception& e) {
    warn("tunekit: measuring the peak of " + device.describe() +
         " failed, no throughput bound for its tunings: " + e.what());
    return std::nullopt;
  }
}

// The peaks kept under the cache directory, unless the persistent cache is off.
std::optional<StoredPeaks> stored_peaks() {
  const auto root = client_cache_root("device peaks");
  return root ? std::optional<StoredPeaks>(std::in_place, *root) : std::nullopt;
}
}  // namespace

DevicePeak Client::peak() {
  const std::string& identity = id_.identity();
  {
    std::lock_guard lock(peaks_mutex);
    if (auto it = known_peaks().find(identity); it != known_peaks().end()) return it->second;
  }
  const auto stored = stored_peaks();
  std::optional<DevicePeak> peak = stored ? stored->load(identity) : std::nullopt;
  if (peak) {
    peak->cache_bytes = static_cast<double>(device_.global_memory_cache);
    // What a measurement here cannot give, a file cannot either (a planted CPU FLOP/s figure
    // would be a bound that no measurement checks).
    if (!arithmetic_peak_measurable(device_)) peak->flops_per_second = 0;
  } else {
    peak = measure_peak(*this, device_);
    if (peak && stored) stored->raise(identity, *peak);
  }
  std::lock_guard lock(peaks_mutex);
  return known_peaks().try_emplace(identity, peak.value_or(DevicePeak{})).first->second;
}

DevicePeak Client::peak_now() {
  const std::string& identity = id_.identity();
  {
    std::lock_guard lock(peaks_mutex);
    if (declared_peaks().count(identity)) return known_peaks().at(identity);
  }
  const auto now = measure_peak(*this, device_);
  DevicePeak known;
  {
    std::lock_guard lock(peaks_mutex);
    DevicePeak& kept = known_peaks()[identity];
    if (now) {
      // The higher of each figure, except one the measurement gives as unknown (0: a CPU's
      // arithmetic): then no figure is kept, not an older one that nothing confirms now.
      const auto higher = [](double known_figure, double measured) {
        return measured > 0 ? std::max(known_figure, measured) : 0.0;
      };
      kept.flops_per_second = higher(kept.flops_per_second, now->flops_per_second);
      kept.bytes_per_second = higher(kept.bytes_per_second, now->bytes_per_second);
      kept.read_bytes_per_second = higher(kept.read_bytes_per_second, now->read_bytes_per_second);
      kept.cache_bytes = now->cache_bytes;
    }
    known = kept;
  }
  if (now) {
    if (const auto stored = stored_peaks()) stored->raise(identity, known);
  }
  return known;
}

void Client::declare_peak(const DevicePeak& peak) {
  std::lock_guard lock(peaks_mutex);
  known_peaks().insert_or_assign(id_.identity(), peak);
  declared_peaks().insert(id_.identity());
}

}  // namespace tunekit::cl
