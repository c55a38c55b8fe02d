// Register-blocked GEMM: each work-group computes an MWG x NWG tile of C = alpha*A*B + beta*C (row-major) from KWG-deep tiles of A (stored transposed) and B in local memory, each work-item a WPTM x WPTN register block read with vector loads; DB=1 double-buffers the local tiles.
/*
  Macros (default)   meaning
    PRECISION 32|16|116  storage type of A, B, C: float, or half (vload_half/vstore_half, no cl_khr_fp16
                     needed). Local tiles and accumulation are always float.
    MWG  64          rows of C per work-group
    NWG  64          columns of C per work-group
    KWG  16          depth of one K tile
    MDIMC 16         work-items along M  (local size dim 1)
    NDIMC 16         work-items along N  (local size dim 0)
    VWM  4           width of local-memory reads of A (1,2,4,8)
    VWN  4           width of local-memory reads of B (1,2,4,8)
    VW   4           width of global loads of A (along K) and of B (along N) (1,2,4,8)
    PADA             padding (floats) of each row of the transposed A tile (no default: the
                     host's, src/ops/gemm_rules.hpp pad_a)
    PADB             padding (floats) of each row of the B tile (the host's: pad_b)
    DB   0|1         1: two local buffers, next tile prefetched into registers while computing
    KSPLIT 1         >1: split K into KSPLIT slices of whole K tiles, one per index of global dim 2;
                     slice z writes its partial product (float, no alpha, beta) to P + z*M*N, and
                     the last work-group of each tile to finish adds the slices into C
                     (gemm_output.cl: one launch)
  Derived: WPTM = MWG/MDIMC, WPTN = NWG/NDIMC (outputs per work-item), NT = MDIMC*NDIMC.
  Constraints (checked with #error):
    MWG % (MDIMC*VWM) == 0, NWG % (NDIMC*VWN) == 0, KWG % VW == 0, NWG % VW == 0,
    (MWG*KWG) % (VW*NT) == 0, (KWG*NWG) % (VW*NT) == 0, PADA % VWM == 0, PADB % VW == 0, PADB % VWN == 0.
  Local memory: (DB+1) * KWG * ((MWG+PADA) + (NWG+PADB)) * 4 bytes, and 4 with KSPLIT > 1.
  Registers per work-item: about WPTM*WPTN + WPTM + WPTN + (MWG+NWG)*KWG/NT floats.
  Kernel: matmul_reg(M, N, K, alpha, beta, A, B, C): A M x K, B K x N, C M x N, row-major, dense.
    With KSPLIT > 1 two more: P (KSPLIT*M*N floats) and arrivals (one int per work-group of a
    slice, all 0 before the first launch; each launch leaves them 0).
    Element offsets are 32-bit int: M*K, K*N and M*N must stay below 2^31 (the host refuses more).
    beta == 0 does not read C.
  NDRange: local = (NDIMC, MDIMC); global = (ceil(N/NWG)*NDIMC, ceil(M/MWG)*MDIMC), and KSPLIT
    along dim 2 (local 1); KSPLIT*M*N < 2^31.
  Any M, N, K >= 1 (M*K, K*N, M*N < 2^31): loads outside A/B are zero-filled at the tile load;
  vector global loads are used when K % VW == 0 (A) and N % VW == 0 (B), element loads otherwise
  (a uniform per-launch choice; buffers must be VW*4-byte aligned, as clCreateBuffer's are).
*/
#ifndef PRECISION
#define PRECISION 32
#endif
#ifndef MWG
#define MWG 64
#endif
#ifndef NWG
#define NWG 64
#endif
#ifndef KWG
#define KWG 16
#endif
#ifndef MDIMC
#define MDIMC 16
#endif
#ifndef NDIMC
#define NDIMC 16
#endif
#ifndef VWM
#define VWM 4
#endif
#ifndef VWN
#define VWN 4
#endif
#ifndef VW
#define VW 4
#endif
#if !defined(PADA) || !defined(PADB)
#error "PADA and PADB are the host's (src/ops/gemm_rules.hpp: pad_a, pad_b): pass -DPADA=.. -DPADB=.."
#endif
#ifndef DB
#define DB 0
#endif
#ifndef KSPLIT
#define KSPLIT 1
#endif

#include "register_blocks.cl"  // WPTM, WPTN, floatM, floatN, the product of a tile row
#define NT (MDIMC * NDIMC)
#define KV (KWG / VW)                 // vectors per row of the A tile
#define NV (NWG / VW)                 // vectors per row of the B tile
#define LA ((MWG * KWG) / (VW * NT))  // A vectors loaded per work-item per tile
#define LB ((KWG * NWG) / (VW * NT))  // B vectors loaded per work-item per tile

