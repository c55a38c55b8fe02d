// Preloaded (LD_PRELOAD) by the test "opencl: a build that failed for the moment is built again
// by the next request": clBuildProgram answers CL_OUT_OF_HOST_MEMORY, as a driver out of memory
// for a moment does, while the file named by TUNEKIT_TEST_FAILING_BUILDS exists; else the
// driver's own clBuildProgram builds.
#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>

#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>

extern "C" cl_int clBuildProgram(cl_program program, cl_uint devices, const cl_device_id* list,
                                 const char* options, void(CL_CALLBACK* notify)(cl_program, void*),
                                 void* data) {
  const char* flag = std::getenv("TUNEKIT_TEST_FAILING_BUILDS");
  if (flag != nullptr && ::access(flag, F_OK) == 0) return CL_OUT_OF_HOST_MEMORY;
  using Build = cl_int (*)(cl_program, cl_uint, const cl_device_id*, const char*,
                           void(CL_CALLBACK*)(cl_program, void*), void*);
  const auto real = reinterpret_cast<Build>(::dlsym(RTLD_NEXT, "clBuildProgram"));
  return real ? real(program, devices, list, options, notify, data) : CL_INVALID_OPERATION;
}
