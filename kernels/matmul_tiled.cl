// Local-memory tiled GEMM: a TS x TS work-group stages TS x TS tiles of A and B in local memory and each work-item computes one element of C = alpha*A*B + beta*C (row-major).
/*
  Macros (default):
    PRECISION  32 | 16 | 116   storage type of A, B, C (float, or half via vload_half/vstore_half); math in float.
    TS         16        tile edge; work-group is TS x TS work-items (TS*TS <= device max work-group size).
  Local memory: 2 * TS * (TS + 1) * 4 bytes (tiles are stored as float, +1 column of padding).
  Kernel: matmul_tiled(M, N, K, alpha, beta, A, B, C)   (same arguments as matmul_naive)
  NDRange: local = (TS, TS); global = (roundup(N, TS), roundup(M, TS)).
  Any M, N, K >= 1: tile loads outside A/B are zero-filled, stores outside C are skipped.
  Element offsets are 64-bit: any M, N, K below 2^31, whatever M*K, K*N, M*N.
*/
#ifndef PRECISION
#define PRECISION 32
#endif
#ifndef TS
#define TS 16
#endif
#include "storage.cl"  // real, LD, ST by PRECISION

__kernel __attribute__((reqd_work_group_size(TS, TS, 1)))
void matmul_tiled(const int M, const int N, const int K, const float alpha, const float beta,
                  __global const real* restrict A, __global const real* restrict B, __global real* C) {
  __local float As[TS][TS + 1];
  __local float Bs[TS][TS + 1];
  const int tx = get_local_id(0), ty = get_local_id(1);
  const int col = get_group_id(0) * TS + tx;
  const int row = get_group_id(1) * TS + ty;
  float acc = 0.0f;
  for (int k0 = 0; k0 < K; k0 += TS) {
    const int ka = k0 + tx, kb = k0 + ty;
    As[ty][tx] = (row < M && ka < K) ? LD(A, (size_t)row * K + ka) : 0.0f;
    Bs[ty][tx] = (kb < K && col < N) ? LD(B, (size_t)kb * N + col) : 0.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
    for (int k = 0; k < TS; ++k) acc = mad(As[ty][k], Bs[k][tx], acc);
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (row < M && col < N) {
    const size_t idx = (size_t)row * N + col;
    const float c = alpha * acc;
    ST(C, idx, beta != 0.0f ? mad(beta, LD(C, idx), c) : c);
  }
}
