// Staged GEMM for NVIDIA devices of compute capability 8.0 or higher: matmul_reg.cl's
// register-blocked product (a work-group computes an MWG x NWG tile of C, each work-item a
// WPTM x WPTN block of it read from local memory in vectors), its local tiles filled by 16-byte
// cp.async copies in STAGES stages (the next tiles load while the current one is multiplied).
// A_DIRECT 0: A comes transposed (At: K x M, written by the host's pass before the product,
// matmul_operands.cl, which also pads B's rows where it must), so that both tiles are copied row
// for row: no prefetch registers and no transposing store, which is what held matmul_reg.cl at
// 90% of cuBLAS on the H200 (docs/benchmarks.md, issue 32).
// C = alpha * A * B + beta * C; At (K rows of LDA floats), B (K rows of LDB floats), C (M x N),
// row-major f32. Any M, N and K. With A_DIRECT 0, LDA >= M and LDB >= N are multiples of 4, so
// that every row is whole 16-byte chunks (the host pads the rows where M or N is not a multiple
// of 4; copying float by float instead cost 12-33% on the H200). Columns past M and N may hold
// anything: they reach only rows and columns of C that are not stored. Copies past K are
// zero-filled.
// K slices: work-group z computes the slice of KS rows of K from z * KS (KS a multiple of KWG),
// into the z-th M x N block of C; one slice (KS >= K) is the whole product. The host adds the
// slices' blocks (matmul_sum.cl), with alpha 1 and beta 0 here.
// CP_ASYNC 0 does the same copies at once (no inline PTX): the kernel's logic on any device,
// for its tests. Rules on the macros: src/ops/gemm_rules.hpp (staged_builds), mirrored by the
// #error lines below.
// KSLICE > 1 splits each K tile among KSLICE groups of work-items in the work-group, which add
// their register blocks in local memory at the end: more warps for the same tiles, where the
// tiles are too few to fill the device (a share of K per work-group instead of per launch).
// Local (NDIMC, MDIMC, KSLICE); global (ceil(N / NWG) * NDIMC, ceil(M / MWG) * MDIMC,
// slices * KSLICE).
// A_DIRECT 1 takes A and B as they are, with no pass before the product: A (M x K, rows of LDA
// = K floats) is copied float by float into the transposed local tile (4-byte cp.async; a warp
// reads 8 floats of each of 4 rows, whole 32-byte sectors where K % 8 == 0, and writes 32
// different banks), and B by 16-byte chunks where its rows are whole chunks (LDB a multiple of
// 4), else float by float.
// The copies cost the product instructions (7% at 4096^3 in the kernel lab on the H200), and
// save the passes, which weigh most at small and odd shapes (1023^3 through the op: 82% of
// cuBLAS against 79%). The tuner picks per shape (A_DIRECT is a parameter of the family).
// A_DIRECT 2 takes A and B as they are too, but keeps A's tile in A's layout (MWG rows of KWG + 4
// floats), and the product reads A in vectors along K (4 K rows per step, MULTIPLY_A_ROWS). Where
// K is a multiple of 4, A's rows are copied in 16-byte chunks, as At's are under A_DIRECT 0 (no
// pass, and a quarter of the copies); elsewhere float by float, each warp on whole runs of a row
// (32 floats where KWG is 32: 4 or 5 sectors, where A_DIRECT 1's 8 floats of 4 rows touch 8
// sectors of 4 lines at an odd K). No SPREAD_COPIES.
// SPREAD_COPIES 1: the K steps whose next tile lies inside K (under A_DIRECT, of the work-groups
// whose copies need no edge test) issue that tile's copies in shares between the rows of the
// product, with no branch among them. NVIDIA's compiler otherwise issues them all at once after
// the barrier, which no other warp hides where an SM holds one or two work-groups. cuBLAS's
// 256 x 128 x 8 tile gained 10-11% with it at 2048^3-8192^3 on the H200 and became the best;
// some smaller tiles lost (docs/benchmarks.md, "Copies spread between the rows"): a parameter.
#ifndef MWG
#define MWG 128
#endif
#ifndef NWG
#define NWG 128
#endif
#ifndef KWG
#define KWG 16
#endif
#ifndef MDIMC
#define MDIMC 8
#endif
#ifndef NDIMC
#define NDIMC 32
#endif
#ifndef VWM
#define VWM 4
#endif
#ifndef VWN
#define VWN 4
#endif
#ifndef STAGES
#define STAGES 3
#endif
#ifndef CP_ASYNC
#define CP_ASYNC 1
#endif
#ifndef A_DIRECT
#define A_DIRECT 0
#endif
#ifndef SPREAD_COPIES
#define SPREAD_COPIES 0
#endif
#ifndef KSLICE
// Groups of work-items along K in a work-group (local dim 2): each multiplies KWG/KSLICE rows.
#define KSLICE 1
#endif

