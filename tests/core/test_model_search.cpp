// The model-guided search (SearchStrategy::model) and the refinement every strategy ends with:
// replayed on a synthetic space whose optimum a model of per-parameter effects can find, with
// noise on every evaluation, as a live search sees it.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <random>
#include <set>
#include <tunekit/search.hpp>
#include <tunekit/space.hpp>
#include <tunekit/stable_hash.hpp>
#include <utility>
#include <vector>

using namespace tunekit;

namespace {

Space kernel_like_space() {
  return Space("kernel")
      .parameter("WPT", {1, 2, 4, 6, 8})
      .parameter("VW", {1, 2, 4, 8, 16})
      .parameter("NVEC", {1, 2, 4})
      .parameter("LX", {1, 2, 4, 8, 16})
      .parameter("LY", {1, 2, 4, 8, 16});
}

// Each parameter has a best value (WPT=6, VW=8, NVEC=1, LX=16, LY=8); the work-group shape
// interacts (LX*LY); every configuration has its own +-4% on top.
double true_time(const Config& c) {
  const auto away = [](double x, double best) { return std::abs(std::log2(x) - std::log2(best)); };
  double t = (1 + 0.12 * away(c["WPT"], 6)) * (1 + 0.10 * away(c["VW"], 8)) *
             (1 + 0.15 * away(c["NVEC"], 1)) * (1 + 0.03 * away(c["LX"], 16)) *
             (1 + 0.03 * away(c["LY"], 8)) * (1 + 0.02 * away(c["LX"] * c["LY"], 128));
  const auto jitter = stable_hash(c.to_string()) % 1000;
  return t * (0.96 + 0.08 * static_cast<double>(jitter) / 1000.0) * 1e-3;
}

// Recorded times, each evaluation multiplied by a log-normal factor (a measured median varies).
class NoisyEvaluator final : public SearchEvaluator {
 public:
  NoisyEvaluator(const ExpandedSpace& space, double spread, std::uint64_t seed)
      : space_(space), spread_(spread), rng_(seed) {}
  std::optional<double> evaluate(std::size_t config) override {
    std::normal_distribution<double> draw(0, spread_);
    ++evaluations_;
    return true_time(space_[config]) * std::exp(draw(rng_));
  }
  double spent_seconds() const override { return 0.01 * static_cast<double>(evaluations_); }

 private:
  const ExpandedSpace& space_;
  double spread_;
  std::mt19937_64 rng_;
  std::size_t evaluations_ = 0;
};

double optimum(const ExpandedSpace& space) {
  double best = 1e9;
  for (const auto& c : space.configs()) best = std::min(best, true_time(c));
  return best;
}

// How many of `seeds` searches found (among what they evaluated) a configuration within 5% of
// the optimum, at `evaluations` evaluations each.
int found_within_5_percent(SearchStrategy strategy, std::size_t evaluations, int seeds) {
  const auto expanded = kernel_like_space().expand();
  const double best = optimum(expanded);
  SearchBudget budget{evaluations};
  budget.first_sample = 16;
  int found = 0;
  for (int seed = 1; seed <= seeds; ++seed) {
    NoisyEvaluator evaluator(expanded, 0.03, 100 + static_cast<std::uint64_t>(seed));
    const auto result =
        search(strategy, expanded, evaluator, budget, static_cast<std::uint64_t>(seed));
    double reached = 1e9;
    for (std::size_t i : result.evaluated) reached = std::min(reached, true_time(expanded[i]));
    if (reached <= 1.05 * best) ++found;
  }
  return found;
}

ExpandedSpace two_parameters_one_pair_excluded() {
  return Space("s")
      .parameter("A", {1, 2, 4})
      .parameter("B", {10, 20, 30, 40})
      .where("no A=2 with B=30", [](const Config& c) { return !(c["A"] == 2 && c["B"] == 30); })
      .expand();
}

}  // namespace

