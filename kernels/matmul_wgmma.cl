// Tensor-core GEMM through Hopper's warpgroup MMA (wgmma, sm_90a): the `wgmma` and `wgmma_tf32`
// families of matmul (src/ops/matmul.cpp; its rules: src/ops/gemm_rules.hpp). NVIDIA compute
// capability 9.0 only. C = alpha * A * B + beta * C, A (M x K), B (K x N), C (M x N) row-major
// 16-bit storage (f16, or bf16 with -DBF16=1), f32 accumulation. TF32=1: f32 storage through
// wgmma's .tf32 form, whose operands are both K-major and read truncated: A and B come rounded
// to TF32 by the host's pre-pass (tf32.cl, transpose.cl's ROUND_TF32), B transposed (N x K), its
// tile laid out as A's; C is stored directly (no staged epilogue). A work-group of BM/WM
// warpgroups (128 work-items each) computes a BM x BN tile of C, warpgroup g its rows
// WM*g..WM*g+WM-1, WM/64 wgmma.m64nBNk16 per 16 of K (k8 per 8 with TF32: 32 bytes of K each);
// the A and B tiles, BK deep, go through local memory in STAGES buffers filled by cp.async.
//
// Layouts (PTX ISA "Shared Memory Matrix Layout"): swizzled as wgmma reads them fastest (the
// no-swizzle layout reached 207 TFLOP/s on the H200, these 412: docs/benchmarks.md). The
// hardware swizzle XORs byte-address bits [4, 4+b) (the 16-byte chunk) with bits [7, 7+b), b = 3,
// 2, 1 for the 128, 64, 32-byte modes; the pattern repeats every 1024, 512, 256 bytes, so every
// tile starts on a 1024-byte boundary (base offset 0).
// - A, K-major (transpose-A 0): row r of the tile is BK halves = RA bytes (RA = 128, 64, 32 for
//   BK = 64, 32, 16 -> 128, 64, 32-byte swizzle), rows contiguous: logical byte r*RA + 16c, stored
//   at that offset swizzled. SBO = 8 rows = 8*RA; LBO unused (1). The k16 step kk inside a row
//   moves the start address by 32*kk bytes: the hardware swizzles the address it computes, the
//   same way the writer did.
// - B, N-major (transpose-B 1), 128-byte swizzle for any BK: atoms of 64 columns (128 B) x 8 rows
//   of K (1024 B), row kr of an atom at 128*kr, its chunk c at chunk c ^ kr. Atom (k/8, n/64) at
//   (k/8)*BN*16 + (n/64)*1024: LBO = 1024 (next 64 columns of N), SBO = 16*BN (next 8 rows of K).
// - TF32=1: B^T's tile as A's (BN rows of BK floats; the swizzle by row bytes: BK = 32, 16, 8);
//   each wgmma.m64nBNk8 step takes 32 bytes of K, as a k16 step of 16-bit elements does.
// Requires K % 8 == 0 and N % 8 == 0 (16-byte chunks; TF32: K % 4 == 0, the rows of A and B^T,
// and any N: C is stored per element; the family asks N % 4 too, tf32_group's rule); edges of
// M, N, K zero-filled / skipped.

#ifndef BM
#define BM 128
#endif
#ifndef BN
#define BN 128
#endif
#ifndef WM
#define WM 64  // rows of the tile per warpgroup: 64 (one wgmma per 32 bytes of K) or 128 (two)
#endif
#ifndef BK
#define BK 32
#endif
#ifndef STAGES
#define STAGES 2
#endif
#ifndef GROUP_M
#define GROUP_M 0  // 0: tiles in launch order; > 0: GROUP_M rows of tiles at a time (L2 reuse)
#endif
#ifndef TF32
#define TF32 0  // 1: f32 storage through wgmma's .tf32 form, B passed transposed (N x K, K-major)
#endif
#if TF32
#define ELEM 4        // bytes per element
#define KSTEP 8       // K per wgmma
#define KSTR "8"
#define ELEM_T float
#define C_T float
#define WG_TYPES ".f32.tf32.tf32"
#define WG_TAIL "p, 1, 1; }"  // .tf32 takes no transpose operands: both K-major
#else
#define ELEM 2
#define KSTEP 16
#define KSTR "16"
#define ELEM_T ushort
#define C_T uint
#define WG_TYPES ".f32." MMA_TYPE "." MMA_TYPE
#define WG_TAIL "p, 1, 1, 0, 1; }"
#endif
#ifndef WG_DEPTH
#define WG_DEPTH 0  // wgmma groups left in flight at the end of a k-tile (0 or 1)
#endif

