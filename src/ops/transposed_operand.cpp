#include "transposed_operand.hpp"

#include <cstdint>
#include <string>

#include "bench_fit.hpp"
#include "operand_passes.hpp"
#include "scratch.hpp"

namespace tunekit::ops::detail {

namespace {

Scratch<1>& transposed_a_scratch() {
  static Scratch<1> scratch;
  return scratch;
}

Scratch<1>& padded_b_scratch() {
  static Scratch<1> scratch;
  return scratch;
}

}  // namespace

const cl::KernelSpec& transpose_spec(bool round_tf32) {
  const auto make = [](bool round) {
    return cl::KernelSpec::embedded("transpose.cl", operand_passes::transpose_options(round),
                                    "transpose_tiled");
  };
  static const cl::KernelSpec plain = make(false);
  static const cl::KernelSpec rounded = make(true);
  return round_tf32 ? rounded : plain;
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

::cl::Buffer transposed_a(cl::Client& client, const ::cl::Buffer& a, std::size_t m, std::size_t k,
                          std::size_t ld) {
  int_argument(std::uint64_t{k} * ld, "K times At's row length");
  const auto [at] = transposed_a_scratch().buffers(client, k * ld * sizeof(float));
  enqueue_transpose(client, transpose_spec(false), a, m, k, at, ld);
  return at;
}

::cl::Buffer padded_b(cl::Client& client, const cl::KernelSpec& pad, const ::cl::Buffer& b,
                      std::size_t k, std::size_t n, std::size_t ld) {
  int_argument(std::uint64_t{k} * ld, "K times B's padded row length");
  const auto [padded] = padded_b_scratch().buffers(client, k * ld * sizeof(float));
  ::cl::Kernel kernel = client.kernel(pad);
  const auto range = operand_passes::pad_range(k, ld);
  client.launch_with(kernel, ::cl::NDRange(range.global[0], range.global[1]),
                     ::cl::NDRange(range.local[0], range.local[1]), int_argument(k, "rows"),
                     int_argument(n, "columns"), int_argument(ld, "the padded row length"), b,
                     padded);
  return padded;
}

}  // namespace tunekit::ops::detail
