// The confirmation race's bookkeeping (engine/confirmation.hpp).
#include "tunekit/engine/confirmation.hpp"

#include <algorithm>
#include <cmath>

#include "tunekit/error.hpp"

namespace tunekit::detail {

std::optional<std::size_t> fastest_working(const std::vector<AutotuneOutcome>& outcomes) {
  std::optional<std::size_t> best;
  for (std::size_t i = 0; i < outcomes.size(); ++i) {
    if (outcomes[i].ok() && (!best || outcomes[i].median < outcomes[*best].median)) best = i;
  }
  return best;
}

std::vector<std::size_t> race_contenders(const std::vector<AutotuneOutcome>& outcomes,
                                         std::size_t most, double within) {
  std::vector<std::size_t> best;
  for (std::size_t i = 0; i < outcomes.size(); ++i) {
    if (outcomes[i].ok()) best.push_back(i);
  }
  std::stable_sort(best.begin(), best.end(), [&](std::size_t a, std::size_t b) {
    return outcomes[a].median < outcomes[b].median;
  });
  if (best.size() > most) best.resize(most);
  while (best.size() > 1 &&
         !(outcomes[best.back()].median <= within * outcomes[best.front()].median)) {
    best.pop_back();
  }
  return best;
}

namespace {

// The race's times are not the search's: its samples batch calls back to back, and on a device
// with a cost per launch (PoCL: tens of microseconds) a batch's time can hold some of it while
// a lone call's events do not (a 100 us matmul raced at 1.5x its searched time on a 16-core
// Xeon, timed by spans, and a candidate left out of the race then ranked first). So that one
// ranking holds one kind of time, every candidate outside the race is scaled by the race winner's
// ratio of race to search time: each was slower than the winner in the search, so none can rank
// ahead of it now. Returns that ratio.
double scale_to_the_race(std::vector<AutotuneOutcome>& outcomes,
                         const std::vector<std::size_t>& raced, std::size_t race_winner,
                         double winner_searched) {
  const AutotuneOutcome& winner = outcomes[raced[race_winner]];
  if (!winner.ok() || !(winner.median > 0) || !(winner_searched > 0)) return 1;
  const double scale = winner.median / winner_searched;
  for (std::size_t i = 0; i < outcomes.size(); ++i) {
    if (outcomes[i].ok() && std::find(raced.begin(), raced.end(), i) == raced.end()) {
      scale_times(outcomes[i], scale);
    }
  }
  return scale;
}

}  // namespace

double record_race(std::vector<AutotuneOutcome>& outcomes, const std::vector<std::size_t>& raced,
                   const RaceResult& race) {
  const auto& times = race.times;
  const double best_median =
      times[race.best].samples.empty() ? 0.0 : summarize(times[race.best].samples).median;
  const double winner_searched = outcomes[raced[race.best]].median;
  for (std::size_t k = 0; k < raced.size(); ++k) {
    AutotuneOutcome& outcome = outcomes[raced[k]];
    if (times[k].error) {  // it worked alone but not beside the others: not a winner
      outcome.status = OutcomeStatus::failed;
      outcome.error = AutotuneError(
          times[k].error->kind(),
          "failed when re-measured with the best: " + times[k].error->message(), outcome.name);
      continue;
    }
    SampleSummary summary = summarize(times[k].samples);
    if (race.left_out[k] && best_median > 0 && summary.median > 0 &&
        std::isfinite(race.versus_best[k])) {
      // Left out after fewer rounds, at a moment the best's later rounds did not share: its
      // time is the best's in all rounds times its ratio to the best in the rounds it ran.
      const double scale = best_median * race.versus_best[k] / summary.median;
      for (double* t : {&summary.median, &summary.low, &summary.high, &summary.spread}) {
        *t *= scale;
      }
    }
    outcome.median = summary.median;
    outcome.low = summary.low;
    outcome.high = summary.high;
    outcome.spread = summary.spread;
    outcome.min = std::min(outcome.min, summary.min);
    outcome.max = std::max(outcome.max, summary.max);
    outcome.samples += times[k].samples.size();
    outcome.paired = false;  // its times are now the interleaved rounds'
  }
  // Only the last race says who is tied: an earlier race's tie is cleared on every candidate,
  // raced now or not (one it tied may be out of this race).
  for (AutotuneOutcome& outcome : outcomes) outcome.tied = false;
  if (!race.separated && race.best != race.runner_up) {
    outcomes[raced[race.best]].tied = outcomes[raced[race.runner_up]].tied = true;
  }
  return scale_to_the_race(outcomes, raced, race.best, winner_searched);
}

}  // namespace tunekit::detail