#if MWG % (MDIMC * VWM) != 0
#error "MWG must be a multiple of MDIMC*VWM"
#endif
#if NWG % (NDIMC * VWN) != 0
#error "NWG must be a multiple of NDIMC*VWN"
#endif
#if KWG % VW != 0 || NWG % VW != 0
#error "KWG and NWG must be multiples of VW"
#endif
#if (MWG * KWG) % (VW * NT) != 0 || (KWG * NWG) % (VW * NT) != 0
#error "MWG*KWG and KWG*NWG must be multiples of VW*MDIMC*NDIMC"
#endif
#if PADA % VWM != 0 || PADB % VW != 0 || PADB % VWN != 0
#error "PADA must be a multiple of VWM, PADB of VW and VWN"
#endif

// Vectors from private arrays (register_blocks.cl has the other way).
#define FROMARR_1(t) ((t)[0])
#define FROMARR_2(t) vload2(0, (t))
#define FROMARR_4(t) vload4(0, (t))
#define FROMARR_8(t) vload8(0, (t))

#include "storage.cl"  // real, LD, ST by PRECISION
// Vector loads of A and B as floats, by storage.
#if PRECISION == 16
#define GLOAD_1(p, i) vload_half((i), (p))
#define GLOAD_2(p, i) vload_half2(0, (p) + (i))
#define GLOAD_4(p, i) vload_half4(0, (p) + (i))
#define GLOAD_8(p, i) vload_half8(0, (p) + (i))
#elif PRECISION == 116
#define GLOAD_1(p, i) LD(p, i)
#define GLOAD_2(p, i) as_float2(convert_uint2(vload2(0, (p) + (i))) << 16)
#define GLOAD_4(p, i) as_float4(convert_uint4(vload4(0, (p) + (i))) << 16)
#define GLOAD_8(p, i) as_float8(convert_uint8(vload8(0, (p) + (i))) << 16)
#else
// Aligned vector loads: the caller guarantees i % width == 0 and an aligned buffer.
#define GLOAD_1(p, i) ((p)[i])
#define GLOAD_2(p, i) (*(__global const float2*)((p) + (i)))
#define GLOAD_4(p, i) (*(__global const float4*)((p) + (i)))
#define GLOAD_8(p, i) (*(__global const float8*)((p) + (i)))
#endif

#include "gemm_output.cl"  // store_output; counted_last and store_tile_sums for KSPLIT > 1
#if KSPLIT > 1
#define SLICE_ARGUMENTS , __global float* P, __global int* arrivals
#else
#define SLICE_ARGUMENTS
#endif
typedef CAT(float, VW) floatV;

// Global -> registers: this work-item's LA vectors of the A tile starting at column k0.
static inline void load_a(__global const real* restrict A, float* ra, const int bm, const int k0,
                          const int M, const int K, const int tid, const int vec) {
#pragma unroll
  for (int l = 0; l < LA; ++l) {
    const int v = tid + l * NT;
    const int gr = bm + v / KV, gk = k0 + (v % KV) * VW;
    if (vec) {
      const floatV x = (gr < M && gk < K) ? CAT(GLOAD_, VW)(A, gr * K + gk) : (floatV)(0.0f);
      CAT(TOARR_, VW)(x, ra + l * VW);
    } else {
#pragma unroll
      for (int j = 0; j < VW; ++j) ra[l * VW + j] = (gr < M && gk + j < K) ? LD(A, gr * K + gk + j) : 0.0f;
    }
  }
}

// Global -> registers: this work-item's LB vectors of the B tile starting at row k0.
static inline void load_b(__global const real* restrict B, floatV* rb, const int bn, const int k0,
                          const int N, const int K, const int tid, const int vec) {
#pragma unroll
  for (int l = 0; l < LB; ++l) {
    const int v = tid + l * NT;
    const int gk = k0 + v / NV, gc = bn + (v % NV) * VW;
    if (vec) {
      rb[l] = (gk < K && gc < N) ? CAT(GLOAD_, VW)(B, gk * N + gc) : (floatV)(0.0f);
    } else {
      float t[VW];
#pragma unroll
      for (int j = 0; j < VW; ++j) t[j] = (gk < K && gc + j < N) ? LD(B, gk * N + gc + j) : 0.0f;
      rb[l] = CAT(FROMARR_, VW)(t);
    }
  }
}

// Registers -> local memory: A transposed into As[k][m], B as is.
static inline void store_tiles(__local float (*As)[MWG + PADA], __local float (*Bs)[NWG + PADB],
                               const float* ra, const floatV* rb, const int tid) {
#pragma unroll
  for (int l = 0; l < LA; ++l) {
    const int v = tid + l * NT;
#pragma unroll
    for (int j = 0; j < VW; ++j) As[(v % KV) * VW + j][v / KV] = ra[l * VW + j];
  }
#pragma unroll
  for (int l = 0; l < LB; ++l) {
    const int v = tid + l * NT;
    *(__local floatV*)&Bs[v / NV][(v % NV) * VW] = rb[l];
  }
}

