// Sum or max reductions of an f32 array (to one value, through per-work-group partials) and of each row of a row-major f32 matrix, with three strategies: local-memory tree, multi-element-per-work-item vector loads, and sub-group reductions where the device has them.
/*
  Macros (default)    meaning
    OP     0          0: sum (identity 0), 1: max (identity -INFINITY)
    WGS    256        work-group size (power of two, >= 2; >= sub-group size for the _sg kernels)
    VW     4          vector width of the loads in reduce_multi / reduce_sg / reduce_rows* (1,2,4,8,16)
    UNROLL 4          independent vector loads in flight per work-item per loop trip (reduce_multi/_sg)
    USE_NV_SHFL 0     1: on NVIDIA, build the _sg kernels with inline-PTX warp shuffles (warp = 32)
    TC     min(32, WGS)  reduce_rows_tile: columns per pass through local memory (power of two, <= WGS)
    SG_ROWS max(1, WGS/32)  the rows a work-group owns in reduce_rows_sg (src/ops/row_rules.hpp)
  Local memory: WGS*4 bytes (tree kernels and reduce_sg), WGS*(TC+1)*4 (reduce_rows_tile), none
  (reduce_rows_item, reduce_rows_sg). The row kernels index with 32-bit ints (the cheaper code on
  GPUs): the host launches them only where rows + 2*WGS and cols + WGS stay under 2^31
  (src/ops/row_rules.hpp).

  Whole-array kernels, out[group] = OP over the group's elements; a second launch of the same kernel
  with one work-group (global = WGS) over the partials gives the final value (reduce_tree needs
  ceil(log_{2*WGS} n) launches instead):
    reduce_tree(n, in, out)    each work-item combines 2 elements, then a barrier tree in local memory.
                               NDRange: local WGS, global = WGS * ceil(n / (2*WGS)).
    reduce_multi(n, in, out)   grid-stride loop over VW-wide aligned loads, UNROLL loads per trip,
                               then the local tree. NDRange: local WGS, global = WGS * G for any
                               G >= 1 (G a few times the compute units; outputs G partials).
    reduce_sg(n, in, out)      as reduce_multi, but the in-group step is a sub-group reduction and
                               a tree over the WGS/sgsize sub-group results. Defined only when the
                               device has cl_khr_subgroups / __opencl_c_subgroups, or USE_NV_SHFL=1.
  Row kernels, out[r] = OP over row r of a rows x cols matrix (dense, row-major):
    reduce_rows(rows, cols, in, out)     one work-group per row; NDRange: local WGS, global WGS*rows.
    reduce_rows_item(rows, cols, in, out)  one work-item per row, no local memory nor barrier
                                         (short rows: a group tree per row would cost more
                                         than the row); NDRange: local WGS, global WGS *
                                         ceil(rows / WGS).
    reduce_rows_tile(rows, cols, in, out)  one work-item per row as reduce_rows_item, but the
                                         group's WGS rows pass through local memory TC columns at
                                         a time, loaded by TC neighbouring work-items per row
                                         (a GPU's loads then read whole lines, where one row per
                                         work-item reads a line per element). NDRange as
                                         reduce_rows_item; local memory WGS*(TC+1)*4 bytes.
    reduce_rows_sg(rows, cols, in, out)  one sub-group (warp) per row at a time; a group owns
                                         SG_ROWS = max(1, WGS/32) rows whatever the sub-group size
                                         (its sub-groups take them in turn: 64-wide ones take two
                                         each, 16-wide ones leave half of them idle). NDRange:
                                         local WGS, global = WGS * ceil(rows / SG_ROWS). Same
                                         availability as reduce_sg; with USE_NV_SHFL sgsize = 32.
  The whole-array kernels load n / VW whole vectors and the last n % VW elements one by one (the
  array starts at a buffer's base, aligned to any vector); the row kernels load a row's elements
  before its first vector boundary one by one (a row starts off one where cols % VW != 0), then
  its whole vectors, then its last elements one by one. Any n >= 1, rows, cols >= 1.
*/
#ifndef OP
#define OP 0
#endif
#ifndef WGS
#define WGS 256
#endif
#ifndef VW
#define VW 4
#endif
#ifndef UNROLL
#define UNROLL 4
#endif
#ifndef USE_NV_SHFL
#define USE_NV_SHFL 0
#endif
#if (WGS & (WGS - 1)) != 0 || WGS < 2
#error "WGS must be a power of two >= 2"
#endif

#if OP == 0
#define IDENT 0.0f
#define COMB(a, b) ((a) + (b))
#else
#define IDENT (-INFINITY)
#define COMB(a, b) fmax((a), (b))
#endif

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
typedef float float1;
typedef CAT(float, VW) floatV;
#define HSUM_1(v) (v)
#define HSUM_2(v) COMB((v).s0, (v).s1)
#define HSUM_4(v) COMB(HSUM_2((v).s01), HSUM_2((v).s23))
#define HSUM_8(v) COMB(HSUM_4((v).s0123), HSUM_4((v).s4567))
#define HSUM_16(v) COMB(HSUM_8((v).s01234567), HSUM_8((v).s89abcdef))
#define HCOMB(v) CAT(HSUM_, VW)(v)
#define VLOAD(p, i) (*(__global const floatV*)((p) + (i)))  // aligned: i % VW == 0

