#include "tf32_operands.hpp"

#include <string>

#include "bench_fit.hpp"
#include "scratch.hpp"
#include "sizes.hpp"
#include "transposed_operand.hpp"

namespace tunekit::ops::detail {

namespace {

// One buffer each, sized for its own operand (a skinny call keeps no more than it needs).
Scratch<1>& rounded_a_scratch() {
  static auto& scratch = *new Scratch<1>;  // never destroyed (ops/scratch.hpp)
  return scratch;
}
Scratch<1>& rounded_bt_scratch() {
  static auto& scratch = *new Scratch<1>;
  return scratch;
}

}  // namespace

const cl::KernelSpec& tf32_round_spec() {
  static const auto& spec =
      *new cl::KernelSpec(cl::KernelSpec::embedded("tf32.cl", "", "tf32_round"));
  return spec;
}

const cl::KernelSpec& tf32_transpose_spec() { return rounding_transpose_spec(); }

Tf32Operands tf32_operands(cl::Client& client, const ::cl::Buffer& a, const ::cl::Buffer& b,
                           std::size_t m, std::size_t n, std::size_t k) {
  const std::size_t a_vectors = m * k / 4;  // k % 4 == 0: whole float4
  const auto [rounded_a] = rounded_a_scratch().buffers(client, m * k * sizeof(float));
  const auto [rounded_bt] = rounded_bt_scratch().buffers(client, n * k * sizeof(float));
  ::cl::Kernel round = client.kernel(tf32_round_spec());
  client.launch_with(round, ::cl::NDRange(round_up(a_vectors, 256)), ::cl::NDRange(256),
                     int_argument(a_vectors, "M*K/4"), a, rounded_a);
  enqueue_transpose(client, tf32_transpose_spec(), b, k, n, rounded_bt, k);  // B: K rows of N
  return {rounded_a, rounded_bt};
}

}  // namespace tunekit::ops::detail
