// Throughput bounds: what a device can do at best, and what one call of an op asks of it. A
// tuning stops once a candidate comes within the level's fraction of that roofline
// (SearchSettings::good_enough): nothing measured after it could gain more than the rest.
#pragma once

#include <concepts>
#include <tuple>

namespace tunekit {

/// The most a device does per second: arithmetic (FLOP/s) and memory traffic (bytes/s). Zero
/// means unknown. cl::Client::peak() measures them once per device.
struct DevicePeak {
  double flops_per_second = 0;
  /// A copy's traffic: bytes read plus bytes written, per second.
  double bytes_per_second = 0;
  /// The device's memory cache (bytes; 0: unknown). Traffic that fits in it is not bound by
  /// the memory peaks, which are measured beyond it.
  double cache_bytes = 0;
  /// Bytes read per second by a kernel that only reads (0: unknown, taken as the copy's rate).
  /// Memory reads faster than a copy moves (the reduce op at 105-108% of it on the H200), so a
  /// reduction's bound is this one, not the copy's.
  double read_bytes_per_second = 0;
};

/// What one call of an op on a key's benchmark inputs does: FLOPs, and bytes it must move
/// between the device's memory and its cores (each input read once, each output written once).
struct Work {
  double flops = 0;
  /// Every byte moved, read or written.
  double bytes = 0;
  /// Of `bytes`, those written (the rest are read). 0 when unknown: the bound is then the
  /// loosest, every byte at the read rate.
  double bytes_written = 0;
};

/// The least time `work` can take on a device of `peak` (the roofline: the slower of its
/// arithmetic and its memory traffic at their peaks); 0 when nothing is known. Memory time is
/// the bytes read at the read rate plus the bytes written at the write rate that a copy's time
/// implies (a copy of B bytes takes B / read rate + B / write rate), never more than every byte
/// at the copy's rate: a copy-like op's bound is the copy's, a reduction's the read kernel's.
/// Traffic that may stay in the device's cache (up to twice its size) has no bound: it can beat the
/// measured peaks.
double least_seconds(const Work& work, const DevicePeak& peak);

/// A key that states the work of its benchmark problem (`key.work()`): its tunings may stop once
/// a candidate is good enough (SearchSettings::good_enough).
template <class Key>
concept HasWork = requires(const Key& key) {
  { key.work() } -> std::convertible_to<Work>;
};

namespace detail {
template <class Key, class... Elements>
concept BenchmarkWorkOf = requires(const Key& key, const Elements&... bench) {
  { benchmark_work(key, bench...) } -> std::convertible_to<Work>;
};
template <class Key, class Bench>
struct benchmark_work_of : std::false_type {};
template <class Key, class... Elements>
struct benchmark_work_of<Key, std::tuple<Elements...>>
    : std::bool_constant<BenchmarkWorkOf<Key, Elements...>> {};
}  // namespace detail

/// A key whose class spans problems of several sizes states the work of the one a tuning timed:
/// `Work benchmark_work(const Key&, const B&... bench)`, declared in the key's namespace (found
/// by argument-dependent lookup), over the elements of the benchmark inputs its input generator
/// made. The GFLOP/s and GB/s metrics divide that work by a candidate's time, exactly; `key.work()`
/// stays the roofline's bound (it may be the smallest problem of the class: a lower bound).
template <class Key, class Bench>
concept HasBenchmarkWork = detail::benchmark_work_of<Key, Bench>::value;

/// A client that knows its device's peak (for throughput bounds).
template <class Client>
concept HasDevicePeak = requires(Client& client) {
  { client.peak() } -> std::convertible_to<DevicePeak>;
};

/// A client that can measure its peak again (cl::Client::peak_now): the higher of what it knew
/// and what it measures now.
template <class Client>
concept HasFreshPeak = requires(Client& client) {
  { client.peak_now() } -> std::convertible_to<DevicePeak>;
};

}  // namespace tunekit
