// Links the installed OpenCL runtime and shipped ops: lists the devices and matmul's candidates
// (no device needed for either).
#include <cstdio>
#include <tunekit/cl.hpp>
#include <tunekit/ops/matmul.hpp>

int main() {
  const auto devices = tunekit::cl::list_devices();
  const auto candidates = tunekit::ops::matmul_candidates();
  std::printf("%zu OpenCL devices, %zu matmul candidates\n", devices.size(), candidates.size());
  return candidates.empty() ? 1 : 0;
}
