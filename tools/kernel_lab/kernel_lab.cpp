// kernel_lab: sweeps the parameters of tunekit's OpenCL kernels (kernels/*.cl) on every OpenCL
// device, checks each configuration against a double-precision host reference, times it with
// profiling events and compares GEMM with CLBlast SGEMM on the same device, sizes and data.
//
// Usage: kernel_lab [--device SUBSTR] [--kernels DIR] [--only matmul|reduce|transpose]
//                   [--sizes 1024,2048] [--shapes MxNxK,...] [--reps N] [--quick]
//                   [--filter A|B] [--grid gpu|cpu] [--staged-prep]
// Output: one table row per (kernel, params, size): median ms, GFLOP/s or GB/s, max rel error,
// PASS/FAIL; a GEMM call of several kernels (passes, a split's sum) adds each kernel's busy time
// and the gaps between them.
// Besides kernels/*.cl, the GEMM sweep runs the lab's own matmul_warp.cl (beside this file; f32
// only), a kernel of another structure measured against matmul_reg (issue 32); the transpose
// sweep runs transpose_lab.cl's vector copy (a kernel's copy ceiling, beside
// clEnqueueCopyBuffer's) and its transpose of 16-byte local accesses. matmul_staged.cl
// takes A transposed and rows of whole 16-byte chunks: the lab transposes and pads on the host, so
// that time is not in the kernel's (--staged-prep runs the op's passes on the device in the timed
// call instead); `ksplit` runs it on slices of K, and matmul_sum.cl adds them; its KSLICE macro
// shares each K tile among groups of work-items of a work-group (local dimension 2); its A_DIRECT
// configurations take A and B as they are, with no pass in any case. KERNEL_LAB_BUILD_OPTIONS
// adds options to every build and prints each build's log on stderr; KERNEL_LAB_BINARIES=DIR
// keeps each build's binary there (PTX on NVIDIA).
#define CL_HPP_TARGET_OPENCL_VERSION 300
#define CL_HPP_MINIMUM_OPENCL_VERSION 200
#define CL_HPP_ENABLE_EXCEPTIONS
#include <clblast.h>

#include <CL/opencl.hpp>
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "../../src/ops/gemm_rules.hpp"      // the blocked kernel's rules, as the op applies them
#include "../../src/ops/operand_passes.hpp"  // the op's passes before the staged product
#include "../../src/ops/row_rules.hpp"       // the rows a row kernel's group reduces
#include "../../src/ops/sizes.hpp"

namespace {

struct Options {
  std::string device;
  std::string kernel_dir = "kernels";
  std::string only;
  std::vector<int> sizes;
  std::vector<std::array<size_t, 3>> shapes;  // GEMM M x N x K timed after the square sizes
  std::string filter;  // run only configurations whose "kernel params" text contains this
  std::string grid;    // "gpu" or "cpu": force that parameter grid (default: by device type)
  int reps = 15;
  bool quick = false;
  bool staged_prep = false;  // time matmul_staged with the op's passes: A transposed, B padded
};
const Options* g_opt = nullptr;
// The filter: alternatives separated by '|', each a substring of "kernel params".
bool selected(const std::string& kernel, const std::string& params) {
  if (g_opt == nullptr || g_opt->filter.empty()) return true;
  const std::string text = kernel + " " + params;
  std::size_t from = 0;
  while (true) {
    const std::size_t bar = g_opt->filter.find('|', from);
    const std::string alt = g_opt->filter.substr(from, bar == std::string::npos ? bar : bar - from);
    if (!alt.empty() && text.find(alt) != std::string::npos) return true;
    if (bar == std::string::npos) return false;
    from = bar + 1;
  }
}

std::vector<int> parse_list(const std::string& s) {
  std::vector<int> v;
  std::stringstream ss(s);
  std::string t;
  while (std::getline(ss, t, ',')) v.push_back(std::stoi(t));
  return v;
}

// "MxNxK,..." (each at least 1).
std::vector<std::array<size_t, 3>> parse_shapes(const std::string& s) {
  std::vector<std::array<size_t, 3>> v;
  std::stringstream ss(s);
  std::string t;
  while (std::getline(ss, t, ',')) {
    std::array<size_t, 3> d{};
    char x1 = 0, x2 = 0;
    std::stringstream one(t);
    if (!(one >> d[0] >> x1 >> d[1] >> x2 >> d[2]) || x1 != 'x' || x2 != 'x' || !one.eof() ||
        d[0] == 0 || d[1] == 0 || d[2] == 0)
      throw std::runtime_error("--shapes: '" + t + "' is not MxNxK");
    v.push_back(d);
  }
  return v;
}

std::string read_text(const std::string& path) {
  std::ifstream f(path);
  if (!f) throw std::runtime_error("cannot read " + path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// ---- fp16 host conversion (round to nearest even), for PRECISION=16 kernels ---------------------
uint16_t to_half(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint32_t sign = (x >> 16) & 0x8000u;
  int32_t e = int32_t((x >> 23) & 0xff) - 127 + 15;
  uint32_t m = x & 0x7fffffu;
  if (e >= 31) return uint16_t(sign | 0x7c00u);
  if (e <= 0) {
    if (e < -10) return uint16_t(sign);
    m |= 0x800000u;
    const int shift = 14 - e;
    uint32_t h = m >> shift;
    const uint32_t rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (h & 1))) ++h;
    return uint16_t(sign | h);
  }
  uint32_t h = (uint32_t(e) << 10) | (m >> 13);
  const uint32_t rem = m & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1))) ++h;
  return uint16_t(sign | h);
}
float from_half(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000u) << 16;
  int e = (h >> 10) & 0x1f;
  uint32_t m = h & 0x3ffu, x;
  if (e == 0) {
    if (m == 0) {
      x = sign;
    } else {
      e = 1;
      while (!(m & 0x400u)) {
        m <<= 1;
        --e;
      }
      m &= 0x3ffu;
      x = sign | (uint32_t(e - 15 + 127) << 23) | (m << 13);
    }
  } else if (e == 31) {
    x = sign | 0x7f800000u | (m << 13);
  } else {
    x = sign | (uint32_t(e - 15 + 127) << 23) | (m << 13);
  }
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

using Params = std::vector<std::pair<std::string, int>>;

int param(const Params& p, const std::string& name, int def) {
  for (auto& [k, v] : p)
    if (k == name) return v;
  return def;
}
std::string params_text(const Params& p) {
  std::string s;
  for (auto& [k, v] : p) s += (s.empty() ? "" : " ") + k + "=" + std::to_string(v);
  return s;
}
// Build options: every parameter whose name is upper case is a -D macro; lower-case ones (lx, ly,
// groups) are host-side launch parameters.
std::string build_options(const Params& p) {
  std::string s = "-cl-mad-enable";
  for (auto& [k, v] : p)
    if (!k.empty() && std::isupper(static_cast<unsigned char>(k[0])))
      s += " -D" + k + "=" + std::to_string(v);
  return s;
}
using tunekit::ops::ceil_div;
using tunekit::ops::round_up;

struct Lab {
  cl::Device dev;
  cl::Context ctx;
  cl::CommandQueue q;
  std::string dev_name;
  bool gpu = false, nvidia = false;
  size_t max_wg = 0, local_mem = 0;
  cl_uint cus = 0;
  std::string kernel_dir;
  std::map<std::string, std::string> sources;
  std::map<std::string, cl::Program> programs;

  Lab(const cl::Device& d, const std::string& kdir)
      : dev(d), ctx(d), q(ctx, d, CL_QUEUE_PROFILING_ENABLE), kernel_dir(kdir) {
    dev_name = d.getInfo<CL_DEVICE_NAME>();
    gpu = (d.getInfo<CL_DEVICE_TYPE>() & CL_DEVICE_TYPE_GPU) != 0;
    nvidia = d.getInfo<CL_DEVICE_VENDOR>().find("NVIDIA") != std::string::npos;
    max_wg = d.getInfo<CL_DEVICE_MAX_WORK_GROUP_SIZE>();
    local_mem = d.getInfo<CL_DEVICE_LOCAL_MEM_SIZE>();
    cus = d.getInfo<CL_DEVICE_MAX_COMPUTE_UNITS>();
  }

  // After a kernel fault the context is unusable on some drivers (NVIDIA:
  // CL_INVALID_COMMAND_QUEUE); start over with a fresh one. The caller re-creates its buffers.
  void reset() {
    q.finish();
    programs.clear();
    ctx = cl::Context(dev);
    q = cl::CommandQueue(ctx, dev, CL_QUEUE_PROFILING_ENABLE);
  }
  void safe_reset() {
    try {
      reset();
    } catch (...) {
      programs.clear();
      ctx = cl::Context(dev);
      q = cl::CommandQueue(ctx, dev, CL_QUEUE_PROFILING_ENABLE);
    }
  }

  // Returns an empty program and fills err on a build failure (the sweep goes on).
  cl::Program program(const std::string& file, const std::string& opts, std::string& err) {
    const std::string key = file + "|" + opts;
    if (auto it = programs.find(key); it != programs.end()) return it->second;
    if (!sources.count(file)) sources[file] = read_text(kernel_dir + "/" + file);
    cl::Program prog(ctx, sources[file]);
    // KERNEL_LAB_BUILD_OPTIONS: more options for every build, each build's log on stderr (on
    // NVIDIA, -cl-nv-verbose logs ptxas's registers and spills per kernel).
    const char* extra = std::getenv("KERNEL_LAB_BUILD_OPTIONS");
    try {
      // -I: a kernel's #include "tensor_core.cl" is found beside it, as the op's expansion does.
      prog.build({dev},
                 (opts + " -I " + kernel_dir + (extra ? " " + std::string(extra) : "")).c_str());
    } catch (const cl::Error&) {
      err = "build failed: " + prog.getBuildInfo<CL_PROGRAM_BUILD_LOG>(dev).substr(0, 400);
      return cl::Program();
    }
    if (extra != nullptr)
      std::fprintf(stderr, "build log of %s [%s]:\n%s\n", file.c_str(), opts.c_str(),
                   prog.getBuildInfo<CL_PROGRAM_BUILD_LOG>(dev).c_str());
    save_binary(prog, file, opts);
    programs[key] = prog;
    return prog;
  }

