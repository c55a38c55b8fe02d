// Your first tunable set: three ways to compute a dot product; tunekit measures them once per
// (anchored) length on this machine and uses the fastest from then on. docs/getting-started.md
// walks through this file. Run: ./build/release/examples/first_tunable_set
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <tunekit/tunekit.hpp>
#include <tuple>
#include <vector>

using Vector = std::vector<float>;

// 1. The key: what the best choice depends on. The length is anchored to the next power of two,
//    so lengths 1000 and 1024 share one tuning.
struct DotKey {
  BOOST_HANA_DEFINE_STRUCT(DotKey, (tunekit::Anchored<std::uint64_t>, length));
};

// 2. The candidates: plain functions of the op's inputs, all computing the same result.
float dot_loop(const Vector& a, const Vector& b) {
  float sum = 0;
  for (std::size_t i = 0; i < a.size(); ++i) sum += a[i] * b[i];
  return sum;
}

float dot_inner_product(const Vector& a, const Vector& b) {
  return std::inner_product(a.begin(), a.end(), b.begin(), 0.0f);
}

float dot_unrolled(const Vector& a, const Vector& b) {  // four independent sums
  float s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  std::size_t i = 0;
  for (; i + 4 <= a.size(); i += 4) {
    s0 += a[i] * b[i];
    s1 += a[i + 1] * b[i + 1];
    s2 += a[i + 2] * b[i + 2];
    s3 += a[i + 3] * b[i + 3];
  }
  for (; i < a.size(); ++i) s0 += a[i] * b[i];
  return (s0 + s1) + (s2 + s3);
}

// 3. The op: one static LocalTuner, a set built once, and every call through execute().
float dot(const Vector& a, const Vector& b) {
  static tunekit::LocalTuner<DotKey> tuner("dot");
  static tunekit::HostClient host;  // times host code with the steady clock
  const auto& set = tuner.init([] {
    auto key_of = [](const Vector& a, const Vector&) { return DotKey{a.size()}; };
    // What to benchmark a key on: fresh data of the anchored length, never the caller's.
    auto bench_inputs = [](const DotKey& key, const Vector&, const Vector&) {
      return std::tuple<Vector, Vector>(Vector(key.length, 1.0f), Vector(key.length, 0.5f));
    };
    return tunekit::TunableSet{key_of, bench_inputs}
        .with(tunekit::Tunable{"loop", dot_loop})  // index 0: the safe default
        .with(tunekit::Tunable{"inner_product", dot_inner_product})
        .with(tunekit::Tunable{"unrolled x4", dot_unrolled});
  });
  return tuner.execute(host.id(), host, set, a, b);
}

int main() try {
  // This program's default under the settings files and TUNEKIT_* variables (they win): print
  // each tuning's table unless a file or TUNEKIT_LOG says otherwise.
  tunekit::Settings defaults;
  defaults.log = tunekit::LogLevel::info;
  tunekit::set_global_settings(tunekit::Settings::from_environment(defaults));

  for (std::size_t length : {1000, 100000, 1000000}) {
    const Vector a(length, 2.0f), b(length, 0.25f);
    std::printf("dot of length %zu = %.1f\n\n", length, dot(a, b));
  }
} catch (const tunekit::AutotuneError& e) {  // e.g. a bad TUNEKIT_* setting: named, not an abort
  std::fprintf(stderr, "first_tunable_set: %s\n", e.what());
  return 2;
}
