// Adds the partial products of a GEMM split along K (matmul_staged.cl on slices; matmul_reg.cl and matmul_skinny.cl add theirs in the product's launch, gemm_output.cl): C = alpha * sum_z W[z] + beta * C, one element of C per work-item.
/*
  Macros: PRECISION 32|16|116 (storage of C; W, the slices' partial products, is float, and the
    sum is rounded to C's type once).
  Kernel: matmul_split_sum(MN, splits, alpha, beta, W, C): W holds `splits` arrays of MN elements
    (splits * MN < 2^31), C holds MN; beta == 0 does not read C.
  NDRange: any local size; global >= MN (the host's: src/ops/operand_passes.hpp, sum_global).
*/
#include "storage.cl"  // real, LD, ST by PRECISION

__kernel void matmul_split_sum(const int MN, const int splits, const float alpha, const float beta,
                               __global const float* restrict W, __global real* C) {
  const int i = get_global_id(0);
  if (i >= MN) return;
  float sum = 0.0f;
  for (int z = 0; z < splits; ++z) sum += W[z * MN + i];
  const float c = alpha * sum;
  ST(C, i, beta != 0.0f ? mad(beta, LD(C, i), c) : c);
}
