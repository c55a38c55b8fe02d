// Sample statistics, and the measuring loops of a candidate and of contenders interleaved.
#include "tunekit/benchmark.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>
#include <limits>
#include <numeric>
#include <random>
#include <tuple>
#include <utility>

namespace tunekit {

namespace {
// The time a timer reported, when it can be true.
double checked_time(double seconds, const std::string& name) {
  if (!std::isfinite(seconds) || seconds < 0) {
    throw AutotuneError(ErrorKind::invalid_measurement,
                        "the timer reported " + std::to_string(seconds) + " s", name);
  }
  return seconds;
}

double median_of(std::vector<double>& values) {
  const std::size_t n = values.size();
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(n / 2),
                   values.end());
  const double upper = values[n / 2];
  if (n % 2 == 1) return upper;
  const double lower =
      *std::max_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(n / 2));
  return (lower + upper) / 2;
}

// How long a sample may take the host, in its target length (min_sample_seconds): 20 ms at the
// default. Only calls that the host spends 20 times longer on than the device are held by it.
constexpr double max_sample_host_time_in_targets = 20;
}  // namespace

std::size_t calls_per_sample(double sample_seconds, double per_call) {
  return static_cast<std::size_t>(std::clamp(std::ceil(sample_seconds / std::max(per_call, 1e-9)),
                                             1.0, static_cast<double>(1 << 20)));
}

SampleSummary summarize(std::vector<double> samples) {
  SampleSummary summary;
  if (samples.empty()) return summary;
  const auto [low, high] = std::minmax_element(samples.begin(), samples.end());
  summary.min = *low;
  summary.max = *high;
  summary.median = median_of(samples);
  std::vector<double> sorted = samples;
  std::sort(sorted.begin(), sorted.end());
  summary.lower_quartile = sorted[(sorted.size() - 1) / 4];
  std::tie(summary.low, summary.high) = median_interval(sorted);
  for (double& s : samples) s = std::fabs(s - summary.median);
  summary.spread = median_of(samples);
  return summary;
}

std::pair<double, double> median_interval(const std::vector<double>& sorted) {
  const std::size_t n = sorted.size();
  if (n == 0) return {0, 0};
  if (n < 6) return {sorted.front(), sorted.back()};
  // Ranks (1-based) n/2 -+ 1.96 sqrt(n)/2: the normal approximation of B(n, 1/2), rounded
  // outwards so that the coverage is at least 95%.
  const double half_width = 1.96 * std::sqrt(static_cast<double>(n)) / 2;
  const double centre = static_cast<double>(n) / 2;
  const auto lower_rank = static_cast<std::size_t>(std::max(1.0, std::floor(centre - half_width)));
  const auto upper_rank = static_cast<std::size_t>(
      std::min(static_cast<double>(n), std::ceil(centre + half_width + 1)));
  return {sorted[lower_rank - 1], sorted[upper_rank - 1]};
}