  // KERNEL_LAB_BINARIES=DIR: each built program's binary (PTX on NVIDIA, for `ptxas -arch=sm_90
  // -v` and `cuobjdump -sass` there, in /usr/local/cuda/bin) written to DIR/program-N.bin, with
  // N and the build's file and options listed in DIR/index.txt. NVIDIA ends its PTX with a NUL,
  // which ptxas refuses ("Unexpected EOF"): a PTX text's trailing NULs are left out.
  void save_binary(const cl::Program& prog, const std::string& file, const std::string& opts) {
    const char* dir = std::getenv("KERNEL_LAB_BINARIES");
    if (dir == nullptr || *dir == '\0') return;
    const auto binaries = prog.getInfo<CL_PROGRAM_BINARIES>();
    if (binaries.empty()) return;
    const std::string name = "program-" + std::to_string(saved_binaries++) + ".bin";
    const auto& binary = binaries.front();
    std::size_t size = binary.size();
    const bool ptx = size >= 2 && binary[0] == '/' && binary[1] == '/';  // PTX opens with a comment
    while (ptx && size > 0 && binary[size - 1] == 0) --size;
    if (std::FILE* out = std::fopen((std::string(dir) + "/" + name).c_str(), "wb")) {
      std::fwrite(binary.data(), 1, size, out);
      std::fclose(out);
    }
    if (std::FILE* index = std::fopen((std::string(dir) + "/index.txt").c_str(), "a")) {
      std::fprintf(index, "%s %s [%s]\n", name.c_str(), file.c_str(), opts.c_str());
      std::fclose(index);
    }
  }
  int saved_binaries = 0;

  // Times one call (a list of launches) as end(last) - start(first) from profiling events, the
  // gaps between its kernels in: the median of `reps` samples. Short calls are batched between
  // two events (NVIDIA's timer ticks in 1 us), reported per call. `parts`, when given, gets each
  // of the call's kernels' median busy time in enqueue order: the span beyond their sum is gaps.
  double time_ms(const std::function<void(std::vector<cl::Event>&)>& call, int reps,
                 std::vector<double>* parts = nullptr) {
    std::vector<cl::Event> ev;
    call(ev);  // warm-up (also the first-call build cost of CLBlast etc.)
    q.finish();
    std::vector<std::vector<double>> busy;  // [kernel][sample]
    auto span = [&](int batch, bool keep) {
      std::vector<std::vector<cl::Event>> calls(batch);
      for (auto& e : calls) call(e);
      q.finish();
      const auto t0 = calls.front().front().getProfilingInfo<CL_PROFILING_COMMAND_START>();
      const auto t1 = calls.back().back().getProfilingInfo<CL_PROFILING_COMMAND_END>();
      if (keep && parts != nullptr) {
        busy.resize(calls.front().size());
        for (size_t k = 0; k < busy.size(); ++k) {
          double sum = 0;
          for (const auto& e : calls)
            sum += double(e[k].getProfilingInfo<CL_PROFILING_COMMAND_END>() -
                          e[k].getProfilingInfo<CL_PROFILING_COMMAND_START>());
          busy[k].push_back(sum * 1e-6 / batch);
        }
      }
      return double(t1 - t0) * 1e-6 / batch;
    };
    const double one = span(1, false);
    const int batch =
        std::clamp(int(0.3 / std::max(one, 1e-6)), 1, 100);  // about 0.3 ms per sample
    std::vector<double> s;
    for (int r = 0; r < reps; ++r) s.push_back(span(batch, true));
    if (parts != nullptr) {
      parts->clear();
      for (auto& b : busy) parts->push_back(median(b));
    }
    return median(s);
  }
};