#include "tensor_core.cl"  // MMA_TYPE, CP_ASYNC16/_COMMIT/_WAIT, tile_origin, scaled_pair, store_pair

// NVIDIA's OpenCL compiles to PTX `.target sm_90`, where ptxas refuses wgmma. The sm_90a
// instructions follow this PTX comment marker (tunekit::cl::ptx_sm90a_marker, one instruction per
// line), so the driver's build succeeds; the option TUNEKIT_PTX_SM90A (cl::ptx_sm90a_option) has
// the program cache remove the markers, raise the target to sm_90a and build that PTX. Without
// it the instructions would stay comments and the product wrong: refuse to build.
#define SM90A "//sm_90a:"
#if !defined(TUNEKIT_PTX_SM90A) || TUNEKIT_PTX_SM90A != 1
#error "matmul_wgmma.cl needs the program raised to sm_90a (tunekit::cl::ptx_sm90a_option)"
#endif

#define WGS (BM / WM)
#define MI (WM / 64)  // wgmma row blocks (m64) per warpgroup
#define THREADS (WGS * 128)
#define RA (BK * ELEM)  // bytes per row of the A tile
#define CA (RA / 16)     // 16-byte chunks per row of the A tile
#define CB (BN / 8)      // ... of the B tile (a row of K; 16-bit)
#define A_STAGE (BM * RA)
#if TF32
#define B_STAGE (BN * RA)  // B^T's tile: BN rows of K, as A's
#define B_TOTAL (BN * CA)
#else
#define B_STAGE (BK * BN * 2)
#define B_TOTAL (BK * CB)
#endif
#define TILE_BYTES (STAGES * (A_STAGE + B_STAGE))
// Local arrays are only 16-byte aligned (the probe saw a float array at 0x404), so the tiles
// start at the next 1024-byte boundary inside a larger array: at most 1008 bytes more.
#define ALIGN_PAD 1008
#define A_TOTAL (BM * CA)  // 16-byte chunks of one stage
#define A_ITERS (A_TOTAL / THREADS)  // WM * BK / 1024
#define B_ITERS ((B_TOTAL + THREADS - 1) / THREADS)
#define B_EVEN (B_TOTAL % THREADS == 0)
// The epilogue stages each warpgroup's 64 x BN f32 through the tiles' local memory where it fits
// (else it stores straight from the accumulators). Row r's 32-byte runs of 8 columns are
// swizzled by r % 4, so a warp's writes of 8 rows take the two wavefronts 256 bytes need.
#if TF32
#undef STAGED_EPILOGUE
#define STAGED_EPILOGUE 0
#endif
#ifndef STAGED_EPILOGUE
#define STAGED_EPILOGUE (WGS * 64 * BN * 4 <= TILE_BYTES + ALIGN_PAD)
#endif
#define STAGED_AT(r, u) ((r) * BN + (((u) ^ ((r) & 3)) * 8))  // floats: row r, run u of 8 columns

#if (WM != 64 && WM != 128) || BM % WM != 0 || BM < WM || BM > 256 || \
    (BN != 64 && BN != 128 && BN != 256)
#error "WM 64 or 128, BM a multiple of WM up to 256 (1 to 4 warpgroups), BN 64, 128 or 256"
#endif
#if WM == 128 && BN == 256
#error "WM 128 with BN 256 needs 256 accumulators per work-item"
#endif
#if RA != 32 && RA != 64 && RA != 128
#error "BK making rows of 32, 64 or 128 bytes (16, 32, 64 halves; 8, 16, 32 floats): the swizzles"
#endif
#if STAGES < 2 || STAGES > 6 || WG_DEPTH < 0 || WG_DEPTH > 1 || STAGES - 1 - WG_DEPTH < 1
#error "STAGES 2..6, WG_DEPTH 0 or 1, at least one tile loaded ahead"
#endif
// No bound on TILE_BYTES here: the tiles are a declared array, which NVIDIA lets past the 48 KB
// it reports; how far is the host's rule (gemm_rules.hpp, wgmma_builds), and past it the build
// or the launch fails.

// Tiles loaded ahead. With a wgmma group in flight (WG_DEPTH 1) the stage it reads cannot be
// refilled yet, so one stage fewer is loaded ahead.
#define AHEAD (STAGES - 1 - WG_DEPTH)
// cp.async groups that may still be in flight when tile kt is needed.
#define CP_PENDING (AHEAD - 1)

