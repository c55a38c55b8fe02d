// Defines an OpenCL SAXPY (y = a*x + y) in three variants — one element per work-item, four per
// work-item, float4 vectors — and lets tunekit pick the fastest on the default device.
// Run: ./build/release/examples/cl_custom_kernel [n...]   (TUNEKIT_DEVICE picks another device,
// TUNEKIT_CACHE=off re-tunes instead of reading earlier results)
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <string>
#include <tunekit/cl.hpp>
#include <tunekit/tunekit.hpp>
#include <vector>

namespace {

namespace tcl = tunekit::cl;  // `cl` alone is OpenCL-CLHPP's namespace

// The kernels, as the op author writes them. Each variant gets its own -D options, and with
// them its own program and its own part of the set's checksum.
const char* const saxpy_source = R"CLC(
#ifndef PER_ITEM
#define PER_ITEM 1
#endif
// PER_ITEM elements per work-item, strided by the global size so that neighbouring work-items
// touch neighbouring elements.
__kernel void saxpy(const float a, __global const float* x, __global float* y, const uint n) {
  const uint stride = get_global_size(0);
  for (uint k = 0, i = get_global_id(0); k < PER_ITEM; ++k, i += stride) {
    if (i < n) y[i] = a * x[i] + y[i];
  }
}
// Four consecutive elements per work-item through float4 loads; the tail element by element.
__kernel void saxpy4(const float a, __global const float* x, __global float* y, const uint n) {
  const uint i = 4 * get_global_id(0);
  if (i + 3 < n) {
    vstore4(a * vload4(0, x + i) + vload4(0, y + i), 0, y + i);
  } else {
    for (uint j = i; j < n; ++j) y[j] = a * x[j] + y[j];
  }
}
)CLC";

// The tuning key: the length, anchored to the next power of two (lengths 1000 and 1024 share one
// tuning).
struct SaxpyKey {
  BOOST_HANA_DEFINE_STRUCT(SaxpyKey, (tunekit::Anchored<std::uint64_t>, n));
};

constexpr std::size_t group = 64;

std::size_t round_up(std::size_t n, std::size_t multiple) {
  return (n + multiple - 1) / multiple * multiple;
}

// A variant: which kernel, with what options, and how many elements one work-item handles.
auto variant(const char* kernel, int per_item) {
  const tcl::KernelSpec spec = tcl::KernelSpec::from_text(
      saxpy_source, "-DPER_ITEM=" + std::to_string(per_item), kernel, "saxpy");
  return tcl::with_kernels(
      [per_item](tcl::Client& client, ::cl::Kernel& saxpy, float& a, ::cl::Buffer& x,
                 ::cl::Buffer& y, std::size_t& n) {
        const std::size_t items = (n + per_item - 1) / per_item;
        client.launch_with(saxpy, ::cl::NDRange(round_up(items, group)), ::cl::NDRange(group), a, x,
                           y, static_cast<cl_uint>(n));
      },
      spec);
}

// The op: y = a*x + y on the device, with the fastest variant for n.
void saxpy(tcl::Client& client, float a, const ::cl::Buffer& x, ::cl::Buffer& y, std::size_t n) {
  static tunekit::LocalTuner<SaxpyKey> tuner("example_saxpy", [] {
    // This op's own default, under the settings files and TUNEKIT_* variables (they win): print
    // each tuning's table unless a file or TUNEKIT_LOG says otherwise.
    tunekit::Settings defaults = tunekit::global_settings();
    defaults.log = tunekit::LogLevel::info;
    return tunekit::Settings::from_environment(defaults);
  }());
  const auto& set = tuner.init([] {
    auto key_of = [](const float&, const ::cl::Buffer&, const ::cl::Buffer&, const std::size_t& n) {
      return SaxpyKey{n};
    };
    // Benchmark inputs of the anchored length, in new buffers of the same context: SAXPY writes
    // y in place, and tuning must not touch the caller's y.
    auto bench_inputs = [](const SaxpyKey& key, const float& a, const ::cl::Buffer& x,
                           const ::cl::Buffer&, const std::size_t&) {
      const std::size_t n = key.n.value();
      const auto context = x.getInfo<CL_MEM_CONTEXT>();
      std::vector<float> values(n, 1.0f);
      auto buffer = [&] {
        return ::cl::Buffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, n * sizeof(float),
                            values.data());
      };
      return std::tuple<float, ::cl::Buffer, ::cl::Buffer, std::size_t>(a, buffer(), buffer(), n);
    };
    return tunekit::TunableSet{key_of, bench_inputs}
        .with(tunekit::Tunable{"1 per item", variant("saxpy", 1)})
        .with(tunekit::Tunable{"4 per item", variant("saxpy", 4)})
        .with(tunekit::Tunable{"float4", variant("saxpy4", 4)});
  });
  ::cl::Buffer x_handle = x;  // execute() takes its inputs by reference
  tuner.execute(client.id(), client, set, a, x_handle, y, n);
  // From the persistent cache, nothing was measured and nothing printed: show the stored table.
  const auto report = tuner.tuner(client.id()).report(SaxpyKey{n});
  if (report && report->tuning_seconds == 0) {
    std::printf("(from the persistent cache)\n%s", tunekit::format_report(*report).c_str());
  }
}

// A length from the command line: decimal digits only (no sign, exponent or suffix), from 1 to
// 10^8; anything else is refused, naming it.
std::size_t length_argument(const char* text) {
  std::size_t n = 0;
  const char* end = text + std::strlen(text);
  const auto [stop, error] = std::from_chars(text, end, n);
  if (error != std::errc() || stop != end || n == 0 || n > 100000000) {
    throw std::invalid_argument(std::string("not a length from 1 to 100000000: '") + text + "'");
  }
  return n;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    tcl::Client client;
    std::printf("device: %s\n", client.device().describe().c_str());
    std::vector<std::size_t> sizes;
    for (int i = 1; i < argc; ++i) sizes.push_back(length_argument(argv[i]));
    if (sizes.empty()) sizes = {1000, 1 << 20};
    int failures = 0;
    for (const std::size_t n : sizes) {
      std::vector<float> x(n), y(n);
      for (std::size_t i = 0; i < n; ++i) {
        x[i] = static_cast<float>(i % 97) * 0.5f;
        y[i] = static_cast<float>(i % 13);
      }
      auto x_buffer = client.upload(x);
      auto y_buffer = client.upload(y);
      const float a = 2.5f;
      saxpy(client, a, x_buffer, y_buffer, n);
      const auto result = client.download<float>(y_buffer, n);
      std::size_t wrong = 0;
      for (std::size_t i = 0; i < n; ++i) {
        wrong +=
            std::fabs(result[i] - (a * x[i] + y[i])) > 1e-5f * std::fabs(a * x[i] + y[i]) + 1e-6f;
      }
      std::printf("n=%zu: %s\n", n, wrong == 0 ? "matches the host" : "WRONG");
      failures += wrong != 0;
    }
    return failures == 0 ? 0 : 1;
  } catch (const std::exception& e) {  // an AutotuneError, or a length that is refused
    std::fprintf(stderr, "cl_custom_kernel: %s\n", e.what());
    return 2;
  }
}
