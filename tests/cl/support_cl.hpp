// Test support for the OpenCL runtime: one shared client (building programs once for the whole
// run), small test kernels and their host references.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <string>
#include <tunekit/cl.hpp>
#include <tunekit/tunekit.hpp>
#include <vector>

#include "../support.hpp"  // test_settings(), SizeKey

namespace tunekit::test {

/// The default device's client, shared by the tests so that each program is built once.
inline cl::Client& shared_client() {
  static cl::Client client;
  return client;
}

/// Kernels used by the tests; every result they produce is checked against the host versions.
inline const std::string test_kernels = R"CLC(
// x <- x * 0.999 + 0.001, `iterations` times per element: a kernel whose cost is chosen.
__kernel void busy(__global float* data, int iterations) {
  const size_t i = get_global_id(0);
  float x = data[i];
  for (int k = 0; k < iterations; ++k) x = x * 0.999f + 0.001f;
  data[i] = x;
}
__kernel void add(__global float* data, float amount) {
  data[get_global_id(0)] += amount;
}
// add() through local memory, so that a launch needs `scratch`'s bytes of it.
__kernel void add_local(__global float* data, float amount, __local float* scratch) {
  const size_t l = get_local_id(0);
  scratch[l] = data[get_global_id(0)];
  barrier(CLK_LOCAL_MEM_FENCE);
  data[get_global_id(0)] = scratch[l] + amount;
}
// Reverses each work-group's slice through local memory.
__kernel void reverse_groups(__global float* data, __local float* scratch) {
  const size_t l = get_local_id(0), n = get_local_size(0);
  scratch[l] = data[get_global_id(0)];
  barrier(CLK_LOCAL_MEM_FENCE);
  data[get_global_id(0)] = scratch[n - 1 - l];
}
)CLC";

inline cl::KernelSpec test_kernel(const std::string& name, std::string options = {}) {
  return cl::KernelSpec::from_text(test_kernels, std::move(options), name, "test_kernels");
}

/// Host reference of `busy`.
inline float busy_reference(float x, int iterations) {
  for (int k = 0; k < iterations; ++k) x = x * 0.999f + 0.001f;
  return x;
}

/// 0, 1/n, 2/n, ...: values that stay well-conditioned under `busy`.
inline std::vector<float> ramp(std::size_t n) {
  std::vector<float> values(n);
  for (std::size_t i = 0; i < n; ++i) values[i] = static_cast<float>(i) / static_cast<float>(n);
  return values;
}

/// Largest relative difference, with absolute tolerance near zero.
inline double max_error(const std::vector<float>& got, const std::vector<float>& want) {
  double worst = got.size() == want.size() ? 0.0 : 1e30;
  for (std::size_t i = 0; i < std::min(got.size(), want.size()); ++i) {
    const double scale = std::max(1.0, std::fabs(static_cast<double>(want[i])));
    worst = worse_error(worst, std::fabs(static_cast<double>(got[i]) - want[i]) / scale);
  }
  return worst;
}

/// The smallest of `runs` measurements: the least disturbed by other processes on the host.
template <class Fn>
double min_time(cl::Client& client, Fn&& fn, std::size_t batch = 1, int runs = 5) {
  double best = 1e30;
  for (int r = 0; r < runs; ++r) best = std::min(best, client.measure(fn, batch));
  return best;
}

}  // namespace tunekit::test
