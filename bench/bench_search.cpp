// Compares search strategies on a recorded exhaustive run (a replay table), without a device:
// per strategy, evaluations, tuning time, and the fraction of the optimum reached (median and
// worst over seeds), at a budget of a fraction of the exhaustive tuning time.
// Usage: bench_search TABLE.tsv [--seeds N] [--time-fraction F] [--evaluations E] [--patience P]
//                    [--start CONFIG]...  (start points, as a family's Space::start_at)
//                    [--foreign-start CONFIG]...  (start points found on another device: measured
//                    first, vouching for nothing; Space::start_at's found_on)
//                    [--level minimal|balanced|extensive]  (that level's budget instead)
//                    [--noise S]  (each evaluation's time is the recorded one times a log-normal
//                    factor of spread S, as a measured median varies; the pick is then judged by
//                    its recorded time: how often it is within 5% and 10% of the optimum)
//                    [--confirm K]  (the final race's contenders; the level's by default)
//                    [--refine N] [--explore N] [--first-sample N] [--time-limit off]
//                    [--climb on|off]  (the tuner's climb from the confirmed winner's adjacent
//                    configurations and trades, within the refinement's allowance; on by
//                    default)
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <tunekit/tunekit.hpp>
#include <tuple>
#include <vector>

#include "arguments.hpp"

namespace {

// The recorded times, each evaluation multiplied by a log-normal factor: a live search sees
// medians that vary from one measurement to the next, and its interval's upper end is wider.
class NoisyReplay final : public tunekit::SearchEvaluator {
 public:
  NoisyReplay(const tunekit::ExpandedSpace& space, const tunekit::ReplayTable& table, double noise,
              std::uint64_t seed)
      : exact_(space, table),
        noise_(noise),
        rng_(seed),
        upper_(space.size()),
        seen_(space.size()) {}
  std::optional<double> evaluate(std::size_t config) override {
    auto t = exact_.evaluate(config);
    if (!t) return t;
    std::normal_distribution<double> draw(0, noise_);
    const double seen = *t * std::exp(draw(rng_));
    upper_[config] = seen * std::exp(noise_);  // about a 95% interval of a median of ~10
    seen_[config] = seen;
    return seen;
  }
  double spent_seconds() const override { return exact_.spent_seconds(); }
  double upper(std::size_t config) const override { return upper_[config]; }
  double seen(std::size_t config) const { return seen_[config]; }