FILE* g_log = stdout;
void row(const std::string& dev, const std::string& kernel, const std::string& params,
         const std::string& size, double ms, const std::string& rate, double err,
         const std::string& status, const std::string& extra = "") {
  std::fprintf(g_log, "%-26.26s | %-16s | %-62s | %-16s | %10.4f | %16s | %8.1e | %s%s\n",
               dev.c_str(), kernel.c_str(), params.c_str(), size.c_str(), ms, rate.c_str(), err,
               status.c_str(), extra.c_str());
  std::fflush(g_log);
}
std::string fmt(const char* f, double v) {
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

// ===================================== GEMM ===================================================

struct GemmConfig {
  std::string file, kernel;
  Params p;
};

// Global and local NDRange of a GEMM configuration for an M x N output (see kernels/README.md).
void gemm_ndrange(const GemmConfig& c, size_t M, size_t N, cl::NDRange& global,
                  cl::NDRange& local) {
  const auto& p = c.p;
  if (c.kernel == "matmul_naive") {
    const int lx = param(p, "lx", 16), ly = param(p, "ly", 16);
    global = cl::NDRange(round_up(N, lx), round_up(M, ly));
    local = cl::NDRange(lx, ly);
  } else if (c.kernel == "matmul_tiled") {
    const int ts = param(p, "TS", 16);
    global = cl::NDRange(round_up(N, ts), round_up(M, ts));
    local = cl::NDRange(ts, ts);
  } else if (c.kernel == "matmul_reg" || c.kernel == "matmul_staged") {
    const int mwg = param(p, "MWG", 64), nwg = param(p, "NWG", 64), md = param(p, "MDIMC", 16),
              nd = param(p, "NDIMC", 16);
    global = cl::NDRange(ceil_div(N, nwg) * nd, ceil_div(M, mwg) * md);
    local = cl::NDRange(nd, md);
  } else if (c.kernel == "matmul_warp") {  // tools/kernel_lab/matmul_warp.cl
    const int gm = param(p, "GM", 2), gn = param(p, "GN", 2), wm = param(p, "WARPS_M", 4),
              wn = param(p, "WARPS_N", 2);
    const int bm = wm * 16 * gm, bn = wn * 32 * gn, threads = wm * wn * 32;
    global = cl::NDRange(ceil_div(N, bn) * threads, ceil_div(M, bm));
    local = cl::NDRange(threads, 1);
  } else {  // matmul_direct
    const int wptm = param(p, "WPTM", 8), vwn = param(p, "VWN", 8), nvec = param(p, "NVEC", 2);
    const int lx = param(p, "lx", 1), ly = param(p, "ly", 16);
    global =
        cl::NDRange(round_up(ceil_div(N, size_t(nvec) * vwn), lx), round_up(ceil_div(M, wptm), ly));
    local = cl::NDRange(lx, ly);
  }
}

struct GemmData {
  size_t M, N, K;
  std::vector<float> a, b, c0;  // values as the device sees them (rounded to half for fp16)
};

GemmData make_gemm(size_t M, size_t N, size_t K, bool half, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(0.25f, 1.0f);
  std::bernoulli_distribution sgn(0.5);
  auto val = [&] {
    float x = u(rng) * (sgn(rng) ? -1.f : 1.f);
    return half ? from_half(to_half(x)) : x;
  };
  GemmData d{M, N, K, {}, {}, {}};
  d.a.resize(M * K);
  d.b.resize(K * N);
  d.c0.resize(M * N);
  for (auto& x : d.a) x = val();
  for (auto& x : d.b) x = val();
  for (auto& x : d.c0) x = val();
  return d;
}

// Max over checked elements of |C - ref| / (sum_k |alpha a b| + |beta c0|), ref in double.
double gemm_error(const GemmData& d, const std::vector<float>& c, float alpha, float beta,
                  bool full) {
  std::vector<std::pair<size_t, size_t>> idx;
  if (full) {
    for (size_t i = 0; i < d.M; ++i)
      for (size_t j = 0; j < d.N; ++j) idx.emplace_back(i, j);
  } else {
    std::mt19937 rng(99);
    for (int s = 0; s < 400; ++s) idx.emplace_back(rng() % d.M, rng() % d.N);
    for (size_t t = 0; t < 8; ++t) {  // last rows and columns (tile edges)
      idx.emplace_back(d.M - 1, rng() % d.N);
      idx.emplace_back(rng() % d.M, d.N - 1);
    }
    idx.emplace_back(d.M - 1, d.N - 1);
    idx.emplace_back(0, 0);
  }
  double worst = 0;
  for (auto [i, j] : idx) {
    double ref = 0, mag = 0;
    for (size_t k = 0; k < d.K; ++k) {
      const double t = double(d.a[i * d.K + k]) * d.b[k * d.N + j];
      ref += t;
      mag += std::fabs(t);
    }
    ref = alpha * ref + (beta != 0 ? double(beta) * d.c0[i * d.N + j] : 0.0);
    mag = std::fabs(alpha) * mag + std::fabs(double(beta) * d.c0[i * d.N + j]);
    const double e = std::fabs(double(c[i * d.N + j]) - ref) / mag;
    worst = std::max(worst, std::isfinite(e) ? e : 1e30);
  }
  return worst;
}

struct GemmBuffers {
  cl::Buffer A, B, C;
  cl::Buffer At;  // A transposed (K rows of lda), for matmul_staged.cl; f32 only
  cl::Buffer Bp;  // B with rows of ldb, for matmul_staged.cl (B itself where N is whole chunks)
  size_t lda, ldb;
  bool half;
  size_t M, N, K;
};

GemmBuffers upload(Lab& lab, const GemmData& d, bool half) {
  const size_t es = half ? 2 : 4;
  auto buf = [&](const std::vector<float>& v, cl_mem_flags f) {
    if (!half)
      return cl::Buffer(lab.ctx, f | CL_MEM_COPY_HOST_PTR, v.size() * es,
                        const_cast<float*>(v.data()));
    std::vector<uint16_t> h(v.size());
    for (size_t i = 0; i < v.size(); ++i) h[i] = to_half(v[i]);
    return cl::Buffer(lab.ctx, f | CL_MEM_COPY_HOST_PTR, v.size() * es, h.data());
  };
  using tunekit::ops::gemm::staged_row_floats;
  const size_t lda = staged_row_floats(d.M), ldb = staged_row_floats(d.N);
  std::vector<float> at(half ? 0 : d.K * lda), bp(half || ldb == d.N ? 0 : d.K * ldb);
  for (size_t i = 0; i < (half ? 0 : d.a.size()); ++i) at[(i % d.K) * lda + i / d.K] = d.a[i];
  for (size_t i = 0; i < (bp.empty() ? 0 : d.b.size()); ++i) bp[(i / d.N) * ldb + i % d.N] = d.b[i];
  cl::Buffer B = buf(d.b, CL_MEM_READ_ONLY);
  return {buf(d.a, CL_MEM_READ_ONLY),
          B,
          buf(d.c0, CL_MEM_READ_WRITE),
          half ? cl::Buffer() : buf(at, CL_MEM_READ_ONLY),
          bp.empty() ? B : buf(bp, CL_MEM_READ_ONLY),
          lda,
          ldb,
          half,
          d.M,
          d.N,
          d.K};
}

std::vector<float> download(Lab& lab, const GemmBuffers& g) {
  const size_t n = g.M * g.N;
  std::vector<float> c(n);
  if (!g.half) {
    lab.q.enqueueReadBuffer(g.C, CL_TRUE, 0, n * 4, c.data());
  } else {
    std::vector<uint16_t> h(n);
    lab.q.enqueueReadBuffer(g.C, CL_TRUE, 0, n * 2, h.data());
    for (size_t i = 0; i < n; ++i) c[i] = from_half(h[i]);
  }
  return c;
}

void reset_c(Lab& lab, const GemmBuffers& g, const GemmData& d, bool nan) {
  const size_t n = g.M * g.N;
  if (nan) {  // beta = 0 must overwrite every element without reading it
    std::vector<uint16_t> h(n * (g.half ? 1 : 2), 0x7e00);
    std::vector<float> f(n, std::numeric_limits<float>::quiet_NaN());
    lab.q.enqueueWriteBuffer(g.C, CL_TRUE, 0, n * (g.half ? 2 : 4),
                             g.half ? static_cast<void*>(h.data()) : static_cast<void*>(f.data()));
  } else if (!g.half) {
    lab.q.enqueueWriteBuffer(g.C, CL_TRUE, 0, n * 4, d.c0.data());
  } else {
    std::vector<uint16_t> h(n);
    for (size_t i = 0; i < n; ++i) h[i] = to_half(d.c0[i]);
    lab.q.enqueueWriteBuffer(g.C, CL_TRUE, 0, n * 2, h.data());
  }
}

struct GemmResult {
  bool ok = false;
  bool runtime_error = false;  // the context may be lost
  double ms = 0, gflops = 0, err = 0;
  std::vector<double> parts_ms;  // each kernel of the call, busy (time_ms's parts)
  std::string why;
};

// "  (kernels busy 0.0031 + 0.0582 ms, gaps 0.0010 ms)": where a call of several kernels (the
// passes of --staged-prep, a split's sum) spends its span, in enqueue order; empty for one kernel.
std::string parts_text(const GemmResult& r) {
  if (r.parts_ms.size() < 2) return "";
  std::string text = "  (kernels busy ";
  double all = 0;
  char number[32];
  for (size_t k = 0; k < r.parts_ms.size(); ++k) {
    std::snprintf(number, sizeof number, "%s%.4f", k == 0 ? "" : " + ", r.parts_ms[k]);
    text += number;
    all += r.parts_ms[k];
  }
  std::snprintf(number, sizeof number, " ms, gaps %.4f ms)", r.ms - all);
  return text + number;
}

// Launches one configuration: returns a callable that enqueues it, or sets why.
std::function<void(std::vector<cl::Event>&)> gemm_call(Lab& lab, const GemmConfig& c,
                                                       const GemmBuffers& g, float alpha,
                                                       float beta, std::string& why) {
  // matmul_staged.cl copies with cp.async on NVIDIA, at once elsewhere.
  const bool staged = c.kernel == "matmul_staged";
  const std::string options = build_options(c.p) + (g.half ? " -DPRECISION=16" : "") +
                              (staged && !lab.nvidia ? " -DCP_ASYNC=0" : "");
  cl::Program prog = lab.program(c.file, options, why);
  if (!prog()) return {};
  auto k = std::make_shared<cl::Kernel>(prog, c.kernel.c_str());
  cl::NDRange global, local;
  gemm_ndrange(c, g.M, g.N, global, local);
  if (!staged) {
    k->setArg(0, int(g.M));
    k->setArg(1, int(g.N));
    k->setArg(2, int(g.K));
    k->setArg(3, alpha);
    k->setArg(4, beta);
    k->setArg(5, g.A);
    k->setArg(6, g.B);
    k->setArg(7, g.C);
    return [&lab, k, global, local](std::vector<cl::Event>& ev) {
      ev.emplace_back();
      lab.q.enqueueNDRangeKernel(*k, cl::NullRange, global, local, nullptr, &ev.back());
    };
  }
  // Slices of KS rows of K (a multiple of KWG) into partial products, then their sum.
  const size_t slices = size_t(param(c.p, "ksplit", 1)), kwg = size_t(param(c.p, "KWG", 16));
  const size_t ks = round_up(ceil_div(g.K, slices), kwg);
  // A_DIRECT takes A and B as they are (rows of K and N floats), with no pass before it.
  const bool direct = param(c.p, "A_DIRECT", 0) != 0;
  k->setArg(0, int(g.M));
  k->setArg(1, int(g.N));
  k->setArg(2, int(g.K));
  k->setArg(3, int(direct ? g.K : g.lda));
  k->setArg(4, int(direct ? g.N : g.ldb));
  k->setArg(5, int(ks));
  k->setArg(6, slices > 1 ? 1.0f : alpha);
  k->setArg(7, slices > 1 ? 0.0f : beta);
  k->setArg(8, direct ? g.A : g.At);
  k->setArg(9, direct ? g.B : g.Bp);
  // KSLICE work-items along K in each work-group (local dim 2), on every slice.
  const size_t kslice = size_t(param(c.p, "KSLICE", 1));
  const cl::NDRange global3(global[0], global[1], slices * kslice),
      local3(local[0], local[1], kslice);
  // --staged-prep: the op's pass before the product (src/ops/operand_passes.hpp's launch of
  // matmul_operands.cl: A transposed, and B padded where N is not whole chunks), in the timed call.
  namespace passes = tunekit::ops::operand_passes;
  std::function<void(std::vector<cl::Event>&)> prep = [](std::vector<cl::Event>&) {};
  if (g_opt != nullptr && g_opt->staged_prep && !direct) {
    cl::Program op = lab.program("matmul_operands.cl", passes::operands_options(), why);
    if (!op()) return {};
    auto operands = std::make_shared<cl::Kernel>(op, "matmul_staged_operands");
    operands->setArg(0, int(g.M));
    operands->setArg(1, int(g.K));
    operands->setArg(2, int(g.lda));
    operands->setArg(3, int(g.N));
    operands->setArg(4, int(g.ldb));
    operands->setArg(5, g.A);
    operands->setArg(6, g.At);
    operands->setArg(7, g.B);
    operands->setArg(8, g.Bp);  // B itself where it is not padded: not written
    const cl::NDRange og(passes::operands_global(g.K, g.lda, g.N, g.ldb)),
        ol(passes::operand_items);
    prep = [&lab, operands, og, ol](std::vector<cl::Event>& ev) {
      ev.emplace_back();
      lab.q.enqueueNDRangeKernel(*operands, cl::NullRange, og, ol, nullptr, &ev.back());
    };
  }
  if (slices == 1) {
    k->setArg(10, g.C);
    return [&lab, k, global3, local3, prep](std::vector<cl::Event>& ev) {
      prep(ev);
      ev.emplace_back();
      lab.q.enqueueNDRangeKernel(*k, cl::NullRange, global3, local3, nullptr, &ev.back());
    };
  }
  cl::Program sum_prog = lab.program("matmul_sum.cl", passes::sum_options(32), why);
  if (!sum_prog()) return {};
  cl::Buffer partials(lab.ctx, CL_MEM_READ_WRITE, slices * g.M * g.N * sizeof(float));
  k->setArg(10, partials);
  auto sum = std::make_shared<cl::Kernel>(sum_prog, "matmul_split_sum");
  sum->setArg(0, int(g.M * g.N));
  sum->setArg(1, int(g.N));
  sum->setArg(2, int(g.N));  // all of C: the lab does not peel
  sum->setArg(3, int(slices));
  sum->setArg(4, alpha);
  sum->setArg(5, beta);
  sum->setArg(6, partials);
  sum->setArg(7, g.C);
  const auto range = passes::sum_range(g.M, g.N);
  const cl::NDRange sum_global(range.global[0], range.global[1]),
      sum_local(range.local[0], range.local[1]);
  // The lambda keeps `partials` alive: a kernel argument does not hold its buffer.
  return [&lab, k, sum, partials, global3, local3, sum_global, sum_local,
          prep](std::vector<cl::Event>& ev) {
    prep(ev);
    ev.emplace_back();
    lab.q.enqueueNDRangeKernel(*k, cl::NullRange, global3, local3, nullptr, &ev.back());
    ev.emplace_back();
    lab.q.enqueueNDRangeKernel(*sum, cl::NullRange, sum_global, sum_local, nullptr, &ev.back());
  };
}

GemmResult run_gemm(Lab& lab, const GemmConfig& c, const GemmData& d, const GemmBuffers& g,
                    int reps, bool time_it, float alpha, float beta, bool full_check, double tol) {
  GemmResult r;
  try {
    auto call = gemm_call(lab, c, g, alpha, beta, r.why);
    if (!call) return r;
    reset_c(lab, g, d, beta == 0.0f);
    if (time_it) {
      r.ms = lab.time_ms(call, reps, &r.parts_ms);
      r.gflops = 2.0 * d.M * d.N * d.K / (r.ms * 1e6);
      if (beta != 0.0f) reset_c(lab, g, d, false);
    }
    std::vector<cl::Event> ev;
    call(ev);
    lab.q.finish();
    r.err = gemm_error(d, download(lab, g), alpha, beta, full_check);
    r.ok = r.err < tol;
    if (!r.ok) r.why = "wrong result";
  } catch (const cl::Error& e) {
    r.why = std::string("OpenCL error ") + e.what() + " " + std::to_string(e.err());
    r.runtime_error = true;
  }
  return r;
}

double run_clblast(Lab& lab, const GemmData& d, const GemmBuffers& g, int reps, double& err) {
  std::vector<double> ms;
  cl_command_queue qq = lab.q();
  for (int r = 0; r < reps + 2; ++r) {
    lab.q.finish();
    const auto w0 = std::chrono::steady_clock::now();
    cl_event ev = nullptr;
    const auto st = clblast::Gemm(clblast::Layout::kRowMajor, clblast::Transpose::kNo,
                                  clblast::Transpose::kNo, d.M, d.N, d.K, 1.0f, g.A(), 0, d.K,
                                  g.B(), 0, d.N, 0.0f, g.C(), 0, d.N, &qq, &ev);
    if (st != clblast::StatusCode::kSuccess) {
      err = -int(st);
      return 0;
    }
    clWaitForEvents(1, &ev);
    lab.q.finish();
    clReleaseEvent(ev);
    const auto w1 = std::chrono::steady_clock::now();
    if (r >= 2) ms.push_back(std::chrono::duration<double, std::milli>(w1 - w0).count());
  }
  err = gemm_error(d, download(lab, g), 1.0f, 0.0f, false);
  return median(ms);
}

// The #error constraints of matmul_reg.cl plus the device's local memory and work-group size, on
// the host, so that the sweep does not spend builds on configurations that cannot exist.
bool gemm_valid(const Lab& lab, const GemmConfig& c) {
  if (c.kernel != "matmul_reg") return true;
  const auto& p = c.p;
  const int mwg = param(p, "MWG", 64), nwg = param(p, "NWG", 64), kwg = param(p, "KWG", 16),
            md = param(p, "MDIMC", 16), nd = param(p, "NDIMC", 16), vwm = param(p, "VWM", 4),
            vwn = param(p, "VWN", 4), vw = param(p, "VW", 4),
            pada = param(p, "PADA", int(tunekit::ops::gemm::pad_a)),
            padb = param(p, "PADB", int(tunekit::ops::gemm::pad_b)), db = param(p, "DB", 0);
  const tunekit::ops::gemm::BlockedParams rules{mwg, nwg, kwg,  md,   nd, vwm,
                                                vwn, vw,  pada, padb, db};
  return tunekit::ops::gemm::blocked_builds(rules) &&
         tunekit::ops::gemm::blocked_local_memory(rules) <= lab.local_mem &&
         tunekit::ops::gemm::blocked_work_group_size(rules) <= lab.max_wg;
}

std::vector<GemmConfig> gemm_grid_all(const Lab& lab, bool quick);
std::vector<GemmConfig> gemm_grid(const Lab& lab, bool quick) {
  std::vector<GemmConfig> v;
  std::vector<GemmConfig> all = gemm_grid_all(lab, quick);
  for (auto& c : all)
    if (selected(c.kernel, params_text(c.p)) && gemm_valid(lab, c)) v.push_back(c);
  return v;
}

std::vector<GemmConfig> gemm_grid_all(const Lab& lab, bool quick) {
  std::vector<GemmConfig> v;
  auto add = [&](const std::string& file, const std::string& kernel, Params p) {
    v.push_back({file, kernel, std::move(p)});
  };
  // The lab's own kernel (issue 32), read from beside this file: (GM, GN, WARPS_M, WARPS_N, BK).
  auto add_warp = [&](std::initializer_list<std::array<int, 5>> configs) {
    for (const auto& w : configs)
      add("../tools/kernel_lab/matmul_warp.cl", "matmul_warp",
          {{"GM", w[0]}, {"GN", w[1]}, {"WARPS_M", w[2]}, {"WARPS_N", w[3]}, {"BK", w[4]}});
  };
  // matmul_staged.cl's configurations, (MWG, NWG, KWG, MDIMC, NDIMC, VWM, VWN, STAGES), on
  // `ksplit` slices of K and `kslice` groups of work-items per K tile; those the kernel refuses
  // (gemm_rules.hpp's staged_builds) and those past the family's 256 work-items are left out.
  auto add_async = [&](const std::vector<std::array<int, 8>>& configs, int ksplit = 1,
                       int kslice = 1, int a_direct = 0) {
    for (const auto& a : configs) {
      if (!tunekit::ops::gemm::staged_builds(
              {a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], kslice, a_direct}) ||
          a[3] * a[4] * kslice > tunekit::ops::gemm::staged_max_work_group)
        continue;
      Params p{{"MWG", a[0]},   {"NWG", a[1]}, {"KWG", a[2]}, {"MDIMC", a[3]},
               {"NDIMC", a[4]}, {"VWM", a[5]}, {"VWN", a[6]}, {"STAGES", a[7]}};
      if (kslice > 1) p.push_back({"KSLICE", kslice});
      if (a_direct != 0) p.push_back({"A_DIRECT", a_direct});
      if (ksplit > 1) p.push_back({"ksplit", ksplit});
      add("matmul_staged.cl", "matmul_staged", std::move(p));
    }
  };
  // add_async's configurations with every (KSLICE, ksplit, A_DIRECT) of the three lists.
  auto add_async_each = [&](const std::vector<std::array<int, 8>>& configs,
                            std::initializer_list<int> kslices, std::initializer_list<int> ksplits,
                            std::initializer_list<int> a_directs) {
    for (int kslice : kslices)
      for (int ksplit : ksplits)
        for (int a_direct : a_directs) add_async(configs, ksplit, kslice, a_direct);
  };
  const bool gpu_grid = g_opt && !g_opt->grid.empty() ? g_opt->grid == "gpu" : lab.gpu;
  if (gpu_grid) {
    add_async({{128, 128, 16, 8, 32, 4, 4, 2},   // the blocked 4096 winner's tile and work-items
               {128, 128, 16, 16, 16, 4, 2, 2},  // the op's start point
               {128, 128, 16, 8, 32, 4, 4, 3},
               {128, 128, 8, 8, 32, 4, 4, 3},
               {128, 128, 8, 8, 32, 4, 4, 4},
               {128, 128, 16, 16, 16, 4, 4, 3},
               {256, 128, 8, 16, 16, 4, 4, 3},  // cuBLAS's 4096 tile, 128 outputs per work-item
               {256, 128, 8, 16, 16, 4, 4, 4},
               {128, 256, 8, 16, 16, 4, 4, 3},
               {128, 64, 16, 16, 8, 2, 4, 3},  // the 8192 pick's shape
               {64, 64, 16, 8, 16, 4, 2, 3},
               {128, 128, 32, 8, 32, 4, 4, 2},  // second round: two stages around the best
               {128, 128, 16, 8, 32, 8, 4, 2},
               {128, 128, 16, 8, 32, 4, 2, 2},
               {128, 128, 16, 16, 16, 4, 4, 2},
               {128, 128, 16, 16, 8, 4, 4, 2},
               {128, 128, 8, 8, 32, 4, 4, 2},
               {128, 64, 16, 16, 8, 2, 4, 2},
               {64, 128, 16, 8, 16, 4, 4, 2}});
    // K tiles shared by KSLICE groups of work-items of a work-group (more warps per tile).
    add_async_each({{64, 64, 16, 8, 16, 4, 2, 3},
                    {64, 64, 32, 8, 16, 4, 2, 2},
                    {128, 64, 16, 16, 8, 4, 4, 3},
                    {64, 128, 16, 8, 16, 4, 4, 3},
                    {128, 64, 32, 16, 8, 4, 4, 2}},
                   {2, 4}, {1, 2}, {0});
    // A and B as they are, no pass before the product: the best of the grid above on one group
    // and on two along K, and on slices of K.
    add_async_each({{128, 128, 16, 16, 16, 4, 2, 2},
                    {128, 128, 16, 8, 32, 4, 4, 2},
                    {128, 64, 16, 16, 8, 2, 4, 3},
                    {64, 128, 16, 8, 16, 4, 4, 2},
                    {64, 64, 16, 8, 16, 4, 2, 3},
                    {64, 64, 32, 8, 16, 4, 2, 2},
                    {128, 64, 32, 16, 8, 4, 4, 2},
                    // cuBLAS's kernels at 1023^3 and 997 x 1009 x 1013 on the H200 (PyTorch's
                    // profiler, tools/cublas_kernels.py): 128 x 64 and 64 x 128 tiles 8 deep in
                    // 3 stages, 4 warps of 8 x 8 outputs per thread.
                    {128, 64, 8, 16, 8, 4, 4, 3},
                    {64, 128, 8, 8, 16, 4, 4, 3},
                    {128, 64, 16, 16, 8, 4, 4, 3}},
                   {1, 2}, {1, 2, 4}, {1, 2});
    // 256 work-items on 8-deep tiles, and cuBLAS's 4096 tile (256 x 128 x 8, 8 warps of 128
    // outputs per thread), A and B as they are, one slice.
    add_async({{128, 128, 8, 16, 16, 4, 2, 3},
               {128, 128, 8, 16, 16, 4, 2, 4},
               {128, 128, 16, 16, 16, 4, 2, 3},
               {128, 128, 8, 8, 32, 4, 4, 3},
               {256, 128, 8, 16, 16, 4, 4, 3},
               {256, 128, 8, 16, 16, 4, 4, 4}},
              1, 1, 1);
    // Slices of K for products of few tiles (1024^3 has 64 tiles of 128 x 128 for 132 SMs):
    // the op's start points and smaller tiles, on 2 to 8 slices.
    add_async_each({{128, 128, 16, 16, 16, 4, 2, 2},
                    {128, 128, 16, 8, 32, 4, 4, 2},
                    {128, 64, 16, 16, 8, 4, 4, 3},
                    {64, 128, 16, 8, 16, 4, 4, 3},
                    {64, 64, 16, 8, 16, 4, 2, 3},
                    {64, 64, 32, 8, 16, 4, 2, 2}},
                   {1}, {2, 3, 4, 8}, {0});
    // Long K over few tiles (256 x 256 x 65536: 4 tiles of 128 x 128, 16 of 64 x 64) and small
    // products of mid K (128 x 768 x 768): more slices, and two groups of work-items per K tile.
    const std::vector<std::array<int, 8>> few_tiles = {{64, 64, 16, 8, 16, 4, 2, 3},
                                                       {64, 64, 32, 8, 16, 4, 2, 2},
                                                       {128, 64, 16, 16, 8, 4, 4, 3},
                                                       {128, 128, 16, 16, 16, 4, 2, 2}};
    add_async_each(few_tiles, {1}, {16, 32}, {0});  // fewer slices: in the list above
    add_async_each(few_tiles, {2}, {4, 8, 16, 32}, {0});
    // The same without the pass before the product (256 x 256 x 65536's A is 64 MiB: its
    // transpose alone would take about 28 us, against cuBLAS's 180 us for the call), and 64
    // slices (two work-groups per SM for 128 x 128 tiles there).
    add_async_each(few_tiles, {1}, {16, 32, 64}, {1});
    add_async({{64, 64, 32, 8, 16, 4, 2, 2}, {128, 128, 16, 16, 16, 4, 2, 2}}, 64);
    // A C of few columns (the held-out 5274 x 35 x 2233 and 4436 x 137 x 2752 reached 70% and 76%
    // of cuBLAS, every staged tile being 64 columns or more): tiles of 16 and 32 columns, with and
    // without the pass, on one or two groups of work-items and on slices of K.
    add_async_each({{128, 32, 16, 16, 8, 4, 4, 3},
                    {128, 32, 32, 16, 8, 4, 4, 2},
                    {64, 32, 32, 8, 8, 4, 4, 2},
                    {256, 32, 16, 16, 8, 4, 4, 2},
                    {64, 16, 32, 16, 4, 4, 4, 2}},
                   {1, 2}, {1, 2, 4}, {0, 1, 2});
    // More narrow tiles with A as it is (A_DIRECT 1: transposed on its way; 2: in its rows, read
    // along K): deeper stages, taller blocks, and 32 x 16 tiles (three times the work-groups of
    // 64 x 16's 83 x 3 at 5274 x 35).
    add_async_each({{64, 16, 32, 16, 4, 4, 4, 3},
                    {64, 16, 16, 16, 4, 4, 4, 4},
                    {128, 16, 32, 16, 4, 4, 4, 2},
                    {32, 16, 32, 8, 4, 4, 4, 3},
                    {64, 32, 32, 16, 8, 4, 4, 3}},
                   {1, 2}, {1, 2}, {1, 2});
    add_warp({{2, 2, 4, 2, 8},  // 128 x 128, 64 outputs per work-item
              {2, 2, 4, 2, 16},
              {2, 2, 2, 4, 16},  // 64 x 256 (BK 8 leaves A half a vector per work-item)
              {2, 2, 2, 2, 8},   // 64 x 128 on 128 work-items
              {2, 2, 2, 2, 16},
              {1, 2, 4, 2, 16},   // 64 x 128 on 256, 32 outputs
              {2, 4, 4, 2, 8},    // 128 x 256, 128 outputs per work-item (cuBLAS's share)
              {2, 4, 4, 2, 16},   // (49.7 KB: a declared array past 48 KB on the H200)
              {4, 2, 2, 4, 8},    // 128 x 256 the other way round
              {4, 2, 4, 2, 8},    // 256 x 128
              {4, 4, 2, 2, 8}});  // 128 x 128 on 128 work-items, 128 outputs
    add("matmul_naive.cl", "matmul_naive", {{"lx", 16}, {"ly", 16}});
    add("matmul_tiled.cl", "matmul_tiled", {{"TS", 16}});
    add("matmul_tiled.cl", "matmul_tiled", {{"TS", 32}});
    add("matmul_direct.cl", "matmul_direct",
        {{"WPTM", 4}, {"VWN", 4}, {"NVEC", 1}, {"lx", 32}, {"ly", 4}});
    // (MWG, NWG, MDIMC, NDIMC)
    const int tiles[][4] = {{128, 128, 16, 16}, {128, 64, 16, 16}, {64, 128, 16, 16},
                            {64, 64, 16, 16},   {128, 128, 32, 8}, {128, 128, 8, 32},
                            {64, 64, 8, 8},     {128, 64, 16, 8}};
    for (auto& t : tiles)
      for (int kwg : {8, 16, 32})
        for (int db : {0, 1}) {
          if (quick && (kwg != 16 || t[2] != 16)) continue;
          add("matmul_reg.cl", "matmul_reg",
              {{"MWG", t[0]},
               {"NWG", t[1]},
               {"KWG", kwg},
               {"MDIMC", t[2]},
               {"NDIMC", t[3]},
               {"VWM", 4},
               {"VWN", 4},
               {"VW", 4},
               {"PADA", 4},
               {"PADB", 0},
               {"DB", db}});
        }
    if (!quick) {
      const Params base = {{"MWG", 128}, {"NWG", 128}, {"KWG", 8}, {"MDIMC", 16}, {"NDIMC", 16}};
      auto with = [&](Params extra) {
        Params p = base;
        p.insert(p.end(), extra.begin(), extra.end());
        add("matmul_reg.cl", "matmul_reg", p);
      };
      with({{"VWM", 4}, {"VWN", 4}, {"VW", 4}, {"PADA", 0}, {"PADB", 0}, {"DB", 1}});
      with({{"VWM", 4}, {"VWN", 2}, {"VW", 4}, {"PADA", 4}, {"PADB", 0}, {"DB", 1}});
      with({{"VWM", 8}, {"VWN", 8}, {"VW", 4}, {"PADA", 8}, {"PADB", 0}, {"DB", 1}});
      with({{"VWM", 4}, {"VWN", 4}, {"VW", 2}, {"PADA", 4}, {"PADB", 0}, {"DB", 1}});
      add("matmul_reg.cl", "matmul_reg",
          {{"MWG", 128},
           {"NWG", 128},
           {"KWG", 16},
           {"MDIMC", 16},
           {"NDIMC", 16},
           {"VWM", 4},
           {"VWN", 4},
           {"VW", 8},
           {"PADA", 4},
           {"PADB", 0},
           {"DB", 1}});
      add("matmul_reg.cl", "matmul_reg",
          {{"MWG", 128},
           {"NWG", 128},
           {"KWG", 32},
           {"MDIMC", 16},
           {"NDIMC", 16},
           {"VWM", 4},
           {"VWN", 4},
           {"VW", 4},
           {"PADA", 4},
           {"PADB", 0},
           {"DB", 0}});
      add("matmul_reg.cl", "matmul_reg",
          {{"MWG", 128},
           {"NWG", 256},
           {"KWG", 8},
           {"MDIMC", 16},
           {"NDIMC", 16},
           {"VWM", 4},
           {"VWN", 4},
           {"VW", 4},
           {"PADA", 4},
           {"PADB", 0},
           {"DB", 1}});
      add("matmul_reg.cl", "matmul_reg",
          {{"MWG", 256},
           {"NWG", 128},
           {"KWG", 8},
           {"MDIMC", 16},
           {"NDIMC", 16},
           {"VWM", 4},
           {"VWN", 4},
           {"VW", 4},
           {"PADA", 4},
           {"PADB", 0},
           {"DB", 1}});
      add("matmul_reg.cl", "matmul_reg",
          {{"MWG", 64},
           {"NWG", 64},
           {"KWG", 16},
           {"MDIMC", 8},
           {"NDIMC", 16},
           {"VWM", 4},
           {"VWN", 4},
           {"VW", 4},
           {"PADA", 4},
           {"PADB", 0},
           {"DB", 1}});
      add("matmul_reg.cl", "matmul_reg",
          {{"MWG", 32},
           {"NWG", 64},
           {"KWG", 16},
           {"MDIMC", 8},
           {"NDIMC", 16},
           {"VWM", 4},
           {"VWN", 4},
           {"VW", 4},
           {"PADA", 4},
           {"PADB", 0},
           {"DB", 1}});
    }
  } else {
    add_warp({{2, 2, 4, 2, 8}, {2, 2, 2, 2, 16}, {1, 2, 4, 2, 16}});  // the lab's own, checked here
    add_async(
        {{64, 64, 16, 8, 8, 4, 4, 2}, {64, 64, 8, 8, 8, 4, 4, 3}, {128, 64, 16, 16, 8, 2, 4, 4}});
    add("matmul_naive.cl", "matmul_naive", {{"lx", 16}, {"ly", 16}});
    add("matmul_naive.cl", "matmul_naive", {{"lx", 64}, {"ly", 1}});
    add("matmul_tiled.cl", "matmul_tiled", {{"TS", 16}});
    add("matmul_reg.cl", "matmul_reg",
        {{"MWG", 64},
         {"NWG", 64},
         {"KWG", 16},
         {"MDIMC", 8},
         {"NDIMC", 8},
         {"VWM", 4},
         {"VWN", 4},
         {"VW", 4},
         {"PADA", 4},
         {"PADB", 0},
         {"DB", 0}});
    add("matmul_reg.cl", "matmul_reg",
        {{"MWG", 64},
         {"NWG", 64},
         {"KWG", 32},
         {"MDIMC", 4},
         {"NDIMC", 4},
         {"VWM", 8},
         {"VWN", 8},
         {"VW", 8},
         {"PADA", 8},
         {"PADB", 0},
         {"DB", 0}});
    add("matmul_reg.cl", "matmul_reg",
        {{"MWG", 32},
         {"NWG", 64},
         {"KWG", 32},
         {"MDIMC", 4},
         {"NDIMC", 4},
         {"VWM", 8},
         {"VWN", 16 / 2},
         {"VW", 8},
         {"PADA", 8},
         {"PADB", 0},
         {"DB", 0}});
    for (int wptm : {4, 6, 8})
      for (auto [vwn, nvec] :
           {std::pair{16, 1}, std::pair{16, 2}, std::pair{8, 2}, std::pair{8, 4}})
        for (int ly : {1, 16}) {
          if (quick && ly == 1) continue;
          add("matmul_direct.cl", "matmul_direct",
              {{"WPTM", wptm}, {"VWN", vwn}, {"NVEC", nvec}, {"lx", 1}, {"ly", ly}});
        }
    add("matmul_direct.cl", "matmul_direct",
        {{"WPTM", 8}, {"VWN", 16}, {"NVEC", 2}, {"lx", 4}, {"ly", 8}});
    add("matmul_direct.cl", "matmul_direct",
        {{"WPTM", 8}, {"VWN", 16}, {"NVEC", 2}, {"lx", 1}, {"ly", 64}});
  }
  return v;
}

