#include "transposed_operand.hpp"

#include <array>
#include <cstdint>
#include <string>

#include "bench_fit.hpp"
#include "operand_passes.hpp"
#include "scratch.hpp"

namespace tunekit::ops::detail {

namespace {

Scratch<1>& transposed_a_scratch() {
  static auto& scratch = *new Scratch<1>;  // never destroyed (ops/scratch.hpp)
  return scratch;
}

Scratch<1>& padded_b_scratch() {
  static auto& scratch = *new Scratch<1>;  // never destroyed (ops/scratch.hpp)
  return scratch;
}

}  // namespace

const cl::KernelSpec& rounding_transpose_spec() {
  static const auto& spec = *new cl::KernelSpec(cl::KernelSpec::embedded(
      "transpose.cl", operand_passes::rounding_transpose_options(), "transpose_tiled"));
  return spec;
}

void enqueue_transpose(cl::Client& client, const cl::KernelSpec& spec, const ::cl::Buffer& in,
                       std::size_t rows, std::size_t cols, const ::cl::Buffer& out,
                       std::size_t out_ld) {
  ::cl::Kernel kernel = client.kernel(spec);
  const auto range = operand_passes::transpose_range(rows, cols);
  client.launch_with(kernel, ::cl::NDRange(range.global[0], range.global[1]),
                     ::cl::NDRange(range.local[0], range.local[1]), int_argument(rows, "rows"),
                     int_argument(cols, "columns"), int_argument(out_ld, "the output's row length"),
                     in, out);
}

const cl::KernelSpec& staged_operands_spec() {
  static const auto& spec = *new cl::KernelSpec(cl::KernelSpec::embedded(
      "matmul_operands.cl", operand_passes::operands_options(), "matmul_staged_operands"));
  return spec;
}

StagedOperands staged_operands(cl::Client& client, const ::cl::Buffer& a, const ::cl::Buffer& b,
                               std::size_t m, std::size_t k, std::size_t n, std::size_t lda,
                               std::size_t ldb) {
  int_argument(std::uint64_t{k} * lda, "K times At's row length");
  int_argument(std::uint64_t{k} * ldb, "K times B's padded row length");
  const bool pads_b = ldb > n;
  const auto [at] = transposed_a_scratch().buffers(client, k * lda * sizeof(float));
  const ::cl::Buffer b_rows =
      pads_b ? std::get<0>(padded_b_scratch().buffers(client, k * ldb * sizeof(float))) : b;
  ::cl::Kernel kernel = client.kernel(staged_operands_spec());
  client.launch_with(kernel, ::cl::NDRange(operand_passes::operands_global(k, lda, n, ldb)),
                     ::cl::NDRange(operand_passes::operand_items), int_argument(m, "M"),
                     int_argument(k, "K"), int_argument(lda, "At's row length"),
                     int_argument(n, "N"), int_argument(ldb, "B's padded row length"), a, at, b,
                     b_rows);
  return {at, b_rows};
}

}  // namespace tunekit::ops::detail
