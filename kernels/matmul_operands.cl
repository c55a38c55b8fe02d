// The staged GEMM's operands (matmul_staged.cl with A_DIRECT 0), rewritten in one launch before
// the product: A (M x K) transposed into At (K rows of LDA floats, zeros past M), and, where B's
// rows are not whole 16-byte chunks (LDB > N), B (K x N) copied into rows of LDB floats, zeros
// past N. LDA and LDB are multiples of 4, so every store is a whole aligned float4.
// Why one launch: at the odd shapes each of the two former passes (a transpose and a pad) was a
// short launch whose ramp, tail and gap cost more than its 4 MiB did (docs/benchmarks.md, "Where
// the odd shapes' time goes"), and both fit in one wave of the device together: one launch
// took 9-13 us off the call there on the H200 ("The operands in one launch").
/*
  Kernel: matmul_staged_operands(M, K, LDA, N, LDB, A, At, B, Bp); LDA >= M and LDB >= N are
    multiples of 4; Bp is not written (it may be B) where LDB == N.
  NDRange: one dimension, local OPERAND_ITEMS; one work-group per tile of T x T floats (T =
    OPERAND_TILE): first the ceil(LDA / T) * ceil(K / T) tiles of A (row-major over A's tile
    rows; those past M write At's zeros), then, where LDB > N, the ceil(K / T) * ceil(LDB / T)
    tiles of Bp (row-major too).
*/
// The host sets the tile's edge and the work-group's size (src/ops/operand_passes.hpp).
#if !defined(OPERAND_TILE) || !defined(OPERAND_ITEMS)
#error "OPERAND_TILE and OPERAND_ITEMS are the host's (operand_passes::operands_options)"
#endif
#if OPERAND_TILE % 4 != 0 || OPERAND_ITEMS % OPERAND_TILE != 0 ||         \
    OPERAND_TILE % (OPERAND_ITEMS / OPERAND_TILE) != 0 ||                  \
    OPERAND_TILE % (OPERAND_ITEMS / (OPERAND_TILE / 4)) != 0
#error "OPERAND_TILE a multiple of 4; OPERAND_ITEMS a multiple of it, in whole passes of a tile"
#endif
#define TILE_VECS (OPERAND_TILE / 4)                // float4s in a tile's row
#define VEC_ROWS (OPERAND_ITEMS / TILE_VECS)        // rows one pass of float4s covers
#define SCALAR_ROWS (OPERAND_ITEMS / OPERAND_TILE)  // rows one pass of floats covers

// A's tile (r0, c0) into At: read into local memory along A's rows (float4s where A's rows are
// 16-byte aligned and the tile is whole, else float by float, consecutive work-items on
// consecutive floats), every load issued before the first local store; then At's rows written
// from it by float4s, consecutive work-items on consecutive vectors of a row.
static inline void transpose_a_tile(const int M, const int K, const int LDA,
                                    __global const float* restrict A, __global float* restrict At,
                                    const int r0, const int c0, const int l,
                                    __local float (*t)[OPERAND_TILE + 1]) {
  if (K % 4 == 0 && r0 + OPERAND_TILE <= M && c0 + OPERAND_TILE <= K) {
    const int x = (l % TILE_VECS) * 4, y = l / TILE_VECS;
    float4 v[OPERAND_TILE / VEC_ROWS];
#pragma unroll
    for (int i = 0; i < OPERAND_TILE / VEC_ROWS; ++i)
      v[i] = *(__global const float4*)(A + (size_t)(r0 + y + i * VEC_ROWS) * K + c0 + x);
#pragma unroll
    for (int i = 0; i < OPERAND_TILE / VEC_ROWS; ++i) {
      __local float* row = t[y + i * VEC_ROWS] + x;
      row[0] = v[i].s0;
      row[1] = v[i].s1;
      row[2] = v[i].s2;
      row[3] = v[i].s3;
    }
  } else {
    const int x = l % OPERAND_TILE, y = l / OPERAND_TILE, c = c0 + x;
    float v[OPERAND_TILE / SCALAR_ROWS];
#pragma unroll
    for (int i = 0; i < OPERAND_TILE / SCALAR_ROWS; ++i) {
      const int r = r0 + y + i * SCALAR_ROWS;
      v[i] = r < M && c < K ? A[(size_t)r * K + c] : 0.0f;  // zeros past M reach At's padding
    }
#pragma unroll
    for (int i = 0; i < OPERAND_TILE / SCALAR_ROWS; ++i) t[y + i * SCALAR_ROWS][x] = v[i];
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  // At's row c0 + y holds column c0 + y of the tile; its floats r0 + x .. r0 + x + 3 lie inside
  // the row together (x and LDA are multiples of 4).
#pragma unroll
  for (int j = 0; j < OPERAND_TILE / VEC_ROWS; ++j) {
    const int q = l + j * OPERAND_ITEMS, y = q / TILE_VECS, x = (q % TILE_VECS) * 4;
    if (c0 + y < K && r0 + x < LDA)
      *(__global float4*)(At + (size_t)(c0 + y) * LDA + r0 + x) =
          (float4)(t[x][y], t[x + 1][y], t[x + 2][y], t[x + 3][y]);
  }
}

// Bp's tile (r0, c0): four floats of a row per work-item and pass, read one by one (B's rows
// are not 16-byte aligned) and stored as one float4.
static inline void pad_b_tile(const int K, const int N, const int LDB,
                              __global const float* restrict B, __global float* restrict Bp,
                              const int r0, const int c0, const int l) {
  const int x = c0 + (l % TILE_VECS) * 4, y = l / TILE_VECS;
  if (x >= LDB) return;
#pragma unroll
  for (int i = 0; i < OPERAND_TILE / VEC_ROWS; ++i) {
    const int r = r0 + y + i * VEC_ROWS;
    if (r < K) {
      __global const float* row = B + (size_t)r * N;
      *(__global float4*)(Bp + (size_t)r * LDB + x) =
          (float4)(x < N ? row[x] : 0.0f, x + 1 < N ? row[x + 1] : 0.0f,
                   x + 2 < N ? row[x + 2] : 0.0f, x + 3 < N ? row[x + 3] : 0.0f);
    }
  }
}

__kernel __attribute__((reqd_work_group_size(OPERAND_ITEMS, 1, 1)))
void matmul_staged_operands(const int M, const int K, const int LDA, const int N, const int LDB,
                            __global const float* restrict A, __global float* restrict At,
                            __global const float* B, __global float* Bp) {
  __local float t[OPERAND_TILE][OPERAND_TILE + 1];  // + 1: the column reads on distinct banks
  const int g = get_group_id(0), l = get_local_id(0);
  const int a_cols = (K + OPERAND_TILE - 1) / OPERAND_TILE;
  const int a_tiles = (LDA + OPERAND_TILE - 1) / OPERAND_TILE * a_cols;  // At's rows whole
  if (g < a_tiles) {
    transpose_a_tile(M, K, LDA, A, At, g / a_cols * OPERAND_TILE, g % a_cols * OPERAND_TILE, l, t);
  } else {
    const int b = g - a_tiles, b_cols = (LDB + OPERAND_TILE - 1) / OPERAND_TILE;
    pad_b_tile(K, N, LDB, B, Bp, b / b_cols * OPERAND_TILE, b % b_cols * OPERAND_TILE, l);
  }
}
