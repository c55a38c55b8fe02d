// Lab-only (tools/kernel_lab, not shipped): an f32 GEMM in the threadblock / warp / thread
// hierarchy of CUTLASS's SIMT kernels, to measure against matmul_reg.cl (issue 32) before any
// of it becomes a family. C = alpha*A*B + beta*C, all row-major; A is M x K, B is K x N.
//
// What differs from matmul_reg.cl, from the H200's machine code of its 4096 winner
// (docs/benchmarks.md, "matmul (fp32) on the NVIDIA H200"):
// - the 32 lanes of a warp are 4 along M by 8 along N, each with GM x GN blocks of 4 x 4 outputs
//   (GM blocks 16 rows apart, GN blocks 32 columns apart): per k a lane reads GM + GN vectors of
//   4 floats, and each read of the warp is one wavefront (A: 4 addresses, B: 8 consecutive);
// - a work-group whose tiles lie wholly inside the matrices (and K, N multiples of BK and 4)
//   runs a K loop with no edge tests and vector loads only; the others run the same loop with
//   element loads tested against the edges. The choice is made once, outside the loop;
// - the epilogue writes rows of 4 floats.
// Parameters: GM, GN (4 x 4 blocks per lane along M and N), WARPS_M, WARPS_N (warps of the
// work-group along M and N), BK (depth of a K tile, a multiple of 4), PADA (floats of padding
// per row of the transposed A tile). Local: (WARPS_M * WARPS_N * 32); global:
// (ceil(N / BN) * local, ceil(M / BM)). Two local buffers, the next tile prefetched into
// registers while the current one is used.
#ifndef GM
#define GM 2
#endif
#ifndef GN
#define GN 2
#endif
#ifndef WARPS_M
#define WARPS_M 4
#endif
#ifndef WARPS_N
#define WARPS_N 2
#endif
#ifndef BK
#define BK 8
#endif
#ifndef PADA
#define PADA 4
#endif

#define LANES_M 4
#define LANES_N 8
#define TM (4 * GM)              // outputs of a lane along M
#define TN (4 * GN)              // ... along N
#define WTM (LANES_M * TM)       // rows of a warp's tile
#define WTN (LANES_N * TN)       // columns of a warp's tile
#define BM (WARPS_M * WTM)       // rows of the work-group's tile
#define BN (WARPS_N * WTN)       // columns of the work-group's tile
#define NT (WARPS_M * WARPS_N * 32)
#define KQ (BK / 4)              // vectors of 4 along K in a row of the A tile
#define NQ (BN / 4)              // vectors of 4 in a row of the B tile
#define LA (BM * KQ / NT)        // A vectors each work-item loads per tile
#define LB (BK * NQ / NT)        // B vectors each work-item loads per tile

#if BK % 4 != 0 || (BM * KQ) % NT != 0 || (BK * NQ) % NT != 0 || LA < 1 || LB < 1
#error "BK a multiple of 4, and the A and B tiles whole vectors of 4 for every work-item"
#endif
#if PADA % 4 != 0
#error "PADA a multiple of 4 (the A tile is read in vectors of 4)"
#endif

// The A tile transposed (k, then m), the B tile as is, two of each.
#define AS(buf, k, m) as[((buf) * BK + (k)) * (BM + PADA) + (m)]
#define BS(buf, k, n) bs[((buf) * BK + (k)) * BN + (n)]

// Four elements of a rows x cols row-major matrix from (r, c) along the row, each tested against
// the edges: zero outside.
static inline float4 load4_inside(__global const float* p, const int r, const int c, const int rows,
                                  const int cols) {
  const bool row = r < rows;
  const size_t at = (size_t)r * cols + c;
  return (float4)(row && c < cols ? p[at] : 0.0f, row && c + 1 < cols ? p[at + 1] : 0.0f,
                  row && c + 2 < cols ? p[at + 2] : 0.0f, row && c + 3 < cols ? p[at + 3] : 0.0f);
}

// The next tile's vectors into registers: vector loads only, or element loads tested against
// the edges (SAFE), zero outside.
#define LOAD_TILE(SAFE, k0)                                                                     \
  do {                                                                                          \
    _Pragma("unroll") for (int l = 0; l < LA; ++l) {                                            \
      const int v = lid + l * NT, m = bm + v / KQ, k = (k0) + (v % KQ) * 4;                     \
      ra[l] = (SAFE) ? load4_inside(A, m, k, M, K) : vload4(0, A + (size_t)m * K + k);         \
    }                                                                                           \
    _Pragma("unroll") for (int l = 0; l < LB; ++l) {                                            \
      const int v = lid + l * NT, k = (k0) + v / NQ, n = bn + (v % NQ) * 4;                     \
      rb[l] = (SAFE) ? load4_inside(B, k, n, K, N) : vload4(0, B + (size_t)k * N + n);         \
    }                                                                                           \
  } while (0)

