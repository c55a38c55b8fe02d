// The rules of the GEMM kernels on the host, in one place: for the blocked kernel
// (kernels/matmul_reg.cl), the staged one (matmul_staged.cl) and the tensor-core ones
// (matmul_tc.cl, matmul_wgmma.cl, matmul_tf32.cl), what each kernel's #error lines demand of its
// macros and the local memory it declares, and the padding the shipped op builds the blocked kernel
// with. matmul's parameter space (src/ops/matmul.cpp) and the kernel lab (tools/kernel_lab, built
// apart: this header needs nothing but the standard library, declared_local_memory.hpp and
// sizes.hpp) use them.
#pragma once

#include <cstddef>
#include <cstdint>

#include "../cl/declared_local_memory.hpp"
#include "sizes.hpp"

namespace tunekit::ops::gemm {

/// Padding (floats) of each row of the transposed A tile and of the B tile, against local-memory
/// bank conflicts; the op passes them as -DPADA / -DPADB (PADA % VWM == 0 holds for VWM 2 and 4).
inline constexpr std::int64_t pad_a = 4;
inline constexpr std::int64_t pad_b = 0;

/// The macros of matmul_reg.cl.
struct BlockedParams {
  std::int64_t mwg, nwg, kwg, mdimc, ndimc, vwm, vwn, vw, pada = pad_a, padb = pad_b, db = 0;
};

/// Whether `p` passes matmul_reg.cl's #error checks: work-group tiles divide the block evenly in
/// vectors, and the tiles load evenly across the work-group.
constexpr bool blocked_builds(const BlockedParams& p) {
  const std::int64_t threads = p.mdimc * p.ndimc;
  if (p.mdimc <= 0 || p.ndimc <= 0 || p.vwm <= 0 || p.vwn <= 0 || p.vw <= 0) return false;
  return p.mwg % (p.mdimc * p.vwm) == 0 && p.nwg % (p.ndimc * p.vwn) == 0 && p.kwg % p.vw == 0 &&
         p.nwg % p.vw == 0 && (p.mwg * p.kwg) % (p.vw * threads) == 0 &&
         (p.kwg * p.nwg) % (p.vw * threads) == 0 && p.pada % p.vwm == 0 && p.padb % p.vw == 0 &&
         p.padb % p.vwn == 0;
}

/// Bytes of local memory the kernel declares: (DB+1) tiles of A (KWG x (MWG+PADA)) and of B
/// (KWG x (NWG+PADB)) floats.
constexpr std::size_t blocked_local_memory(const BlockedParams& p) {
  return static_cast<std::size_t>((p.db + 1) * p.kwg * ((p.mwg + p.pada) + (p.nwg + p.padb)) * 4);
}

/// Work-items per work-group.
constexpr std::size_t blocked_work_group_size(const BlockedParams& p) {
  return static_cast<std::size_t>(p.mdimc * p.ndimc);
}

}  // namespace tunekit::ops::gemm

