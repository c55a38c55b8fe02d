// Records a replay table: measures every configuration of one matmul family (exhaustively, on
// one device and size), then optionally tunes the same key live with the default strategy and
// compares it with the exhaustive optimum (issue: search strategies).
// Usage: record_matmul_space --family NAME --size N --out TABLE.tsv [--live] [--device S]
//          (NAME: a matmul space, as candidates name it: blocked, direct, staged, split, ...)
//          [--part I/N]      record every N-th configuration from the I-th (1-based) only, so
//                            that a slow compiler's recording fits in several calls; the parts'
//                            tables concatenate into the whole (`cat part*.tsv > all.tsv`)
//          [--table FILE]    no recording: compare the live search with a recorded table
//          [--build-threads T]  threads that build the programs first (default: the hardware's);
//                            1 for PoCL's basic (serial) device, whose driver hung with two
//                            threads launching on one queue (docs/benchmarks.md, 2026-12-05)
// Configurations over the device's limits (work-group size, local memory) are left out before
// anything is built: a live search rejects them at no cost, so they are not part of its space.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <tunekit/candidate_name.hpp>
#include <tunekit/cl.hpp>
#include <tunekit/local_tuner.hpp>
#include <tunekit/ops/matmul.hpp>
#include <vector>

#include "arguments.hpp"
#include "worse_error.hpp"

namespace ops = tunekit::ops;
using tunekit::bench::worse_error;

