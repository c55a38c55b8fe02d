// Preloaded (LD_PRELOAD) by the test "opencl: an OpenCL 1.2 platform gets its queues through
// clCreateCommandQueue": the platform and its devices say OpenCL 1.2, and
// clCreateCommandQueueWithProperties, which a 1.x platform does not have, fails and counts its
// calls (in the file TUNEKIT_TEST_QUEUE_CALLS names, one line each); and by "opencl: an OpenCL 1.1
// platform is refused, naming what it lacks", with TUNEKIT_TEST_OPENCL_VERSION.
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>

namespace {

// TUNEKIT_TEST_OPENCL_VERSION may name another ("OpenCL 1.1 ..."), for both.
const char* version_text() {
  const char* asked = std::getenv("TUNEKIT_TEST_OPENCL_VERSION");
  return asked != nullptr ? asked : "OpenCL 1.2 (tunekit test shim)";
}

// Answers a string query with `text`, as a driver does (size with its terminating zero).
cl_int answer(const char* text, size_t size, void* value, size_t* size_ret) {
  const size_t needed = std::strlen(text) + 1;
  if (size_ret != nullptr) *size_ret = needed;
  if (value == nullptr) return CL_SUCCESS;
  if (size < needed) return CL_INVALID_VALUE;
  std::memcpy(value, text, needed);
  return CL_SUCCESS;
}

template <class F>
F real(const char* name) {
  return reinterpret_cast<F>(::dlsym(RTLD_NEXT, name));
}

}  // namespace

extern "C" cl_int clGetPlatformInfo(cl_platform_id platform, cl_platform_info name, size_t size,
                                    void* value, size_t* size_ret) {
  if (name == CL_PLATFORM_VERSION) return answer(version_text(), size, value, size_ret);
  using Get = cl_int (*)(cl_platform_id, cl_platform_info, size_t, void*, size_t*);
  const auto get = real<Get>("clGetPlatformInfo");
  return get ? get(platform, name, size, value, size_ret) : CL_INVALID_OPERATION;
}

extern "C" cl_int clGetDeviceInfo(cl_device_id device, cl_device_info name, size_t size,
                                  void* value, size_t* size_ret) {
  if (name == CL_DEVICE_VERSION) return answer(version_text(), size, value, size_ret);
  using Get = cl_int (*)(cl_device_id, cl_device_info, size_t, void*, size_t*);
  const auto get = real<Get>("clGetDeviceInfo");
  return get ? get(device, name, size, value, size_ret) : CL_INVALID_OPERATION;
}

extern "C" cl_command_queue clCreateCommandQueueWithProperties(cl_context, cl_device_id,
                                                               const cl_queue_properties*,
                                                               cl_int* code) {
  if (const char* calls = std::getenv("TUNEKIT_TEST_QUEUE_CALLS")) {
    if (std::FILE* f = std::fopen(calls, "a")) {
      std::fputs("clCreateCommandQueueWithProperties\n", f);
      std::fclose(f);
    }
  }
  if (code != nullptr) *code = CL_INVALID_OPERATION;
  return nullptr;
}