TEST_CASE("a space tells each configuration's value positions and its adjacent steps",
          "[search][model]") {
  const auto expanded = two_parameters_one_pair_excluded();
  REQUIRE(expanded.parameter_count() == 2);
  CHECK(expanded.value_count(1) == 4);
  for (std::size_t i = 0; i < expanded.size(); ++i) {
    const auto& c = expanded[i];
    CHECK(expanded.value_index(i, 0) == static_cast<std::size_t>(std::log2(c["A"])));
    CHECK(expanded.value_index(i, 1) == static_cast<std::size_t>(c["B"] / 10 - 1));
  }
  // A=2,B=20: one step each way in A (1 and 4), in B 10 below and, past the excluded 30, 40.
  std::size_t at = expanded.size();
  for (std::size_t i = 0; i < expanded.size(); ++i) {
    if (expanded[i].to_string() == "A=2,B=20") at = i;
  }
  REQUIRE(at < expanded.size());
  std::set<std::string> steps;
  for (std::size_t i : expanded.adjacent(at)) steps.insert(expanded[i].to_string());
  CHECK(steps == std::set<std::string>{"A=1,B=20", "A=4,B=20", "A=2,B=10", "A=2,B=40"});
}

TEST_CASE("a space's trades move one parameter a step up and another a step down",
          "[search][model]") {
  const auto expanded = two_parameters_one_pair_excluded();
  const auto trades_of = [&](std::string_view config) {
    std::set<std::string> found;
    for (std::size_t i = 0; i < expanded.size(); ++i) {
      if (expanded[i].to_string() != config) continue;
      for (std::size_t t : expanded.trades(i)) found.insert(expanded[t].to_string());
    }
    return found;
  };
  CHECK(trades_of("A=2,B=20") == std::set<std::string>{"A=4,B=10", "A=1,B=30"});
  // From A=1,B=40 only A can go up and B down; A=2,B=30 is excluded, so the nearest valid
  // pair is a step further in one of them, A's first step first.
  CHECK(trades_of("A=1,B=40") == std::set<std::string>{"A=2,B=20"});
  CHECK(trades_of("A=4,B=10") == std::set<std::string>{"A=2,B=20"});
  CHECK(trades_of("A=1,B=10") == std::set<std::string>{});
}

namespace {
// The work of a work-item is VW x NVEC values: 32 is best, and VW=16 is the device's vector
// width. VW=8,NVEC=4 is a local best for single steps (VW=16,NVEC=4 does too much work, VW=8,
// NVEC=2 too little); only trading NVEC for VW reaches VW=16,NVEC=2.
Space split_work_space() {
  return Space("split").parameter("VW", {1, 2, 4, 8, 16}).parameter("NVEC", {1, 2, 4, 8});
}
double split_work_time(const Config& c) {
  const double work = std::log2(static_cast<double>(c["VW"] * c["NVEC"]));
  return (1 + 0.8 * std::abs(work - 5) + 0.5 * (4 - std::log2(static_cast<double>(c["VW"])))) *
         1e-3;
}
class SplitWork final : public SearchEvaluator {
 public:
  explicit SplitWork(const ExpandedSpace& space) : space_(space) {}
  std::optional<double> evaluate(std::size_t config) override {
    ++evaluations_;
    return split_work_time(space_[config]);
  }
  double spent_seconds() const override { return 0.01 * static_cast<double>(evaluations_); }

 private:
  const ExpandedSpace& space_;
  std::size_t evaluations_ = 0;
};
std::string refined_from(const std::string& start) {
  const auto expanded = split_work_space().start_at(start).expand();
  SplitWork evaluator(expanded);
  SearchBudget budget{100};
  budget.patience = 0;  // the strategy stops right after the start point: the refinement decides
  budget.refine = 20;
  const auto result = search(SearchStrategy::model, expanded, evaluator, budget, 3);
  return result.best ? expanded[*result.best].to_string() : "none";
}
}  // namespace

TEST_CASE("a refinement trades one parameter for another where no single step gains",
          "[search][model]") {
  // From VW=4,NVEC=4 the climb reaches VW=8,NVEC=4, beating the start point; no step from
  // there gains, and the trade VW up, NVEC down finds the optimum.
  CHECK(refined_from("VW=4,NVEC=4") == "VW=16,NVEC=2");
}

TEST_CASE("a refinement takes only single steps from a start point that nothing beat",
          "[search][model]") {
  // The start point is trusted as this device's best neighbourhood (as the seeded patience
  // trusts it): its steps are measured, its trades are not.
  CHECK(refined_from("VW=8,NVEC=4") == "VW=8,NVEC=4");
}

