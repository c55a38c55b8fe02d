// TuningRun: one tuning of one key, following its TuningPlan: measures candidates (racing them
// against the leader), validates their outputs, searches the spaces, builds ahead, and reports
// progress. It decides nothing about caches: the Tuner (tuner.hpp) looks up, persists and
// dispatches; a run only turns a set, a key and inputs into a ranked TuningReport.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "tunekit/benchmark.hpp"
#include "tunekit/detail/call.hpp"
#include "tunekit/detail/function_ref.hpp"
#include "tunekit/engine/build_pool.hpp"
#include "tunekit/engine/candidate_validation.hpp"
#include "tunekit/engine/confirmation.hpp"
#include "tunekit/engine/measurement_turn.hpp"
#include "tunekit/engine/tuning_plan.hpp"
#include "tunekit/error.hpp"
#include "tunekit/host_reference.hpp"
#include "tunekit/key.hpp"
#include "tunekit/log.hpp"
#include "tunekit/outcome.hpp"
#include "tunekit/search.hpp"
#include "tunekit/settings.hpp"
#include "tunekit/space.hpp"
#include "tunekit/throughput.hpp"
#include "tunekit/timing_client.hpp"

namespace tunekit {

/// What TuningRun::run() throws once its stop flag is set (TuningRun::stop_when): the tuning
/// ends between two candidates and decides nothing.
class TuningStopped : public std::exception {
 public:
  const char* what() const noexcept override { return "tunekit: the tuning was stopped"; }
};

/// One tuning of `key` for `set` on `client`. Build it, call run() once; it holds references to
/// everything it is given, and the inputs are only read (benchmark inputs come from the set's
/// input generator).
template <class Key, class Client, class Set, class... Inputs>
class TuningRun {
 public:
  /// `op`, `device`: what the report names. `known`: the set indices of other keys' winners on
  /// this device, measured first. `seed`: the search strategies' seed (reproducible per key).
  TuningRun(const std::string& op, const std::string& device, const Settings& settings,
            Client& client, const Set& set, const Key& key, std::vector<std::size_t> known,
            std::uint64_t seed, Inputs&... inputs)
      : op_(op),
        settings_(settings),
        client_(client),
        set_(set),
        key_(key),
        inputs_(inputs...),
        // Without start points, the winners of other keys are no hint either.
        known_(settings.search_settings().start_points ? std::move(known)
                                                       : std::vector<std::size_t>{}),
        seed_(seed),
        bench_(settings.benchmark_settings()),
        report_{op, key_to_string(key), device, 0, {}} {}
  TuningRun(const TuningRun&) = delete;
  TuningRun& operator=(const TuningRun&) = delete;

  /// Before run(): outcomes that an interrupted tuning of the same key and set measured (each
  /// naming a candidate of the set). Those candidates are not measured again when the plan
  /// reaches them: their outcomes stand (the best still meet the others in the confirmation).
  void resume(const std::vector<AutotuneOutcome>& recorded) {
    recorded_.assign(set_.size(), std::nullopt);
    for (const auto& outcome : recorded) {
      if (outcome.index < recorded_.size()) recorded_[outcome.index] = outcome;
    }
  }
  /// Before run(): called with each candidate's outcome once it is measured (not for resumed
  /// ones), before Settings::on_progress: what a tuning persists as it goes.
  void on_measured(std::function<void(const AutotuneOutcome&)> f) { on_measured_ = std::move(f); }
  /// Before run(): the candidates that earlier tunings in this process built (their programs are
  /// cached): a search prefers them among its next moves (SearchEvaluator::cheap).
  void built_before(std::vector<std::size_t> indices) {
    built_before_.assign(set_.size(), false);
    for (std::size_t i : indices) {
      if (i < built_before_.size()) built_before_[i] = true;
    }
  }
  /// Before run(): once `stop` is true, run() throws TuningStopped before its next candidate.
  void stop_when(const std::atomic<bool>& stop) { stop_ = &stop; }

  /// Instead of run(): why candidate `index` (a winner stored elsewhere, or the candidate that
  /// serves while a key is tuned in the background) is wrong here, as the set's validator judges
  /// its output on the key's benchmark inputs against the set's reference, in the device's
  /// measurement turn; nothing when it is right, or when the set has no validator. Throws the
  /// caller's failures (input generator, validator) as run() does.
  std::optional<AutotuneError> check_one(std::size_t index) {
    if constexpr (Set::validates) {
      outcomes_.resize(set_.size());
      Bench& bench = candidate_inputs();
      const auto turn = take_turn();
      return validation_.validate(index, bench);
    } else {
      (void)index;
      return std::nullopt;
    }
  }

