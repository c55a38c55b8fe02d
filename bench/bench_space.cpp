// Building parameter spaces: how long expand() takes on a CLBlast-style GEMM space (1.3 million
// points before constraints, about 240,000 after) and on a 10^5-point space, and
// what a neighbourhood lookup of a local search costs there.
// Run: ./build/release/bench/bench_space
#include <benchmark/benchmark.h>

#include <tunekit/space.hpp>

namespace {

using tunekit::Config;

// The parameters and rules of a CLBlast-style register-blocked GEMM (tile sizes, thread
// shapes for computing and for loading, vector widths, strides, local-memory caching).
tunekit::Space gemm_space() {
  const auto threads = [](const Config& c) { return c["MDIMC"] * c["NDIMC"]; };
  return tunekit::space("xgemm")
      .parameter("MWG", {16, 32, 64, 128})
      .parameter("NWG", {16, 32, 64, 128})
      .parameter("KWG", {16, 32})
      .parameter("MDIMC", {8, 16, 32})
      .parameter("NDIMC", {8, 16, 32})
      .parameter("MDIMA", {8, 16, 32})
      .parameter("NDIMB", {8, 16, 32})
      .parameter("KWI", {2, 8})
      .parameter("VWM", {1, 2, 4, 8})
      .parameter("VWN", {1, 2, 4, 8})
      .parameter("STRM", {0, 1})
      .parameter("STRN", {0, 1})
      .parameter("SA", {0, 1})
      .parameter("SB", {0, 1})
      .where("KWG % ((MDIMC*NDIMC)/MDIMA) == 0",
             [=](const Config& c) { return c["KWG"] % (threads(c) / c["MDIMA"]) == 0; },
             {"KWG", "MDIMC", "NDIMC", "MDIMA"})
      .where("KWG % ((MDIMC*NDIMC)/NDIMB) == 0",
             [=](const Config& c) { return c["KWG"] % (threads(c) / c["NDIMB"]) == 0; },
             {"KWG", "MDIMC", "NDIMC", "NDIMB"})
      .multiple_of("KWG", "KWI")
      .where("MWG % (MDIMC*VWM) == 0",
             [](const Config& c) { return c["MWG"] % (c["MDIMC"] * c["VWM"]) == 0; },
             {"MWG", "MDIMC", "VWM"})
      .where("NWG % (NDIMC*VWN) == 0",
             [](const Config& c) { return c["NWG"] % (c["NDIMC"] * c["VWN"]) == 0; },
             {"NWG", "NDIMC", "VWN"})
      .where("MWG % (MDIMA*VWM) == 0",
             [](const Config& c) { return c["MWG"] % (c["MDIMA"] * c["VWM"]) == 0; },
             {"MWG", "MDIMA", "VWM"})
      .where("NWG % (NDIMB*VWN) == 0",
             [](const Config& c) { return c["NWG"] % (c["NDIMB"] * c["VWN"]) == 0; },
             {"NWG", "NDIMB", "VWN"})
      .work_group_size([=](const Config& c) { return static_cast<std::size_t>(threads(c)); })
      .local_memory([](const Config& c) {
        return static_cast<std::size_t>(
            (c["SA"] * c["KWG"] * c["MWG"] + c["SB"] * c["KWG"] * c["NWG"]) * 4);
      });
}

// 10^5 points, half of them cut by two constraints.
tunekit::Space hundred_thousand() {
  return tunekit::space("grid")
      .parameter("A", {1, 2, 3, 4, 5, 6, 7, 8, 9, 10})
      .parameter("B", {1, 2, 3, 4, 5, 6, 7, 8, 9, 10})
      .parameter("C", {1, 2, 3, 4, 5, 6, 7, 8, 9, 10})
      .parameter("D", {1, 2, 3, 4, 5, 6, 7, 8, 9, 10})
      .parameter("E", {1, 2, 3, 4, 5, 6, 7, 8, 9, 10})
      .product_at_most({"A", "B", "C"}, 400)
      .where("D + E is even", [](const Config& c) { return (c["D"] + c["E"]) % 2 == 0; },
             {"D", "E"});
}

// expand() of `space`, with its size before and after constraints as counters.
void expand(benchmark::State& state, const tunekit::Space& space) {
  for (auto _ : state) {
    auto expanded = space.expand();
    benchmark::DoNotOptimize(expanded);
    state.PauseTiming();
    state.counters["points"] = static_cast<double>(expanded.unconstrained_size());
    state.counters["valid"] = static_cast<double>(expanded.size());
    state.ResumeTiming();
  }
}
BENCHMARK_CAPTURE(expand, gemm_space, gemm_space())->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(expand, hundred_thousand, hundred_thousand())->Unit(benchmark::kMillisecond);

void neighbours_in_gemm_space(benchmark::State& state) {
  const auto expanded = gemm_space().expand();
  std::size_t i = 0, found = 0;
  for (auto _ : state) {
    found += expanded.neighbours(i).size();
    i = (i + 7919) % expanded.size();
  }
  benchmark::DoNotOptimize(found);
}
BENCHMARK(neighbours_in_gemm_space)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
