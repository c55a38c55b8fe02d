// Lab-only kernels beside transpose.cl (issue 32): a vector copy, the bandwidth a kernel of ours
// reaches with no transposition at all (a ceiling to set against clEnqueueCopyBuffer's), and a
// transpose whose every local-memory access is a 16-byte vector: 4 x 4 blocks transposed in
// registers, stored into an XOR-swizzled float4 tile (no padding, no bank conflicts). Global
// accesses through float4 pointers: vload4 needs only 4-byte alignment, and NVIDIA then splits it.
/*
  Macros (default)
    ITEMS 4   copy_vec4: float4s per work-item, all loaded before the first store
    STRIDES 2 read_vec4: float4s each buffer gives a work-item per step of its loop
    LY 8      transpose_swizzled: work-items along dim 1 (16 along dim 0); each moves 64 / LY
              float4s in and as many out of a 64 x 64 tile
    SWZ 1     0: the same tile without the swizzle (its 8-way conflicts on the stores, for comparison)
  Kernels
    copy_vec4(n4, in, out)  out[i] = in[i] for float4 i < n4; work-group w copies the ITEMS * lx
        float4s from w * ITEMS * lx, consecutive work-items on consecutive float4s.
        NDRange: local lx; global = roundup(ceil(n4 / ITEMS), lx).
    read_vec4(n4, a, b, out)  out[g] = the sum of float4s g, g + G, g + 2G, ... (< n4) of a and
        b, G the global size, STRIDES strides a step: kernels/peak.cl's peak_read is STRIDES 8
        at one wave, the fastest form on the H200 (4.2 TB/s; STRIDES 2 read 4.0). NDRange: any.
    transpose_swizzled(M, N, in, out)  out (N x M) = in (M x N)^T, row-major, any M and N; whole
        tiles when M and N are multiples of 4, element by element otherwise.
        NDRange: local (16, LY); global = (ceil(N / 64) * 16, ceil(M / 64) * LY).
*/
#ifndef ITEMS
#define ITEMS 4
#endif
#ifndef LY
#define LY 8
#endif
#ifndef STRIDES
#define STRIDES 2
#endif
#ifndef SWZ
#define SWZ 1
#endif
#if 16 % LY != 0
#error "LY must divide 16"
#endif

__kernel void copy_vec4(const int n4, __global const float4* restrict in,
                        __global float4* restrict out) {
  const int lx = get_local_size(0);
  const int base = get_group_id(0) * ITEMS * lx + get_local_id(0);
  float4 v[ITEMS];
#pragma unroll
  for (int i = 0; i < ITEMS; ++i)
    if (base + i * lx < n4) v[i] = in[base + i * lx];
#pragma unroll
  for (int i = 0; i < ITEMS; ++i)
    if (base + i * lx < n4) out[base + i * lx] = v[i];
}

__kernel void read_vec4(const int n4, __global const float4* restrict a,
                        __global const float4* restrict b, __global float* restrict out) {
  const int stride = get_global_size(0);
  int i = get_global_id(0);
  float4 s[STRIDES];
#pragma unroll
  for (int k = 0; k < STRIDES; ++k) s[k] = (float4)(0.0f);
  for (; i + (STRIDES - 1) * stride < n4; i += STRIDES * stride) {
#pragma unroll
    for (int k = 0; k < STRIDES; ++k) s[k] += a[i + k * stride] + b[i + k * stride];
  }
  for (; i < n4; i += stride) s[0] += a[i] + b[i];
#pragma unroll
  for (int k = 1; k < STRIDES; ++k) s[0] += s[k];
  out[get_global_id(0)] = (s[0].x + s[0].y) + (s[0].z + s[0].w);
}

// Float4 column x of tile row y: the swizzle spreads a column's 8 consecutive 4-row groups over
// the 8 16-byte bank groups.
#if SWZ
#define SLOT(y, x) ((y) * 16 + ((x) ^ (((y) >> 2) & 7)))
#else
#define SLOT(y, x) ((y) * 16 + (x))
#endif
#define BLOCKS (16 / LY)  // 4-row blocks each work-item loads

__kernel __attribute__((reqd_work_group_size(16, LY, 1)))
void transpose_swizzled(const int M, const int N, __global const float* restrict in,
                        __global float* restrict out) {
  __local float4 t[64 * 16];
  const int tx = get_local_id(0), ty = get_local_id(1);
  const int r0 = get_group_id(1) * 64, c0 = get_group_id(0) * 64;
  const bool whole = r0 + 64 <= M && c0 + 64 <= N && M % 4 == 0 && N % 4 == 0;
  if (!whole) {  // edges: element by element, straight through
    for (int q = ty * 16 + tx; q < 64 * 64; q += 16 * LY) {
      const int r = r0 + q / 64, c = c0 + q % 64;
      if (r < M && c < N) out[(size_t)c * M + r] = in[(size_t)r * N + c];
    }
    return;
  }
  float4 v[BLOCKS][4];
#pragma unroll
  for (int b = 0; b < BLOCKS; ++b)
#pragma unroll
    for (int i = 0; i < 4; ++i)
      v[b][i] = *(__global const float4*)(in + (size_t)(r0 + 4 * (ty + b * LY) + i) * N + c0 + 4 * tx);
#pragma unroll
  for (int b = 0; b < BLOCKS; ++b) {
    const int rb = ty + b * LY;  // the tile's 4-row block: float4 column rb of the output rows
    t[SLOT(4 * tx + 0, rb)] = (float4)(v[b][0].s0, v[b][1].s0, v[b][2].s0, v[b][3].s0);
    t[SLOT(4 * tx + 1, rb)] = (float4)(v[b][0].s1, v[b][1].s1, v[b][2].s1, v[b][3].s1);
    t[SLOT(4 * tx + 2, rb)] = (float4)(v[b][0].s2, v[b][1].s2, v[b][2].s2, v[b][3].s2);
    t[SLOT(4 * tx + 3, rb)] = (float4)(v[b][0].s3, v[b][1].s3, v[b][2].s3, v[b][3].s3);
  }
  barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
  for (int j = 0; j < 4 * BLOCKS; ++j) {
    const int y = ty + j * LY;  // output row c0 + y, 16 float4s from r0
    *(__global float4*)(out + (size_t)(c0 + y) * M + r0 + 4 * tx) = t[SLOT(y, tx)];
  }
}
