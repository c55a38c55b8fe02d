// Device peaks for tunekit's throughput bounds (src/cl/device_peak.cpp): arithmetic and memory.
/*
  peak_fma(iterations, seed, out)  8 independent float16 multiply-add chains per work-item,
      `iterations` times: 256 FLOP per iteration and work-item (wide vectors and independent
      chains, so that a CPU's SIMD units and a GPU's pipelines are all busy). The chains converge to 1 (no
      overflow, no denormals); the sum is stored so that no compiler can drop them.
      NDRange: any.
  peak_copy(in, out)  one float4 per work-item. NDRange: global = elements / 4, any local.
  peak_read(a, b, out, n)  sums the n float4s of a and of b (the copy's source and destination:
      the same traffic as the copy), a global size apart (each step of the NDRange reads whole
      lines), in four chains; one float per work-item stored, so that no compiler drops the
      loads. Memory reads faster than a copy moves (the reduce op at 105-108% of it on the H200):
      a reduction's roofline is this rate. NDRange: any global (the host launches about one
      wave of a GPU), any local.
*/
kernel void peak_fma(int iterations, float seed, global float* out) {
  const float s = seed + (float)get_global_id(0) * 1e-7f;
  float16 a0 = (float16)(s) + (float16)(0.0f, 0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f, 0.7f, 0.8f,
                                         0.9f, 1.0f, 1.1f, 1.2f, 1.3f, 1.4f, 1.5f);
  float16 a1 = a0 + 0.01f, a2 = a0 + 0.02f, a3 = a0 + 0.03f;
  float16 a4 = a0 + 0.04f, a5 = a0 + 0.05f, a6 = a0 + 0.06f, a7 = a0 + 0.07f;
  const float16 m = (float16)(0.999f);
  const float16 c = (float16)(0.001f);
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
  const float16 sum16 = ((a0 + a1) + (a2 + a3)) + ((a4 + a5) + (a6 + a7));
  const float4 sum = sum16.lo.lo + sum16.lo.hi + sum16.hi.lo + sum16.hi.hi;
  out[get_global_id(0)] = sum.x + sum.y + sum.z + sum.w;
}

kernel void peak_copy(global const float4* in, global float4* out) {
  out[get_global_id(0)] = in[get_global_id(0)];
}

kernel void peak_read(global const float4* a, global const float4* b, global float* out,
                      uint n) {
  const size_t stride = get_global_size(0);
  size_t i = get_global_id(0);
  float4 s0 = (float4)(0.0f), s1 = s0, s2 = s0, s3 = s0;
  for (; i + stride < n; i += 2 * stride) {
    s0 += a[i];
    s1 += b[i];
    s2 += a[i + stride];
    s3 += b[i + stride];
  }
  if (i < n) {
    s0 += a[i];
    s1 += b[i];
  }
  const float4 s = (s0 + s1) + (s2 + s3);
  out[get_global_id(0)] = (s.x + s.y) + (s.z + s.w);
}
