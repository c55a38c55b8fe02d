// The search strategies and replay tables.
#include "tunekit/search.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <map>
#include <numeric>
#include <random>
#include <set>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include "cache/private_files.hpp"
#include "tunekit/benchmark.hpp"
#include "tunekit/candidate_name.hpp"
#include "tunekit/error.hpp"

namespace tunekit {

SearchSettings SearchSettings::for_level(Level level) {
  SearchSettings s;
  switch (level) {
    // Patience: a search that has gone this many configurations past its start points without
    // a 2% gain stops (chosen by replay on recorded spaces: docs/benchmarks.md, "Time to tuned").
    // Abandon: a family whose best after 6 configurations is 2x behind the leader elsewhere (a
    // CPU kernel family on a GPU, say) is left.
    // Warm patience: the patience once a start point works (the space's own or a neighbouring
    // key's winner): from a configuration known to be good, 12 gained what 40 did on the H100's
    // recorded blocked space (replay with start points, docs/benchmarks.md "Time to tuned").
    // Explore: the configurations a space's search evaluates before the patience may end it.
    // With start points alone deciding, 28 of 30 PoCL tunings stayed near one 1.3-1.45x off the
    // best (issue 29): a search must see enough of the space to leave a poor start point.
    // Good enough: the fraction of the roofline (the key's work at the device's measured peak)
    // at which a tuning stops; a pick it ends on may be 1 / fraction - 1 slower than the best.
    // At 85% a balanced transpose 8192^2 on the H200, start points off, stopped on 3526 GB/s
    // where its best runs at 3958 (12% behind), so from balanced up it is within 5%. Copy-bound
    // kernels reach 85-97% of the measured copy bandwidth; compute-bound ones rarely reach 85%
    // of the multiply-add peak, so it seldom ends theirs.
    case Level::minimal:
      s.fraction = 0.05, s.min_evaluations = 10, s.max_seconds = 30;
      s.patience = 15, s.warm_patience = 5, s.abandon_after = 6, s.explore = 8;
      s.first_sample = 8, s.refine = 8;
      s.warm_until_beaten = false;  // the demo's matmul took 3-6 s more on this machine's PoCL
      s.good_enough = 0.75;
      break;
    case Level::balanced:
      s.patience = 40, s.warm_patience = 12, s.abandon_after = 6, s.explore = 24;
      s.first_sample = 20, s.refine = 24;
      s.good_enough = 0.95;
      break;
    case Level::extensive:
      s.fraction = 0.4, s.min_evaluations = 60, s.max_seconds = 600;
      s.patience = 80, s.warm_patience = 30, s.abandon_after = 12, s.abandon_factor = 3;
      s.explore = 48, s.first_sample = 32, s.refine = 60;
      s.good_enough = 0.98;
      break;
    case Level::full:
      s.strategy = SearchStrategy::exhaustive, s.fraction = 1;
      s.max_seconds = std::numeric_limits<double>::infinity();
      s.good_enough = 0;
      break;
  }
  return s;
}

SearchBudget SearchSettings::budget_for(std::size_t space_size) const {
  const auto share =
      static_cast<std::size_t>(std::ceil(fraction * static_cast<double>(space_size)));
  SearchBudget budget{std::min(space_size, std::max(share, min_evaluations)),
                      max_seconds,
                      patience,
                      std::min(patience, warm_patience),
                      margin,
                      abandon_after,
                      abandon_factor};
  budget.seeded_until_beaten = warm_until_beaten;
  budget.explore = explore;
  budget.refine = refine;
  budget.first_sample = first_sample;
  return budget;
}

namespace {

// Evaluates through a memo, within the budget.
class BudgetedSearch {
 public:
  BudgetedSearch(SearchEvaluator& evaluator, const SearchBudget& budget, std::size_t size)
      : evaluator_(evaluator), budget_(budget), times_(size) {
    // A family that trails the leader (SearchBudget::trails says why; on the H200 a cold matmul
    // 1024, where staged trails blocked, ran 46 candidates instead of 90 and took 15 s, not 30).
    if (budget_.trails) {
      budget_.explore = 0;
      budget_.seeded_until_beaten = false;
    }
  }