  /// The work of the problem the tuning timed (throughput.hpp's benchmark_work) for its metrics:
  /// none where the key does not state it, NaN where no benchmark inputs were made (a resumed
  /// tuning with nothing left to measure) or benchmark_work threw.
  std::optional<Work> timed_work() const {
    if constexpr (HasBenchmarkWork<Key, Bench>) {
      return timed_work_.value_or(unknown_work());
    } else {
      return std::nullopt;
    }
  }

  /// Measures the set for the key, level by level of the plan, until a level has a working
  /// candidate. Candidates not measured carry the reason. The outcomes come back ranked.
  TuningReport run() {
    outcomes_.resize(set_.size());
    for (std::size_t i = 0; i < set_.size(); ++i) {
      outcomes_[i].name = set_.name(i);
      outcomes_[i].index = i;
    }
    const TuningPlan plan(plan_entries(set_), priorities(), settings_.search_settings());
    progress_.op = op_;  // the tuner's: outlives the run
    progress_.key = report_.key;
    good_enough_seconds_ = good_enough_bound();
    start_building_ahead();
    rescale_resumed();
    for (std::size_t i : known_) report_.neighbour_starts.push_back(outcomes_[i].name);
    bool found = false;
    // The candidates of the levels this tuning ran: one of a later level (its group's priority
    // is lower for this key) was not left by a search, but by a level before it that worked.
    std::vector<bool> in_a_level_run(set_.size(), false);
    for (const PlannedLevel& level : plan.levels()) {
      for (std::size_t i : level.singles) in_a_level_run[i] = true;
      for (const PlannedSpace& space : level.spaces) {
        for (std::size_t i : space.members) in_a_level_run[i] = true;
      }
      if (settings_.on_progress) progress_.total += level.planned_measurements;
      plan_builds(level.singles);
      for (std::size_t i : level.singles) measure_one(i);
      search_spaces(plan, level);
      found = found || std::isfinite(leader_);
      if (found) break;
    }
    if (!found) throw_if_undecided();
    if (ahead_) {
      ahead_->settle();  // nothing builds while the best are re-measured
      report_.time_spent.programs_prepared = ahead_->submitted();
    }
    throw_if_stopped();
    std::optional<std::size_t> winner;
    {
      const detail::Stopwatch confirming{report_.time_spent.confirming};
      winner = confirm_winner();
    }
    if (winner) climb_from_the_confirmed(plan, *winner);
    for (auto& outcome : outcomes_) {
      if (outcome.status == OutcomeStatus::skipped && !outcome.error) {
        outcome.error =
            AutotuneError(ErrorKind::skipped,
                          !found      ? "skipped by priority"
                          : finished_ ? "the tuning stopped early (good enough)"
                          : plan.in_space(outcome.index) && in_a_level_run[outcome.index]
                              ? not_reached(plan, outcome.index)
                              : "a candidate of higher priority works",
                          outcome.name);
      }
    }
    rank(outcomes_);
    if constexpr (Set::validates) check_the_winner_again();
    if (!outcomes_.empty() && outcomes_.front().ok()) {
      try {  // the winner's build is worth keeping (e.g. as a program binary)
        std::apply([&](const auto&... in) { set_.keep(outcomes_.front().index, client_, in...); },
                   inputs_);
      } catch (...) {
      }
    }
    report_.outcomes = std::move(outcomes_);
    report_.tuning_seconds = detail::seconds_since(started_);
    if (settings_.on_progress) {  // the end, with the confirmed winner
      progress_.finished = true;
      progress_.total = progress_.done;
      progress_.elapsed_seconds = report_.tuning_seconds;
      if (const AutotuneOutcome* winner = report_.winner()) {
        progress_.best = winner->name;
        progress_.best_seconds = winner->median;
      }
      settings_.on_progress(std::as_const(progress_));
    }
    return std::move(report_);
  }

 private:
  using Validation = CandidateValidation<Key, Client, Set, Inputs...>;
  using Bench = typename Validation::Bench;

