// The persistent cache follows real kernel sources: editing an OpenCL candidate's source text
// (cl::KernelSpec::from_text through cl::with_kernels) invalidates its cached results, while the
// same source in a later program loads them.
#include <stdlib.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <tunekit/cache.hpp>

#include "support_cl.hpp"

namespace tunekit::test {

namespace {

// `data[i] += amount` with `amount` written into the kernel's source.
std::string add_source(const std::string& amount) {
  return "__kernel void add_const(__global float* data) { data[get_global_id(0)] += " + amount +
         "; }\n";
}

// One program over cache `dir` whose single candidate runs the kernel `source`: returns whether
// it tuned (else the result came from the cache), after checking the kernel really ran.
bool run_program(const std::filesystem::path& dir, const std::string& amount) {
  auto& client = shared_client();
  Settings settings = test_settings();
  settings.persistent_cache = true;
  settings.cache_dir = dir;
  LocalTuner<SizeKey> tuner("edited-kernel", settings);
  const auto& set = tuner.init([&] {
    auto key = [](const ::cl::Buffer&, const std::size_t& size) { return SizeKey{size}; };
    auto inputs = [&](const SizeKey& k, const ::cl::Buffer&, const std::size_t&) {
      const std::size_t size = k.n.value();
      return std::tuple<::cl::Buffer, std::size_t>(client.upload(std::vector<float>(size)), size);
    };
    auto launch = [](cl::Client& c, ::cl::Kernel& k, ::cl::Buffer& data, std::size_t& size) {
      c.launch_with(k, ::cl::NDRange(size), ::cl::NullRange, data);
    };
    return TunableSet{key, inputs}
        .with(Tunable{"add", cl::with_kernels(launch, cl::KernelSpec::from_text(add_source(amount),
                                                                                "", "add_const"))})
        .with(Tunable{"add again",
                      cl::with_kernels(
                          launch, cl::KernelSpec::from_text(add_source(amount), "", "add_const"))});
  });
  constexpr std::size_t n = 256;
  auto data = client.upload(std::vector<float>(n, 1.0f));
  std::size_t size = n;
  tuner.execute(client.id(), client, set, data, size);
  const auto got = client.download<float>(data, n);
  if (got.front() != 1.0f + std::stof(amount)) throw std::runtime_error("the kernel did not run");
  const auto report = tuner.tuner(client.id()).report(SizeKey{n});
  return report && report->tuning_seconds > 0;
}

}  // namespace

TEST_CASE("editing an OpenCL candidate's kernel source invalidates its cached results",
          "[opencl][cache]") {
  std::string pattern =
      (std::filesystem::temp_directory_path() / "tunekit-cl-cache-XXXXXX").string();
  REQUIRE(::mkdtemp(pattern.data()) != nullptr);
  const std::filesystem::path dir = pattern;
  CHECK(run_program(dir, "1.0f"));        // tuned
  CHECK_FALSE(run_program(dir, "1.0f"));  // the same source: loaded
  CHECK(run_program(dir, "2.0f"));        // one character of the kernel edited: tuned again
  CHECK_FALSE(run_program(dir, "2.0f"));
  CHECK_FALSE(run_program(dir, "1.0f"));  // the old source's entry is kept
  CHECK(FileStore(dir).entries().size() == 2);
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
}

}  // namespace tunekit::test