  bool exhausted() const {
    return spent() || (counting_patience_ && without_gain_ >= patience_ &&
                       result_.evaluated.size() >= budget_.explore);
  }
  // Out of evaluations or seconds, or ended from outside: what ends the refinement too (the
  // patience does not).
  bool spent() const {
    return result_.evaluated.size() >= budget_.max_evaluations ||
           result_.evaluated.size() >= times_.size() ||
           evaluator_.spent_seconds() >= budget_.max_seconds || evaluator_.finished() ||
           abandoned();
  }
  std::optional<std::size_t> best() const { return result_.best; }
  const std::vector<std::size_t>& evaluated() const { return result_.evaluated; }
  // Far behind the leader once abandon_point() configurations were evaluated. Never when
  // abandon_after is unset (the maximum: the `full` level, a user's own budget).
  bool abandoned() const { return behind_leader() && result_.evaluated.size() >= abandon_point(); }
  // Evaluations the search makes whatever their times (unless its seconds run out or it is
  // ended from outside): the floor and the patience left, the budget, the point at which a family
  // behind the leader is abandoned. Only these are built ahead: on NVIDIA a process compiles one
  // program at a time, so a build ahead that is never measured delays one that is.
  std::size_t certain_left() const {
    if (spent()) return 0;
    const std::size_t done = result_.evaluated.size();
    std::size_t left = std::min(budget_.max_evaluations, times_.size()) - done;
    if (counting_patience_ && !refining_) {  // the patience does not end the refinement
      const std::size_t by_floor = budget_.explore > done ? budget_.explore - done : 0;
      const std::size_t by_patience = patience_ > without_gain_ ? patience_ - without_gain_ : 0;
      left = std::min(left, std::max(by_floor, by_patience));
    }
    if (behind_leader()) left = std::min(left, abandon_point() - done);  // not abandoned yet
    return left;
  }
  // From now on, evaluations that do not beat the best by more than the margin count towards
  // the patience (the start points never do: they are what is known). The seeded patience
  // applies while a start point found on this device leads.
  void start_counting_patience(const SearchStarts& starts) {
    counting_patience_ = true;
    without_gain_ = 0;
    starts_ = result_.evaluated.size();
    any_start_worked_ = std::isfinite(result_.best_time);
    a_start_worked_ = false;
    for (std::size_t i : starts.vouched) {
      if (visited(i) && std::isfinite(*times_[i])) {
        a_start_worked_ = true;
        start_best_time_ = std::min(start_best_time_, *times_[i]);
      }
    }
    // Another device's start point clearly faster than this device's: the latter are not its best.
    for (std::size_t i : starts.unvouched) {
      if (a_start_worked_ && visited(i) && std::isfinite(*times_[i]) &&
          clearly_faster(std::max(*times_[i], evaluator_.upper(i)), start_best_time_,
                         budget_.margin)) {
        starts_beaten_ = true;
      }
    }
    // A space that trails the leader keeps the seeded patience whoever found its start points:
    // it is a side bet, searched only while it gains (SearchBudget::trails).
    const bool seeded = (a_start_worked_ || (budget_.trails && any_start_worked_)) &&
                        !(starts_beaten_ && budget_.seeded_until_beaten);
    patience_ = seeded ? std::min(budget_.patience, budget_.seeded_patience) : budget_.patience;
  }
  // The strategy has ended; refine() climbs from its best, within its own allowance.
  void start_refining() {
    refining_ = true;
    result_.ended_by = ending();
  }
  // Whether refining is worth it: the space does not trail the leader, or its best has come
  // within the margin of it.
  bool worth_refining() const {
    return !budget_.trails ||
           !clearly_faster(evaluator_.leader_time(), result_.best_time, budget_.margin);
  }
  // No start point worked, or one was beaten by the margin: the start points are not this
  // device's best, and what the search found on its own is all there is to go by.
  bool on_its_own() const { return !a_start_worked_ || starts_beaten_; }
  bool visited(std::size_t i) const { return times_[i].has_value(); }
  bool cheap(std::size_t i) const { return evaluator_.cheap(i); }
  // Tells the evaluator what comes next: the first of `configs` not evaluated yet, as many as
  // the evaluations certain to come (certain_left), and at most `at_most`.
  void prefetch(const std::vector<std::size_t>& configs, bool likely,
                std::size_t at_most = std::numeric_limits<std::size_t>::max()) {
    std::vector<std::size_t> next;
    std::unordered_set<std::size_t> listed;
    const std::size_t left = std::min(certain_left(), at_most);
    for (std::size_t i : configs) {
      if (next.size() >= left) break;
      if (!visited(i) && listed.insert(i).second) next.push_back(i);
    }
    if (!next.empty()) evaluator_.prefetch(next, likely);
  }

