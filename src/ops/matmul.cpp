// matmul's tunable set: the kernels of kernels/matmul_*.cl, each with the NDRange rule and the
// parameter space its header documents, validated against the naive kernel while tuning.
#include "tunekit/ops/matmul.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench_fit.hpp"
#include "call_checks.hpp"
#include "found_on.hpp"
#include "gemm_rules.hpp"
#include "host_references.hpp"
#include "matmul_prepare.hpp"
#include "named_candidate.hpp"
#include "operand_passes.hpp"
#include "scratch.hpp"
#include "sizes.hpp"
#include "tf32_operands.hpp"
#include "transposed_operand.hpp"
#include "tunekit/candidate_name.hpp"
#include "tunekit/cl/kernel_spec.hpp"
#include "tunekit/cl/program_cache.hpp"
#include "tunekit/host_reference.hpp"
#include "tunekit/local_tuner.hpp"
#include "tunekit/space.hpp"
#include "tunekit/stable_hash.hpp"
#include "tunekit/tunable_set.hpp"

namespace tunekit::ops {

namespace {

enum class Algorithm {
  naive,
  tiled,
  direct,
  blocked,
  skinny,
  split,
  tensor,
  wgmma,
  tf32,
  wgmma_tf32,
  staged,
  staged_split
};

// The staged kernel (matmul_staged.cl), on the whole of K or on slices of it.
bool uses_staged_kernel(Algorithm algorithm) {
  return algorithm == Algorithm::staged || algorithm == Algorithm::staged_split;
}

// The split family's partial products: one buffer per client and thread, shared by every
// configuration (kept per configuration, a tuning would hold dozens of them).
detail::Scratch<1>& split_scratch() {
  static auto& scratch = *new detail::Scratch<1>;  // never destroyed (ops/scratch.hpp)
  return scratch;
}

// The split and skinny families' counts of the slices done per tile (kernels/gemm_output.cl):
// zeros when made, and every launch leaves them zero.
detail::Scratch<1>& arrival_scratch() {
  static auto& scratch = *new detail::Scratch<1>(detail::Scratch<1>::Contents::zeros);
  return scratch;
}

// "NVIDIA of compute capability 9.0", or "not NVIDIA (<platform>)": what a refusal for want of a
// capability says of this device.
std::string capability_of(const cl::DeviceInfo& device) {
  return device.nvidia
             ? "NVIDIA of compute capability " + std::to_string(device.compute_capability_major) +
                   "." + std::to_string(device.compute_capability_minor)
             : "not NVIDIA (" + device.platform_name + ")";
}

// The tensor-core families' demands, checked before anything is built (PoCL and every device
// without them never compile their PTX). First what the call must give on any device (a refusal
// of kind `launch`: a property of the call, remembered like any failed candidate): 16-bit
// storage for `tensor` and `wgmma`, f32 for `tf32` and `wgmma_tf32` and a caller that allows
// TF32; N and K multiples of 8 (16-bit) or 4 (f32): rows read in 16-byte chunks. Then the device:
// NVIDIA of compute capability 8.0 or higher for `tensor` and `tf32`, exactly 9.0 for `wgmma` and
// `wgmma_tf32` (sm_90a).
void require_tensor_cores(const cl::Client& client, Algorithm algorithm, DType dtype, std::size_t n,
                          std::size_t k, MatmulMath math) {
  const bool wgmma = algorithm == Algorithm::wgmma || algorithm == Algorithm::wgmma_tf32;
  const bool tf32 = algorithm == Algorithm::tf32 || algorithm == Algorithm::wgmma_tf32;
  const std::string family = algorithm == Algorithm::wgmma_tf32 ? "wgmma_tf32"
                             : wgmma                            ? "wgmma"
                             : tf32                             ? "tf32"
                                                                : "tensor";
  if (tf32 && dtype != DType::f32) {
    throw AutotuneError(ErrorKind::launch, "the " + family + " family takes f32 storage, not " +
                                               std::string(to_string(dtype)));
  }
  if (tf32 && math != MatmulMath::tf32) {
    throw AutotuneError(ErrorKind::launch,
                        "the " + family +
                            " family rounds f32 inputs to TF32: it runs only for a caller that "
                            "allows it (MatmulMath::tf32)");
  }
  if (!tf32 && dtype == DType::f32) {
    throw AutotuneError(ErrorKind::launch,
                        "the " + family + " family takes f16 or bf16 storage, not f32");
  }
  const std::int64_t alignment = tf32 ? gemm::tf32_alignment : gemm::tensor_alignment;
  if (n % alignment != 0 || k % alignment != 0) {
    throw AutotuneError(ErrorKind::launch, "the " + family + " family needs N and K multiples of " +
                                               std::to_string(alignment) +
                                               " (N = " + std::to_string(n) +
                                               ", K = " + std::to_string(k) + ")");
  }
  const cl::DeviceInfo& device = client.device();
  const unsigned major = wgmma ? gemm::wgmma_major : gemm::tensor_min_major;
  const unsigned minor = wgmma ? gemm::wgmma_minor : gemm::tensor_min_minor;
  const bool capable = device.nvidia && (wgmma ? device.compute_capability_major == major &&
                                                     device.compute_capability_minor == minor
                                               : device.compute_capability_at_least(major, minor));
  if (!capable) {
    throw device_limit(
        "no tensor cores reachable: the " + family +
        " family needs an NVIDIA device of compute capability " + std::to_string(major) + "." +
        std::to_string(minor) +
        (wgmma ? " (wgmma is sm_90a: Hopper only)" : " or higher (mma.sync through inline PTX)") +
        "; this one is " + capability_of(device));
  }
}

// The staged family's demands, checked before anything is built: f32 storage (a refusal of kind
// `launch`, a property of the call), then an NVIDIA device of compute capability 8.0 or higher
// (cp.async through inline PTX; PoCL and every other device never compile it).
void require_staged(const cl::Client& client, DType dtype) {
  if (dtype != DType::f32) {
    throw AutotuneError(ErrorKind::launch, "the staged family takes f32 storage, not " +
                                               std::string(to_string(dtype)));
  }
  const cl::DeviceInfo& device = client.device();
  if (!device.nvidia ||
      !device.compute_capability_at_least(gemm::staged_min_major, gemm::staged_min_minor)) {
    throw device_limit(
        "no cp.async: the staged family needs an NVIDIA device of compute capability " +
        std::to_string(gemm::staged_min_major) + "." + std::to_string(gemm::staged_min_minor) +
        " or higher; this one is " + capability_of(device));
  }
}

bool uses_tensor_cores(Algorithm algorithm) {
  return algorithm == Algorithm::tensor || algorithm == Algorithm::wgmma ||
         algorithm == Algorithm::tf32 || algorithm == Algorithm::wgmma_tf32;
}

// One GEMM kernel configuration: the kernel, its build options and its NDRange rule.
gemm::TensorParams tensor_params(const Config& c) {
  return {c["BM"], c["BN"], c["BK"], c["WM"], c["WN"], c["STAGES"]};
}

gemm::WgmmaParams wgmma_params(const Config& c) {
  return {c["BM"], c["BN"], c["BK"], c["STAGES"], c["WM"]};
}

// The same kernel on f32 elements (TF32=1).
gemm::WgmmaParams wgmma_tf32_params(const Config& c) {
  return {c["BM"], c["BN"], c["BK"], c["STAGES"], c["WM"], 4};
}

gemm::Tf32Params tf32_params(const Config& c) {
  return {c["BM"], c["BN"], c["BK"], c["WM"], c["WN"], c["STAGES"]};
}

// matmul's kernels' PRECISION macro for a storage (kernels/storage.cl): 32 for f32, 16 for f16,
// 116 for bf16; the arithmetic is f32 in each.
int precision_of(DType dtype) { return dtype == DType::f16 ? 16 : dtype == DType::bf16 ? 116 : 32; }

// One kernel built for each storage matmul takes, and the one a call's storage runs: the
// product's own programs, and those of the passes beside it.
struct StorageSpecs {
  template <typename Make>
  explicit StorageSpecs(Make make)
      : f32(make(DType::f32)), f16(make(DType::f16)), bf16(make(DType::bf16)) {}
  const cl::KernelSpec& of(DType dtype) const {
    return dtype == DType::f16 ? f16 : dtype == DType::bf16 ? bf16 : f32;
  }
  cl::KernelSpec f32, f16, bf16;
};

class GemmKernel {
 public:
  GemmKernel(Algorithm algorithm, Config config)
      : algorithm_(algorithm),
        config_(std::move(config)),
        specs_([&](DType dtype) {
          return cl::KernelSpec::embedded(file_of(algorithm), options(config_, dtype, algorithm),
                                          kernel_of(algorithm));
        }),
        splits_(slices_of(config_)),
        a_direct_(uses_staged_kernel(algorithm_) && config_["A_DIRECT"] != 0) {}

