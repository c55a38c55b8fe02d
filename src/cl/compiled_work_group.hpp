// Which work-group maximum a launch is held to. NVIDIA's OpenCL reports CL_KERNEL_WORK_GROUP_SIZE
// 256 for every kernel (H200, driver 580, docs/data/h200-transpose-kernel-max.log), yet kernels
// compiled with reqd_work_group_size of 512 and 1024 work-items ran at those sizes, exact: the
// compiler built them for that work-group, so only the device's maximum holds for such a launch.
#pragma once

#include <array>
#include <cstddef>

namespace tunekit::cl::detail {

/// Whether a launch may pass the kernel's reported maximum: on NVIDIA only, whose driver the
/// evidence is from (elsewhere the reported maximum can be a real limit: the kernel's registers,
/// its SIMD width), and only on exactly the work-group the kernel was compiled for (`compiled`:
/// CL_KERNEL_COMPILE_WORK_GROUP_SIZE, zeros where the kernel names none; `local` 1 past its
/// dimensions).
inline bool trusts_compiled_work_group(bool nvidia, const std::array<std::size_t, 3>& compiled,
                                       const std::array<std::size_t, 3>& local) {
  return nvidia && compiled[0] != 0 && compiled == local;
}

/// The most work-items the launch may have: the device's maximum, and the kernel's reported one
/// unless trusts_compiled_work_group holds. A reported maximum of 0 (a driver
/// that gives none) is not a limit.
inline std::size_t work_group_limit(std::size_t kernel_max, std::size_t device_max,
                                    bool as_compiled) {
  if (kernel_max == 0 || as_compiled) return device_max;
  return kernel_max < device_max ? kernel_max : device_max;
}

}  // namespace tunekit::cl::detail