  // Every candidate's priority for the key. A priority function that throws is the caller's
  // error (callers_error), not its candidate's.
  std::vector<std::optional<CandidatePriority>> priorities() {
    std::vector<std::optional<CandidatePriority>> all(set_.size());
    for (std::size_t i = 0; i < set_.size(); ++i) {
      try {
        all[i] = set_.priority(i, key_);
      } catch (...) {
        throw detail::callers_error("the priority of '" + outcomes_[i].name + "'", tuning_name(),
                                    std::current_exception());
      }
    }
    return all;
  }

  // This device's measurement turn (measurement_turn.hpp), held until the result is destroyed.
  // A wait that ran out is said once: this tuning then measures beside another one.
  std::unique_ptr<MeasurementTurn> take_turn() {
    auto turn = std::make_unique<MeasurementTurn>(report_.device);
    if (!turn->held() && !measured_beside_) {
      measured_beside_ = true;
      warn(about(op_, report_.key) + "waited " + std::to_string(measurement_turn_patience.count()) +
           " s for another tuning on this device to finish measuring; measuring beside it (its "
           "candidate may be waiting for this key)");
    }
    return turn;
  }

  // The candidates about to be measured are built ahead on other threads (build_pool.hpp).
  void start_building_ahead() {
    if constexpr (Set::template preparable<Client, Inputs...>) {
      bool quiet = false;
      if constexpr (requires { client_.measures_on_host_cores(); }) {
        quiet = client_.measures_on_host_cores();
      }
      ahead_.emplace(settings_.build_thread_count(), quiet, [this](std::size_t i) {
        std::apply([&](const auto&... in) { set_.prepare(i, client_, in...); }, inputs_);
      });
    }
  }

  // Plans the builds ahead of `next` (BuildAhead::plan), leaving out the candidates that build
  // nothing: those resumed from a record (not measured again) and those over the device's limits
  // (measure_one skips them unbuilt; a limits rule that throws fails them). Each slot of the
  // window then holds a build, and programs_prepared counts builds: a cold matmul 2048 tuning on
  // the H200 reported 69 "prepared ahead" of which 20 were over the local memory.
  void plan_builds(const std::vector<std::size_t>& next, bool likely = true) {
    if (!ahead_) return;
    std::vector<std::size_t> builds;
    builds.reserve(next.size());
    for (std::size_t i : next) {
      bool rule_failed = false;
      if (!resumed(i) && !beyond_limits(i, rule_failed)) builds.push_back(i);
    }
    ahead_->plan(builds, likely);
  }

  // The recorded times of an interrupted tuning may come from another benchmark problem (a key
  // class spans sizes: matmul benchmarks the call's own shape), so they are never compared as
  // they are: the best recorded candidate is measured again on this tuning's problem, and every
  // recorded time is scaled by what that measurement says. A key's ranking never mixes problems.
  void rescale_resumed() {
    std::optional<std::size_t> anchor;
    for (std::size_t i = 0; i < recorded_.size(); ++i) {
      if (recorded_[i] && recorded_[i]->ok() && recorded_[i]->median > 0 &&
          (!anchor || recorded_[i]->median < recorded_[*anchor]->median)) {
        anchor = i;
      }
    }
    if (!anchor) return;
    const AutotuneOutcome fresh = measure(*anchor);
    const double scale = fresh.ok() ? fresh.median / recorded_[*anchor]->median : 1;
    for (auto& outcome : recorded_) {
      if (outcome && outcome->ok()) scale_times(*outcome, scale);
    }
    recorded_[*anchor] = fresh;  // what this problem measured (a failure now, if it failed)
  }

  // Whether candidate `i`'s outcome comes from an interrupted tuning's record (resume).
  bool resumed(std::size_t i) const { return i < recorded_.size() && recorded_[i].has_value(); }

  void throw_if_stopped() const {
    if (stop_ != nullptr && stop_->load(std::memory_order_relaxed)) throw TuningStopped();
  }

  // Why candidate `i` cannot run on this client's device (a space's limits rule), or nothing.
  // Not measured yet (nor skipped for a reason, such as the device's limits).
  bool unmeasured(std::size_t i) const {
    return outcomes_[i].status == OutcomeStatus::skipped && !outcomes_[i].error;
  }

