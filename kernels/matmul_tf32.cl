// Tensor-core GEMM on f32 storage with TF32 inputs, for NVIDIA devices of compute capability 8.0
// or higher, through inline PTX: C = alpha * A * B + beta * C, A (M x K), B (K x N) and C (M x N)
// row-major f32; each product rounds its inputs to TF32 (10-bit mantissa, cvt.rna) and sums in
// f32 in mma.sync.m16n8k8. Only callers that allow TF32 get it (MatmulMath::tf32): it changes the
// result's precision. A work-group of (BM/WM)*(BN/WN) warps computes a BM x BN tile of C; each warp
// a WM x WN tile of it. The A and B tiles BK deep go through local memory in STAGES buffers filled
// by cp.async. A's fragments are read with ldmatrix (an 8 x 8 matrix of 16-bit values is an 8 x 4
// matrix of 32-bit ones, and its lanes get exactly the TF32 fragment's elements), B's with two
// 32-bit reads per 8 columns (ldmatrix's transpose moves 16-bit values). Rows are XOR-swizzled in
// 16-byte chunks so that cp.async's stores, ldmatrix's 8-row reads and B's reads of 4 rows by 8
// columns each hit 32 distinct banks.
// Requires K % 4 == 0 and N % 4 == 0 (16-byte chunks; the host checks); chunks past the edges of
// the matrices are zero-filled, stores past them skipped.
// Rules on the macros: src/ops/gemm_rules.hpp (tf32_builds), mirrored by the #error lines below.

#ifndef BM
#define BM 128
#endif
#ifndef BN
#define BN 128
#endif
#ifndef BK
#define BK 16
#endif
#ifndef WM
#define WM 64
#endif
#ifndef WN
#define WN 32
#endif
#ifndef STAGES
#define STAGES 2
#endif
#ifndef GROUP_M
#define GROUP_M 0  // 0: tiles in launch order; > 0: GROUP_M rows of tiles at a time (L2 reuse)
#endif

#include "tensor_core.cl"  // CP_ASYNC16/_COMMIT/_WAIT, SHARED_ADDRESS, PIPELINE_*, tile_origin

#define WARPS_N (BN / WN)
#define THREADS ((BM / WM) * WARPS_N * 32)
#define MI (WM / 16)  // m16 tiles per warp
#define NI (WN / 8)   // n8 tiles per warp
#define CA (BK / 4)   // 16-byte chunks (4 floats) per row of the A tile
#define CB (BN / 4)   // ... of the B tile
#define A_CHUNKS (BM * CA / THREADS)
#define B_CHUNKS (BK * CB / THREADS)

#if BM % WM != 0 || BN % WN != 0 || WM % 16 != 0 || WN % 8 != 0 || (BK != 16 && BK != 32)
#error "BM, BN multiples of WM, WN; WM a multiple of 16, WN of 8; BK 16 or 32"
#endif
#if BN % 32 != 0
#error "BN a multiple of 32 (B's swizzle permutes 8 chunks inside each run of 32 columns)"
#endif
#if (BM * CA) % THREADS != 0 || (BK * CB) % THREADS != 0
#error "the A and B tiles must load in whole chunks per work-item"
#endif
#if STAGES < 2 || STAGES > 4
#error "STAGES 2 to 4"
#endif

// Offsets in floats. A: chunk c of row r at chunk c ^ f(r), f spreading the 8 rows of one
// ldmatrix read over the 8 chunk positions of a 128-byte line (rows of BK = 16 share a line).
#if CA >= 8
#define A_AT(r, c) ((r) * BK + (((c) ^ ((r) & 7)) * 4))
#else
#define A_AT(r, c) ((r) * BK + (((c) ^ (((r) / (8 / CA)) & (CA - 1))) * 4))
#endif
// B: chunk c of row r at chunk c ^ 2 (r % 4). A warp reads rows k0 + t (t = lane % 4, k0 a
// multiple of 4) at columns n0 + g (g = lane / 4, n0 a multiple of 8): chunks n0/4 + g/4 ^ 2t
// are 8 distinct chunks of a line, 4 floats each: 32 banks.
#define B_AT(r, c) ((r) * BN + (((c) ^ (((r) & 3) << 1)) * 4))
#define B_ELEM(k, n) (B_AT((k), (n) / 4) + (n) % 4)


// Loads k-tile `kt` of A and B into stage `s`: 4 floats per 16-byte chunk (tensor_core.cl).
#define COPY16(dst, src, ok) CP_ASYNC16(SHARED_ADDRESS(dst), src, ok)
#define LOAD_TILE(kt, s) LOAD_ROW_MAJOR_TILES(kt, s, 4)
// The pipeline's group commit and wait (PIPELINE_START, PIPELINE_NEXT: tensor_core.cl).
#define COMMIT() CP_ASYNC_COMMIT()
#define WAIT_PENDING() CP_ASYNC_WAIT(STAGES - 2)