  void operator()(cl::Client& client, const DeviceMatrix& a, const DeviceMatrix& b, DeviceMatrix& c,
                  const float& alpha, const float& beta, const MatmulMath& math) const {
    const std::size_t m = a.rows, n = b.cols, k = a.cols;
    const cl_int M = detail::int_argument(m, "M"), N = detail::int_argument(n, "N"),
                 K = detail::int_argument(k, "K");
    if (algorithm_ != Algorithm::naive && algorithm_ != Algorithm::tiled) {
      // These index with 32-bit int (the naive and tiled kernels use 64-bit offsets).
      detail::int_argument(std::uint64_t{m} * k, "M*K (elements of A)");
      detail::int_argument(std::uint64_t{k} * n, "K*N (elements of B)");
      detail::int_argument(std::uint64_t{m} * n, "M*N (elements of C)");
    }
    if (algorithm_ != Algorithm::naive) {
      // The naive kernel serves a size within a tile of 2^31.
      detail::require_tile_headroom(std::max({m, n, k}), "the largest of M, N and K");
    }
    require_demands(client, a.dtype, n, k, math);
    ::cl::Kernel kernel = client.kernel(spec(a.dtype));
    // The product on its whole tiles where a few rows or columns past them go to the edge kernel.
    const auto [mi, ni] = tiled_extent(m, n);
    const auto [global, local] = ndrange(mi, ni);
    // Made and checked before the product changes C: the edges' launch comes after it.
    const std::optional<EdgeLaunch> edges = edge_launch(client, a.dtype, m, n, mi, ni);
    if (uses_staged_kernel(algorithm_)) {
      // A transposed first, and rows of whole 16-byte chunks (matmul_staged.cl says why); under
      // A_DIRECT the kernel takes A and B as they are.
      const std::size_t lda = a_direct_ ? k : gemm::staged_row_floats(m),
                        ldb = a_direct_ ? n : gemm::staged_row_floats(n);
      const detail::StagedOperands operands =
          a_direct_ ? detail::StagedOperands{a.buffer, b.buffer}
                    : detail::staged_operands(client, a.buffer, b.buffer, m, k, n, lda, ldb);
      const ::cl::Buffer& at = operands.at;
      const ::cl::Buffer& b_rows = operands.b_rows;
      const auto LDA = static_cast<cl_int>(lda), LDB = static_cast<cl_int>(ldb);
      // Each slice KS rows of K, whole K tiles (the last slice shorter, or empty), one
      // work-group deep along dimension 2 each; several slices write partial products first.
      const auto KS = static_cast<cl_int>(round_up(ceil_div(k, splits_), config_["KWG"]));
      const bool sliced = splits_ > 1;
      const ::cl::Buffer out = sliced ? split_partials(client, m, n) : c.buffer;
      client.launch_with(kernel, ::cl::NDRange(global[0], global[1], global[2] * splits_), local, M,
                         N, K, LDA, LDB, KS, sliced ? 1.0f : alpha, sliced ? 0.0f : beta, at,
                         b_rows, out);
      if (sliced) add_slices(client, a.dtype, m, n, mi, ni, alpha, beta, out, c.buffer);
      cover_edges(client, edges, a, b, c, mi, ni, alpha, beta);
      return;
    }
    if (algorithm_ == Algorithm::wgmma_tf32) {
      // A rounded and B transposed and rounded first (tf32_operands.hpp says why).
      const auto operands = detail::tf32_operands(client, a.buffer, b.buffer, m, n, k);
      client.launch_with(kernel, global, local, M, N, K, alpha, beta, operands.a, operands.bt,
                         c.buffer);
      return;
    }
    // The other families: KSPLIT slices of K along dimension 2 (one: the whole product into C),
    // several into partial products that the last work-group of each tile to finish its slice
    // adds, in the same launch (kernels/gemm_output.cl).
    const ::cl::NDRange slices(global[0], global[1], splits_), group(local[0], local[1], 1);
    if (splits_ == 1) {
      client.launch_with(kernel, slices, group, M, N, K, alpha, beta, a.buffer, b.buffer, c.buffer);
      cover_edges(client, edges, a, b, c, mi, ni, alpha, beta);
      return;
    }
    const std::size_t groups = global[0] / local[0] * (global[1] / local[1]);
    const auto [arrivals] = arrival_scratch().buffers(client, groups * sizeof(cl_int));
    client.launch_with(kernel, slices, group, M, N, K, alpha, beta, a.buffer, b.buffer, c.buffer,
                       split_partials(client, m, n), arrivals);
    cover_edges(client, edges, a, b, c, mi, ni, alpha, beta);
  }

  // Every storage's program and the programs that run beside it (companions), each once.
  std::string fingerprint() const {
    std::vector<const cl::KernelSpec*> programs{&specs_.f32, &specs_.f16, &specs_.bf16};
    for (const DType dtype : {DType::f32, DType::f16, DType::bf16}) {
      for (const cl::KernelSpec* other : companions(dtype)) {
        if (std::find(programs.begin(), programs.end(), other) == programs.end()) {
          programs.push_back(other);
        }
      }
    }
    std::string text;
    for (const cl::KernelSpec* program : programs) text += program->fingerprint();
    return text;
  }

  /// Builds the program a call on these inputs will run, without running it (the tuner builds
  /// the candidates it is about to measure ahead, on other threads).
  void prepare(cl::Client& client, const DeviceMatrix& a, const DeviceMatrix& b,
               const DeviceMatrix&, const float&, const float&, const MatmulMath& math) const {
    require_demands(client, a.dtype, b.cols, a.cols, math);
    (void)client.program(spec(a.dtype));
    for (const cl::KernelSpec* other : companions(a.dtype)) (void)client.program(*other);
  }
  /// Stores the program's binary once this kernel won (see ProgramCache::keep).
  void keep(cl::Client& client, const DeviceMatrix& a, const DeviceMatrix&, const DeviceMatrix&,
            const float&, const float&, const MatmulMath&) const {
    client.programs().keep(spec(a.dtype));
    for (const cl::KernelSpec* other : companions(a.dtype)) client.programs().keep(*other);
  }
  const cl::KernelSpec& spec(DType dtype) const { return specs_.of(dtype); }
  // C = beta * C (0 where beta is 0, C unread), with no product: BLAS's meaning of alpha = 0,
  // which reads neither A nor B (an infinity or a NaN in them changes nothing). The slices' sum
  // over no slices; false where C is past its 32-bit indexes (the product then computes it).
  static bool scale_only(cl::Client& client, DeviceMatrix& c, float beta) {
    if (std::uint64_t{c.rows} * c.cols > detail::int_argument_limit) return false;
    sum_slices(client, c.dtype, c.rows, c.cols, c.rows, c.cols, 0, 0.0f, beta, c.buffer, c.buffer);
    return true;
  }

 private:
  // What a family demands of the call and the device (tensor cores, cp.async), refused before
  // anything is built: by a call and by prepare() alike.
  void require_demands(const cl::Client& client, DType dtype, std::size_t n, std::size_t k,
                       MatmulMath math) const {
    if (uses_tensor_cores(algorithm_)) require_tensor_cores(client, algorithm_, dtype, n, k, math);
    if (uses_staged_kernel(algorithm_)) require_staged(client, dtype);
  }

  // The KSPLIT slices' partial products go to a kept buffer; the staged family adds them by a
  // second pass (add_slices), the others by their last work-group.
  ::cl::Buffer split_partials(cl::Client& client, std::size_t m, std::size_t n) const {
    detail::int_argument(std::uint64_t{m} * n * splits_, "KSPLIT*M*N (partial products)");
    const auto [partials] =
        split_scratch().buffers(client, std::size_t{m} * n * splits_ * sizeof(float));
    return partials;
  }
  // On the first mi rows' first ni columns: those the product's launch covered (tiled_extent).
  void add_slices(cl::Client& client, DType dtype, std::size_t m, std::size_t n, std::size_t mi,
                  std::size_t ni, float alpha, float beta, const ::cl::Buffer& partials,
                  const ::cl::Buffer& c) const {
    sum_slices(client, dtype, m, n, mi, ni, splits_, alpha, beta, partials, c);
  }
  // matmul_sum.cl's launch: C = alpha * (the sum of `splits` slices of partials) + beta * C on
  // the first mi rows' first ni columns of an m x n C (m * n checked to fit an int by the caller).
  static void sum_slices(cl::Client& client, DType dtype, std::size_t m, std::size_t n,
                         std::size_t mi, std::size_t ni, std::size_t splits, float alpha,
                         float beta, const ::cl::Buffer& partials, const ::cl::Buffer& c) {
    ::cl::Kernel sum = client.kernel(sum_spec(dtype));
    const auto range = operand_passes::sum_range(mi, ni);
    client.launch_with(sum, ::cl::NDRange(range.global[0], range.global[1]),
                       ::cl::NDRange(range.local[0], range.local[1]),
                       static_cast<cl_int>(std::size_t{m} * n), static_cast<cl_int>(n),
                       static_cast<cl_int>(ni), static_cast<cl_int>(splits), alpha, beta, partials,
                       c);
  }

  // The families of MWG x NWG tiles (blocked, staged and their split forms): a call's few rows or
  // columns past its whole tiles (gemm::peeled) go to matmul_edges.cl.
  bool peels() const {
    return algorithm_ == Algorithm::blocked || algorithm_ == Algorithm::split ||
           uses_staged_kernel(algorithm_);
  }
  // The rows and columns of an m x n C that the product's launch covers: all, or its whole tiles.
  std::pair<std::size_t, std::size_t> tiled_extent(std::size_t m, std::size_t n) const {
    if (!peels()) return {m, n};
    return {m - gemm::peeled(m, static_cast<std::size_t>(config_["MWG"])),
            n - gemm::peeled(n, static_cast<std::size_t>(config_["NWG"]))};
  }
  // matmul_edges.cl's kernel and NDRange for a call whose product covers C's first mi rows'
  // first ni columns, its work-group and local memory checked against the device (none where the
  // product covers all). Made before the product runs: under beta != 0 the product changes C,
  // and a failure after it would leave C changed (outputs_changed), so that what can be known
  // (the program's build, the device's limits) fails the candidate while C is untouched.
  struct EdgeLaunch {
    ::cl::Kernel kernel;
    ::cl::NDRange global, local;
  };
  std::optional<EdgeLaunch> edge_launch(cl::Client& client, DType dtype, std::size_t m,
                                        std::size_t n, std::size_t mi, std::size_t ni) const {
    if (mi == m && ni == n) return std::nullopt;
    const auto range = operand_passes::edges_range(operand_passes::edge_outputs_of(m, n, mi, ni));
    EdgeLaunch launch{client.kernel(edges_spec(dtype)),
                      ::cl::NDRange(range.global[0], range.global[1]),
                      ::cl::NDRange(range.local[0], range.local[1])};
    client.check_launch(launch.kernel, launch.global, launch.local);
    return launch;
  }
  // C's outputs outside its first mi rows' first ni columns, by matmul_edges.cl (none: nothing),
  // after the product wrote the others: a failure now leaves C changed where beta reads it.
  void cover_edges(cl::Client& client, std::optional<EdgeLaunch> edges, const DeviceMatrix& a,
                   const DeviceMatrix& b, DeviceMatrix& c, std::size_t mi, std::size_t ni,
                   float alpha, float beta) const {
    if (!edges) return;
    try {
      client.launch_with(edges->kernel, edges->global, edges->local, static_cast<cl_int>(a.rows),
                         static_cast<cl_int>(b.cols), static_cast<cl_int>(a.cols),
                         static_cast<cl_int>(mi), static_cast<cl_int>(ni), alpha, beta, a.buffer,
                         b.buffer, c.buffer);
    } catch (...) {
      if (beta == 0.0f) throw;  // C is only written: another candidate writes it all again
      throw outputs_changed(error_from_exception(std::current_exception(), ""));
    }
  }

  // The programs a call runs beside its kernel: the split product's sum, the TF32 operands'
  // passes, the staged kernel's pass on A and B unless A_DIRECT, the edge kernel where the family
  // peels (built and kept whatever the tuning's shape: a later call of the key may peel); one
  // owner for what prepare() builds and keep() stores; fingerprint() covers every storage's.
  std::vector<const cl::KernelSpec*> companions(DType dtype) const {
    std::vector<const cl::KernelSpec*> programs;
    if (peels()) programs.push_back(&edges_spec(dtype));
    if (splits_ > 1 && uses_staged_kernel(algorithm_)) programs.push_back(&sum_spec(dtype));
    if (algorithm_ == Algorithm::wgmma_tf32) {
      programs.insert(programs.end(), {&detail::tf32_round_spec(), &detail::tf32_transpose_spec()});
    }
    if (uses_staged_kernel(algorithm_) && !a_direct_) {
      programs.push_back(&detail::staged_operands_spec());
    }
    return programs;
  }
  static std::size_t slices_of(const Config& config) {
    const auto& names = config.names();
    const bool split = std::find(names.begin(), names.end(), "KSPLIT") != names.end();
    return split ? static_cast<std::size_t>(config["KSPLIT"]) : 1;
  }
  // The kernel that adds the slices of a split product (one program for every configuration).
  static const cl::KernelSpec& sum_spec(DType dtype) {
    static const auto& specs = *new StorageSpecs([](DType storage) {
      return cl::KernelSpec::embedded(
          "matmul_sum.cl", operand_passes::sum_options(precision_of(storage)), "matmul_split_sum");
    });
    return specs.of(dtype);
  }