void gemm_suite(Lab& lab, const Options& o) {
  const auto grid = gemm_grid(lab, o.quick);
  std::vector<int> sizes = o.sizes;
  if (sizes.empty() && o.shapes.empty())
    sizes = lab.gpu ? std::vector<int>{1024, 2048, 4096, 8192} : std::vector<int>{512, 1024};
  const std::string& dn = lab.dev_name;

  // 1. Correctness on awkward shapes (non-multiples of every tile, K and N not multiples of the
  // vector
  //    widths), alpha and beta non-trivial, full check; fp32 and fp16 storage.
  const size_t edges[][3] = {
      {1, 1, 1}, {67, 45, 33}, {131, 257, 100}, {200, 260, 36}, {196, 132, 37}};
  std::vector<char> valid(grid.size(), 1);
  for (bool half : {false, true}) {
    std::vector<GemmData> ed;
    for (auto& e : edges) ed.push_back(make_gemm(e[0], e[1], e[2], half, 7));
    for (size_t ci = 0; ci < grid.size(); ++ci) {
      const bool f32_only = grid[ci].kernel == "matmul_warp" || grid[ci].kernel == "matmul_staged";
      if (half && (!valid[ci] || f32_only)) continue;
      double worst = 0;
      std::string why;
      for (size_t e = 0; e < ed.size(); ++e) {
        GemmBuffers eb = upload(lab, ed[e], half);
        auto r =
            run_gemm(lab, grid[ci], ed[e], eb, 1, false, 1.5f, -0.5f, true, half ? 2e-3 : 1e-5);
        if (r.runtime_error) lab.safe_reset();
        worst = std::max(worst, r.err);
        if (!r.ok) {
          why = r.why + " at " + std::to_string(ed[e].M) + "x" + std::to_string(ed[e].N) + "x" +
                std::to_string(ed[e].K);
          break;
        }
      }
      if (!half && !why.empty()) valid[ci] = 0;
      row(dn, grid[ci].kernel + (half ? "/f16" : ""), params_text(grid[ci].p), "edges", 0, "-",
          worst, why.empty() ? "PASS" : "FAIL", why.empty() ? "" : " (" + why + ")");
    }
  }

  // 2. Timing at square sizes, then at --shapes, with CLBlast on the same buffers.
  struct Best {
    double gflops = 0;
    std::string what;
  };
  struct Shape {
    size_t M, N, K;
    std::string label;  // "1024" for a square, else "MxNxK"
  };
  std::vector<Shape> timed;
  for (int n : sizes) timed.push_back({size_t(n), size_t(n), size_t(n), std::to_string(n)});
  for (const auto& [m, nn, k] : o.shapes)
    timed.push_back(
        {m, nn, k, std::to_string(m) + "x" + std::to_string(nn) + "x" + std::to_string(k)});
  std::map<std::string, std::map<std::string, Best>> best;
  std::map<std::string, double> clb;
  std::map<std::string, double> gf4096;  // for choosing the configs to run at 8192
  for (const Shape& sh : timed) {
    const size_t largest = std::max({sh.M, sh.N, sh.K});
    const GemmData d = make_gemm(sh.M, sh.N, sh.K, false, 1234 + int(sh.M + sh.N + sh.K) / 3);
    GemmBuffers g = upload(lab, d, false);
    const int reps = largest >= 4096 ? std::max(10, o.reps / 2) : o.reps;
    double cerr = 0;
    const double cms = run_clblast(lab, d, g, reps, cerr);
    const double cgf = cms > 0 ? 2.0 * sh.M * double(sh.N) * sh.K / (cms * 1e6) : 0;
    clb[sh.label] = cgf;
    row(dn, "clblast_sgemm", "wall clock around clFinish", sh.label, cms, fmt("%.1f GFLOP/s", cgf),
        cerr, cms > 0 && cerr < 1e-5 ? "PASS" : "FAIL");
    // The slow kernels are only timed up to 2048 on GPUs, 1024 on CPUs; 8192 only for the best 6 at
    // 4096.
    std::vector<std::pair<double, std::string>> ranked;
    for (auto& [k, v] : gf4096) ranked.emplace_back(-v, k);
    std::sort(ranked.begin(), ranked.end());
    for (size_t ci = 0; ci < grid.size(); ++ci) {
      const auto& c = grid[ci];
      if (!valid[ci]) continue;
      const bool slow = c.kernel == "matmul_naive" || c.kernel == "matmul_tiled" ||
                        (lab.gpu && c.kernel == "matmul_direct");
      if (slow && largest > (lab.gpu ? 2048u : 1024u)) continue;
      const std::string key = c.kernel + " " + params_text(c.p);
      if (largest > 4096 && !ranked.empty()) {
        bool top = false;
        for (size_t i = 0; i < std::min<size_t>(6, ranked.size()); ++i)
          top |= ranked[i].second == key;
        if (!top) continue;
      }
      auto r = run_gemm(lab, c, d, g, reps, true, 1.0f, 0.0f, false, 1e-5);
      if (r.runtime_error) {
        lab.safe_reset();
        g = upload(lab, d, false);
      }
      row(dn, c.kernel, params_text(c.p), sh.label, r.ms, fmt("%.1f GFLOP/s", r.gflops), r.err,
          r.ok ? "PASS" : "FAIL",
          (cgf > 0 ? fmt("  x%.2f vs CLBlast", r.gflops / cgf) : "") + parts_text(r) +
              (r.ok ? "" : " (" + r.why + ")"));
      if (r.ok && r.gflops > best[sh.label][c.kernel].gflops)
        best[sh.label][c.kernel] = {r.gflops, params_text(c.p)};
      if (r.ok && sh.label == "4096") gf4096[key] = r.gflops;
    }
  }
  // fp16 storage: the best matmul_reg / matmul_direct configuration of the first size, one timing.
  if (!sizes.empty()) {
    const int n = sizes.front();
    const GemmData d = make_gemm(n, n, n, true, 4321);
    GemmBuffers g = upload(lab, d, true);
    for (auto& [kname, b] : best[std::to_string(n)]) {
      if (kname != "matmul_reg" && kname != "matmul_direct") continue;
      for (auto& c : grid)
        if (c.kernel == kname && params_text(c.p) == b.what) {
          auto r = run_gemm(lab, c, d, g, o.reps, true, 1.0f, 0.0f, false, 2e-3);
          row(dn, kname + "/f16", params_text(c.p), std::to_string(n), r.ms,
              fmt("%.1f GFLOP/s", r.gflops), r.err, r.ok ? "PASS" : "FAIL",
              r.ok ? "" : " (" + r.why + ")");
          break;
        }
    }
  }
  std::fprintf(g_log, "\n== GEMM summary on %s: best per kernel (GFLOP/s, ratio vs CLBlast) ==\n",
               dn.c_str());
  for (auto& [label, m] : best) {
    std::fprintf(g_log, "n=%s  CLBlast %.1f\n", label.c_str(), clb[label]);
    for (auto& [k, b] : m)
      std::fprintf(g_log, "   %-14s %10.1f  x%.2f  [%s]\n", k.c_str(), b.gflops,
                   clb[label] > 0 ? b.gflops / clb[label] : 0.0, b.what.c_str());
  }
  std::fprintf(g_log, "\n");
}

