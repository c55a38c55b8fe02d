// A new user's host file with one shipped op: what scripts/compile-time.sh compiles against two
// revisions' headers (docs/benchmarks.md, "Compile time of a user's file"). Not built by CMake.
#include <cstdio>
#include <tunekit/cl.hpp>
#include <tunekit/ops/matmul.hpp>
#include <vector>

int main() {
  tunekit::cl::Client client;
  const std::size_t n = 64;
  const std::vector<float> ones(n * n, 1.0f);
  const auto a = tunekit::ops::upload_matrix(client, ones, n, n);
  const auto b = tunekit::ops::upload_matrix(client, ones, n, n);
  auto c = tunekit::ops::upload_matrix(client, ones, n, n);
  tunekit::ops::matmul(client, a, b, c);
  std::printf("%f\n", tunekit::ops::download_matrix(client, c)[0]);
}