  // `rule_failed`: the space's limits rule threw (a failure of the candidate, not a limit).
  std::optional<AutotuneError> beyond_limits(std::size_t i, bool& rule_failed) const {
    rule_failed = false;
    if constexpr (HasDeviceLimits<Client>) {
      const std::string& name = outcomes_[i].name;
      std::optional<std::string> reason;
      try {
        reason = set_.exceeds(i, client_.limits());
      } catch (...) {  // the set's own limits rule threw (e.g. it names no such parameter)
        const auto cause = error_from_exception(std::current_exception(), name);
        rule_failed = true;
        return AutotuneError(cause.kind(), "the limits rule failed: " + cause.message(), name);
      }
      if (reason) return device_limit(*reason, name);
    } else {
      (void)i;
    }
    return std::nullopt;
  }

  // Measures candidate `i` (or fails it for the device's limits), follows the leader, and
  // reports progress.
  void measure_one(std::size_t i) {
    if (finished_) return;  // a candidate was good enough: the rest stays unmeasured
    throw_if_stopped();
    if (resumed(i)) {
      outcomes_[i] = *recorded_[i];
      report_.resumed.push_back(outcomes_[i].name);
    } else {
      if (ahead_) {
        const detail::Stopwatch waiting{report_.time_spent.waiting_for_builds};
        ahead_->before_measuring(i);
      }
      bool rule_failed = false;
      if (auto error = beyond_limits(i, rule_failed)) {
        // Over the device's limits by the space's own rule: skipped, as nothing ran (a rule that
        // threw is a failure). Not recorded as progress: the rule says it again at once.
        outcomes_[i].status = rule_failed ? OutcomeStatus::failed : OutcomeStatus::skipped;
        outcomes_[i].error = std::move(error);
      } else {
        outcomes_[i] = measure(i);
        if (outcomes_[i].ok() && outcomes_[i].median < leader_ && outcomes_[i].paired) {
          confirm_handover(i);
        }
      }
    }
    if (outcomes_[i].ok() && outcomes_[i].median < leader_) {
      leader_ = outcomes_[i].median;
      leader_index_ = i;
      if (leader_ < roofline_seconds_ && good_enough_seconds_ > 0) {
        // Faster than the roofline: the peak it was drawn from is not this device's (a peak
        // measured in a busy moment, or units the peak kernel does not use, such as tensor
        // cores). No bound then: the tuning goes on as if the key stated no work.
        good_enough_seconds_ = 0;
        report_.stopped_early.clear();
      }
      if (leader_ <= good_enough_seconds_) check_good_enough(i);
    }
    if (on_measured_ && !resumed(i) && outcomes_[i].status != OutcomeStatus::skipped) {
      on_measured_(std::as_const(outcomes_[i]));
    }
    if (settings_.on_progress) {
      progress_.total = std::max(progress_.total, ++progress_.done);
      progress_.elapsed_seconds = detail::seconds_since(started_);
      if (std::isfinite(leader_)) {
        progress_.best = outcomes_[leader_index_].name;
        progress_.best_seconds = leader_;
      }
      settings_.on_progress(std::as_const(progress_));
    }
  }

  // Every space's start points (its own and the neighbours' winners), or the scouts of one
  // without any that runs, so that the spaces are searched best first: a family whose best is
  // far behind the leader is then abandoned early (SearchBudget::abandon_after) instead of being
  // searched in full. Then each space's search, best first.
  void search_spaces(const TuningPlan& plan, const PlannedLevel& level);

  // After a search found nothing working: `space`'s members it never ran, in order, until one
  // works or `undecided_cap` more were measured.
  void exhaust(const PlannedSpace& space);

  // Nothing works, yet some candidates were never run (past the cap): the tuning is undecided,
  // which is not "every candidate failed". Thrown, so that nothing is remembered or stored; the
  // in-progress record keeps what was measured, and the next tuning goes on from it.
  void throw_if_undecided() const {
    std::size_t never_run = 0, failed = 0;
    std::vector<AutotuneError> causes;  // why the measured ones failed, as a failed tuning says
    for (const auto& outcome : outcomes_) {
      if (outcome.status == OutcomeStatus::skipped && !outcome.error) ++never_run;
      if (outcome.status == OutcomeStatus::failed) {
        ++failed;
        if (outcome.error) causes.push_back(outcome.error->named(outcome.name));
      }
    }
    if (never_run == 0) return;
    throw AutotuneError(ErrorKind::no_valid_candidate,
                        "undecided for " + report_.key + ": none of the " + std::to_string(failed) +
                            " candidates measured works, and " + std::to_string(never_run) +
                            " were never run (each search measures at most " +
                            std::to_string(undecided_cap) +
                            " more after its budget). Nothing was remembered; the next call goes "
                            "on where this one stopped (Level::full runs every candidate)",
                        {}, std::move(causes));
  }