  // Time of configuration i (infinity when it failed); evaluates it if new.
  double time(std::size_t i) {
    if (!times_[i]) {
      const auto t = evaluator_.evaluate(i);
      times_[i] = t ? *t : std::numeric_limits<double>::infinity();
      result_.evaluated.push_back(i);
      // A gain the interval supports: its upper end beats the best by the margin (noise that
      // made one sample fast must not keep a search going, nor one slow sample end it).
      const double upper = std::max(*times_[i], t ? evaluator_.upper(i) : *times_[i]);
      const bool gain = clearly_faster(upper, result_.best_time, budget_.margin) ||
                        !std::isfinite(result_.best_time);
      without_gain_ = gain ? 0 : without_gain_ + 1;
      // The seeded patience trusts the start points to be near this device's best. A search that
      // beats all of them by the margin has shown they are not (a start point from another
      // device, a neighbour whose best differs): from then on the full patience applies, so
      // that a poor start point cannot end the search early.
      if (a_start_worked_ && clearly_faster(upper, start_best_time_, budget_.margin)) {
        starts_beaten_ = true;
        if (budget_.seeded_until_beaten) patience_ = budget_.patience;
      }
      if (*times_[i] < result_.best_time) {
        result_.best_time = *times_[i];
        result_.best = i;
      }
    }
    return *times_[i];
  }

  // Why the strategy ended short of the whole space (SearchResult::ended_by); empty where it
  // measured everything or was ended from outside (the tuning says why: good enough, a stop).
  std::string ending() const {
    const std::size_t done = result_.evaluated.size();
    if (done >= times_.size() || evaluator_.finished()) return {};
    const auto number = [](double value) {  // 2, 0.5, 120: no trailing zeros
      char text[32];
      std::snprintf(text, sizeof text, "%g", value);
      return std::string(text);
    };
    if (abandoned()) {
      return "the space was left: its best ran past " + number(budget_.abandon_factor) +
             "x the leader's time elsewhere";
    }
    if (done >= budget_.max_evaluations) {
      return "the search's budget of " + std::to_string(budget_.max_evaluations) +
             " configurations was spent";
    }
    if (evaluator_.spent_seconds() >= budget_.max_seconds) {
      return "the search's time limit of " + number(budget_.max_seconds) + " s was spent";
    }
    if (counting_patience_ && without_gain_ >= patience_ && done >= budget_.explore) {
      return "the search's " + std::string(patience_ < budget_.patience ? "warm " : "") +
             "patience ended it: " + std::to_string(without_gain_) +
             " configurations in a row gained less than " + number(100 * budget_.margin) + "%";
    }
    return {};
  }

  SearchResult take() {
    result_.trusts_start_points = !on_its_own();
    return std::move(result_);
  }

 private:
  SearchEvaluator& evaluator_;
  SearchBudget budget_;
  std::vector<std::optional<double>> times_;
  SearchResult result_;
  bool counting_patience_ = false;
  std::size_t without_gain_ = 0;
  std::size_t patience_ = 0;  // the budget's, or its seeded one while a start point leads
  std::size_t starts_ = 0;    // start points evaluated
  bool any_start_worked_ = false;
  bool a_start_worked_ = false;  // a vouched start point worked
  bool starts_beaten_ = false;   // a configuration beat the best vouched start point by the margin
  bool refining_ = false;
  double start_best_time_ = std::numeric_limits<double>::infinity();  // the best vouched start's