#include "register_blocks.cl"  // WPTM, WPTN, floatM, floatN, the product of a tile row
#define NTC (MDIMC * NDIMC)  // work-items of one K slice (the register blocks' layout)
#define NT (NTC * KSLICE)    // work-items of the work-group: all copy the tiles
#define CA (MWG / 4)                 // 16-byte chunks in a row of the A tile
#define CB (NWG / 4)                 // ... of the B tile
#define A_CHUNKS (KWG * CA / NT)     // chunks each work-item copies per tile
#define B_CHUNKS (KWG * CB / NT)

#if (VWM != 1 && VWM != 2 && VWM != 4 && VWM != 8) || (VWN != 1 && VWN != 2 && VWN != 4 && VWN != 8)
#error "VWM and VWN 1, 2, 4 or 8 (OpenCL's vector widths)"
#endif
#if MWG % 4 != 0 || NWG % 4 != 0
#error "MWG and NWG multiples of 4 (tile rows of 16-byte chunks)"
#endif
#if MWG % (MDIMC * VWM) != 0 || NWG % (NDIMC * VWN) != 0
#error "MWG a multiple of MDIMC*VWM, NWG of NDIMC*VWN"
#endif
#if (KWG * CA) % NT != 0 || (KWG * CB) % NT != 0 || A_CHUNKS < 1 || B_CHUNKS < 1
#error "each tile whole 16-byte chunks for every work-item"
#endif
#if A_DIRECT != 0 && A_DIRECT != 1 && A_DIRECT != 2
#error "A_DIRECT 0, 1 or 2"
#endif
#if A_DIRECT != 0 && NT % NWG != 0
#error "A_DIRECT 1 or 2: the work-items a multiple of NWG"
#endif
#if A_DIRECT == 1 && (KWG % 8 != 0 || NT % (4 * KWG) != 0 || VWM == 8)
#error "A_DIRECT 1: KWG a multiple of 8, the work-items a multiple of 4 * KWG, VWM <= 4"
#endif
#if A_DIRECT == 2 && \
    ((KWG / KSLICE) % 4 != 0 || NT % KWG != 0 || MWG % (NT / KWG) != 0 || SPREAD_COPIES)
#error "A_DIRECT 2: KWG / KSLICE a multiple of 4, the work-items a multiple of KWG, MWG of the work-items / KWG, no SPREAD_COPIES"
#endif
#if STAGES < 2
#error "STAGES >= 2"
#endif
#if SPREAD_COPIES != 0 && SPREAD_COPIES != 1
#error "SPREAD_COPIES 0 or 1"
#endif
#if KSLICE < 1 || KWG % KSLICE != 0
#error "KSLICE >= 1 divides KWG"
#endif
// Rows of the local A tile are MWG + APAD floats (A_DIRECT 2: KWG + APAD, A's own rows): A_DIRECT
// 1's transposing copies then fall on 32 different banks (APAD 4 keeps the rows 16-byte aligned
// for reads of up to 4 floats, hence VWM <= 4 there; 8 would put 2 copies on each bank), and
// A_DIRECT 2's reads of 4 rows apart fall on different banks (the host's
// gemm::staged_direct_a_pad).
#if A_DIRECT
#define APAD 4
#else
#define APAD 0
#endif
#if A_DIRECT == 2
#define A_TILE_FLOATS (MWG * (KWG + APAD))
#else
#define A_TILE_FLOATS (KWG * (MWG + APAD))
#endif
// Local memory: the STAGES tiles, which the KSLICE - 1 other slices' sums reuse after the K loop.
#define TILE_FLOATS (STAGES * (A_TILE_FLOATS + KWG * NWG))
#define SUM_FLOATS ((KSLICE - 1) * MWG * NWG)
#define LOCAL_FLOATS (TILE_FLOATS > SUM_FLOATS ? TILE_FLOATS : SUM_FLOATS)

