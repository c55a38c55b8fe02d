// reduce and reduce_rows: the kernels of kernels/reduce.cl with the launch sequences and the
// parameter spaces its header documents, validated against the exact result computed on the
// host in double precision while tuning.
#include "tunekit/ops/reduce.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include "bench_fit.hpp"
#include "call_checks.hpp"
#include "host_references.hpp"
#include "row_rules.hpp"
#include "scratch.hpp"
#include "sizes.hpp"
#include "tunekit/cl/kernel_spec.hpp"
#include "tunekit/host_reference.hpp"
#include "tunekit/local_tuner.hpp"
#include "tunekit/space.hpp"
#include "tunekit/stable_hash.hpp"
#include "tunekit/tunable_set.hpp"

namespace tunekit::ops {

namespace {

enum class Strategy { tree, multi, subgroup };

// The build options of a configuration for one operation; sub-group kernels use warp shuffles
// on NVIDIA, which has no cl_khr_subgroups.
std::string options(const Config& config, ReduceOp op, bool nvidia_shuffles) {
  std::string text = "-DOP=" + std::to_string(op == ReduceOp::max ? 1 : 0);
  for (std::size_t i = 0; i < config.size(); ++i) {
    if (config.names()[i] == "GPC") continue;  // the host's: groups per compute unit
    text += " -D" + config.names()[i] + "=" + std::to_string(config.value(i));
  }
  return nvidia_shuffles ? text + " -DUSE_NV_SHFL=1" : text;
}

// The sub-group kernels exist only where OpenCL C has sub-groups (or NVIDIA's warps stand in):
// elsewhere the candidate fails before a build, saying why, rather than with "no kernel".
void require_sub_groups(const cl::Client& client) {
  if (!client.device().sub_groups && !client.device().nvidia) {
    throw device_limit(
        "the device has no sub-groups (no cl_khr_subgroups or __opencl_c_subgroups)");
  }
}

// One kernel for each (operation, NVIDIA or not), built on first use.
class ReduceSpecs {
 public:
  ReduceSpecs(const Config& config, const char* kernel) {
    for (ReduceOp op : {ReduceOp::sum, ReduceOp::max}) {
      for (bool nvidia : {false, true}) {
        specs_[index(op, nvidia)].emplace(
            cl::KernelSpec::embedded("reduce.cl", options(config, op, nvidia), kernel));
      }
    }
  }
  const cl::KernelSpec& get(ReduceOp op, bool nvidia) const { return *specs_[index(op, nvidia)]; }
  std::string fingerprint() const {
    std::string text;
    for (const auto& spec : specs_) text += spec->fingerprint();
    return text;
  }

 private:
  static std::size_t index(ReduceOp op, bool nvidia) {
    return (op == ReduceOp::max ? 2 : 0) + nvidia;
  }
  std::array<std::optional<cl::KernelSpec>, 4> specs_;
};

// A whole-array reduction: a first launch to per-group partials, then launches over the
// partials until one value is left, written to the output.
class ArrayReduction {
 public:
  ArrayReduction(Strategy strategy, Config config)
      : strategy_(strategy),
        config_(std::move(config)),
        specs_(config_, strategy == Strategy::tree    ? "reduce_tree"
                        : strategy == Strategy::multi ? "reduce_multi"
                                                      : "reduce_sg") {}

  // Writes the result to out.buffer[0]: no host synchronisation inside the op.
  void operator()(cl::Client& client, const DeviceVector& input, const ReduceOp& op,
                  DeviceVector& out) const {
    ::cl::Kernel kernel = client.kernel(spec(client, op));
    const std::size_t wgs = static_cast<std::size_t>(config_["WGS"]);
    std::size_t n = input.size;
    const std::size_t first_groups = groups(client, n);
    auto [partials, spare] = scratch_->buffers(client, first_groups * sizeof(float));
    ::cl::Buffer source = input.buffer;
    while (true) {
      const std::size_t g = groups(client, n);
      ::cl::Buffer target = g == 1 ? out.buffer : partials;
      client.launch_with(kernel, ::cl::NDRange(g * wgs), ::cl::NDRange(wgs),
                         detail::int_argument(n, "the number of values"), source, target);
      if (g == 1) break;
      source = partials;  // the next launch reads these partials and writes the other buffer
      std::swap(partials, spare);
      n = g;
    }
  }