  // By plan entry: the part of its space the device can run, and what its search says to the
  // climb after the race.
  struct Searched {
    std::optional<SpacePart> part;     // what its search walks (searched_space), once made
    std::vector<std::size_t> scouts;   // of the part, measured to rank it (scout)
    double seconds = 0;                // its time (the space's time limit counts it)
    bool trusts_start_points = false;  // SearchResult's: no trades then
    std::string ended_by;              // SearchResult's: what the report says of the rest
  };

  // Searches `space`'s members with the configured strategy, measuring each configuration the
  // strategy asks for (those measured already, such as the start points, count with their
  // outcome). The search compares with the leader of the whole tuning so far. `best_start`: the
  // best time of its start points (infinite when none worked).
  void search_space(const TuningPlan& plan, const PlannedSpace& space, double best_start);

  // A space without start points, where the level searches several: a few random configurations
  // it can run (SearchSettings::scouts), measured to rank it among the others. Its search takes
  // them as its first draws (SearchStarts::scouted), so the space that leads pays nothing more.
  // As many as the space's search could measure before it is judged (its budget and
  // abandon_after), so that scouting never spends more than the search itself would.
  std::vector<std::size_t> scout(const TuningPlan& plan, const PlannedSpace& space);

  // Measures those of `candidates` not measured yet; the best median of those that work
  // (infinite when none does).
  double best_of(const std::vector<std::size_t>& candidates);

  // The reason a configuration of a space was never measured: the search did not reach it,
  // and what ended that search where it knows (its patience, its budget, the space left).
  std::string not_reached(const TuningPlan& plan, std::size_t index) const;

  // Plan entry `entry`'s space as this device sees it (made once per tuning): its configurations
  // over the device's limits are skipped at once, for their reason, as measure_one would, and
  // are no part of the search. On the H200 the staged space holds 4,032 configurations, 1,852
  // within the local memory; a search that met the others as failures spent its patience on
  // them, and its model learnt that large tiles fail. Replayed at 2048, balanced, start points
  // off, noise 0.03: picks within 5% 174 of 300 with them, 293 without (docs/benchmarks.md, "A
  // search walks only what the device can run").
  Searched& searched_space(const TuningPlan& plan, std::size_t entry);

  // Work whose rates are no numbers (NaN): what the metrics show where it is not known.
  static Work unknown_work() { return {std::nan(""), std::nan("")}; }

  Bench make_bench_inputs() const {
    Bench bench = std::apply(
        [&](const auto&... in) { return set_.make_inputs(client_, key_, in...); }, inputs_);
    if constexpr (HasBenchmarkWork<Key, Bench>) {
      if (!timed_work_) {  // every set of a tuning's inputs is one problem
        try {
          timed_work_ = std::apply(
              [&](const auto&... in) { return Work(benchmark_work(key_, in...)); }, bench);
        } catch (...) {  // a metric never fails a tuning
          timed_work_ = unknown_work();
        }
      }
    }
    return bench;
  }

  // The benchmark inputs of the next call: fresh ones in `own`, unless the set shares one set of
  // them across the tuning (TunableSet::share_inputs). Throws what the input generator throws.
  Bench& bench_inputs(std::optional<Bench>& own) {
    std::optional<Bench>& slot = set_.shares_inputs() ? shared_inputs_ : own;
    if (!slot || !set_.shares_inputs()) slot.emplace(make_bench_inputs());
    return *slot;
  }

  // One call of candidate `where` on benchmark inputs, its output dropped: what is timed.
  struct BenchCall {
    TuningRun* run;
    CandidateLocation where;
    Bench* bench;
    void operator()() const {
      std::apply(
          [&](auto&... args) {
            (void)detail::call_unwrapped(where, run->client_, run->set_, args...);
          },
          *bench);
    }
  };

