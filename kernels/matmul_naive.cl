// Naive GEMM: one work-item computes one element of C = alpha*A*B + beta*C (row-major), reading A and B from global memory.
/*
  Macros (default):
    PRECISION  32 | 16 | 116   storage type of A, B, C: float, or half (read with vload_half, written with
                         vstore_half; works without cl_khr_fp16). Arithmetic is always float.
  Kernel: matmul_naive(M, N, K, alpha, beta, A, B, C)
    A is M x K, B is K x N, C is M x N, all row-major, densely packed (leading dims K, N, N).
    beta == 0 does not read C (C may hold garbage / NaN).
    Element offsets are 64-bit: any M, N, K below 2^31, whatever M*K, K*N, M*N.
  NDRange: any local size (lx, ly) the device accepts (e.g. 16 x 16, or 64 x 1 on CPUs);
    global = (roundup(N, lx), roundup(M, ly)). Work-items outside C do nothing.
*/
#ifndef PRECISION
#define PRECISION 32
#endif
#include "storage.cl"  // real, LD, ST by PRECISION

__kernel void matmul_naive(const int M, const int N, const int K, const float alpha, const float beta,
                           __global const real* restrict A, __global const real* restrict B,
                           __global real* C) {
  const int col = get_global_id(0);
  const int row = get_global_id(1);
  if (row >= M || col >= N) return;
  // 64-bit offsets: A, B or C may hold more than 2^31 elements (each dimension is below 2^31).
  const size_t arow = (size_t)row * K;
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) acc = mad(LD(A, arow + k), LD(B, (size_t)k * N + col), acc);
  const size_t idx = (size_t)row * N + col;
  const float c = alpha * acc;
  ST(C, idx, beta != 0.0f ? mad(beta, LD(C, idx), c) : c);
}