AutotuneOutcome measure_candidate(Timer timer, FunctionRef<void()> run_once,
                                  const BenchmarkSettings& settings, double leader,
                                  std::string name, std::size_t index, const Contender* rival) {
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
    double host_per_call = std::numeric_limits<double>::infinity();  // the least a lone call took
    const std::size_t warmups = settings.warmup_runs == 0 ? 1 : settings.warmup_runs;
    for (std::size_t i = 0; i < warmups; ++i) {
      const auto call_started = std::chrono::steady_clock::now();
      last = checked_time(timer.measure(run_once, 1), outcome.name);
      host_per_call = std::min(
          host_per_call,
          std::chrono::duration<double>(std::chrono::steady_clock::now() - call_started).count());
    }
    // Calls shorter than a sample are too short to judge from one run: they are batched below.
    const double target = std::max(settings.min_sample_seconds, 100 * timer.resolution());
    // A candidate many times slower than the leader in steady state costs more to sample than
    // it could ever win back: stop it after its warm-up.
    const double hopeless = 2 * settings.racing_factor * leader;
    if (std::isfinite(leader) && last > hopeless && last >= target) {
      // One more run, so that a single disturbed warm-up cannot eliminate the true winner.
      last = std::min(last, checked_time(timer.measure(run_once, 1), outcome.name));
    }
    if (std::isfinite(leader) && last > hopeless && last >= target) {
      outcome.status = OutcomeStatus::dropped;
      outcome.median = outcome.min = outcome.max = last;
      outcome.samples = 1;
      return outcome;
    }
    // A call far shorter on the device than what it costs the host (a launch: tens of us on
    // PoCL, an empty problem's 64 ns kernel) would be batched by the thousand, each sample
    // seconds long: the batch is also held to max_sample_host_time_in_targets samples' worth of
    // what a lone call took the host (its wait included, so that a batch of calls back to back
    // takes less). Calls that the device takes longer than the host are batched as before.
    outcome.batch =
        std::min(calls_per_sample(target, last),
                 calls_per_sample(max_sample_host_time_in_targets * target, host_per_call));

    std::vector<double> samples;
    samples.reserve(settings.max_samples);
    const auto deadline = started + std::chrono::duration<double>(settings.max_candidate_seconds);
    const std::size_t max_samples = std::max<std::size_t>(settings.max_samples, 1);
    outcome.status = OutcomeStatus::measured;
    bool paired = rival != nullptr && std::isfinite(leader) && leader > 0;
    const std::size_t rival_batch = paired ? std::max<std::size_t>(rival->batch, 1) : 1;
    const auto time_of = [&](FunctionRef<void()> work, std::size_t batch) {
      return checked_time(timer.measure(work, batch), outcome.name) / static_cast<double>(batch);
    };
    // The leader's time beside this candidate, or nothing where the leader failed or read 0 s:
    // its failure is not this candidate's, whose sampling then goes on unpaired.
    const auto rival_time = [&]() -> std::optional<double> {
      try {
        const double seconds = time_of(rival->run_once, rival_batch);
        if (seconds > 0) return seconds;
      } catch (...) {
      }
      return std::nullopt;
    };
    while (samples.size() < max_samples) {
      if (paired) {
        // Alternating which goes first cancels what the first of a pair pays (a cold cache).
        const bool rival_first = samples.size() % 2 == 1;
        std::optional<double> rival_seconds;
        if (rival_first && !(rival_seconds = rival_time())) {
          paired = false;
          continue;
        }
        const double own = time_of(run_once, outcome.batch);
        if (!rival_first && !(rival_seconds = rival_time())) {
          paired = false;
          samples.push_back(own);
          continue;
        }
        samples.push_back(leader * own / *rival_seconds);
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
                              std::to_string(timer.resolution()) + " s)",
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

std::vector<InterleavedTimes> measure_interleaved(Timer timer,
                                                  const std::vector<Contender>& contenders,
                                                  const std::vector<std::string>& names,
                                                  std::size_t rounds, std::uint64_t seed,
                                                  const std::atomic<bool>* stop) {
  std::vector<InterleavedTimes> times(contenders.size());
  std::vector<std::size_t> order(contenders.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::mt19937_64 shuffle(seed);
  for (std::size_t round = 0; round < rounds; ++round) {
    if (stop != nullptr && stop->load(std::memory_order_relaxed)) break;
    std::shuffle(order.begin(), order.end(), shuffle);
    for (std::size_t c : order) {
      if (times[c].error) continue;
      const std::size_t batch = std::max<std::size_t>(contenders[c].batch, 1);
      try {
        const double total =
            checked_time(timer.measure(contenders[c].run_once, batch), names.at(c));
        times[c].samples.push_back(total / static_cast<double>(batch));
      } catch (...) {
        times[c].error = error_from_current_exception(names.at(c));
      }
    }
  }
  return times;
}

namespace {
// The contenders still in the race that worked, ranked by their median (fastest first).
std::vector<std::size_t> ranked_survivors(const RaceResult& race) {
  std::vector<std::pair<double, std::size_t>> medians;
  for (std::size_t k = 0; k < race.times.size(); ++k) {
    const auto& t = race.times[k];
    if (!race.left_out[k] && !t.error && !t.samples.empty()) {
      medians.emplace_back(summarize(t.samples).median, k);
    }
  }
  std::sort(medians.begin(), medians.end());
  std::vector<std::size_t> ranked;
  for (const auto& m : medians) ranked.push_back(m.second);
  return ranked;
}

// a's per-round time over b's, in the rounds both ran.
std::vector<double> per_round_ratios(const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<double> ratios;
  for (std::size_t r = 0; r < std::min(a.size(), b.size()); ++r) {
    if (b[r] > 0) ratios.push_back(a[r] / b[r]);
  }
  return ratios;
}

// The 95% interval of the median of per_round_ratios(a, b).
std::pair<double, double> ratio_interval(const std::vector<double>& a,
                                         const std::vector<double>& b) {
  std::vector<double> ratios = per_round_ratios(a, b);
  if (ratios.empty()) return {0, std::numeric_limits<double>::infinity()};
  std::sort(ratios.begin(), ratios.end());
  return median_interval(ratios);
}
}  // namespace

RaceResult race_interleaved(Timer timer, const std::vector<Contender>& contenders,
                            const std::vector<std::string>& names, const RaceSettings& settings,
                            std::uint64_t seed) {
  RaceResult race;
  race.times.resize(contenders.size());
  race.left_out.assign(contenders.size(), false);
  for (std::size_t stage = 0; stage < std::max<std::size_t>(settings.max_stages, 1); ++stage) {
    // The survivors that still run: a stage measures them alone, so their rounds stay aligned.
    std::vector<std::size_t> running;
    for (std::size_t k = 0; k < contenders.size(); ++k) {
      if (!race.left_out[k] && !race.times[k].error) running.push_back(k);
    }
    std::vector<Contender> field;
    std::vector<std::string> field_names;
    for (std::size_t k : running) {
      field.push_back(contenders[k]);
      field_names.push_back(names.at(k));
    }
    if (settings.stop != nullptr && settings.stop->load(std::memory_order_relaxed)) break;
    const auto more = measure_interleaved(timer, field, field_names, settings.rounds, seed + stage,
                                          settings.stop);
    for (std::size_t j = 0; j < running.size(); ++j) {
      auto& into = race.times[running[j]];
      into.samples.insert(into.samples.end(), more[j].samples.begin(), more[j].samples.end());
      if (more[j].error) into.error = more[j].error;
    }
    race.rounds += settings.rounds;
    const auto ranked = ranked_survivors(race);
    if (ranked.size() < 2) {
      race.separated = true;
      break;
    }
    const auto& best = race.times[ranked[0]].samples;
    for (std::size_t j = 2; j < ranked.size(); ++j) {
      if (ratio_interval(race.times[ranked[j]].samples, best).first > 1) {
        race.left_out[ranked[j]] = true;
      }
    }
    race.separated = ratio_interval(race.times[ranked[1]].samples, best).first > 1;
    if (race.separated) break;
  }
  const auto ranked = ranked_survivors(race);
  race.versus_best.assign(contenders.size(), std::numeric_limits<double>::quiet_NaN());
  if (ranked.empty()) return race;
  race.best = race.runner_up = ranked[0];
  if (ranked.size() > 1) race.runner_up = ranked[1];
  const auto& best = race.times[race.best].samples;
  for (std::size_t k = 0; k < contenders.size(); ++k) {
    const auto& own = race.times[k];
    if (own.error || own.samples.empty()) continue;
    const auto ratios = per_round_ratios(own.samples, best);
    if (!ratios.empty()) race.versus_best[k] = summarize(ratios).median;
  }
  race.versus_best[race.best] = 1;
  return race;
}

}  // namespace tunekit
