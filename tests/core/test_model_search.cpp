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

// A configuration's true time.
using TimeOf = double (*)(const Config&);

// True times, each evaluation multiplied by a log-normal factor (a measured median varies);
// exact with no spread.
class NoisyEvaluator final : public SearchEvaluator {
 public:
  NoisyEvaluator(const ExpandedSpace& space, double spread, std::uint64_t seed,
                 TimeOf time = true_time)
      : space_(space), spread_(spread), rng_(seed), time_(time) {}
  std::optional<double> evaluate(std::size_t config) override {
    ++evaluations_;
    if (spread_ == 0) return time_(space_[config]);
    std::normal_distribution<double> draw(0, spread_);
    return time_(space_[config]) * std::exp(draw(rng_));
  }
  double spent_seconds() const override { return 0.01 * static_cast<double>(evaluations_); }

 private:
  const ExpandedSpace& space_;
  double spread_;
  std::mt19937_64 rng_;
  TimeOf time_;
  std::size_t evaluations_ = 0;
};

double optimum(const ExpandedSpace& space, TimeOf time = true_time) {
  double best = 1e9;
  for (const auto& c : space.configs()) best = std::min(best, time(c));
  return best;
}

// How many of `seeds` searches of `space` (seeds 1 to `seeds`, each evaluation with `spread`
// noise) found, among what they evaluated, a configuration within 5% of the optimum.
int found_within_5_percent(const ExpandedSpace& space, TimeOf time, double spread,
                           SearchStrategy strategy, const SearchBudget& budget, int seeds) {
  const double best = optimum(space, time);
  int found = 0;
  for (int seed = 1; seed <= seeds; ++seed) {
    NoisyEvaluator evaluator(space, spread, 100 + static_cast<std::uint64_t>(seed), time);
    const auto result =
        search(strategy, space, evaluator, budget, static_cast<std::uint64_t>(seed));
    double reached = 1e9;
    for (std::size_t i : result.evaluated) reached = std::min(reached, time(space[i]));
    if (reached <= 1.05 * best) ++found;
  }
  return found;
}

