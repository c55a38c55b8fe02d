// Candidates from a compile-time space: a sum templated on its unroll factor and its number of
// independent accumulators, instantiated only for the combinations that make sense, and tuned
// like any other space (docs/getting-started.md). Run: ./build/release/examples/static_space
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <tunekit/tunekit.hpp>
#include <tuple>
#include <vector>

namespace hana = boost::hana;
using Vector = std::vector<float>;

struct SumKey {
  BOOST_HANA_DEFINE_STRUCT(SumKey, (tunekit::Anchored<std::uint64_t>, length));
};

// `Unroll` elements per step, spread over `Accumulators` independent sums (more of them hide the
// latency of each addition). Only meaningful when the accumulators divide the unroll factor.
template <int Unroll, int Accumulators>
float blocked_sum(const Vector& values) {
  static_assert(Unroll % Accumulators == 0, "blocked_sum: accumulators must divide the unroll");
  std::array<float, Accumulators> sums{};
  std::size_t i = 0;
  for (; i + Unroll <= values.size(); i += Unroll) {
    for (int u = 0; u < Unroll; ++u)
      sums[u % Accumulators] += values[i + static_cast<std::size_t>(u)];
  }
  for (; i < values.size(); ++i) sums[0] += values[i];
  return std::accumulate(sums.begin(), sums.end(), 0.0f);
}

float plain_sum(const Vector& values) {
  return std::accumulate(values.begin(), values.end(), 0.0f);
}

tunekit::LocalTuner<SumKey>& sum_tuner() {
  static tunekit::LocalTuner<SumKey> tuner("static_space sum");
  return tuner;
}

tunekit::HostClient& host() {
  static tunekit::HostClient client;  // times host code with the steady clock
  return client;
}

float sum(const Vector& values) {
  const auto& set = sum_tuner().init([] {
    // 5 x 4 combinations, of which the constraint keeps 14: blocked_sum is never instantiated for
    // the other 6 (its static_assert would fail).
    const auto blocking =
        tunekit::static_space("blocked",
                              tunekit::param("UNROLL", hana::tuple_c<int, 1, 2, 4, 8, 16>),
                              tunekit::param("ACC", hana::tuple_c<int, 1, 2, 4, 8>))
            .where([](auto unroll, auto acc) { return unroll % acc == hana::int_c<0>; });
    static_assert(decltype(blocking)::size() == 14);

    auto key_of = [](const Vector& v) { return SumKey{v.size()}; };
    auto bench_inputs = [](const SumKey& key, const Vector&) {
      return std::tuple<Vector>(Vector(key.length, 1.0f));
    };
    return tunekit::TunableSet{key_of, bench_inputs}
        .with(tunekit::Tunable{"std::accumulate", plain_sum})  // index 0: the safe default
        .with(blocking, [](auto unroll, auto acc) {  // candidates named "blocked[UNROLL=8,ACC=4]"
          return &blocked_sum<decltype(unroll)::value, decltype(acc)::value>;
        });
  });
  return sum_tuner().execute(host().id(), host(), set, values);
}

int main() try {
  // This program's default under the settings files and TUNEKIT_* variables (they win): print
  // each tuning's table unless a file or TUNEKIT_LOG says otherwise.
  tunekit::Settings defaults;
  defaults.log = tunekit::LogLevel::info;
  tunekit::set_global_settings(tunekit::Settings::from_environment(defaults));
  const Vector values(20000, 0.5f);
  const float total = sum(values);  // tunes on the first call of a key (or reads the cache)
  const auto report = sum_tuner().tuner(host().id()).report(SumKey{values.size()});
  std::printf("sum of %zu halves = %.1f, computed by %s\n", values.size(), total,
              report && report->winner() ? report->winner()->name.c_str() : "?");
  std::printf("again = %.1f (dispatched, not tuned)\n", sum(values));
  return total == 10000.0f ? EXIT_SUCCESS : EXIT_FAILURE;
} catch (const tunekit::AutotuneError& e) {  // e.g. a bad TUNEKIT_* setting: named, not an abort
  std::fprintf(stderr, "static_space: %s\n", e.what());
  return 2;
}
