// An operand rewritten before a product (src/ops/matmul.cpp): the staged families take A
// transposed (each row of At is a row of its local tile, copied in 16-byte chunks) and rows of At
// and B padded to whole chunks, both in one launch (matmul_operands.cl); the wgmma_tf32 family B
// transposed and rounded (tf32_operands.hpp), by transpose.cl's tiled kernel in one shape, owned
// here, with its output's row length.
#pragma once

#include <cstddef>

#include "tunekit/cl/client.hpp"
#include "tunekit/cl/kernel_spec.hpp"

namespace tunekit::ops::detail {

/// transpose.cl's tiled kernel in the pass's shape, taking the output's row length, each element
/// rounded to TF32 on its way (tf32.cl).
const cl::KernelSpec& rounding_transpose_spec();

/// Enqueues `spec` (rounding_transpose_spec) on `in` (rows x cols, f32) into `out` (cols rows of
/// `out_ld` >= rows floats; the columns past `rows` are not written).
void enqueue_transpose(cl::Client& client, const cl::KernelSpec& spec, const ::cl::Buffer& in,
                       std::size_t rows, std::size_t cols, const ::cl::Buffer& out,
                       std::size_t out_ld);

/// matmul_operands.cl's program (one for every staged configuration).
const cl::KernelSpec& staged_operands_spec();

/// The staged kernel's operands with A_DIRECT 0.
struct StagedOperands {
  ::cl::Buffer at;  // A transposed: k rows of lda floats, zeros past m
  // B itself where ldb == n, else B's k rows padded to ldb floats, zeros past n.
  ::cl::Buffer b_rows;
};

/// A (m x k, f32) transposed into rows of `lda` >= m floats and, where `ldb` > n, B (k x n, f32)
/// copied into rows of `ldb` floats, in one launch (matmul_staged_operands), into buffers kept per
/// client and thread; lda and ldb multiples of 4, k * lda and k * ldb below 2^31.
StagedOperands staged_operands(cl::Client& client, const ::cl::Buffer& a, const ::cl::Buffer& b,
                               std::size_t m, std::size_t k, std::size_t n, std::size_t lda,
                               std::size_t ldb);

}  // namespace tunekit::ops::detail
