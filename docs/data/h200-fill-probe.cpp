// Probe (2026-12-03, H200): host time of clEnqueueFillBuffer by pattern size, against a write.
// Built outside the project: g++ -O2 -std=c++17 h200-fill-probe.cpp -lOpenCL. Log:
// h200-fill-probe.log.
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>
static double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
int main(int argc, char** argv) {
  cl_uint np;
  clGetPlatformIDs(0, nullptr, &np);
  std::vector<cl_platform_id> ps(np);
  clGetPlatformIDs(np, ps.data(), nullptr);
  cl_device_id dev = nullptr;
  for (auto p : ps) {
    cl_uint nd = 0;
    if (clGetDeviceIDs(p, CL_DEVICE_TYPE_GPU, 1, &dev, &nd) == CL_SUCCESS && nd) break;
    dev = nullptr;
  }
  if (!dev)
    for (auto p : ps) {
      cl_uint nd = 0;
      if (clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &dev, &nd) == CL_SUCCESS && nd) break;
    }
  char name[256];
  clGetDeviceInfo(dev, CL_DEVICE_NAME, sizeof name, name, nullptr);
  std::printf("device %s\n", name);
  cl_int e;
  cl_context ctx = clCreateContext(nullptr, 1, &dev, nullptr, nullptr, &e);
  cl_queue_properties props[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE, 0};
  cl_command_queue q = clCreateCommandQueueWithProperties(ctx, dev, props, &e);
  for (size_t mb : {4, 16, 64}) {
    size_t bytes = mb << 20;
    cl_mem buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, bytes, nullptr, &e);
    clFinish(q);
    for (size_t ps_ : {1, 2, 4, 16}) {
      unsigned char pat[16];
      std::memset(pat, 0xFF, 16);
      for (int rep = 0; rep < 3; ++rep) {
        cl_event ev;
        double t0 = now();
        e = clEnqueueFillBuffer(q, buf, pat, ps_, 0, bytes, 0, nullptr, &ev);
        double t1 = now();
        clFinish(q);
        double t2 = now();
        cl_ulong a = 0, b = 0;
        clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, 8, &a, nullptr);
        clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, 8, &b, nullptr);
        std::printf(
            "%3zu MB fill pattern %2zu: rc %d enqueue %.3f ms, to finish %.3f ms, device %.3f ms\n",
            mb, ps_, e, (t1 - t0) * 1e3, (t2 - t0) * 1e3, (b - a) * 1e-6);
        clReleaseEvent(ev);
      }
    }
    std::vector<unsigned char> host(bytes, 0xFF);
    for (int rep = 0; rep < 2; ++rep) {
      double t0 = now();
      clEnqueueWriteBuffer(q, buf, CL_FALSE, 0, bytes, host.data(), 0, nullptr, nullptr);
      double t1 = now();
      clFinish(q);
      double t2 = now();
      std::printf("%3zu MB write: enqueue %.3f ms, to finish %.3f ms\n", mb, (t1 - t0) * 1e3,
                  (t2 - t0) * 1e3);
    }
    clReleaseMemObject(buf);
  }
  return 0;
}