 private:
  tunekit::ReplayEvaluator exact_;
  double noise_;
  std::mt19937_64 rng_;
  std::vector<double> upper_;
  std::vector<double> seen_;
};

struct Row {
  std::vector<double> picked;   // optimum / recorded time of the pick (noise on)
  std::vector<double> reached;  // optimum / best found: 1 is the optimum
  std::vector<double> evaluations;
  std::vector<double> seconds;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// A level's name, or the bench refuses it.
tunekit::Level level_argument(const char* text) {
  try {
    return tunekit::parse_level(text);
  } catch (const std::exception&) {
    tunekit::bench::refuse("bench_search", "--level", text,
                           "a level's name (minimal, balanced, extensive, full)");
  }
}

// "on" or "off", or the bench refuses it.
bool on_off_argument(const char* flag, std::string_view text) {
  if (text != "on" && text != "off")
    tunekit::bench::refuse("bench_search", flag, text, "on or off");
  return text == "on";
}

}  // namespace

int main(int argc, char** argv) {
  constexpr char usage[] =
      "usage: bench_search TABLE.tsv [--seeds N] [--time-fraction F] [--evaluations E] "
      "[--patience P] [--start CONFIG]... [--foreign-start CONFIG]...\n";
  if (tunekit::bench::asks_for_help(argc, argv)) return std::fputs(usage, stdout) < 0;
  if (argc < 2) {
    std::fputs(usage, stderr);
    return 2;
  }
  using tunekit::bench::number_argument, tunekit::bench::unsigned_argument;
  const char* program = "bench_search";
  int seeds = 25;
  double time_fraction = 0.2;
  std::size_t evaluation_cap = 0, patience = 0;
  std::vector<std::string> start_texts, foreign_texts;
  std::optional<tunekit::Level> level;
  double noise = 0;
  std::optional<std::size_t> refine, explore, first_sample, confirm;
  bool climb = true;  // the tuner's climb from the confirmed winner (tuning_run.hpp)
  bool no_time_limit = false;
  for (int i = 2; i < argc; i += 2) {
    if (i + 1 == argc) tunekit::bench::refuse_missing_value(program, argv[i]);
    if (!std::strcmp(argv[i], "--seeds"))
      seeds = static_cast<int>(unsigned_argument(program, argv[i], argv[i + 1], 1, 100000));
    else if (!std::strcmp(argv[i], "--time-fraction"))
      time_fraction = number_argument(program, argv[i], argv[i + 1], 1e-6, 1);
    else if (!std::strcmp(argv[i], "--evaluations"))
      evaluation_cap = unsigned_argument(program, argv[i], argv[i + 1], 1, 100000000);
    else if (!std::strcmp(argv[i], "--patience"))
      patience = unsigned_argument(program, argv[i], argv[i + 1], 1, 100000000);
    else if (!std::strcmp(argv[i], "--level"))
      level = level_argument(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--refine"))
      refine = unsigned_argument(program, argv[i], argv[i + 1], 0, 100000000);
    else if (!std::strcmp(argv[i], "--first-sample"))
      first_sample = unsigned_argument(program, argv[i], argv[i + 1], 0, 100000000);
    else if (!std::strcmp(argv[i], "--time-limit"))
      no_time_limit = !on_off_argument(argv[i], argv[i + 1]);
    else if (!std::strcmp(argv[i], "--explore"))
      explore = unsigned_argument(program, argv[i], argv[i + 1], 0, 100000000);
    else if (!std::strcmp(argv[i], "--climb"))
      climb = on_off_argument(argv[i], argv[i + 1]);
    else if (!std::strcmp(argv[i], "--confirm"))
      confirm = unsigned_argument(program, argv[i], argv[i + 1], 0, 100000000);
    else if (!std::strcmp(argv[i], "--noise"))
      noise = number_argument(program, argv[i], argv[i + 1], 0, 10);
    else if (!std::strcmp(argv[i], "--start"))
      start_texts.emplace_back(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--foreign-start"))
      foreign_texts.emplace_back(argv[i + 1]);
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
    if (level) budget = tunekit::SearchSettings::for_level(*level).budget_for(space.size());
    if (patience) budget.patience = patience;
    if (refine) budget.refine = *refine;
    if (explore) budget.explore = *explore;
    if (first_sample) budget.first_sample = *first_sample;
    if (no_time_limit) budget.max_seconds = 1e300;
    tunekit::SearchStarts starts;
    for (const auto* texts : {&start_texts, &foreign_texts}) {
      for (const auto& text : *texts) {
        std::size_t found = space.size();
        for (std::size_t c = 0; c < space.size(); ++c) {
          if (space[c].to_string() == text) found = c;
        }
        if (found == space.size()) {
          std::fprintf(stderr,
                       "bench_search: start point '%s' is not a configuration of the table\n",
                       text.c_str());
          return 2;
        }
        (texts == &start_texts ? starts.vouched : starts.unvouched).push_back(found);
      }
    }
    std::printf("table %s: %zu configurations (%zu work), exhaustive tuning %.1f s, optimum %s\n",
                argv[1], space.size(), working, exhaustive_seconds,
                tunekit::format_seconds(optimum).c_str());
    if (patience) std::printf("patience: %zu evaluations without a 2%% gain\n", patience);
    for (const auto& text : start_texts) std::printf("start point: %s\n", text.c_str());
    for (const auto& text : foreign_texts) {
      std::printf("start point found on another device: %s\n", text.c_str());
    }
    // One line for the budget in force: a level's, a cap of evaluations, or a share of the time.
    const std::string time_limit = no_time_limit
                                       ? std::string("no time limit")
                                       : tunekit::format_seconds(budget.max_seconds) + " at most";
    if (level)
      std::printf("budget: level %s, %s; %d seeds\n\n",
                  std::string(tunekit::to_string(*level)).c_str(), time_limit.c_str(), seeds);
    else if (evaluation_cap)
      std::printf("budget: %zu evaluations; %d seeds\n\n", evaluation_cap, seeds);
    else
      std::printf("budget: %.0f%% of the exhaustive tuning time, %s; %d seeds\n\n",
                  100 * time_fraction, time_limit.c_str(), seeds);
    // The tuner's final race: its contenders, the level's (or --confirm's).
    const std::size_t contenders = std::max<std::size_t>(
        1, confirm ? *confirm
                   : tunekit::BenchmarkSettings::for_level(level.value_or(tunekit::Level::balanced))
                         .confirm_contenders);
    if (noise > 0) {
      std::printf(
          "noise: each evaluation's time x exp(N(0, %.3f)); the pick is the best seen "
          "of the search, confirmed among its best %zu with a third of that spread\n",
          noise, contenders);
    }
    std::printf(
        "| strategy | evaluations (median) | tuning time (median) | %% of exhaustive time | "
        "reached: median | reached: worst | reached within 5%% | pick within 5%% | within 10%% | "
        "pick: worst |\n");
    std::printf("|---|---|---|---|---|---|---|---|---|---|\n");
    for (auto strategy : {tunekit::SearchStrategy::random, tunekit::SearchStrategy::annealing,
                          tunekit::SearchStrategy::model}) {
      Row row;
      for (int seed = 1; seed <= seeds; ++seed) {
        NoisyReplay evaluator(space, table, noise, 1000 + static_cast<std::uint64_t>(seed));
        const auto result = tunekit::search(strategy, space, evaluator, budget,
                                            static_cast<std::uint64_t>(seed), starts);
        // Recorded (true) times of what the search evaluated; the pick: the best few it saw,
        // measured again (the tuner's confirmation) with a third of the spread.
        std::vector<std::tuple<double, double, std::size_t>> seen;  // (seen, recorded, config)
        double best_recorded = 1e300;
        std::vector<char> visited(space.size(), 0);
        for (std::size_t c : result.evaluated) {
          visited[c] = 1;
          const auto& e = table.at(space[c].to_string());
          if (!e.time) continue;
          best_recorded = std::min(best_recorded, *e.time);
          seen.emplace_back(evaluator.seen(c), *e.time, c);
        }
        std::sort(seen.begin(), seen.end());
        if (seen.size() > contenders) seen.resize(contenders);
        std::mt19937_64 confirm(static_cast<std::uint64_t>(seed) * 31u);
        std::normal_distribution<double> again(0, noise / 3);
        double pick_seen = 1e300, pick = 1e300;
        std::size_t pick_config = 0;
        for (const auto& [s_, recorded, c] : seen) {
          const double t = recorded * std::exp(again(confirm));
          if (t < pick_seen) pick_seen = t, pick = recorded, pick_config = c;
        }
        std::size_t extra = 0;
        if (climb && !seen.empty()) {
          // The confirmed winner's adjacent configurations, then its trades unless the search
          // trusted its start points, not measured yet; then a race of the winner and those that
          // measured within the contenders' range.
          const double worst_seen = std::get<0>(seen.back());
          const std::size_t allowance = budget.climb_allowance(result.evaluated.size());
          std::vector<std::size_t> around = space.adjacent(pick_config);
          if (!result.trusts_start_points) {
            const auto trades = space.trades(pick_config);
            around.insert(around.end(), trades.begin(), trades.end());
          }
          for (std::size_t c : around) {
            if (visited[c] || extra >= allowance) continue;
            visited[c] = 1;
            ++extra;
            const auto t = evaluator.evaluate(c);
            const auto& e = table.at(space[c].to_string());
            if (!t || !e.time) continue;
            best_recorded = std::min(best_recorded, *e.time);
            if (*t <= worst_seen) {
              const double r = *e.time * std::exp(again(confirm));
              if (r < pick_seen) pick_seen = r, pick = *e.time;
            }
          }
        }
        row.reached.push_back(optimum / best_recorded);
        row.picked.push_back(optimum / pick);
        row.evaluations.push_back(static_cast<double>(result.evaluated.size() + extra));
        row.seconds.push_back(evaluator.spent_seconds());
      }
      const auto reached_within = [&](double bound) {
        return static_cast<int>(std::count_if(row.reached.begin(), row.reached.end(),
                                              [&](double r) { return 1 / r <= bound; }));
      };
      const auto within = [&](double bound) {
        return static_cast<int>(std::count_if(row.picked.begin(), row.picked.end(),
                                              [&](double r) { return 1 / r <= bound; }));
      };
      std::printf(
          "| %s | %.0f | %.1f s | %.1f%% | %.1f%% | %.1f%% | %d/%d | %d/%d | %d/%d | %.3fx |\n",
          std::string(tunekit::to_string(strategy)).c_str(), median(row.evaluations),
          median(row.seconds), 100 * median(row.seconds) / exhaustive_seconds,
          100 * median(row.reached),
          100 * *std::min_element(row.reached.begin(), row.reached.end()), reached_within(1.05),
          seeds, within(1.05), seeds, within(1.10), seeds,
          1 / *std::min_element(row.picked.begin(), row.picked.end()));
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_search: %s\n", e.what());
    return 1;
  }
}
