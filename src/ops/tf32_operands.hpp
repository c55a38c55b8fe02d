// The wgmma_tf32 family's operands (src/ops/matmul.cpp): wgmma's .tf32 form reads both operands
// K-major and truncated (an f32 operand's low 13 bits ignored), where TF32 means rounding to
// nearest. So before each product A is written rounded (kernels/tf32.cl) and B transposed and
// rounded (kernels/transpose.cl with ROUND_TF32), into buffers kept per client and thread.
#pragma once

#include <cstddef>

#include "tunekit/cl/client.hpp"
#include "tunekit/cl/kernel_spec.hpp"

namespace tunekit::ops::detail {

struct Tf32Operands {
  ::cl::Buffer a;   // m x k, each element tf32_rounded
  ::cl::Buffer bt;  // n x k: B transposed, each element tf32_rounded
};

/// Enqueues the two passes for A (m x k) and B (k x n), f32, k and n multiples of 4 (whole
/// float4 rows: the family's alignment), m * k and k * n below 2^31.
Tf32Operands tf32_operands(cl::Client& client, const ::cl::Buffer& a, const ::cl::Buffer& b,
                           std::size_t m, std::size_t n, std::size_t k);

/// The programs tf32_operands runs (a candidate builds, keeps and fingerprints them).
const cl::KernelSpec& tf32_round_spec();
const cl::KernelSpec& tf32_transpose_spec();

}  // namespace tunekit::ops::detail