  // The kernel that computes the outputs past a product's whole tiles (one program for every
  // configuration).
  static const cl::KernelSpec& edges_spec(DType dtype) {
    static const auto& specs = *new StorageSpecs([](DType storage) {
      return cl::KernelSpec::embedded(
          "matmul_edges.cl", operand_passes::edges_options(precision_of(storage)), "matmul_edges");
    });
    return specs.of(dtype);
  }

  static const char* file_of(Algorithm a) {
    switch (a) {
      case Algorithm::naive:
        return "matmul_naive.cl";
      case Algorithm::tiled:
        return "matmul_tiled.cl";
      case Algorithm::direct:
        return "matmul_direct.cl";
      case Algorithm::blocked:
        return "matmul_reg.cl";
      case Algorithm::skinny:
        return "matmul_skinny.cl";
      case Algorithm::split:
        return "matmul_reg.cl";
      case Algorithm::tensor:
        return "matmul_tc.cl";
      case Algorithm::wgmma:
      case Algorithm::wgmma_tf32:
        return "matmul_wgmma.cl";
      case Algorithm::tf32:
        return "matmul_tf32.cl";
      case Algorithm::staged:
      case Algorithm::staged_split:
        return "matmul_staged.cl";
    }
    return "";
  }
  static const char* kernel_of(Algorithm a) {
    switch (a) {
      case Algorithm::naive:
        return "matmul_naive";
      case Algorithm::tiled:
        return "matmul_tiled";
      case Algorithm::direct:
        return "matmul_direct";
      case Algorithm::blocked:
        return "matmul_reg";
      case Algorithm::skinny:
        return "matmul_skinny";
      case Algorithm::split:
        return "matmul_reg";
      case Algorithm::tensor:
        return "matmul_tc";
      case Algorithm::wgmma:
      case Algorithm::wgmma_tf32:
        return "matmul_wgmma";
      case Algorithm::tf32:
        return "matmul_tf32";
      case Algorithm::staged:
      case Algorithm::staged_split:
        return "matmul_staged";
    }
    return "";
  }
  // The kernel's macros; the local size parameters (LX, LY) are the host's, not the kernel's.
  static std::string options(const Config& config, DType dtype, Algorithm algorithm) {
    if (uses_tensor_cores(algorithm)) {
      // One storage only: 16-bit for tensor and wgmma (their f32 spec is never built), f32 for
      // tf32 and wgmma_tf32 (their 16-bit specs are never built): require_tensor_cores refuses
      // the others. wgmma's programs are raised to sm_90a by the program cache.
      std::string text = dtype == DType::bf16 ? "-DBF16=1" : "-DBF16=0";
      for (std::size_t i = 0; i < config.size(); ++i) {
        text += " -D" + config.names()[i] + "=" + std::to_string(config.value(i));
      }
      if (algorithm == Algorithm::wgmma_tf32) text += " -DTF32=1";
      if (algorithm == Algorithm::wgmma || algorithm == Algorithm::wgmma_tf32) {
        text += " " + std::string(cl::ptx_sm90a_option);
      }
      return text;
    }
    std::string text = "-DPRECISION=" + std::to_string(precision_of(dtype));
    for (std::size_t i = 0; i < config.size(); ++i) {
      const auto& name = config.names()[i];
      if (name == "LX" || name == "LY") continue;
      // The staged kernel takes its slices at run time: one program for every KSPLIT (and the
      // staged family's), built once.
      if (name == "KSPLIT" && uses_staged_kernel(algorithm)) continue;
      text += " -D" + name + "=" + std::to_string(config.value(i));
    }
    if (algorithm == Algorithm::blocked || algorithm == Algorithm::split) {
      text += " -DPADA=" + std::to_string(gemm::pad_a) + " -DPADB=" + std::to_string(gemm::pad_b);
    }
    return text + " -cl-mad-enable";
  }

  std::pair<::cl::NDRange, ::cl::NDRange> ndrange(std::size_t m, std::size_t n) const {
    const auto p = [&](const char* name) { return static_cast<std::size_t>(config_[name]); };
    switch (algorithm_) {
      case Algorithm::naive:
      case Algorithm::direct: {
        const std::size_t lx = p("LX"), ly = p("LY");
        const std::size_t columns =
            algorithm_ == Algorithm::naive ? n : ceil_div(n, p("NVEC") * p("VWN"));
        const std::size_t rows = algorithm_ == Algorithm::naive ? m : ceil_div(m, p("WPTM"));
        return {::cl::NDRange(round_up(columns, lx), round_up(rows, ly)), ::cl::NDRange(lx, ly)};
      }
      case Algorithm::tiled: {
        const std::size_t ts = p("TS");
        return {::cl::NDRange(round_up(n, ts), round_up(m, ts)), ::cl::NDRange(ts, ts)};
      }
      case Algorithm::blocked:
      case Algorithm::split:
        return {
            ::cl::NDRange(ceil_div(n, p("NWG")) * p("NDIMC"), ceil_div(m, p("MWG")) * p("MDIMC")),
            ::cl::NDRange(p("NDIMC"), p("MDIMC"))};
      case Algorithm::staged:  // one K slice deep: operator() multiplies dimension 2 by them
      case Algorithm::staged_split:
        return {::cl::NDRange(ceil_div(n, p("NWG")) * p("NDIMC"),
                              ceil_div(m, p("MWG")) * p("MDIMC"), p("KSLICE")),
                ::cl::NDRange(p("NDIMC"), p("MDIMC"), p("KSLICE"))};
      case Algorithm::skinny:
        return {::cl::NDRange(ceil_div(n, p("NDIMC") * p("VWN")) * p("NDIMC"),
                              ceil_div(m, p("WPTM")) * p("KDIMC")),
                ::cl::NDRange(p("NDIMC"), p("KDIMC"))};
      case Algorithm::tensor:
      case Algorithm::wgmma:
      case Algorithm::wgmma_tf32:
      case Algorithm::tf32: {
        // wgmma and wgmma_tf32 alike: BM / WM warpgroups, whatever the element size.
        const std::size_t threads =
            algorithm_ == Algorithm::tensor ? gemm::tensor_work_group_size(tensor_params(config_))
            : algorithm_ == Algorithm::tf32 ? gemm::tf32_work_group_size(tf32_params(config_))
                                            : gemm::wgmma_work_group_size(wgmma_params(config_));
        return {::cl::NDRange(ceil_div(n, p("BN")) * threads, ceil_div(m, p("BM"))),
                ::cl::NDRange(threads, 1)};
      }
    }
    throw std::logic_error("unknown GEMM algorithm");
  }