// A: the swizzle of a byte offset from a 1024-aligned tile start (bits 4.. ^= bits 7..).
#if RA == 128
#define A_MODE 1  // 128-byte swizzle
#define A_XOR 0x70
#elif RA == 64
#define A_MODE 2  // 64-byte
#define A_XOR 0x30
#else
#define A_MODE 3  // 32-byte
#define A_XOR 0x10
#endif
#define A_SWZ(o) ((o) ^ (((o) >> 3) & A_XOR))
#define A_LBO 16        // unused for swizzled K-major (encoded 1)
#define A_SBO (8 * RA)  // next 8 rows (M)

#define B_MODE 1
// Row k (of K), 16-byte chunk j (columns 8j..8j+7) of one stage.
#define B_OFF(k, j) \
  (((k) / 8) * (16 * BN) + ((j) / 8) * 1024 + ((k) % 8) * 128 + ((((j) % 8) ^ ((k) % 8)) * 16))
#define B_LBO 1024      // next 64 columns (N)
#define B_SBO (16 * BN) // next 8 rows (K)
#define B_KSTEP (32 * BN)  // bytes per 16 rows of K

static inline ulong desc_of(uint address, uint lbo, uint sbo, uint mode) {
  return (ulong)((address & 0x3ffff) >> 4) | ((ulong)((lbo & 0x3ffff) >> 4) << 16) |
         ((ulong)((sbo & 0x3ffff) >> 4) << 32) | ((ulong)mode << 62);
}

// Loads k-tile `kt` into stage `s` through this work-item's copy plan (see the kernel): eight
// consecutive work-items copy 128 contiguous bytes of one global row (A: rows of RA bytes back to
// back; B: 8 chunks of one row of K) into one 128-byte line of local memory, the swizzle
// permuting chunks inside it: no bank conflicts. Per chunk the loop only adds the k-tile's offset
// and compares it with the chunk's room: the addresses are computed once, outside the K loop
// (recomputing them took most of a k-tile's instructions).
#define LOAD_TILE(kt, s)                                                                  \
  do {                                                                                    \
    const int k0_ = (kt) * BK;                                                            \
    const size_t b_step_ = (size_t)k0_ * N;                                               \
    const uint as_ = a_base + (s) * A_STAGE, bs_ = b_base + (s) * B_STAGE;                \
    _Pragma("unroll") for (int i_ = 0; i_ < A_ITERS; ++i_) {                              \
      const bool ok_ = k0_ < a_room[i_];                                                  \
      CP_ASYNC16(as_ + a_dst[i_], ok_ ? a_src[i_] + k0_ : A, ok_);                        \
    }                                                                                     \
    _Pragma("unroll") for (int i_ = 0; i_ < B_ITERS; ++i_) {                              \
      if (B_EVEN || tid + i_ * THREADS < B_TOTAL) {                                       \
        const bool ok_ = k0_ < b_room[i_];                                                \
        CP_ASYNC16(bs_ + b_dst[i_], ok_ ? b_src[i_] + (TF32 ? k0_ : b_step_) : B, ok_);   \
      }                                                                                   \
    }                                                                                     \
  } while (0)

