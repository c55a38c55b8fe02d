// Out-of-place f32 transpose out = in^T of a row-major M x N matrix, naive and tiled through local memory with padding against bank conflicts.
/*
  Macros (default)   meaning
    TILE 32          tile edge (tiled kernel)
    ROWS 8           work-items along dim 1 in the tiled kernel; each copies TILE/ROWS rows (TILE % ROWS == 0)
    PAD  1           extra floats per local-memory tile row (1 avoids bank conflicts on the column reads)
  Kernels (in: M x N row-major, out: N x M row-major; any M, N >= 1):
    transpose_naive(M, N, in, out)  one element per work-item, coalesced reads, strided writes.
        NDRange: any local (lx, ly); global = (roundup(N, lx), roundup(M, ly)).
    transpose_tiled(M, N, in, out)  a TILE x TILE tile is read coalesced into local memory and
        written coalesced from it. Local memory TILE*(TILE+PAD)*4 bytes.
        NDRange: local = (TILE, ROWS); global = (ceil(N/TILE)*TILE, ceil(M/TILE)*ROWS).
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
#if TILE % ROWS != 0
#error "TILE must be a multiple of ROWS"
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
