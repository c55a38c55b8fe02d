// OpenCL devices: listing them, choosing one (TUNEKIT_DEVICE, else the first GPU, else the first
// CPU), and the identity under which tunings on it are kept.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "tunekit/cl/opencl.hpp"

namespace tunekit {
struct Settings;  // tunekit/settings.hpp
}

namespace tunekit::cl {

/// One OpenCL device, with what tunekit needs to know about it.
struct DeviceInfo {
  ::cl::Platform platform;
  ::cl::Device device;
  std::size_t index = 0;  ///< position in list_devices(): what a numeric TUNEKIT_DEVICE names
  std::string platform_name;
  std::string platform_version;
  std::string device_name;
  std::string driver_version;
  cl_device_type type = 0;
  cl_uint compute_units = 0;
  /// Bytes of local memory per work-group (CL_DEVICE_LOCAL_MEM_SIZE): all a kernel's __local
  /// arguments may take; its declared __local arrays may take declared_local_memory().
  cl_ulong local_memory = 0;
  std::size_t max_work_group_size = 0;
  std::vector<std::size_t> max_work_item_sizes;  ///< per dimension
  cl_ulong max_allocation = 0;                   ///< largest single buffer, bytes
  cl_ulong global_memory = 0;
  cl_ulong global_memory_cache = 0;  ///< CL_DEVICE_GLOBAL_MEM_CACHE_SIZE, bytes
  double timer_resolution = 0;       ///< seconds per tick of the profiling timer
  /// NVIDIA's platform: no cl_khr_subgroups, but 32-wide warps whose shuffles kernels reach
  /// through inline PTX (decided once here, not by a string search on every launch).
  bool nvidia = false;
  /// CL_DEVICE_VENDOR, e.g. "NVIDIA Corporation", "Intel(R) Corporation".
  std::string vendor;
  /// NVIDIA's compute capability (CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV / _MINOR_NV, asked only
  /// where the device lists cl_nv_device_attribute_query): 9.0 on Hopper; 0.0 elsewhere.
  cl_uint compute_capability_major = 0;
  cl_uint compute_capability_minor = 0;
  /// Sub-groups in OpenCL C: cl_khr_subgroups, or OpenCL C 3.0's __opencl_c_subgroups feature
  /// (kernels with sub-group reductions run where this or `nvidia` holds).
  bool sub_groups = false;

  bool is_gpu() const noexcept { return (type & CL_DEVICE_TYPE_GPU) != 0; }
  bool is_cpu() const noexcept { return (type & CL_DEVICE_TYPE_CPU) != 0; }
  /// NVIDIA's compute capability is at least major.minor (false on every other vendor).
  bool compute_capability_at_least(cl_uint major, cl_uint minor) const noexcept {
    return compute_capability_major > major ||
           (compute_capability_major == major && compute_capability_minor >= minor);
  }

  /// Bytes of local memory a kernel's declared __local arrays may take in one work-group: more
  /// than local_memory where the driver gives them more (NVIDIA, compute capability 9.0: 227 KB,
  /// src/cl/declared_local_memory.hpp), else local_memory.
  cl_ulong declared_local_memory() const noexcept;

  /// "OpenCL | <platform> | <platform version> | <device> | driver <v> | <n> CUs | <b> B local |
  /// work-groups of <max> (<d0> x <d1> x <d2>)": everything that makes a tuning on this device
  /// differ from one on another.
  std::string identity() const;
  /// "#0 Portable Computing Language / pthread-skylake (CPU, 2 CUs)": one line for a person.
  std::string describe() const;
};

/// Every device of every platform, in platform then device order. Empty when no OpenCL platform
/// is installed (never throws for that: select_device says what to install).
std::vector<DeviceInfo> list_devices();

/// The device `selector` names: empty picks the first GPU, else the first CPU, else the first
/// device of any type; digits are an index into list_devices(); anything else is a
/// case-insensitive substring of "<platform name> <device name>" (first match).
/// Throws AutotuneError(device) when there is no platform (naming what to install), or when the
/// selector matches nothing (listing the devices there are).
DeviceInfo select_device(std::string_view selector);

/// The device `settings` name (select_device(settings.device)); a selector a settings file set
/// (Settings::device_source) that matches no device is a warning naming the file, and the
/// default device is used.
DeviceInfo select_device(const Settings& settings);

/// select_device(global_settings()): honours TUNEKIT_DEVICE and the settings files.
DeviceInfo select_device();

/// One describe() line per device, for error messages and tools.
std::string format_device_list(const std::vector<DeviceInfo>& devices);

}  // namespace tunekit::cl
