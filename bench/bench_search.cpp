// Compares search strategies on a recorded exhaustive run (a replay table), without a device:
// per strategy, evaluations, tuning time, and the fraction of the optimum reached (median and
// worst over seeds), at a budget of a fraction of the exhaustive tuning time.
// Usage: bench_search TABLE.tsv [--seeds N] [--time-fraction F] [--evaluations E] [--patience P]
//                    [--start CONFIG]...  (start points, as a family's Space::start_at)
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <tunekit/tunekit.hpp>
#include <vector>

namespace {

struct Row {
  std::vector<double> reached;  // optimum / best found: 1 is the optimum
  std::vector<double> evaluations;
  std::vector<double> seconds;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(
        stderr,
        "usage: %s TABLE.tsv [--seeds N] [--time-fraction F] [--evaluations E] [--patience P] "
        "[--start CONFIG]...\n",
        argv[0]);
    return 2;
  }
  int seeds = 25;
  double time_fraction = 0.2;
  std::size_t evaluation_cap = 0, patience = 0;
  std::vector<std::string> start_texts;
  for (int i = 2; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--seeds"))
      seeds = std::stoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--time-fraction"))
      time_fraction = std::stod(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--evaluations"))
      evaluation_cap = std::stoul(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--patience"))
      patience = std::stoul(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--start"))
      start_texts.emplace_back(argv[i + 1]);
    else {
      std::fprintf(stderr, "bench_search: unknown option '%s'\n", argv[i]);
      return 2;
    }
  }
  try {
    const auto table = tunekit::load_replay_table(argv[1]);
    const auto space = tunekit::space_from_table(table);
    double optimum = 1e300, exhaustive_seconds = 0;
    std::size_t working = 0;
    for (const auto& [config, e] : table) {
      exhaustive_seconds += e.cost_seconds;
      if (e.time) optimum = std::min(optimum, *e.time), ++working;
    }
    tunekit::SearchBudget budget{space.size(), time_fraction * exhaustive_seconds};
    if (evaluation_cap) budget = {evaluation_cap, 1e300};
    if (patience) budget.patience = patience;
    std::vector<std::size_t> starts;
    for (const auto& text : start_texts) {
      std::size_t found = space.size();
      for (std::size_t c = 0; c < space.size(); ++c) {
        if (space[c].to_string() == text) found = c;
      }
      if (found == space.size()) {
        std::fprintf(stderr, "bench_search: --start '%s' is not a configuration of the table\n",
                     text.c_str());
        return 2;
      }
      starts.push_back(found);
    }
    std::printf("table %s: %zu configurations (%zu work), exhaustive tuning %.1f s, optimum %s\n",
                argv[1], space.size(), working, exhaustive_seconds,
                tunekit::format_seconds(optimum).c_str());
    if (patience) std::printf("patience: %zu evaluations without a 2%% gain\n", patience);
    for (const auto& text : start_texts) std::printf("start point: %s\n", text.c_str());
    if (evaluation_cap)
      std::printf("budget: %zu evaluations; %d seeds\n\n", evaluation_cap, seeds);
    else
      std::printf("budget: %.0f%% of the exhaustive tuning time (%.1f s); %d seeds\n\n",
                  100 * time_fraction, budget.max_seconds, seeds);
    std::printf(
        "| strategy | evaluations (median) | tuning time (median) | %% of exhaustive time | "
        "reached: median | reached: worst |\n");
    std::printf("|---|---|---|---|---|---|\n");
    for (auto strategy : {tunekit::SearchStrategy::random, tunekit::SearchStrategy::annealing}) {
      Row row;
      for (int seed = 1; seed <= seeds; ++seed) {
        tunekit::ReplayEvaluator evaluator(space, table);
        const auto result = tunekit::search(strategy, space, evaluator, budget,
                                            static_cast<std::uint64_t>(seed), starts);
        row.reached.push_back(optimum / result.best_time);
        row.evaluations.push_back(static_cast<double>(result.evaluated.size()));
        row.seconds.push_back(evaluator.spent_seconds());
      }
      std::printf("| %s | %.0f | %.1f s | %.1f%% | %.1f%% | %.1f%% |\n",
                  std::string(tunekit::to_string(strategy)).c_str(), median(row.evaluations),
                  median(row.seconds), 100 * median(row.seconds) / exhaustive_seconds,
                  100 * median(row.reached),
                  100 * *std::min_element(row.reached.begin(), row.reached.end()));
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_search: %s\n", e.what());
    return 1;
  }
}
