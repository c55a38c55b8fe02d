#include "transposed_operand.hpp"

#include <cstdint>
#include <string>

#include "bench_fit.hpp"
#include "scratch.hpp"
#include "sizes.hpp"

namespace tunekit::ops::detail {

namespace {

// One of the H200's best shapes for the tiled kernel (kernels/README.md: 64 x 64 tiles, 16 rows
// of work-items, float4 vectors).
constexpr std::size_t tile = 64, rows_of_items = 16, vector_width = 4;

// matmul_staged_pad_b's work-groups: 256 floats of a row.
constexpr std::size_t pad_group = 256;

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
    return cl::KernelSpec::embedded(
        "transpose.cl",
        "-DTILE=" + std::to_string(tile) + " -DTILE_M=" + std::to_string(tile) + " -DROWS=" +
            std::to_string(rows_of_items) + " -DPAD=1 -DVW=" + std::to_string(vector_width) +
            " -DOUT_LD=1" + (round ? " -DROUND_TF32=1" : ""),
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
  client.launch_with(kernel,
                     ::cl::NDRange(ceil_div(cols, tile) * (tile / vector_width),
                                   ceil_div(rows, tile) * rows_of_items),
                     ::cl::NDRange(tile / vector_width, rows_of_items), int_argument(rows, "rows"),
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
  client.launch_with(kernel, ::cl::NDRange(round_up(ld, pad_group), k), ::cl::NDRange(pad_group, 1),
                     int_argument(k, "rows"), int_argument(n, "columns"),
                     int_argument(ld, "the padded row length"), b, padded);
  return padded;
}

}  // namespace tunekit::ops::detail
