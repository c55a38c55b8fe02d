// Tensor-core GEMM for NVIDIA devices of compute capability 8.0 or higher, through inline PTX:
// C = alpha * A * B + beta * C, A (M x K), B (K x N) and C (M x N) row-major 16-bit storage (f16,
// or bf16 with -DBF16=1), f32 accumulation in mma.sync.m16n8k16. A work-group of
// (BM/WM)*(BN/WN) warps computes a BM x BN tile of C; each warp a WM x WN tile of it. The A and B
// tiles BK deep go through local memory in STAGES buffers filled by cp.async (the next tiles load
// while the current one is multiplied), are read into fragments with ldmatrix (B transposed on
// the way), and fed to the tensor cores. Local memory rows are XOR-swizzled in 16-byte chunks, so
// that both cp.async's stores and ldmatrix's 8-row reads hit 32 distinct banks.
// Requires K % 8 == 0 and N % 8 == 0 (16-byte rows of chunks; the host checks); M, N and K need
// not be multiples of the tiles: chunks past the edge are zero-filled, stores past it skipped.
// Rules on the macros: src/ops/gemm_rules.hpp (tc_builds), mirrored by the #error lines below.

#ifndef BM
#define BM 128
#endif
#ifndef BN
#define BN 128
#endif
#ifndef BK
#define BK 32
#endif
#ifndef WM
#define WM 64
#endif
#ifndef WN
#define WN 64
#endif
#ifndef STAGES
#define STAGES 3
#endif
#ifndef GROUP_M
#define GROUP_M 0  // 0: tiles in launch order; > 0: GROUP_M rows of tiles at a time (L2 reuse)
#endif
#ifndef CP_ASYNC
#define CP_ASYNC 1
#endif

// MMA_TYPE, CP_ASYNC16 and its commit and wait, SHARED_ADDRESS, PIPELINE_START and _NEXT,
// tile_origin, store_pair
#include "tensor_core.cl"

#define WARPS_N (BN / WN)
#define THREADS ((BM / WM) * WARPS_N * 32)
#define MI (WM / 16)  // m16 tiles per warp
#define NI (WN / 8)   // n8 tiles per warp
#define CA (BK / 8)   // 16-byte chunks per row of the A tile
#define CB (BN / 8)   // ... of the B tile
#define A_CHUNKS (BM * CA / THREADS)
#define B_CHUNKS (BK * CB / THREADS)

#if BM % WM != 0 || BN % WN != 0 || WM % 16 != 0 || WN % 16 != 0 || BK % 16 != 0
#error "BM, BN must be multiples of WM, WN; WM, WN and BK multiples of 16"
#endif
#if (BM * CA) % THREADS != 0 || (BK * CB) % THREADS != 0
#error "the A and B tiles must load in whole chunks per work-item"
#endif
#if STAGES < 2
#error "STAGES >= 2"
#endif

// Swizzle: the 16-byte chunk c of row r is stored at chunk c ^ f(r). A 128-byte line holds 8
// chunks; rows shorter than a line share one, so f takes the line of the row and spreads the
// rows of an 8-row ldmatrix read over all 8 chunk positions of a line.
#if CA >= 8
#define A_AT(r, c) ((r) * BK + (((c) ^ ((r) & 7)) * 8))
#else
#define A_AT(r, c) ((r) * BK + (((c) ^ (((r) / (8 / CA)) & (CA - 1))) * 8))
#endif
#define B_AT(r, c) ((r) * BN + (((c) ^ ((r) & 7)) * 8))

#if CP_ASYNC
#define COPY16(dst, src, ok) CP_ASYNC16(SHARED_ADDRESS(dst), src, ok)
#define COMMIT() CP_ASYNC_COMMIT()
#define WAIT_PENDING() CP_ASYNC_WAIT(STAGES - 2)
#else
#define COPY16(dst, src, ok) \
  (*(__local uint4*)(dst) = (ok) ? *(const __global uint4*)(src) : (uint4)(0, 0, 0, 0))
#define COMMIT()
#define WAIT_PENDING()
#endif

// Loads k-tile `kt` of A and B into stage `s`: 8 halves per 16-byte chunk (tensor_core.cl).
#define LOAD_TILE(kt, s) LOAD_ROW_MAJOR_TILES(kt, s, 8)

__kernel __attribute__((reqd_work_group_size(THREADS, 1, 1))) void matmul_tc(
    const int M, const int N, const int K, const float alpha, const float beta,
    const __global ushort* restrict A, const __global ushort* restrict B, __global uint* C) {
  // Declared as uint4: cp.async and ldmatrix need 16-byte aligned rows (a ushort array is
  // aligned to 2 bytes, and ldmatrix on it faults).
  __local uint4 as_tiles[STAGES * BM * BK / 8];
  __local uint4 bs_tiles[STAGES * BK * BN / 8];
  __local ushort* const as = (__local ushort*)as_tiles;
  __local ushort* const bs = (__local ushort*)bs_tiles;
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
    const __local ushort* at = as + s * BM * BK;
    const __local ushort* bt = bs + s * BK * BN;
#pragma unroll
    for (int kk = 0; kk < BK / 16; ++kk) {
      uint af[MI][4];
      uint bf[NI][2];
#pragma unroll
      for (int i = 0; i < MI; ++i) {
        const int r = wm * WM + i * 16 + (lane & 15);
        const int c = kk * 2 + (lane >> 4);
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
                     : "=r"(af[i][0]), "=r"(af[i][1]), "=r"(af[i][2]), "=r"(af[i][3])
                     : "r"(SHARED_ADDRESS(at + A_AT(r, c)))
                     : "memory");
      }
#pragma unroll
      for (int j = 0; j < NI / 2; ++j) {
        const int r = kk * 16 + (lane & 7) + ((lane >> 3) & 1) * 8;
        const int c = (wn * WN + j * 16) / 8 + (lane >> 4);
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
                     : "=r"(bf[2 * j][0]), "=r"(bf[2 * j][1]), "=r"(bf[2 * j + 1][0]),
                       "=r"(bf[2 * j + 1][1])
                     : "r"(SHARED_ADDRESS(bt + B_AT(r, c)))
                     : "memory");
      }
#pragma unroll
      for (int i = 0; i < MI; ++i)
#pragma unroll
        for (int j = 0; j < NI; ++j)
          asm("mma.sync.aligned.m16n8k16.row.col.f32." MMA_TYPE "." MMA_TYPE
              ".f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};"
              : "=f"(acc[i][j][0]), "=f"(acc[i][j][1]), "=f"(acc[i][j][2]), "=f"(acc[i][j][3])
              : "r"(af[i][0]), "r"(af[i][1]), "r"(af[i][2]), "r"(af[i][3]), "r"(bf[j][0]),
                "r"(bf[j][1]), "f"(acc[i][j][0]), "f"(acc[i][j][1]), "f"(acc[i][j][2]),
                "f"(acc[i][j][3]));
    }
  }

  // Accumulator e of tile (i, j): row lane/4 (+8 for e >= 2), columns 2*(lane%4) and +1.
#pragma unroll
  for (int i = 0; i < MI; ++i)
#pragma unroll
    for (int j = 0; j < NI; ++j)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int row = bm0 + wm * WM + i * 16 + (lane >> 2) + h * 8;
        const int col = bn0 + wn * WN + j * 8 + (lane & 3) * 2;
        store_pair(C, M, N, row, col, alpha, beta, acc[i][j][2 * h], acc[i][j][2 * h + 1]);
      }
}
