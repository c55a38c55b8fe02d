// The rules of the blocked GEMM kernel (kernels/matmul_reg.cl), on the host, in one place: what
// the kernel's #error lines demand of its macros, the local memory it declares, and the padding
// the shipped op builds it with. matmul's parameter space (src/ops/matmul.cpp) and the kernel lab
// (tools/kernel_lab, built apart: this header needs nothing but the standard library) use them.
#pragma once

#include <cstddef>
#include <cstdint>

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
