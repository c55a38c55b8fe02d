// The cost of a cached execute() against a direct call of the same function, in one run.
// Run: ./build/release/bench/bench_dispatch
#include <benchmark/benchmark.h>

#include <tunekit/tunekit.hpp>

namespace {

struct Key {
  BOOST_HANA_DEFINE_STRUCT(Key, (tunekit::Anchored<std::uint64_t>, n));
};

// A function small enough that the dispatch cost dominates.
[[gnu::noinline]] std::uint64_t work(std::uint64_t& n) { return n * 3 + 1; }
[[gnu::noinline]] std::uint64_t other_work(std::uint64_t& n) { return n * 3 + 1 + (n >> 63); }

tunekit::Settings quiet_memory_only() {
  tunekit::Settings s;
  s.persistent_cache = false;
  return s;
}

void direct_call(benchmark::State& state) {
  std::uint64_t n = 1000;
  for (auto _ : state) {
    benchmark::DoNotOptimize(n);
    benchmark::DoNotOptimize(work(n));
  }
}
BENCHMARK(direct_call);

void cached_execute(benchmark::State& state) {
  static tunekit::LocalTuner<Key> tuner("bench_dispatch", quiet_memory_only());
  static tunekit::HostClient host;
  auto key_of = [](const std::uint64_t& n) { return Key{n}; };
  std::uint64_t n = 1000;
  for (auto _ : state) {
    const auto& set = tuner.init([&] {
      return tunekit::TunableSet{key_of, tunekit::CloneInputs{}}
          .with(tunekit::Tunable{"work", work})
          .with(tunekit::Tunable{"other work", other_work});
    });
    benchmark::DoNotOptimize(n);
    benchmark::DoNotOptimize(tuner.execute(host.id(), host, set, n));
  }
}
BENCHMARK(cached_execute);
BENCHMARK(cached_execute)->Threads(2);

void prepared_dispatch(benchmark::State& state) {
  static tunekit::LocalTuner<Key> tuner("bench_prepared", quiet_memory_only());
  static tunekit::HostClient host;
  auto key_of = [](const std::uint64_t& n) { return Key{n}; };
  const auto& set = tuner.init([&] {
    return tunekit::TunableSet{key_of, tunekit::CloneInputs{}}
        .with(tunekit::Tunable{"work", work})
        .with(tunekit::Tunable{"other work", other_work});
  });
  std::uint64_t n = 1000;
  auto run = tuner.prepare(host.id(), host, set, n);
  for (auto _ : state) {
    benchmark::DoNotOptimize(n);
    benchmark::DoNotOptimize(run(host, n));
  }
}
BENCHMARK(prepared_dispatch);

}  // namespace

BENCHMARK_MAIN();
