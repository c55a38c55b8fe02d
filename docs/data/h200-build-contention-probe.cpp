// Probe (2026-12-03, H200): which host calls wait while another thread builds a program.
// The main thread times each call's host side (those a validation step makes: a fill, a
// kernel object's creation, its work-group size, a launch), 100 times, first with no build running,
// then while a second thread builds distinct programs without pause (CUDA_CACHE_DISABLE=1). Usage:
// probe [BUILDER_THREADS] (default 4). Built outside the project: g++ -O2 -std=c++17
// h200-build-contention-probe.cpp -lOpenCL -pthread.
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>
static double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
static const char* kFill =
    "__kernel void fill(__global uint* p, uint v, uint n) { uint i = get_global_id(0); if (i < n) "
    "p[i] = v; }\n";
// A program that takes NVIDIA's compiler a while: an unrolled register tile.
static const char* kHeavy =
    "__kernel void heavy(__global const float* a, __global float* c, int k) {\n"
    "  float acc[8][8]; for (int i = 0; i < 8; ++i) for (int j = 0; j < 8; ++j) acc[i][j] = TAG;\n"
    "  #pragma unroll 16\n for (int p = 0; p < k; ++p) {\n"
    "    float x[8], y[8];\n for (int i = 0; i < 8; ++i) { x[i] = a[p * 16 + i]; y[i] = a[p * 16 + "
    "8 + i]; }\n"
    "    for (int i = 0; i < 8; ++i) for (int j = 0; j < 8; ++j) acc[i][j] = fma(x[i], y[j], "
    "acc[i][j]);\n  }\n"
    "  for (int i = 0; i < 8; ++i) for (int j = 0; j < 8; ++j) c[get_global_id(0) * 64 + i * 8 + "
    "j] = acc[i][j];\n}\n";

int main(int argc, char** argv) {
  const int builders = argc > 1 ? std::atoi(argv[1]) : 4;  // the tuner builds on 4 threads
  cl_platform_id plats[8];
  cl_uint np = 0;
  clGetPlatformIDs(8, plats, &np);
  cl_device_id dev = nullptr;
  for (cl_uint i = 0; i < np && !dev; ++i) {
    cl_uint nd = 0;
    if (clGetDeviceIDs(plats[i], CL_DEVICE_TYPE_GPU, 1, &dev, &nd) != CL_SUCCESS || !nd)
      dev = nullptr;
  }
  for (cl_uint i = 0; i < np && !dev; ++i) {  // no GPU: any device (PoCL, to try the probe)
    cl_uint nd = 0;
    if (clGetDeviceIDs(plats[i], CL_DEVICE_TYPE_ALL, 1, &dev, &nd) != CL_SUCCESS || !nd)
      dev = nullptr;
  }
  char name[256] = {};
  clGetDeviceInfo(dev, CL_DEVICE_NAME, sizeof name, name, nullptr);
  std::printf("device %s\n", name);
  cl_int e;
  cl_context ctx = clCreateContext(nullptr, 1, &dev, nullptr, nullptr, &e);
  cl_command_queue q = clCreateCommandQueueWithProperties(ctx, dev, nullptr, &e);
  const size_t bytes = 16u << 20;
  cl_mem buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, bytes, nullptr, &e);
  cl_mem src = clCreateBuffer(ctx, CL_MEM_READ_WRITE, bytes, nullptr, &e);
  cl_program fp = clCreateProgramWithSource(ctx, 1, &kFill, nullptr, &e);
  clBuildProgram(fp, 1, &dev, "", nullptr, nullptr);
  cl_kernel fk = clCreateKernel(fp, "fill", &e);
  cl_uint v = 0xFFFFFFFFu, n = bytes / 4;
  clSetKernelArg(fk, 0, sizeof buf, &buf);
  clSetKernelArg(fk, 1, 4, &v);
  clSetKernelArg(fk, 2, 4, &n);
  std::vector<unsigned char> host(bytes, 0xFF);
  unsigned char pat = 0xFF;
  std::atomic<bool> stop{false};
  std::atomic<int> built{0};
  auto builder = [&] {
    static std::atomic<int> next_tag{1};
    while (!stop) {
      const int tag = next_tag++;
      cl_program p = clCreateProgramWithSource(ctx, 1, &kHeavy, nullptr, &e);
      std::string opt = "-DTAG=" + std::to_string(tag) + ".0f";
      clBuildProgram(p, 1, &dev, opt.c_str(), nullptr, nullptr);
      clReleaseProgram(p);
      ++built;
    }
  };
  size_t global = n;
  auto run = [&](const char* phase) {
    const char* names[] = {
        "fill enqueue",   "fill kernel enqueue",   "copy enqueue", "write enqueue",
        "finish",         "create+release buffer", "set arg",      "create+release kernel",
        "work-group info"};
    for (int op = 0; op < 9; ++op) {
      double sum = 0, worst = 0;
      for (int r = 0; r < 100; ++r) {
        double t0 = now();
        switch (op) {
          case 0:
            clEnqueueFillBuffer(q, buf, &pat, 1, 0, bytes, 0, nullptr, nullptr);
            break;
          case 1:
            clEnqueueNDRangeKernel(q, fk, 1, nullptr, &global, nullptr, 0, nullptr, nullptr);
            break;
          case 2:
            clEnqueueCopyBuffer(q, src, buf, 0, 0, bytes, 0, nullptr, nullptr);
            break;
          case 3:
            clEnqueueWriteBuffer(q, buf, CL_FALSE, 0, bytes, host.data(), 0, nullptr, nullptr);
            break;
          case 4:
            clFinish(q);
            break;
          case 5: {
            cl_mem m = clCreateBuffer(ctx, CL_MEM_READ_WRITE, bytes, nullptr, &e);
            clReleaseMemObject(m);
          } break;
          case 6:
            clSetKernelArg(fk, 1, 4, &v);
            break;
          case 7: {
            cl_kernel k = clCreateKernel(fp, "fill", &e);
            clReleaseKernel(k);
          } break;
          case 8: {
            size_t most = 0;
            clGetKernelWorkGroupInfo(fk, dev, CL_KERNEL_WORK_GROUP_SIZE, sizeof most, &most,
                                     nullptr);
          } break;
        }
        double t = now() - t0;
        sum += t;
        if (t > worst) worst = t;
        clFinish(q);
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
      std::printf("%-14s %-22s 100 calls: sum %8.3f ms, worst %8.3f ms\n", phase, names[op],
                  sum * 1e3, worst * 1e3);
      std::fflush(stdout);
    }
  };
  run("idle");
  std::vector<std::thread> pool;
  for (int i = 0; i < builders; ++i) pool.emplace_back(builder);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  double t0 = now();
  run("while building");
  stop = true;
  for (auto& t : pool) t.join();
  std::printf("programs built meanwhile: %d in %.1f s\n", built.load(), now() - t0);
  return 0;
}