  // The time under which a candidate is good enough: the key's roofline (its work at the
  // device's peak) over the level's fraction, when the key states its work and the client knows
  // its peak; 0: no bound.
  double good_enough_bound() {
    const double fraction = settings_.search_settings().good_enough;
    if (!(fraction > 0 && fraction <= 1)) return 0;
    if constexpr (HasWork<Key> && HasDevicePeak<Client>) {
      try {
        // The device's peak is measured once per process, by running kernels: in the turn.
        const auto turn = take_turn();
        roofline_seconds_ = least_seconds(key_.work(), client_.peak());
        return roofline_seconds_ / fraction;
      } catch (...) {  // the key's work() threw: no bound, the tuning goes on in full
        return 0;
      }
    }
    return 0;
  }

  // Candidate `i` leads under the good-enough bound: a second measurement must confirm it (one
  // lucky sample must not end a tuning); then the tuning is finished.
  void check_good_enough(std::size_t i) {
    Bench* bench = nullptr;
    try {
      bench = &bench_inputs(shared_inputs_);
    } catch (...) {
      return;  // no second measurement: go on measuring
    }
    const BenchCall call{this, set_.locate(i), bench};
    const auto turn = take_turn();
    const AutotuneOutcome again =
        measure_candidate(client_, FunctionRef<void()>(call), bench_,
                          std::numeric_limits<double>::infinity(), outcomes_[i].name, i);
    if (!again.ok() || again.median > good_enough_seconds_) return;
    if constexpr (HasWork<Key> && HasFreshPeak<Client>) {
      // A peak measured in a busy moment is low, and so is its roofline: a mediocre candidate
      // would look near it. The stop stands only against the peak measured again now.
      try {
        roofline_seconds_ =
            std::min(roofline_seconds_, least_seconds(key_.work(), client_.peak_now()));
      } catch (...) {
        return;  // the key's work() threw: no stop
      }
      good_enough_seconds_ = roofline_seconds_ / settings_.search_settings().good_enough;
      if (std::max(again.median, outcomes_[i].median) > good_enough_seconds_) return;
    }
    finished_ = true;
    char text[160];
    std::snprintf(text, sizeof text,
                  "' ran at %.0f%% of the key's roofline twice (good enough: %.0f%%)",
                  100 * roofline_seconds_ / std::max(outcomes_[i].median, again.median),
                  100 * settings_.search_settings().good_enough);
    report_.stopped_early = "'" + outcomes_[i].name + text;
  }

  // The candidate that works with the lowest median, if one works.
  std::optional<std::size_t> fastest() const { return detail::fastest_working(outcomes_); }

  // Before the winner is declared: the best few, each within confirm_within of the best, are
  // re-measured together in interleaved rounds, and ranked by those (measure_interleaved).
  // Returns the winner: the race's, else (no race) the fastest as measured.
  std::optional<std::size_t> confirm_winner() {
    const std::size_t most = bench_.confirm_contenders;
    const std::size_t rounds = bench_.confirm_rounds;
    if (most < 2 || rounds == 0) return fastest();
    const std::vector<std::size_t> best =
        detail::race_contenders(outcomes_, most, bench_.confirm_within);
    if (best.size() < 2) {
      // No race decides the winner (after the climb: a step far ahead of the last race's
      // winner): what an earlier race said of others is no longer said of this winner.
      for (auto& outcome : outcomes_) outcome.tied = false;
      report_.confirmed = 0;
      report_.confirm_rounds = 0;
      return fastest();
    }
    // Their benchmark inputs: the shared ones, or fresh ones for each (in-place candidates).
    std::vector<std::optional<Bench>> own(best.size());
    std::vector<Bench*> benches;
    try {
      for (std::size_t k = 0; k < best.size(); ++k) benches.push_back(&bench_inputs(own[k]));
    } catch (...) {
      return fastest();  // no inputs to confirm with: the ranking stands as measured
    }
    std::vector<BenchCall> calls;
    calls.reserve(best.size());  // the contenders below refer to these
    std::vector<Contender> contenders;
    std::vector<std::string> names;
    for (std::size_t k = 0; k < best.size(); ++k) {
      calls.push_back(BenchCall{this, set_.locate(best[k]), benches[k]});
      // Samples of confirm_sample_seconds, but never more than 64 calls unless the search's
      // were: past that a switch's first call is under 2% of a sample, and a median of device
      // time can be far below what a call costs the host (PoCL's launch: tens of us), so a batch
      // sized on it alone ran a test of tiny transposes for minutes.
      const AutotuneOutcome& measured = outcomes_[best[k]];
      const std::size_t searched = std::max<std::size_t>(measured.batch, 1);
      const std::size_t batch =
          std::clamp(calls_per_sample(bench_.confirm_sample_seconds, measured.median), searched,
                     std::max<std::size_t>(searched, 64));
      contenders.push_back(Contender{FunctionRef<void()>(calls.back()), batch});
      names.push_back(outcomes_[best[k]].name);
    }
    // The final race: until the best two separate, more rounds among those not clearly slower,
    // up to three stages of the level's rounds. Still overlapping then, they are tied.
    const RaceResult race = [&] {
      const auto turn = take_turn();
      return race_interleaved(Timer(client_), contenders, names, RaceSettings{rounds, 3, stop_},
                              seed_ ^ 0x5eedu);
    }();
    throw_if_stopped();  // a race cut short decides nothing
    to_race_ *= detail::record_race(outcomes_, best, race);
    report_.confirmed = best.size();
    report_.confirm_rounds = race.rounds;
    return outcomes_[best[race.best]].ok() ? std::optional<std::size_t>(best[race.best])
                                           : fastest();
  }