  // Whether abandoning is on and this space's best is abandon_factor times behind the leader.
  bool behind_leader() const {
    return budget_.abandon_after != std::numeric_limits<std::size_t>::max() &&
           !(result_.best_time <= budget_.abandon_factor * evaluator_.leader_time());
  }
  // The evaluations after which a space behind the leader is abandoned: judged by the start
  // points when one of them works (they are the space's best known configurations, on this
  // device or another), else by the first abandon_after configurations.
  std::size_t abandon_point() const {
    const bool judged_by_starts = starts_ > 0 && any_start_worked_;
    return judged_by_starts ? std::min(starts_, budget_.abandon_after) : budget_.abandon_after;
  }
};

std::optional<std::size_t> random_unvisited(const BudgetedSearch& s, std::size_t size,
                                            std::mt19937_64& rng) {
  std::uniform_int_distribution<std::size_t> pick(0, size - 1);
  for (int attempt = 0; attempt < 64; ++attempt) {
    const std::size_t i = pick(rng);
    if (!s.visited(i)) return i;
  }
  for (std::size_t i = 0; i < size; ++i) {
    if (!s.visited(i)) return i;
  }
  return std::nullopt;
}

// Simulated annealing with a relative acceptance criterion (times differ by orders of magnitude
// between devices): a move that is x% slower is taken with probability exp(-x / T).
void anneal(BudgetedSearch& s, const ExpandedSpace& space, const std::vector<std::size_t>& starts,
            std::size_t planned, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> coin(0, 1);
  // Begin at the best start point that works (measured already), else somewhere random.
  std::optional<std::size_t> start;
  for (std::size_t i : starts) {
    if (i >= space.size() || !s.visited(i) || !std::isfinite(s.time(i))) continue;
    if (!start || s.time(i) < s.time(*start)) start = i;
  }
  if (!start) {
    if (s.exhausted()) return;  // the start points spent the budget: measure nothing more
    start = random_unvisited(s, space.size(), rng);
  }
  if (!start) return;
  std::size_t current = *start;
  double current_time = s.time(current);
  double temperature = 0.5;
  // Cool from 0.5 (a 35% slower move is taken half the time) to 0.005 over the planned moves.
  const double cooling =
      std::pow(0.01, 1.0 / static_cast<double>(std::max<std::size_t>(planned, 2)));
  int idle_moves = 0;  // moves that evaluated nothing new
  while (!s.exhausted()) {
    if (!std::isfinite(current_time) || idle_moves > 16) {
      // Stuck on a failure or in a fully explored region: restart from somewhere new.
      auto next = random_unvisited(s, space.size(), rng);
      if (!next) return;
      current = *next;
      current_time = s.time(current);
      idle_moves = 0;
      continue;
    }
    const auto neighbours = space.neighbours(current);
    if (neighbours.empty()) {
      idle_moves = 1000;
      continue;
    }
    s.prefetch(neighbours, false);  // the next move is one of them
    // Prefer a neighbour not measured yet: re-visiting costs a move but teaches nothing.
    std::size_t pick = rng() % neighbours.size();
    for (int attempt = 0; attempt < 8 && s.visited(neighbours[pick]); ++attempt) {
      pick = rng() % neighbours.size();
    }
    // A neighbour built already (by an earlier tuning in this process) costs a measurement, not
    // a compilation: the first such one not evaluated, from the pick on, goes first. The scan
    // draws nothing from `rng`, so with no cheap neighbour the walk is what it always was.
    std::size_t candidate = neighbours[pick];
    if (!s.cheap(candidate)) {
      for (std::size_t step = 1; step < neighbours.size(); ++step) {
        const std::size_t other = neighbours[(pick + step) % neighbours.size()];
        if (!s.visited(other) && s.cheap(other)) {
          candidate = other;
          break;
        }
      }
    }
    const bool fresh = !s.visited(candidate);
    const double candidate_time = s.time(candidate);
    idle_moves = fresh ? 0 : idle_moves + 1;
    const double worse_by = (candidate_time - current_time) / current_time;
    if (worse_by <= 0 || coin(rng) < std::exp(-worse_by / temperature)) {
      current = candidate;
      current_time = candidate_time;
    }
    if (fresh) temperature *= cooling;
  }
}

// Climbs from the best configuration found to the best of its adjacent ones (space.hpp), until
// the best stops moving or `allowance` more configurations were evaluated. A search ended by its
// patience or budget often stops a step from a better configuration (issue 29: a PoCL winner
// with NVEC=2 was 1.18x the NVEC=4 one beside it), and noise decides where that is. Where no
// single step gains, it tries the trades (one parameter up, another down): on an AVX-512 PoCL
// at 512, VWN=16,NVEC=2 was 1.5x faster than the VWN=8,NVEC=4 that every search settled on,
// and both single steps from it (VWN=16,NVEC=4 and VWN=8,NVEC=2) were slower. Where a start
// point worked and nothing beat it by the margin, the start points are trusted as they are (the
// warm patience's reasoning): no trades. A space that trails the leader (SearchBudget::trails)
// is refined only once its best is within the margin of it.
void refine(BudgetedSearch& s, const ExpandedSpace& space, std::size_t allowance) {
  s.start_refining();
  if (!s.worth_refining()) return;
  std::size_t evaluated = 0;
  std::unordered_set<std::size_t> centres, traded;
  // Evaluates `configs` not seen yet; false once the allowance or the budget is spent.
  const auto measure = [&](const std::vector<std::size_t>& configs) {
    s.prefetch(configs, true, allowance - std::min(allowance, evaluated));
    for (std::size_t c : configs) {
      if (s.visited(c)) continue;
      if (s.spent() || evaluated >= allowance) return false;
      s.time(c);
      ++evaluated;
    }
    return true;
  };
  while (const auto best = s.best()) {
    if (centres.insert(*best).second) {
      if (!measure(space.adjacent(*best))) return;
    } else if (s.on_its_own() && traded.insert(*best).second) {
      if (!measure(space.trades(*best))) return;
    } else {
      return;  // its steps and trades are measured: a local best
    }
  }
}

// A model of a configuration's time: a ridge regression of its logarithm on one indicator per
// parameter value (each parameter's first value is the baseline), so additive in the parameters,
// which is how a kernel's time mostly moves with its tile sizes and vector widths. Refitted after
// every batch (model_batch): a few dozen unknowns cost microseconds beside a measurement. It also
// draws weights from the fit's uncertainty (draw), which is how the search explores.
class TimeModel {
 public:
  explicit TimeModel(const ExpandedSpace& space) : space_(space) {
    for (std::size_t p = 0; p < space.parameter_count(); ++p) {
      first_.push_back(unknowns_);
      unknowns_ += space.value_count(p) - 1;
    }
  }

