// The launch shapes of the passes that rewrite an operand before a product
// (transposed_operand.cpp): transpose.cl's tiled kernel in one shape, and matmul_staged.cl's
// matmul_staged_pad_b. Header-only and free of the library's types, so that tools/kernel_lab
// times the op's very passes.
#pragma once

#include <array>
#include <cstddef>
#include <string>

#include "sizes.hpp"

namespace tunekit::ops::operand_passes {

/// One of the H200's best shapes for the tiled transpose (kernels/README.md): 64 x 64 tiles, 16
/// rows of work-items, float4 vectors.
inline constexpr std::size_t tile = 64, rows_of_items = 16, vector_width = 4;

/// matmul_staged_pad_b's work-groups: this many floats of a row each.
inline constexpr std::size_t pad_group = 256;

/// transpose.cl's macros for the pass: the output's row length an argument (OUT_LD); with
/// round_tf32 each element also rounded to TF32 (tf32.cl).
inline std::string transpose_options(bool round_tf32) {
  return "-DTILE=" + std::to_string(tile) + " -DTILE_M=" + std::to_string(tile) +
         " -DROWS=" + std::to_string(rows_of_items) +
         " -DPAD=1 -DVW=" + std::to_string(vector_width) + " -DOUT_LD=1" +
         (round_tf32 ? " -DROUND_TF32=1" : "");
}

/// A launch's global and local sizes in two dimensions.
struct Range2 {
  std::array<std::size_t, 2> global, local;
};

/// The transpose of a rows x cols matrix.
constexpr Range2 transpose_range(std::size_t rows, std::size_t cols) {
  return {{ceil_div(cols, tile) * (tile / vector_width), ceil_div(rows, tile) * rows_of_items},
          {tile / vector_width, rows_of_items}};
}

/// The copy of k rows into rows of `ld` floats.
constexpr Range2 pad_range(std::size_t k, std::size_t ld) {
  return {{round_up(ld, pad_group), k}, {pad_group, 1}};
}

}  // namespace tunekit::ops::operand_passes