  // The confirmed winner's adjacent configurations and trades (as the refinement's: none where
  // the search trusted its start points) that nothing measured are measured now, and one that
  // comes within confirm_within of it races it again. A search climbs from whichever of
  // near-tied configurations measured fastest, and the race may crown another whose own steps
  // were never tried: a cold matmul 2048 on the H200 measured two staged configurations 0.2%
  // apart, and the A_DIRECT step beside the one the race preferred ran 3% faster; a run found it
  // or not as the search's noise fell (docs/benchmarks.md, 2026-12-05). Replayed on the recorded
  // spaces: 0-10 more measurements (median), picks within 5% as often or more often. Within the
  // space's budget: its refinement's allowance afresh (none: no climb) and its evaluations; where
  // the search's refinement climbed from the winner already, its steps are measured and nothing
  // is left to do. Within the space's time too: the search's seconds count against it.
  void climb_from_the_confirmed(const TuningPlan& plan, std::size_t winner);

  // "op [key]": what the caller's errors name (detail::callers_error).
  std::string tuning_name() const { return report_.op + " [" + report_.key + "]"; }

  // The benchmark inputs of a candidate's validation and measurement: the shared ones, else a
  // fresh set. The input generator's failure is the caller's: it ends the tuning.
  Bench& candidate_inputs() {
    try {
      return bench_inputs(shared_inputs_);
    } catch (...) {
      shared_inputs_.reset();
      throw detail::callers_error("the input generator", tuning_name(), std::current_exception());
    }
  }

  // The winner was validated on its first call, before its warm-ups and samples: it is checked
  // once more before it is kept, so that a candidate right only on its first call (state a call
  // leaves behind, a counter it never resets) cannot win. One wrong now is failed, and the next
  // of the ranking checked in turn.
  void check_the_winner_again() {
    while (!outcomes_.empty() && outcomes_.front().ok()) {
      AutotuneOutcome& winner = outcomes_.front();
      Bench* bench = &candidate_inputs();
      std::optional<AutotuneError> wrong;
      {
        const auto turn = take_turn();
        wrong = validation_.validate(winner.index, *bench);
      }
      if (!wrong) return;
      winner.status = OutcomeStatus::failed;
      winner.error = AutotuneError(
          wrong->kind(), "right on its first call, not after its timed ones: " + wrong->message(),
          winner.name);
      rank(outcomes_);
    }
  }

  // Candidate `i` came out faster than the leader. Every later candidate's time is the leader's
  // median times a paired ratio, and a candidate that takes the lead was picked for coming out
  // lowest, so its median is biased low: handover after handover, the chain's unit would drift,
  // and candidates measured early would read slow beside later ones. It is measured once more
  // beside the same leader, and that measurement, which nothing selected, is its time.
  void confirm_handover(std::size_t i) {
    // On the inputs its first measurement ran on (its samples ran it on them many times): the
    // input generator is called once per candidate measured.
    if (!shared_inputs_) return;
    BenchmarkSettings settings = bench_;
    settings.racing_factor = std::numeric_limits<double>::infinity();  // measured in full
    const auto turn = take_turn();
    AutotuneOutcome again = measure_beside_leader(i, outcomes_[i].name, *shared_inputs_, settings);
    if (!again.ok() || !again.paired) return;
    again.cost_seconds += outcomes_[i].cost_seconds;
    outcomes_[i] = std::move(again);
  }