// f32 bits -> TF32, rounded to nearest (ties away from zero), as mma's .tf32 operands expect.
static inline uint to_tf32(const uint f32_bits) {
  uint r;
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(as_float(f32_bits)));
  return r;
}

__kernel __attribute__((reqd_work_group_size(THREADS, 1, 1))) void matmul_tf32(
    const int M, const int N, const int K, const float alpha, const float beta,
    const __global float* restrict A, const __global float* restrict B, __global float* C) {
  // Declared as uint4: cp.async and ldmatrix need 16-byte aligned rows.
  __local uint4 as_tiles[STAGES * BM * BK / 4];
  __local uint4 bs_tiles[STAGES * BK * BN / 4];
  __local uint* const as = (__local uint*)as_tiles;
  __local uint* const bs = (__local uint*)bs_tiles;
  const int tid = get_local_id(0);
  const int warp = tid / 32, lane = tid % 32;
  const int wm = warp / WARPS_N, wn = warp % WARPS_N;
  const int2 origin = tile_origin(BM, BN, GROUP_M);
  const int bm0 = origin.x, bn0 = origin.y;
  const int tiles = (K + BK - 1) / BK;

  float acc[MI][NI][4];
#pragma unroll
  for (int i = 0; i < MI; ++i)
#pragma unroll
    for (int j = 0; j < NI; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.0f;

  PIPELINE_START(tiles);
  for (int kt = 0; kt < tiles; ++kt) {
    PIPELINE_NEXT(kt, tiles);  // tile kt in for every work-item; tile kt + STAGES - 1 loading
    const int s = kt % STAGES;
    const __local uint* at = as + s * BM * BK;
    const __local uint* bt = bs + s * BK * BN;
#pragma unroll
    for (int kk = 0; kk < BK / 8; ++kk) {
      uint af[MI][4];
      uint bf[NI][2];
      // A (m16 x k8): matrices (rows 0-7, k 0-3), (rows 8-15, k 0-3), (rows 0-7, k 4-7),
      // (rows 8-15, k 4-7); lane l gives row l % 16 of chunk 2 kk + l / 16.
#pragma unroll
      for (int i = 0; i < MI; ++i) {
        const int r = wm * WM + i * 16 + (lane & 15);
        const int c = kk * 2 + (lane >> 4);
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                     : "=r"(af[i][0]), "=r"(af[i][1]), "=r"(af[i][2]), "=r"(af[i][3])
                     : "r"(SHARED_ADDRESS(at + A_AT(r, c)))
                     : "memory");
#pragma unroll
        for (int e = 0; e < 4; ++e) af[i][e] = to_tf32(af[i][e]);
      }
      // B (k8 x n8, "col"): b0 = B[k0 + t][n0 + g], b1 = B[k0 + t + 4][n0 + g].
#pragma unroll
      for (int j = 0; j < NI; ++j) {
        const int k = kk * 8 + (lane & 3), n = wn * WN + j * 8 + (lane >> 2);
        bf[j][0] = to_tf32(bt[B_ELEM(k, n)]);
        bf[j][1] = to_tf32(bt[B_ELEM(k + 4, n)]);
      }
#pragma unroll
      for (int i = 0; i < MI; ++i)
#pragma unroll
        for (int j = 0; j < NI; ++j)
          asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, "
              "{%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};"
              : "=f"(acc[i][j][0]), "=f"(acc[i][j][1]), "=f"(acc[i][j][2]), "=f"(acc[i][j][3])
              : "r"(af[i][0]), "r"(af[i][1]), "r"(af[i][2]), "r"(af[i][3]), "r"(bf[j][0]),
                "r"(bf[j][1]), "f"(acc[i][j][0]), "f"(acc[i][j][1]), "f"(acc[i][j][2]),
                "f"(acc[i][j][3]));
    }
  }
  asm volatile("cp.async.wait_all;" ::: "memory");

  // Accumulator e of tile (i, j): row lane/4 (+8 for e >= 2), columns 2*(lane%4) and the next
  // (N % 4 == 0: both inside or both outside, 8-byte aligned).
#pragma unroll
  for (int i = 0; i < MI; ++i)
#pragma unroll
    for (int j = 0; j < NI; ++j)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int row = bm0 + wm * WM + i * 16 + (lane >> 2) + h * 8;
        const int col = bn0 + wn * WN + j * 8 + (lane & 3) * 2;
        if (row < M && col < N) {
          __global float2* out = (__global float2*)(C + (size_t)row * N + col);
          float2 v = alpha * (float2)(acc[i][j][2 * h], acc[i][j][2 * h + 1]);
          if (beta != 0.0f) v += beta * *out;
          *out = v;
        }
      }
}
