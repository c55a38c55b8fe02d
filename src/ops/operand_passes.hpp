// The launch shapes of the passes around a product: those that rewrite an operand before it
// (transposed_operand.cpp): transpose.cl's tiled kernel in one shape (the wgmma_tf32 family's B),
// and matmul_operands.cl's one launch for the staged family's At and padded B; and matmul_sum.cl,
// which adds the staged split's slices after it, and matmul_edges.cl, which computes the outputs a
// product's whole tiles leave out (gemm_rules.hpp, peeled). Header-only and free of the library's
// types, so that tools/kernel_lab times the op's very passes.
#pragma once

#include <array>
#include <cstddef>
#include <string>

#include "sizes.hpp"

namespace tunekit::ops::operand_passes {

/// One of the H200's best shapes for the tiled transpose (kernels/README.md): 64 x 64 tiles, 16
/// rows of work-items, float4 vectors.
inline constexpr std::size_t tile = 64, rows_of_items = 16, vector_width = 4;

/// matmul_operands.cl's tiles (square, this many floats on a side) and its work-groups' size:
/// one work-group per tile.
inline constexpr std::size_t operand_tile = 64, operand_items = 256;

/// transpose.cl's macros for the pass: the output's row length an argument (OUT_LD), each
/// element rounded to TF32 (tf32.cl).
inline std::string rounding_transpose_options() {
  return "-DTILE=" + std::to_string(tile) + " -DTILE_M=" + std::to_string(tile) +
         " -DROWS=" + std::to_string(rows_of_items) +
         " -DPAD=1 -DVW=" + std::to_string(vector_width) + " -DOUT_LD=1 -DROUND_TF32=1";
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

/// matmul_operands.cl's macros.
inline std::string operands_options() {
  return "-DOPERAND_TILE=" + std::to_string(operand_tile) +
         " -DOPERAND_ITEMS=" + std::to_string(operand_items);
}

/// matmul_staged_operands's global size (one dimension; local operand_items): At's tiles (k rows
/// of lda floats), then, where B's rows are padded (ldb > n), those of B's k rows of ldb floats.
constexpr std::size_t operands_global(std::size_t k, std::size_t lda, std::size_t n,
                                      std::size_t ldb) {
  const std::size_t a_tiles = ceil_div(lda, operand_tile) * ceil_div(k, operand_tile);
  const std::size_t b_tiles = ldb > n ? ceil_div(k, operand_tile) * ceil_div(ldb, operand_tile) : 0;
  return (a_tiles + b_tiles) * operand_items;
}

/// matmul_sum.cl: work-items per work-group (along a row of C), one element of C each.
inline constexpr std::size_t sum_items = 64;

/// matmul_sum.cl's macros for C stored as `precision` (its PRECISION: 32, 16 or 116).
inline std::string sum_options(int precision) { return "-DPRECISION=" + std::to_string(precision); }

/// matmul_split_sum's launch on the first mi rows' first ni columns of C.
constexpr Range2 sum_range(std::size_t mi, std::size_t ni) {
  return {{round_up(ni, sum_items), mi}, {sum_items, 1}};
}

/// matmul_edges.cl: work-items along K per output (EDGE_LANES), outputs per work-group
/// (EDGE_OUTPUTS): 64 work-items, within any GPU's and CPU's work-group limit (256 would fail on
/// a device whose work-groups are smaller, and the blocked winner with it).
inline constexpr std::size_t edge_lanes = 32, edge_outputs = 2;

/// matmul_edges.cl's macros for A, B and C stored as `precision` (its PRECISION: 32, 16 or 116).
inline std::string edges_options(int precision) {
  return "-DPRECISION=" + std::to_string(precision) +
         " -DEDGE_LANES=" + std::to_string(edge_lanes) +
         " -DEDGE_OUTPUTS=" + std::to_string(edge_outputs);
}

/// The outputs of an m x n C outside its first mi rows' first ni columns: matmul_edges's.
constexpr std::size_t edge_outputs_of(std::size_t m, std::size_t n, std::size_t mi,
                                      std::size_t ni) {
  return (m - mi) * n + mi * (n - ni);
}

/// matmul_edges's launch for `outputs` outputs.
constexpr Range2 edges_range(std::size_t outputs) {
  return {{edge_lanes, round_up(outputs, edge_outputs)}, {edge_lanes, edge_outputs}};
}

}  // namespace tunekit::ops::operand_passes
