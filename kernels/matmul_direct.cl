// Direct register-blocked GEMM without local memory: each work-item computes a WPTM x (NVEC*VWN) block of C = alpha*A*B + beta*C (row-major) with explicit vector types, streaming A and B from global memory (for CPUs and small matrices).
/*
  Macros (default)   meaning
    PRECISION 32|16|116  storage type of A, B, C (float, or half via vload_half/vstore_half); math in float.
    WPTM 8           rows of C per work-item
    VWN  8           vector width along N (1,2,4,8,16)
    NVEC 2           vectors along N per work-item; a work-item covers NVEC*VWN contiguous columns
  Registers per work-item: WPTM*NVEC vectors of VWN floats (accumulators) + NVEC (B) + 1.
  Local memory: none.
  Kernel: matmul_direct(M, N, K, alpha, beta, A, B, C): row-major, dense; beta == 0 does not read C.
    Element offsets are 32-bit int: M*K, K*N and M*N must stay below 2^31 (the host refuses more).
  NDRange: global = (roundup(ceil(N/(NVEC*VWN)), lx), roundup(ceil(M/WPTM), ly)) for any local
    size (lx, ly) the device accepts. On PoCL a tall work-group (lx = 1, ly = 8..32) reuses the
    B panel of one column block across the rows of the group.
  Any M, N, K >= 1: work-items whose column block is inside C and N % VWN == 0 use aligned vector
  loads; the others take a zero-filled element-wise path (a per-work-item choice, outside the K loop).
  Rows past M are clamped to M-1 for loading and not stored.
*/
#ifndef PRECISION
#define PRECISION 32
#endif
#ifndef WPTM
#define WPTM 8
#endif
#ifndef VWN
#define VWN 8
#endif
#ifndef NVEC
#define NVEC 2
#endif

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
typedef float float1;
#define TOARR_1(v, t) ((t)[0] = (v))
#define TOARR_2(v, t) vstore2((v), 0, (t))
#define TOARR_4(v, t) vstore4((v), 0, (t))
#define TOARR_8(v, t) vstore8((v), 0, (t))
#define TOARR_16(v, t) vstore16((v), 0, (t))
#define FROMARR_1(t) ((t)[0])
#define FROMARR_2(t) vload2(0, (t))
#define FROMARR_4(t) vload4(0, (t))
#define FROMARR_8(t) vload8(0, (t))
#define FROMARR_16(t) vload16(0, (t))

#include "storage.cl"  // real, LD, ST by PRECISION
// Vector loads of A and B as floats, by storage.
#if PRECISION == 16
#define GLOAD_1(p, i) vload_half((i), (p))
#define GLOAD_2(p, i) vload_half2(0, (p) + (i))
#define GLOAD_4(p, i) vload_half4(0, (p) + (i))
#define GLOAD_8(p, i) vload_half8(0, (p) + (i))
#define GLOAD_16(p, i) vload_half16(0, (p) + (i))
#elif PRECISION == 116
#define GLOAD_1(p, i) LD(p, i)
#define GLOAD_2(p, i) as_float2(convert_uint2(vload2(0, (p) + (i))) << 16)
#define GLOAD_4(p, i) as_float4(convert_uint4(vload4(0, (p) + (i))) << 16)
#define GLOAD_8(p, i) as_float8(convert_uint8(vload8(0, (p) + (i))) << 16)
#define GLOAD_16(p, i) as_float16(convert_uint16(vload16(0, (p) + (i))) << 16)
#else
#define GLOAD_1(p, i) ((p)[i])
#define GLOAD_2(p, i) (*(__global const float2*)((p) + (i)))
#define GLOAD_4(p, i) (*(__global const float4*)((p) + (i)))
#define GLOAD_8(p, i) (*(__global const float8*)((p) + (i)))
#define GLOAD_16(p, i) (*(__global const float16*)((p) + (i)))
#endif
typedef CAT(float, VWN) floatN;

__kernel void matmul_direct(const int M, const int N, const int K, const float alpha, const float beta,
                            __global const real* restrict A, __global const real* restrict B,
                            __global real* C) {
  const int col0 = get_global_id(0) * (NVEC * VWN);
  const int row0 = get_global_id(1) * WPTM;
  if (col0 >= N || row0 >= M) return;
  int arow[WPTM];  // element offset of each row of A, clamped into A
#pragma unroll
  for (int i = 0; i < WPTM; ++i) arow[i] = min(row0 + i, M - 1) * K;

  floatN acc[WPTM][NVEC];
#pragma unroll
  for (int i = 0; i < WPTM; ++i)
#pragma unroll
    for (int v = 0; v < NVEC; ++v) acc[i][v] = (floatN)(0.0f);

  if (N % VWN == 0 && col0 + NVEC * VWN <= N) {
    for (int k = 0; k < K; ++k) {
      floatN b[NVEC];
#pragma unroll
      for (int v = 0; v < NVEC; ++v) b[v] = CAT(GLOAD_, VWN)(B, k * N + col0 + v * VWN);
#pragma unroll
      for (int i = 0; i < WPTM; ++i) {
        const float a = LD(A, arow[i] + k);
#pragma unroll
        for (int v = 0; v < NVEC; ++v) acc[i][v] = mad((floatN)(a), b[v], acc[i][v]);
      }
    }
  } else {  // right edge of C: zero-filled element loads
    for (int k = 0; k < K; ++k) {
      floatN b[NVEC];
#pragma unroll
      for (int v = 0; v < NVEC; ++v) {
        float t[VWN];
#pragma unroll
        for (int e = 0; e < VWN; ++e) {
          const int c = col0 + v * VWN + e;
          t[e] = c < N ? LD(B, k * N + c) : 0.0f;
        }
        b[v] = CAT(FROMARR_, VWN)(t);
      }
#pragma unroll
      for (int i = 0; i < WPTM; ++i) {
        const float a = LD(A, arow[i] + k);
#pragma unroll
        for (int v = 0; v < NVEC; ++v) acc[i][v] = mad((floatN)(a), b[v], acc[i][v]);
      }
    }
  }

#pragma unroll
  for (int i = 0; i < WPTM; ++i) {
    const int row = row0 + i;
    if (row >= M) break;
#pragma unroll
    for (int v = 0; v < NVEC; ++v) {
      float t[VWN];
      CAT(TOARR_, VWN)(acc[i][v], t);
#pragma unroll
      for (int e = 0; e < VWN; ++e) {
        const int col = col0 + v * VWN + e;
        if (col < N) {
          const int idx = row * N + col;
          const float c = alpha * t[e];
          ST(C, idx, beta != 0.0f ? mad(beta, LD(C, idx), c) : c);
        }
      }
    }
  }
}