  // Benchmark inputs, validation, then the measurement (racing against the leader).
  AutotuneOutcome measure(std::size_t index) {
    const std::string name = set_.name(index);
    AutotuneOutcome failed;
    failed.name = name;
    failed.index = index;
    failed.status = OutcomeStatus::failed;
    Bench* bench = &candidate_inputs();
    // The turn covers the first call (a build's last step on some devices), the validation and
    // the samples: what another tuning on this device must not run beside.
    const auto turn = take_turn();
    if constexpr (Set::validates) {
      if (auto wrong = validation_.validate(index, *bench)) {
        failed.error = std::move(wrong);
        return failed;
      }
    }
    // Racing keeps a floor of two survivors (as CubeCL): until two candidates were measured in
    // full, none is dropped, so that the confirmation always has a runner-up to compare with.
    BenchmarkSettings settings = bench_;
    if (survivors_ < 2) settings.racing_factor = std::numeric_limits<double>::infinity();
    AutotuneOutcome outcome = measure_beside_leader(index, name, *bench, settings);
    if (outcome.status == OutcomeStatus::measured) ++survivors_;
    return outcome;
  }

  // Candidate `index`'s samples on `bench`, in the caller's turn. The leader runs beside it
  // (paired samples), on the candidate's benchmark inputs: validation is done, what is timed has
  // its output dropped, and no inputs are made for it.
  AutotuneOutcome measure_beside_leader(std::size_t index, const std::string& name, Bench& bench,
                                        const BenchmarkSettings& settings) {
    const BenchCall call{this, set_.locate(index), &bench};
    std::optional<BenchCall> leader_call;
    std::optional<Contender> rival;
    if (std::isfinite(leader_)) {
      leader_call.emplace(BenchCall{this, set_.locate(leader_index_), &bench});
      rival.emplace(Contender{FunctionRef<void()>(*leader_call), outcomes_[leader_index_].batch});
    }
    const detail::Stopwatch measuring{report_.time_spent.measuring};
    return measure_candidate(client_, FunctionRef<void()>(call), settings, leader_, name, index,
                             rival ? &*rival : nullptr);
  }

  const std::string& op_;
  const Settings& settings_;
  Client& client_;
  const Set& set_;
  const Key& key_;
  std::tuple<Inputs&...> inputs_;
  std::vector<std::size_t> known_;
  std::uint64_t seed_;
  BenchmarkSettings bench_;
  std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
  TuningReport report_;
  std::vector<AutotuneOutcome> outcomes_;
  double leader_ = std::numeric_limits<double>::infinity();
  std::size_t leader_index_ = 0;
  double roofline_seconds_ = 0;     // the key's work at the device's peak (0: unknown)
  double good_enough_seconds_ = 0;  // a leader this fast (twice) finishes the tuning; 0: never
  bool finished_ = false;
  // A searched time times this is the last race's kind of time (detail::record_race).
  double to_race_ = 1;
  std::vector<Searched> searched_;
  TuningProgress progress_;
  Validation validation_{client_, set_, [this] { return make_bench_inputs(); }, report_.time_spent,
                         tuning_name()};
  bool measured_beside_ = false;            // a turn's wait ran out (said once)
  std::optional<Bench> shared_inputs_;      // benchmark inputs (kept across candidates if shared)
  mutable std::optional<Work> timed_work_;  // benchmark_work of the first inputs made
  std::size_t survivors_ = 0;               // candidates measured in full (not dropped)
  // A space whose search found nothing working measures at most this many more of its members.
  static constexpr std::size_t undecided_cap = 500;
  std::vector<std::optional<AutotuneOutcome>> recorded_;  // by index (resume); read-only in run
  std::vector<bool> built_before_;  // by index: built by an earlier tuning in this process
  std::function<void(const AutotuneOutcome&)> on_measured_;
  const std::atomic<bool>* stop_ = nullptr;
  std::optional<BuildAhead> ahead_;  // last: its threads use the members above
};

}  // namespace tunekit

// The definitions of the run's search of its spaces: a file of their own, for readability.
#include "tunekit/engine/tuning_run_spaces.hpp"  // IWYU pragma: export
