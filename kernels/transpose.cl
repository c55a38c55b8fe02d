// Out-of-place f32 transpose out = in^T of a row-major M x N matrix: naive, tiled through local memory with padding against bank conflicts, and blocked in registers (for CPUs).
/*
  Macros (default)   meaning
    TILE 32          tile edge (tiled kernel)
    ROWS 8           work-items along dim 1 in the tiled kernel; each copies TILE/ROWS rows (TILE % ROWS == 0)
    PAD  1           extra floats per local-memory tile row (1 avoids bank conflicts on the column reads)
    BLK  4           block edge of the blocked kernel: 4 or 8
  Kernels (in: M x N row-major, out: N x M row-major; any M, N >= 1):
    transpose_naive(M, N, in, out)  one element per work-item, coalesced reads, strided writes.
        NDRange: any local (lx, ly); global = (roundup(N, lx), roundup(M, ly)).
    transpose_tiled(M, N, in, out)  a TILE x TILE tile is read coalesced into local memory and
        written coalesced from it. Local memory TILE*(TILE+PAD)*4 bytes.
        NDRange: local = (TILE, ROWS); global = (ceil(N/TILE)*TILE, ceil(M/TILE)*ROWS).
    transpose_blocked(M, N, in, out)  each work-item moves one BLK x BLK block through registers:
        BLK vector loads of rows, BLK vector stores of columns; no local memory and no barrier
        (which a CPU device runs as loops over the work-group), and every cache line it touches
        is used BLK times. Partial blocks on the edges element by element.
        NDRange: any local (lx, ly); global = (roundup(ceil(N/BLK), lx), roundup(ceil(M/BLK), ly)).
*/
#ifndef TILE
#define TILE 32
#endif
#ifndef ROWS
#define ROWS 8
#endif
#ifndef PAD
#define PAD 1
#endif
#ifndef BLK
#define BLK 4
#endif
#if TILE % ROWS != 0
#error "TILE must be a multiple of ROWS"
#endif
#if BLK != 4 && BLK != 8
#error "BLK must be 4 or 8"
#endif

__kernel void transpose_naive(const int M, const int N, __global const float* restrict in, __global float* restrict out) {
  const int c = get_global_id(0), r = get_global_id(1);
  if (r < M && c < N) out[(size_t)c * M + r] = in[(size_t)r * N + c];
}

__kernel __attribute__((reqd_work_group_size(TILE, ROWS, 1)))
void transpose_tiled(const int M, const int N, __global const float* restrict in, __global float* restrict out) {
  __local float t[TILE][TILE + PAD];
  const int tx = get_local_id(0), ty = get_local_id(1);
  const int r0 = get_group_id(1) * TILE, c0 = get_group_id(0) * TILE;
#pragma unroll
  for (int y = ty; y < TILE; y += ROWS) {
    const int r = r0 + y, c = c0 + tx;
    if (r < M && c < N) t[y][tx] = in[(size_t)r * N + c];
  }
  barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
  for (int y = ty; y < TILE; y += ROWS) {
    const int c = c0 + y, r = r0 + tx;  // out row c, out column r
    if (c < N && r < M) out[(size_t)c * M + r] = t[tx][y];
  }
}

// Row i of the block as a vector, and column k of the block (component k of every row).
#define ROW(i) a##i = VLOAD(0, in + (size_t)(r0 + i) * N + c0)
#if BLK == 4
#define VLOAD vload4
#define VSTORE vstore4
#define COLUMN(k) (float4)(a0.s##k, a1.s##k, a2.s##k, a3.s##k)
#else
#define VLOAD vload8
#define VSTORE vstore8
#define COLUMN(k) (float8)(a0.s##k, a1.s##k, a2.s##k, a3.s##k, a4.s##k, a5.s##k, a6.s##k, a7.s##k)
#endif
#define STORE(k) VSTORE(COLUMN(k), 0, out + (size_t)(c0 + k) * M + r0)

__kernel void transpose_blocked(const int M, const int N, __global const float* restrict in, __global float* restrict out) {
  const int r0 = get_global_id(1) * BLK, c0 = get_global_id(0) * BLK;
  if (r0 >= M || c0 >= N) return;
  if (r0 + BLK <= M && c0 + BLK <= N) {
#if BLK == 4
    const float4 ROW(0), ROW(1), ROW(2), ROW(3);
    STORE(0); STORE(1); STORE(2); STORE(3);
#else
    const float8 ROW(0), ROW(1), ROW(2), ROW(3), ROW(4), ROW(5), ROW(6), ROW(7);
    STORE(0); STORE(1); STORE(2); STORE(3); STORE(4); STORE(5); STORE(6); STORE(7);
#endif
  } else {
    const int rows = min(BLK, M - r0), cols = min(BLK, N - c0);
    for (int i = 0; i < rows; ++i)
      for (int j = 0; j < cols; ++j) out[(size_t)(c0 + j) * M + r0 + i] = in[(size_t)(r0 + i) * N + c0 + j];
  }
}
