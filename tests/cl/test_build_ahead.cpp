// Building ahead on a real device: OpenCL candidates (cl::with_kernels) built on the tuner's
// build pool give the outcomes of building in their calls, and a build that fails in the pool
// fails its candidate only, with the build log.
#include <catch2/catch.hpp>

#include "../cache/test_cache_support.hpp"  // TempDir
#include "support_cl.hpp"
#include "tunekit/cl/program_binaries.hpp"

namespace tunekit::test {

namespace {

const std::string iterating_kernel = R"CLC(
__kernel void iterate(__global float* data) {
#ifdef BROKEN
  this line does not compile;
#endif
  const size_t i = get_global_id(0);
  float x = data[i];
  for (int k = 0; k < ITER; ++k) x = x * 0.999f + 0.001f;
  data[i] = x;
}
)CLC";

constexpr std::size_t elements = 4096;

auto run_iterate = [](cl::Client& client, ::cl::Kernel& kernel, ::cl::Buffer& data) {
  client.launch_with(kernel, ::cl::NDRange(elements), ::cl::NullRange, data);
};

auto candidate(const std::string& name, const std::string& options) {
  return Tunable{name, cl::with_kernels(run_iterate,
                                        cl::KernelSpec::from_text(iterating_kernel, options,
                                                                  "iterate", "iterating_kernel"))};
}

// Tunes the candidates on a fresh client (its own program cache) with `threads` build threads;
// returns each candidate's "name status kind".
std::vector<std::string> tune_with(std::size_t threads, Settings settings = test_settings()) {
  settings.build_threads = threads;
  LocalTuner<SizeKey> tuner("build ahead cl " + std::to_string(threads), settings);
  cl::Client client(shared_client().device());
  auto data = client.upload(std::vector<float>(elements, 0.5f));
  const auto& set = tuner.init([] {
    return TunableSet{
        [](const ::cl::Buffer&) { return SizeKey{elements}; },
        [](const SizeKey&, const ::cl::Buffer& b) { return std::tuple<::cl::Buffer>(b); }}
        .with(candidate("slow", "-DITER=8192"))
        .with(candidate("broken", "-DITER=1 -DBROKEN"))
        .with(candidate("fast", "-DITER=1"))
        .with(candidate("slower", "-DITER=16384"));
  });
  tuner.execute(client.id(), client, set, data);
  const auto report = tuner.tuner(client.id()).report(SizeKey{elements});
  std::vector<std::string> lines;
  if (!report) return lines;
  for (const auto& o : report->outcomes) {
    std::string line = o.name + " " + std::string(to_string(o.status));
    if (o.error) {
      line += " " + std::string(to_string(o.error->kind()));
      if (o.name == "broken") {
        // The build log names the line that does not compile.
        CHECK_THAT(o.error->message(), Catch::Contains("build log"));
      }
    }
    lines.push_back(line);
  }
  if (const auto* winner = report->winner()) lines.push_back("winner " + winner->name);
  std::sort(lines.begin(), lines.end());
  return lines;
}

}  // namespace

TEST_CASE("programs built on the build pool give the outcomes of builds in the calls",
          "[opencl][build-ahead]") {
  const auto serial = tune_with(0);
  const auto ahead = tune_with(3);
  CHECK(serial == ahead);
  CHECK(std::find(ahead.begin(), ahead.end(), "winner fast") != ahead.end());
  // The failing build fails its candidate only, as a build error.
  CHECK(std::find(ahead.begin(), ahead.end(), "broken failed build failed") != ahead.end());
}

}  // namespace tunekit::test

namespace tunekit::test {

TEST_CASE("a tuning keeps its winner's program binary, a GPU keeps every program it built",
          "[opencl][build-ahead][program-binaries]") {
  TempDir dir;
  const Settings before = global_settings();
  Settings settings = before;
  settings.persistent_cache = true;
  settings.cache_dir = dir.path();
  set_global_settings(settings);  // the Client's binaries go to `dir`
  const auto outcomes = tune_with(2);
  set_global_settings(before);
  CHECK(std::find(outcomes.begin(), outcomes.end(), "winner fast") != outcomes.end());
  // Three programs compile (the fourth fails): a CPU device stores the winner's only.
  const auto stored = cl::ProgramBinaries(dir.path()).usage().files;
  CHECK(stored == (shared_client().measures_on_host_cores() ? 1u : 3u));
}

// The results' store, the program binaries and the device peaks all keep files there: one
// warning, naming all three, instead of one from each.
TEST_CASE("a cache directory others can write is warned about once, and nothing is kept there",
          "[opencl][program-binaries][cache]") {
  TempDir dir;
  std::filesystem::permissions(dir.path(), std::filesystem::perms::all);  // 0777
  const Settings before = global_settings();
  Settings settings = test_settings();
  settings.persistent_cache = true;
  settings.cache_dir = dir.path();
  set_global_settings(settings);  // the Client's binaries and peaks go to `dir`
  CapturedWarnings warnings;
  const auto outcomes = tune_with(2, settings);
  set_global_settings(before);
  CHECK(std::find(outcomes.begin(), outcomes.end(), "winner fast") != outcomes.end());
  CHECK(warnings.count(dir.path().string()) == 1);
  CHECK(warnings.count("writable by other users") == 1);
  CHECK(warnings.count("no tuning result, program binary or device peak is kept") == 1);
  CHECK(std::filesystem::is_empty(dir.path()));
}

}  // namespace tunekit::test