// ===================================== reductions =============================================

struct RedCfg {
  std::string kernel;
  Params p;
};

void reduce_suite(Lab& lab, const Options& o) {
  const std::string& dn = lab.dev_name;
  const size_t n = lab.gpu ? (size_t(1) << 28) : (size_t(1) << 24);
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> u(0.25f, 1.0f);
  std::vector<float> x(n);
  for (auto& v : x) v = u(rng) * (rng() & 1 ? -1.f : 1.f);
  cl::Buffer in(lab.ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, n * 4, x.data());
  const size_t pmax = n / 256 + 64;
  cl::Buffer p1(lab.ctx, CL_MEM_READ_WRITE, pmax * 4), p2(lab.ctx, CL_MEM_READ_WRITE, pmax * 4);
  {  // reference bandwidth: clEnqueueCopyBuffer of the same array (read + write bytes)
    cl::Buffer copy(lab.ctx, CL_MEM_READ_WRITE, n * 4);
    const double cms = lab.time_ms(
        [&](std::vector<cl::Event>& ev) {
          ev.emplace_back();
          lab.q.enqueueCopyBuffer(in, copy, 0, 0, n * 4, nullptr, &ev.back());
        },
        o.reps);
    row(dn, "copy_buffer", "clEnqueueCopyBuffer, (read+write)/time", std::to_string(n), cms,
        fmt("%.1f GB/s", 2.0 * n * 4 / (cms * 1e6)), 0, "REF");
  }
  const int shfl = lab.nvidia ? 1 : 0;
  std::map<std::pair<int, size_t>, std::pair<double, double>> refs;  // (op, n) -> (value, sum |x|)
  for (int op : {0, 1}) {
    std::vector<RedCfg> cfgs;
    for (int wgs : {128, 256, 512}) cfgs.push_back({"reduce_tree", {{"OP", op}, {"WGS", wgs}}});
    for (std::string k : {"reduce_multi", "reduce_sg"})
      for (int wgs : {256, 512})
        for (int vw : {1, 4})
          for (int un : {1, 4})
            for (int gpc : {4, 16}) {
              if (!lab.gpu && (wgs == 512 || gpc == 16 || (o.quick && un == 1))) continue;
              if (lab.gpu && o.quick && (vw == 1 || wgs == 512)) continue;
              cfgs.push_back({k,
                              {{"OP", op},
                               {"WGS", wgs},
                               {"VW", vw},
                               {"UNROLL", un},
                               {"USE_NV_SHFL", shfl},
                               {"groups_per_cu", lab.gpu ? gpc * 2 : gpc / 2}}});
            }
    for (auto& c : cfgs) {
      if (!selected(c.kernel, params_text(c.p))) continue;
      const size_t wgs = param(c.p, "WGS", 256);
      std::string why;
      cl::Program prog = lab.program("reduce.cl", build_options(c.p), why);
      cl::Kernel k;
      if (prog()) {
        try {
          k = cl::Kernel(prog, c.kernel.c_str());
        } catch (const cl::Error& e) {
          why = "kernel not available on this device (" + std::to_string(e.err()) + ")";
        }
      }
      for (size_t len : {n, n - 3}) {  // n - 3: not a multiple of any vector width
        const std::string sz = std::to_string(len);
        if (!k()) {
          row(dn, c.kernel, params_text(c.p), sz, 0, "-", 0, "SKIP", " (" + why + ")");
          break;
        }
        cl::Buffer result;
        // All launches of one reduction: partial passes until one value remains.
        auto call = [&, len](std::vector<cl::Event>& ev) {
          size_t m = len;
          cl::Buffer src = in, dst = p1;
          while (true) {
            size_t groups =
                c.kernel == "reduce_tree"
                    ? ceil_div(m, 2 * wgs)
                    : (m == len ? std::clamp(size_t(param(c.p, "groups_per_cu", 8)) * lab.cus,
                                             size_t(1), ceil_div(m, wgs))
                                : 1);
            k.setArg(0, int(m));
            k.setArg(1, src);
            k.setArg(2, dst);
            ev.emplace_back();
            lab.q.enqueueNDRangeKernel(k, cl::NullRange, cl::NDRange(groups * wgs),
                                       cl::NDRange(wgs), nullptr, &ev.back());
            src = dst;
            if (groups == 1) break;
            m = groups;
            dst = (dst() == p1()) ? p2 : p1;
          }
          result = src;
        };
        double ms = 0, err = 0;
        std::string status = "PASS", extra;
        try {
          ms = lab.time_ms(call, o.reps);
          float got = 0;
          lab.q.enqueueReadBuffer(result, CL_TRUE, 0, 4, &got);
          auto& rm = refs[{op, len}];
          if (rm.second == 0) {
            double ref = op ? -INFINITY : 0.0, mag = 0;
            for (size_t i = 0; i < len; ++i) {
              ref = op ? std::max(ref, double(x[i])) : ref + x[i];
              mag += std::fabs(x[i]);
            }
            rm = {ref, mag};
          }
          const double ref = rm.first, mag = rm.second;
          err = op ? (got == float(ref) ? 0 : 1) : std::fabs(got - ref) / mag;
          if (!(err < 1e-5)) status = "FAIL";
        } catch (const cl::Error& e) {
          row(dn, c.kernel, params_text(c.p), sz, 0, "-", 0, "FAIL",
              std::string(" (") + e.what() + " " + std::to_string(e.err()) + ")");
          throw;
        }
        row(dn, c.kernel, params_text(c.p), sz, ms, fmt("%.1f GB/s", len * 4.0 / (ms * 1e6)), err,
            status, extra);
      }
    }
  }

  // Row reductions of a rows x cols matrix held in the same buffer.
  const std::vector<std::pair<size_t, size_t>> shapes =
      lab.gpu ? std::vector<std::pair<size_t, size_t>>{{16384, 16384},
                                                       {1 << 20, 256},
                                                       {4099, 1027},
                                                       {65536, 67}}
              : std::vector<std::pair<size_t, size_t>>{
                    {2048, 8192}, {65536, 256}, {1031, 1027}, {16384, 67}};
  cl::Buffer out(lab.ctx, CL_MEM_READ_WRITE, (size_t(1) << 20) * 4);
  std::map<std::tuple<int, size_t, size_t>, std::vector<std::pair<double, double>>>
      row_refs;  // (op, rows, cols) -> per row
  for (int op : {0, 1}) {
    std::vector<RedCfg> cfgs;
    for (std::string k : {"reduce_rows", "reduce_rows_sg"})
      for (int wgs : {64, 128, 256})
        for (int vw : {1, 4}) {
          if (o.quick && vw == 1) continue;
          cfgs.push_back({k, {{"OP", op}, {"WGS", wgs}, {"VW", vw}, {"USE_NV_SHFL", shfl}}});
        }
    // One row per work-item, from memory or through local memory (they read no vectors).
    for (int wgs : {64, 128, 256}) {
      cfgs.push_back({"reduce_rows_item", {{"OP", op}, {"WGS", wgs}}});
      for (int tc : {16, 32})
        cfgs.push_back({"reduce_rows_tile", {{"OP", op}, {"WGS", wgs}, {"TC", tc}}});
    }
    for (auto& c : cfgs) {
      if (!selected(c.kernel, params_text(c.p))) continue;
      const size_t wgs = param(c.p, "WGS", 256);
      std::string why;
      cl::Program prog = lab.program("reduce.cl", build_options(c.p), why);
      cl::Kernel k;
      if (prog()) {
        try {
          k = cl::Kernel(prog, c.kernel.c_str());
        } catch (const cl::Error& e) {
          why = "kernel not available on this device (" + std::to_string(e.err()) + ")";
        }
      }
      for (auto [rows, cols] : shapes) {
        const std::string sz = std::to_string(rows) + "x" + std::to_string(cols);
        if (!k()) {
          row(dn, c.kernel, params_text(c.p), sz, 0, "-", 0, "SKIP", " (" + why + ")");
          break;
        }
        using tunekit::ops::detail::RowStrategy;
        RowStrategy strategy = RowStrategy::group;  // the one whose kernel this is
        for (RowStrategy s : {RowStrategy::subgroup, RowStrategy::item, RowStrategy::tile})
          if (c.kernel == tunekit::ops::detail::row_kernel(s)) strategy = s;
        const size_t per_group = tunekit::ops::detail::rows_per_group(strategy, wgs);
        const size_t groups = ceil_div(rows, per_group);
        k.setArg(0, int(rows));
        k.setArg(1, int(cols));
        k.setArg(2, in);
        k.setArg(3, out);
        double ms = 0, err = 0;
        std::string status = "PASS", extra;
        try {
          ms = lab.time_ms(
              [&](std::vector<cl::Event>& ev) {
                ev.emplace_back();
                lab.q.enqueueNDRangeKernel(k, cl::NullRange, cl::NDRange(groups * wgs),
                                           cl::NDRange(wgs), nullptr, &ev.back());
              },
              o.reps);
          std::vector<float> got(rows);
          lab.q.enqueueReadBuffer(out, CL_TRUE, 0, rows * 4, got.data());
          auto& rr = row_refs[{op, rows, cols}];
          if (rr.empty()) {
            for (size_t r = 0; r < rows; ++r) {
              double ref = op ? -INFINITY : 0.0, mag = 0;
              for (size_t j = 0; j < cols; ++j) {
                const float v = x[r * cols + j];
                ref = op ? std::max(ref, double(v)) : ref + v;
                mag += std::fabs(v);
              }
              rr.emplace_back(ref, mag);
            }
          }
          for (size_t r = 0; r < rows; ++r)
            err = std::max(err, op ? (got[r] == float(rr[r].first) ? 0.0 : 1.0)
                                   : std::fabs(got[r] - rr[r].first) / rr[r].second);
          if (!(err < 1e-5)) status = "FAIL";
        } catch (const cl::Error& e) {
          row(dn, c.kernel, params_text(c.p), sz, 0, "-", 0, "FAIL",
              std::string(" (") + e.what() + " " + std::to_string(e.err()) + ")");
          throw;
        }
        row(dn, c.kernel, params_text(c.p), sz, ms,
            fmt("%.1f GB/s", rows * cols * 4.0 / (ms * 1e6)), err, status, extra);
      }
    }
  }
}

