// A tuned OpenCL row-wise softmax: three kernels from examples/softmax.cl (one of them a
// parameter space over the work-group size), checked against each other while tuning.
// docs/getting-started.md builds this file. Run: ./build/release/examples/cl_softmax
#include <cmath>
#include <cstdio>
#include <exception>
#include <tunekit/cl.hpp>
#include <tunekit/tunekit.hpp>

namespace tcl = tunekit::cl;  // `cl` alone is OpenCL-CLHPP's namespace

struct SoftmaxKey {  // what the best kernel depends on; nearby sizes share a tuning
  BOOST_HANA_DEFINE_STRUCT(SoftmaxKey, (tunekit::Anchored<std::uint64_t>, rows),
                           (tunekit::Anchored<std::uint64_t>, cols));
};

auto variant(const char* name, std::size_t per_row, const std::string& options = "") {
  return tcl::with_kernels(
      [per_row](tcl::Client& client, ::cl::Kernel& kernel, const ::cl::Buffer& x, ::cl::Buffer& y,
                const std::size_t& rows, const std::size_t& cols) {
        client.launch_with(kernel, ::cl::NDRange(rows * per_row), ::cl::NDRange(per_row), x, y,
                           static_cast<cl_uint>(rows), static_cast<cl_uint>(cols));
      },
      tcl::KernelSpec::from_embedded("softmax.cl", options, name));  // embedded by CMake
}

void softmax(tcl::Client& client, const ::cl::Buffer& x, ::cl::Buffer& y, std::size_t rows,
             std::size_t cols) {
  static tunekit::LocalTuner<SoftmaxKey> tuner("example_softmax");
  const auto& set = tuner.init([] {
    auto key_of = [](auto&, auto&, std::size_t r, std::size_t c) { return SoftmaxKey{r, c}; };
    auto bench_inputs = [](tcl::Client& client, const SoftmaxKey& key, const auto&...) {
      const std::size_t rows = key.rows.value(), cols = key.cols.value();  // new buffers
      return std::tuple(tcl::random_buffer<float>(client, rows * cols, tcl::seed_of(key), -8, 8),
                        tcl::buffer_of<float>(client, rows * cols), rows, cols);
    };
    auto same_output = [](tcl::Client& client, const auto& reference, const auto& output) {
      return tcl::compare_buffers<float>(client, std::get<1>(reference), std::get<1>(output), 1e-4);
    };
    const auto groups = tunekit::space("group").parameter("WG", {16, 32, 64, 128, 256});
    return tunekit::TunableSet{key_of, bench_inputs}
        .with(tunekit::Tunable{"three passes", variant("softmax_rows", 1)})
        .with(tunekit::Tunable{"online", variant("softmax_online", 1)})
        .with(groups,
              [](const tunekit::Config& c) {
                return variant("softmax_group", c["WG"], c.build_options());
              })
        .validate_with(same_output);
  });
  tuner.execute(client.id(), client, set, x, y, rows, cols);
}

int main() try {  // softmax of random matrices, checked against the host
  // This program's default under the settings files and TUNEKIT_* variables (they win): print
  // each tuning's table unless a file or TUNEKIT_LOG says otherwise.
  tunekit::Settings defaults;
  defaults.log = tunekit::LogLevel::info;
  tunekit::set_global_settings(tunekit::Settings::from_environment(defaults));
  tcl::Client client;
  int wrong = 0;
  for (const auto& [rows, cols] : {std::pair<std::size_t, std::size_t>{300, 1000}, {64, 4096}}) {
    const auto values = tcl::random_values<float>(rows * cols, 1, -8, 8);
    const auto x = client.upload(values);
    auto y = tcl::buffer_of<float>(client, rows * cols);
    softmax(client, x, y, rows, cols);
    const auto result = client.download<float>(y, rows * cols);
    for (std::size_t r = 0; r < rows; ++r) {
      double m = -INFINITY, sum = 0;
      for (std::size_t c = 0; c < cols; ++c) m = std::fmax(m, values[r * cols + c]);
      for (std::size_t c = 0; c < cols; ++c) sum += std::exp(values[r * cols + c] - m);
      for (std::size_t c = 0; c < cols; ++c) {
        const double want = std::exp(values[r * cols + c] - m) / sum;
        wrong += std::fabs(result[r * cols + c] - want) > 1e-5 + 1e-4 * want;
      }
    }
    std::printf("softmax %zu x %zu: %s\n", rows, cols, wrong == 0 ? "matches the host" : "WRONG");
  }
  return wrong == 0 ? 0 : 1;
} catch (const std::exception& e) {  // e.g. no OpenCL device, or no candidate that works
  std::fprintf(stderr, "cl_softmax: %s\n", e.what());
  return 2;
}