namespace tunekit::ops::gemm {

/// The macros of matmul_tc.cl, the tensor-core kernel: a BM x BN tile of C per work-group, a
/// WM x WN tile per warp, K in steps of BK through STAGES local-memory buffers.
struct TensorParams {
  std::int64_t bm, bn, bk, wm, wn, stages;
};

/// The tensor-core kernel runs where NVIDIA's compute capability is at least this (mma.sync
/// m16n8k16 with f16/bf16 inputs, ldmatrix and cp.async: PTX ISA, sm_80).
inline constexpr unsigned tensor_min_major = 8, tensor_min_minor = 0;

/// N and K must be multiples of this: each row of A and B is read in 16-byte chunks.
inline constexpr std::int64_t tensor_alignment = 8;

/// Bytes NVIDIA's OpenCL adds to the local memory a kernel declares (measured on the H200,
/// driver 580: CL_KERNEL_LOCAL_MEM_SIZE is 32784 for 32768 declared), which puts 48 KB of tiles
/// one past the device's 49152.
inline constexpr std::size_t tensor_local_overhead = 16;

/// Work-items per work-group: one warp of 32 per WM x WN tile.
constexpr std::size_t tensor_work_group_size(const TensorParams& p) {
  return p.wm > 0 && p.wn > 0 ? static_cast<std::size_t>((p.bm / p.wm) * (p.bn / p.wn) * 32) : 0;
}

/// Whether `p` passes matmul_tc.cl's #error checks and keeps its accumulators in registers:
/// warp tiles of whole m16 x n16 fragments dividing the block, BK whole k16 steps, the tiles
/// loading in whole 16-byte chunks per work-item, 4 to 8 warps, at most 64 x 64 per warp
/// (128 f32 accumulators per work-item), at least 2 stages.
constexpr bool tensor_builds(const TensorParams& p) {
  if (p.bm <= 0 || p.bn <= 0 || p.bk <= 0 || p.wm <= 0 || p.wn <= 0) return false;
  if (p.bm % p.wm != 0 || p.bn % p.wn != 0 || p.wm % 16 != 0 || p.wn % 16 != 0 || p.bk % 16 != 0)
    return false;
  const auto threads = static_cast<std::int64_t>(tensor_work_group_size(p));
  return threads >= 128 && threads <= 256 && p.wm * p.wn <= 64 * 64 &&
         (p.bm * p.bk / 8) % threads == 0 && (p.bk * p.bn / 8) % threads == 0 && p.stages >= 2;
}

/// Bytes of local memory the kernel takes: STAGES tiles of A (BM x BK) and of B (BK x BN), 16-bit
/// elements, plus NVIDIA's overhead.
constexpr std::size_t tensor_local_memory(const TensorParams& p) {
  return static_cast<std::size_t>(p.stages * (p.bm * p.bk + p.bk * p.bn) * 2) +
         tensor_local_overhead;
}

}  // namespace tunekit::ops::gemm

namespace tunekit::ops::gemm {

/// The macros of matmul_wgmma.cl, the warpgroup-MMA kernel: a BM x BN tile of C per work-group
/// of BM/WM warpgroups, each WM rows (64: one wgmma per 32 bytes of K; 128: two, for twice the
/// work per k-tile's overhead), K in steps of BK elements through STAGES local-memory buffers;
/// GROUP_M rows of tiles walked together (L2 reuse) when more than 0. Elements of 2 bytes (f16,
/// bf16: the wgmma family) or 4 (f32 through wgmma's .tf32 form, TF32=1: the wgmma_tf32 family).
struct WgmmaParams {
  std::int64_t bm, bn, bk, stages;
  std::int64_t wm = 64;
  std::int64_t elem_bytes = 2;
};

/// wgmma is sm_90a: it runs on compute capability 9.0 exactly (arch-specific instructions are
/// not carried to later architectures).
inline constexpr unsigned wgmma_major = 9, wgmma_minor = 0;

/// Local memory the kernel aligns its tiles with: they start on a 1024-byte boundary (the
/// swizzle's period) inside an array NVIDIA aligns to 16 bytes only.
inline constexpr std::size_t wgmma_align_pad = 1008;

/// Work-items per work-group: one warpgroup of 128 per WM rows.
constexpr std::size_t wgmma_work_group_size(const WgmmaParams& p) {
  return p.bm > 0 && p.wm > 0 ? static_cast<std::size_t>(p.bm / p.wm * 128) : 0;
}

/// Bytes of local memory the kernel takes: STAGES tiles of A (BM x BK) and of B (BK x BN) of
/// elem_bytes each, the alignment pad, and NVIDIA's overhead (tensor_local_overhead).
constexpr std::size_t wgmma_local_memory(const WgmmaParams& p) {
  return static_cast<std::size_t>(p.stages * (p.bm * p.bk + p.bk * p.bn) * p.elem_bytes) +
         wgmma_align_pad + tensor_local_overhead;
}

/// Whether `p` passes matmul_wgmma.cl's #error checks: WM 64 or 128, BM a multiple of WM up to
/// 256 (at most 4 warpgroups), BN 64, 128 or 256 (the wgmma shapes it spells out) and not 256
/// with WM 128 (256 accumulators per work-item), BK elements making rows of 32, 64 or 128 bytes
/// (the three swizzle modes: BK 16, 32, 64 of 16-bit, 8, 16, 32 of f32), 2 to 6 stages, within
/// what compute capability 9.0 lets a work-group declare (the kernel declares its tiles as an
/// array, so NVIDIA's 48 KB for __local arguments does not hold it: declared_local_memory.hpp).
constexpr bool wgmma_builds(const WgmmaParams& p) {
  const std::int64_t row_bytes = p.bk * p.elem_bytes;
  return (p.wm == 64 || p.wm == 128) && p.bm >= p.wm && p.bm <= 256 && p.bm % p.wm == 0 &&
         !(p.wm == 128 && p.bn == 256) && (p.bn == 64 || p.bn == 128 || p.bn == 256) &&
         (p.elem_bytes == 2 || p.elem_bytes == 4) &&
         (row_bytes == 32 || row_bytes == 64 || row_bytes == 128) && p.stages >= 2 &&
         p.stages <= 6 && wgmma_local_memory(p) <= cl::detail::nvidia_sm90_declared_local_memory;
}

/// Whether two work-groups of `p` fit one multiprocessor's local memory at once (each with CUDA's
/// reserve). Past that one work-group per multiprocessor leaves nothing to hide its epilogue and
/// its first loads behind; the spaces keep to it, which halves the time a tuning spends on tiles
/// past 48 KB (488 configurations of 604 in the wgmma space).
constexpr bool wgmma_two_per_multiprocessor(const WgmmaParams& p) {
  return 2 * (wgmma_local_memory(p) + cl::detail::sm90_work_group_reserved) <=
         cl::detail::sm90_multiprocessor_local;
}

}  // namespace tunekit::ops::gemm