int main(int argc, char** argv) {
  constexpr char usage[] =
      "usage: record_matmul_space --family NAME --size N --out TABLE.tsv [--live] "
      "[--device S] [--part I/N] [--limit COUNT] [--table RECORDED.tsv] [--build-threads T]\n";
  if (tunekit::bench::asks_for_help(argc, argv)) return std::fputs(usage, stdout) < 0;
  std::string family = "blocked", out = "replay.tsv", device;
  std::size_t size = 1024;
  bool live = false;
  std::size_t limit = 0, part = 1, parts = 1;
  std::size_t build_threads = std::max(1u, std::thread::hardware_concurrency());
  std::string recorded;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--live")
      live = true;
    else if (i + 1 < argc && flag == "--family")
      family = argv[++i];
    else if (i + 1 < argc && flag == "--size")
      size = tunekit::bench::unsigned_argument("record_matmul_space", flag, argv[++i], 1, 65536);
    else if (i + 1 < argc && flag == "--out")
      out = argv[++i];
    else if (i + 1 < argc && flag == "--device")
      device = argv[++i];
    else if (i + 1 < argc && flag == "--limit")
      limit =
          tunekit::bench::unsigned_argument("record_matmul_space", flag, argv[++i], 1, SIZE_MAX);
    else if (i + 1 < argc && flag == "--table")
      recorded = argv[++i];
    else if (i + 1 < argc && flag == "--build-threads")
      build_threads =
          tunekit::bench::unsigned_argument("record_matmul_space", flag, argv[++i], 1, 256);
    else if (i + 1 < argc && flag == "--part") {  // I/N, 1 <= I <= N
      const std::string_view text = argv[++i];
      const auto slash = text.find('/');
      const auto whole = tunekit::bench::parse_unsigned(text.substr(slash + 1), 1, 1000000);
      const auto one = slash == std::string_view::npos
                           ? std::nullopt
                           : tunekit::bench::parse_unsigned(text.substr(0, slash), 1, 1000000);
      if (!one || !whole || *one > *whole)
        tunekit::bench::refuse("record_matmul_space", flag, text, "I/N, 1 <= I <= N");
      part = *one;
      parts = *whole;
    } else {
      std::fputs(usage, stderr);
      return 2;
    }
  }
  try {
    tunekit::Settings settings;
    settings.persistent_cache = false;
    tunekit::set_global_settings(settings);
    tunekit::cl::Client client(device);
    std::printf("device: %s\n", client.device().describe().c_str());
    const std::size_t n = size;
    auto a = ops::upload_matrix(client, ops::random_values(n * n, 1), n, n);
    auto b = ops::upload_matrix(client, ops::random_values(n * n, 2), n, n);
    auto c = ops::upload_matrix(client, std::vector<float>(n * n, 0.0f), n, n);
    ops::matmul_with("naive[LX=16,LY=16]", client, a, b, c);
    const auto reference = ops::download_matrix(client, c);
    const auto bench = tunekit::BenchmarkSettings::for_level(tunekit::Level::balanced);
    // Build every configuration first, on all cores (the driver compiles programs in parallel):
    // each one's build time is part of what measuring it costs a live search.
    std::size_t in_family = 0;
    const auto of_family = [&](const std::string& name) {
      const auto parts = tunekit::split_candidate_name(name);
      return parts && parts->space == family;
    };
    for (const auto& name : ops::matmul_candidates()) in_family += of_family(name);
    if (in_family == 0) {
      std::fprintf(stderr, "record_matmul_space: matmul has no family '%s'\n", family.c_str());
      return 2;
    }
    std::vector<std::string> names;
    std::size_t fitting = 0;
    for (const auto& name : ops::matmul_candidates(client.limits())) {
      if (!of_family(name)) continue;
      if (fitting++ % parts == part - 1) names.push_back(name);
    }
    std::printf(
        "'%s': %zu configurations, %zu within the device's limits; this part (%zu/%zu): %zu\n",
        family.c_str(), in_family, fitting, part, parts, names.size());
    if (limit > 0 && names.size() > limit) names.resize(limit);
    if (!recorded.empty()) names.clear();  // compare with a recorded table: nothing to record
    std::map<std::string, double> build_seconds;
    {
      std::mutex mutex;
      std::atomic<std::size_t> next{0};
      std::vector<std::thread> builders;
      for (std::size_t t = 0; t < build_threads; ++t) {
        builders.emplace_back([&] {
          auto ta = ops::upload_matrix(client, ops::random_values(1, 1), 1, 1);
          auto tc = ops::upload_matrix(client, ops::random_values(1, 1), 1, 1);
          for (std::size_t i = next++; i < names.size(); i = next++) {
            const auto start = std::chrono::steady_clock::now();
            try {
              ops::matmul_with(names[i], client, ta, ta, tc);  // builds the program
            } catch (const std::exception&) {
              // over a limit or failing: measured (and classified) below
            }
            const double seconds =
                std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
            std::lock_guard lock(mutex);
            build_seconds[names[i]] = seconds;
          }
        });
      }
      for (auto& b : builders) b.join();
      client.finish();
    }
    std::printf("built %zu configurations\n", names.size());
    std::fflush(stdout);
    tunekit::ReplayTable table;
    std::size_t index = 0, over_limits = 0;
    double best = std::numeric_limits<double>::infinity(), total = 0;
    std::string best_name;
    for (const auto& name : names) {
      ++index;
      const std::string config = name.substr(family.size() + 1, name.size() - family.size() - 2);
      auto run = [&] { ops::matmul_with(name, client, a, b, c); };
      // Racing off: every configuration's time is recorded, not just "slower than the leader".
      auto outcome =
          tunekit::measure_candidate(client, tunekit::FunctionRef<void()>(run), bench,
                                     std::numeric_limits<double>::infinity(), name, index);
      if (outcome.error && outcome.error->kind() == tunekit::ErrorKind::out_of_resources) {
        ++over_limits;  // rejected before launch: no cost, not part of the searchable space
        continue;
      }
      tunekit::RecordedEvaluation e{std::nullopt, outcome.cost_seconds + build_seconds[name]};
      if (outcome.ok()) {
        const auto got = ops::download_matrix(client, c);
        double worst = 0;
        for (std::size_t i = 0; i < got.size(); i += 97)
          worst = worse_error(worst, double(std::fabs(got[i] - reference[i])));
        if (worst <= ops::matmul_tolerance(n, tunekit::DType::f32)) e.time = outcome.median;
      }
      total += e.cost_seconds;
      if (e.time && *e.time < best) best = *e.time, best_name = name;
      table[config] = e;
      if (index % 50 == 0) {
        tunekit::save_replay_table(out, table);  // a cut-off run still leaves its table
        std::printf("  %zu configurations, %.1f s, best %s %s\n", index, total,
                    tunekit::format_seconds(best).c_str(), best_name.c_str());
        std::fflush(stdout);
      }
    }
    if (!recorded.empty()) {
      table = tunekit::load_replay_table(recorded);
      for (const auto& [config, e] : table) {
        total += e.cost_seconds;
        if (e.time && *e.time < best)
          best = *e.time, best_name = tunekit::candidate_name(family, config);
      }
    } else {
      tunekit::save_replay_table(out, table);
    }
    const double flops = 2.0 * double(n) * double(n) * double(n);
    std::printf(
        "recorded %zu configurations of '%s' at %zu (%zu more rejected at launch) in "
        "%.1f s; optimum %s = %.2f TFLOP/s: %s\n",
        table.size(), family.c_str(), n, over_limits, total, tunekit::format_seconds(best).c_str(),
        flops / best / 1e12, best_name.c_str());
    if (live) {
      // The default strategy, live, on the same key: compare its best configuration of this family
      // and the time it spent on the family with the exhaustive run.
      ops::matmul(client, a, b, c);
      const auto report = ops::matmul_tuner()
                              .tuner(client.id())
                              .report(ops::matmul_key(n, n, n, tunekit::DType::f32));
      double found = std::numeric_limits<double>::infinity(), spent = 0, all_spent = 0;
      std::size_t evaluated = 0;
      for (const auto& o : report->outcomes) {
        all_spent += o.cost_seconds;
        if (!of_family(o.name) || o.status == tunekit::OutcomeStatus::skipped) continue;
        if (o.error && o.error->kind() == tunekit::ErrorKind::out_of_resources) continue;
        // Its programs were built by the recording already: charge what the recording measured.
        const std::string config(tunekit::split_candidate_name(o.name)->config);
        const auto recorded = table.find(config);
        ++evaluated,
            spent += recorded != table.end() ? recorded->second.cost_seconds : o.cost_seconds;
        if (o.ok()) found = std::min(found, o.median);
      }
      std::printf(
          "live default search (%s): %zu of %zu configurations, %.1f s of %.1f s (%.0f%%), best %s "
          "= "
          "%.1f%% of the optimum; whole tuning %.1f s, winner %s\n",
          std::string(tunekit::to_string(tunekit::global_settings().search_settings().strategy))
              .c_str(),
          evaluated, table.size(), spent, total, 100 * spent / total,
          tunekit::format_seconds(found).c_str(), 100 * best / found, report->tuning_seconds,
          report->winner()->name.c_str());
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "record_matmul_space: %s\n", e.what());
    return 1;
  }
}