// Barrier tree over WGS values in local memory; every work-item gets the result.
static inline float group_tree(__local float* l, float s) {
  const int lid = get_local_id(0);
  l[lid] = s;
  barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
  for (int o = WGS / 2; o > 0; o >>= 1) {
    if (lid < o) l[lid] = COMB(l[lid], l[lid + o]);
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  return l[0];
}

// Grid-stride partial of one work-item: elements i0, i0+stride, ... of in[0..n), `in` VW-float
// aligned: the whole VW-float vectors by vector loads, the last n % VW elements one by one. The
// index is 64-bit: with n near 2^31, i + (UNROLL-1)*stride would wrap an int and read out of bounds.
static inline float strided_partial(__global const float* restrict in, const int n, const int i0,
                                    const int stride) {
  const int nv = n / VW;
  floatV acc[UNROLL];
#pragma unroll
  for (int u = 0; u < UNROLL; ++u) acc[u] = (floatV)(IDENT);
  long i = i0;
  for (; i + (long)(UNROLL - 1) * stride < nv; i += (long)UNROLL * stride) {
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) acc[u] = COMB(acc[u], VLOAD(in, (i + u * stride) * VW));
  }
  for (; i < nv; i += stride) acc[0] = COMB(acc[0], VLOAD(in, i * VW));
#pragma unroll
  for (int u = 1; u < UNROLL; ++u) acc[0] = COMB(acc[0], acc[u]);
  float s = HCOMB(acc[0]);
  for (long e = (long)nv * VW + i0; e < n; e += stride) s = COMB(s, in[e]);
  return s;
}

// Partial of lane `lane` of `lanes` over the row in[start..start+cols): a row whose length is not
// whole vectors starts off a vector's boundary, so its elements before the first boundary go one
// by one, then strided_partial from that boundary.
static inline float row_partial(__global const float* restrict in, const long start,
                                const int cols, const int lane, const int lanes) {
  const int head = min(cols, (int)((VW - start % VW) % VW));
  float s = IDENT;
  for (int e = lane; e < head; e += lanes) s = COMB(s, in[start + e]);
  return COMB(s, strided_partial(in + start + head, cols - head, lane, lanes));
}

__kernel __attribute__((reqd_work_group_size(WGS, 1, 1)))
void reduce_tree(const int n, __global const float* restrict in, __global float* restrict out) {
  __local float l[WGS];
  const long i = (long)get_group_id(0) * (2 * WGS) + get_local_id(0);  // past 2^31 near n's limit
  float s = i < n ? in[i] : IDENT;
  if (i + WGS < n) s = COMB(s, in[i + WGS]);
  s = group_tree(l, s);
  if (get_local_id(0) == 0) out[get_group_id(0)] = s;
}

__kernel __attribute__((reqd_work_group_size(WGS, 1, 1)))
void reduce_multi(const int n, __global const float* restrict in, __global float* restrict out) {
  __local float l[WGS];
  float s = strided_partial(in, n, get_global_id(0), get_global_size(0));
  s = group_tree(l, s);
  if (get_local_id(0) == 0) out[get_group_id(0)] = s;
}

__kernel __attribute__((reqd_work_group_size(WGS, 1, 1)))
void reduce_rows(const int rows, const int cols, __global const float* restrict in, __global float* restrict out) {
  __local float l[WGS];
  const int r = get_group_id(0);
  float s = row_partial(in, (long)r * cols, cols, get_local_id(0), WGS);
  s = group_tree(l, s);
  if (get_local_id(0) == 0) out[r] = s;
}

__kernel __attribute__((reqd_work_group_size(WGS, 1, 1)))
void reduce_rows_item(const int rows, const int cols, __global const float* restrict in, __global float* restrict out) {
  const int r = get_global_id(0);
  if (r >= rows) return;
  __global const float* row = in + (size_t)r * cols;
  // Four independent chains: loads in flight, not one dependent add after another.
  float a0 = IDENT, a1 = IDENT, a2 = IDENT, a3 = IDENT;
  int c = 0;
  for (; c + 4 <= cols; c += 4) {
    a0 = COMB(a0, row[c]);
    a1 = COMB(a1, row[c + 1]);
    a2 = COMB(a2, row[c + 2]);
    a3 = COMB(a3, row[c + 3]);
  }
  for (; c < cols; ++c) a0 = COMB(a0, row[c]);
  out[r] = COMB(COMB(a0, a1), COMB(a2, a3));
}

#ifndef TC
#define TC (WGS < 32 ? WGS : 32)
#endif
#if TC < 1 || (TC & (TC - 1)) != 0 || TC > WGS
#error "TC must be a power of two <= WGS"
#endif

