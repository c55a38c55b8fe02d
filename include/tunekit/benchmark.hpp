// The benchmark runner: warm-up, adaptive sampling, racing, and a median-based statistic. The
// measuring loops are compiled once (src/benchmark.cpp) and see a client through its Timer.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>
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

/// How many calls of `per_call` seconds fill a sample of `sample_seconds`: at least 1, at most
/// 2^20 (a per-call time of 0 counts as 1 ns).
std::size_t calls_per_sample(double sample_seconds, double per_call);

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
AutotuneOutcome measure_candidate(Timer timer, FunctionRef<void()> run_once,
                                  const BenchmarkSettings& settings, double leader,
                                  std::string name, std::size_t index,
                                  const Contender* rival = nullptr);
template <TimingClient Client>
AutotuneOutcome measure_candidate(Client& client, FunctionRef<void()> run_once,
                                  const BenchmarkSettings& settings, double leader,
                                  std::string name, std::size_t index,
                                  const Contender* rival = nullptr) {
  return measure_candidate(Timer(client), run_once, settings, leader, std::move(name), index,
                           rival);
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
/// out of the rounds after it. `names` (one per contender) name the failures. Once `*stop` is
/// true (when given), no further round starts: a tuning being stopped waits for one round at most.
std::vector<InterleavedTimes> measure_interleaved(Timer timer,
                                                  const std::vector<Contender>& contenders,
                                                  const std::vector<std::string>& names,
                                                  std::size_t rounds, std::uint64_t seed,
                                                  const std::atomic<bool>* stop = nullptr);
template <TimingClient Client>
std::vector<InterleavedTimes> measure_interleaved(Client& client,
                                                  const std::vector<Contender>& contenders,
                                                  const std::vector<std::string>& names,
                                                  std::size_t rounds, std::uint64_t seed) {
  return measure_interleaved(Timer(client), contenders, names, rounds, seed);
}

/// How race_interleaved spends its rounds: `rounds` a stage, at most `max_stages` stages; and
/// when to end early: once `*stop` is true (when given), after the round that runs.
struct RaceSettings {
  std::size_t rounds = 7;
  std::size_t max_stages = 3;
  const std::atomic<bool>* stop = nullptr;
};

/// What race_interleaved found: each contender's per-call time in the rounds it ran (or the
/// error that ended them), which contenders were left out as clearly slower than the best, how
/// many rounds ran in all, and whether the best two were told apart.
struct RaceResult {
  std::vector<InterleavedTimes> times;
  std::vector<bool> left_out;
  /// Each contender's median per-round time over the best's, in the rounds both ran (1 for the
  /// best; NaN for one that failed): how a contender left out early compares.
  std::vector<double> versus_best;
  std::size_t best = 0, runner_up = 0;  ///< the same index twice when fewer than two worked
  std::size_t rounds = 0;
  bool separated = true;
};

/// The final race among the best few (successive elimination): `contenders` are measured
/// interleaved, a stage of rounds at a time. After each stage, a contender whose per-round ratio
/// to the best (a slow moment slows both) has a 95% interval above 1 is left out, but never one
/// of the best two (CubeCL's floor: a winner is always compared with a runner-up). It ends when
/// the best two are told apart the same way, or after `max_stages` stages: then they are tied.
/// Only differences the intervals support decide; where contenders overlap, samples are added.
/// Never throws (failures are the contenders' errors, as in measure_interleaved).
RaceResult race_interleaved(Timer timer, const std::vector<Contender>& contenders,
                            const std::vector<std::string>& names, const RaceSettings& settings,
                            std::uint64_t seed);

}  // namespace tunekit
