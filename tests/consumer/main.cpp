// Tunes a tiny host op with an installed tunekit: two ways to sum a vector.
#include <cstdio>
#include <numeric>
#include <tunekit/report.hpp>
#include <tunekit/tunekit.hpp>
#include <vector>

namespace {

struct SumKey {
  BOOST_HANA_DEFINE_STRUCT(SumKey, (tunekit::Anchored<std::uint64_t>, n));
};

long long sum(const std::vector<int>& values) {
  static tunekit::LocalTuner<SumKey> tuner("consumer_sum");
  static tunekit::HostClient host;
  const auto& set = tuner.init([] {
    auto key_of = [](const std::vector<int>& v) { return SumKey{v.size()}; };
    auto bench_inputs = [](const SumKey& key, const std::vector<int>&) {
      return std::tuple<std::vector<int>>(std::vector<int>(key.n, 1));
    };
    return tunekit::TunableSet{key_of, bench_inputs}
        .with(tunekit::Tunable{
            "accumulate",
            [](const std::vector<int>& v) { return std::accumulate(v.begin(), v.end(), 0LL); }})
        .with(tunekit::Tunable{"loop", [](const std::vector<int>& v) {
                                 long long total = 0;
                                 for (int x : v) total += x;
                                 return total;
                               }});
  });
  return tuner.execute(host.id(), host, set, values);
}

}  // namespace

int main() {
  tunekit::Settings settings;
  settings.persistent_cache = false;
  settings.level = tunekit::Level::minimal;
  tunekit::set_global_settings(settings);

  const std::vector<int> values(1000, 2);
  const long long total = sum(values);
  std::printf("sum = %lld\n", total);
  if (total != 2000) return 1;
  const std::string page = tunekit::html_report({});
  std::printf("tunekit consumer ok (%zu bytes of empty report)\n", page.size());
  return 0;
}