  // Fits to `samples` (configuration, seconds); a failed configuration counts as four times the
  // slowest that worked, so that the values it has lose favour instead of being tried again.
  void fit(const std::vector<std::pair<std::size_t, double>>& samples) {
    double slowest = 0;
    for (const auto& [config, seconds] : samples) {
      if (std::isfinite(seconds)) slowest = std::max(slowest, seconds);
    }
    if (slowest <= 0) return;  // nothing worked yet: no model
    const std::size_t n = unknowns_;
    std::vector<double> normal(n * n, 0.0), rhs(n, 0.0);
    for (const auto& [config, seconds] : samples) {
      const double y = std::log(std::isfinite(seconds) ? seconds : 4 * slowest);
      const auto x = indicators(config);
      for (std::size_t a : x) {
        rhs[a] += y;
        for (std::size_t b : x) normal[a * n + b] += 1;
      }
    }
    // The ridge keeps values seen once or never near the baseline; the intercept is free.
    for (std::size_t a = 1; a < n; ++a) normal[a * n + a] += 1.0;
    normal[0] += 1e-9;
    // One factorisation serves the fit and its draws.
    factor_ = cholesky(normal, n);
    weights_ = solve(factor_, std::move(rhs), n);
    // The spread of the times that were measured (a failure's stand-in time is no measurement).
    double squares = 0;
    std::size_t measured = 0;
    for (const auto& [config, seconds] : samples) {
      if (!std::isfinite(seconds)) continue;
      const double residual = std::log(seconds) - predict(config);
      squares += residual * residual, ++measured;
    }
    spread_ = std::sqrt(squares / static_cast<double>(measured));
  }
  bool fitted() const { return !weights_.empty(); }
  double predict(std::size_t config) const { return predict(weights_, config); }
  double predict(const std::vector<double>& weights, std::size_t config) const {
    double log_time = 0;
    for (std::size_t a : indicators(config)) log_time += weights[a];
    return log_time;
  }
  // Weights drawn from the fit's posterior, a Gaussian around its weights with covariance
  // (scale * spread)^2 A^-1 (A: the ridge's normal matrix, spread: the residuals' RMS).
  // Values seen rarely are uncertain, and a draw may favour them where the fit does not.
  std::vector<double> draw(std::mt19937_64& rng, double scale) const {
    const std::size_t n = weights_.size();
    std::normal_distribution<double> unit(0, 1);
    std::vector<double> z(n);
    for (double& v : z) v = unit(rng);
    // x = L^-T z has covariance (L L^T)^-1 = A^-1.
    std::vector<double> w = weights_;
    std::vector<double> x(n, 0.0);
    for (std::size_t r = n; r-- > 0;) {
      double sum = z[r];
      for (std::size_t c = r + 1; c < n; ++c) sum -= factor_[c * n + r] * x[c];
      x[r] = sum / factor_[r * n + r];
      w[r] += scale * spread_ * x[r];
    }
    return w;
  }

 private:
  std::vector<std::size_t> indicators(std::size_t config) const {
    std::vector<std::size_t> x{0};
    for (std::size_t p = 0; p < first_.size(); ++p) {
      const std::size_t v = space_.value_index(config, p);
      if (v > 0) x.push_back(first_[p] + v - 1);
    }
    return x;
  }
  // The lower triangle L with L L^T = m (positive definite: the ridge; a pivot that rounding
  // made tiny is held above zero).
  static std::vector<double> cholesky(const std::vector<double>& m, std::size_t n) {
    std::vector<double> l(n * n, 0.0);
    for (std::size_t j = 0; j < n; ++j) {
      double d = m[j * n + j];
      for (std::size_t k = 0; k < j; ++k) d -= l[j * n + k] * l[j * n + k];
      d = std::sqrt(std::max(d, 1e-12));
      l[j * n + j] = d;
      for (std::size_t i = j + 1; i < n; ++i) {
        double v = m[i * n + j];
        for (std::size_t k = 0; k < j; ++k) v -= l[i * n + k] * l[j * n + k];
        l[i * n + j] = v / d;
      }
    }
    return l;
  }
  // The solution of (L L^T) w = b: L y = b forward, then L^T w = y back.
  static std::vector<double> solve(const std::vector<double>& l, std::vector<double> b,
                                   std::size_t n) {
    for (std::size_t r = 0; r < n; ++r) {
      for (std::size_t c = 0; c < r; ++c) b[r] -= l[r * n + c] * b[c];
      b[r] /= l[r * n + r];
    }
    for (std::size_t r = n; r-- > 0;) {
      for (std::size_t c = r + 1; c < n; ++c) b[r] -= l[c * n + r] * b[c];
      b[r] /= l[r * n + r];
    }
    return b;
  }

