// small_device_shim: an LD_PRELOAD shim over libOpenCL that makes the (PoCL) device look like,
// and behave like, a smaller OpenCL device. See README.md in this directory.
//
// Reported (clGetDeviceInfo):
//   CL_DEVICE_MAX_WORK_GROUP_SIZE        SHIM_MAX_WG          (default 64)
//   CL_DEVICE_MAX_WORK_ITEM_SIZES        SHIM_ITEM_SIZES      (default "W,W,W", W = SHIM_MAX_WG)
//   CL_DEVICE_LOCAL_MEM_SIZE             SHIM_LOCAL_MEM       (default 16K)
//   CL_DEVICE_MAX_MEM_ALLOC_SIZE         SHIM_MAX_ALLOC       (default 256M)
//   CL_DEVICE_GLOBAL_MEM_SIZE            SHIM_GLOBAL_MEM      (default: the driver's)
//   CL_DEVICE_MAX_COMPUTE_UNITS          SHIM_COMPUTE_UNITS   (default: the driver's)
//   CL_DEVICE_NAME                       SHIM_DEVICE_NAME     (default: the driver's)
//   CL_DEVICE_EXTENSIONS (+ _WITH_VERSION, CL_DEVICE_OPENCL_C_FEATURES, *_FP_CONFIG):
//       cl_khr_fp16 / cl_khr_fp64 (and __opencl_c_fp64) removed unless SHIM_KEEP_FP=1;
//       also cl_khr_subgroups / __opencl_c_subgroups removed if SHIM_NO_SUBGROUPS=1
// Enforced:
//   clEnqueueNDRangeKernel: CL_INVALID_WORK_GROUP_SIZE when the local size's product exceeds
//     SHIM_MAX_WG (or the kernel's capped CL_KERNEL_WORK_GROUP_SIZE), CL_INVALID_WORK_ITEM_SIZE
//     when one dimension exceeds its item size (SHIM_ITEM_ERR=wgs: CL_INVALID_WORK_GROUP_SIZE),
//     CL_OUT_OF_RESOURCES when the kernel's local memory (static __local arrays + __local
//     arguments) exceeds SHIM_LOCAL_MEM.
//   clCreateBuffer: CL_INVALID_BUFFER_SIZE above SHIM_MAX_ALLOC.
//   clGetKernelWorkGroupInfo: CL_KERNEL_WORK_GROUP_SIZE capped at SHIM_MAX_WG, and at
//     SHIM_KERNEL_WG when set (a kernel's own limit below the device's, as register pressure
//     gives on GPUs); launches past it are refused with CL_INVALID_WORK_GROUP_SIZE.
// SHIM_VERBOSE=1: a banner when the shim first wraps a call and a summary of refusals at exit;
// SHIM_VERBOSE=2: also one line per refusal. SHIM_LOG=FILE appends those lines to FILE instead
// of stderr. SHIM_DISABLE=1 passes everything through.
#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <CL/cl_ext.h>  // CL_DEVICE_HALF_FP_CONFIG

namespace {

unsigned long long parse_bytes(const char* text, unsigned long long fallback) {
  if (text == nullptr || *text == '\0') return fallback;
  char* end = nullptr;
  unsigned long long value = std::strtoull(text, &end, 0);
  switch (end && *end ? *end : 0) {
    case 'k':
    case 'K':
      value <<= 10;
      break;
    case 'm':
    case 'M':
      value <<= 20;
      break;
    case 'g':
    case 'G':
      value <<= 30;
      break;
    default:
      break;
  }
  return value;
}

struct Config {
  bool disabled = false;
  int verbose = 0;
  size_t max_wg = 64;
  size_t kernel_wg = 0;  // 0: max_wg
  size_t items[3] = {64, 64, 64};
  cl_ulong local_mem = 16 << 10;
  cl_ulong max_alloc = 256ull << 20;
  cl_ulong global_mem = 0;    // 0: driver's
  cl_uint compute_units = 0;  // 0: driver's
  std::string device_name;    // empty: driver's
  bool keep_fp = false;
  bool no_subgroups = false;
  bool item_err_wgs = false;
  FILE* log = stderr;

