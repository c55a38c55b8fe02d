// Skinny GEMM for few rows of C (M <= 64: a batch of tokens through a layer; M = 1 is a GEMV): each work-group computes WPTM rows x NDIMC*VWN columns of C = alpha*A*B + beta*C (row-major), its KDIMC rows of work-items splitting K and summing their partial results in local memory once, after the K loop.
/*
  Macros (default)   meaning
    PRECISION 32|16|116  storage type of A, B, C (float, or half via vload_half/vstore_half); math in float.
    WPTM  4          rows of C per work-group (every work-item holds all of them)
    VWN   4          vector width along N (1, 2, 4)
    NDIMC 32         work-items along N (local dim 0): adjacent work-items read adjacent vectors of B
    KDIMC 8          work-items along K (local dim 1): work-item ty sums k = ty, ty + KDIMC, ...
    KSPLIT 1         >1: K is cut into KSPLIT slices of ceil(K/KSPLIT), one per index of global
                     dim 2; slice z writes its partial product (float, no alpha, beta) to
                     P + z*M*N, and the last of a tile's KSPLIT work-groups to finish adds the
                     slices into C (no second launch: a GEMV's time is a few microseconds, and
                     a launch's gap and ramp cost some of them)
  Registers per work-item: WPTM vectors of VWN floats + 1.
  Local memory: KDIMC * NDIMC * VWN * 4 bytes when KDIMC > 1 (one row of partial sums at a time),
    and 4 with KSPLIT > 1.
  Kernel: matmul_skinny(M, N, K, alpha, beta, A, B, C): row-major, dense; beta == 0 does not read C.
    With KSPLIT > 1 two more: P (KSPLIT*M*N floats) and arrivals (one int per work-group of a
    slice, all 0 before the first launch; each launch leaves them 0 again).
    Element offsets are 32-bit int: M*K, K*N and M*N must stay below 2^31 (the host refuses more).
  NDRange: local = (NDIMC, KDIMC); global = (ceil(N / (NDIMC*VWN)) * NDIMC, ceil(M / WPTM) * KDIMC),
    and KSPLIT along dim 2 (local 1); KSPLIT*M*N < 2^31.
  A tile's slices meet through arrivals (gemm_output.cl): the work-group that finishes its slice
  last adds the slices in slice order and stores C.
  Any M, N, K >= 1. B is read once per group of WPTM rows, with aligned vector loads when
  N % VWN == 0 (then every work-item's vector is inside B or wholly past it); otherwise
  zero-filled element loads (a uniform choice, outside the K loop). Rows past M are clamped to
  M-1 for loading and not stored. The only barriers are after the K loop, reached by every
  work-item (the only early return is after the last of them).
*/
#ifndef PRECISION
#define PRECISION 32
#endif
#ifndef WPTM
#define WPTM 4
#endif
#ifndef VWN
#define VWN 4
#endif
#ifndef NDIMC
#define NDIMC 32
#endif
#ifndef KDIMC
#define KDIMC 8
#endif
#ifndef KSPLIT
#define KSPLIT 1
#endif

#if VWN != 1 && VWN != 2 && VWN != 4
#error "VWN must be 1, 2 or 4"
#endif

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
typedef float float1;
#define TOARR_1(v, t) ((t)[0] = (v))
#define TOARR_2(v, t) vstore2((v), 0, (t))
#define TOARR_4(v, t) vstore4((v), 0, (t))
#define FROMARR_1(t) ((t)[0])
#define FROMARR_2(t) vload2(0, (t))
#define FROMARR_4(t) vload4(0, (t))

#include "storage.cl"  // real, LD, ST by PRECISION
// Vector loads of A and B as floats, by storage.
#if PRECISION == 16
#define GLOAD_1(p, i) vload_half((i), (p))
#define GLOAD_2(p, i) vload_half2(0, (p) + (i))
#define GLOAD_4(p, i) vload_half4(0, (p) + (i))
#elif PRECISION == 116
#define GLOAD_1(p, i) LD(p, i)
#define GLOAD_2(p, i) as_float2(convert_uint2(vload2(0, (p) + (i))) << 16)
#define GLOAD_4(p, i) as_float4(convert_uint4(vload4(0, (p) + (i))) << 16)
#else
#define GLOAD_1(p, i) ((p)[i])
#define GLOAD_2(p, i) (*(__global const float2*)((p) + (i)))
#define GLOAD_4(p, i) (*(__global const float4*)((p) + (i)))
#endif