#if CP_ASYNC
#include "tensor_core.cl"  // CP_ASYNC16 and its commit and wait, SHARED_ADDRESS
#define COPY16(dst, src, ok) CP_ASYNC16(SHARED_ADDRESS(dst), src, ok)
#define COPY4(dst, src, ok) CP_ASYNC4(SHARED_ADDRESS(dst), src, ok)
#define COMMIT() CP_ASYNC_COMMIT()
#define WAIT_PENDING() CP_ASYNC_WAIT(STAGES - 2)
#else
#define COPY16(dst, src, ok) vstore4((ok) ? vload4(0, (src)) : (float4)(0.0f), 0, (dst))
#define COPY4(dst, src, ok) (*(dst) = (ok) ? *(src) : 0.0f)
#define COMMIT()
#define WAIT_PENDING()
#endif

// Rows from r0 and columns c0 .. c0+W-1 of `src` (rows of `ld` floats) into the local tile `dst`
// (rows of W floats) in 16-byte chunks, chunks `lo` .. `hi`-1 of each work-item, consecutive
// work-items on consecutive chunks (coalesced); zero from row `rows` and column `cols` of `src` on.
#define COPY_CHUNKS_PART(dst, src, ld, r0, rows, c0, cols, W, lo, hi)                       \
  _Pragma("unroll") for (int i_ = (lo); i_ < (hi); ++i_) {                                  \
    const int c_ = tid + i_ * NT, r_ = c_ / ((W) / 4), x_ = (c_ % ((W) / 4)) * 4;           \
    const bool ok_ = (r0) + r_ < (rows) && (c0) + x_ < (cols);                              \
    COPY16(&dst[r_][x_], ok_ ? src + (size_t)((r0) + r_) * (ld) + (c0) + x_ : src, ok_);    \
  }
// Rows k0 .. k0+KWG-1 (K rows of B or of At) and columns c0 .. c0+W-1 of `src` into `dst`
// (KWG x W); zero past K and past the row.
#define COPY_TILE(dst, src, ld, c0, k0, W) \
  COPY_TILE_PART(dst, src, ld, c0, k0, W, 0, KWG * (W) / 4 / NT)
#define COPY_TILE_PART(dst, src, ld, c0, k0, W, lo, hi) \
  COPY_CHUNKS_PART(dst, src, ld, k0, K, c0, ld, W, lo, hi)

// A_DIRECT's copies walk one pointer per matrix from a base each work-item computes once (a
// pointer per copy, hoisted out of the K loop, took 80 more registers and halved occupancy).
// A: the work-item's column a_k of the tile and its first row a_m, then every A_STEP-th row (a
// warp's 32 floats: under A_DIRECT 1 8 columns of 4 rows, whole 32-byte sectors on 32 different
// banks of the padded rows; under 2 consecutive columns of 32 / KWG rows). B, float by float
// where its rows are not whole chunks: column b_x of the tile, rows b_r, b_r + B_STEP, ...
#define A_STEP (NT / KWG)
#define B_STEP (NT / NWG)

// Float (m, k) of the local A tile `dst`: transposed (KWG x MWG + APAD) under A_DIRECT 1, as A
// is (MWG x KWG + APAD) under 2.
#if A_DIRECT == 2
#define A_AT(dst, m, k) (dst)[m][k]
#else
#define A_AT(dst, m, k) (dst)[k][m]
#endif
// K tile k0 of A (M x K, rows of LDA floats) into `dst`; `edge` 0 where the tile lies inside A
// (no test), else zero past M and K.
#define COPY_A_TILE(dst, k0, edge) COPY_A_PART(dst, k0, edge, 0, MWG / A_STEP)
#define COPY_A_PART(dst, k0, edge, lo, hi)                                 \
  do {                                                                     \
    __global const float* p_ = a_src + (k0) + (size_t)(lo) * A_STEP * LDA; \
    const bool k_ok_ = (k0) + a_k < K;                                     \
    _Pragma("unroll") for (int i_ = (lo); i_ < (hi); ++i_) {               \
      const bool ok_ = !(edge) || (k_ok_ && bm + a_m + i_ * A_STEP < M);   \
      COPY4(&A_AT(dst, a_m + i_ * A_STEP, a_k), ok_ ? p_ : At, ok_);       \
      p_ += (size_t)A_STEP * LDA;                                          \
    }                                                                      \
  } while (0)