// The same on the kernel-like space, 3% noise, at `evaluations` evaluations each.
int found_within_5_percent(SearchStrategy strategy, std::size_t evaluations, int seeds) {
  SearchBudget budget{evaluations};
  budget.first_sample = 16;
  return found_within_5_percent(kernel_like_space().expand(), true_time, 0.03, strategy, budget,
                                seeds);
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

TEST_CASE(
    "the model search measures its first sample, then what its fit and its draws predict fastest",
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

namespace {

// PoCL's `direct` space at 128 as recorded on a 2-core machine (2026-11-22,
// docs/data/pocl-direct-128.tsv): each configuration's time relative to the optimum, by kernel
// (WPTM, VWN, NVEC), then LX and LY (1, 2, 4, 8, 16 each). The parameters interact: WPTM=6 is
// the best only with VWN=8 and NVEC=1, and WPTM=2,VWN=8,NVEC=4 (1.07x) and WPTM=8,VWN=16,NVEC=1
// (1.04x) are basins that a model of per-parameter effects settles in.
struct KernelTime {
  int wptm, vwn, nvec;
  double by_work_group[5][5];
};
constexpr KernelTime recorded_kernels[] = {
    {2,
     4,
     1,
     {{3.969, 3.883, 3.719, 3.740, 3.739},
      {3.753, 3.665, 3.619, 3.643, 3.580},
      {3.701, 3.633, 3.591, 3.853, 3.531},
      {3.617, 3.613, 3.633, 3.574, 3.691},
      {3.582, 3.573, 3.528, 3.527, 3.534}}},
    {2,
     4,
     2,
     {{2.499, 2.420, 2.396, 2.331, 2.305},
      {2.412, 2.356, 3.454, 3.457, 2.315},
      {2.360, 2.336, 2.319, 2.283, 2.268},
      {3.445, 2.300, 3.312, 2.276, 2.305},
      {2.293, 2.338, 2.342, 2.272, 2.266}}},
    {2,
     4,
     4,
     {{1.989, 1.919, 1.881, 1.891, 1.860},
      {1.922, 1.862, 1.882, 1.839, 1.896},
      {2.082, 1.975, 2.055, 1.954, 1.958},
      {1.981, 1.951, 1.966, 1.975, 1.898},
      {1.969, 1.917, 1.952, 1.924, 1.936}}},
    {2,
     8,
     1,
     {{2.063, 2.033, 2.025, 2.008, 1.972},
      {2.005, 2.070, 2.011, 1.971, 1.976},
      {2.113, 2.061, 2.001, 1.962, 1.948},
      {1.971, 1.962, 1.965, 1.995, 1.967},
      {1.979, 1.995, 1.971, 1.945, 2.000}}},
    {2,
     8,
     2,
     {{1.379, 1.353, 1.276, 1.266, 1.264},
      {1.315, 1.279, 1.294, 1.271, 1.273},
      {1.280, 1.288, 1.797, 1.866, 1.788},
      {1.759, 1.804, 1.816, 1.831, 1.784},
      {1.854, 1.752, 1.809, 1.642, 1.725}}},
    {2,
     8,
     4,
     {{1.668, 1.574, 1.117, 1.123, 1.066},
      {1.163, 1.125, 1.115, 1.104, 1.121},
      {1.125, 1.123, 1.116, 1.130, 1.158},
      {1.137, 1.139, 1.143, 1.143, 1.102},
      {1.132, 1.129, 1.150, 1.122, 1.159}}},
    {2,
     16,
     1,
     {{1.401, 1.359, 1.308, 1.287, 1.394},
      {1.332, 1.304, 1.288, 1.298, 1.307},
      {1.333, 1.284, 1.262, 1.293, 1.282},
      {1.288, 1.517, 1.301, 1.300, 1.274},
      {1.278, 1.272, 1.278, 1.264, 1.274}}},
    {2,
     16,
     2,
     {{1.194, 1.183, 1.156, 1.318, 1.353},
      {1.424, 1.385, 1.441, 1.304, 1.368},
      {1.176, 1.136, 1.257, 1.132, 1.114},
      {1.131, 1.144, 1.124, 1.137, 1.122},
      {1.138, 1.133, 1.126, 1.124, 1.116}}},
    {2,
     16,
     4,
     {{1.508, 1.731, 2.366, 2.339, 2.328},
      {1.273, 1.441, 1.448, 1.441, 1.402},
      {1.438, 1.414, 1.439, 1.429, 1.404},
      {1.449, 1.441, 1.429, 1.392, 1.463},
      {1.443, 1.439, 1.455, 1.432, 1.427}}},
    {4,
     4,
     1,
     {{1.823, 2.334, 2.351, 2.341, 2.327},
      {2.360, 2.328, 2.307, 2.306, 2.233},
      {2.305, 2.382, 2.258, 2.574, 2.833},
      {2.430, 2.442, 2.413, 2.816, 2.822},
      {2.670, 2.858, 2.807, 2.904, 2.865}}},
    {4,
     4,
     2,
     {{2.774, 2.657, 2.785, 2.312, 2.682},
      {2.633, 2.767, 2.681, 2.833, 2.759},
      {2.696, 2.579, 2.619, 2.925, 2.473},
      {2.601, 2.688, 2.584, 2.736, 2.674},
      {2.697, 2.845, 2.515, 2.663, 2.671}}},
    {4,
     4,
     4,
     {{2.388, 2.671, 2.334, 2.080, 2.228},
      {2.497, 2.328, 2.169, 2.289, 2.196},
      {2.367, 2.101, 2.349, 2.269, 2.192},
      {2.278, 2.416, 2.459, 2.369, 2.337},
      {2.477, 2.384, 2.086, 2.303, 2.039}}},
    {4,
     8,
     1,
     {{2.682, 2.724, 2.723, 2.689, 1.792},
      {1.776, 1.659, 1.748, 1.799, 1.646},
      {1.706, 1.764, 1.766, 1.798, 1.811},
      {1.733, 1.710, 1.634, 1.664, 1.655},
      {1.672, 1.693, 1.652, 1.696, 1.345}}},
    {4,
     8,
     2,
     {{1.454, 1.455, 1.514, 1.335, 1.472},
      {1.467, 1.278, 1.488, 1.557, 1.760},
      {1.508, 1.042, 1.775, 1.712, 1.791},
      {1.752, 1.767, 1.669, 1.724, 1.749},
      {1.792, 1.797, 1.042, 1.790, 1.789}}},
    {4,
     8,
     4,
     {{1.735, 1.755, 1.905, 1.963, 1.998},
      {2.190, 1.384, 1.721, 1.710, 1.763},
      {1.702, 1.708, 1.716, 1.721, 1.711},
      {1.805, 1.694, 1.097, 2.769, 2.702},
      {2.573, 2.627, 2.472, 2.617, 2.701}}},
    {4,
     16,
     1,
     {{2.469, 2.502, 2.362, 2.505, 2.351},
      {2.442, 2.424, 2.461, 2.459, 2.470},
      {2.426, 2.347, 2.442, 2.333, 2.379},
      {2.346, 2.421, 2.418, 2.296, 2.593},
      {2.494, 1.145, 2.416, 2.378, 2.447}}},
    {4,
     16,
     2,
     {{2.667, 2.644, 2.557, 2.017, 1.112},
      {1.994, 1.966, 2.005, 2.040, 1.980},
      {2.021, 2.052, 1.118, 1.983, 1.966},
      {2.101, 2.105, 2.081, 2.040, 2.049},
      {2.075, 2.115, 2.057, 1.378, 1.332}}},
    {6,
     4,
     1,
     {{2.157, 2.220, 2.051, 2.087, 2.125},
      {2.129, 2.134, 2.111, 2.057, 2.021},
      {1.953, 1.915, 1.938, 2.021, 2.147},
      {1.977, 2.032, 2.094, 2.014, 2.040},
      {2.070, 2.016, 2.053, 2.054, 1.985}}},
    {6,
     4,
     2,
     {{2.174, 2.008, 2.012, 2.369, 2.826},
      {2.910, 2.846, 2.556, 2.573, 2.439},
      {2.511, 2.920, 2.219, 2.675, 2.758},
      {2.826, 2.771, 2.680, 2.635, 2.609},
      {2.617, 1.930, 1.781, 1.918, 1.868}}},
    {6,
     4,
     4,
     {{1.634, 1.619, 1.625, 1.626, 1.600},
      {1.673, 1.630, 1.613, 1.606, 1.601},
      {1.614, 1.600, 1.587, 1.613, 1.590},
      {1.638, 1.605, 1.593, 1.591, 1.823},
      {1.618, 1.585, 1.624, 1.598, 1.599}}},
    {6,
     8,
     1,
     {{1.074, 1.084, 1.867, 1.807, 1.794},
      {1.707, 1.558, 1.617, 1.642, 1.585},
      {1.698, 1.422, 1.523, 1.543, 1.650},
      {1.569, 1.148, 1.023, 1.283, 1.003},
      {1.079, 1.004, 1.005, 1.000, 1.005}}},
    {6,
     8,
     2,
     {{1.355, 1.291, 1.301, 1.287, 1.025},
      {1.298, 1.303, 1.041, 1.291, 1.335},
      {1.059, 1.145, 1.262, 1.222, 1.248},
      {1.246, 1.491, 1.541, 1.206, 1.199},
      {1.228, 1.240, 1.229, 1.278, 1.248}}},
    {6,
     16,
     1,
     {{1.269, 1.087, 1.234, 1.268, 1.266},
      {1.286, 1.089, 1.074, 1.336, 1.393},
      {1.316, 1.425, 1.134, 1.074, 1.357},
      {1.395, 1.275, 1.260, 1.257, 1.297},
      {1.250, 1.262, 1.268, 1.250, 1.262}}},
    {8,
     4,
     1,
     {{2.938, 2.557, 3.063, 2.788, 2.632},
      {3.118, 2.602, 2.632, 3.000, 2.788},
      {2.960, 2.525, 2.931, 2.589, 3.845},
      {3.841, 3.768, 3.864, 3.839, 3.716},
      {3.780, 3.766, 3.578, 3.793, 3.669}}},
    {8,
     4,
     2,
     {{3.608, 2.606, 3.719, 3.953, 2.632},
      {2.408, 2.364, 2.378, 2.383, 2.390},
      {2.357, 2.361, 2.372, 2.363, 2.369},
      {2.417, 2.446, 2.373, 2.714, 2.383},
      {2.348, 2.360, 2.357, 2.356, 2.375}}},
    {8,
     4,
     4,
     {{2.323, 2.402, 2.322, 2.327, 2.288},
      {2.470, 2.418, 2.383, 2.367, 2.396},
      {2.662, 2.375, 2.735, 2.375, 2.364},
      {2.418, 2.363, 2.702, 2.371, 2.362},
      {2.424, 2.387, 2.399, 2.364, 2.441}}},
    {8,
     8,
     1,
     {{1.420, 1.587, 1.633, 1.606, 1.632},
      {1.593, 1.684, 1.404, 1.410, 1.677},
      {1.610, 1.385, 1.385, 1.422, 1.647},
      {1.578, 1.352, 1.796, 1.623, 1.423},
      {1.404, 1.397, 1.599, 1.621, 1.429}}},
    {8,
     8,
     2,
     {{1.512, 1.348, 1.501, 1.308, 1.498},
      {1.325, 1.569, 1.498, 1.556, 1.503},
      {1.492, 1.513, 1.515, 1.499, 1.289},
      {1.491, 1.291, 1.283, 1.274, 1.483},
      {1.275, 1.289, 1.500, 1.507, 1.466}}},
    {8,
     16,
     1,
     {{1.089, 1.326, 1.280, 1.050, 1.302},
      {1.313, 1.313, 1.285, 1.298, 1.044},
      {1.231, 1.275, 1.255, 1.248, 1.257},
      {1.243, 1.253, 1.232, 1.274, 1.639},
      {1.040, 1.495, 1.775, 1.422, 1.301}}},
};

const KernelTime* recorded_kernel(const Config& c) {
  for (const auto& k : recorded_kernels) {
    if (c["WPTM"] == k.wptm && c["VWN"] == k.vwn && c["NVEC"] == k.nvec) return &k;
  }
  return nullptr;
}

ExpandedSpace interacting_space() {
  return Space("direct")
      .parameter("WPTM", {2, 4, 6, 8})
      .parameter("VWN", {4, 8, 16})
      .parameter("NVEC", {1, 2, 4})
      .parameter("LX", {1, 2, 4, 8, 16})
      .parameter("LY", {1, 2, 4, 8, 16})
      .where("a recorded kernel", [](const Config& c) { return recorded_kernel(c) != nullptr; })
      .expand();
}

double interacting_time(const Config& c) {
  const auto step = [](double x) { return static_cast<int>(std::log2(x)); };
  return recorded_kernel(c)->by_work_group[step(c["LX"])][step(c["LY"])] * 1e-4;
}

}  // namespace

TEST_CASE(
    "the model search draws from its uncertainty: it leaves the basins its fastest "
    "prediction settles in",
    "[search][model]") {
  // Balanced's budget on a space shaped as PoCL's direct space at 128, no start points, no
  // noise: what is left to miss is what the model's shape cannot see.
  const auto expanded = interacting_space();
  REQUIRE(expanded.size() == 725);
  const int found = found_within_5_percent(
      expanded, interacting_time, 0, SearchStrategy::model,
      SearchSettings::for_level(Level::balanced).budget_for(expanded.size()), 200);
  INFO("within 5% of the optimum: " << found << " of 200");
  CHECK(found >= 185);  // 178 when it always takes the fit's fastest
}
