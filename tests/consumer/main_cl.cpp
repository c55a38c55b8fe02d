// Links the installed OpenCL runtime and shipped ops: lists the devices and matmul's candidates
// (no device needed for either), and runs its own kernel file, embedded into a static library
// with the installed tunekit_embed_kernels, from wherever the program is (run.cmake removes the
// sources first).
#include <cstdio>
#include <string>
#include <tunekit/cl.hpp>
#include <tunekit/ops/matmul.hpp>
#include <vector>

int main() try {
  namespace tcl = tunekit::cl;
  const auto devices = tcl::list_devices();
  const auto candidates = tunekit::ops::matmul_candidates();
  std::printf("%zu OpenCL devices, %zu matmul candidates\n", devices.size(), candidates.size());
  if (candidates.empty()) return 1;
  const auto spec = tcl::KernelSpec::from_embedded("consumer.cl", "", "twice");
  if (!spec.problem().empty() || std::string(spec.source()).find("twice") == std::string::npos) {
    std::printf("the embedded consumer.cl is not there: %s\n", spec.problem().c_str());
    return 1;
  }
  if (devices.empty()) return 0;
  tcl::Client client;
  auto data = client.upload(std::vector<float>(8, 1.5f));
  ::cl::Kernel kernel = client.kernel(spec);
  client.launch_with(kernel, ::cl::NDRange(8), ::cl::NullRange, data);
  const bool right = client.download<float>(data, 8) == std::vector<float>(8, 3.0f);
  std::printf("embedded consumer.cl: %s\n", right ? "ran" : "WRONG");
  return right ? 0 : 1;
} catch (const std::exception& e) {
  std::printf("consumer_cl: %s\n", e.what());
  return 1;
}
