// Tunes between real sorting algorithms for plain C++ data: the engine with no GPU at all.
// Run: ./build/release/examples/host_sort [size...]
#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <random>
#include <stdexcept>
#include <string>
#include <tunekit/tunekit.hpp>
#include <vector>

namespace {

// Sorting keys: the length anchored to a power of two, and whether values are nearly sorted.
struct SortKey {
  BOOST_HANA_DEFINE_STRUCT(SortKey, (tunekit::Anchored<std::uint64_t>, length),
                           (bool, nearly_sorted));
};

bool looks_nearly_sorted(const std::vector<int>& v) {
  std::size_t descents = 0;
  for (std::size_t i = 1; i < v.size(); ++i) descents += v[i] < v[i - 1];
  return descents * 20 < v.size();
}

void insertion_sort(std::vector<int>& v) {
  for (std::size_t i = 1; i < v.size(); ++i) {
    const int x = v[i];
    std::size_t j = i;
    for (; j > 0 && v[j - 1] > x; --j) v[j] = v[j - 1];
    v[j] = x;
  }
}

void radix_sort(std::vector<int>& v) {
  std::vector<int> buffer(v.size());
  for (int shift = 0; shift < 32; shift += 8) {
    std::size_t count[257] = {};
    for (int x : v) ++count[((static_cast<unsigned>(x) ^ 0x80000000u) >> shift & 0xff) + 1];
    for (int b = 0; b < 256; ++b) count[b + 1] += count[b];
    for (int x : v) buffer[count[(static_cast<unsigned>(x) ^ 0x80000000u) >> shift & 0xff]++] = x;
    v.swap(buffer);
  }
}

// Each candidate sorts a copy, so that every benchmark run sees unsorted data.
template <class Sort>
auto sorting_copy(Sort sort) {
  return [sort](const std::vector<int>& in, std::vector<int>& out) {
    out = in;
    sort(out);
  };
}

// The op: writes `values` sorted into `sorted`, with the fastest algorithm for their size and
// shape.
void sort(const std::vector<int>& values, std::vector<int>& sorted) {
  static tunekit::LocalTuner<SortKey> tuner("host_sort");
  static tunekit::HostClient host;
  const auto& set = tuner.init([] {
    auto key_of = [](const std::vector<int>& v, const std::vector<int>&) {
      return SortKey{v.size(), looks_nearly_sorted(v)};
    };
    // Benchmark on fresh data of the anchored length and the same shape, never on the caller's.
    auto bench_inputs = [](const SortKey& key, const std::vector<int>&, const std::vector<int>&) {
      std::mt19937 rng(static_cast<unsigned>(key.length));
      std::vector<int> data(key.length);
      for (auto& x : data) x = static_cast<int>(rng());
      if (key.nearly_sorted) {
        std::sort(data.begin(), data.end());
        for (std::size_t i = 0; i + 1 < data.size(); i += 97) std::swap(data[i], data[i + 1]);
      }
      return std::tuple<std::vector<int>, std::vector<int>>(data, std::vector<int>(data.size()));
    };
    return tunekit::TunableSet{key_of, bench_inputs}
        .with(tunekit::Tunable{
            "std::sort", sorting_copy([](std::vector<int>& v) { std::sort(v.begin(), v.end()); })})
        .with(tunekit::Tunable{"std::stable_sort", sorting_copy([](std::vector<int>& v) {
                                 std::stable_sort(v.begin(), v.end());
                               })})
        .with(tunekit::Tunable{"insertion sort", sorting_copy([](std::vector<int>& v) {
                                 if (v.size() > 4096 && !looks_nearly_sorted(v)) {
                                   throw std::runtime_error("quadratic on this input: refused");
                                 }
                                 insertion_sort(v);
                               })})
        .with(tunekit::Tunable{"radix sort", sorting_copy(radix_sort)});
  });
  tuner.execute(host.id(), host, set, values, sorted);
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

int main(int argc, char** argv) try {
  // This program's default under the settings files and TUNEKIT_* variables (they win): print
  // each tuning's table unless a file or TUNEKIT_LOG says otherwise.
  tunekit::Settings defaults;
  defaults.log = tunekit::LogLevel::info;
  tunekit::set_global_settings(tunekit::Settings::from_environment(defaults));

  std::vector<std::size_t> sizes;
  for (int i = 1; i < argc; ++i) sizes.push_back(length_argument(argv[i]));
  if (sizes.empty()) sizes = {16, 1000, 100000};
  std::mt19937 rng(7);
  for (std::size_t n : sizes) {
    for (bool nearly : {false, true}) {
      std::vector<int> values(n);
      for (auto& x : values) x = static_cast<int>(rng());
      if (nearly) std::sort(values.begin(), values.end());
      std::vector<int> sorted(n);
      sort(values, sorted);
      std::sort(values.begin(), values.end());
      const bool ok = sorted == values;
      std::printf("sorted %zu %s values: %s\n\n", n, nearly ? "nearly sorted" : "random",
                  ok ? "ok" : "WRONG");
      if (!ok) return 1;
    }
  }
} catch (const std::exception& e) {  // a bad TUNEKIT_* setting or length: named, not an abort
  std::fprintf(stderr, "host_sort: %s\n", e.what());
  return 2;
}