  Config() {
    disabled = std::getenv("SHIM_DISABLE") && std::atoi(std::getenv("SHIM_DISABLE")) != 0;
    if (const char* v = std::getenv("SHIM_VERBOSE")) verbose = std::atoi(v);
    max_wg = parse_bytes(std::getenv("SHIM_MAX_WG"), 64);
    for (size_t& i : items) i = max_wg;
    kernel_wg = parse_bytes(std::getenv("SHIM_KERNEL_WG"), 0);
    if (kernel_wg == 0 || kernel_wg > max_wg) kernel_wg = max_wg;
    if (const char* v = std::getenv("SHIM_ITEM_SIZES")) {
      std::sscanf(v, "%zu,%zu,%zu", &items[0], &items[1], &items[2]);
    }
    local_mem = parse_bytes(std::getenv("SHIM_LOCAL_MEM"), 16 << 10);
    max_alloc = parse_bytes(std::getenv("SHIM_MAX_ALLOC"), 256ull << 20);
    global_mem = parse_bytes(std::getenv("SHIM_GLOBAL_MEM"), 0);
    compute_units = static_cast<cl_uint>(parse_bytes(std::getenv("SHIM_COMPUTE_UNITS"), 0));
    if (const char* v = std::getenv("SHIM_DEVICE_NAME")) device_name = v;
    keep_fp = std::getenv("SHIM_KEEP_FP") && std::atoi(std::getenv("SHIM_KEEP_FP")) != 0;
    no_subgroups =
        std::getenv("SHIM_NO_SUBGROUPS") && std::atoi(std::getenv("SHIM_NO_SUBGROUPS")) != 0;
    if (const char* v = std::getenv("SHIM_ITEM_ERR")) item_err_wgs = std::strcmp(v, "wgs") == 0;
    if (const char* v = std::getenv("SHIM_LOG")) {
      if (FILE* f = std::fopen(v, "a")) {
        log = f;
        setvbuf(f, nullptr, _IOLBF, 0);
      }
    }
  }
};

Config& config() {
  static Config c;
  return c;
}

void say(const char* format, ...) {
  va_list args;
  va_start(args, format);
  std::fprintf(config().log, "[small-device-shim %d] ", static_cast<int>(getpid()));
  std::vfprintf(config().log, format, args);
  std::fputc('\n', config().log);
  std::fflush(config().log);
  va_end(args);
}

std::atomic<long> refused_wg{0}, refused_item{0}, refused_local{0}, refused_alloc{0}, enqueues{0},
    buffers{0};

void summary() {
  if (config().verbose >= 1 && !config().disabled) {
    say("summary: %ld enqueues, %ld buffers; refused: %ld work-group size, %ld work-item size, "
        "%ld local memory, %ld buffer size",
        enqueues.load(), buffers.load(), refused_wg.load(), refused_item.load(),
        refused_local.load(), refused_alloc.load());
  }
}

void banner() {
  static std::once_flag once;
  std::call_once(once, [] {
    const Config& c = config();
    if (c.verbose >= 1) {
      say("wrapping libOpenCL%s: max work-group %zu (kernels %zu), items %zu,%zu,%zu, local %llu "
          "B, max alloc "
          "%llu B, global %llu B, CUs %u, name '%s', fp16/fp64 %s, sub-groups %s",
          c.disabled ? " (DISABLED: passing through)" : "", c.max_wg, c.kernel_wg, c.items[0],
          c.items[1], c.items[2], static_cast<unsigned long long>(c.local_mem),
          static_cast<unsigned long long>(c.max_alloc),
          static_cast<unsigned long long>(c.global_mem), c.compute_units, c.device_name.c_str(),
          c.keep_fp ? "kept" : "removed", c.no_subgroups ? "removed" : "kept");
      std::atexit(summary);
    }
  });
}

template <class F>
F real(const char* name) {
  void* f = ::dlsym(RTLD_NEXT, name);
  if (f == nullptr) {
    std::fprintf(stderr, "[small-device-shim] cannot find the real %s\n", name);
    std::abort();
  }
  return reinterpret_cast<F>(f);
}

bool removed_name(const std::string& word) {
  const Config& c = config();
  if (!c.keep_fp && (word == "cl_khr_fp16" || word == "cl_khr_fp64" || word == "__opencl_c_fp64" ||
                     word == "__opencl_c_fp16")) {
    return true;
  }
  if (c.no_subgroups && (word == "cl_khr_subgroups" || word == "__opencl_c_subgroups" ||
                         word == "cl_intel_subgroups")) {
    return true;
  }
  return false;
}

std::string filtered_extensions(const std::string& text) {
  std::string out;
  size_t at = 0;
  while (at < text.size()) {
    const size_t start = text.find_first_not_of(' ', at);
    if (start == std::string::npos) break;
    size_t end = text.find(' ', start);
    if (end == std::string::npos) end = text.size();
    const std::string word = text.substr(start, end - start);
    if (!removed_name(word)) {
      if (!out.empty()) out += ' ';
      out += word;
    }
    at = end;
  }
  return out;
}

// Copies `bytes` of `data` into the caller's buffer as clGetDeviceInfo would.
cl_int answer(const void* data, size_t bytes, size_t size, void* value, size_t* size_ret) {
  if (value != nullptr) {
    if (size < bytes) return CL_INVALID_VALUE;
    std::memcpy(value, data, bytes);
  }
  if (size_ret != nullptr) *size_ret = bytes;
  return CL_SUCCESS;
}

using GetDeviceInfo = cl_int (*)(cl_device_id, cl_device_info, size_t, void*, size_t*);

// The driver's answer to a query whose size is not known in advance.
std::vector<char> driver_answer(cl_device_id device, cl_device_info param, cl_int* code) {
  static const auto get = real<GetDeviceInfo>("clGetDeviceInfo");
  size_t bytes = 0;
  *code = get(device, param, 0, nullptr, &bytes);
  std::vector<char> out(bytes);
  if (*code == CL_SUCCESS && bytes > 0) *code = get(device, param, bytes, out.data(), nullptr);
  return out;
}

// ---- per-kernel __local arguments -------------------------------------------------------
std::mutex kernels_mutex;
std::map<cl_kernel, std::map<cl_uint, size_t>> local_args;  // kernel -> arg index -> bytes

void forget_kernel(cl_kernel kernel) {
  std::lock_guard lock(kernels_mutex);
  local_args.erase(kernel);
}

size_t local_arg_bytes(cl_kernel kernel) {
  std::lock_guard lock(kernels_mutex);
  const auto found = local_args.find(kernel);
  if (found == local_args.end()) return 0;
  size_t total = 0;
  for (const auto& [index, bytes] : found->second) total += bytes;
  return total;
}

bool arg_is_local(cl_kernel kernel, cl_uint index) {
  static const auto info =
      real<cl_int (*)(cl_kernel, cl_uint, cl_kernel_arg_info, size_t, void*, size_t*)>(
          "clGetKernelArgInfo");
  cl_kernel_arg_address_qualifier q = 0;
  if (info(kernel, index, CL_KERNEL_ARG_ADDRESS_QUALIFIER, sizeof q, &q, nullptr) == CL_SUCCESS) {
    return q == CL_KERNEL_ARG_ADDRESS_LOCAL;
  }
  return true;  // no argument info: a NULL value of a size other than a cl_mem is __local
}

}  // namespace