__kernel __attribute__((reqd_work_group_size(NDIMC, MDIMC, 1)))
void matmul_reg(const int M, const int N, const int K, const float alpha, const float beta,
                __global const real* restrict A, __global const real* restrict B,
                __global real* C SLICE_ARGUMENTS) {
  // A is stored transposed (As[k][m]) so that a work-item's WPTM values of one k are contiguous.
  // Vector reads and writes of these tiles need them aligned to the vector size (NVIDIA faults otherwise).
  __local float As[DB + 1][KWG][MWG + PADA] __attribute__((aligned(64)));
  __local float Bs[DB + 1][KWG][NWG + PADB] __attribute__((aligned(64)));
  const int tx = get_local_id(0), ty = get_local_id(1);
  const int tid = ty * NDIMC + tx;
  const int bm = get_group_id(1) * MWG, bn = get_group_id(0) * NWG;
  const int vecA = (K % VW) == 0, vecB = (N % VW) == 0;

  float acc[WPTM][WPTN];
#pragma unroll
  for (int i = 0; i < WPTM; ++i)
#pragma unroll
    for (int j = 0; j < WPTN; ++j) acc[i][j] = 0.0f;

  float ra[LA * VW];
  floatV rb[LB];
#if KSPLIT > 1
  // This slice's K tiles [first, ntiles); a slice past K has none and writes zeros.
  const int per_slice = ((K + KWG - 1) / KWG + KSPLIT - 1) / KSPLIT;
  const int first = get_group_id(2) * per_slice;
  const int ntiles = min((K + KWG - 1) / KWG, first + per_slice);
#else
  const int first = 0;
  const int ntiles = (K + KWG - 1) / KWG;
#endif

#if DB
  load_a(A, ra, bm, first * KWG, M, K, tid, vecA);
  load_b(B, rb, bn, first * KWG, N, K, tid, vecB);
  store_tiles(As[0], Bs[0], ra, rb, tid);
  barrier(CLK_LOCAL_MEM_FENCE);
#endif
  for (int t = first; t < ntiles; ++t) {
#if DB
    const int cur = (t - first) & 1;
    const int more = t + 1 < ntiles;
    if (more) {  // issue the next tile's global loads before computing on the current one
      load_a(A, ra, bm, (t + 1) * KWG, M, K, tid, vecA);
      load_b(B, rb, bn, (t + 1) * KWG, N, K, tid, vecB);
    }
#else
    const int cur = 0;
    load_a(A, ra, bm, t * KWG, M, K, tid, vecA);
    load_b(B, rb, bn, t * KWG, N, K, tid, vecB);
    store_tiles(As[0], Bs[0], ra, rb, tid);
    barrier(CLK_LOCAL_MEM_FENCE);
#endif
#pragma unroll
    for (int kk = 0; kk < KWG; ++kk) MULTIPLY_TILE_ROW(As[cur][kk], Bs[cur][kk]);
#if DB
    // The other buffer was last read in iteration t-1, which ended with a barrier.
    if (more) store_tiles(As[cur ^ 1], Bs[cur ^ 1], ra, rb, tid);
#endif
    barrier(CLK_LOCAL_MEM_FENCE);
  }

#if KSPLIT > 1
  // This slice's partial products, then the count; the work-group that counts last adds every
  // slice's tile into C (gemm_output.cl).
  __global float* const slice = P + (size_t)get_group_id(2) * M * N;
#pragma unroll
  for (int i = 0; i < WPTM; ++i) {
    const int row = bm + BLOCK_ROW(i);
    if (row >= M) continue;  // as the store of C below: 95 registers, not 121 (nvptx-proxy.sh)
#pragma unroll
    for (int j = 0; j < WPTN; ++j) {
      const int col = bn + BLOCK_COL(j);
      if (col < N) slice[row * N + col] = acc[i][j];
    }
  }
  __local int last;
  if (counted_last(arrivals, &last)) {
    store_tile_sums(C, P, alpha, beta, M, N, bm, bn, MWG, NWG, tid, NDIMC * MDIMC);
  }
#else
#pragma unroll
  for (int i = 0; i < WPTM; ++i) {
    const int row = bm + BLOCK_ROW(i);
    if (row >= M) continue;
#pragma unroll
    for (int j = 0; j < WPTN; ++j) {
      const int col = bn + BLOCK_COL(j);
      if (col < N) store_output(C, row * N + col, alpha, beta, acc[i][j]);
    }
  }
#endif
}