  std::string fingerprint() const { return specs_.fingerprint(); }
  /// Builds the program ahead of measuring (Preparable), stores it once it won (Keepable).
  void prepare(cl::Client& client, const DeviceVector&, const ReduceOp& op,
               const DeviceVector&) const {
    (void)client.program(spec(client, op));
  }
  void keep(cl::Client& client, const DeviceVector&, const ReduceOp& op,
            const DeviceVector&) const {
    client.programs().keep(spec(client, op));
  }

 private:
  const cl::KernelSpec& spec(const cl::Client& client, const ReduceOp& op) const {
    if (strategy_ == Strategy::subgroup) require_sub_groups(client);
    return specs_.get(op, strategy_ == Strategy::subgroup && client.device().nvidia);
  }
  std::size_t groups(cl::Client& client, std::size_t n) const {
    const std::size_t wgs = static_cast<std::size_t>(config_["WGS"]);
    if (strategy_ == Strategy::tree) return ceil_div(n, 2 * wgs);
    const std::size_t wanted =
        static_cast<std::size_t>(config_["GPC"]) * client.device().compute_units;
    return std::clamp<std::size_t>(ceil_div(n, wgs * 4), 1, std::max<std::size_t>(wanted, 1));
  }

  Strategy strategy_;
  Config config_;
  ReduceSpecs specs_;
  std::shared_ptr<detail::Scratch<2>> scratch_ = std::make_shared<detail::Scratch<2>>();
};

using detail::RowStrategy;

// A row reduction: one launch, out[r] for every row.
class RowReduction {
 public:
  RowReduction(RowStrategy strategy, Config config)
      : strategy_(strategy),
        config_(std::move(config)),
        specs_(config_, detail::row_kernel(strategy)) {}

  void operator()(cl::Client& client, const DeviceMatrix& matrix, const ReduceOp& op,
                  DeviceVector& out) const {
    const std::size_t wgs = static_cast<std::size_t>(config_["WGS"]);
    if (!detail::fits_32_bit_indices(strategy_, matrix.rows, matrix.cols, wgs)) {
      throw unsupported_inputs(std::string(detail::row_kernel(strategy_)) +
                               " indexes with 32-bit ints: " + std::to_string(matrix.rows) + " x " +
                               std::to_string(matrix.cols) +
                               " is past them (rows + 2 x WGS and cols + WGS under 2^31)");
    }
    ::cl::Kernel kernel = client.kernel(spec(client, op));  // built only for a launch that fits
    const std::size_t rows_per_group = detail::rows_per_group(strategy_, wgs);
    client.launch_with(kernel, ::cl::NDRange(wgs * ceil_div(matrix.rows, rows_per_group)),
                       ::cl::NDRange(wgs), detail::int_argument(matrix.rows, "rows"),
                       detail::int_argument(matrix.cols, "cols"), matrix.buffer, out.buffer);
  }

  std::string fingerprint() const { return specs_.fingerprint(); }
  /// Builds the program ahead of measuring (Preparable), stores it once it won (Keepable).
  void prepare(cl::Client& client, const DeviceMatrix&, const ReduceOp& op,
               const DeviceVector&) const {
    (void)client.program(spec(client, op));
  }
  void keep(cl::Client& client, const DeviceMatrix&, const ReduceOp& op,
            const DeviceVector&) const {
    client.programs().keep(spec(client, op));
  }