// K tile k0 of B (K x N, rows of LDB floats) into `dst` (KWG x NWG) float by float; `edge` as
// above.
#define COPY_B_FLOATS(dst, k0, edge) COPY_B_PART(dst, k0, edge, 0, KWG / B_STEP)
#define COPY_B_PART(dst, k0, edge, lo, hi)                                             \
  do {                                                                                 \
    __global const float* p_ = b_src + ((size_t)(k0) + (size_t)(lo) * B_STEP) * LDB;   \
    const bool n_ok_ = bn + b_x < N;                                                   \
    _Pragma("unroll") for (int i_ = (lo); i_ < (hi); ++i_) {                           \
      const bool ok_ = !(edge) || (n_ok_ && (k0) + b_r + i_ * B_STEP < K);             \
      COPY4(&dst[b_r + i_ * B_STEP][b_x], ok_ ? p_ : B, ok_);                          \
      p_ += (size_t)B_STEP * LDB;                                                      \
    }                                                                                  \
  } while (0)

// K tile kt of this slice into stage s: rows of At and of B (A_DIRECT: A's K columns into the
// tile's rows, and B's rows by chunks or floats as they are aligned).
#if A_DIRECT
// Tiles inside the matrices (all but the last K tile of the work-groups inside M and N) copy
// with no tests: each float's test would cost about as much as its copy.
#if A_DIRECT == 2
// A's rows in 16-byte chunks (K a multiple of 4: every row and K slice starts on a chunk), zero
// past M and K.
#define COPY_A_CHUNKS(dst, k0) \
  COPY_CHUNKS_PART(dst, At, LDA, bm, M, k0, K, KWG, 0, KWG * MWG / 4 / NT)
#define A_IN_CHUNKS a_chunks
#else
#define COPY_A_CHUNKS(dst, k0)
#define A_IN_CHUNKS 0
#endif
#define LOAD_TILE(kt, s)                            \
  do {                                              \
    const bool k_inside_ = ((kt) + 1) * KWG <= K;   \
    if (A_IN_CHUNKS) {                              \
      COPY_A_CHUNKS(As[s], (kt) * KWG)              \
    } else if (k_inside_ && m_inside) {             \
      COPY_A_TILE(As[s], (kt) * KWG, 0);            \
    } else {                                        \
      COPY_A_TILE(As[s], (kt) * KWG, 1);            \
    }                                               \
    if (b_chunks) {                                 \
      COPY_TILE(Bs[s], B, LDB, bn, (kt) * KWG, NWG) \
    } else if (k_inside_ && n_inside) {             \
      COPY_B_FLOATS(Bs[s], (kt) * KWG, 0);          \
    } else {                                        \
      COPY_B_FLOATS(Bs[s], (kt) * KWG, 1);          \
    }                                               \
  } while (0)
#define A_SHARE(next, ns, q) \
  COPY_A_PART(As[ns], (next) * KWG, 0, PART_LO(MWG / A_STEP, q), PART_HI(MWG / A_STEP, q))
#define B_FLOAT_SHARE(next, ns, q) \
  COPY_B_PART(Bs[ns], (next) * KWG, 0, PART_LO(KWG / B_STEP, q), PART_HI(KWG / B_STEP, q))
#else
#define LOAD_TILE(kt, s)                            \
  do {                                              \
    COPY_TILE(As[s], At, LDA, bm, (kt) * KWG, MWG)  \
    COPY_TILE(Bs[s], B, LDB, bn, (kt) * KWG, NWG)   \
  } while (0)
#define A_SHARE(next, ns, q)                                                            \
  COPY_TILE_PART(As[ns], At, LDA, bm, (next) * KWG, MWG, PART_LO(KWG * MWG / 4 / NT, q), \
                 PART_HI(KWG * MWG / 4 / NT, q))
#endif
// SPREAD_COPIES: one step of the K loop whose next tile lies inside K: that tile's copies, in QN
// shares (A_SHARE, and B_CHUNK_SHARE or B_FLOAT_SHARE), follow the rows of the product, and the
// unrolled rows hold no branch (each copy's test is a constant or a select).
#define QN (KWG / KSLICE)
#define PART_LO(total, q) (((total) * (q)) / QN)
#define PART_HI(total, q) (((total) * ((q) + 1)) / QN)
#define SPREAD_STEP(kt, COPY_B_SHARE)                                                         \
  do {                                                                                        \
    WAIT_PENDING();                                                                           \
    barrier(CLK_LOCAL_MEM_FENCE);                                                             \
    const int next_ = (kt) + STAGES - 1, ns_ = next_ % STAGES, cur_ = (kt) % STAGES;          \
    _Pragma("unroll") for (int q_ = 0; q_ < QN; ++q_) {                                       \
      const int kk_ = tz * QN + q_;                                                           \
      MULTIPLY_TILE_ROW(As[cur_][kk_], Bs[cur_][kk_]);                                        \
      A_SHARE(next_, ns_, q_);                                                                \
      COPY_B_SHARE(next_, ns_, q_);                                                           \
    }                                                                                         \
    COMMIT();                                                                                 \
  } while (0)
