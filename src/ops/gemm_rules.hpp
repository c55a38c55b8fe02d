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