// Registers into local buffer `buf`: A transposed element by element, B in vectors.
#define STORE_TILE(buf)                                                                         \
  do {                                                                                          \
    _Pragma("unroll") for (int l = 0; l < LA; ++l) {                                            \
      const int v = lid + l * NT, m = v / KQ, k = (v % KQ) * 4;                                 \
      AS(buf, k + 0, m) = ra[l].s0;                                                             \
      AS(buf, k + 1, m) = ra[l].s1;                                                             \
      AS(buf, k + 2, m) = ra[l].s2;                                                             \
      AS(buf, k + 3, m) = ra[l].s3;                                                             \
    }                                                                                           \
    _Pragma("unroll") for (int l = 0; l < LB; ++l) {                                            \
      const int v = lid + l * NT;                                                               \
      vstore4(rb[l], 0, &BS(buf, v / NQ, (v % NQ) * 4));                                        \
    }                                                                                           \
  } while (0)

// The K loop over tiles, its loads of one kind (SAFE or not) throughout.
#define K_LOOP(SAFE)                                                                            \
  do {                                                                                          \
    LOAD_TILE(SAFE, 0);                                                                         \
    STORE_TILE(0);                                                                              \
    barrier(CLK_LOCAL_MEM_FENCE);                                                               \
    for (int t = 0; t < tiles; ++t) {                                                           \
      const int cur = t & 1, more = t + 1 < tiles;                                              \
      if (more) LOAD_TILE(SAFE, (t + 1) * BK);                                                  \
      _Pragma("unroll") for (int k = 0; k < BK; ++k) {                                          \
        float4 a[GM], b[GN];                                                                    \
        _Pragma("unroll") for (int g = 0; g < GM; ++g) a[g] = vload4(0, &AS(cur, k, row0 + g * 16)); \
        _Pragma("unroll") for (int h = 0; h < GN; ++h) b[h] = vload4(0, &BS(cur, k, col0 + h * 32)); \
        _Pragma("unroll") for (int g = 0; g < GM; ++g)                                          \
          _Pragma("unroll") for (int h = 0; h < GN; ++h) {                                      \
            acc[g][h][0] = mad((float4)(a[g].s0), b[h], acc[g][h][0]);                          \
            acc[g][h][1] = mad((float4)(a[g].s1), b[h], acc[g][h][1]);                          \
            acc[g][h][2] = mad((float4)(a[g].s2), b[h], acc[g][h][2]);                          \
            acc[g][h][3] = mad((float4)(a[g].s3), b[h], acc[g][h][3]);                          \
          }                                                                                     \
      }                                                                                         \
      if (more) STORE_TILE(cur ^ 1);                                                            \
      barrier(CLK_LOCAL_MEM_FENCE);                                                             \
    }                                                                                           \
  } while (0)

__kernel __attribute__((reqd_work_group_size(NT, 1, 1)))
void matmul_warp(const int M, const int N, const int K, const float alpha, const float beta,
                 __global const float* restrict A, __global const float* restrict B,
                 __global float* C) {
  __local float as[2 * BK * (BM + PADA)] __attribute__((aligned(16)));
  __local float bs[2 * BK * BN] __attribute__((aligned(16)));
  const int lid = get_local_id(0);
  const int bm = get_group_id(1) * BM, bn = get_group_id(0) * BN;
  const int warp = lid / 32, lane = lid % 32;
  // This lane's first row and column inside the work-group's tile.
  const int row0 = (warp / WARPS_N) * WTM + (lane / LANES_N) * 4;
  const int col0 = (warp % WARPS_N) * WTN + (lane % LANES_N) * 4;
  float4 acc[GM][GN][4];  // [row block][column block][row in the block]: 4 columns each
#pragma unroll
  for (int g = 0; g < GM; ++g)
#pragma unroll
    for (int h = 0; h < GN; ++h)
#pragma unroll
      for (int i = 0; i < 4; ++i) acc[g][h][i] = (float4)(0.0f);
  float4 ra[LA], rb[LB];
  const int tiles = (K + BK - 1) / BK;
  const bool inside = bm + BM <= M && bn + BN <= N && K % BK == 0 && N % 4 == 0;
  if (inside) {
    K_LOOP(0);
  } else {
    K_LOOP(1);
  }
#pragma unroll
  for (int g = 0; g < GM; ++g)
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int m = bm + row0 + g * 16 + i;
#pragma unroll
      for (int h = 0; h < GN; ++h) {
        const int n = bn + col0 + h * 32;
        const float4 v = alpha * acc[g][h][i];
        if (inside) {
          __global float* c = C + (size_t)m * N + n;
          vstore4(beta != 0.0f ? mad((float4)(beta), vload4(0, c), v) : v, 0, c);
        } else if (m < M) {
          const float e[4] = {v.s0, v.s1, v.s2, v.s3};
#pragma unroll
          for (int j = 0; j < 4; ++j) {
            if (n + j < N) {
              const size_t at = (size_t)m * N + n + j;
              C[at] = beta != 0.0f ? mad(beta, C[at], e[j]) : e[j];
            }
          }
        }
      }
    }
}
