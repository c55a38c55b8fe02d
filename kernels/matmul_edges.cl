// The outputs a GEMM's whole tiles leave out: C = alpha * A * B + beta * C on rows MI .. M-1 (every
// column) and on columns NI .. N-1 of rows 0 .. MI-1, where a product kernel was launched on the
// MI x NI of whole tiles only (a last row or column of tiles holding a few rows would cost a
// nearly empty wave of work-groups: src/ops/gemm_rules.hpp, peeled).
/*
  Macros: PRECISION 32|16|116 (storage of A, B and C, storage.cl; sums in float, rounded once);
    EDGE_LANES (32): work-items along K per output (local dimension 0); EDGE_OUTPUTS (2): outputs
    per work-group (local dimension 1). The host's: src/ops/operand_passes.hpp, edges_options.
  Kernel: matmul_edges(M, N, K, MI, NI, alpha, beta, A, B, C): A M x K, B K x N, C M x N,
    row-major, dense (M*K, K*N, M*N < 2^31); 0 <= MI <= M, 0 <= NI <= N. Output e (0 <= e < E,
    E = (M - MI) * N + MI * (N - NI)) is row MI + e / N, column e % N for e < (M - MI) * N, and
    for the rest f = e - (M - MI) * N, row f / (N - NI), column NI + f % (N - NI). beta == 0 does
    not read C. Nothing else of C is touched.
  NDRange: local (EDGE_LANES, EDGE_OUTPUTS); global (EDGE_LANES, E rounded up to EDGE_OUTPUTS)
    (operand_passes.hpp, edges_range).
  Each output's lanes take every EDGE_LANES-th term of K (A's row read in consecutive floats, B's
  column shared by the work-group's neighbouring outputs), and the first lane adds their sums in
  lane order.
*/
#include "storage.cl"  // real, LD, ST by PRECISION

#ifndef EDGE_LANES
#define EDGE_LANES 32
#endif
#ifndef EDGE_OUTPUTS
#define EDGE_OUTPUTS 2
#endif

__kernel __attribute__((reqd_work_group_size(EDGE_LANES, EDGE_OUTPUTS, 1)))
void matmul_edges(const int M, const int N, const int K, const int MI, const int NI,
                  const float alpha, const float beta, __global const real* restrict A,
                  __global const real* restrict B, __global real* C) {
  __local float partial[EDGE_OUTPUTS][EDGE_LANES + 1];
  const int lane = get_local_id(0), slot = get_local_id(1);
  const int e = get_global_id(1);
  const int row_outputs = (M - MI) * N, rest = N - NI;
  const bool inside = e < row_outputs + MI * rest;
  int row = 0, col = 0;
  if (e < row_outputs) {
    row = MI + e / N;
    col = e % N;
  } else if (inside) {
    row = (e - row_outputs) / rest;
    col = NI + (e - row_outputs) % rest;
  }
  float sum = 0.0f;
  if (inside) {
    for (int k = lane; k < K; k += EDGE_LANES) sum += LD(A, row * K + k) * LD(B, k * N + col);
  }
  partial[slot][lane] = sum;
  barrier(CLK_LOCAL_MEM_FENCE);  // every work-item reaches it: no return above
  if (lane != 0 || !inside) return;
  float total = 0.0f;
  for (int l = 0; l < EDGE_LANES; ++l) total += partial[slot][l];
  const int idx = row * N + col;
  const float c = alpha * total;
  ST(C, idx, beta != 0.0f ? mad(beta, LD(C, idx), c) : c);
}
