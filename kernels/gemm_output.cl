// How matmul_reg.cl and matmul_skinny.cl write C, #included by both once their storage type
// `real`, its LD and ST, and KSPLIT are set: one store of alpha * sum + beta * C, and a product
// split along K into KSPLIT slices (global dimension 2) added in its own launch by the last
// work-group of each tile to finish its slice. Each slice stores its partial product (float: a
// 16-bit partial would overflow (f16) or lose bits (bf16) that the slices' sum cancels) in
// P + z * M * N; `arrivals` holds one count per tile (per work-group of a slice), zero before the
// first launch, and each launch leaves them zero.

// C[idx] = alpha * sum + beta * C[idx], rounded to C's type once; beta == 0 does not read C.
static inline void store_output(__global real* C, const int idx, const float alpha,
                                const float beta, const float sum) {
  const float c = alpha * sum;
  ST(C, idx, beta != 0.0f ? mad(beta, LD(C, idx), c) : c);
}

// Counts this work-group's slice in once its partial products are stored; whether it counted
// last (the same answer in every work-item). Every work-item of the group calls it; `last` is
// the kernel's __local int (OpenCL declares those at kernel scope).
static inline int counted_last(__global int* arrivals, __local int* last) {
  mem_fence(CLK_GLOBAL_MEM_FENCE);  // stored before counted, device-wide (NVIDIA, CPUs)
  barrier(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE);
  if (get_local_id(0) == 0 && get_local_id(1) == 0) {
    __global int* const count = arrivals + get_group_id(1) * get_num_groups(0) + get_group_id(0);
    *last = atomic_inc(count) == KSPLIT - 1;
    if (*last) atomic_xchg(count, 0);  // every slice has counted: zero for the next launch
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  const int result = *last;
  mem_fence(CLK_GLOBAL_MEM_FENCE);
  return result;
}

// Element idx of C's partial products summed over the slices in slice order (as matmul_sum.cl),
// read volatile: past any cache that kept an older line of P. matmul_skinny.cl's last work-group
// calls it on its work-items' own few elements (VWN each), which measured faster on the H200's
// GEMV than store_tile_sums (21.1-21.3 us against 22.6-22.9).
static inline float slices_sum(const volatile __global float* P, const int idx, const int M,
                               const int N) {
  float sum = 0.0f;
  for (int z = 0; z < KSPLIT; ++z) sum += P[(size_t)z * M * N + idx];
  return sum;
}

#if KSPLIT > 1
// Elements of the tile a work-item sums at once: about 32 of P's loads in flight per work-item,
// in code that stays small. A sum unrolled per output and per slice (a work-item's WPTM x WPTN
// block, up to thousands of loads) made the H200's cold tuning of 64x11008x4096 wait 30 s for
// builds instead of 17; one element at a time waits for each slice's load in turn.
#define SUMS_AT_ONCE (KSPLIT >= 32 ? 1 : 32 / KSPLIT)

// The last work-group's part in matmul_reg.cl: its tile (rows x cols of C from row0, col0,
// clipped to M x N) summed over the slices in slice order (as slices_sum) into C, its `threads`
// work-items taking consecutive elements (a warp reads runs of P). P is read volatile: past any
// cache that kept an older line of it.
static inline void store_tile_sums(__global real* C, const volatile __global float* P,
                                   const float alpha, const float beta, const int M, const int N,
                                   const int row0, const int col0, const int rows, const int cols,
                                   const int tid, const int threads) {
  const int h = min(rows, M - row0), w = min(cols, N - col0), count = h * w;
#pragma unroll 1
  for (int first = tid; first < count; first += SUMS_AT_ONCE * threads) {
    int idx[SUMS_AT_ONCE];
    float sum[SUMS_AT_ONCE];
#pragma unroll
    for (int u = 0; u < SUMS_AT_ONCE; ++u) {
      const int e = min(first + u * threads, count - 1);  // past the tile: read again, not stored
      idx[u] = (row0 + e / w) * N + col0 + e % w;
      sum[u] = 0.0f;
    }
#pragma unroll
    for (int z = 0; z < KSPLIT; ++z) {
#pragma unroll
      for (int u = 0; u < SUMS_AT_ONCE; ++u) sum[u] += P[(size_t)z * M * N + idx[u]];
    }
#pragma unroll
    for (int u = 0; u < SUMS_AT_ONCE; ++u) {
      if (first + u * threads < count) store_output(C, idx[u], alpha, beta, sum[u]);
    }
  }
}
#endif