TEST_CASE(
    "the model search finds a configuration within 5% of the optimum where annealing and "
    "random sampling often do not, at the same evaluations",
    "[search][model]") {
  // 1,875 configurations, 2% of them evaluated, 3% noise on each evaluation.
  const int seeds = 20;
  const int model = found_within_5_percent(SearchStrategy::model, 36, seeds);
  const int annealing = found_within_5_percent(SearchStrategy::annealing, 36, seeds);
  const int random = found_within_5_percent(SearchStrategy::random, 36, seeds);
  INFO("within 5% of the optimum: model " << model << ", annealing " << annealing << ", random "
                                          << random << " of " << seeds);
  CHECK(model >= 18);
  CHECK(model > annealing);
  CHECK(model > random);
}

TEST_CASE("the model search measures its first sample, then what it predicts fastest",
          "[search][model]") {
  const auto expanded = kernel_like_space().expand();
  NoisyEvaluator evaluator(expanded, 0, 1);
  SearchBudget budget{40};
  budget.first_sample = 16;
  const auto result = search(SearchStrategy::model, expanded, evaluator, budget, 5);
  REQUIRE(result.evaluated.size() == 40);
  CHECK(std::set<std::size_t>(result.evaluated.begin(), result.evaluated.end()).size() == 40);
  // After the sample, the model's choices are far better than the sample's average.
  double sample = 0, chosen = 0;
  for (std::size_t k = 0; k < 16; ++k) sample += true_time(expanded[result.evaluated[k]]) / 16;
  for (std::size_t k = 16; k < 40; ++k) chosen += true_time(expanded[result.evaluated[k]]) / 24;
  CHECK(chosen < 0.8 * sample);
}

TEST_CASE("every strategy ends by climbing from its best to a better adjacent configuration",
          "[search][model]") {
  const auto expanded = kernel_like_space().start_at("WPT=6,VW=8,NVEC=2,LX=16,LY=8").expand();
  // The start point is one step (NVEC 2 -> 1) from the optimum's neighbourhood; a budget of the
  // start point alone ends the strategy there.
  for (const std::size_t refine : {std::size_t{0}, std::size_t{12}}) {
    NoisyEvaluator evaluator(expanded, 0, 1);
    SearchBudget budget{100};
    budget.patience = 0;  // the strategy itself stops right after the start point
    budget.refine = refine;
    const auto result = search(SearchStrategy::annealing, expanded, evaluator, budget, 3);
    REQUIRE(result.best);
    const Config& best = expanded[*result.best];
    INFO("refine " << refine << ": best " << best.to_string());
    if (refine == 0) {
      CHECK(result.evaluated.size() == 1);
    } else {
      CHECK(best["NVEC"] == 1);
      CHECK(result.evaluated.size() <= 1 + refine);
    }
  }
}

namespace {

// Records what a search announces (prefetch: the builds started ahead) and what it evaluates,
// the times true_time's, the leader elsewhere `leader` (a space far behind it is abandoned).
class Recording final : public SearchEvaluator {
 public:
  explicit Recording(const ExpandedSpace& space, double leader = 1e9)
      : space_(space), leader_(leader) {}
  void prefetch(const std::vector<std::size_t>& configs, bool likely) override {
    if (!likely) return;
    for (std::size_t i : configs) {
      if (std::find(announced.begin(), announced.end(), i) == announced.end()) {
        announced.push_back(i);
      }
    }
  }
  std::optional<double> evaluate(std::size_t config) override {
    evaluated.push_back(config);
    return true_time(space_[config]);
  }
  double spent_seconds() const override { return 0.01 * static_cast<double>(evaluated.size()); }
  double leader_time() const override { return leader_; }
  // Announced, never evaluated: built for nothing by a live tuning.
  std::size_t unmeasured() const {
    std::size_t count = 0;
    for (std::size_t i : announced) {
      count += std::find(evaluated.begin(), evaluated.end(), i) == evaluated.end();
    }
    return count;
  }
  std::vector<std::size_t> announced, evaluated;

 private:
  const ExpandedSpace& space_;
  double leader_;
};

}  // namespace