  const ExpandedSpace& space_;
  std::vector<std::size_t> first_;  // each parameter's first unknown
  std::size_t unknowns_ = 1;        // unknown 0: the intercept
  std::vector<double> weights_;
  std::vector<double> factor_;  // the normal matrix's Cholesky factor (draw)
  double spread_ = 0;           // the fit's residuals' RMS, in log time
};

// How many configurations the model names at a time: the build threads' default
// (Settings::build_thread_count), which build them side by side.
constexpr std::size_t model_batch = 4;
// Of each batch, how many are the fastest under weights drawn from the model's uncertainty
// (Thompson sampling) rather than under its fit, and how far the draws reach (a multiple of the
// fit's residual spread). Always taking the fit's fastest settled in basins that an additive model
// cannot see past: on PoCL's direct space at 128, WPTM=6 is the best only with VWN=8 and NVEC=1,
// and 27 of 200 searches without start points stayed at WPTM=2,VWN=8,NVEC=4 or
// WPTM=8,VWN=16,NVEC=1. Replayed on four recorded spaces, start points off and on, 0.5-10%
// noise, 600 seeds each (docs/benchmarks.md, "The model search explores"): 109 more picks within
// 5% of 14,400 (pocl-direct-128 off: +24 to +31 of 600 a cell), 2% more evaluations; on two
// spaces recorded afterwards, 52 fewer of 7,200 (short searches that another device's start
// points misled lost most).
constexpr std::size_t model_drawn = 2;
constexpr double model_draw_reach = 2;

// A random first sample (the start points count towards it), then always the few configurations
// the model predicts fastest among those not measured. Replayed with noise on recorded spaces, it
// lands within 5% of the optimum far more often than annealing at the same number of
// evaluations (docs/benchmarks.md, "A search a model guides"): a time depends on each
// parameter's value more than on where a walk happens to stand.
void model_search(BudgetedSearch& s, const ExpandedSpace& space, std::size_t first_sample,
                  std::mt19937_64& rng) {
  std::vector<std::size_t> sample;
  for (std::size_t attempt = 0;
       sample.size() + s.evaluated().size() < first_sample && attempt < 4 * first_sample;
       ++attempt) {
    if (auto i = random_unvisited(s, space.size(), rng);
        i && std::find(sample.begin(), sample.end(), *i) == sample.end()) {
      sample.push_back(*i);
    }
  }
  s.prefetch(sample, true);
  for (std::size_t i : sample) {
    if (s.exhausted()) return;
    s.time(i);
  }
  TimeModel model(space);
  std::vector<std::pair<std::size_t, double>> samples;
  std::vector<std::pair<double, std::size_t>> ranked;  // (predicted log time, configuration)
  while (!s.exhausted()) {
    samples.clear();
    for (std::size_t i : s.evaluated()) samples.emplace_back(i, s.time(i));
    model.fit(samples);
    if (!model.fitted()) {  // nothing works yet: keep sampling
      auto i = random_unvisited(s, space.size(), rng);
      if (!i) return;
      s.time(*i);
      continue;
    }
    ranked.clear();
    for (std::size_t i = 0; i < space.size(); ++i) {
      if (!s.visited(i)) ranked.emplace_back(model.predict(i), i);
    }
    if (ranked.empty()) return;
    // The best few predicted are measured together before the model is fitted again: each is
    // built ahead (build_pool.hpp) as soon as it is named, and a plan that changed after every
    // measurement left builds behind that nothing measured (on NVIDIA, where a process compiles
    // one program at a time, each delayed the builds that were measured).
    const std::size_t ahead = std::min(model_batch, ranked.size());
    const std::size_t fitted_fastest = ahead - std::min(model_drawn, ahead);
    std::partial_sort(ranked.begin(), ranked.begin() + static_cast<std::ptrdiff_t>(fitted_fastest),
                      ranked.end());
    std::vector<std::size_t> next;
    for (std::size_t k = 0; k < fitted_fastest; ++k) next.push_back(ranked[k].second);
    while (next.size() < ahead) {
      const auto drawn = model.draw(rng, model_draw_reach);
      std::optional<std::pair<double, std::size_t>> fastest;
      for (std::size_t k = fitted_fastest; k < ranked.size(); ++k) {
        const std::size_t i = ranked[k].second;
        if (std::find(next.begin(), next.end(), i) != next.end()) continue;
        const double t = model.predict(drawn, i);
        if (!fastest || t < fastest->first) fastest = std::pair{t, i};
      }
      next.push_back(fastest->second);
    }
    s.prefetch(next, true);
    for (std::size_t i : next) {
      if (s.exhausted()) return;
      s.time(i);
    }
  }
}

}  // namespace

SearchStarts search_starts(const ExpandedSpace& space, std::string_view device,
                           const std::vector<std::size_t>& known, bool own) {
  SearchStarts starts;
  const auto listed = [&](std::size_t i) {
    return std::find(starts.vouched.begin(), starts.vouched.end(), i) != starts.vouched.end();
  };
  if (own) {
    for (std::size_t i : space.starts()) {
      (space.vouches(i, device) ? starts.vouched : starts.unvouched).push_back(i);
    }
  }
  for (std::size_t i : known) {
    if (i < space.size() && !listed(i)) starts.vouched.push_back(i);
  }
  std::erase_if(starts.unvouched, listed);
  return starts;
}

std::vector<std::size_t> scouts_of(std::size_t size, std::size_t count, std::uint64_t seed) {
  std::vector<std::size_t> all(size), picked;
  std::iota(all.begin(), all.end(), std::size_t{0});
  std::mt19937_64 rng(seed);
  std::sample(all.begin(), all.end(), std::back_inserter(picked), count, rng);
  return picked;
}

SearchResult search(SearchStrategy strategy, const ExpandedSpace& space, SearchEvaluator& evaluator,
                    const SearchBudget& budget, std::uint64_t seed,
                    const std::vector<std::size_t>& extra_starts, bool own_starts) {
  return search(strategy, space, evaluator, budget, seed,
                search_starts(space, {}, extra_starts, own_starts));
}

SearchResult search(SearchStrategy strategy, const ExpandedSpace& space, SearchEvaluator& evaluator,
                    const SearchBudget& budget, std::uint64_t seed, const SearchStarts& given) {
  BudgetedSearch s(evaluator, budget, space.size());
  if (space.size() == 0) return s.take();
  std::mt19937_64 rng(seed);
  // The start points first, whatever the strategy: they are the best known, here (vouched) or
  // on another device. Then the scouts, as the strategy's first draws. An index past the space
  // is neither.
  SearchStarts within = given;
  const auto outside = [&](std::size_t i) { return i >= space.size(); };
  std::erase_if(within.vouched, outside);
  std::erase_if(within.unvouched, outside);
  std::erase_if(within.scouted, outside);
  std::vector<std::size_t> starts = within.vouched;
  starts.insert(starts.end(), within.unvouched.begin(), within.unvouched.end());
  std::vector<std::size_t> planned = starts;
  planned.insert(planned.end(), within.scouted.begin(), within.scouted.end());
  std::vector<std::size_t> order;
  if (strategy == SearchStrategy::random) {
    order.resize(space.size());
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), rng);
  }
  if (strategy == SearchStrategy::exhaustive || strategy == SearchStrategy::random) {
    // The whole planned list is known: exhaustive's in order, random's shuffled (annealing and
    // the model choose as they go, and tell the evaluator then).
    for (std::size_t i = 0; i < space.size(); ++i) planned.push_back(order.empty() ? i : order[i]);
  }
  s.prefetch(planned, true);
  for (std::size_t i : starts) {
    if (s.exhausted()) break;
    s.time(i);
  }
  s.start_counting_patience(within);
  for (std::size_t i : within.scouted) {
    if (s.exhausted()) break;
    s.time(i);
  }
  switch (strategy) {
    case SearchStrategy::exhaustive:
      for (std::size_t i = 0; i < space.size() && !s.exhausted(); ++i) s.time(i);
      break;
    case SearchStrategy::random: {
      for (std::size_t i = 0; i < order.size() && !s.exhausted(); ++i) s.time(order[i]);
      break;
    }
    case SearchStrategy::annealing:
      starts.insert(starts.end(), within.scouted.begin(), within.scouted.end());
      anneal(s, space, starts, std::min(budget.max_evaluations, space.size()), rng);
      break;
    case SearchStrategy::model:
      model_search(s, space, budget.first_sample, rng);
      break;
  }
  refine(s, space, budget.refine);
  return s.take();
}