__kernel __attribute__((reqd_work_group_size(WGS, 1, 1)))
void reduce_rows_tile(const int rows, const int cols, __global const float* restrict in, __global float* restrict out) {
  // Row stride TC + 1 (odd): work-items reading their own rows hit different banks.
  __local float tile[WGS * (TC + 1)];
  const int lid = get_local_id(0);
  const int first = get_group_id(0) * WGS;
  const int lane = lid % TC;  // the column this work-item loads in every pass
  float acc[4] = {IDENT, IDENT, IDENT, IDENT};  // four chains, not one dependent combine
  for (int c0 = 0; c0 < cols; c0 += TC) {  // the same trips for the whole group
    const int c = c0 + lane;
    for (int r = lid / TC; r < WGS; r += WGS / TC) {
      const int row = first + r;
      tile[r * (TC + 1) + lane] = row < rows && c < cols ? in[(long)row * cols + c] : IDENT;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    __local const float* my_row = tile + lid * (TC + 1);
#pragma unroll
    for (int j = 0; j < TC; ++j) acc[j % 4] = COMB(acc[j % 4], my_row[j]);  // past the row: IDENT
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (first + lid < rows) out[first + lid] = COMB(COMB(acc[0], acc[1]), COMB(acc[2], acc[3]));
}

// ---- sub-group strategy ----------------------------------------------------------------------
#if defined(cl_khr_subgroups) || defined(__opencl_c_subgroups)
#if defined(cl_khr_subgroups)
#pragma OPENCL EXTENSION cl_khr_subgroups : enable
#endif
#define HAVE_SG 1
#if OP == 0
#define SG_REDUCE(x) sub_group_reduce_add(x)
#else
#define SG_REDUCE(x) sub_group_reduce_max(x)
#endif
#define SG_ID() ((int)get_sub_group_id())
#define SG_LANE() ((int)get_sub_group_local_id())
#define SG_COUNT() ((int)get_num_sub_groups())
#define SG_SIZE() ((int)get_max_sub_group_size())
#elif USE_NV_SHFL
#if WGS < 32
#error "USE_NV_SHFL needs WGS >= 32 (whole warps)"
#endif
#define HAVE_SG 1
// NVIDIA exposes no sub-group extension in OpenCL; its warps are 32 consecutive local ids.
static inline float nv_shfl_xor(float v, int mask) {
  float r;
  asm volatile("shfl.sync.bfly.b32 %0, %1, %2, 0x1f, 0xffffffff;" : "=f"(r) : "f"(v), "r"(mask));
  return r;
}
static inline float warp_reduce(float v) {
#pragma unroll
  for (int m = 16; m > 0; m >>= 1) v = COMB(v, nv_shfl_xor(v, m));
  return v;
}
#define SG_REDUCE(x) warp_reduce(x)
#define SG_ID() ((int)get_local_id(0) / 32)
#define SG_LANE() ((int)get_local_id(0) % 32)
#define SG_COUNT() (WGS / 32)
#define SG_SIZE() 32
#endif

#ifdef HAVE_SG
// Sub-group reduce, then one value per sub-group through local memory, reduced by the first sub-group.
static inline float group_sg(__local float* l, float s) {
  s = SG_REDUCE(s);
  if (SG_LANE() == 0) l[SG_ID()] = s;
  barrier(CLK_LOCAL_MEM_FENCE);
  const int nsg = SG_COUNT();
  if (SG_ID() == 0) {
    float t = IDENT;
    for (int i = SG_LANE(); i < nsg; i += SG_SIZE()) t = COMB(t, l[i]);
    s = SG_REDUCE(t);
  }
  return s;  // valid in sub-group 0
}

__kernel __attribute__((reqd_work_group_size(WGS, 1, 1)))
void reduce_sg(const int n, __global const float* restrict in, __global float* restrict out) {
  __local float l[WGS];  // needs only one slot per sub-group
  float s = strided_partial(in, n, get_global_id(0), get_global_size(0));
  s = group_sg(l, s);
  if (get_local_id(0) == 0) out[get_group_id(0)] = s;
}

// The rows a work-group owns, fixed so that the host can size the launch without knowing the
// sub-group size the compiler chose (cl_khr_subgroups lets it vary per kernel: 8 to 64 lanes).
#ifndef SG_ROWS
#define SG_ROWS (WGS >= 32 ? WGS / 32 : 1)
#endif
#if SG_ROWS < 1
#error "SG_ROWS must be at least 1"
#endif

__kernel __attribute__((reqd_work_group_size(WGS, 1, 1)))
void reduce_rows_sg(const int rows, const int cols, __global const float* restrict in, __global float* restrict out) {
  const int first = get_group_id(0) * SG_ROWS;
  const int end = min(rows, first + SG_ROWS);
  // Whole sub-groups take the same trips and leave together; no barrier follows.
  for (int r = first + SG_ID(); r < end; r += SG_COUNT()) {
    float s = row_partial(in, (long)r * cols, cols, SG_LANE(), SG_SIZE());
    s = SG_REDUCE(s);
    if (SG_LANE() == 0) out[r] = s;
  }
}
#endif
