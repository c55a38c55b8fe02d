// What the tensor-core GEMMs (matmul_tc.cl, matmul_wgmma.cl, matmul_tf32.cl) share, #included by
// each and never built alone: the PTX type of the 16-bit inputs (BF16 1: bf16, else f16), a
// 16-byte (and 4-byte) cp.async into local memory with zero fill and its group's commit and wait, the k-loop's
// pipeline of the mma.sync kernels over their own tile loads, a local pointer's shared-window
// address, the epilogue's conversions between two f32 and one 32-bit word of two 16-bit values,
// its formula and its store of such a pair, and the tile order. NVIDIA only (inline PTX).
#ifndef TUNEKIT_TENSOR_CORE_CL
#define TUNEKIT_TENSOR_CORE_CL

#ifndef BF16
#define BF16 0
#endif
#if BF16
#define MMA_TYPE "bf16"
#else
#define MMA_TYPE "f16"
#endif

// Copies 16 bytes from global `src` to the local-memory (shared-window) address `shared`,
// asynchronously (cp.async.commit_group / wait_group order it); 16 zero bytes when `ok` is false
// (`src` is then never read, but must still be a valid address).
#define CP_ASYNC16(shared, src, ok)                                                  \
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(shared),         \
               "l"((ulong)(src)), "r"((ok) ? 16 : 0)                                  \
               : "memory")

// The same for 4 bytes (one float): .ca, the only cache mode that copies fewer than 16 bytes.
#define CP_ASYNC4(shared, src, ok)                                                   \
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;" ::"r"(shared),          \
               "l"((ulong)(src)), "r"((ok) ? 4 : 0)                                   \
               : "memory")

// Closes this work-item's cp.async group, and waits until at most `pending` of its groups are in
// flight ("n": the count is an immediate, so it must be a compile-time constant).
#define CP_ASYNC_COMMIT() asm volatile("cp.async.commit_group;" ::: "memory")
#define CP_ASYNC_WAIT(pending) asm volatile("cp.async.wait_group %0;" ::"n"(pending) : "memory")

// The k-loop's pipeline of matmul_tc.cl and matmul_tf32.cl over STAGES local buffers, in the
// includer's terms: LOAD_TILE(kt, stage) issues k-tile kt's 16-byte copies into a stage, COMMIT()
// closes the work-item's group of them and WAIT_PENDING() waits until at most STAGES - 2 groups
// are in flight. Every step commits one group, empty past the last tile, so that the wait always
// means tile kt has landed. PIPELINE_START(tiles): tiles 0 .. STAGES - 2 on their way.
#define PIPELINE_START(tiles)                                     \
  do {                                                            \
    _Pragma("unroll") for (int s_ = 0; s_ < STAGES - 1; ++s_) {  \
      if (s_ < (tiles)) LOAD_TILE(s_, s_);                        \
      COMMIT();                                                   \
    }                                                             \
  } while (0)
// PIPELINE_NEXT(kt, tiles), first in step kt: tile kt is in local memory for every work-item, and
// tile kt + STAGES - 1 on its way into the stage of tile kt - 1, which every work-item has read.
#define PIPELINE_NEXT(kt, tiles)                           \
  do {                                                     \
    WAIT_PENDING();                                        \
    barrier(CLK_LOCAL_MEM_FENCE);                          \
    const int next_ = (kt) + STAGES - 1;                   \
    if (next_ < (tiles)) LOAD_TILE(next_, next_ % STAGES); \
    COMMIT();                                              \
  } while (0)

// The LOAD_TILE of matmul_tc and matmul_tf32, whose A (M x K) and B (K x N) are row-major:
// k-tile `kt` into stage `s` of the kernel's local tiles `as` (BM x BK) and `bs` (BK x BN), in
// 16-byte chunks of `per_chunk` elements (A_CHUNKS and B_CHUNKS per work-item, CA and CB per
// tile row) through the kernel's COPY16(local pointer, global source, ok) to its swizzled
// A_AT(row, chunk) and B_AT(row, chunk); zero past the matrices' edges.
#define LOAD_ROW_MAJOR_TILES(kt, s, per_chunk)                                          \
  do {                                                                                  \
    const int k0_ = (kt) * BK;                                                          \
    _Pragma("unroll") for (int i_ = 0; i_ < A_CHUNKS; ++i_) {                           \
      const int c_ = tid + i_ * THREADS, r_ = c_ / CA, ch_ = c_ % CA;                   \
      const int gr_ = bm0 + r_, gk_ = k0_ + ch_ * (per_chunk);                          \
      const bool ok_ = gr_ < M && gk_ < K;                                              \
      COPY16(&as[(s) * BM * BK + A_AT(r_, ch_)], ok_ ? A + (size_t)gr_ * K + gk_ : A, ok_); \
    }                                                                                   \
    _Pragma("unroll") for (int i_ = 0; i_ < B_CHUNKS; ++i_) {                           \
      const int c_ = tid + i_ * THREADS, r_ = c_ / CB, ch_ = c_ % CB;                   \
      const int gk_ = k0_ + r_, gn_ = bn0 + ch_ * (per_chunk);                          \
      const bool ok_ = gk_ < K && gn_ < N;                                              \
      COPY16(&bs[(s) * BK * BN + B_AT(r_, ch_)], ok_ ? B + (size_t)gk_ * N + gn_ : B, ok_); \
    }                                                                                   \
  } while (0)

