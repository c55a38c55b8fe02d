// Device listing and selection (TUNEKIT_DEVICE, else first GPU, else first CPU) and the device
// identity that keys tunings.
#include "tunekit/cl/device.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>

#include "../warnings.hpp"
#include "declared_local_memory.hpp"
#include "tunekit/cl/errors.hpp"
#include "tunekit/outcome.hpp"
#include "tunekit/settings.hpp"

namespace tunekit::cl {

namespace {

// What to install, for every "no OpenCL" error.
constexpr const char* install_hint =
    "install an OpenCL driver such as pocl-opencl-icd (CPU, any machine) or your GPU vendor's "
    "OpenCL ICD (e.g. nvidia-opencl-icd, intel-opencl-icd, mesa-opencl-icd), then check with "
    "`clinfo -l`";

// Strings from drivers often end in NULs or spaces; they must not leak into identities.
std::string trimmed(std::string text) {
  while (!text.empty() &&
         (text.back() == '\0' || std::isspace(static_cast<unsigned char>(text.back())))) {
    text.pop_back();
  }
  return text;
}

std::string lowercase(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

// cl_khr_subgroups among the extensions, or __opencl_c_subgroups among OpenCL C 3.0's features
// (asked with the C API: a device before 3.0 does not know the query, which then just fails).
bool has_sub_groups(const ::cl::Device& device) {
  const std::string extensions = device.getInfo<CL_DEVICE_EXTENSIONS>();
  if (extensions.find("cl_khr_subgroups") != std::string::npos) return true;
  std::size_t bytes = 0;
  if (::clGetDeviceInfo(device(), CL_DEVICE_OPENCL_C_FEATURES, 0, nullptr, &bytes) != CL_SUCCESS ||
      bytes == 0 || bytes % sizeof(cl_name_version) != 0) {
    return false;
  }
  std::vector<cl_name_version> features(bytes / sizeof(cl_name_version));
  if (::clGetDeviceInfo(device(), CL_DEVICE_OPENCL_C_FEATURES, bytes, features.data(), nullptr) !=
      CL_SUCCESS) {
    return false;
  }
  return std::any_of(features.begin(), features.end(), [](const cl_name_version& f) {
    return std::string_view(f.name, strnlen(f.name, CL_NAME_VERSION_MAX_NAME_SIZE)) ==
           "__opencl_c_subgroups";
  });
}

// NVIDIA's compute capability, through cl_nv_device_attribute_query (the query's names are in
// CL/cl_ext.h where the headers are recent; their values are the extension's).
constexpr cl_device_info compute_capability_major_nv = 0x4000;
constexpr cl_device_info compute_capability_minor_nv = 0x4001;

void query_compute_capability(const ::cl::Device& device, DeviceInfo& info) {
  const std::string extensions = device.getInfo<CL_DEVICE_EXTENSIONS>();
  if (extensions.find("cl_nv_device_attribute_query") == std::string::npos) return;
  cl_uint major = 0, minor = 0;
  if (::clGetDeviceInfo(device(), compute_capability_major_nv, sizeof major, &major, nullptr) ==
          CL_SUCCESS &&
      ::clGetDeviceInfo(device(), compute_capability_minor_nv, sizeof minor, &minor, nullptr) ==
          CL_SUCCESS) {
    info.compute_capability_major = major;
    info.compute_capability_minor = minor;
  }
}

DeviceInfo describe_device(const ::cl::Platform& platform, const ::cl::Device& device,
                           std::size_t index) {
  DeviceInfo info;
  info.platform = platform;
  info.device = device;
  info.index = index;
  info.platform_name = trimmed(platform.getInfo<CL_PLATFORM_NAME>());
  info.nvidia = info.platform_name.find("NVIDIA") != std::string::npos;
  info.sub_groups = has_sub_groups(device);
  info.vendor = trimmed(device.getInfo<CL_DEVICE_VENDOR>());
  query_compute_capability(device, info);
  info.platform_version = trimmed(platform.getInfo<CL_PLATFORM_VERSION>());
  info.device_name = trimmed(device.getInfo<CL_DEVICE_NAME>());
  info.driver_version = trimmed(device.getInfo<CL_DRIVER_VERSION>());
  info.type = device.getInfo<CL_DEVICE_TYPE>();
  info.compute_units = device.getInfo<CL_DEVICE_MAX_COMPUTE_UNITS>();
  info.local_memory = device.getInfo<CL_DEVICE_LOCAL_MEM_SIZE>();
  info.max_work_group_size = device.getInfo<CL_DEVICE_MAX_WORK_GROUP_SIZE>();
  info.max_work_item_sizes = device.getInfo<CL_DEVICE_MAX_WORK_ITEM_SIZES>();
  info.max_allocation = device.getInfo<CL_DEVICE_MAX_MEM_ALLOC_SIZE>();
  info.global_memory = device.getInfo<CL_DEVICE_GLOBAL_MEM_SIZE>();
  info.global_memory_cache = device.getInfo<CL_DEVICE_GLOBAL_MEM_CACHE_SIZE>();
  const std::size_t ticks = device.getInfo<CL_DEVICE_PROFILING_TIMER_RESOLUTION>();
  // A driver reporting 0 ns would make the runner's batching target 0: assume 1 ns.
  info.timer_resolution = static_cast<double>(std::max<std::size_t>(ticks, 1)) * 1e-9;
  return info;
}

std::string type_name(cl_device_type type) {
  if (type & CL_DEVICE_TYPE_GPU) return "GPU";
  if (type & CL_DEVICE_TYPE_CPU) return "CPU";
  if (type & CL_DEVICE_TYPE_ACCELERATOR) return "accelerator";
  return "other";
}

bool all_digits(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(),
                                      [](unsigned char c) { return std::isdigit(c) != 0; });
}

}  // namespace

cl_ulong DeviceInfo::declared_local_memory() const noexcept {
  if (nvidia && compute_capability_major == 9 && compute_capability_minor == 0) {
    return std::max<cl_ulong>(local_memory, detail::nvidia_sm90_declared_local_memory);
  }
  return local_memory;
}

std::string DeviceInfo::identity() const {
  // The work-group limits too: they decide which candidates can run at all (a driver's setting,
  // e.g. POCL_MAX_WORK_GROUP_SIZE, changes them on the same chip, and a winner stored under the
  // larger limits would fail each call there).
  std::string items;
  for (const std::size_t size : max_work_item_sizes) {
    items += (items.empty() ? "" : " x ") + std::to_string(size);
  }
  return "OpenCL | " + platform_name + " | " + platform_version + " | " + device_name +
         " | driver " + driver_version + " | " + std::to_string(compute_units) + " CUs | " +
         std::to_string(local_memory) + " B local | work-groups of " +
         std::to_string(max_work_group_size) + " (" + items + ")";
}

std::string DeviceInfo::describe() const {
  // Appended piece by piece: GCC 12 gives a false -Wrestrict on "literal" + std::string here.
  std::string text = "#";
  text += std::to_string(index);
  text += ' ';
  text += platform_name + " / " + device_name + " (" + type_name(type) + ", " +
          std::to_string(compute_units) + " CUs)";
  return text;
}

std::vector<DeviceInfo> list_devices() {
  std::vector<::cl::Platform> platforms;
  // ICD loaders answer CL_PLATFORM_NOT_FOUND_KHR (or an empty list) when no driver is installed.
  if (::cl::Platform::get(&platforms) != CL_SUCCESS) return {};
  std::vector<DeviceInfo> devices;
  for (const auto& platform : platforms) {
    std::vector<::cl::Device> platform_devices;
    // A platform without devices answers CL_DEVICE_NOT_FOUND: it simply contributes none.
    if (platform.getDevices(CL_DEVICE_TYPE_ALL, &platform_devices) != CL_SUCCESS) continue;
    for (const auto& device : platform_devices) {
      devices.push_back(describe_device(platform, device, devices.size()));
    }
  }
  return devices;
}

std::string format_device_list(const std::vector<DeviceInfo>& devices) {
  std::string text;
  for (const auto& device : devices) text += "  " + device.describe() + "\n";
  return text;
}

DeviceInfo select_device(std::string_view selector) {
  std::vector<DeviceInfo> devices = list_devices();
  if (devices.empty()) {
    std::vector<::cl::Platform> platforms;
    const cl_int code = ::cl::Platform::get(&platforms);
    const std::string what = platforms.empty() ? "no OpenCL platform found"
                                               : "OpenCL platforms found, but no device on them";
    throw AutotuneError(ErrorKind::device,
                        what + " (clGetPlatformIDs: " + error_name(code) + "): " + install_hint);
  }
  if (selector.empty()) {
    const auto gpu = std::find_if(devices.begin(), devices.end(),
                                  [](const DeviceInfo& d) { return d.is_gpu(); });
    if (gpu != devices.end()) return *gpu;
    const auto cpu = std::find_if(devices.begin(), devices.end(),
                                  [](const DeviceInfo& d) { return d.is_cpu(); });
    if (cpu != devices.end()) return *cpu;
    return devices.front();
  }
  if (all_digits(selector)) {
    // from_chars, not std::stoull: an index past 2^64 (found by fuzz/fuzz_device_selector.cpp)
    // threw std::out_of_range instead of the device error below.
    std::size_t index = 0;
    const auto [end, error] =
        std::from_chars(selector.data(), selector.data() + selector.size(), index);
    if (error == std::errc() && end == selector.data() + selector.size() &&
        index < devices.size()) {
      return devices[index];
    }
    throw AutotuneError(ErrorKind::device,
                        "TUNEKIT_DEVICE=" + printable(selector, 200) +
                            " is not a device index (0 to " + std::to_string(devices.size() - 1) +
                            "); the devices are:\n" + format_device_list(devices));
  }
  const std::string wanted = lowercase(selector);
  for (const auto& device : devices) {
    if (lowercase(device.platform_name + " " + device.device_name).find(wanted) !=
        std::string::npos) {
      return device;
    }
  }
  throw AutotuneError(ErrorKind::device,
                      "TUNEKIT_DEVICE='" + printable(selector, 200) +
                          "' matches no device (expected an index, or part of a platform or "
                          "device name); the devices are:\n" +
                          format_device_list(devices));
}

DeviceInfo select_device(const Settings& settings) {
  if (settings.device_source.empty()) return select_device(settings.device);
  try {
    return select_device(settings.device);
  } catch (const AutotuneError& e) {
    const auto devices = list_devices();
    if (e.kind() != ErrorKind::device || devices.empty()) throw;
    warn_once("tunekit: " + settings.device_source + "='" + printable(settings.device, 200) +
              "' matches no device; using the default device (the devices are:\n" +
              format_device_list(devices) + ")");
    return select_device(std::string_view{});
  }
}

DeviceInfo select_device() { return select_device(global_settings()); }

}  // namespace tunekit::cl