  Algorithm algorithm_;
  Config config_;
  StorageSpecs specs_;  // the same kernel built for f32, f16 and bf16 storage
  std::size_t splits_;  // KSPLIT: slices of K (1: none; split_partials and add_slices say how)
  bool a_direct_;       // the staged kernels' A_DIRECT: no pass before the product
};

Space naive_space() { return space("naive").parameter("LX", {16}).parameter("LY", {16}); }

Space tiled_space() {
  return space("tiled")
      .parameter("TS", {8, 16, 32})
      .work_group_size([](const Config& c) { return static_cast<std::size_t>(c["TS"] * c["TS"]); })
      .local_memory(
          [](const Config& c) { return static_cast<std::size_t>(2 * c["TS"] * (c["TS"] + 1) * 4); })
      .start_at("TS=16");  // judged by it: the family is left when it is far behind the leader
}

Space direct_space() {
  // Aimed at CPUs: PoCL vectorises across work-items, so small or single-item groups do well.
  return space("direct")
      .parameter("WPTM", {2, 4, 6, 8})
      .parameter("VWN", {4, 8, 16})
      .parameter("NVEC", {1, 2, 4})
      .parameter("LX", {1, 2, 4, 8, 16})
      .parameter("LY", {1, 2, 4, 8, 16})
      .product_at_most({"WPTM", "VWN", "NVEC"}, 128)  // accumulators per work-item
      .work_group_size([](const Config& c) { return static_cast<std::size_t>(c["LX"] * c["LY"]); })
      // PoCL's best at 128 (docs/data/pocl-direct-128.tsv) and the H100's best direct at 2048
      // (docs/data/h100-time-to-tuned-tables.log): the family is judged by them, and a search
      // on the device one was found on, starting from it, needs only the level's seeded patience.
      .start_at("WPTM=6,VWN=8,NVEC=1,LX=16,LY=8", found_on_pocl())
      .start_at("WPTM=8,VWN=8,NVEC=1,LX=16,LY=16", found_on_hopper());
}

// The blocked kernel's macros of a configuration (the padding is the op's, not a parameter).
gemm::BlockedParams blocked_params(const Config& c) {
  return {c["MWG"], c["NWG"], c["KWG"],    c["MDIMC"],  c["NDIMC"], c["VWM"],
          c["VWN"], c["VW"],  gemm::pad_a, gemm::pad_b, c["DB"]};
}

// Outputs per work-item of matmul_reg.cl's and matmul_staged.cl's register blocks (WPTM * WPTN),
// and their bounds: at least 4, at most 64 (the register file), or 128 where the staged kernel
// spreads its copies (staged_rules says why).
std::int64_t block_outputs(const Config& c) {
  return (c["MWG"] / c["MDIMC"]) * (c["NWG"] / c["NDIMC"]);
}
constexpr std::int64_t min_block_outputs = 4, max_block_outputs = 64,
                       max_spread_block_outputs = 128;

// The register budget of matmul_reg.cl's blocks, on a space with MWG, NWG, MDIMC and NDIMC.
Space& register_block_budget(Space& s) {
  return s.where("4 <= WPTM*WPTN <= 64",
                 [](const Config& c) {
                   const auto outputs = block_outputs(c);
                   return outputs >= min_block_outputs && outputs <= max_block_outputs;
                 },
                 {"MWG", "NWG", "MDIMC", "NDIMC"});
}

// The rules of matmul_reg.cl (gemm_rules.hpp) and the register budget, on a space of its macros.
Space& blocked_rules(Space& s) {
  return register_block_budget(s)
      .where("matmul_reg.cl builds (its #error rules: gemm_rules.hpp)",
             [](const Config& c) { return gemm::blocked_builds(blocked_params(c)); })
      .work_group_size(
          [](const Config& c) { return gemm::blocked_work_group_size(blocked_params(c)); })
      .local_memory([](const Config& c) { return gemm::blocked_local_memory(blocked_params(c)); });
}

Space blocked_space() {
  Space s = space("blocked");
  s.parameter("MWG", {32, 64, 128, 256})
      .parameter("NWG", {32, 64, 128, 256})
      .parameter("KWG", {8, 16, 32})
      .parameter("MDIMC", {8, 16, 32})
      .parameter("NDIMC", {8, 16, 32})
      .parameter("VWM", {2, 4})
      .parameter("VWN", {2, 4})
      .parameter("VW", {4})
      .parameter("DB", {0, 1});
  return blocked_rules(s)
      // The kernel lab's fastest on the H100 (docs/lab/h100-2026-11-22.log): at n = 2048-8192,
      // and at 1024; then 64 x 128 tiles, within 1% of the recorded optimum at 1024
      // (docs/data/h100-blocked-1024.tsv) and the best by 1.7x for 64 x 11008 x 4096, which a
      // balanced search from 128-row tiles did not reach. A search measures them first, so that a
      // small budget (TUNEKIT_LEVEL=minimal) cannot miss them there, and walks on from the best.
      // Then 64 x 64 tiles 32 deep: the best of every configuration on the call's own shape for
      // 512 x 3072 x 768 (33.1 TFLOP/s against 29.4 from the walk) and 8192 x 64 x 1024, within
      // 1% of it at 1024^3, 1023^3 and 997 x 1009 x 1013 (matmul_shape_oracle, docs/benchmarks.md).
      // Last, 32 x 32 tiles for products of few tiles (128 x 768 x 768: 96 work-groups): the
      // best of three H100 tunings there (17 us against 22-27 us from 64-row tiles), a region
      // the walk from the larger tiles reached in one tuning of three (docs/benchmarks.md).
      .start_at("MWG=128,NWG=128,KWG=16,MDIMC=8,NDIMC=32,VWM=4,VWN=4,VW=4,DB=1", found_on_hopper())
      .start_at("MWG=128,NWG=64,KWG=16,MDIMC=16,NDIMC=8,VWM=4,VWN=4,VW=4,DB=1", found_on_hopper())
      .start_at("MWG=64,NWG=128,KWG=16,MDIMC=8,NDIMC=16,VWM=4,VWN=4,VW=4,DB=1", found_on_hopper())
      .start_at("MWG=64,NWG=64,KWG=32,MDIMC=8,NDIMC=16,VWM=4,VWN=2,VW=4,DB=1", found_on_hopper())
      .start_at("MWG=32,NWG=32,KWG=32,MDIMC=8,NDIMC=16,VWM=2,VWN=2,VW=4,DB=1", found_on_hopper());
}

// Split K: the blocked kernel on KSPLIT slices of K at once (global dim 2), the last work-group
// of each tile to finish adding the slices into C. For small M*N and large K, where whole-K tiles
// leave most of the device idle (256 x 256 x 65536 has 16 tiles of 64 x 64; 64 x 11008 x 4096 has
// 86 of 64 x 128 for 132 SMs on the H100); the set measures it there only (split_group). 126
// configurations: double-buffered 32-128 tiles with float4 reads (the blocked family's best shapes
// on the H100), 2 to 64 slices (3: one tile per SM becomes two rounds of a third of K; 64: 256 x
// 256 x 65536 in 128 x 128 tiles, two work-groups per SM). Start points: the best on the call's own
// shape on the H100 (matmul_shape_oracle, docs/benchmarks.md) for 1025^3 and 513 x 1025 x 2049 (64
// x 64 tiles), 128 x 4096 x 11008, 256 x 256 x 65536 and 2048 x 768 x 3072 (128 x 128 tiles, whose
// walk reaches 4 to 64 slices), and 64 x 11008 x 4096 (64 x 128 tiles, 3 slices).
Space split_space() {
  Space s = space("split");
  s.parameter("MWG", {32, 64, 128})
      .parameter("NWG", {64, 128})
      .parameter("KWG", {16})
      .parameter("MDIMC", {8, 16})
      .parameter("NDIMC", {8, 16, 32})
      .parameter("VWM", {4})
      .parameter("VWN", {4})
      .parameter("VW", {4})
      .parameter("DB", {1})
      .parameter("KSPLIT", {2, 3, 4, 8, 16, 32, 64});
  return blocked_rules(s)
      .start_at("MWG=64,NWG=64,KWG=16,MDIMC=8,NDIMC=16,VWM=4,VWN=4,VW=4,DB=1,KSPLIT=8",
                found_on_hopper())
      .start_at("MWG=128,NWG=128,KWG=16,MDIMC=8,NDIMC=32,VWM=4,VWN=4,VW=4,DB=1,KSPLIT=8",
                found_on_hopper())
      .start_at("MWG=64,NWG=128,KWG=16,MDIMC=8,NDIMC=16,VWM=4,VWN=4,VW=4,DB=1,KSPLIT=3",
                found_on_hopper());
}

// Split K is measured where C has at most 2^22 elements (2048 x 2048) and K is long against it:
// K above both M and N (whole-K tiles are few and long), or 32 to 64 rows with K at least 16
// times M (one row of tiles: too few for a GPU when N is a few thousand), or K as long as M and
// N when M or N is one past a power of two up to 3/4 of it (`other_low`: the last row or column
// of tiles is nearly empty, so the tiles that work fill fewer SMs; 1025^3 on the H100: split 22.0
// TFLOP/s, blocked at best 20.6), or K as long as M and N where C is thin and a few tiles (at
// most 2^17 elements, its short side at most a quarter of K: 128 x 768 x 768 has 24 tiles of
// 64 x 64 for 132 SMs on the H200, where split's best took 14.0 us a call and blocked's 18.5;
// docs/benchmarks.md, "Long K on 64 slices"). Below 32 rows the skinny family is the shape
// (split's tiles have at least 32 rows). Skipped elsewhere.
bool long_k_small_c(const MatmulKey& key) {
  const std::uint64_t m = key.m, n = key.n, k = key.k;  // m * n <= 2^22 without overflowing
  const bool small_c = n != 0 && m <= (std::uint64_t{1} << 22) / n;
  const bool ragged = key.m_fit == DimFit::other_low || key.n_fit == DimFit::other_low;
  const std::uint64_t long_side = std::max(m, n);
  const bool few_tiles = small_c && m <= (std::uint64_t{1} << 17) / n;  // n != 0: small_c
  const bool thin_few_tiles = few_tiles && m >= 32 && k >= long_side && k >= 4 * std::min(m, n);
  const bool long_k = k > long_side || (m >= 32 && m <= 64 && k >= 16 * m) ||
                      (ragged && k >= long_side) || thin_few_tiles;
  return small_c && long_k;
}

TuneGroup<MatmulKey> split_group() {
  return TuneGroup<MatmulKey>("long K, small C",
                              [](const MatmulKey& key) { return long_k_small_c(key) ? 0 : -1; });
}

// For few rows (M <= 64): a work-group per WPTM rows and NDIMC*VWN columns, K split across its
// KDIMC rows of work-items and, with KSPLIT > 1, across KSPLIT work-groups whose partial products
// the last of them to finish adds (kernels/matmul_skinny.cl): enough work-groups for a GPU even
// at M = 1, in one launch (more slices, 32 or 64, tied with 16 on the H200 at 1 x 4096 x 4096). B
// is read once per WPTM rows, so this is the wrong shape for large M: the set skips the family
// there (skinny_group).
Space skinny_space() {
  return space("skinny")
      .parameter("WPTM", {1, 2, 4, 8, 16})
      .parameter("VWN", {1, 2, 4})
      .parameter("NDIMC", {32, 64})
      .parameter("KDIMC", {1, 4, 16})
      .parameter("KSPLIT", {1, 4, 16})
      .work_group_size(
          [](const Config& c) { return static_cast<std::size_t>(c["NDIMC"] * c["KDIMC"]); })
      .local_memory([](const Config& c) {
        return static_cast<std::size_t>(
            (c["KDIMC"] > 1 ? c["KDIMC"] * c["NDIMC"] * c["VWN"] * 4 : 0) +
            (c["KSPLIT"] > 1 ? 4 : 0));
      })
      // A GEMV: K split 64 ways, in 128 work-items (the H100's winner at 1 x 4096 x 4096; the
      // 512 of KDIMC=16 are more than NVIDIA builds this kernel for, 256).
      .start_at("WPTM=1,VWN=2,NDIMC=32,KDIMC=4,KSPLIT=16", found_on_hopper())
      .start_at("WPTM=8,VWN=4,NDIMC=32,KDIMC=4,KSPLIT=4", found_on_hopper());
}

// The skinny family is measured for keys of at most 64 rows (the anchor: every call it serves
// has M <= 64) and skipped above, where the blocked and direct families are the right shape.
TuneGroup<MatmulKey> skinny_group() {
  return TuneGroup<MatmulKey>("few rows (M <= 64)",
                              [](const MatmulKey& key) { return key.m <= 64 ? 0 : -1; });
}

// The tensor cores through inline PTX (kernels/matmul_tc.cl): mma.sync m16n8k16 with f32
// accumulation, ldmatrix fragments, cp.async into STAGES local buffers. NVIDIA only, compute
// capability 8.0 and up (require_tensor_cores; elsewhere every configuration fails with that
// reason before a build). The rules are gemm_rules.hpp's; the device's 48 KB of local memory
// leaves 2 stages of 128 x 128 x 32 or 3 to 4 of 16-deep tiles. GROUP_M 8 walks the tiles 8 rows
// at a time for L2 reuse (4% at 8192 on the H200, within noise below). Start points: the best of
// the probe on the H200 at 2048-8192 (docs/benchmarks.md): 128 x 128 tiles 32 deep in 2 stages,
// warps of 64 x 64 (with and without GROUP_M) and 32 x 64; and 16 deep in 4 stages.
Space tensor_space() {
  Space s = space("tensor");
  s.parameter("BM", {64, 128, 256})
      .parameter("BN", {64, 128, 256})
      .parameter("BK", {16, 32})
      .parameter("WM", {32, 64})
      .parameter("WN", {32, 64})
      .parameter("STAGES", {2, 3, 4})
      .parameter("GROUP_M", {0, 8})
      .where("matmul_tc.cl builds (its #error rules: gemm_rules.hpp)",
             [](const Config& c) { return gemm::tensor_builds(tensor_params(c)); })
      .work_group_size(
          [](const Config& c) { return gemm::tensor_work_group_size(tensor_params(c)); })
      .local_memory([](const Config& c) { return gemm::tensor_local_memory(tensor_params(c)); });
  return s.start_at("BM=128,BN=128,BK=32,WM=64,WN=64,STAGES=2,GROUP_M=8", found_on_hopper())
      .start_at("BM=128,BN=128,BK=32,WM=64,WN=64,STAGES=2,GROUP_M=0", found_on_hopper())
      .start_at("BM=128,BN=128,BK=32,WM=32,WN=64,STAGES=2,GROUP_M=0", found_on_hopper())
      .start_at("BM=128,BN=128,BK=16,WM=64,WN=64,STAGES=4,GROUP_M=0", found_on_hopper());
}

// Hopper's warpgroup MMA (kernels/matmul_wgmma.cl): wgmma.m64nBNk16 with f32 accumulation from
// tiles in local memory laid out in wgmma's swizzled layouts, cp.async into STAGES buffers; built
// for sm_90a through the program cache (cl::ptx_sm90a_option). NVIDIA compute capability 9.0
// only (require_tensor_cores); elsewhere every configuration fails with that reason before a
// build. The rules are gemm_rules.hpp's: the tiles are a declared __local array, so they may take
// past the 48 KB NVIDIA reports, up to what leaves room for two work-groups on a multiprocessor.
// Start points: the probe's best past 48 KB (docs/benchmarks.md, "Ninth round"): 128 x 128 tiles
// on one warpgroup 32 deep in 4 stages (66.5 KB; 546 / 562 TFLOP/s at 4096 / 8192) and 64 x 256
// tiles 32 deep in 4 stages (81 KB; 527 / 548); then the best within 48 KB (docs/benchmarks.md,
// "Fourth round: a copy plan, two row blocks per warpgroup", and "Fifth round"): 128 x 128 tiles
// on one warpgroup 32 deep in 2 stages (409-436 TFLOP/s at 2048),
// 64 x 128 tiles 32 deep in 3 stages (452 at 4096), 64 x 256 tiles 16 deep in 4 stages (449-476
// at 8192); the last two walk 16 rows of tiles at a time (GROUP_M 16: 4-7% over 8 at 4096; 64,
// a whole column of tiles at 4096, measured 5% over 16 once: in the space, not a start point).
// The wgmma spaces' rule on local memory (gemm::wgmma_two_per_multiprocessor), said once.
constexpr const char* two_per_multiprocessor =
    "two work-groups fit a multiprocessor's local memory (gemm_rules.hpp)";

Space wgmma_space() {
  Space s = space("wgmma");
  s.parameter("BM", {64, 128, 256})
      .parameter("BN", {64, 128, 256})
      .parameter("BK", {16, 32, 64})
      .parameter("STAGES", {2, 3, 4, 5})
      .parameter("GROUP_M", {0, 8, 16, 64})
      .parameter("WM", {64, 128})
      .where("matmul_wgmma.cl builds (its #error rules: gemm_rules.hpp)",
             [](const Config& c) { return gemm::wgmma_builds(wgmma_params(c)); })
      .where(two_per_multiprocessor,
             [](const Config& c) { return gemm::wgmma_two_per_multiprocessor(wgmma_params(c)); })
      .work_group_size(
          [](const Config& c) { return gemm::wgmma_work_group_size(wgmma_params(c)); });
  return s.start_at("BM=128,BN=128,BK=32,STAGES=4,GROUP_M=16,WM=128", found_on_hopper())
      .start_at("BM=64,BN=256,BK=32,STAGES=4,GROUP_M=16,WM=64", found_on_hopper())
      .start_at("BM=128,BN=128,BK=32,STAGES=2,GROUP_M=8,WM=128", found_on_hopper())
      .start_at("BM=64,BN=128,BK=32,STAGES=3,GROUP_M=16,WM=64", found_on_hopper())
      .start_at("BM=64,BN=256,BK=16,STAGES=4,GROUP_M=16,WM=64", found_on_hopper());
}

// TF32 through Hopper's warpgroup MMA (kernels/matmul_wgmma.cl with TF32=1): wgmma's .tf32 form
// (m64nNk8) reads both operands K-major and truncated, so each call first writes A rounded to
// TF32 and B transposed and rounded into kept buffers (tf32_operands.hpp; about 5% of the
// product each at 4096 by their bytes); then the wgmma family's pipeline on f32 tiles
// (BK 8, 16, 32: rows of 32, 64, 128 bytes). NVIDIA compute capability 9.0, keys that allow TF32
// only (tf32_group). Start points: the probe's best on the H200 (docs/benchmarks.md, "Eighth
// round"): 64 x 128 tiles 16 deep in 3 stages (168.8 / 190.1 / 185.5 TFLOP/s at 2048 / 4096 /
// 8192), 128 x 64 (161.6 / 179.8 / 175.2), 128 x 128 on two warpgroups in 2 stages.
Space wgmma_tf32_space() {
  Space s = space("wgmma_tf32");
  s.parameter("BM", {64, 128})
      .parameter("BN", {64, 128, 256})
      .parameter("BK", {8, 16, 32})
      .parameter("STAGES", {2, 3, 4, 5})
      .parameter("GROUP_M", {0, 8, 16})
      .parameter("WM", {64, 128})
      .where("matmul_wgmma.cl builds with TF32=1 (its #error rules: gemm_rules.hpp)",
             [](const Config& c) { return gemm::wgmma_builds(wgmma_tf32_params(c)); })
      .where(
          two_per_multiprocessor,
          [](const Config& c) { return gemm::wgmma_two_per_multiprocessor(wgmma_tf32_params(c)); })
      .work_group_size(
          [](const Config& c) { return gemm::wgmma_work_group_size(wgmma_tf32_params(c)); });
  return s.start_at("BM=64,BN=128,BK=16,STAGES=3,GROUP_M=16,WM=64", found_on_hopper())
      .start_at("BM=128,BN=64,BK=16,STAGES=3,GROUP_M=8,WM=64", found_on_hopper())
      .start_at("BM=128,BN=128,BK=16,STAGES=2,GROUP_M=8,WM=64", found_on_hopper());
}

// TF32 on the tensor cores for f32 storage (kernels/matmul_tf32.cl): mma.sync m16n8k8 from tiles
// in local memory, cp.async into STAGES buffers; NVIDIA compute capability 8.0 and up, keys that
// allow TF32 only (tf32_group). The rules are gemm_rules.hpp's. Start points: the H200's winner
// at 2048, 4096 and 8192 (128 x 128 tiles 16 deep in 2 stages, 4 warps of 64 x 64; found by the
// default level from the others, which were not start points: docs/benchmarks.md, "Sixth
// round"), then the shapes of the tensor family's (8 warps of 64 x 32; 128 x 64 in 3 stages;
// 64 x 64 tiles 32 deep).
Space tf32_space() {
  Space s = space("tf32");
  s.parameter("BM", {64, 128})
      .parameter("BN", {64, 128})
      .parameter("BK", {16, 32})
      .parameter("WM", {32, 64})
      .parameter("WN", {32, 64})
      .parameter("STAGES", {2, 3, 4})
      .parameter("GROUP_M", {0, 8})
      .where("matmul_tf32.cl builds (its #error rules: gemm_rules.hpp)",
             [](const Config& c) { return gemm::tf32_builds(tf32_params(c)); })
      .work_group_size([](const Config& c) { return gemm::tf32_work_group_size(tf32_params(c)); })
      .local_memory([](const Config& c) { return gemm::tf32_local_memory(tf32_params(c)); });
  return s.start_at("BM=128,BN=128,BK=16,WM=64,WN=64,STAGES=2,GROUP_M=8", found_on_hopper())
      .start_at("BM=128,BN=128,BK=16,WM=64,WN=32,STAGES=2,GROUP_M=8", found_on_hopper())
      .start_at("BM=128,BN=64,BK=16,WM=64,WN=32,STAGES=3,GROUP_M=8", found_on_hopper())
      .start_at("BM=64,BN=64,BK=32,WM=32,WN=32,STAGES=2,GROUP_M=0", found_on_hopper());
}

// Whether N and K of every call the key serves are multiples of `step`.
bool n_and_k_multiples_of(const MatmulKey& key, std::uint64_t step) {
  return every_size_multiple_of(key.n, key.n_fit, step) &&
         every_size_multiple_of(key.k, key.k_fit, step);
}

// The tensor family is measured for 16-bit keys whose N and K are multiples of 8 for every call
// the key serves (a power of two of at least 8, or a multiple of 16), skipped elsewhere.
TuneGroup<MatmulKey> tensor_group() {
  return TuneGroup<MatmulKey>("16-bit, N and K multiples of 8", [](const MatmulKey& key) {
    constexpr auto step = static_cast<std::uint64_t>(gemm::tensor_alignment);
    return key.dtype != DType::f32 && n_and_k_multiples_of(key, step) ? 0 : -1;
  });
}

// The TF32 families (tf32, wgmma_tf32) are measured for f32 keys that allow TF32 and whose N and
// K are multiples of 4
// for every call the key serves (a power of two of at least 4, or a multiple of 16).
TuneGroup<MatmulKey> tf32_group() {
  return TuneGroup<MatmulKey>(
      "f32 allowing TF32, N and K multiples of 4", [](const MatmulKey& key) {
        constexpr auto step = static_cast<std::uint64_t>(gemm::tf32_alignment);
        return key.dtype == DType::f32 && key.math == MatmulMath::tf32 &&
                       n_and_k_multiples_of(key, step)
                   ? 0
                   : -1;
      });
}

// The staged kernel's macros of a configuration.
gemm::StagedParams staged_params(const Config& c) {
  return {c["MWG"], c["NWG"],    c["KWG"],    c["MDIMC"],    c["NDIMC"],        c["VWM"],
          c["VWN"], c["STAGES"], c["KSLICE"], c["A_DIRECT"], c["SPREAD_COPIES"]};
}

// The staged kernel's rules on a space (gemm_rules.hpp's), and its bound on outputs per
// work-item: staged's and staged_split's. Blocked's 4 to 64, and up to 128 with SPREAD_COPIES:
// cuBLAS's 256 x 128 x 8 tile (8 x 16 outputs on 16 x 16 work-items, 213-235 registers on the
// H200, one work-group per SM) was the best with the copies spread and lost to 64 outputs
// without them, in the kernel lab (docs/benchmarks.md, "Copies spread between the rows").
Space& staged_rules(Space& s) {
  return s
      .where("4 <= WPTM*WPTN <= 64, or 128 with SPREAD_COPIES",
             [](const Config& c) {
               const auto outputs = block_outputs(c);
               return outputs >= min_block_outputs &&
                      outputs <=
                          (c["SPREAD_COPIES"] == 1 ? max_spread_block_outputs : max_block_outputs);
             },
             {"MWG", "NWG", "MDIMC", "NDIMC", "SPREAD_COPIES"})
      .where("matmul_staged.cl builds (its #error rules: gemm_rules.hpp)",
             [](const Config& c) { return gemm::staged_builds(staged_params(c)); })
      .where("at most 256 work-items (gemm::staged_max_work_group)",
             [](const Config& c) {
               return c["MDIMC"] * c["NDIMC"] * c["KSLICE"] <= gemm::staged_max_work_group;
             },
             {"MDIMC", "NDIMC", "KSLICE"})
      .work_group_size(
          [](const Config& c) { return gemm::staged_work_group_size(staged_params(c)); })
      .local_memory([](const Config& c) { return gemm::staged_local_memory(staged_params(c)); });
}

// matmul_reg.cl's register blocks over tiles copied by cp.async from A transposed
// (kernels/matmul_staged.cl): with A_DIRECT 0 each call first writes A transposed into a kept
// buffer (transposed_operand.hpp; about 1% of the product at 4096 by its bytes). NVIDIA compute
// capability 8.0 and up, f32 keys (staged_group; elsewhere every configuration fails with its
// reason before a build); any M, N and K (where M or N is not a multiple of 4, At's or B's rows
// are padded to whole 16-byte chunks on their way: gemm::staged_row_floats). The rules are
// gemm_rules.hpp's, and blocked's bound on outputs per work-item. Start points: 128 x 128 tiles 16
// deep in 2 stages, VWM=4, on 16 x 16 work-items with VWN=2 (the op's winner at 2048-8192 on the
// H200, docs/benchmarks.md "The staged family through the op": ahead of blocked from its start, so
// that blocked trails there and is searched on its warm patience). KSLICE 2: two groups of
// work-items share each K tile and add their blocks at the end (more warps for the same tiles
// where they are too few for the device); a third start point is its best in the kernel lab near
// 1024^3 with the passes, 64 x 64 tiles 32 deep (3-4% ahead of one group there;
// docs/benchmarks.md, "K tiles shared within a work-group"). A_DIRECT 1 runs no
// pass: A is transposed float by float on its way into local memory and B copied as it is, which
// costs the product instructions (7% at 4096^3 in the kernel lab on the H200) and saves the
// passes (about a tenth of the call at 1023^3, where they are two: docs/benchmarks.md, "A and B
// as they are"); the fourth start point is the third without passes, the lab's best at 1023^3
// and 997 x 1009 x 1013. SPREAD_COPIES 1 issues the next tile's copies between the rows of the
// product; the fifth start point is cuBLAS's 4096 tile with it, 256 x 128 x 8 in 3 stages on
// 16 x 16 work-items of 128 outputs, the kernel lab's best at 2048^3-8192^3 (2.5-3% ahead of the
// first start point there; docs/benchmarks.md, "Copies spread between the rows"); the second is
// the lab's best at 1024^3 with it, 128 x 64 x 16 tiles in 3 stages on two groups of 16 x 8
// work-items (60.3 against 61.2 us for the third start point). It replaced 128 x 128 tiles on
// 8 x 32 work-items, which no tuning of the squares or the real list picked (docs/benchmarks.md,
// "A start point for 1024^3"). The sixth is the fifth without passes and with VWN=2: the best of
// the H200's whole table at 2048^3 (docs/data/h200-staged-2048.tsv), and the tunings' winner at
// 2048^3 on the H100 and the H200 (the fifth runs 1.03x it in that table). A search that beats
// every start point by the margin loses the seeded patience, so without it a cold 2048^3 measured
// more (docs/benchmarks.md, "A sixth staged start point").
Space staged_space() {
  Space s = space("staged");
  s.parameter("MWG", {64, 128, 256})
      .parameter("NWG", {64, 128})
      .parameter("KWG", {8, 16, 32})
      .parameter("MDIMC", {8, 16, 32})
      .parameter("NDIMC", {8, 16, 32})
      .parameter("VWM", {2, 4})
      .parameter("VWN", {2, 4})
      .parameter("STAGES", {2, 3, 4})
      .parameter("KSLICE", {1, 2})
      .parameter("A_DIRECT", {0, 1})
      .parameter("SPREAD_COPIES", {0, 1});
  return staged_rules(s)
      .start_at(
          "MWG=128,NWG=128,KWG=16,MDIMC=16,NDIMC=16,VWM=4,VWN=2,STAGES=2,KSLICE=1,A_DIRECT=0,"
          "SPREAD_COPIES=0")
      .start_at(
          "MWG=128,NWG=64,KWG=16,MDIMC=16,NDIMC=8,VWM=4,VWN=4,STAGES=3,KSLICE=2,A_DIRECT=0,"
          "SPREAD_COPIES=1")
      .start_at(
          "MWG=64,NWG=64,KWG=32,MDIMC=8,NDIMC=16,VWM=4,VWN=2,STAGES=2,KSLICE=2,A_DIRECT=0,"
          "SPREAD_COPIES=0")
      .start_at(
          "MWG=64,NWG=64,KWG=32,MDIMC=8,NDIMC=16,VWM=4,VWN=2,STAGES=2,KSLICE=2,A_DIRECT=1,"
          "SPREAD_COPIES=0")
      .start_at(
          "MWG=256,NWG=128,KWG=8,MDIMC=16,NDIMC=16,VWM=4,VWN=4,STAGES=3,KSLICE=1,A_DIRECT=0,"
          "SPREAD_COPIES=1")
      .start_at(
          "MWG=256,NWG=128,KWG=8,MDIMC=16,NDIMC=16,VWM=4,VWN=2,STAGES=3,KSLICE=1,A_DIRECT=1,"
          "SPREAD_COPIES=1");
}

// The staged kernel on KSPLIT slices of K at once (global dim 2; one program with the staged
// family's configuration of the same name: the slices are an argument), then matmul_sum.cl adds
// them: split's form of the staged family, for the same shapes (staged_split_group). Tiles of
// 64 and 128 with the staged family's best work-item shapes, 2 to 64 slices. Start point: the
// staged family's first on 4 slices (the kernel lab's best at 1024^3 on the H200, and the op's
// winner at 2048 x 768 x 3072: docs/benchmarks.md, "Rows padded"), whose program the staged
// family's start builds anyway. The lab's best at 1025^3 (64 x 64 tiles on 4 slices, 77.6 us
// for the kernel and the sum) lost to split through the op (98.5 against 93.1 us: the two passes
// on A and B cost 15-20 us there). With both in one launch (matmul_operands.cl), the lab's best
// at 1025^3 and 513 x 1025 x 2049, 64 x 64 tiles 16 deep in 3 stages on 4 slices with At (91.7
// and 93.7 us, against 97.1 and 98.5 us for the best without a pass; docs/benchmarks.md, "The
// operands in one launch"), is the second start point.
// 32 and 64 slices serve long K over a handful of tiles (256 x 256 x 65536: four 128 x 128 tiles;
// on 64 slices, two work-groups per SM on the H200), where A's pass alone would cost about 28 us
// (A is 64 MiB) of a 218 us call: the third start point is the lab's best there without it,
// 128 x 128 tiles on 64 slices (218 us against 230 on 32 and 239 for the op's split pick;
// docs/benchmarks.md, "Long K on 64 slices").
Space staged_split_space() {
  Space s = space("staged_split");
  s.parameter("MWG", {64, 128})
      .parameter("NWG", {64, 128})
      .parameter("KWG", {16, 32})
      .parameter("MDIMC", {8, 16})
      .parameter("NDIMC", {8, 16, 32})
      .parameter("VWM", {2, 4})
      .parameter("VWN", {2, 4})
      .parameter("STAGES", {2, 3, 4})
      .parameter("KSLICE", {1, 2})
      .parameter("KSPLIT", {2, 3, 4, 8, 16, 32, 64})
      .parameter("A_DIRECT", {0, 1})
      .parameter("SPREAD_COPIES", {0});  // on slices of K it lost as often as it won (the lab)
  return staged_rules(s)
      .start_at(
          "MWG=128,NWG=128,KWG=16,MDIMC=16,NDIMC=16,VWM=4,VWN=2,STAGES=2,KSLICE=1,KSPLIT=4,"
          "A_DIRECT=0,SPREAD_COPIES=0")
      .start_at(
          "MWG=64,NWG=64,KWG=16,MDIMC=8,NDIMC=16,VWM=4,VWN=2,STAGES=3,KSLICE=1,KSPLIT=4,"
          "A_DIRECT=0,SPREAD_COPIES=0")
      .start_at(
          "MWG=128,NWG=128,KWG=16,MDIMC=16,NDIMC=16,VWM=4,VWN=2,STAGES=2,KSLICE=1,KSPLIT=64,"
          "A_DIRECT=1,SPREAD_COPIES=0");
}

// The staged kernel on tiles of 16 and 32 columns, for a C of few columns (few_columns_group):
// every tile of the staged family is 64 or 128 columns wide, so at N = 35 each computes 64
// columns for 35, and 5274 x 35 x 2233 gets 83 work-groups of 64 x 64 for 132 SMs (69.5% of
// cuBLAS on the H100, 4436 x 137 x 2752 76.1%: docs/benchmarks.md, "Shapes nothing was tuned
// on"). Narrower tiles waste fewer columns (16: 48 for 35) and give such a C more work-groups.
// The same kernel and rules as staged. Start points: the staged family's second (128 x 64 x 16 in
// 3 stages on 16 x 8 work-items) at half its width, and 64 x 16 tiles 32 deep on 16 x 4
// work-items, the kernel lab's narrowest (tools/kernel_lab, "A C of few columns"); each passes the
// lab's host-reference check on PoCL. Each also without the pass, as the staged family has both
// forms: a C of few columns has a long A, whose pass can cost a third of the call, and a family
// that trails the leader is searched only near its start points (docs/benchmarks.md, "The pick at
// 5274 x 35 x 2233, judged"). Without the pass the narrow tiles keep A's tile in A's rows
// (A_DIRECT 2), which ran 1.08-1.11x A_DIRECT 1's best at both held-out shapes in the kernel lab
// on the H100 (docs/benchmarks.md, "A's tile in A's rows"); the second twin is that lab's best at
// 5274 x 35 x 2233, 128 x 16 x 32 on two groups of 16 x 4 work-items. The space is kept small,
// because every configuration its search measures costs a build: its first form (MWG up to 256, 8
// to 32 work-items along M, 4 to 16 along N, VWM 2 or 4) gave the search a budget of 149 and each
// key of few columns 30 s more tuning on the H100; this form's budget is 44, and such a key tuned
// there in 28-40 s against about 16 s without the family (docs/benchmarks.md, "Tiles of 16 and 32
// columns"). Left out of it: 256 rows (the lab's slowest narrow tiles at both shapes), 32
// work-items along M, 16 along N and VWM 2 (none among the lab's or the tunings' best).
Space staged_narrow_space() {
  Space s = space("staged_narrow");
  s.parameter("MWG", {64, 128})
      .parameter("NWG", {16, 32})
      .parameter("KWG", {16, 32})
      .parameter("MDIMC", {8, 16})
      .parameter("NDIMC", {4, 8})
      .parameter("VWM", {4})
      .parameter("VWN", {2, 4})
      .parameter("STAGES", {2, 3})
      .parameter("KSLICE", {1, 2})
      .parameter("A_DIRECT", {0, 2})
      .parameter("SPREAD_COPIES", {0});
  return staged_rules(s)
      .start_at(
          "MWG=128,NWG=32,KWG=16,MDIMC=16,NDIMC=8,VWM=4,VWN=4,STAGES=3,KSLICE=1,A_DIRECT=0,"
          "SPREAD_COPIES=0")
      .start_at(
          "MWG=64,NWG=16,KWG=32,MDIMC=16,NDIMC=4,VWM=4,VWN=4,STAGES=2,KSLICE=1,A_DIRECT=0,"
          "SPREAD_COPIES=0")
      .start_at(
          "MWG=128,NWG=32,KWG=16,MDIMC=16,NDIMC=8,VWM=4,VWN=4,STAGES=3,KSLICE=1,A_DIRECT=2,"
          "SPREAD_COPIES=0")
      .start_at(
          "MWG=128,NWG=16,KWG=32,MDIMC=16,NDIMC=4,VWM=4,VWN=4,STAGES=2,KSLICE=2,A_DIRECT=2,"
          "SPREAD_COPIES=0");
}

// The staged family is measured for f32 keys, skipped for 16-bit storage.
TuneGroup<MatmulKey> staged_group() {
  return TuneGroup<MatmulKey>(
      "f32", [](const MatmulKey& key) { return key.dtype == DType::f32 ? 0 : -1; });
}

// Its split form for f32 keys of split's shapes (long K, small C), skipped elsewhere.
TuneGroup<MatmulKey> staged_split_group() {
  return TuneGroup<MatmulKey>("f32, long K, small C", [](const MatmulKey& key) {
    return key.dtype == DType::f32 && long_k_small_c(key) ? 0 : -1;
  });
}

// The narrow tiles for f32 keys of a C of few columns: N at most 256 and M at least 8 times N
// (by the anchors), where a 64-column tile is mostly empty or the tiles are too few for a GPU.
// Skipped elsewhere.
TuneGroup<MatmulKey> few_columns_group() {
  return TuneGroup<MatmulKey>("f32, few columns (N <= 256, M >= 8 N)", [](const MatmulKey& key) {
    return key.dtype == DType::f32 && key.n <= 256 && key.m >= 8 * key.n ? 0 : -1;
  });
}

auto factory(Algorithm algorithm) {
  return [algorithm](const Config& config) { return GemmKernel(algorithm, config); };
}

// The families of the set, in set order.
struct Family {
  Space (*space)();
  Algorithm algorithm;
};
constexpr Family families[] = {
    {naive_space, Algorithm::naive},         {tiled_space, Algorithm::tiled},
    {direct_space, Algorithm::direct},       {blocked_space, Algorithm::blocked},
    {skinny_space, Algorithm::skinny},       {split_space, Algorithm::split},
    {tensor_space, Algorithm::tensor},       {wgmma_space, Algorithm::wgmma},
    {tf32_space, Algorithm::tf32},           {wgmma_tf32_space, Algorithm::wgmma_tf32},
    {staged_space, Algorithm::staged},       {staged_split_space, Algorithm::staged_split},
    {staged_narrow_space, Algorithm::staged}};

// Whether `math` is one of MatmulMath's values (a cast integer may be neither).
bool known_math(MatmulMath math) { return math == MatmulMath::ieee || math == MatmulMath::tf32; }

MatmulKey key_of(const DeviceMatrix& a, const DeviceMatrix& b, const DeviceMatrix& c, const float&,
                 const float&, const MatmulMath& math) {
  if (a.cols != b.rows || c.rows != a.rows || c.cols != b.cols) {
    throw std::invalid_argument("tunekit::ops::matmul: shapes do not fit: A is " +
                                std::to_string(a.rows) + "x" + std::to_string(a.cols) + ", B is " +
                                std::to_string(b.rows) + "x" + std::to_string(b.cols) + ", C is " +
                                std::to_string(c.rows) + "x" + std::to_string(c.cols));
  }
  if (a.dtype != b.dtype || a.dtype != c.dtype ||
      (a.dtype != DType::f32 && a.dtype != DType::f16 && a.dtype != DType::bf16)) {
    throw std::invalid_argument(
        "tunekit::ops::matmul: A, B and C must all be f32, all f16 or all bf16");
  }
  if (a.rows == 0 || b.cols == 0 || a.cols == 0) {
    throw std::invalid_argument("tunekit::ops::matmul: empty matrices");
  }
  check_matrix(a, "tunekit::ops::matmul: A");
  check_matrix(b, "tunekit::ops::matmul: B");
  check_matrix(c, "tunekit::ops::matmul: C");
  if (!known_math(math)) {
    throw std::invalid_argument("tunekit::ops::matmul: math is neither ieee nor tf32");
  }
  return matmul_key(a.rows, b.cols, a.cols, a.dtype, math);
}

// How many rows and columns of C validation samples at most (one per stratum).
constexpr std::size_t sampled_strata = 32;

// What validation holds on the host at once, in bytes: the sampled rows of A and columns of B
// as floats, one row of C read back, and the expected elements in double precision.
std::uint64_t sampled_validation_bytes(std::uint64_t m, std::uint64_t n, std::uint64_t k) {
  const std::uint64_t rows = std::min<std::uint64_t>(m, sampled_strata);
  const std::uint64_t cols = std::min<std::uint64_t>(n, sampled_strata);
  return 4 * ((rows + cols) * k + n) + 8 * rows * cols;
}

// Random matrices of the call's own shape (the first call of a key tunes it, as in CubeCL's
// matmul: a stand-in size of the key's class can have other tile counts, and so another winner:
// 1025^3 tuned on 1281^3 ran 18 TFLOP/s on the H100, tuned on itself 22), the same for the same
// key and shape, in A's context. Benchmarks run with alpha = 1 and beta = 0: C is then output
// only, so one set of inputs serves every candidate, and no scalar of the caller's (a NaN, an
// overflowing alpha) can fail every candidate and have that remembered for the key; the
// kernels' choice depends on neither. When these
// do not fit the device next to the caller's, the caller's own A and B (which the kernels only
// read) and a fresh C.
using MatmulInputs = std::tuple<DeviceMatrix, DeviceMatrix, DeviceMatrix, float, float, MatmulMath>;

MatmulInputs bench_inputs(const MatmulKey& key, const DeviceMatrix& a, const DeviceMatrix& b,
                          const DeviceMatrix& c, const float&, const float&, const MatmulMath&) {
  using Inputs = MatmulInputs;
  const auto context = a.buffer.getInfo<CL_MEM_CONTEXT>();
  const std::string key_text = key_to_string(key);
  const std::uint64_t seed = stable_hash(key_text);
  const std::uint64_t element = size_of(key.dtype);
  const std::size_t m = a.rows, n = b.cols, k = a.cols;
  // One set of inputs (the host reference computes on the shared set); the host holds the
  // largest matrix while it is made, or the sampled rows and columns while it validates.
  const detail::Footprint footprint{
      {detail::bytes_of(m, k, element), detail::bytes_of(k, n, element),
       detail::bytes_of(m, n, element)},
      1,
      detail::host_bytes_to_make(std::max({m * k, k * n, m * n}), key.dtype),
      sampled_validation_bytes(m, n, k)};
  return detail::random_or_callers(
      context, "matmul", key_text, footprint, {&a.buffer, &b.buffer, &c.buffer},
      [&] {
        return Inputs{random_matrix(context, m, k, key.dtype, seed),
                      random_matrix(context, k, n, key.dtype, seed + 1),
                      random_matrix(context, m, n, key.dtype, seed + 2),
                      1.0f,
                      0.0f,
                      key.math};
      },
      [&] {
        return Inputs{a, b, random_matrix(context, m, n, a.dtype, seed + 2), 1.0f, 0.0f, key.math};
      });
}

// Validation against the host in double precision, at sampled elements: rows and columns drawn
// one from each of up to 32 equal strata (the first and last always among them, where the
// kernels' edge paths run), and every element where a sampled row meets a sampled column. What
// it reads from the device is those rows and columns of A and B and those rows of C, so its cost
// stays small beside the tuning at any size (issue 30, F11: a 1024 x 50257 x 768 product read
// 2 x 206 MB per candidate before, against the naive kernel's output).
struct SampledProduct {
  std::vector<std::size_t> rows, cols;
  std::vector<double> expected;  // rows.size() x cols.size(), row by row
  // With TF32 allowed, the same of the inputs rounded as the tensor cores round them: a right
  // kernel matches one of the two (the IEEE families serve TF32 keys too). Else empty.
  std::vector<double> expected_tf32;
  double bound = 0;     // the largest difference a right kernel's float sums can show
  double relative = 0;  // and its storage's rounding, relative to |c| (matmul_storage_rounding)
  double smallest = 0;  // the storage's half spacing near 0 (f16's subnormals)
};

std::vector<std::size_t> strata(std::size_t count, std::uint64_t seed) {
  constexpr std::size_t most = sampled_strata;
  std::vector<std::size_t> picked;
  if (count <= most) {
    for (std::size_t i = 0; i < count; ++i) picked.push_back(i);
    return picked;
  }
  std::uint64_t state = seed | 1;
  for (std::size_t s = 0; s < most; ++s) {
    const std::size_t begin = count * s / most, end = count * (s + 1) / most;
    state = state * 6364136223846793005u + 1442695040888963407u;  // a small, fixed generator
    picked.push_back(s == 0          ? 0
                     : s + 1 == most ? count - 1
                                     : begin + (state >> 33) % (end - begin));
  }
  return picked;
}

SampledProduct sampled_product(cl::Client& client, const DeviceMatrix& a, const DeviceMatrix& b,
                               const DeviceMatrix& c, const float& alpha, const float&,
                               const MatmulMath& math) {
  // The benchmarks run with beta = 0 (bench_inputs): C is output only.
  SampledProduct sample;
  const std::uint64_t seed = stable_hash(std::to_string(a.rows) + "x" + std::to_string(b.cols) +
                                         "x" + std::to_string(a.cols));
  sample.rows = strata(c.rows, seed);
  sample.cols = strata(c.cols, seed ^ 0x9e3779b97f4a7c15u);
  const std::size_t k = a.cols;
  std::vector<std::vector<float>> a_rows, b_cols;
  for (std::size_t i : sample.rows) a_rows.push_back(download_block(client, a, i, 0, 1, k));
  for (std::size_t j : sample.cols) b_cols.push_back(download_block(client, b, 0, j, k, 1));
  // alpha times each sampled row of A by each sampled column of B, row by row; the products
  // exact in double (as the tensor cores form them too).
  const auto products = [&] {
    std::vector<double> out;
    out.reserve(a_rows.size() * b_cols.size());
    for (const auto& row : a_rows) {
      for (const auto& col : b_cols) {
        double sum = 0;
        for (std::size_t p = 0; p < k; ++p) sum += static_cast<double>(row[p]) * col[p];
        out.push_back(static_cast<double>(alpha) * sum);
      }
    }
    return out;
  };
  sample.expected = products();
  if (math == MatmulMath::tf32 && a.dtype == DType::f32) {
    // The inputs as the tensor cores take them: each sampled row and column rounded once, in
    // place (the exact sums are done with them), not once per element of C that reads it.
    for (auto* block : {&a_rows, &b_cols}) {
      for (auto& values : *block) {
        for (float& x : values) x = tf32_rounded(x);
      }
    }
    sample.expected_tf32 = products();
  }
  double largest = 0;
  for (const double e : sample.expected) {
    if (std::isfinite(e)) largest = std::max(largest, std::fabs(e));
  }
  // For inputs in [-1, 1] (|c| <= K); it grows with C's magnitude past that (the caller's own
  // inputs, when the random ones do not fit).
  const double kd = static_cast<double>(k);
  sample.bound = matmul_tolerance(k, a.dtype) * std::max(1.0, largest / kd);
  sample.relative = matmul_storage_rounding(c.dtype);
  sample.smallest = c.dtype == DType::f16 ? 0x1p-25 : 0;
  return sample;
}

// Each sampled element of the candidate's C within the bound of the host's value (a NaN or
// infinity where the host has the same is a match). Read through the tuning's client: its
// queue, not a new one per read (on NVIDIA that cost more than the read).
std::optional<std::string> same_samples(cl::Client& client, const SampledProduct& sample,
                                        const MatmulInputs& candidate) {
  const DeviceMatrix& c = std::get<2>(candidate);
  for (std::size_t r = 0; r < sample.rows.size(); ++r) {
    const std::size_t i = sample.rows[r];
    const auto row = download_block(client, c, i, 0, 1, c.cols);
    for (std::size_t s = 0; s < sample.cols.size(); ++s) {
      const std::size_t j = sample.cols[s];
      const std::size_t at = r * sample.cols.size() + s;
      const double got = row[j];
      const auto matches = [&](double expected) {
        const bool same_special =
            (std::isnan(expected) && std::isnan(got)) || (std::isinf(expected) && expected == got);
        const double bound = sample.bound + sample.relative * std::fabs(expected) + sample.smallest;
        return same_special || std::fabs(expected - got) <= bound;
      };
      const double expected = sample.expected[at];
      const bool tf32 = !sample.expected_tf32.empty();
      if (!matches(expected) && !(tf32 && matches(sample.expected_tf32[at]))) {
        return "C[" + std::to_string(i) + "," + std::to_string(j) + "] is " + std::to_string(got) +
               ", the host's double-precision product " + std::to_string(expected) +
               (tf32 ? " (of TF32-rounded inputs " + std::to_string(sample.expected_tf32[at]) + ")"
                     : std::string());
      }
    }
  }
  return std::nullopt;
}

auto make_set() {
  // Index 0, the naive kernel, is the safe default; every candidate is validated against the
  // host (sampled_product).
  return TunableSet{key_of, bench_inputs}
      .with(families[0].space(), factory(families[0].algorithm))
      .with(families[1].space(), factory(families[1].algorithm))
      .with(families[2].space(), factory(families[2].algorithm))
      .with(families[3].space(), factory(families[3].algorithm))
      .with(families[4].space(), factory(families[4].algorithm), skinny_group())
      .with(families[5].space(), factory(families[5].algorithm), split_group())
      .with(families[6].space(), factory(families[6].algorithm), tensor_group())
      .with(families[7].space(), factory(families[7].algorithm), tensor_group())
      .with(families[8].space(), factory(families[8].algorithm), tf32_group())
      .with(families[9].space(), factory(families[9].algorithm), tf32_group())
      .with(families[10].space(), factory(families[10].algorithm), staged_group())
      .with(families[11].space(), factory(families[11].algorithm), staged_split_group())
      .with(families[12].space(), factory(families[12].algorithm), few_columns_group())
      .validate_with(HostReference{
          sampled_product, same_samples,
          [](cl::Client& client, const DeviceMatrix&, const DeviceMatrix&, const DeviceMatrix& c,
             const float&, const float&,
             const MatmulMath&) { detail::clear_output(client, c.buffer, c.bytes()); }})
      .share_inputs()
      .metric(gflops_metric<MatmulKey>());  // of the timed shape (benchmark_work)
}

}  // namespace

std::ostream& operator<<(std::ostream& os, DimFit fit) {
  switch (fit) {
    case DimFit::pow2:
      return os << "pow2";
    case DimFit::m16_high:
      return os << "m16_high";
    case DimFit::m16_low:
      return os << "m16_low";
    case DimFit::other_high:
      return os << "other_high";
    case DimFit::other_low:
      return os << "other_low";
  }
  return os << "fit" << static_cast<int>(fit);
}

DimFit dim_fit(std::uint64_t size) {
  const std::uint64_t power = anchor(size);
  if (size == power) return DimFit::pow2;
  const bool low = size <= power / 4 * 3;  // power >= 4 here: 3/4 of it is whole
  if (size % 16 == 0) return low ? DimFit::m16_low : DimFit::m16_high;
  return low ? DimFit::other_low : DimFit::other_high;
}

bool every_size_multiple_of(std::uint64_t anchor_, DimFit fit, std::uint64_t step) {
  return (fit == DimFit::pow2 && anchor_ >= step) || fit == DimFit::m16_high ||
         fit == DimFit::m16_low;
}

std::uint64_t smallest_size(std::uint64_t anchor_, DimFit fit) {
  switch (fit) {
    case DimFit::pow2:
      return anchor_;
    case DimFit::m16_low:
    case DimFit::other_low:
      return anchor_ / 2 + 1;
    case DimFit::m16_high:
    case DimFit::other_high:
      return anchor_ / 4 * 3 + 1;
  }
  return anchor_;
}

std::array<std::uint64_t, 3> MatmulKey::smallest() const {
  return {smallest_size(m, m_fit), smallest_size(n, n_fit), smallest_size(k, k_fit)};
}

namespace {
// 2mnk FLOPs; A and B read, C written once.
Work product_work(std::uint64_t m, std::uint64_t n, std::uint64_t k, DType dtype) {
  const double dm = static_cast<double>(m), dn = static_cast<double>(n),
               dk = static_cast<double>(k);
  const double element = static_cast<double>(size_of(dtype));
  return {2 * dm * dn * dk, (dm * dk + dk * dn + dm * dn) * element, dm * dn * element};
}
}  // namespace

Work MatmulKey::work() const {
  const auto [m_, n_, k_] = smallest();
  return product_work(m_, n_, k_, dtype);
}

// The benchmark inputs have the call's shape (bench_inputs), which a key of a class spanning
// sizes does not name: its smallest shape's work would understate the rate up to 2.4x (12.7
// GFLOP/s for a 1023^3 call at 30 TFLOP/s).
Work benchmark_work(const MatmulKey&, const DeviceMatrix& a, const DeviceMatrix& b,
                    const DeviceMatrix&, const float&, const float&, const MatmulMath&) {
  return product_work(a.rows, b.cols, a.cols, a.dtype);
}

MatmulKey matmul_key(std::uint64_t m, std::uint64_t n, std::uint64_t k, DType dtype,
                     MatmulMath math) {
  // Refused whatever the storage: a 16-bit key drops `math`, and would hide the caller's bug.
  if (!known_math(math)) {
    throw AutotuneError(ErrorKind::invalid_key, "tunekit::ops::matmul_key: math " +
                                                    std::to_string(static_cast<int>(math)) +
                                                    " is neither ieee nor tf32");
  }
  return MatmulKey{m,          n,          k,     dim_fit(m),
                   dim_fit(n), dim_fit(k), dtype, dtype == DType::f32 ? math : MatmulMath::ieee};
}

std::ostream& operator<<(std::ostream& os, MatmulMath math) {
  switch (math) {
    case MatmulMath::ieee:
      return os << "ieee";
    case MatmulMath::tf32:
      return os << "tf32";
  }
  return os << "math" << static_cast<int>(math);
}

float tf32_rounded(float x) {
  if (!std::isfinite(x)) return x;  // the carry below would turn a NaN's payload into infinity
  std::uint32_t bits = 0;
  std::memcpy(&bits, &x, sizeof bits);
  bits = (bits + 0x1000u) & ~0x1fffu;  // add half of the 13 dropped bits' unit, then drop them
  std::memcpy(&x, &bits, sizeof x);
  return x;
}

double matmul_tolerance(std::uint64_t k, DType /*dtype*/) {
  // The storage's rounding is per element (matmul_storage_rounding): a bound of the largest |c|
  // for every element let a kernel that dropped 16 terms of K = 4096 pass in f16.
  return 4e-6 * static_cast<double>(k) + 1e-5;
}

double matmul_storage_rounding(DType dtype) {
  switch (dtype) {
    case DType::f16:
      return 0x1p-10;
    case DType::bf16:
      return 0x1p-7;
    default:
      return 0;
  }
}

LocalTuner<MatmulKey>& matmul_tuner() {
  static LocalTuner<MatmulKey> tuner("matmul");
  return tuner;
}

namespace {
const auto& matmul_set() { return matmul_tuner().init(make_set); }
}  // namespace

std::vector<std::string> matmul_candidates() { return matmul_set().names(); }

std::vector<std::string> matmul_candidates(const DeviceLimits& limits) {
  const auto& set = matmul_set();
  std::vector<std::string> names;
  for (std::size_t i = 0; i < set.size(); ++i) {
    if (!set.exceeds(i, limits)) names.push_back(set.name(i));
  }
  return names;
}

namespace {

// The checks of a call that need the client (call_checks.hpp), for matmul and matmul_with.
void check_matmul_call(cl::Client& client, const DeviceMatrix& a, const DeviceMatrix& b,
                       const DeviceMatrix& c) {
  detail::check_call(client, "tunekit::ops::matmul", {{a.buffer, "A"}, {b.buffer, "B"}},
                     {{c.buffer, "C"}});
}

// The index of the candidate named `candidate`, after a call's checks (matmul's own, and the
// key's of shapes and types): for matmul_with and prepare_matmul_with.
std::size_t checked_candidate(std::string_view candidate, cl::Client& client, const DeviceMatrix& a,
                              const DeviceMatrix& b, const DeviceMatrix& c, float alpha, float beta,
                              MatmulMath math) {
  check_matmul_call(client, a, b, c);
  (void)key_of(a, b, c, alpha, beta, math);
  return detail::candidate_index(matmul_set(), candidate, "matmul");
}

}  // namespace

void matmul_with(std::string_view candidate, cl::Client& client, const DeviceMatrix& a,
                 const DeviceMatrix& b, DeviceMatrix& c, float alpha, float beta, MatmulMath math) {
  const auto& set = matmul_set();
  const std::size_t index = checked_candidate(candidate, client, a, b, c, alpha, beta, math);
  if (alpha == 0.0f && GemmKernel::scale_only(client, c, beta)) return;
  set.call(set.locate(index), client, a, b, c, alpha, beta, math);
}

void detail::prepare_matmul_with(std::string_view candidate, cl::Client& client,
                                 const DeviceMatrix& a, const DeviceMatrix& b,
                                 const DeviceMatrix& c) {
  const std::size_t index =
      checked_candidate(candidate, client, a, b, c, 1.0f, 0.0f, MatmulMath::ieee);
  matmul_set().prepare(index, client, a, b, c, 1.0f, 0.0f, MatmulMath::ieee);
}

std::vector<std::pair<std::string, cl::KernelSpec>> matmul_kernels(DType dtype) {
  std::vector<std::pair<std::string, cl::KernelSpec>> all;
  for (const Family& family : families) {
    const Space space = family.space();
    const ExpandedSpace expanded = space.expand();
    for (const Config& config : expanded.configs()) {
      all.emplace_back(candidate_name(space.name(), config.to_string()),
                       GemmKernel(family.algorithm, config).spec(dtype));
    }
  }
  return all;
}

void matmul(cl::Client& client, const DeviceMatrix& a, const DeviceMatrix& b, DeviceMatrix& c,
            float alpha, float beta, MatmulMath math) {
  check_matmul_call(client, a, b, c);
  if (alpha == 0.0f) {
    (void)key_of(a, b, c, alpha, beta, math);  // the call's checks, as a tuned call's
    if (GemmKernel::scale_only(client, c, beta)) return;
  }
  matmul_tuner().execute(client.id(), client, matmul_set(), a, b, c, alpha, beta, math);
}

}  // namespace tunekit::ops
