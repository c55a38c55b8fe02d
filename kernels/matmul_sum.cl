// Adds the partial products of a GEMM split along K (matmul_staged.cl on slices; matmul_reg.cl and matmul_skinny.cl add theirs in the product's launch, gemm_output.cl): C = alpha * sum_z W[z] + beta * C, one element of C per work-item, on the rows and columns the product's launch covered.
/*
  Macros: PRECISION 32|16|116 (storage of C; W, the slices' partial products, is float, and the
    sum is rounded to C's type once).
  Kernel: matmul_split_sum(MN, N, NI, splits, alpha, beta, W, C): C is M x N, row-major
    (MN = M * N); W holds `splits` arrays of MN elements (splits * MN < 2^31). The sum covers
    C's first MI rows' first NI columns (MI the global size along dimension 1), where a product
    peeled to its whole tiles wrote W (the rest is matmul_edges.cl's); beta == 0 does not read C.
  NDRange: local (any, 1); global (NI rounded up to the local size, MI) (the host's:
    src/ops/operand_passes.hpp, sum_range).
*/
#include "storage.cl"  // real, LD, ST by PRECISION

__kernel void matmul_split_sum(const int MN, const int N, const int NI, const int splits,
                               const float alpha, const float beta,
                               __global const float* restrict W, __global real* C) {
  const int col = get_global_id(0), row = get_global_id(1);
  if (col >= NI) return;
  const int i = row * N + col;
  float sum = 0.0f;
  for (int z = 0; z < splits; ++z) sum += W[z * MN + i];
  const float c = alpha * sum;
  ST(C, i, beta != 0.0f ? mad(beta, LD(C, i), c) : c);
}