namespace tunekit::ops::gemm {

/// The macros of matmul_tf32.cl, the TF32 tensor-core kernel for f32 storage (mma.sync m16n8k8,
/// sm_80: the tensor kernel's capability, tensor_min_major): a BM x BN tile of C per work-group,
/// a WM x WN tile per warp, K in steps of BK through STAGES local-memory buffers.
struct Tf32Params {
  std::int64_t bm, bn, bk, wm, wn, stages;
};

/// N and K must be multiples of this: each row of A and B is read in 16-byte chunks of 4 floats.
inline constexpr std::int64_t tf32_alignment = 4;

/// Work-items per work-group: one warp of 32 per WM x WN tile.
constexpr std::size_t tf32_work_group_size(const Tf32Params& p) {
  return p.wm > 0 && p.wn > 0 ? static_cast<std::size_t>((p.bm / p.wm) * (p.bn / p.wn) * 32) : 0;
}

/// Bytes of local memory the kernel takes: STAGES tiles of A (BM x BK) and of B (BK x BN) of
/// 4-byte elements, plus NVIDIA's overhead (tensor_local_overhead).
constexpr std::size_t tf32_local_memory(const Tf32Params& p) {
  return static_cast<std::size_t>(p.stages * (p.bm * p.bk + p.bk * p.bn) * 4) +
         tensor_local_overhead;
}

/// Whether `p` passes matmul_tf32.cl's #error checks and keeps its accumulators in registers:
/// warp tiles of whole m16 x n8 fragments dividing the block, BK 16 or 32 (two or four k8 steps;
/// A's rows of 64 or 128 bytes for its swizzle), BN a multiple of 32 (B's swizzle permutes 8
/// chunks of 4 floats inside each run of 32 columns), the tiles loading in whole 16-byte chunks per
/// work-item, 4 to 8 warps, at most 64 x 64 per warp (128 f32 accumulators per work-item), 2 to 4
/// stages, within the 48 KB NVIDIA reports (the family runs from compute capability 8.0, where
/// declared arrays past it were not measured).
constexpr bool tf32_builds(const Tf32Params& p) {
  if (p.bm <= 0 || p.bn <= 0 || p.wm <= 0 || p.wn <= 0) return false;
  if (p.bm % p.wm != 0 || p.bn % p.wn != 0 || p.wm % 16 != 0 || p.wn % 8 != 0) return false;
  const auto threads = static_cast<std::int64_t>(tf32_work_group_size(p));
  return (p.bk == 16 || p.bk == 32) && p.bn % 32 == 0 && threads >= 128 && threads <= 256 &&
         p.wm * p.wn <= 64 * 64 && (p.bm * p.bk / 4) % threads == 0 &&
         (p.bk * p.bn / 4) % threads == 0 && p.stages >= 2 && p.stages <= 4 &&
         tf32_local_memory(p) <= cl::detail::nvidia_reported_local_memory;
}

/// The macros of matmul_staged.cl: matmul_reg.cl's register blocks (an MWG x NWG tile of C per
/// work-group of MDIMC x NDIMC, local-memory reads of VWM and VWN floats) over tiles KWG deep,
/// copied by cp.async into STAGES local-memory buffers from A transposed; KSLICE such groups of
/// work-items share each tile's K rows and add their blocks in local memory at the end. A_DIRECT
/// 1: A and B as the caller gave them, A transposed float by float on its way into the tile; 2:
/// the same operands, A's tile kept in A's layout (rows along K) and read in vectors along K.
/// SPREAD_COPIES 1: the next tile's copies issued between the rows of the product instead of at
/// once.
struct StagedParams {
  std::int64_t mwg, nwg, kwg, mdimc, ndimc, vwm, vwn, stages;
  std::int64_t kslice = 1, a_direct = 0, spread_copies = 0;
};

/// Floats past the row in each row of A_DIRECT's local A tile (matmul_staged.cl's APAD; past MWG
/// under 1, past KWG under 2): A_DIRECT 1's transposing copies fall on 32 different banks, and
/// rows stay 16-byte aligned (not 32: the product's reads of A are then at most 4 floats, VWM <=
/// 4, staged_builds); A_DIRECT 2's reads of rows 4 apart fall on different banks.
inline constexpr std::int64_t staged_direct_a_pad = 4;

/// The staged kernel runs where NVIDIA's compute capability is at least this (cp.async: PTX ISA,
/// sm_80).
inline constexpr unsigned staged_min_major = 8, staged_min_minor = 0;

/// With A_DIRECT 0, rows of At and B are copied in 16-byte chunks (matmul_staged.cl): the host
/// gives the kernel rows of a multiple of this many floats, padded where M or N is not one
/// (staged_row_floats). A_DIRECT 1 copies B by chunks only where N is a multiple of it.
inline constexpr std::int64_t staged_chunk_floats = 4;

/// The row length, in floats, of At (for `size` M) or B (for `size` N) as the staged kernel takes
/// them: `size` rounded up to whole 16-byte chunks.
constexpr std::size_t staged_row_floats(std::size_t size) {
  return round_up(size, static_cast<std::size_t>(staged_chunk_floats));
}

/// The most work-items the family's work-groups have: with 4 to 128 outputs each, NVIDIA's compiler
/// (the only one the family runs on) gives the kernel more than 128 registers per work-item, and
/// so at most 256 per work-group (the H200 refused every 512 as out of resources, after its
/// build).
inline constexpr std::int64_t staged_max_work_group = 256;

/// Work-items per work-group.
constexpr std::size_t staged_work_group_size(const StagedParams& p) {
  return static_cast<std::size_t>(p.mdimc * p.ndimc * p.kslice);
}

/// Bytes of local memory the kernel takes: STAGES tiles of A (KWG x MWG, rows padded under
/// A_DIRECT) and of B (KWG x NWG) floats, or the KSLICE - 1 other slices' MWG x NWG blocks that
/// reuse them after the K loop, whichever is larger, plus NVIDIA's overhead
/// (tensor_local_overhead).
constexpr std::size_t staged_local_memory(const StagedParams& p) {
  const std::int64_t a_tile = p.a_direct == 2
                                  ? p.mwg * (p.kwg + staged_direct_a_pad)
                                  : p.kwg * (p.mwg + (p.a_direct != 0 ? staged_direct_a_pad : 0));
  const std::int64_t tiles = p.stages * (a_tile + p.kwg * p.nwg),
                     sums = (p.kslice - 1) * p.mwg * p.nwg;
  return static_cast<std::size_t>((tiles > sums ? tiles : sums) * 4) + tensor_local_overhead;
}

/// Whether `p` passes matmul_staged.cl's #error checks: vectors of 1, 2, 4 or 8, tile rows of
/// whole 16-byte chunks, the work-items' blocks dividing the tile in vectors, every work-item
/// (of all KSLICE groups) copying whole chunks of each tile, at least 2 stages, KSLICE dividing
/// KWG; A_DIRECT 0, 1 or 2, and under 1 or 2 the work-items a multiple of NWG (B, copied float by
/// float where N is not a multiple of 4: every work-item steps by whole rows); under 1 KWG a
/// multiple of 8, the work-items a multiple of 4 * KWG (A's walk, by whole rows of 4) and VWM at
/// most 4 (the padded rows' alignment, staged_direct_a_pad); under 2 each group's share of KWG a
/// multiple of 4 (the product's vectors along K), the work-items a multiple of KWG, MWG of the
/// work-items / KWG (every work-item copies whole rows' columns), and no SPREAD_COPIES;
/// SPREAD_COPIES 0 or 1.
constexpr bool staged_builds(const StagedParams& p) {
  const auto width = [](std::int64_t w) { return w == 1 || w == 2 || w == 4 || w == 8; };
  if (p.mdimc <= 0 || p.ndimc <= 0 || !width(p.vwm) || !width(p.vwn) || p.kwg <= 0) return false;
  if (p.kslice < 1 || p.kwg % p.kslice != 0) return false;
  const std::int64_t threads = p.mdimc * p.ndimc * p.kslice;
  if (p.a_direct < 0 || p.a_direct > 2) return false;
  if (p.spread_copies != 0 && p.spread_copies != 1) return false;
  if (p.a_direct != 0 && (p.nwg <= 0 || threads % p.nwg != 0)) return false;
  if (p.a_direct == 1 && (p.kwg % 8 != 0 || threads % (4 * p.kwg) != 0 || p.vwm > 4)) return false;
  if (p.a_direct == 2 && ((p.kwg / p.kslice) % 4 != 0 || threads % p.kwg != 0 ||
                          p.mwg % (threads / p.kwg) != 0 || p.spread_copies != 0)) {
    return false;
  }
  const std::int64_t a_chunks = p.kwg * (p.mwg / 4), b_chunks = p.kwg * (p.nwg / 4);
  return p.mwg % 4 == 0 && p.nwg % 4 == 0 && p.mwg % (p.mdimc * p.vwm) == 0 &&
         p.nwg % (p.ndimc * p.vwn) == 0 && a_chunks % threads == 0 && b_chunks % threads == 0 &&
         a_chunks >= threads && b_chunks >= threads && p.stages >= 2;
}

/// The rows (or columns) of C past a product's whole tiles of `tile` that kernels/matmul_edges.cl
/// computes instead of a last row (column) of tiles: a remainder of at most a sixteenth of the
/// tile (4 of 64, 8 of 128), past at least one whole tile; 0 where the product covers them itself.
/// Such a last row of tiles costs a whole tile's time for a few rows, often in a wave of
/// work-groups of its own (1025 on tiles of 64: 17 rows of tiles for the work of 16), while the
/// edge kernel's time grows with the rows it takes. For the families of MWG x NWG tiles (blocked,
/// split, staged, staged_split).
constexpr std::size_t peeled(std::size_t size, std::size_t tile) {
  const std::size_t rest = size % tile;
  return size > tile && rest * 16 <= tile ? rest : 0;
}

}  // namespace tunekit::ops::gemm