typedef CAT(float, VWN) floatN;

#include "gemm_output.cl"  // store_output; counted_last and slices_sum for KSPLIT > 1
#if KSPLIT > 1
#define SLICE_ARGUMENTS , __global float* P, __global int* arrivals
#else
#define SLICE_ARGUMENTS
#endif

__kernel __attribute__((reqd_work_group_size(NDIMC, KDIMC, 1)))
void matmul_skinny(const int M, const int N, const int K, const float alpha, const float beta,
                   __global const real* restrict A, __global const real* restrict B,
                   __global real* C SLICE_ARGUMENTS) {
  const int tx = get_local_id(0), ty = get_local_id(1);
  const int col0 = (get_group_id(0) * NDIMC + tx) * VWN;
  const int row0 = get_group_id(1) * WPTM;
  int arow[WPTM];  // element offset of each row of A, clamped into A
#pragma unroll
  for (int i = 0; i < WPTM; ++i) arow[i] = min(row0 + i, M - 1) * K;

  floatN acc[WPTM];
#pragma unroll
  for (int i = 0; i < WPTM; ++i) acc[i] = (floatN)(0.0f);
#if KSPLIT > 1
  // This slice's k in [k_begin, k_end); a slice past K has none and writes zeros.
  const int per_slice = (K + KSPLIT - 1) / KSPLIT;
  const int k_begin = get_group_id(2) * per_slice, k_end = min(K, k_begin + per_slice);
#else
  const int k_begin = 0, k_end = K;
#endif

  if (col0 < N) {
    if (N % VWN == 0) {  // col0 % VWN == 0 too: the vector is inside the row
      for (int k = k_begin + ty; k < k_end; k += KDIMC) {
        const floatN b = CAT(GLOAD_, VWN)(B, k * N + col0);
#pragma unroll
        for (int i = 0; i < WPTM; ++i) acc[i] = mad((floatN)(LD(A, arow[i] + k)), b, acc[i]);
      }
    } else {
      for (int k = k_begin + ty; k < k_end; k += KDIMC) {
        float t[VWN];
#pragma unroll
        for (int e = 0; e < VWN; ++e) t[e] = col0 + e < N ? LD(B, k * N + col0 + e) : 0.0f;
        const floatN b = CAT(FROMARR_, VWN)(t);
#pragma unroll
        for (int i = 0; i < WPTM; ++i) acc[i] = mad((floatN)(LD(A, arow[i] + k)), b, acc[i]);
      }
    }
  }

#if KDIMC > 1
  // Partial sums of one row at a time: the KDIMC work-items of a column add theirs up.
  __local floatN partial[KDIMC][NDIMC];
#pragma unroll
  for (int i = 0; i < WPTM; ++i) {
    partial[ty][tx] = acc[i];
    barrier(CLK_LOCAL_MEM_FENCE);
    if (ty == 0) {
      floatN sum = partial[0][tx];
      for (int q = 1; q < KDIMC; ++q) sum += partial[q][tx];
      acc[i] = sum;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
#endif

  // This work-group's result: C, or with KSPLIT > 1 its slice's partial products.
#if KSPLIT > 1
  __global float* const slice = P + (size_t)get_group_id(2) * M * N;
#endif
  if (ty == 0 && col0 < N) {
#pragma unroll
    for (int i = 0; i < WPTM; ++i) {
      const int row = row0 + i;
      if (row < M) {
        float t[VWN];
        CAT(TOARR_, VWN)(acc[i], t);
#pragma unroll
        for (int e = 0; e < VWN; ++e) {
          const int col = col0 + e;
#if KSPLIT > 1
          if (col < N) slice[row * N + col] = t[e];
#else
          if (col < N) store_output(C, row * N + col, alpha, beta, t[e]);
#endif
        }
      }
    }
  }
#if KSPLIT > 1
  // The last of the tile's slices to count in adds them all. Its KDIMC rows of work-items share
  // the tile's rows (one row of work-items alone would add KDIMC times as many).
  __local int last;
  if (!counted_last(arrivals, &last)) return;
  if (col0 < N) {
    for (int i = ty; i < WPTM && row0 + i < M; i += KDIMC) {
#pragma unroll
      for (int e = 0; e < VWN; ++e) {
        const int idx = (row0 + i) * N + col0 + e;
        if (col0 + e < N) store_output(C, idx, alpha, beta, slices_sum(P, idx, M, N));
      }
    }
  }
#endif
}