// ===================================== transpose ==============================================

// One read_vec4 configuration on the first n4 float4s of `a` and `b` (a copy of a's: another
// buffer, so that no read of b meets a's lines in the cache): timed, its sums checked against
// the host's.
void read_run(Lab& lab, const std::string& dn, const RedCfg& c, const std::string& sz,
              cl::Kernel& k, int n4, cl::Buffer& a, cl::Buffer& b, int reps) {
  const size_t readers = std::min<size_t>(
      size_t(n4), size_t(param(c.p, "waves", 1)) * 2048 * std::max<cl_uint>(lab.cus, 1));
  std::vector<float> ha(size_t(n4) * 4);
  lab.q.enqueueReadBuffer(a, CL_TRUE, 0, ha.size() * 4, ha.data());
  lab.q.enqueueCopyBuffer(a, b, 0, 0, ha.size() * 4);
  cl::Buffer sums(lab.ctx, CL_MEM_READ_WRITE, readers * 4);
  k.setArg(0, n4);
  k.setArg(1, a);
  k.setArg(2, b);
  k.setArg(3, sums);
  const double ms = lab.time_ms(
      [&](std::vector<cl::Event>& ev) {
        ev.emplace_back();
        lab.q.enqueueNDRangeKernel(k, cl::NullRange, cl::NDRange(readers), cl::NullRange, nullptr,
                                   &ev.back());
      },
      reps);
  std::vector<float> got(readers);
  lab.q.enqueueReadBuffer(sums, CL_TRUE, 0, readers * 4, got.data());
  double want = 0, total = 0;
  for (float v : ha) want += 2.0 * double(v);
  for (float v : got) total += v;
  const double err = std::abs(total - want) / std::max(1.0, std::abs(want));
  row(dn, c.kernel, params_text(c.p), sz, ms, fmt("%.1f GB/s", 2.0 * n4 * 16 / (ms * 1e6)), err,
      err < 1e-4 ? "PASS" : "FAIL");
}

