// The benchmark runner: warm-up, adaptive sampling, racing, and a median-based statistic.
#pragma once

#include <chrono>
#include <cmath>
#include <cstdint>
#include <exception>
#include <limits>
#include <new>
#include <numeric>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "tunekit/error.hpp"
#include "tunekit/outcome.hpp"
#include "tunekit/settings.hpp"
#include "tunekit/timing_client.hpp"

namespace tunekit {

/// Median, its confidence interval, lower quartile, median absolute deviation, min and max of
/// per-call times.
struct SampleSummary {
  double median = 0;
  double low = 0;   ///< the median's 95% confidence interval (median_interval): lower end
  double high = 0;  ///< and upper end
  double lower_quartile = 0;
  double spread = 0;
  double min = 0;
  double max = 0;
};

/// Summarises samples (copied: the order of the caller's samples is kept).
SampleSummary summarize(std::vector<double> samples);

/// The 95% confidence interval of the median of `sorted` (ascending), from order statistics: the
/// ranks the binomial distribution B(n, 1/2) puts around n/2. It assumes nothing of the
/// distribution (timings are skewed, with outliers); with fewer than 6 samples it is [min, max].
std::pair<double, double> median_interval(const std::vector<double>& sorted);

/// Whether the estimate `a` (median within [a_low, a_high]) is faster than `b` by more than
/// `margin` (a fraction of b) with the intervals' support: a's upper end is below b's lower end
/// shrunk by the margin. Two estimates that overlap are a tie for every decision that uses it.
inline bool clearly_faster(double a_high, double b_low, double margin = 0) {
  return a_high < b_low * (1 - margin);
}

namespace detail {
inline double checked_time(double seconds, const std::string& name) {
  if (!std::isfinite(seconds) || seconds < 0) {
    throw AutotuneError(ErrorKind::invalid_measurement,
                        "the timer reported " + std::to_string(seconds) + " s", name);
  }
  return seconds;
}
}  // namespace detail

/// One contender of measure_interleaved (and the rival of measure_candidate): a call to time,
/// and how many calls make one sample.
struct Contender {
  FunctionRef<void()> run_once;
  std::size_t batch = 1;
};

/// Measures one candidate on `client`. `leader` is the best median so far (infinity if none):
/// a candidate clearly slower than it is dropped early (racing). Never throws: a failure becomes
/// the outcome's error.
///
/// With a `rival` (the leader's call, whose time `leader` is), the samples are paired: each
/// round times one batch of the candidate and one of the rival, in alternating order, and the
/// candidate's sample is `leader` times the ratio of the two. A change of the machine's load
/// slows both of a pair alike, so it moves the ratio little: comparisons with the leader (the
/// racing, a new leader, the search's gains) no longer depend on the moment a candidate met.
template <TimingClient Client>
AutotuneOutcome measure_candidate(Client& client, FunctionRef<void()> run_once,
                                  const BenchmarkSettings& settings, double leader,
                                  std::string name, std::size_t index,
                                  const Contender* rival = nullptr) {
  AutotuneOutcome outcome;
  outcome.name = std::move(name);
  outcome.index = index;
  const auto started = std::chrono::steady_clock::now();
  struct CostRecorder {  // on every return path
    AutotuneOutcome& outcome;
    std::chrono::steady_clock::time_point started;
    ~CostRecorder() {
      outcome.cost_seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    }
  } cost{outcome, started};
  try {
    double last = 0;
    const std::size_t warmups = settings.warmup_runs == 0 ? 1 : settings.warmup_runs;
    for (std::size_t i = 0; i < warmups; ++i) {
      last = detail::checked_time(client.measure(run_once, 1), outcome.name);
    }
    // A candidate many times slower than the leader in steady state costs more to sample than
    // it could ever win back: stop it after its warm-up.
    const double target = std::max(settings.min_sample_seconds, 100 * client.timer_resolution());
    // Calls shorter than a sample are too short to judge from one run: they are batched below.
    const double hopeless = 2 * settings.racing_factor * leader;
    if (std::isfinite(leader) && last > hopeless && last >= target) {
      // One more run, so that a single disturbed warm-up cannot eliminate the true winner.
      last = std::min(last, detail::checked_time(client.measure(run_once, 1), outcome.name));
    }
    if (std::isfinite(leader) && last > hopeless && last >= target) {
      outcome.status = OutcomeStatus::dropped;
      outcome.median = outcome.min = outcome.max = last;
      outcome.samples = 1;
      return outcome;
    }
    const double per_call = std::max(last, 1e-9);
    outcome.batch = static_cast<std::size_t>(
        std::clamp(std::ceil(target / per_call), 1.0, static_cast<double>(1 << 20)));

    std::vector<double> samples;
    samples.reserve(settings.max_samples);
    const auto deadline = started + std::chrono::duration<double>(settings.max_candidate_seconds);
    const std::size_t max_samples = std::max<std::size_t>(settings.max_samples, 1);
    outcome.status = OutcomeStatus::measured;
    const bool paired = rival != nullptr && std::isfinite(leader) && leader > 0;
    const std::size_t rival_batch = paired ? std::max<std::size_t>(rival->batch, 1) : 1;
    const auto time_of = [&](FunctionRef<void()> work, std::size_t batch) {
      return detail::checked_time(client.measure(work, batch), outcome.name) /
             static_cast<double>(batch);
    };
    while (samples.size() < max_samples) {
      if (paired) {
        // Alternating which goes first cancels what the first of a pair pays (a cold cache).
        const bool rival_first = samples.size() % 2 == 1;
        const double before = rival_first ? time_of(rival->run_once, rival_batch) : 0;
        const double own = time_of(run_once, outcome.batch);
        const double after = rival_first ? before : time_of(rival->run_once, rival_batch);
        if (!(after > 0)) {
          throw AutotuneError(ErrorKind::invalid_measurement,
                              "the leader it is paired with measured 0 s", outcome.name);
        }
        samples.push_back(leader * own / after);
      } else {
        samples.push_back(time_of(run_once, outcome.batch));
      }
      const auto summary = summarize(samples);
      // Racing never drops a candidate before min_samples (one 2 x racing_factor behind after
      // its warm-up, above, is the exception: sampling it costs more than it could win back).
      if (samples.size() >= settings.min_samples) {
        // The lower quartile, not the median: half the samples being disturbed must not be
        // enough to eliminate the true winner.
        if (std::isfinite(leader) && summary.lower_quartile > settings.racing_factor * leader) {
          outcome.status = OutcomeStatus::dropped;
          break;
        }
        if (summary.median > 0 && summary.spread / summary.median <= settings.target_spread) break;
      }
      if (std::chrono::steady_clock::now() > deadline && samples.size() >= 3) break;
    }
    const auto summary = summarize(samples);
    if (!(summary.median > 0)) {
      // Every sample read zero: the work is below the timer's reach even batched.
      throw AutotuneError(ErrorKind::invalid_measurement,
                          "every sample measured 0 s (timer resolution " +
                              std::to_string(client.timer_resolution()) + " s)",
                          outcome.name);
    }
    outcome.median = summary.median;
    outcome.low = summary.low;
    outcome.high = summary.high;
    outcome.spread = summary.spread;
    outcome.min = summary.min;
    outcome.max = summary.max;
    outcome.samples = samples.size();
    outcome.paired = paired;
  } catch (...) {
    outcome.status = OutcomeStatus::failed;
    outcome.error = error_from_current_exception(outcome.name);
  }
  return outcome;
}

/// What measure_interleaved found for one contender: its per-call time in each round, or the
/// error that ended its rounds.
struct InterleavedTimes {
  std::vector<double> samples;
  std::optional<AutotuneError> error;
};

/// Measures `contenders` in `rounds` rounds; each round times one batch of every contender, in an
/// order shuffled by `seed`. Measured one after another, contenders meet different moments of
/// the machine (a slow second, a clock change); interleaved, they meet the same ones, so their
/// medians can be compared. Never throws: a contender's failure is its error, and it is left
/// out of the rounds after it. `names` (one per contender) name the failures.
template <TimingClient Client>
std::vector<InterleavedTimes> measure_interleaved(Client& client,
                                                  const std::vector<Contender>& contenders,
                                                  const std::vector<std::string>& names,
                                                  std::size_t rounds, std::uint64_t seed) {
  std::vector<InterleavedTimes> times(contenders.size());
  std::vector<std::size_t> order(contenders.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::mt19937_64 shuffle(seed);
  for (std::size_t round = 0; round < rounds; ++round) {
    std::shuffle(order.begin(), order.end(), shuffle);
    for (std::size_t c : order) {
      if (times[c].error) continue;
      const std::size_t batch = std::max<std::size_t>(contenders[c].batch, 1);
      try {
        const double total =
            detail::checked_time(client.measure(contenders[c].run_once, batch), names.at(c));
        times[c].samples.push_back(total / static_cast<double>(batch));
      } catch (...) {
        times[c].error = error_from_current_exception(names.at(c));
      }
    }
  }
  return times;
}

}  // namespace tunekit
