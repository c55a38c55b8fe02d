// How a GEMM stores A, B and C, by PRECISION: float (32, the default), half (16: vload_half and
// vstore_half, no cl_khr_fp16 needed) or bf16 (116: the upper 16 bits of a float, stores rounded
// to nearest even, NaN kept NaN). Defines `real`, LD(p, i) (a float) and ST(p, i, v). Included by
// the portable GEMMs (matmul_naive.cl, matmul_tiled.cl, matmul_direct.cl, matmul_reg.cl,
// matmul_skinny.cl), matmul_sum.cl and matmul_edges.cl.
#ifndef PRECISION
#define PRECISION 32
#endif
#if PRECISION == 16
typedef half real;
#define LD(p, i) vload_half((i), (p))
#define ST(p, i, v) vstore_half((v), (i), (p))
#elif PRECISION == 116
typedef ushort real;
static inline ushort bf16_of(float v) {
  const uint b = as_uint(v);
  return isnan(v) ? (ushort)((b >> 16) | 0x40) : (ushort)((b + 0x7fffu + ((b >> 16) & 1u)) >> 16);
}
#define LD(p, i) as_float((uint)(p)[i] << 16)
#define ST(p, i, v) ((p)[i] = bf16_of(v))
#else
typedef float real;
#define LD(p, i) ((p)[i])
#define ST(p, i, v) ((p)[i] = (v))
#endif
