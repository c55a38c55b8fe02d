// TF32 rounding for kernels that feed f32 data to tensor cores which read it truncated
// (wgmma's .tf32 form ignores an operand's low 13 bits): tf32_rounded(), #included by
// transpose.cl (ROUND_TF32) and used here by tf32_round, which the wgmma_tf32 family of matmul
// runs on A before each product (src/ops/matmul.cpp). Portable OpenCL C: any device runs it.
#ifndef TUNEKIT_TF32_CL
#define TUNEKIT_TF32_CL

// x rounded to TF32 as PTX's cvt.rna.tf32.f32 rounds it (to nearest, ties away from zero: add
// half of the 13 dropped bits' unit, then drop them); infinities and NaNs as they are (the carry
// would turn a NaN's payload into infinity). The host's twin: tunekit::ops::tf32_rounded.
static inline float tf32_rounded(const float x) {
  const uint bits = as_uint(x);
  return (bits & 0x7f800000u) == 0x7f800000u ? x : as_float((bits + 0x1000u) & 0xffffe000u);
}

// out[i] = tf32_rounded(in[i]) for i < 4 * n4 (n4 float4 vectors; global size >= n4).
__kernel void tf32_round(const int n4, __global const float4* restrict in,
                         __global float4* restrict out) {
  const int i = get_global_id(0);
  if (i >= n4) return;
  const float4 v = in[i];
  out[i] = (float4)(tf32_rounded(v.x), tf32_rounded(v.y), tf32_rounded(v.z), tf32_rounded(v.w));
}

#endif  // TUNEKIT_TF32_CL