 private:
  const cl::KernelSpec& spec(const cl::Client& client, const ReduceOp& op) const {
    const bool subgroup = strategy_ == RowStrategy::subgroup;
    if (subgroup) require_sub_groups(client);
    return specs_.get(op, subgroup && client.device().nvidia);
  }
  RowStrategy strategy_;
  Config config_;
  ReduceSpecs specs_;
};

auto local_memory_of_wgs = [](const Config& c) { return static_cast<std::size_t>(c["WGS"] * 4); };
auto work_group_of_wgs = [](const Config& c) { return static_cast<std::size_t>(c["WGS"]); };

DeviceMatrix as_matrix(const DeviceVector& vector) {
  return DeviceMatrix{vector.buffer, vector.size, 1, DType::f32};
}

void check_op(ReduceOp op) {
  if (op != ReduceOp::sum && op != ReduceOp::max) {
    throw std::invalid_argument("tunekit::ops::reduce: unknown operation " +
                                std::to_string(static_cast<int>(op)));
  }
}

using detail::differs_from_exact;
using detail::ExactReduction;

// The input is read in blocks of this many elements: validation holds no more of it on the host.
constexpr std::size_t exact_block_elements = std::size_t{1} << 22;  // 16 MiB

// Sums (or maxes) each row of `matrix` on the host (a vector: one row), reading its elements
// a block at a time, wherever the rows begin.
ExactReduction exact_rows(cl::Client& client, const DeviceMatrix& matrix, ReduceOp op) {
  ExactReduction exact(op, matrix.rows, matrix.cols);
  const std::size_t total = matrix.rows * matrix.cols;
  const DeviceMatrix elements{matrix.buffer, total, 1, DType::f32};
  std::size_t row = 0, col = 0;  // of the next element read
  for (std::size_t first = 0; first < total; first += exact_block_elements) {
    const std::size_t count = std::min(exact_block_elements, total - first);
    const auto values = download_block(client, elements, first, 0, count, 1);
    for (std::size_t at = 0; at < count;) {
      const std::size_t run = std::min(count - at, matrix.cols - col);  // to the row's end
      exact.take(row, values.data() + at, run);
      at += run;
      col += run;
      if (col == matrix.cols) {
        col = 0;
        ++row;
      }
    }
  }
  return exact;
}

// Benchmark inputs of a sum: +-1 at random (never zero), whose sum every order computes
// exactly (host_references.hpp): a candidate that drops or repeats one term fails. A max gets
// random_values(), all different, so that only the largest is right.
DeviceMatrix terms_for(const ::cl::Context& context, ReduceOp op, std::size_t rows,
                       std::size_t cols, std::uint64_t seed) {
  return op == ReduceOp::max ? random_matrix(context, rows, cols, DType::f32, seed)
                             : random_sign_matrix(context, rows, cols, DType::f32, seed);
}

// The host references' clear step for reduce and reduce_rows: the results hold NaN before a
// candidate is validated (host_references.hpp, clear_output).
constexpr auto clear_results = [](cl::Client& client, const auto& /*input*/, const ReduceOp&,
                                  const DeviceVector& out) -> void {
  detail::clear_output(client, out.buffer, out.size * sizeof(float));
};

// A vector as the one row reduce() reduces.
DeviceMatrix as_row(const DeviceVector& vector) {
  return DeviceMatrix{vector.buffer, 1, vector.size, DType::f32};
}

ReduceKey array_key(const DeviceVector& input, const ReduceOp& op, const DeviceVector& out) {
  if (out.size < 1) throw std::invalid_argument("tunekit::ops::reduce_into: out holds no value");
  check_op(op);
  if (input.size == 0) throw std::invalid_argument("tunekit::ops::reduce: the input is empty");
  check_matrix(as_matrix(input), "tunekit::ops::reduce: the input");
  check_matrix(as_matrix(out), "tunekit::ops::reduce: out");
  return ReduceKey{input.size, op};
}

std::tuple<DeviceVector, ReduceOp, DeviceVector> array_inputs(const ReduceKey& key,
                                                              const DeviceVector& input,
                                                              const ReduceOp& op,
                                                              const DeviceVector& output) {
  using Inputs = std::tuple<DeviceVector, ReduceOp, DeviceVector>;
  const auto context = input.buffer.getInfo<CL_MEM_CONTEXT>();
  const std::string key_text = key_to_string(key);
  const auto seed = stable_hash(key_text);
  // When the anchored input does not fit the device: the caller's own (only read) instead.
  return detail::random_or_callers(
      context, "reduce", key_text,
      // One set (validated on the host, which reads the input a block at a time).
      detail::Footprint{
          {detail::bytes_of(key.n, sizeof(float)), sizeof(float)},
          1,
          detail::host_bytes_to_make(key.n, DType::f32),
          detail::bytes_of(std::min<std::size_t>(key.n, exact_block_elements), sizeof(float))},
      {&input.buffer, &output.buffer},
      [&] {
        return Inputs{DeviceVector{terms_for(context, op, key.n, 1, seed).buffer, key.n}, op,
                      random_vector(context, 1, seed + 1)};
      },
      [&] {
        return Inputs{input, op, random_vector(context, 1, seed + 1)};
      });
}

auto make_array_set() {
  auto factory = [](Strategy s) { return [s](const Config& c) { return ArrayReduction(s, c); }; };
  return TunableSet{array_key, array_inputs}
      .with(space("tree")  // 32: a device whose work-groups are smaller than 64 has one
                .parameter("WGS", {32, 64, 128, 256, 512})
                .work_group_size(work_group_of_wgs)
                .local_memory(local_memory_of_wgs),
            factory(Strategy::tree))
      .with(space("multi")
                .parameter("WGS", {64, 128, 256, 512})
                .parameter("VW", {1, 4, 8})
                .parameter("UNROLL", {1, 2, 4})
                .parameter("GPC", {1, 2, 4, 8, 16})
                .work_group_size(work_group_of_wgs)
                .local_memory(local_memory_of_wgs),
            factory(Strategy::multi))
      .with(space("subgroup")
                .parameter("WGS", {256, 512})
                .parameter("VW", {4})
                .parameter("UNROLL", {2, 4})
                .parameter("GPC", {4, 8, 16})
                .work_group_size(work_group_of_wgs)
                .local_memory(local_memory_of_wgs),
            factory(Strategy::subgroup))
      .validate_with(
          HostReference{[](cl::Client& client, const DeviceVector& input, const ReduceOp& op,
                           const DeviceVector&) { return exact_rows(client, as_row(input), op); },
                        [](cl::Client& client, const ExactReduction& exact,
                           const std::tuple<DeviceVector, ReduceOp, DeviceVector>& candidate) {
                          return differs_from_exact(
                              exact, 0, download_vector(client, std::get<2>(candidate)).at(0));
                        },
                        clear_results})
      .share_inputs()  // candidates read the input and write only the result
      .metric(gbytes_metric<ReduceKey>());
}

RowReduceKey row_key(const DeviceMatrix& matrix, const ReduceOp& op, const DeviceVector& out) {
  check_op(op);
  if (matrix.dtype != DType::f32)
    throw std::invalid_argument("tunekit::ops::reduce_rows: f32 only");
  if (matrix.rows == 0 || matrix.cols == 0) {
    throw std::invalid_argument("tunekit::ops::reduce_rows: the matrix is empty");
  }
  if (out.size < matrix.rows) {
    throw std::invalid_argument("tunekit::ops::reduce_rows: out holds " + std::to_string(out.size) +
                                " values for " + std::to_string(matrix.rows) + " rows");
  }
  check_matrix(matrix, "tunekit::ops::reduce_rows: the matrix");
  check_matrix(as_matrix(out), "tunekit::ops::reduce_rows: out");
  return reduce_rows_key(matrix.rows, matrix.cols, op);
}

std::tuple<DeviceMatrix, ReduceOp, DeviceVector> row_inputs(const RowReduceKey& key,
                                                            const DeviceMatrix& matrix,
                                                            const ReduceOp& op,
                                                            const DeviceVector& output) {
  using Inputs = std::tuple<DeviceMatrix, ReduceOp, DeviceVector>;
  const auto context = matrix.buffer.getInfo<CL_MEM_CONTEXT>();
  const std::string key_text = key_to_string(key);
  const auto seed = stable_hash(key_text);
  const std::uint64_t cols = key.benchmark_cols();
  // When the anchored matrix does not fit the device: the caller's own (only read) instead.
  return detail::random_or_callers(
      context, "reduce_rows", key_text,
      // One set, as for reduce; validation holds a block of rows, the exact results (two
      // doubles a row) and a candidate's results.
      detail::Footprint{
          {detail::bytes_of(key.rows, cols, sizeof(float)),
           detail::bytes_of(key.rows, sizeof(float))},
          1,
          detail::bytes_to_make(key.rows, cols, DType::f32),
          detail::sum_of(detail::bytes_of(exact_block_elements, sizeof(float)),
                         detail::bytes_of(key.rows, 2 * sizeof(double) + sizeof(float)))},
      {&matrix.buffer, &output.buffer},
      [&] {
        return Inputs{terms_for(context, op, key.rows, cols, seed), op,
                      random_vector(context, key.rows, seed + 1)};
      },
      [&] {
        return Inputs{matrix, op, random_vector(context, matrix.rows, seed + 1)};
      });
}

auto make_row_set() {
  return TunableSet{row_key, row_inputs}
      .with(space("rows")
                .parameter("WGS", {32, 64, 128, 256, 512})
                .parameter("VW", {1, 4})
                .work_group_size(work_group_of_wgs)
                .local_memory(local_memory_of_wgs),
            [](const Config& c) { return RowReduction(RowStrategy::group, c); })
      .with(space("rows_subgroup")
                .parameter("WGS", {64, 128, 256})
                .parameter("VW", {1, 4})
                .work_group_size(work_group_of_wgs)
                .local_memory(local_memory_of_wgs),
            [](const Config& c) { return RowReduction(RowStrategy::subgroup, c); })
      // Many short rows (65536 x 67 on PoCL: a group per row ran at 0.35x CLBlast's Gemv).
      .with(space("rows_item")
                .parameter("WGS", {32, 64, 128, 256})
                .work_group_size(work_group_of_wgs),
            [](const Config& c) { return RowReduction(RowStrategy::item, c); })
      // The same through local memory, for GPUs: there one row per work-item reads a memory
      // line per element (65536 x 67 on the H200: the best family ran at 0.95x the Gemv).
      .with(space("rows_tile")
                .parameter("WGS", {64, 128, 256})
                .parameter("TC", {16, 32})
                .work_group_size(work_group_of_wgs)
                .local_memory([](const Config& c) {
                  return static_cast<std::size_t>(c["WGS"] * (c["TC"] + 1) * 4);
                }),
            [](const Config& c) { return RowReduction(RowStrategy::tile, c); })
      .validate_with(
          HostReference{[](cl::Client& client, const DeviceMatrix& matrix, const ReduceOp& op,
                           const DeviceVector&) { return exact_rows(client, matrix, op); },
                        [](cl::Client& client, const ExactReduction& exact,
                           const std::tuple<DeviceMatrix, ReduceOp, DeviceVector>& candidate)
                            -> std::optional<std::string> {
                          const auto got = download_block(client, as_matrix(std::get<2>(candidate)),
                                                          0, 0, exact.value.size(), 1);
                          for (std::size_t r = 0; r < exact.value.size(); ++r) {
                            if (auto problem = differs_from_exact(exact, r, got[r]))
                              return "row " + std::to_string(r) + ": " + *problem;
                          }
                          return std::nullopt;
                        },
                        clear_results})
      .share_inputs()
      .metric(gbytes_metric<RowReduceKey>());
}

}  // namespace

std::uint64_t RowReduceKey::benchmark_cols() const {
  const std::uint64_t anchor = cols.value();
  if (widest_vector(anchor) <= vector_width) return anchor;
  // The anchor is a power of two and a multiple of twice the width here: anchor - width is a
  // multiple of the width and of no wider vector.
  return anchor - vector_width;
}

RowReduceKey reduce_rows_key(std::uint64_t rows, std::uint64_t cols, ReduceOp op) {
  return RowReduceKey{rows, cols, widest_vector(cols), op};
}

LocalTuner<ReduceKey>& reduce_tuner() {
  static LocalTuner<ReduceKey> tuner("reduce");
  return tuner;
}

LocalTuner<RowReduceKey>& reduce_rows_tuner() {
  static LocalTuner<RowReduceKey> tuner("reduce_rows");
  return tuner;
}

void reduce_into(cl::Client& client, const DeviceVector& input, ReduceOp op, DeviceVector& out) {
  detail::check_call(client, "tunekit::ops::reduce", {{input.buffer, "the input"}},
                     {{out.buffer, "the output"}});
  auto& tuner = reduce_tuner();
  tuner.execute(client.id(), client, tuner.init(make_array_set), input, op, out);
}

float reduce(cl::Client& client, const DeviceVector& input, ReduceOp op) {
  static auto& results = *new detail::Scratch<1>;  // 4 bytes per context and thread; kept
  DeviceVector out{results.buffers(client, sizeof(float))[0], 1};
  reduce_into(client, input, op, out);
  float result = 0;
  client.read(out.buffer, &result, sizeof(float));
  return result;
}

void reduce_rows(cl::Client& client, const DeviceMatrix& matrix, ReduceOp op, DeviceVector& out) {
  detail::check_call(client, "tunekit::ops::reduce_rows", {{matrix.buffer, "the matrix"}},
                     {{out.buffer, "the output"}});
  auto& tuner = reduce_rows_tuner();
  tuner.execute(client.id(), client, tuner.init(make_row_set), matrix, op, out);
}

}  // namespace tunekit::ops