// One line each (the marker hides the rest of its line only). Operands: scale-d (always 1: the
// accumulators start at 0), scale-a 1, scale-b 1, transpose-a 0 (K-major), transpose-b 1 (N-major);
// .tf32 takes no transpose operands (both K-major: WG_TAIL).
#if BN == 64
#define WGMMA(d, da, db)                                                              \
  asm volatile(                                                                       \
      SM90A "{ .reg .pred p; setp.ne.b32 p, %34, 0; "                            \
      "wgmma.mma_async.sync.aligned.m64n64k" KSTR WG_TYPES " "           \
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, "  \
      "%32, %33, " WG_TAIL                                            \
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]) \
      : "l"(da), "l"(db), "r"(1)                                                        \
      : "memory")
#endif
#if BN == 128
#define WGMMA(d, da, db)                                                              \
  asm volatile(                                                                       \
      SM90A "{ .reg .pred p; setp.ne.b32 p, %66, 0; "                            \
      "wgmma.mma_async.sync.aligned.m64n128k" KSTR WG_TYPES " "           \
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, "  \
      "%64, %65, " WG_TAIL                                            \
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]) \
      : "l"(da), "l"(db), "r"(1)                                                        \
      : "memory")
#endif
#if BN == 256
#define WGMMA(d, da, db)                                                              \
  asm volatile(                                                                       \
      SM90A "{ .reg .pred p; setp.ne.b32 p, %130, 0; "                            \
      "wgmma.mma_async.sync.aligned.m64n256k" KSTR WG_TYPES " "           \
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, "  \
      "%128, %129, " WG_TAIL                                            \
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]), "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]), "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127]) \
      : "l"(da), "l"(db), "r"(1)                                                        \
      : "memory")
#endif

// Chunk q (16 bytes) of a K-major tile whose rows are RA bytes (A's; with TF32 also B^T's), of
// a matrix X of `rows` rows of K elements, the tile's first row r0: its global source at k = 0,
// its swizzled offset inside a stage, and its room: how far k0 may go before the chunk leaves
// the matrix (0 where its row lies outside: zero fill).
static inline void k_major_chunk(const __global ELEM_T* X, const int r0, const int rows,
                                 const int K, const int q, const __global ELEM_T** src, uint* dst,
                                 int* room) {
  const int r = q / CA, ch = q % CA;
  const bool row_in = r0 + r < rows;
  *src = X + (size_t)(row_in ? r0 + r : 0) * K + ch * (16 / ELEM);
  *dst = A_SWZ(q * 16);
  *room = row_in ? K - ch * (16 / ELEM) : 0;
}

__kernel __attribute__((reqd_work_group_size(THREADS, 1, 1))) void matmul_wgmma(
    const int M, const int N, const int K, const float alpha, const float beta,
    const __global ELEM_T* restrict A, const __global ELEM_T* restrict B, __global C_T* C) {
  __local uint4 tiles[(TILE_BYTES + ALIGN_PAD) / 16];
  // The swizzle patterns are fixed to shared addresses: start on a 1024-byte boundary.
  const uint a_base = ((uint)(ulong)tiles + 1023u) & ~1023u;
  const uint b_base = a_base + STAGES * A_STAGE;
  const int tid = get_local_id(0);
  const int wg = tid / 128, warp = (tid % 128) / 32, lane = tid % 32;
  const int2 origin = tile_origin(BM, BN, GROUP_M);
  const int bm0 = origin.x, bn0 = origin.y;
  const int tiles_k = (K + BK - 1) / BK;

  // This work-item's copy plan, fixed for the whole K loop. Per chunk: its global source at
  // k = 0, its swizzled offset inside a stage, and its room: how far k0 may go before the chunk
  // leaves the matrix (0 where its row of A or column of B lies outside: zero fill).
  const __global ELEM_T* a_src[A_ITERS];
  uint a_dst[A_ITERS];
  int a_room[A_ITERS];
#pragma unroll
  for (int i = 0; i < A_ITERS; ++i)
    k_major_chunk(A, bm0, M, K, tid + i * THREADS, &a_src[i], &a_dst[i], &a_room[i]);
  const __global ELEM_T* b_src[B_ITERS];
  uint b_dst[B_ITERS];
  int b_room[B_ITERS];
#pragma unroll
  for (int i = 0; i < B_ITERS; ++i) {
#if TF32  // B^T: row n of the tile, chunk ch of K, laid out as A
    k_major_chunk(B, bn0, N, K, tid + i * THREADS, &b_src[i], &b_dst[i], &b_room[i]);
#else
    const int q = min(tid + i * THREADS, B_TOTAL - 1), k = q / CB, j = q % CB;
    const bool col_in = bn0 + j * 8 < N && k < K;
    b_src[i] = B + (col_in ? (size_t)k * N + bn0 + j * 8 : 0);
    b_dst[i] = B_OFF(k, j);
    b_room[i] = col_in ? K - k : 0;
#endif
  }

  float d[MI][BN / 2];  // d[p]: rows 64p..64p+63 of this warpgroup's WM
#pragma unroll
  for (int p = 0; p < MI; ++p)
#pragma unroll
    for (int i = 0; i < BN / 2; ++i) d[p][i] = 0.0f;

#pragma unroll
  for (int s = 0; s < AHEAD; ++s) {
    if (s < tiles_k) LOAD_TILE(s, s);
    CP_ASYNC_COMMIT();
  }

  for (int kt = 0; kt < tiles_k; ++kt) {
    CP_ASYNC_WAIT(CP_PENDING);
    // cp.async wrote through the generic proxy; wgmma reads through the async proxy.
    asm volatile(SM90A "fence.proxy.async.shared::cta;" ::: "memory");
    barrier(CLK_LOCAL_MEM_FENCE);
    const int next = kt + AHEAD;  // into the stage of tile kt - 1 - WG_DEPTH, whose wgmma is done
    if (next < tiles_k) LOAD_TILE(next, next % STAGES);
    CP_ASYNC_COMMIT();
    const int s = kt % STAGES;
    // This warpgroup's WM rows of A: WM / 8 whole swizzle atoms (A_SBO bytes each).
    const uint a_stage = a_base + s * A_STAGE + wg * (WM / 8) * A_SBO;
    const uint b_stage = b_base + s * B_STAGE;
    asm volatile(SM90A "wgmma.fence.sync.aligned;" ::: "memory");
#pragma unroll
    for (int kk = 0; kk < BK / KSTEP; ++kk) {  // 32 bytes of K per step
      const ulong da = desc_of(a_stage + kk * 32, A_LBO, A_SBO, A_MODE);
#if TF32
      const ulong db = desc_of(b_stage + kk * 32, A_LBO, A_SBO, A_MODE);
#else
      const ulong db = desc_of(b_stage + kk * B_KSTEP, B_LBO, B_SBO, B_MODE);
#endif
      WGMMA(d[0], da, db);
#if MI == 2
      WGMMA(d[1], desc_of(a_stage + 8 * A_SBO + kk * 32, A_LBO, A_SBO, A_MODE), db);  // +64 rows
#endif
    }
    asm volatile(SM90A "wgmma.commit_group.sync.aligned;" ::: "memory");
    asm volatile(SM90A "wgmma.wait_group.sync.aligned %0;" ::"n"(WG_DEPTH) : "memory");
  }
  asm volatile(SM90A "wgmma.wait_group.sync.aligned 0;" ::: "memory");

  // Accumulator 4j+e of n8 block j: row 16*warp + lane/4 (+8 for e >= 2), columns 8j + 2*(lane%4)
  // and the next.
#if STAGED_EPILOGUE
  // The accumulators go through local memory, one row block of 64 per warpgroup at a time, so
  // that C is written in 16-byte runs of 8 columns (direct stores are 4 bytes, 8 rows apart).
  asm volatile("cp.async.wait_all;" ::: "memory");
  __local float* rows = (__local float*)tiles + wg * (64 * BN);
#pragma unroll
  for (int p = 0; p < MI; ++p) {
    barrier(CLK_LOCAL_MEM_FENCE);  // the tiles' last readers (or the previous pass) are done
#pragma unroll
    for (int j = 0; j < BN / 8; ++j)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int r = warp * 16 + (lane >> 2) + h * 8;
        const float lo = d[p][4 * j + 2 * h], hi = d[p][4 * j + 2 * h + 1];
        vstore2((float2)(lo, hi), 0, rows + STAGED_AT(r, j) + (lane & 3) * 2);
      }
    barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
    for (int i = 0; i < 64 * (BN / 8) / 128; ++i) {
      const int q = (tid % 128) + i * 128, r = q / (BN / 8), u = q % (BN / 8);
      const int row = bm0 + wg * WM + p * 64 + r, col = bn0 + u * 8;
      if (row < M && col < N) {  // N % 8 == 0: the 8 columns are inside together
        const float4 v0 = vload4(0, rows + STAGED_AT(r, u)), v1 = vload4(1, rows + STAGED_AT(r, u));
        __global uint4* out = (__global uint4*)(C + ((size_t)row * N + col) / 2);
        const uint4 old = beta != 0.0f ? *out : (uint4)(0u);
        *out = (uint4)(scaled_pair(alpha, beta, v0.x, v0.y, old.x),
                       scaled_pair(alpha, beta, v0.z, v0.w, old.y),
                       scaled_pair(alpha, beta, v1.x, v1.y, old.z),
                       scaled_pair(alpha, beta, v1.z, v1.w, old.w));
      }
    }
  }
#else
#pragma unroll
  for (int j = 0; j < BN / 8; ++j)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int row = bm0 + wg * WM + warp * 16 + (lane >> 2) + h * 8;
      const int col = bn0 + j * 8 + (lane & 3) * 2;
#pragma unroll
      for (int p = 0; p < MI; ++p) {
#if TF32
        const int r = row + 64 * p;
        if (r < M)
#pragma unroll
          for (int e = 0; e < 2; ++e)
            if (col + e < N) {
              __global float* out = C + (size_t)r * N + col + e;
              const float v = alpha * d[p][4 * j + 2 * h + e];
              *out = beta != 0.0f ? v + beta * *out : v;
            }
#else
        store_pair(C, M, N, row + 64 * p, col, alpha, beta, d[p][4 * j + 2 * h],
                   d[p][4 * j + 2 * h + 1]);
#endif
      }
    }
#endif
}
