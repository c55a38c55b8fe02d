// transpose: the kernels of kernels/transpose.cl with their parameter spaces, validated
// against the naive kernel while tuning.
#include "tunekit/ops/transpose.hpp"

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <string>

#include "bench_fit.hpp"
#include "call_checks.hpp"
#include "found_on.hpp"
#include "host_references.hpp"
#include "named_candidate.hpp"
#include "sizes.hpp"
#include "tunekit/cl/kernel_spec.hpp"
#include "tunekit/host_reference.hpp"
#include "tunekit/local_tuner.hpp"
#include "tunekit/space.hpp"
#include "tunekit/stable_hash.hpp"
#include "tunekit/tunable_set.hpp"

namespace tunekit::ops {

namespace {

enum class Layout { naive, tiled, blocked };

class TransposeKernel {
 public:
  TransposeKernel(Layout layout, Config config)
      : layout_(layout),
        config_(std::move(config)),
        spec_(cl::KernelSpec::embedded("transpose.cl",
                                       layout == Layout::naive ? "" : config_.build_options(),
                                       kernel_of(layout))) {}

  void operator()(cl::Client& client, const DeviceMatrix& in, DeviceMatrix& out) const {
    ::cl::Kernel kernel = client.kernel(spec_);
    const auto p = [&](const char* name) { return static_cast<std::size_t>(config_[name]); };
    ::cl::NDRange global, local;
    switch (layout_) {
      case Layout::tiled:  // tiles of TILE_M x TILE, TILE / VW work-items per row
        global = ::cl::NDRange(ceil_div(in.cols, p("TILE")) * (p("TILE") / p("VW")),
                               ceil_div(in.rows, p("TILE_M")) * p("ROWS"));
        local = ::cl::NDRange(p("TILE") / p("VW"), p("ROWS"));
        break;
      case Layout::naive:
        global = ::cl::NDRange(round_up(in.cols, p("LX")), round_up(in.rows, p("LY")));
        local = ::cl::NDRange(p("LX"), p("LY"));
        break;
      case Layout::blocked:
        global = ::cl::NDRange(round_up(ceil_div(in.cols, p("BLK")), p("LX")),
                               round_up(ceil_div(in.rows, p("BLK")), p("LY")));
        local = ::cl::NDRange(p("LX"), p("LY"));
        break;
    }
    // Offsets are 64-bit in the kernels; each dimension must fit an int, and for the tiled and
    // blocked kernels (edge tests such as r0 + TILE_M <= M) with a tile's room.
    if (layout_ != Layout::naive) {
      detail::require_tile_headroom(std::max(in.rows, in.cols), "the larger of rows and columns");
    }
    client.launch_with(kernel, global, local, detail::int_argument(in.rows, "rows"),
                       detail::int_argument(in.cols, "cols"), in.buffer, out.buffer);
  }

  std::string fingerprint() const { return spec_.fingerprint(); }
  /// Builds the program ahead of measuring (Preparable), stores it once it won (Keepable).
  void prepare(cl::Client& client, const DeviceMatrix&, const DeviceMatrix&) const {
    (void)client.program(spec_);
  }
  void keep(cl::Client& client, const DeviceMatrix&, const DeviceMatrix&) const {
    client.programs().keep(spec_);
  }

 private:
  static const char* kernel_of(Layout layout) {
    switch (layout) {
      case Layout::naive:
        return "transpose_naive";
      case Layout::tiled:
        return "transpose_tiled";
      case Layout::blocked:
        return "transpose_blocked";
    }
    return "";
  }