#ifndef ADDR
#define ADDR 0
#endif
// The 32-bit shared-window address of a local pointer, what ldmatrix and cp.async take. ADDR 0
// (NVIDIA's OpenCL): the pointer's value already is that address (its PTX takes it with
// `mov.u64 %rd, <the .shared array>`); ADDR 1 (the probe's alternative): the value would be a
// generic address, converted with cvta.to.shared.
#if ADDR
static inline uint shared_address(const __local void* p) {
  uint r;
  asm("{\n\t.reg .u64 s;\n\tcvta.to.shared.u64 s, %1;\n\tcvt.u32.u64 %0, s;\n\t}"
      : "=r"(r)
      : "l"((ulong)p));
  return r;
}
#define SHARED_ADDRESS(p) shared_address(p)
#else
#define SHARED_ADDRESS(p) ((uint)(ulong)(p))
#endif

// Two f32 -> one 32-bit word of two 16-bit values (lo: the lower column), rounded to nearest.
static inline uint pack2(float lo, float hi) {
  uint r;
  asm("cvt.rn." MMA_TYPE "x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}

// The inverse: one 32-bit word of two 16-bit values -> (lo, hi) as f32, exactly.
static inline float2 unpack2(uint v) {
#if BF16
  return (float2)(as_float(v << 16), as_float(v & 0xffff0000u));
#else
  float lo, hi;
  asm("{.reg .f16 l, h;\n\tmov.b32 {l, h}, %2;\n\tcvt.f32.f16 %0, l;\n\tcvt.f32.f16 %1, h;}"
      : "=f"(lo), "=f"(hi)
      : "r"(v));
  return (float2)(lo, hi);
#endif
}

// The first row and column of C in this work-group's BM x BN tile. group_m 0: tiles in launch
// order. group_m > 0, for L2 reuse: work-groups run in launch order (dimension 0 fastest);
// group_m rows of tiles are walked column by column, so the B tiles of one column are read
// group_m times while they are still in L2.
static inline int2 tile_origin(const int bm, const int bn, const int group_m) {
  if (group_m <= 0) return (int2)(get_group_id(1) * bm, get_group_id(0) * bn);
  const int nx = get_num_groups(0), ny = get_num_groups(1);
  const int pid = get_group_id(1) * nx + get_group_id(0), span = group_m * nx;
  const int first = (pid / span) * group_m, rows = min(ny - first, group_m);
  return (int2)((first + (pid % span) % rows) * bm, ((pid % span) / rows) * bn);
}

// The epilogue's formula, once: alpha * (lo, hi) + beta * `old` (C's pair, two 16-bit values),
// packed. beta 0 ignores `old`, so a caller passes 0 there without reading C.
static inline uint scaled_pair(const float alpha, const float beta, const float lo, const float hi,
                               const uint old) {
  float out_lo = alpha * lo, out_hi = alpha * hi;
  if (beta != 0.0f) {
    const float2 c = unpack2(old);
    out_lo += beta * c.x;
    out_hi += beta * c.y;
  }
  return pack2(out_lo, out_hi);
}

// C[row][col, col + 1] = alpha * (lo, hi) + beta * C[row][col, col + 1] (16-bit pairs: N is
// even), where the pair lies inside the M x N matrix. beta 0 never reads C.
static inline void store_pair(__global uint* C, const int M, const int N, const int row,
                              const int col, const float alpha, const float beta, const float lo,
                              const float hi) {
  if (row >= M || col >= N) return;
  const size_t at2 = ((size_t)row * N + col) / 2;
  C[at2] = scaled_pair(alpha, beta, lo, hi, beta != 0.0f ? C[at2] : 0u);
}

#endif  // TUNEKIT_TENSOR_CORE_CL
