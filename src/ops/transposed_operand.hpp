// An operand written transposed before a product (src/ops/matmul.cpp): the staged family takes A
// transposed (each row of At is a row of its local tile, copied in 16-byte chunks), the
// wgmma_tf32 family B transposed and rounded (tf32_operands.hpp). One kernel does both:
// transpose.cl's tiled kernel in one shape, owned here.
#pragma once

#include <cstddef>

#include "tunekit/cl/client.hpp"
#include "tunekit/cl/kernel_spec.hpp"

namespace tunekit::ops::detail {

/// transpose.cl's tiled kernel in the shape these passes use; with round_tf32, each element is
/// also rounded to TF32 on its way (tf32.cl).
const cl::KernelSpec& transpose_spec(bool round_tf32);

/// Enqueues `spec` (a transpose_spec) on `in` (rows x cols, f32) into `out` (cols x rows).
void enqueue_transpose(cl::Client& client, const cl::KernelSpec& spec, const ::cl::Buffer& in,
                       std::size_t rows, std::size_t cols, const ::cl::Buffer& out);

/// A (m x k, f32) transposed into a buffer kept per client and thread (k x m); m * k below 2^31.
::cl::Buffer transposed_a(cl::Client& client, const ::cl::Buffer& a, std::size_t m, std::size_t k);

}  // namespace tunekit::ops::detail
