#include "tf32_operands.hpp"

#include <string>

#include "bench_fit.hpp"
#include "scratch.hpp"
#include "sizes.hpp"

namespace tunekit::ops::detail {

namespace {

// transpose.cl's tiled kernel in one of the H200's best shapes for it (kernels/README.md:
// 64 x 64 tiles, 16 rows of work-items, float4 vectors), for every configuration of the family.
constexpr std::size_t tile = 64, rows = 16, vector_width = 4;

// One buffer each, sized for its own operand (a skinny call keeps no more than it needs).
Scratch<1>& rounded_a_scratch() {
  static Scratch<1> scratch;
  return scratch;
}
Scratch<1>& rounded_bt_scratch() {
  static Scratch<1> scratch;
  return scratch;
}

}  // namespace

const cl::KernelSpec& tf32_round_spec() {
  static const cl::KernelSpec spec = cl::KernelSpec::embedded("tf32.cl", "", "tf32_round");
  return spec;
}

const cl::KernelSpec& tf32_transpose_spec() {
  static const cl::KernelSpec spec = cl::KernelSpec::embedded(
      "transpose.cl",
      "-DTILE=" + std::to_string(tile) + " -DTILE_M=" + std::to_string(tile) +
          " -DROWS=" + std::to_string(rows) + " -DPAD=1 -DVW=" + std::to_string(vector_width) +
          " -DROUND_TF32=1",
      "transpose_tiled");
  return spec;
}

Tf32Operands tf32_operands(cl::Client& client, const ::cl::Buffer& a, const ::cl::Buffer& b,
                           std::size_t m, std::size_t n, std::size_t k) {
  const cl_int K = int_argument(k, "K"), N = int_argument(n, "N");
  const std::size_t a_vectors = m * k / 4;  // k % 4 == 0: whole float4
  const auto [rounded_a] = rounded_a_scratch().buffers(client, m * k * sizeof(float));
  const auto [rounded_bt] = rounded_bt_scratch().buffers(client, n * k * sizeof(float));
  ::cl::Kernel round = client.kernel(tf32_round_spec());
  client.launch_with(round, ::cl::NDRange(round_up(a_vectors, 256)), ::cl::NDRange(256),
                     int_argument(a_vectors, "M*K/4"), a, rounded_a);
  // B is K rows of N: the tiled kernel's M x N is K x N here.
  ::cl::Kernel transpose = client.kernel(tf32_transpose_spec());
  client.launch_with(
      transpose, ::cl::NDRange(ceil_div(n, tile) * (tile / vector_width), ceil_div(k, tile) * rows),
      ::cl::NDRange(tile / vector_width, rows), K, N, b, rounded_bt);
  return {rounded_a, rounded_bt};
}

}  // namespace tunekit::ops::detail
