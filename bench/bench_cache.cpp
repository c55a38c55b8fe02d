// Cold start with the persistent cache: an op's file holds N entries (N = 1000 is the target);
// a fresh LocalTuner (and so a fresh FileStore) makes its first execute() of a cached key. That
// call opens the store, reads and parses the op's file once, and runs the winner: it should cost
// under 5 ms for 1000 entries. The file is in the page cache (a process-cold start, not a
// disk-cold one).
// Run: ./build/release/bench/bench_cache --benchmark_filter=cold_start
#include <benchmark/benchmark.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <tunekit/cache.hpp>
#include <tunekit/tunekit.hpp>

namespace {

namespace fs = std::filesystem;

struct MatmulKey {
  BOOST_HANA_DEFINE_STRUCT(MatmulKey, (std::uint64_t, m), (std::uint64_t, n), (std::uint64_t, k));
};

const std::string op = "bench_matmul";
const tunekit::DeviceId device(
    "NVIDIA CUDA | OpenCL 3.0 CUDA 12.4.131 | NVIDIA H100 80GB HBM3 | 550.54.15 | 132 CU | "
    "49152 B local");

template <std::size_t I>
std::uint64_t candidate(std::uint64_t& m, std::uint64_t& n, std::uint64_t& k) {
  return m * n * k + I;
}

auto make_set() {
  auto key_of = [](const std::uint64_t& m, const std::uint64_t& n, const std::uint64_t& k) {
    return MatmulKey{m, n, k};
  };
  // Kernel-sized fingerprints, as an OpenCL op would have.
  const std::string source(4096, 'k');
  return tunekit::TunableSet{key_of, tunekit::CloneInputs{}}
      .with(tunekit::Tunable{"naive", candidate<0>}.fingerprint(source + "naive"))
      .with(tunekit::Tunable{"tiled 8x8", candidate<1>}.fingerprint(source + "-DTILE=8"))
      .with(tunekit::Tunable{"tiled 16x16", candidate<2>}.fingerprint(source + "-DTILE=16"))
      .with(tunekit::Tunable{"register blocked 4x4", candidate<3>}.fingerprint(source + "-DRB=4"));
}

MatmulKey key_number(std::size_t i) { return {64 + i, 128 + 2 * i, 32 + (i % 7)}; }

/// A cache directory whose op file holds `count` entries for the set above, on `device`. With
/// `extra_outcomes`, each entry's outcome table also has that many rows of other (configuration)
/// candidates, named like the H100's blocked-GEMM configurations: the H100 wrote ~1,700 outcomes
/// (~530 KB) per matmul key.
struct CacheFixture {
  fs::path dir;
  explicit CacheFixture(std::size_t count, std::size_t extra_outcomes = 0) {
    std::string pattern = (fs::temp_directory_path() / "tunekit-bench-cache-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    dir = pattern;
    const auto set = make_set();
    const std::uint64_t checksum = tunekit::stable_hash(set.checksum_text());
    std::vector<tunekit::CacheEntry> entries;
    for (std::size_t i = 0; i < count; ++i) {
      tunekit::StoredResult result;
      const std::uint32_t winner = static_cast<std::uint32_t>(i % set.size());
      result.winner = set.name(winner);
      result.winner_index = winner;
      for (std::size_t c = 0; c < set.size(); ++c) {
        tunekit::AutotuneOutcome o;
        o.name = set.name(c);
        o.index = c;
        o.status = c == winner ? tunekit::OutcomeStatus::measured : tunekit::OutcomeStatus::dropped;
        o.median = (c == winner ? 1.0 : 2.0 + 0.1 * static_cast<double>(c)) * 1.7e-4 *
                   (1 + static_cast<double>(i) / 997);
        o.spread = o.median * 0.013;
        o.min = o.median * 0.98;
        o.max = o.median * 1.07;
        o.samples = 17;
        o.batch = 1;
        result.outcomes.push_back(o);
      }
      for (std::size_t c = 0; c < extra_outcomes; ++c) {
        tunekit::AutotuneOutcome o = result.outcomes.back();
        o.index = set.size() + c;
        o.name =
            "blocked[MWG=" + std::to_string(16 << (c % 4)) +
            ",NWG=" + std::to_string(16 << (c / 4 % 4)) +
            ",KWG=" + std::to_string(8 << (c / 16 % 3)) +
            ",MDIMC=16,NDIMC=16,MDIMA=16,NDIMB=16,KWI=2,VWM=" + std::to_string(1 << (c / 48 % 3)) +
            ",VWN=" + std::to_string(1 << (c / 144 % 3)) +
            ",STRM=0,STRN=0,SA=" + std::to_string(c / 432 % 2) +
            ",SB=" + std::to_string(c / 864 % 2) + "]";
        o.status = c % 5 == 0 ? tunekit::OutcomeStatus::failed : tunekit::OutcomeStatus::dropped;
        o.median *= 1.5 + static_cast<double>(c % 97) / 10;
        if (o.status == tunekit::OutcomeStatus::failed) {
          o.median = o.spread = o.min = o.max = 0, o.samples = 0;
          o.error =
              tunekit::AutotuneError(tunekit::ErrorKind::out_of_resources,
                                     "CL_OUT_OF_RESOURCES: 49152 bytes of local memory", o.name);
        }
        result.outcomes.push_back(o);
      }
      entries.push_back({{device.identity(), op, tunekit::key_to_string(key_number(i)), checksum},
                         std::move(result)});
    }
    tunekit::FileStore(dir).save_entries(entries);
  }
  ~CacheFixture() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
};

tunekit::Settings cache_settings(const fs::path& dir) {
  tunekit::Settings s;
  s.cache_dir = dir;
  s.persistent_cache = true;
  return s;
}

void cold_start_first_execute(benchmark::State& state) {
  const auto count = static_cast<std::size_t>(state.range(0));
  CacheFixture fixture(count, static_cast<std::size_t>(state.range(1)));
  tunekit::HostClient client(device);
  const MatmulKey key = key_number(count / 2);
  std::size_t file_size = fs::file_size(fixture.dir / "v2" / (op + ".json"));
  for (auto _ : state) {
    tunekit::LocalTuner<MatmulKey> tuner(op, cache_settings(fixture.dir));
    const auto& set = tuner.init(make_set);
    std::uint64_t m = key.m, n = key.n, k = key.k;
    const auto start = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(tuner.execute(client.id(), client, set, m, n, k));
    const auto stop = std::chrono::steady_clock::now();
    state.SetIterationTime(std::chrono::duration<double>(stop - start).count());
    const auto report = tuner.tuner(client.id()).report(key);
    if (!report || report->tuning_seconds != 0) {
      state.SkipWithError("the key was tuned, not loaded from the cache");
      break;
    }
  }
  state.counters["entries"] = static_cast<double>(count);
  state.counters["file_KiB"] = static_cast<double>(file_size) / 1024;
}
// Args: entries, extra outcomes per entry (0: 4 candidates; 1,700: an H100 matmul table).
BENCHMARK(cold_start_first_execute)
    ->Args({10, 0})
    ->Args({100, 0})
    ->Args({1000, 0})
    ->Args({10000, 0})
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);
// The fixture of 1,000 H100-sized entries is ~0.5 GB: a few iterations are enough.
BENCHMARK(cold_start_first_execute)
    ->Args({10, 1700})
    ->Args({100, 1700})
    ->Args({1000, 1700})
    ->Iterations(3)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);

void parse_cache_file(benchmark::State& state) {
  const auto count = static_cast<std::size_t>(state.range(0));
  CacheFixture fixture(count);
  std::ifstream in(fixture.dir / "v2" / (op + ".json"), std::ios::binary);
  const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  for (auto _ : state) benchmark::DoNotOptimize(tunekit::detail::parse_cache_file(text));
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * text.size()));
}
BENCHMARK(parse_cache_file)->Arg(1000)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
