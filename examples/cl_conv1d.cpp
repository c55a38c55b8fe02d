// A tuned OpenCL 1-D convolution: two kernels of examples/conv1d.cl (one with a __local tile,
// over a space of work-group sizes), validated against a host reference in double precision,
// with GFLOP/s beside each time. docs/getting-started.md walks through it.
#include <cmath>
#include <cstdio>
#include <exception>
#include <tunekit/cl.hpp>
#include <tunekit/tunekit.hpp>

namespace tcl = tunekit::cl;

struct ConvKey {  // the length anchored (nearby lengths share a tuning), the filter's width exact
  BOOST_HANA_DEFINE_STRUCT(ConvKey, (tunekit::Anchored<std::uint64_t>, n), (std::uint64_t, taps));
};

// The host reference: y for x and w, in double precision.
std::vector<float> convolve(const std::vector<float>& x, const std::vector<float>& w) {
  std::vector<float> y(x.size());
  const auto n = static_cast<std::ptrdiff_t>(x.size()),
             r = static_cast<std::ptrdiff_t>(w.size() - 1) / 2;
  for (std::ptrdiff_t i = 0; i < n; ++i) {
    double sum = 0;
    for (std::ptrdiff_t k = 0; k < static_cast<std::ptrdiff_t>(w.size()); ++k) {
      if (i + k - r >= 0 && i + k - r < n) sum += double{w[k]} * x[i + k - r];
    }
    y[i] = static_cast<float>(sum);
  }
  return y;
}

// A candidate: kernel `name` in work-groups of `group`, the global size rounded up to whole ones.
auto kernel(const char* name, std::size_t group, bool tiled) {
  return tcl::with_kernels(
      [=](tcl::Client& client, ::cl::Kernel& k, const ::cl::Buffer& x, const ::cl::Buffer& w,
          ::cl::Buffer& y, const std::size_t& n, const std::size_t& taps) {
        if (tiled) k.setArg(5, ::cl::Local((group + taps - 1) * sizeof(float)));  // __local tile
        client.launch_with(k, ::cl::NDRange((n + group - 1) / group * group), ::cl::NDRange(group),
                           x, w, y, static_cast<cl_uint>(n), static_cast<cl_uint>(taps));
      },
      tcl::KernelSpec::from_embedded("conv1d.cl", "", name));  // embedded by CMake
}

void conv1d(tcl::Client& client, const ::cl::Buffer& x, const ::cl::Buffer& w, ::cl::Buffer& y,
            std::size_t n, std::size_t taps) {
  static tunekit::LocalTuner<ConvKey> tuner("example_conv1d");
  const auto& set = tuner.init([] {
    auto key_of = [](auto&, auto&, auto&, std::size_t n, std::size_t t) { return ConvKey{n, t}; };
    auto bench_inputs = [](tcl::Client& client, const ConvKey& key, const auto&...) {
      const std::size_t n = key.n.value(), seed = tcl::seed_of(key);
      return std::tuple(tcl::random_buffer<float>(client, n, seed),
                        tcl::random_buffer<float>(client, key.taps, seed + 1),
                        tcl::buffer_of<float>(client, n), n, std::size_t{key.taps});
    };
    auto expected = [](tcl::Client& client, auto& x, auto& w, auto&, std::size_t n, std::size_t t) {
      const auto y = convolve(client.download<float>(x, n), client.download<float>(w, t));
      return std::tuple(x, w, client.upload(y), n, t);  // the inputs as a candidate leaves them
    };
    auto close = [](tcl::Client& client, const auto& want, const auto& got) {
      return tcl::compare_buffers<float>(client, std::get<2>(want), std::get<2>(got), 1e-4);
    };
    auto tiles = tunekit::space("tiled").parameter("WG", {32, 64, 128, 256, 512});
    return tunekit::TunableSet{key_of, bench_inputs}
        .with(tunekit::Tunable{"direct", kernel("conv_direct", 64, false)})
        .with(tiles.work_group_size([](auto& c) { return static_cast<std::size_t>(c["WG"]); }),
              [](const tunekit::Config& c) { return kernel("conv_tiled", c["WG"], true); })
        .validate_with(tunekit::HostReference{expected, close})
        .metric("GFLOP/s", [](const ConvKey& key, double seconds) {
          return 2e-9 * static_cast<double>(key.n.value() * key.taps) / seconds;
        });
  });
  tuner.execute(client.id(), client, set, x, w, y, n, taps);
}

int main() try {  // convolutions of random signals, checked against the host
  // This program's default under the settings files and TUNEKIT_* variables (they win): print
  // each tuning's table unless a file or TUNEKIT_LOG says otherwise.
  tunekit::Settings defaults;
  defaults.log = tunekit::LogLevel::info;
  tunekit::set_global_settings(tunekit::Settings::from_environment(defaults));
  tcl::Client client;
  int wrong = 0;
  for (const auto& [n, taps] : {std::pair<std::size_t, std::size_t>{100000, 7}, {4097, 31}}) {
    const auto x = tcl::random_values<float>(n, 1), w = tcl::random_values<float>(taps, 2);
    const auto x_buffer = client.upload(x), w_buffer = client.upload(w);
    auto y_buffer = tcl::buffer_of<float>(client, n);
    conv1d(client, x_buffer, w_buffer, y_buffer, n, taps);
    const auto y = client.download<float>(y_buffer, n), want = convolve(x, w);
    for (std::size_t i = 0; i < n; ++i)
      wrong += std::fabs(y[i] - want[i]) > 1e-4 * (1 + std::fabs(want[i]));
    std::printf("conv1d %zu x %zu taps: %s\n", n, taps, wrong == 0 ? "matches the host" : "WRONG");
  }
  return wrong == 0 ? 0 : 1;
} catch (const std::exception& e) {  // e.g. no OpenCL device, or no candidate that works
  std::fprintf(stderr, "cl_conv1d: %s\n", e.what());
  return 2;
}