  Layout layout_;
  Config config_;
  cl::KernelSpec spec_;
};

auto factory(Layout layout) {
  return [layout](const Config& c) { return TransposeKernel(layout, c); };
}

TransposeKey key_of(const DeviceMatrix& in, const DeviceMatrix& out) {
  if (in.dtype != DType::f32 || out.dtype != DType::f32) {
    throw std::invalid_argument("tunekit::ops::transpose: f32 only");
  }
  if (out.rows != in.cols || out.cols != in.rows) {
    throw std::invalid_argument("tunekit::ops::transpose: out is " + std::to_string(out.rows) +
                                "x" + std::to_string(out.cols) + ", the transpose of a " +
                                std::to_string(in.rows) + "x" + std::to_string(in.cols) +
                                " matrix is " + std::to_string(in.cols) + "x" +
                                std::to_string(in.rows));
  }
  if (in.rows == 0 || in.cols == 0)
    throw std::invalid_argument("tunekit::ops::transpose: empty matrix");
  check_matrix(in, "tunekit::ops::transpose: in");  // the kernels take its sizes as cl_int
  check_matrix(out, "tunekit::ops::transpose: out");
  return transpose_key(in.rows, in.cols);
}

// The benchmark's shape: the key's anchored sizes, with the rows brought down to the key's
// vector width where both anchors are wider (8191 x 4097 is timed as 8191 x 8192, not as
// 8192 x 8192, whose tiles take the vector path its own never take).
std::pair<std::uint64_t, std::uint64_t> bench_shape(const TransposeKey& key) {
  const std::uint64_t rows = key.rows.value(), cols = key.cols.value();
  if (transpose_vector_width(rows, cols) <= key.vector_width) return {rows, cols};
  // The anchors are powers of two, both multiples of twice the width here: rows - width is a
  // multiple of the width and of no wider vector.
  return {rows - key.vector_width, cols};
}

// Random matrices of the key's benchmark shape (bench_shape); when they do not fit the device, the
// caller's own input (which the kernels only read) and a fresh output of the real shape.
std::tuple<DeviceMatrix, DeviceMatrix> bench_inputs(const TransposeKey& key, const DeviceMatrix& in,
                                                    const DeviceMatrix& out) {
  using Inputs = std::tuple<DeviceMatrix, DeviceMatrix>;
  const auto context = in.buffer.getInfo<CL_MEM_CONTEXT>();
  const std::string key_text = key_to_string(key);
  const auto seed = stable_hash(key_text);
  const auto shape = bench_shape(key);
  const std::uint64_t rows = shape.first, cols = shape.second;
  const auto bytes = detail::bytes_of(rows, cols, sizeof(float));
  return detail::random_or_callers(
      context, "transpose", key_text,
      // One set (validated on the host); validation holds the input and a candidate's output.
      detail::Footprint{{bytes, bytes},
                        1,
                        detail::bytes_to_make(rows, cols, DType::f32),
                        detail::bytes_of(rows, cols, 8)},
      {&in.buffer, &out.buffer},
      [&] {
        return Inputs{random_matrix(context, rows, cols, DType::f32, seed),
                      random_matrix(context, cols, rows, DType::f32, seed + 1)};
      },
      [&] {
        return Inputs{in, random_matrix(context, in.cols, in.rows, DType::f32, seed + 1)};
      });
}

auto make_set() {
  const auto work_items = [](const Config& c) {
    return static_cast<std::size_t>(c["LX"] * c["LY"]);
  };
  return TunableSet{key_of, bench_inputs}
      .with(space("naive")
                .parameter("LX", {16, 32, 64})
                .parameter("LY", {1, 4, 8, 16})
                .work_group_size(work_items),
            factory(Layout::naive))
      .with(space("tiled")
                .parameter("TILE", {16, 32, 64})
                // Tall tiles (TILE_M rows of TILE columns): where rows are not whole vectors,
                // 32 x 128 ran 1.12x CLBlast on the H200 and the best square 0.95x (8191 x 4097).
                .parameter("TILE_M", {16, 32, 64, 128})
                .parameter("ROWS", {2, 4, 8, 16})
                .parameter("PAD", {0, 1})
                .parameter("VW", {1, 2, 4})
                .where("TILE_M is TILE, 2 TILE or 4 TILE",
                       [](const Config& c) {
                         return c["TILE_M"] == c["TILE"] || c["TILE_M"] == 2 * c["TILE"] ||
                                c["TILE_M"] == 4 * c["TILE"];
                       },
                       {"TILE", "TILE_M"})
                .divides("ROWS", "TILE")
                .divides("VW", "TILE")
                .work_group_size([](const Config& c) {
                  return static_cast<std::size_t>(c["TILE"] / c["VW"] * c["ROWS"]);
                })
                .local_memory([](const Config& c) {
                  return static_cast<std::size_t>(c["TILE_M"] * (c["TILE"] + c["PAD"]) * 4);
                })
                // The kernel lab's best two on the H200 at 8192 (docs/benchmarks.md, issue 32),
                // the H100's best at 8192 before the vector widths, and the lab's best on the
                // H200 at 8191 x 4097.
                .start_at("TILE=64,TILE_M=64,ROWS=16,PAD=1,VW=4", found_on_hopper())
                .start_at("TILE=64,TILE_M=64,ROWS=16,PAD=1,VW=2", found_on_hopper())
                .start_at("TILE=64,TILE_M=64,ROWS=4,PAD=1,VW=1", found_on_hopper())
                .start_at("TILE=32,TILE_M=128,ROWS=16,PAD=1,VW=1", found_on_hopper()),
            factory(Layout::tiled))
      .with(space("blocked")
                .parameter("BLK", {4, 8})
                .parameter("LX", {1, 4, 16})
                .parameter("LY", {1, 4, 16})
                .work_group_size(work_items)
                .start_at("BLK=8,LX=16,LY=16",
                          found_on_pocl()),  // PoCL's best at 2048 (docs/benchmarks.md)
            factory(Layout::blocked))
      // Against the input itself, read and transposed once per tuning: every element of a
      // candidate's output must be the input's, exactly (a transpose only moves values).
      .validate_with(HostReference{
          [](cl::Client& client, const DeviceMatrix& in, const DeviceMatrix&) {
            return std::make_pair(detail::transposed(download_matrix(client, in), in.rows, in.cols),
                                  in.rows);
          },
          [](cl::Client& client, const std::pair<std::vector<float>, std::size_t>& expected,
             const std::tuple<DeviceMatrix, DeviceMatrix>& candidate) {
            return detail::transposition_problem(expected.first, expected.second,
                                                 download_matrix(client, std::get<1>(candidate)));
          },
          [](cl::Client& client, const DeviceMatrix&, const DeviceMatrix& out) {
            detail::clear_output(client, out.buffer, out.bytes());
          }})
      .share_inputs()
      .metric(gbytes_metric<TransposeKey>());
}

}  // namespace

std::uint64_t transpose_vector_width(std::uint64_t rows, std::uint64_t cols) {
  return std::min(widest_vector(rows), widest_vector(cols));  // powers of two: the narrower divides
}

TransposeKey transpose_key(std::uint64_t rows, std::uint64_t cols) {
  return TransposeKey{rows, cols, transpose_vector_width(rows, cols)};
}

LocalTuner<TransposeKey>& transpose_tuner() {
  static LocalTuner<TransposeKey> tuner("transpose");
  return tuner;
}

namespace {
const auto& transpose_set() { return transpose_tuner().init(make_set); }
}  // namespace

namespace {

// The checks of a call that need the client (call_checks.hpp), for transpose and transpose_with.
void check_transpose_call(cl::Client& client, const DeviceMatrix& in, const DeviceMatrix& out) {
  detail::check_call(client, "tunekit::ops::transpose", {{in.buffer, "in"}}, {{out.buffer, "out"}});
}

}  // namespace

void transpose(cl::Client& client, const DeviceMatrix& in, DeviceMatrix& out) {
  check_transpose_call(client, in, out);
  transpose_tuner().execute(client.id(), client, transpose_set(), in, out);
}

std::vector<std::string> transpose_candidates() { return transpose_set().names(); }

void transpose_with(std::string_view candidate, cl::Client& client, const DeviceMatrix& in,
                    DeviceMatrix& out) {
  const auto& set = transpose_set();
  check_transpose_call(client, in, out);
  (void)key_of(in, out);  // the same checks of shapes and types
  set.call(set.locate(detail::candidate_index(set, candidate, "transpose")), client, in, out);
}

}  // namespace tunekit::ops