void transpose_suite(Lab& lab, const Options& o) {
  const std::string& dn = lab.dev_name;
  const std::vector<std::pair<size_t, size_t>> shapes =
      lab.gpu ? std::vector<std::pair<size_t, size_t>>{{8192, 8192},
                                                       {8191, 4097},
                                                       {8190, 4094},
                                                       {37, 1}}
              : std::vector<std::pair<size_t, size_t>>{{2048, 2048}, {1023, 517}, {37, 1}};
  const size_t cap = shapes[0].first * shapes[0].second;
  std::vector<float> x(cap);
  std::mt19937 rng(3);
  for (auto& v : x) v = float(rng() % 100000) + 1.0f;
  cl::Buffer in(lab.ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, cap * 4, x.data());
  cl::Buffer out(lab.ctx, CL_MEM_READ_WRITE, cap * 4);
  std::vector<RedCfg> cfgs;
  for (auto [lx, ly] : {std::pair{32, 8}, std::pair{16, 16}, std::pair{64, 4}})
    cfgs.push_back({"transpose_naive", {{"lx", lx}, {"ly", ly}}});
  for (int vw : {1, 2, 4})
    for (int tile : {16, 32, 64, 128})
      for (int tile_m : {16, 32, 64, 128})
        for (int rows : {2, 4, 8, 16, 32, 64})
          for (int pad : {0, 1}) {
            const int threads = (tile / vw) * rows;
            if (threads > int(lab.max_wg) || rows > tile_m || tile / vw < 4 ||
                tile_m * (tile + pad) * 4 > int(lab.local_mem) - 64 ||
                (tile * tile_m / vw) % threads)
              continue;
            if (tile != tile_m && (pad == 0 || (tile < 64 && tile_m < 64)))
              continue;  // rectangles: wide ones
            if (o.quick && pad == 0 && tile != 32) continue;
            cfgs.push_back(
                {"transpose_tiled",
                 {{"TILE", tile}, {"TILE_M", tile_m}, {"ROWS", rows}, {"PAD", pad}, {"VW", vw}}});
          }
  for (int blk : {4, 8})
    for (int lx : {1, 2, 4, 8, 16, 32})
      for (int ly : {4, 8, 16, 32, 64})
        if (lx * ly <= 256 && lx * ly >= 32)
          cfgs.push_back({"transpose_blocked", {{"BLK", blk}, {"lx", lx}, {"ly", ly}}});
  // The lab's own (transpose_lab.cl, beside this file): a vector copy kernel, the ceiling a kernel
  // reaches (against clEnqueueCopyBuffer's), and a transpose of 16-byte local accesses only.
  for (int items : {1, 2, 4, 8})
    for (int lx : {128, 256, 512}) cfgs.push_back({"copy_vec4", {{"ITEMS", items}, {"lx", lx}}});
  for (int swz : {0, 1})
    for (int ly : {2, 4, 8, 16}) cfgs.push_back({"transpose_swizzled", {{"LY", ly}, {"SWZ", swz}}});
  // Read-only: peak.cl's peak_read form (STRIDES 8, one wave: 2048 work-items per compute unit;
  // the fastest of these on the H200, 2026-12-04) and the others; GB/s counts both buffers read,
  // as the copy's counts its bytes read and written.
  for (int strides : {1, 2, 4, 8})
    for (int waves : {1, 2, 4})
      cfgs.push_back({"read_vec4", {{"STRIDES", strides}, {"waves", waves}}});
  // The peers of the same run: the device's buffer copy (the bandwidth ceiling, bytes read and
  // written) and CLBlast's Omatcopy on the same buffers.
  for (auto [M, N] : shapes) {
    const std::string sz = std::to_string(M) + "x" + std::to_string(N);
    const size_t bytes = M * N * 4;
    if (bytes < (size_t(1) << 20)) continue;
    const double copy_ms = lab.time_ms(
        [&](std::vector<cl::Event>& ev) {
          ev.emplace_back();
          lab.q.enqueueCopyBuffer(in, out, 0, 0, bytes, nullptr, &ev.back());
        },
        o.reps);
    row(dn, "copy", "clEnqueueCopyBuffer", sz, copy_ms,
        fmt("%.1f GB/s", 2.0 * bytes / (copy_ms * 1e6)), 0, "-");
    cl_command_queue queue = lab.q();
    double err = 0;
    const double cb_ms = lab.time_ms(
        [&](std::vector<cl::Event>& ev) {
          cl_event e = nullptr;
          clblast::Omatcopy<float>(clblast::Layout::kRowMajor, clblast::Transpose::kYes, M, N, 1.0f,
                                   in(), 0, N, out(), 0, M, &queue, &e);
          ev.emplace_back(e);
        },
        o.reps);
    std::vector<float> got(M * N);
    lab.q.enqueueReadBuffer(out, CL_TRUE, 0, M * N * 4, got.data());
    for (size_t r = 0; r < M; ++r)
      for (size_t cc = 0; cc < N; ++cc)
        if (got[cc * M + r] != x[r * N + cc]) err = 1;
    row(dn, "clblast", "Omatcopy", sz, cb_ms, fmt("%.1f GB/s", 2.0 * bytes / (cb_ms * 1e6)), err,
        err == 0 ? "PASS" : "FAIL");
  }
  for (auto& c : cfgs) {
    if (!selected(c.kernel, params_text(c.p))) continue;
    std::string why;
    const bool lab_own =
        c.kernel == "copy_vec4" || c.kernel == "transpose_swizzled" || c.kernel == "read_vec4";
    const bool copy = c.kernel == "copy_vec4";
    const bool read = c.kernel == "read_vec4";
    cl::Program prog = lab.program(
        lab_own ? "../tools/kernel_lab/transpose_lab.cl" : "transpose.cl", build_options(c.p), why);
    for (auto [M, N] : shapes) {
      const std::string sz = std::to_string(M) + "x" + std::to_string(N);
      if ((copy || read) && (M * N) % 4 != 0) continue;
      if (!prog()) {
        row(dn, c.kernel, params_text(c.p), sz, 0, "-", 0, "FAIL", " (" + why + ")");
        break;
      }
      cl::Kernel k(prog, c.kernel.c_str());
      if (read) {
        read_run(lab, dn, c, sz, k, int(M * N / 4), in, out, o.reps);
        continue;
      }
      if (copy) {
        k.setArg(0, int(M * N / 4));
        k.setArg(1, in);
        k.setArg(2, out);
      } else {
        k.setArg(0, int(M));
        k.setArg(1, int(N));
        k.setArg(2, in);
        k.setArg(3, out);
      }
      cl::NDRange global, local;
      if (copy) {
        const int items = param(c.p, "ITEMS", 4), lx = param(c.p, "lx", 256);
        global = cl::NDRange(round_up(ceil_div(M * N / 4, items), lx));
        local = cl::NDRange(lx);
      } else if (c.kernel == "transpose_swizzled") {
        const int ly = param(c.p, "LY", 8);
        global = cl::NDRange(ceil_div(N, 64) * 16, ceil_div(M, 64) * ly);
        local = cl::NDRange(16, ly);
      } else if (c.kernel == "transpose_naive") {
        const int lx = param(c.p, "lx", 32), ly = param(c.p, "ly", 8);
        global = cl::NDRange(round_up(N, lx), round_up(M, ly));
        local = cl::NDRange(lx, ly);
      } else if (c.kernel == "transpose_blocked") {
        const int blk = param(c.p, "BLK", 4), lx = param(c.p, "lx", 4), ly = param(c.p, "ly", 16);
        global = cl::NDRange(round_up(ceil_div(N, blk), lx), round_up(ceil_div(M, blk), ly));
        local = cl::NDRange(lx, ly);
      } else {
        const int tile = param(c.p, "TILE", 32), rows = param(c.p, "ROWS", 8),
                  vw = param(c.p, "VW", 1), tile_m = param(c.p, "TILE_M", tile);
        global = cl::NDRange(ceil_div(N, tile) * (tile / vw), ceil_div(M, tile_m) * rows);
        local = cl::NDRange(tile / vw, rows);
      }
      double ms = 0, err = 0;
      std::string status = "PASS", extra;
      {
        // What the driver says the kernel can take, beside what the lab launches: NVIDIA's
        // CL_KERNEL_WORK_GROUP_SIZE is below some work-groups that run (issue 32, 2026-12-04).
        std::size_t kernel_max = 0;
        std::array<std::size_t, 3> compiled{};
        k.getWorkGroupInfo(lab.dev, CL_KERNEL_WORK_GROUP_SIZE, &kernel_max);
        clGetKernelWorkGroupInfo(k(), lab.dev(), CL_KERNEL_COMPILE_WORK_GROUP_SIZE, sizeof compiled,
                                 compiled.data(), nullptr);
        extra = " kernel max " + std::to_string(kernel_max) + ", compiled for " +
                std::to_string(compiled[0]) + "x" + std::to_string(compiled[1]) + "x" +
                std::to_string(compiled[2]);
      }
      try {
        ms = lab.time_ms(
            [&](std::vector<cl::Event>& ev) {
              ev.emplace_back();
              lab.q.enqueueNDRangeKernel(k, cl::NullRange, global, local, nullptr, &ev.back());
            },
            o.reps);
        std::vector<float> got(M * N);
        lab.q.enqueueReadBuffer(out, CL_TRUE, 0, M * N * 4, got.data());
        for (size_t r = 0; r < M; ++r)
          for (size_t cc = 0; cc < N; ++cc)
            if ((copy ? got[r * N + cc] : got[cc * M + r]) != x[r * N + cc]) err = 1;
        if (err != 0) status = "FAIL";
      } catch (const cl::Error& e) {
        row(dn, c.kernel, params_text(c.p), sz, 0, "-", 0, "FAIL",
            std::string(" (") + e.what() + " " + std::to_string(e.err()) + ")");
        throw;
      }
      row(dn, c.kernel, params_text(c.p), sz, ms, fmt("%.1f GB/s", 2.0 * M * N * 4 / (ms * 1e6)),
          err, status, extra);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) throw std::runtime_error("missing value after " + a);
      return argv[++i];
    };
    if (a == "--device")
      o.device = next();
    else if (a == "--kernels")
      o.kernel_dir = next();
    else if (a == "--only")
      o.only = next();
    else if (a == "--sizes")
      o.sizes = parse_list(next());
    else if (a == "--shapes") {
      try {
        o.shapes = parse_shapes(next());
      } catch (const std::exception& e) {
        std::fprintf(stderr, "kernel_lab: %s\n", e.what());
        return 2;
      }
    } else if (a == "--reps")
      o.reps = std::stoi(next());
    else if (a == "--quick")
      o.quick = true;
    else if (a == "--filter")
      o.filter = next();
    else if (a == "--grid")
      o.grid = next();
    else if (a == "--staged-prep")
      o.staged_prep = true;
    else if (a[0] != '-')
      o.device = a;
    else {
      std::fprintf(
          stderr,
          "usage: kernel_lab [--device SUBSTR] [--kernels DIR] [--only matmul|reduce|transpose] "
          "[--sizes 1024,2048] [--shapes MxNxK,...] [--reps N] [--quick] [--filter A|B] "
          "[--grid gpu|cpu] [--staged-prep]\n");
      return 2;
    }
  }
  g_opt = &o;
  std::vector<cl::Platform> platforms;
  cl::Platform::get(&platforms);
  int found = 0;
  for (auto& pf : platforms) {
    std::vector<cl::Device> devs;
    pf.getDevices(CL_DEVICE_TYPE_ALL, &devs);
    for (auto& d : devs) {
      const std::string name = d.getInfo<CL_DEVICE_NAME>();
      if (!o.device.empty() && name.find(o.device) == std::string::npos &&
          pf.getInfo<CL_PLATFORM_NAME>().find(o.device) == std::string::npos)
        continue;
      ++found;
      Lab lab(d, o.kernel_dir);
      std::fprintf(
          g_log,
          "# device: %s | platform: %s %s | driver %s | %u CUs | local mem %zu | max wg %zu | %s\n",
          name.c_str(), pf.getInfo<CL_PLATFORM_NAME>().c_str(),
          pf.getInfo<CL_PLATFORM_VERSION>().c_str(), d.getInfo<CL_DRIVER_VERSION>().c_str(),
          lab.cus, lab.local_mem, lab.max_wg,
          d.getInfo<CL_DEVICE_EXTENSIONS>().find("cl_khr_subgroups") != std::string::npos
              ? "cl_khr_subgroups"
              : "no cl_khr_subgroups");
      std::fprintf(g_log, "%-26s | %-16s | %-62s | %-16s | %10s | %16s | %8s | %s\n", "device",
                   "kernel", "params", "size", "median ms", "rate", "max err", "status");
      const std::pair<const char*, void (*)(Lab&, const Options&)> suites[] = {
          {"matmul", gemm_suite}, {"transpose", transpose_suite}, {"reduce", reduce_suite}};
      for (auto& [sname, fn] : suites) {
        if (!o.only.empty() && o.only != sname) continue;
        try {
          fn(lab, o);
        } catch (const std::exception& e) {
          std::fprintf(g_log, "# %s suite aborted on %s: %s\n", sname, name.c_str(), e.what());
          lab.safe_reset();
        }
      }
    }
  }
  if (!found) std::fprintf(stderr, "no OpenCL device matches '%s'\n", o.device.c_str());
  return found ? 0 : 1;
}
