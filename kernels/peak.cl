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
      lines), eight strides of each buffer a step into eight sums; one float per work-item
      stored, so that no compiler drops the loads. Memory reads faster than a copy moves (the
      reduce op at 105-108% of it on the H200): a reduction's roofline is this rate. Eight
      strides a step, not two: 16 loads in flight read 6% faster on the H200 (kernel_lab's
      read_vec4). NDRange: any global (the host launches about one wave of a GPU), any local.
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

kernel void peak_read(global const float4* restrict a, global const float4* restrict b,
                      global float* restrict out, uint n) {
  const uint stride = get_global_size(0);  // i stays under 9 n: no overflow for n < 2^28
  uint i = get_global_id(0);
  float4 s[8];
#pragma unroll
  for (int k = 0; k < 8; ++k) s[k] = (float4)(0.0f);
  for (; i + 7 * stride < n; i += 8 * stride) {
#pragma unroll
    for (int k = 0; k < 8; ++k) s[k] += a[i + k * stride] + b[i + k * stride];
  }
  for (; i < n; i += stride) s[0] += a[i] + b[i];
  const float4 sum = ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
  out[get_global_id(0)] = (sum.x + sum.y) + (sum.z + sum.w);
}