TEST_CASE("everything the model search names to be built is measured before it names more",
          "[search][model]") {
  // A plan that changed after every evaluation left announced builds unmeasured.
  const auto expanded = kernel_like_space().expand();
  Recording evaluator(expanded);
  SearchBudget budget{40};
  budget.first_sample = 16;
  budget.refine = 0;  // the model's phase only
  (void)search(SearchStrategy::model, expanded, evaluator, budget, 5);
  REQUIRE(evaluator.evaluated.size() == 40);
  CHECK(evaluator.unmeasured() == 0);  // 40 evaluations: the sample of 16, then 6 batches of 4
}

TEST_CASE(
    "a search announces only the evaluations certain to come: none is built for nothing "
    "when its patience, its abandoning or its refinement's allowance ends it",
    "[search][model]") {
  // On NVIDIA a process compiles one program at a time: each build ahead that is not measured
  // delays one that is.
  const auto expanded = kernel_like_space().expand();
  SearchBudget budget{200};
  budget.first_sample = 16;
  budget.margin = 0.02;
  budget.abandon_after = 6;
  // (evaluations, announced but never evaluated) of one search against a leader elsewhere.
  const auto run = [&](double leader) {
    Recording evaluator(expanded, leader);
    const auto result = search(SearchStrategy::model, expanded, evaluator, budget, 11);
    return std::pair{result.evaluated.size(), evaluator.unmeasured()};
  };
  SECTION("the patience ends the model's phase, mid-sample and mid-batch") {
    budget.refine = 0;
    for (const std::size_t patience : {3, 7, 10}) {
      INFO("patience " << patience);
      budget.patience = patience;
      const auto [evaluations, unmeasured] = run(1e9);
      CHECK(evaluations < 200);  // the patience ended it
      CHECK(unmeasured == 0);
    }
  }
  SECTION("a family far behind the leader is abandoned after abandon_after evaluations") {
    budget.refine = 8;
    // A leader elsewhere a million times faster.
    CHECK(run(1e-9) == std::pair<std::size_t, std::size_t>{6, 0});
  }
  SECTION("the refinement stops at its allowance among a configuration's adjacent ones") {
    budget.patience = 4;
    for (const std::size_t allowance : {1, 2, 5}) {
      INFO("allowance " << allowance);
      budget.refine = allowance;
      CHECK(run(1e9).second == 0);
    }
  }
}

TEST_CASE(
    "a family that trails the leader is searched without the floor, with the warm patience, "
    "and refined only once it comes within the margin of the leader",
    "[search][model]") {
  // A poor start point (WPT=1, VW=1, NVEC=4 are each far from the best): it works, so the
  // patience is the seeded one until a configuration beats it.
  const auto expanded = kernel_like_space().start_at("WPT=1,VW=1,NVEC=4,LX=1,LY=1").expand();
  const double best = optimum(expanded);
  SearchBudget budget{300};
  budget.first_sample = 16;
  budget.explore = 60;
  budget.patience = 40;
  budget.seeded_patience = 5;
  budget.margin = 0.02;
  // (evaluations, announced but never evaluated) against a leader elsewhere.
  const auto run = [&](double leader, bool trails, std::size_t refine) {
    SearchBudget b = budget;
    b.trails = trails;
    b.refine = refine;
    Recording evaluator(expanded, leader);
    const auto result = search(SearchStrategy::model, expanded, evaluator, b, 3);
    return std::pair{result.evaluated.size(), evaluator.unmeasured()};
  };
  const double ahead = 0.8 * best;  // never within 2% of this family
  const auto [leading, leading_unmeasured] = run(ahead, false, 0);
  CHECK(leading >= 60);  // the floor
  const auto [trailing, trailing_unmeasured] = run(ahead, true, 0);
  CHECK(trailing < leading);
  CHECK(trailing_unmeasured == 0);  // what a trailing search builds ahead, it measures
  CHECK(leading_unmeasured == 0);
  // Far behind the leader: no refinement; with no leader to trail, refined as a leader is.
  CHECK(run(ahead, true, 12).first == trailing);
  CHECK(run(1e9, true, 12).first > run(1e9, true, 0).first);
}