std::optional<double> ReplayEvaluator::evaluate(std::size_t config) {
  const auto it = table_.find(space_[config].to_string());
  if (it == table_.end()) {
    throw AutotuneError(ErrorKind::cache,
                        "the replay table has no entry for " + space_[config].to_string());
  }
  spent_ += it->second.cost_seconds;
  return it->second.time;
}

void save_replay_table(const std::filesystem::path& path, const ReplayTable& table) {
  std::ostringstream out;
  out << "# tunekit replay table: config<TAB>time_seconds|failed<TAB>cost_seconds\n";
  out.precision(9);
  for (const auto& [config, e] : table) {
    out << config << '\t';
    if (e.time)
      out << *e.time;
    else
      out << "failed";
    out << '\t' << e.cost_seconds << '\n';
  }
  detail::write_user_file(path, out.str());  // whole or not at all; never into a FIFO or device
}

namespace {
// A time or cost of a replay table: a whole finite number of seconds, not negative.
std::optional<double> replay_seconds(const std::string& field) {
  double value = 0;
  const auto [end, error] = std::from_chars(field.data(), field.data() + field.size(), value);
  if (error != std::errc{} || end != field.data() + field.size() || !std::isfinite(value) ||
      value < 0) {
    return std::nullopt;
  }
  return value;
}
}  // namespace