#define B_CHUNK_SHARE(next, ns, q)                                                      \
  COPY_TILE_PART(Bs[ns], B, LDB, bn, (next) * KWG, NWG, PART_LO(KWG * NWG / 4 / NT, q), \
                 PART_HI(KWG * NWG / 4 / NT, q))

#if A_DIRECT == 2
// acc += the product of K rows kk .. kk+3 of the A tile `a_tile` (MWG rows of KWG + APAD floats)
// and the B tile `b_tile`: this work-item's rows of A in vectors along K, then each K row's
// outer product.
#define MULTIPLY_A_ROWS(a_tile, kk, b_tile)                                                   \
  do {                                                                                        \
    float a4_[WPTM][4];                                                                       \
    _Pragma("unroll") for (int i_ = 0; i_ < WPTM; ++i_)                                       \
        vstore4(*(__local const float4*)&(a_tile)[BLOCK_ROW(i_)][kk], 0, a4_[i_]);            \
    _Pragma("unroll") for (int t_ = 0; t_ < 4; ++t_) {                                        \
      float b_[WPTN];                                                                         \
      _Pragma("unroll") for (int j_ = 0; j_ < WPTN / VWN; ++j_)                               \
          CAT(TOARR_, VWN)(*(__local const floatN*)&(b_tile)[(kk) + t_][(j_ * NDIMC + tx) * VWN], \
                           b_ + j_ * VWN);                                                    \
      _Pragma("unroll") for (int i_ = 0; i_ < WPTM; ++i_)                                     \
          _Pragma("unroll") for (int j_ = 0; j_ < WPTN; ++j_) acc[i_][j_] =                   \
              mad(a4_[i_][t_], b_[j_], acc[i_][j_]);                                          \
    }                                                                                         \
  } while (0)
#endif

__kernel __attribute__((reqd_work_group_size(NDIMC, MDIMC, KSLICE)))
void matmul_staged(const int M, const int N, const int K_all, const int LDA, const int LDB,
                   const int KS, const float alpha, const float beta,
                   __global const float* restrict At_all, __global const float* restrict B_all,
                   __global float* C_all) {
  __local float4 local_mem[LOCAL_FLOATS / 4];  // 16-byte aligned (MWG, NWG multiples of 4)
#if A_DIRECT == 2
  __local float(*As)[MWG][KWG + APAD] = (__local float(*)[MWG][KWG + APAD])local_mem;
#else
  __local float(*As)[KWG][MWG + APAD] = (__local float(*)[KWG][MWG + APAD])local_mem;
#endif
  __local float* const b_tiles = (__local float*)local_mem + STAGES * A_TILE_FLOATS;
  __local float(*Bs)[KWG][NWG] = (__local float(*)[KWG][NWG])b_tiles;
  const int tx = get_local_id(0), ty = get_local_id(1), tz = get_local_id(2);
  const int tid = (tz * MDIMC + ty) * NDIMC + tx;
  const int bm = get_group_id(1) * MWG, bn = get_group_id(0) * NWG;
  // This work-group's slice of K: rows k_begin .. k_begin + K - 1 of At (columns of A under
  // A_DIRECT) and of B.
  const int k_begin = get_group_id(2) * KS;
  const int K = min(KS, K_all - k_begin);
  __global const float* restrict B = B_all + (size_t)k_begin * LDB;
#if A_DIRECT
  __global const float* restrict At = At_all + k_begin;  // A itself: the slice's columns
  // The same for every work-item of the work-group: no divergence.
  const bool b_chunks = LDB % 4 == 0, m_inside = bm + MWG <= M, n_inside = bn + NWG <= N;
#if A_DIRECT == 2
  // Chunks only where each starts on 16 bytes and ends inside K: rows longer than K (LDA > K)
  // hold what must not reach the sums, and an odd K would cut its last chunk.
  const bool a_chunks = LDA % 4 == 0 && KS % 4 == 0 && K_all % 4 == 0;
#endif
  // The copies' bases (COPY_A_TILE, COPY_B_FLOATS).
#if A_DIRECT == 2
  const int a_k = tid % KWG, a_m = tid / KWG;
#else
  const int a_k = (tid / 32) % (KWG / 8) * 8 + tid % 8;
  const int a_m = (tid / 32) / (KWG / 8) * 4 + (tid / 8) % 4;
#endif
  const int b_x = tid % NWG, b_r = tid / NWG;
  __global const float* const a_src = At + (size_t)(bm + a_m) * LDA + a_k;
  __global const float* const b_src = B + (size_t)b_r * LDB + bn + b_x;
#else
  __global const float* restrict At = At_all + (size_t)k_begin * LDA;
#endif
  __global float* C = C_all + get_group_id(2) * (size_t)M * N;
  const int tiles = (K + KWG - 1) / KWG;

  float acc[WPTM][WPTN];
#pragma unroll
  for (int i = 0; i < WPTM; ++i)
#pragma unroll
    for (int j = 0; j < WPTN; ++j) acc[i][j] = 0.0f;

  // Tiles 0 .. STAGES-2 on their way; every step commits one group (empty past the last tile),
  // so that waiting for at most STAGES-2 pending groups means this step's tile has landed.
#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < tiles) LOAD_TILE(s, s);
    COMMIT();
  }
  int kt = 0;
