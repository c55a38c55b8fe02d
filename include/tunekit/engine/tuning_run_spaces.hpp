// TuningRun's search of its plan's spaces, the definitions of those members (their comments are
// in the class, tuning_run.hpp): ranking the spaces by their start points or scouts, each
// space's search within the part of it the device can run, measuring what a search left when
// nothing worked, and the climb from the race's winner. Included at the end of tuning_run.hpp,
// not on its own.
#pragma once

#include "tunekit/candidate_name.hpp"
#include "tunekit/engine/tuning_run.hpp"

namespace tunekit {

template <class Key, class Client, class Set, class... Inputs>
void TuningRun<Key, Client, Set, Inputs...>::search_spaces(const TuningPlan& plan,
                                                           const PlannedLevel& level) {
  const bool several = std::count_if(level.spaces.begin(), level.spaces.end(),
                                     [](const PlannedSpace& s) { return s.whole; }) > 1;
  struct Ranked {
    double rank;        // the best time of its start points or scouts
    double best_start;  // of its start points alone (SearchBudget::trails)
    const PlannedSpace* space;
  };
  std::vector<Ranked> order;
  for (const PlannedSpace& space : level.spaces) {
    Ranked ranked{std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity(),
                  &space};
    if (space.whole) {
      // Start points that never ran (over the device's limits: skipped unmeasured) or that
      // all failed (a kernel another device's compiler rejects) say nothing of the space's
      // best: where several spaces are ranked, the space is then scouted as one without any.
      ranked.rank = best_of(plan.opening(space, known_));
      if (several && !std::isfinite(ranked.rank)) {
        const auto measuring = std::chrono::steady_clock::now();
        ranked.rank = best_of(scout(plan, space));
        // They are the search's first draws: its time limit counts them.
        searched_space(plan, space.entry).seconds += detail::seconds_since(measuring);
      } else {
        // Only start points judge a side bet (trails): random scouts say little of a best.
        ranked.best_start = ranked.rank;
      }
    }
    order.push_back(ranked);
  }
  std::stable_sort(order.begin(), order.end(),
                   [](const Ranked& a, const Ranked& b) { return a.rank < b.rank; });
  for (const Ranked& ranked : order) search_space(plan, *ranked.space, ranked.best_start);
  // A search that ran out of budget with nothing working has not shown that nothing works:
  // the configurations it never ran are measured in order, up to a cap.
  if (!std::isfinite(leader_)) {
    for (const PlannedSpace& space : level.spaces) exhaust(space);
  }
}

template <class Key, class Client, class Set, class... Inputs>
void TuningRun<Key, Client, Set, Inputs...>::exhaust(const PlannedSpace& space) {
  std::size_t measured = 0;
  for (std::size_t i : space.members) {
    if (std::isfinite(leader_) || measured >= undecided_cap) return;
    if (!unmeasured(i)) continue;
    measure_one(i);
    ++measured;
  }
}

template <class Key, class Client, class Set, class... Inputs>
void TuningRun<Key, Client, Set, Inputs...>::search_space(const TuningPlan& plan,
                                                          const PlannedSpace& space,
                                                          double best_start) {
  if (!space.whole) {
    (void)best_of(space.members);  // too few to search: each is measured
    return;
  }
  Searched& searched = searched_space(plan, space.entry);
  const ExpandedSpace& expanded = searched.part->space();
  if (expanded.size() == 0) return;  // every configuration is over the device's limits
  struct LiveEvaluator final : SearchEvaluator {
    TuningRun* run;
    std::size_t first;
    const SpacePart* part;
    std::size_t index(std::size_t config) const { return first + part->whole_index(config); }
    std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
    void prefetch(const std::vector<std::size_t>& configs, bool likely) override {
      if (!run->ahead_ || run->finished_) return;
      std::vector<std::size_t> candidates(configs);
      for (auto& c : candidates) c = index(c);
      run->plan_builds(candidates, likely);
    }
    std::optional<double> evaluate(std::size_t config) override {
      if (run->unmeasured(index(config))) run->measure_one(index(config));
      const auto& outcome = run->outcomes_[index(config)];
      if (!outcome.ok()) return std::nullopt;
      return outcome.median;
    }
    double before = 0;  // the space's seconds spent before its search: its scouts'
    double spent_seconds() const override { return before + detail::seconds_since(started); }
    double upper(std::size_t config) const override { return run->outcomes_[index(config)].high; }
    bool cheap(std::size_t config) const override {
      const std::size_t i = index(config);
      return i < run->built_before_.size() && run->built_before_[i];
    }
    double leader_time() const override { return run->leader_; }
    bool finished() const override { return run->finished_; }
  } evaluator;
  evaluator.run = this;
  evaluator.first = plan.entries()[space.entry].first;
  evaluator.part = &*searched.part;
  evaluator.before = searched.seconds;
  // This device's start points vouch; other devices' are measured but trusted for nothing.
  SearchStarts starts = search_starts(
      expanded, report_.device, searched.part->indices_of(plan.known_configs(space.entry, known_)),
      plan.search_settings().start_points);
  starts.scouted = searched.scouts;
  SearchBudget budget = plan.search_settings().budget_for(expanded.size());
  budget.trails = std::isfinite(best_start) && clearly_faster(leader_, best_start, budget.margin);
  const SearchResult result =
      tunekit::search(plan.search_settings().strategy, expanded, evaluator, budget, seed_, starts);
  searched.seconds = evaluator.spent_seconds();
  searched.trusts_start_points = result.trusts_start_points;
  searched.ended_by = result.ended_by;
}

template <class Key, class Client, class Set, class... Inputs>
std::vector<std::size_t> TuningRun<Key, Client, Set, Inputs...>::scout(const TuningPlan& plan,
                                                                       const PlannedSpace& space) {
  Searched& searched = searched_space(plan, space.entry);
  const std::size_t size = searched.part->space().size();
  const SearchBudget budget = plan.search_settings().budget_for(size);
  const std::size_t count =
      std::min({plan.search_settings().scouts, budget.max_evaluations, budget.abandon_after});
  searched.scouts = scouts_of(size, count, seed_ ^ (0x5c0u + space.entry));
  std::vector<std::size_t> candidates;
  for (std::size_t c : searched.scouts) {
    candidates.push_back(plan.entries()[space.entry].first + searched.part->whole_index(c));
  }
  return candidates;
}

template <class Key, class Client, class Set, class... Inputs>
double TuningRun<Key, Client, Set, Inputs...>::best_of(const std::vector<std::size_t>& candidates) {
  plan_builds(candidates);
  double best = std::numeric_limits<double>::infinity();
  for (std::size_t i : candidates) {
    if (unmeasured(i)) measure_one(i);
    if (outcomes_[i].ok()) best = std::min(best, outcomes_[i].median);
  }
  return best;
}

template <class Key, class Client, class Set, class... Inputs>
std::string TuningRun<Key, Client, Set, Inputs...>::not_reached(const TuningPlan& plan,
                                                                std::size_t index) const {
  // Named by its space: a set of several spaces says which space's search left each one.
  std::string reason = "not reached by the search";
  const std::string name = set_.name(index);
  if (const auto parts = split_candidate_name(name)) {
    reason += " of ";
    reason += parts->space;
  }
  const std::size_t entry = plan.entry_of(index);
  if (entry < searched_.size() && !searched_[entry].ended_by.empty()) {
    reason += " (" + searched_[entry].ended_by + ")";
  }
  return reason;
}

template <class Key, class Client, class Set, class... Inputs>
auto TuningRun<Key, Client, Set, Inputs...>::searched_space(const TuningPlan& plan,
                                                            std::size_t entry) -> Searched& {
  if (searched_.size() < plan.entries().size()) searched_.resize(plan.entries().size());
  Searched& searched = searched_[entry];
  if (searched.part) return searched;
  const PlanEntry& e = plan.entries()[entry];
  std::vector<std::size_t> kept;
  kept.reserve(e.size);
  for (std::size_t c = 0; c < e.size; ++c) {
    const std::size_t i = e.first + c;
    bool rule_failed = false;
    auto error = resumed(i) ? std::nullopt : beyond_limits(i, rule_failed);
    if (!error || rule_failed) {  // a rule that throws fails its candidate when it is measured
      kept.push_back(c);
      continue;
    }
    if (unmeasured(i)) outcomes_[i].error = std::move(error);  // skipped, as measure_one does
  }
  searched.part.emplace(*e.space, std::move(kept));
  if (settings_.on_progress) {  // the plan expected the whole space's budget
    const SearchSettings& search = plan.search_settings();
    const std::size_t fewer = search.budget_for(e.size).max_evaluations -
                              search.budget_for(searched.part->space().size()).max_evaluations;
    progress_.total = std::max(progress_.done, progress_.total - std::min(progress_.total, fewer));
  }
  return searched;
}

template <class Key, class Client, class Set, class... Inputs>
void TuningRun<Key, Client, Set, Inputs...>::climb_from_the_confirmed(const TuningPlan& plan,
                                                                      std::size_t winner) {
  if (finished_ || !outcomes_[winner].ok() || !plan.searched_whole(winner)) return;
  const std::size_t entry_index = plan.entry_of(winner);
  const PlanEntry& entry = plan.entries()[entry_index];
  const Searched& searched = searched_space(plan, entry_index);
  const SpacePart& part = *searched.part;
  const SearchBudget budget = plan.search_settings().budget_for(part.space().size());
  const auto climbing = std::chrono::steady_clock::now();
  const auto out_of_time = [&] {
    return searched.seconds + detail::seconds_since(climbing) >= budget.max_seconds;
  };
  if (out_of_time()) return;
  std::size_t evaluated = 0;
  for (std::size_t c = 0; c < part.space().size(); ++c) {
    if (!unmeasured(entry.first + part.whole_index(c))) ++evaluated;
  }
  const std::size_t allowance = budget.climb_allowance(evaluated);
  // Its steps, then (unless the search trusted its start points, as the refinement does) its
  // trades: on an AVX-512 PoCL at 512, a search that ended at WPTM=6,NVEC=1 (1.19x the best)
  // had the best, WPTM=4,NVEC=2, a trade away from the race's winner and from no configuration
  // the refinement climbed from (docs/benchmarks.md, 2026-12-05).
  const auto at = part.index_of(winner - entry.first);
  if (!at) return;  // it ran, so it is within the device's limits
  std::vector<std::size_t> around = part.space().adjacent(*at);
  if (!searched.trusts_start_points) {
    const auto trades = part.space().trades(*at);
    around.insert(around.end(), trades.begin(), trades.end());
  }
  std::vector<std::size_t> steps;
  for (std::size_t c : around) {
    const std::size_t i = entry.first + part.whole_index(c);
    if (steps.size() < allowance && unmeasured(i) &&
        std::find(steps.begin(), steps.end(), i) == steps.end()) {
      steps.push_back(i);
    }
  }
  if (steps.empty()) return;
  // The steps are paired with the winner (the search's leader may have lost the race, or failed
  // in it), at the winner's time in the search's kind, so that a step's time is recorded as
  // every searched one is (an interrupted tuning resumes from them); then all are scaled into
  // the race's kind. No stop for good enough now: the tuning is past that.
  leader_index_ = winner;
  leader_ = outcomes_[winner].median / to_race_;
  good_enough_seconds_ = 0;
  plan_builds(steps);
  std::vector<std::size_t> measured;
  for (std::size_t i : steps) {
    if (out_of_time()) break;
    try {
      measure_one(i);
    } catch (const AutotuneError&) {
      // The input generator failed (a candidate's own failure is its outcome): the race has
      // decided already, and its winner stands, as when a race finds no inputs.
      break;
    }
    measured.push_back(i);
  }
  for (std::size_t i : measured) {
    if (outcomes_[i].ok()) scale_times(outcomes_[i], to_race_);
  }
  if (ahead_) {
    ahead_->settle();
    report_.time_spent.programs_prepared = ahead_->submitted();
  }
  const double bound = bench_.confirm_within * outcomes_[winner].median;
  if (std::any_of(measured.begin(), measured.end(), [&](std::size_t i) {
        return outcomes_[i].ok() && outcomes_[i].median <= bound;
      })) {
    throw_if_stopped();
    const detail::Stopwatch confirming{report_.time_spent.confirming};
    confirm_winner();
  }
}

}  // namespace tunekit
