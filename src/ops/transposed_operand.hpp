// An operand rewritten before a product (src/ops/matmul.cpp): the staged families take A
// transposed (each row of At is a row of its local tile, copied in 16-byte chunks) and rows of At
// and B padded to whole chunks; the wgmma_tf32 family B transposed and rounded
// (tf32_operands.hpp). One transpose does both: transpose.cl's tiled kernel in one shape, owned
// here, with its output's row length.
#pragma once

#include <cstddef>

#include "tunekit/cl/client.hpp"
#include "tunekit/cl/kernel_spec.hpp"

namespace tunekit::ops::detail {

/// transpose.cl's tiled kernel in the shape these passes use, taking the output's row length;
/// with round_tf32, each element is also rounded to TF32 on its way (tf32.cl).
const cl::KernelSpec& transpose_spec(bool round_tf32);

/// Enqueues `spec` (a transpose_spec) on `in` (rows x cols, f32) into `out` (cols rows of
/// `out_ld` >= rows floats; the columns past `rows` are not written).
void enqueue_transpose(cl::Client& client, const cl::KernelSpec& spec, const ::cl::Buffer& in,
                       std::size_t rows, std::size_t cols, const ::cl::Buffer& out,
                       std::size_t out_ld);

/// A (m x k, f32) transposed into a buffer kept per client and thread: k rows of `ld` >= m
/// floats; k * ld below 2^31.
::cl::Buffer transposed_a(cl::Client& client, const ::cl::Buffer& a, std::size_t m, std::size_t k,
                          std::size_t ld);

/// B (k x n, f32) with its rows padded to `ld` > n floats (zeros past n), in a buffer kept per
/// client and thread, by `pad` (matmul_staged.cl's matmul_staged_pad_b, in the program of the
/// staged configuration that will read it); k * ld below 2^31.
::cl::Buffer padded_b(cl::Client& client, const cl::KernelSpec& pad, const ::cl::Buffer& b,
                      std::size_t k, std::size_t n, std::size_t ld);

}  // namespace tunekit::ops::detail