#if SPREAD_COPIES
  // The steps whose next tile lies whole inside K (kt + STAGES - 1 < K / KWG).
  const int spread_end = K / KWG - (STAGES - 1);
#endif
#if A_DIRECT && SPREAD_COPIES
  // For work-groups that copy with no edge test; the loop below does the rest (and every step of
  // the others).
  if (m_inside && b_chunks) {
    for (; kt < spread_end; ++kt) SPREAD_STEP(kt, B_CHUNK_SHARE);
  } else if (m_inside && n_inside) {
    for (; kt < spread_end; ++kt) SPREAD_STEP(kt, B_FLOAT_SHARE);
  }
#elif SPREAD_COPIES
  // Every work-group: the copies of At and B test their edges by selects.
  for (; kt < spread_end; ++kt) SPREAD_STEP(kt, B_CHUNK_SHARE);
#endif
  for (; kt < tiles; ++kt) {
    WAIT_PENDING();
    barrier(CLK_LOCAL_MEM_FENCE);  // tile kt in every work-item's view; stage of kt-1 read
    const int next = kt + STAGES - 1;
    if (next < tiles) LOAD_TILE(next, next % STAGES);
    COMMIT();
    const int cur = kt % STAGES;
#if A_DIRECT == 2
#pragma unroll
    for (int q = 0; q < KWG / KSLICE; q += 4)
      MULTIPLY_A_ROWS(As[cur], tz * (KWG / KSLICE) + q, Bs[cur]);
#else
#pragma unroll
    for (int q = 0; q < KWG / KSLICE; ++q) {
      const int kk = tz * (KWG / KSLICE) + q;  // this slice's rows of the tile
      MULTIPLY_TILE_ROW(As[cur][kk], Bs[cur][kk]);
    }
#endif
  }

#if KSLICE > 1
  // Slices 1 .. KSLICE-1 hand their sums to slice 0 through the tiles' local memory (every copy
  // has landed: the last step waited for its own tile), one float per (slice, i, j) row of NTC.
  barrier(CLK_LOCAL_MEM_FENCE);
  __local float* sums = (__local float*)local_mem;
  const int xy = ty * NDIMC + tx;
  if (tz > 0) {
#pragma unroll
    for (int i = 0; i < WPTM; ++i)
#pragma unroll
      for (int j = 0; j < WPTN; ++j)
        sums[(((tz - 1) * WPTM + i) * WPTN + j) * NTC + xy] = acc[i][j];
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  if (tz > 0) return;  // no barrier below
  for (int z = 0; z < KSLICE - 1; ++z)
#pragma unroll
    for (int i = 0; i < WPTM; ++i)
#pragma unroll
      for (int j = 0; j < WPTN; ++j) acc[i][j] += sums[((z * WPTM + i) * WPTN + j) * NTC + xy];
#endif

  // matmul_reg.cl's epilogue (register_blocks.cl's layout), in f32 only.
#pragma unroll
  for (int i = 0; i < WPTM; ++i) {
    const int row = bm + BLOCK_ROW(i);
    if (row >= M) continue;
#pragma unroll
    for (int j = 0; j < WPTN; ++j) {
      const int col = bn + BLOCK_COL(j);
      if (col < N) {
        const size_t idx = (size_t)row * N + col;
        const float c = alpha * acc[i][j];
        C[idx] = beta != 0.0f ? mad(beta, C[idx], c) : c;
      }
    }
  }
}
