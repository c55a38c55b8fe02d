// Out-of-place f32 transpose out = in^T of a row-major M x N matrix: naive, tiled through local
// memory with padding against bank conflicts, and blocked in registers (for CPUs).
/*
  Macros (default)   meaning
    TILE 32          tile width (columns of the input) of the tiled kernel
    TILE_M TILE      tile height (rows of the input): rows of TILE_M*4 contiguous bytes are written
    ROWS 8           work-items along dim 1 in the tiled kernel; each loads TILE_M/ROWS rows
                     (TILE_M % ROWS == 0)
    PAD  1           extra floats per local-memory tile row (1 avoids bank conflicts on the
                     column reads)
    VW   1           vector width of the tiled kernel's global loads and stores: 1, 2 or 4
                     (TILE % VW == 0)
    BLK  4           block edge of the blocked kernel: 4 or 8
    ROUND_TF32 0     1: the tiled kernel rounds each element to TF32 on its way (tf32.cl), for
                     matmul's wgmma_tf32 family, whose tensor cores would truncate it
    OUT_LD 0         1: the tiled kernel takes the output's row length LDO (>= M) after N, for
                     matmul's passes, which pad rows to whole 16-byte chunks; 0: LDO is M
  Kernels (in: M x N row-major, out: N x M row-major; any M, N >= 1):
    transpose_naive(M, N, in, out)  one element per work-item, coalesced reads, strided writes.
        NDRange: any local (lx, ly); global = (roundup(N, lx), roundup(M, ly)).
    transpose_tiled(M, N, [LDO,] in, out)  a TILE_M x TILE tile is read coalesced into local
        memory and written coalesced from it (out's rows LDO floats apart, LDO = M without
        OUT_LD). Each work-item moves VW-wide vectors, TILE_M/ROWS of them in, all its loads
        issued before its first local store (bytes in flight), and as many out.
        Whole tiles with LDO and N multiples of VW take the vector path; other tiles go element
        by element. Local memory TILE_M*(TILE+PAD)*4 bytes.
        NDRange: local = (TILE/VW, ROWS); global = (ceil(N/TILE)*TILE/VW, ceil(M/TILE_M)*ROWS).
    transpose_blocked(M, N, in, out)  each work-item moves one BLK x BLK block through registers:
        BLK vector loads of rows, BLK vector stores of columns; no local memory and no barrier
        (which a CPU device runs as loops over the work-group), and every cache line it touches
        is used BLK times. Aligned vector types when M and N are multiples of BLK (a GPU then
        issues 16-byte accesses); partial blocks on the edges element by element.
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
#ifndef VW
#define VW 1
#endif
#ifndef TILE_M
#define TILE_M TILE
#endif
#ifndef BLK
#define BLK 4
#endif
#if (VW != 1 && VW != 2 && VW != 4) || TILE % VW != 0
#error "VW must be 1, 2 or 4 and divide TILE"
#endif
#if BLK != 4 && BLK != 8
#error "BLK must be 4 or 8"
#endif
#ifndef ROUND_TF32
#define ROUND_TF32 0
#endif
#ifndef OUT_LD
#define OUT_LD 0
#endif
#if OUT_LD
#define LDO_ARGUMENT const int LDO,
#else
#define LDO_ARGUMENT
#define LDO M
#endif
#if ROUND_TF32
#include "tf32.cl"
#define ROUNDED(x) tf32_rounded(x)
#else
#define ROUNDED(x) (x)
#endif

__kernel void transpose_naive(const int M, const int N, __global const float* restrict in,
                              __global float* restrict out) {
  const int c = get_global_id(0), r = get_global_id(1);
  if (r < M && c < N) out[(size_t)c * M + r] = in[(size_t)r * N + c];
}

#if VW == 1
#define TVEC float
#define TLOAD(p) (*(p))
#define TSTORE(v, p) (*(p) = (v))
#define TGET(v, e) (v)
#elif VW == 2
#define TVEC float2
#define TLOAD(p) (*(__global const float2*)(p))
#define TSTORE(v, p) (*(__global float2*)(p) = (v))
#define TGET(v, e) ((e) == 0 ? (v).s0 : (v).s1)
#else
#define TVEC float4
#define TLOAD(p) (*(__global const float4*)(p))
#define TSTORE(v, p) (*(__global float4*)(p) = (v))
#define TGET(v, e) ((e) == 0 ? (v).s0 : (e) == 1 ? (v).s1 : (e) == 2 ? (v).s2 : (v).s3)
#endif
#define TLX (TILE / VW)             // work-items along dimension 0
#define TPER (TILE_M / ROWS)        // vectors each work-item loads
#define OUT_VECS (TILE_M / VW)      // vectors per row of the output tile
#define WPER (TILE * OUT_VECS / (TLX * ROWS))  // vectors each work-item stores
#if TILE_M % ROWS != 0 || TILE_M % VW != 0 || (TILE * OUT_VECS) % (TLX * ROWS) != 0
#error "TILE_M must be a multiple of ROWS and VW"
#endif

__kernel __attribute__((reqd_work_group_size(TLX, ROWS, 1)))
void transpose_tiled(const int M, const int N, LDO_ARGUMENT __global const float* restrict in,
                     __global float* restrict out) {
  __local float t[TILE_M][TILE + PAD];
  const int tx = get_local_id(0), ty = get_local_id(1);
  const int r0 = get_group_id(1) * TILE_M, c0 = get_group_id(0) * TILE;
  // Vector path: a whole tile, and rows that keep VW-float vectors aligned.
  const bool whole = r0 + TILE_M <= M && c0 + TILE <= N && LDO % VW == 0 && N % VW == 0;
  if (whole) {
    TVEC v[TPER];
#pragma unroll
    for (int i = 0; i < TPER; ++i)
      v[i] = TLOAD(in + (size_t)(r0 + ty + i * ROWS) * N + c0 + tx * VW);
#pragma unroll
    for (int i = 0; i < TPER; ++i)
#pragma unroll
      for (int e = 0; e < VW; ++e) t[ty + i * ROWS][tx * VW + e] = ROUNDED(TGET(v[i], e));
  } else {
    // Element by element, consecutive work-items on consecutive elements (coalesced).
#pragma unroll
    for (int i = 0; i < TPER; ++i)
#pragma unroll
      for (int e = 0; e < VW; ++e) {
        const int y = ty + i * ROWS, x = e * TLX + tx, r = r0 + y, c = c0 + x;
        if (r < M && c < N) t[y][x] = ROUNDED(in[(size_t)r * N + c]);
      }
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  // Out row c0 + y holds column c0 + y of the tile, TILE_M elements from r0: OUT_VECS vectors,
  // consecutive work-items on consecutive vectors of a row.
  const int l = ty * TLX + tx;
  if (whole) {
#pragma unroll
    for (int j = 0; j < WPER; ++j) {
      const int q = l + j * TLX * ROWS, y = q / OUT_VECS, x = (q % OUT_VECS) * VW;
#if VW == 1
      const TVEC w = t[x][y];
#elif VW == 2
      const TVEC w = (float2)(t[x][y], t[x + 1][y]);
#else
      const TVEC w = (float4)(t[x][y], t[x + 1][y], t[x + 2][y], t[x + 3][y]);
#endif
      TSTORE(w, out + (size_t)(c0 + y) * LDO + r0 + x);
    }
  } else {
    // Element by element: consecutive work-items on consecutive elements of an out row.
#pragma unroll
    for (int j = 0; j < WPER * VW; ++j) {
      const int q = l + j * TLX * ROWS, y = q / TILE_M, x = q % TILE_M;
      const int c = c0 + y, r = r0 + x;  // out row c, column r
      if (c < N && r < M) out[(size_t)c * LDO + r] = t[x][y];
    }
  }
}

// Row i of the block as a vector, and column k of the block (component k of every row).
#define ROW(i) a##i = VLOAD(in + (size_t)(r0 + i) * N + c0)
#if BLK == 4
#define BVEC float4
#define VLOADN vload4
#define VSTOREN vstore4
#define COLUMN(k) (float4)(a0.s##k, a1.s##k, a2.s##k, a3.s##k)
#else
#define BVEC float8
#define VLOADN vload8
#define VSTOREN vstore8
#define COLUMN(k) (float8)(a0.s##k, a1.s##k, a2.s##k, a3.s##k, a4.s##k, a5.s##k, a6.s##k, a7.s##k)
#endif
// Aligned vector types (16- or 32-byte accesses) when every row starts on a block boundary;
// vloadn/vstoren (element alignment only) otherwise.
#define VLOAD(p) (aligned ? *(__global const BVEC*)(p) : VLOADN(0, p))
#define STORE(k)                                                  \
  do {                                                            \
    __global float* p_ = out + (size_t)(c0 + k) * M + r0;         \
    if (aligned)                                                  \
      *(__global BVEC*)p_ = COLUMN(k);                            \
    else                                                          \
      VSTOREN(COLUMN(k), 0, p_);                                  \
  } while (0)

__kernel void transpose_blocked(const int M, const int N, __global const float* restrict in,
                                __global float* restrict out) {
  const int r0 = get_global_id(1) * BLK, c0 = get_global_id(0) * BLK;
  if (r0 >= M || c0 >= N) return;
  if (r0 + BLK <= M && c0 + BLK <= N) {
    const bool aligned = M % BLK == 0 && N % BLK == 0;
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
      for (int j = 0; j < cols; ++j)
        out[(size_t)(c0 + j) * M + r0 + i] = in[(size_t)(r0 + i) * N + c0 + j];
  }
}
