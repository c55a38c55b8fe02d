// Device peaks for tunekit's throughput bounds (src/cl/device_peak.cpp): arithmetic and memory.
/*
  peak_fma(iterations, seed, out)  8 independent float4 multiply-add chains per work-item,
      `iterations` times: 64 FLOP per iteration and work-item. The chains converge to 1 (no
      overflow, no denormals); the sum is stored so that no compiler can drop them.
      NDRange: any.
  peak_copy(in, out)  one float4 per work-item. NDRange: global = elements / 4, any local.
*/
kernel void peak_fma(int iterations, float seed, global float* out) {
  const float s = seed + (float)get_global_id(0) * 1e-7f;
  float4 a0 = (float4)(s, s + 0.1f, s + 0.2f, s + 0.3f);
  float4 a1 = a0 + 0.01f, a2 = a0 + 0.02f, a3 = a0 + 0.03f;
  float4 a4 = a0 + 0.04f, a5 = a0 + 0.05f, a6 = a0 + 0.06f, a7 = a0 + 0.07f;
  const float4 m = (float4)(0.999f);
  const float4 c = (float4)(0.001f);
  for (int i = 0; i < iterations; ++i) {
    a0 = mad(a0, m, c);
    a1 = mad(a1, m, c);
    a2 = mad(a2, m, c);
    a3 = mad(a3, m, c);
    a4 = mad(a4, m, c);
    a5 = mad(a5, m, c);
    a6 = mad(a6, m, c);
    a7 = mad(a7, m, c);
  }
  const float4 sum = ((a0 + a1) + (a2 + a3)) + ((a4 + a5) + (a6 + a7));
  out[get_global_id(0)] = sum.x + sum.y + sum.z + sum.w;
}

kernel void peak_copy(global const float4* in, global float4* out) {
  out[get_global_id(0)] = in[get_global_id(0)];
}
