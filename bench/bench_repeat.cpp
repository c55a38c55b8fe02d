// Does a tuning pick a winner that is not noise? Tunes matmul for one size R times in one process
// (each time from scratch: memory cleared, no persistent cache), then re-measures every distinct
// winner together in long interleaved rounds (measure_interleaved) to find the true best, and
// counts the runs whose winner is within 5% of it. Issue 18's target: at least 9 of 10 runs.
// Prints each line as it is measured. docs/benchmarks.md, "A winner that is not noise".
//
// Usage: bench_repeat [--size N] [--runs R] [--rounds K] [--level LEVEL] [--device SELECTOR]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <tunekit/cl.hpp>
#include <tunekit/ops/matmul.hpp>
#include <vector>

namespace ops = tunekit::ops;

int main(int argc, char** argv) {
  std::size_t n = 256, runs = 10, rounds = 31;
  std::string level = "minimal", device;
  for (int i = 1; i < argc; ++i) {
    const bool has_value = i + 1 < argc;
    if (!std::strcmp(argv[i], "--size") && has_value) {
      n = std::stoul(argv[++i]);
    } else if (!std::strcmp(argv[i], "--runs") && has_value) {
      runs = std::stoul(argv[++i]);
    } else if (!std::strcmp(argv[i], "--rounds") && has_value) {
      rounds = std::stoul(argv[++i]);
    } else if (!std::strcmp(argv[i], "--level") && has_value) {
      level = argv[++i];
    } else if (!std::strcmp(argv[i], "--device") && has_value) {
      device = argv[++i];
    } else {
      std::fprintf(stderr,
                   "usage: bench_repeat [--size N] [--runs R] [--rounds K] [--level LEVEL] "
                   "[--device SELECTOR]\n");
      return 2;
    }
  }
  try {
    tunekit::Settings settings;
    settings.persistent_cache = false;
    settings.level = tunekit::parse_level(level);
    settings.device = device;
    tunekit::set_global_settings(settings);
    tunekit::cl::Client client;
    std::printf(
        "device: %s\nmatmul %zu^3 f32, level %s, %zu tunings, then %zu interleaved rounds\n",
        client.device().describe().c_str(), n, level.c_str(), runs, rounds);
    const auto a = ops::random_matrix(client.context(), n, n, tunekit::DType::f32, 1);
    const auto b = ops::random_matrix(client.context(), n, n, tunekit::DType::f32, 2);
    auto c = ops::random_matrix(client.context(), n, n, tunekit::DType::f32, 3);
    const ops::MatmulKey key = ops::matmul_key(n, n, n, tunekit::DType::f32);
    auto& tuner = ops::matmul_tuner().tuner(client.id());
    std::vector<std::string> winners;
    for (std::size_t r = 0; r < runs; ++r) {
      tuner.clear_memory();
      const auto started = std::chrono::steady_clock::now();
      ops::matmul(client, a, b, c);
      client.finish();
      const double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
      const auto report = tuner.report(key);
      if (!report || !report->winner()) throw std::runtime_error("no winner");
      winners.push_back(report->winner()->name);
      std::printf("run %2zu: %-60s %10.3f us  (tuned in %.1f s)\n", r + 1, winners.back().c_str(),
                  1e6 * report->winner()->median, seconds);
      std::fflush(stdout);
    }
    // Every distinct winner, re-measured together: the reference ranking.
    std::vector<std::string> distinct = winners;
    std::sort(distinct.begin(), distinct.end());
    distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
    std::vector<std::function<void()>> calls;
    calls.reserve(distinct.size());
    std::vector<tunekit::Contender> contenders;
    for (const auto& name : distinct) {
      calls.emplace_back([&, name] { ops::matmul_with(name, client, a, b, c); });
      // A sample of at least 1 ms: batched like a tuning's samples.
      const double once = client.measure(tunekit::FunctionRef<void()>(calls.back()), 1);
      const auto batch =
          static_cast<std::size_t>(std::clamp(1e-3 / std::max(once, 1e-9), 1.0, 1e4));
      contenders.push_back({tunekit::FunctionRef<void()>(calls.back()), batch});
    }
    const auto times = tunekit::measure_interleaved(client, contenders, distinct, rounds, 7);
    std::map<std::string, double> median;
    double best = 1e300;
    for (std::size_t k = 0; k < distinct.size(); ++k) {
      if (times[k].error) throw *times[k].error;
      median[distinct[k]] = tunekit::summarize(times[k].samples).median;
      best = std::min(best, median[distinct[k]]);
    }
    std::printf("\ndistinct winners, re-measured in %zu interleaved rounds:\n", rounds);
    for (const auto& name : distinct) {
      std::printf("  %-60s %10.3f us  %.3fx the best\n", name.c_str(), 1e6 * median[name],
                  median[name] / best);
    }
    std::size_t within = 0;
    for (const auto& name : winners) within += median[name] <= 1.05 * best;
    std::printf("%zu of %zu runs picked a winner within 5%% of the best\n", within, runs);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_repeat: %s\n", e.what());
    return 1;
  }
  return 0;
}
