// How much local memory a kernel may declare as __local arrays where a driver gives them more
// than CL_DEVICE_LOCAL_MEM_SIZE says. NVIDIA's OpenCL reports 48 KB and holds __local kernel
// arguments to it, but on the H200 (compute capability 9.0, driver 580) a kernel's own __local
// arrays of up to 99,328 bytes built, ran and validated (docs/opencl.md, docs/data/
// h200-wgmma-big-local.log); the wgmma spaces go up to 103,424 bytes (two work-groups per
// multiprocessor), 4 KB past that. The limit used is CUDA's for that capability, not measured.
#pragma once

#include <cstddef>

namespace tunekit::cl::detail {

/// CL_DEVICE_LOCAL_MEM_SIZE on NVIDIA's OpenCL (the H100 and the H200, driver 580): what
/// __local arguments may take. The tensor-core families that run from compute capability 8.0
/// keep their declared tiles within it too: more was measured on 9.0 only.
inline constexpr std::size_t nvidia_reported_local_memory = 49152;

/// Shared memory of one multiprocessor of compute capability 9.0 (CUDA's
/// sharedMemPerMultiprocessor there: 228 KB).
inline constexpr std::size_t sm90_multiprocessor_local = 233472;

/// What CUDA keeps of it per resident block (reservedSharedMemPerBlock: 1 KB).
inline constexpr std::size_t sm90_work_group_reserved = 1024;

/// The most one work-group may declare on compute capability 9.0: the multiprocessor's less the
/// reserve (227 KB, CUDA's sharedMemPerBlockOptin).
inline constexpr std::size_t nvidia_sm90_declared_local_memory =
    sm90_multiprocessor_local - sm90_work_group_reserved;

}  // namespace tunekit::cl::detail