extern "C" {

cl_int clGetDeviceInfo(cl_device_id device, cl_device_info param, size_t size, void* value,
                       size_t* size_ret) {
  banner();
  static const auto get = real<GetDeviceInfo>("clGetDeviceInfo");
  const Config& c = config();
  if (c.disabled) return get(device, param, size, value, size_ret);
  switch (param) {
    case CL_DEVICE_MAX_WORK_GROUP_SIZE: {
      size_t driver = 0;
      cl_int code = get(device, param, sizeof driver, &driver, nullptr);
      if (code != CL_SUCCESS) return code;
      const size_t v = std::min(driver, c.max_wg);
      return answer(&v, sizeof v, size, value, size_ret);
    }
    case CL_DEVICE_MAX_WORK_ITEM_SIZES: {
      size_t v[3] = {c.items[0], c.items[1], c.items[2]};
      return answer(v, sizeof v, size, value, size_ret);
    }
    case CL_DEVICE_LOCAL_MEM_SIZE:
      return answer(&c.local_mem, sizeof c.local_mem, size, value, size_ret);
    case CL_DEVICE_MAX_MEM_ALLOC_SIZE:
      return answer(&c.max_alloc, sizeof c.max_alloc, size, value, size_ret);
    case CL_DEVICE_GLOBAL_MEM_SIZE:
      if (c.global_mem == 0) break;
      return answer(&c.global_mem, sizeof c.global_mem, size, value, size_ret);
    case CL_DEVICE_MAX_COMPUTE_UNITS:
      if (c.compute_units == 0) break;
      return answer(&c.compute_units, sizeof c.compute_units, size, value, size_ret);
    case CL_DEVICE_NAME:
      if (c.device_name.empty()) break;
      return answer(c.device_name.c_str(), c.device_name.size() + 1, size, value, size_ret);
    case CL_DEVICE_EXTENSIONS: {
      cl_int code = CL_SUCCESS;
      std::vector<char> text = driver_answer(device, param, &code);
      if (code != CL_SUCCESS) return code;
      const std::string out =
          filtered_extensions(std::string(text.data(), strnlen(text.data(), text.size())));
      return answer(out.c_str(), out.size() + 1, size, value, size_ret);
    }
    case CL_DEVICE_EXTENSIONS_WITH_VERSION:
    case CL_DEVICE_OPENCL_C_FEATURES: {
      cl_int code = CL_SUCCESS;
      std::vector<char> raw = driver_answer(device, param, &code);
      if (code != CL_SUCCESS) return code;
      std::vector<cl_name_version> in(raw.size() / sizeof(cl_name_version)), out;
      if (!raw.empty()) std::memcpy(in.data(), raw.data(), in.size() * sizeof(cl_name_version));
      for (const auto& e : in) {
        if (!removed_name(std::string(e.name, strnlen(e.name, CL_NAME_VERSION_MAX_NAME_SIZE)))) {
          out.push_back(e);
        }
      }
      return answer(out.data(), out.size() * sizeof(cl_name_version), size, value, size_ret);
    }
    case CL_DEVICE_DOUBLE_FP_CONFIG:
    case CL_DEVICE_HALF_FP_CONFIG: {
      if (c.keep_fp) break;
      const cl_device_fp_config none = 0;
      return answer(&none, sizeof none, size, value, size_ret);
    }
    case CL_DEVICE_PREFERRED_VECTOR_WIDTH_DOUBLE:
    case CL_DEVICE_NATIVE_VECTOR_WIDTH_DOUBLE:
    case CL_DEVICE_PREFERRED_VECTOR_WIDTH_HALF:
    case CL_DEVICE_NATIVE_VECTOR_WIDTH_HALF: {
      if (c.keep_fp) break;
      const cl_uint none = 0;
      return answer(&none, sizeof none, size, value, size_ret);
    }
    case CL_DEVICE_MAX_NUM_SUB_GROUPS: {
      if (!c.no_subgroups) break;
      const cl_uint none = 0;
      return answer(&none, sizeof none, size, value, size_ret);
    }
    default:
      break;
  }
  return get(device, param, size, value, size_ret);
}

cl_int clGetKernelWorkGroupInfo(cl_kernel kernel, cl_device_id device,
                                cl_kernel_work_group_info param, size_t size, void* value,
                                size_t* size_ret) {
  banner();
  static const auto get =
      real<cl_int (*)(cl_kernel, cl_device_id, cl_kernel_work_group_info, size_t, void*, size_t*)>(
          "clGetKernelWorkGroupInfo");
  const cl_int code = get(kernel, device, param, size, value, size_ret);
  if (code == CL_SUCCESS && !config().disabled && param == CL_KERNEL_WORK_GROUP_SIZE &&
      value != nullptr && size >= sizeof(size_t)) {
    auto* v = static_cast<size_t*>(value);
    *v = std::min(*v, config().kernel_wg);
  }
  return code;
}

cl_kernel clCreateKernel(cl_program program, const char* name, cl_int* code) {
  banner();
  static const auto create =
      real<cl_kernel (*)(cl_program, const char*, cl_int*)>("clCreateKernel");
  cl_kernel kernel = create(program, name, code);
  if (kernel != nullptr) forget_kernel(kernel);  // a reused handle keeps no stale arguments
  return kernel;
}

cl_int clCreateKernelsInProgram(cl_program program, cl_uint count, cl_kernel* kernels,
                                cl_uint* count_ret) {
  banner();
  static const auto create =
      real<cl_int (*)(cl_program, cl_uint, cl_kernel*, cl_uint*)>("clCreateKernelsInProgram");
  const cl_int code = create(program, count, kernels, count_ret);
  if (code == CL_SUCCESS && kernels != nullptr) {
    for (cl_uint i = 0; i < count; ++i) forget_kernel(kernels[i]);
  }
  return code;
}

cl_kernel clCloneKernel(cl_kernel source, cl_int* code) {
  banner();
  static const auto clone = real<cl_kernel (*)(cl_kernel, cl_int*)>("clCloneKernel");
  cl_kernel kernel = clone(source, code);
  if (kernel != nullptr) {
    std::lock_guard lock(kernels_mutex);
    const auto found = local_args.find(source);
    if (found != local_args.end()) {
      local_args[kernel] = found->second;
    } else {
      local_args.erase(kernel);
    }
  }
  return kernel;
}

cl_int clSetKernelArg(cl_kernel kernel, cl_uint index, size_t size, const void* value) {
  banner();
  static const auto set =
      real<cl_int (*)(cl_kernel, cl_uint, size_t, const void*)>("clSetKernelArg");
  const cl_int code = set(kernel, index, size, value);
  if (code == CL_SUCCESS && !config().disabled) {
    const bool local = value == nullptr && arg_is_local(kernel, index);
    std::lock_guard lock(kernels_mutex);
    if (local) {
      local_args[kernel][index] = size;
    } else {
      const auto found = local_args.find(kernel);
      if (found != local_args.end()) found->second.erase(index);
    }
  }
  return code;
}

cl_mem clCreateBuffer(cl_context context, cl_mem_flags flags, size_t size, void* host,
                      cl_int* code) {
  banner();
  static const auto create =
      real<cl_mem (*)(cl_context, cl_mem_flags, size_t, void*, cl_int*)>("clCreateBuffer");
  ++buffers;
  if (!config().disabled && size > config().max_alloc) {
    ++refused_alloc;
    if (config().verbose >= 2) say("clCreateBuffer(%zu bytes): CL_INVALID_BUFFER_SIZE", size);
    if (code != nullptr) *code = CL_INVALID_BUFFER_SIZE;
    return nullptr;
  }
  return create(context, flags, size, host, code);
}

cl_mem clCreateBufferWithProperties(cl_context context, const cl_mem_properties* properties,
                                    cl_mem_flags flags, size_t size, void* host, cl_int* code) {
  banner();
  static const auto create =
      real<cl_mem (*)(cl_context, const cl_mem_properties*, cl_mem_flags, size_t, void*, cl_int*)>(
          "clCreateBufferWithProperties");
  ++buffers;
  if (!config().disabled && size > config().max_alloc) {
    ++refused_alloc;
    if (config().verbose >= 2) {
      say("clCreateBufferWithProperties(%zu bytes): CL_INVALID_BUFFER_SIZE", size);
    }
    if (code != nullptr) *code = CL_INVALID_BUFFER_SIZE;
    return nullptr;
  }
  return create(context, properties, flags, size, host, code);
}

cl_int clEnqueueNDRangeKernel(cl_command_queue queue, cl_kernel kernel, cl_uint dims,
                              const size_t* offset, const size_t* global, const size_t* local,
                              cl_uint waits, const cl_event* wait_list, cl_event* event) {
  banner();
  static const auto enqueue =
      real<cl_int (*)(cl_command_queue, cl_kernel, cl_uint, const size_t*, const size_t*,
                      const size_t*, cl_uint, const cl_event*, cl_event*)>(
          "clEnqueueNDRangeKernel");
  ++enqueues;
  const Config& c = config();
  if (c.disabled)
    return enqueue(queue, kernel, dims, offset, global, local, waits, wait_list, event);

  char name[128] = "?";
  auto kernel_name = [&] {
    static const auto info =
        real<cl_int (*)(cl_kernel, cl_kernel_info, size_t, void*, size_t*)>("clGetKernelInfo");
    info(kernel, CL_KERNEL_FUNCTION_NAME, sizeof name - 1, name, nullptr);
    return name;
  };
  if (local != nullptr) {
    size_t product = 1;
    for (cl_uint d = 0; d < dims; ++d) product *= local[d];
    if (product > c.kernel_wg) {
      ++refused_wg;
      if (c.verbose >= 2) {
        std::string shape;
        for (cl_uint d = 0; d < dims; ++d) shape += (d ? "x" : "") + std::to_string(local[d]);
        say("clEnqueueNDRangeKernel('%s', local %s = %zu > %zu): CL_INVALID_WORK_GROUP_SIZE",
            kernel_name(), shape.c_str(), product, c.kernel_wg);
      }
      return CL_INVALID_WORK_GROUP_SIZE;
    }
    for (cl_uint d = 0; d < dims && d < 3; ++d) {
      if (local[d] > c.items[d]) {
        ++refused_item;
        if (c.verbose >= 2) {
          say("clEnqueueNDRangeKernel('%s', local[%u] = %zu > %zu): %s", kernel_name(), d, local[d],
              c.items[d],
              c.item_err_wgs ? "CL_INVALID_WORK_GROUP_SIZE" : "CL_INVALID_WORK_ITEM_SIZE");
        }
        return c.item_err_wgs ? CL_INVALID_WORK_GROUP_SIZE : CL_INVALID_WORK_ITEM_SIZE;
      }
    }
  }
  // Local memory: the driver's CL_KERNEL_LOCAL_MEM_SIZE (PoCL: static __local arrays, and
  // - see README - __local arguments too), else at least the __local arguments we saw set.
  static const auto wg_info =
      real<cl_int (*)(cl_kernel, cl_device_id, cl_kernel_work_group_info, size_t, void*, size_t*)>(
          "clGetKernelWorkGroupInfo");
  static const auto queue_info =
      real<cl_int (*)(cl_command_queue, cl_command_queue_info, size_t, void*, size_t*)>(
          "clGetCommandQueueInfo");
  cl_device_id device = nullptr;
  queue_info(queue, CL_QUEUE_DEVICE, sizeof device, &device, nullptr);
  cl_ulong reported = 0;
  wg_info(kernel, device, CL_KERNEL_LOCAL_MEM_SIZE, sizeof reported, &reported, nullptr);
  const cl_ulong args = local_arg_bytes(kernel);
  const cl_ulong used = std::max<cl_ulong>(reported, args);
  if (used > c.local_mem) {
    ++refused_local;
    if (c.verbose >= 2) {
      say("clEnqueueNDRangeKernel('%s'): local memory %llu B (driver reports %llu, __local args "
          "%llu) > %llu: CL_OUT_OF_RESOURCES",
          kernel_name(), static_cast<unsigned long long>(used),
          static_cast<unsigned long long>(reported), static_cast<unsigned long long>(args),
          static_cast<unsigned long long>(c.local_mem));
    }
    return CL_OUT_OF_RESOURCES;
  }
  return enqueue(queue, kernel, dims, offset, global, local, waits, wait_list, event);
}

}  // extern "C"