ReplayTable parse_replay_table(std::string_view text, std::string_view source) {
  ReplayTable table;
  std::istringstream in{std::string(text)};
  std::string line;
  const auto bad_line = [&](int number, const std::string& why) {
    return AutotuneError(ErrorKind::cache,
                         std::string(source) + ":" + std::to_string(number) + ": " + why);
  };
  for (int number = 1; std::getline(in, line); ++number) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::string config, time, cost;
    if (!std::getline(fields, config, '\t') || !std::getline(fields, time, '\t') ||
        !std::getline(fields, cost)) {
      throw bad_line(number, "expected config, time and cost separated by tabs");
    }
    RecordedEvaluation e;
    if (time != "failed") {
      e.time = replay_seconds(time);
      // A kernel never runs in no time (a live measurement of 0 is refused as invalid), and a 0
      // would make the model's fit of log times NaN.
      if (!e.time || *e.time <= 0) {
        throw bad_line(number, "the time '" + printable(time, 40) +
                                   "' is not a finite number of seconds above 0, nor 'failed'");
      }
    }
    const auto spent = replay_seconds(cost);
    if (!spent) {
      throw bad_line(number, "the cost '" + printable(cost, 40) +
                                 "' is not a finite number of seconds, at least 0");
    }
    e.cost_seconds = *spent;
    if (!table.emplace(config, e).second) {
      throw bad_line(number, "'" + printable(config, 200) + "' is listed twice");
    }
  }
  return table;
}

ReplayTable load_replay_table(const std::filesystem::path& path) {
  // A path the user names: a link is followed; never a FIFO, nor more than max_file_size.
  const detail::FileRead read = detail::read_file(path, detail::Links::follow);
  if (read.kind != detail::FileRead::ok) {
    throw AutotuneError(ErrorKind::cache,
                        "could not read " + path.string() +
                            (read.kind == detail::FileRead::directory ? ": it is a directory"
                             : read.error.empty()                     ? std::string()
                                                                      : ": " + read.error));
  }
  return parse_replay_table(read.bytes, path.string());
}

ReplayTable replay_table_from(const TuningReport& report, std::string_view space_name) {
  ReplayTable table;
  for (const auto& outcome : report.outcomes) {
    const auto parts = split_candidate_name(outcome.name);
    if (!parts || parts->space != space_name) continue;
    if (outcome.status == OutcomeStatus::skipped) continue;  // never measured: not a recording
    RecordedEvaluation e;
    if (outcome.ok()) e.time = outcome.median;
    e.cost_seconds = outcome.cost_seconds;
    table[std::string(parts->config)] = e;
  }
  return table;
}

ExpandedSpace space_from_table(const ReplayTable& table, std::string name) {
  std::vector<std::string> names;
  std::map<std::string, std::set<std::int64_t>> values;
  for (const auto& [config, e] : table) {
    std::vector<std::string> seen;
    try {
      for (auto& [parameter, value] : parse_config(config)) {
        values[parameter].insert(value);
        seen.push_back(std::move(parameter));
      }
    } catch (const std::invalid_argument& why) {
      // A malformed configuration is the table's error (kind cache), never a bare
      // std::invalid_argument (fuzz/fuzz_replay_table.cpp found a repeated name escaping so).
      throw AutotuneError(ErrorKind::cache, "replay table: '" + config + "' " + why.what());
    }
    if (names.empty()) names = seen;
    if (seen != names) {
      throw AutotuneError(ErrorKind::cache, "replay table: '" + config + "' has other parameters");
    }
  }
  Space space(std::move(name));
  for (const auto& parameter : names) {
    space.parameter(parameter, {values[parameter].begin(), values[parameter].end()});
  }
  space.where("recorded", [&table](const Config& c) { return table.count(c.to_string()) > 0; });
  return space.expand();
}

}  // namespace tunekit
