// Search strategies over a parameter space: exhaustive, random sampling, simulated annealing and a
// model-guided search, each within a budget of evaluations and seconds; and replay of a recorded
// exhaustive run, so that strategies are compared without a device, cheaply and deterministically.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tunekit/outcome.hpp"
#include "tunekit/settings.hpp"
#include "tunekit/space.hpp"

namespace tunekit {

/// What a strategy measures: configuration i's time (lower is better; nothing when it failed),
/// and how many seconds the search has spent so far.
class SearchEvaluator {
 public:
  virtual ~SearchEvaluator() = default;
  virtual std::optional<double> evaluate(std::size_t config) = 0;
  virtual double spent_seconds() const = 0;
  /// The upper end of the interval of configuration `config`'s time, once evaluated: a gain
  /// counts towards the patience only when it is below the best. The default knows no interval
  /// (the time itself stands).
  virtual double upper(std::size_t config) const {
    (void)config;
    return 0;
  }
  /// The best time of the whole tuning so far (other spaces and candidates included): a space
  /// whose own best stays far behind it is abandoned (SearchBudget::abandon_after).
  virtual double leader_time() const { return std::numeric_limits<double>::infinity(); }
  /// Whether the whole tuning needs nothing more (a candidate is good enough): the search ends.
  virtual bool finished() const { return false; }
  /// What the strategy will evaluate next, in order, as far as it knows (`likely` false: only
  /// may, e.g. annealing's neighbours), so that a live evaluator builds them ahead; `likely`
  /// lists hold only evaluations certain to come (within the budget, the patience, the
  /// abandoning and the refinement's allowance). Evaluating never depends on it; the default
  /// ignores it.
  virtual void prefetch(const std::vector<std::size_t>& configs, bool likely) {
    (void)configs, (void)likely;
  }
  /// Whether evaluating `config` costs little because what it runs is built already (an earlier
  /// tuning in this process measured it): among a configuration's neighbours, annealing moves to
  /// a cheap one not evaluated yet before one that must be built. The default: none is.
  virtual bool cheap(std::size_t config) const {
    (void)config;
    return false;
  }
};

/// The configurations a search evaluated, in order, and the best one.
struct SearchResult {
  std::vector<std::size_t> evaluated;
  std::optional<std::size_t> best;
  double best_time = std::numeric_limits<double>::infinity();
  /// A start point worked and nothing beat it by the margin: the refinement tried no trades
  /// (the start points trusted as they are), and nor does the tuner's climb after its race.
  bool trusts_start_points = false;
  /// What ended the strategy before it measured the whole space: its patience, its budget of
  /// configurations or seconds, or the space left far behind the leader (empty where it measured
  /// everything, or the tuning ended it from outside). What a report says of the configurations
  /// it never reached.
  std::string ended_by;
};

/// The configurations a search measures first (indices into its space), in order.
struct SearchStarts {
  /// Known good on this device: a search that then finds nothing clearly faster than the best of
  /// them ends after the seeded patience (SearchBudget::seeded_patience) and trusts them
  /// (SearchResult::trusts_start_points).
  std::vector<std::size_t> vouched;
  /// Known good on other devices (Space::start_at's found_on): measured after the vouched ones,
  /// but the search keeps its whole patience.
  std::vector<std::size_t> unvouched;
  /// Random configurations of a space without a start point that works, which the tuning
  /// measured to rank it among its other spaces (SearchSettings::scouts): the search's first
  /// draws, measured after the start points. They vouch for nothing and count like any
  /// configuration the strategy picks (towards the patience, the first sample, and the first
  /// abandon_after that judge a space behind the leader); in a tuning, their seconds count
  /// towards the space's time limit (TuningRun counts them; the start points' do not).
  std::vector<std::size_t> scouted;
};

/// The start points of a search of `space` on the device of identity `device` (empty: unknown,
/// every start point vouches for it): the space's own (Space::start_at; none when `own` is false,
/// SearchSettings::start_points), then `known` (e.g. the winners of neighbouring keys on this
/// device, which vouch). A configuration listed twice is measured once, vouched if either says so.
SearchStarts search_starts(const ExpandedSpace& space, std::string_view device,
                           const std::vector<std::size_t>& known = {}, bool own = true);

/// `count` distinct configurations of a space of `size`, at random from `seed`, in ascending
/// order (all of them when the space holds no more): a space's scouts (SearchStarts::scouted).
std::vector<std::size_t> scouts_of(std::size_t size, std::size_t count, std::uint64_t seed);

/// Runs `strategy` over `space` within `budget`; never evaluates a configuration twice. The
/// start points are measured first, then the scouts; annealing walks on from the best of them. The
/// search stops early once `budget.patience` evaluations after them gained nothing beyond
/// `budget.margin` (the seeded patience while a vouched start point leads), and at least
/// `budget.explore` were evaluated.
SearchResult search(SearchStrategy strategy, const ExpandedSpace& space, SearchEvaluator& evaluator,
                    const SearchBudget& budget, std::uint64_t seed, const SearchStarts& starts);

/// The same from the space's own start points (unless `own_starts` is false), then
/// `extra_starts`, all vouching: search_starts(space, "", extra_starts, own_starts).
SearchResult search(SearchStrategy strategy, const ExpandedSpace& space, SearchEvaluator& evaluator,
                    const SearchBudget& budget, std::uint64_t seed,
                    const std::vector<std::size_t>& extra_starts = {}, bool own_starts = true);

/// One configuration of a recorded run: its time (nothing if it failed) and what measuring it
/// cost (build + warm-up + samples), so that a replayed search spends what a live one would.
struct RecordedEvaluation {
  std::optional<double> time;
  double cost_seconds = 0;
};

/// A recorded exhaustive run, by configuration string ("TM=8,TN=4").
using ReplayTable = std::map<std::string, RecordedEvaluation>;

/// Writes `table` as tab-separated text: config, time in seconds or "failed", cost in seconds.
void save_replay_table(const std::filesystem::path& path, const ReplayTable& table);
/// Reads a table written by save_replay_table; throws AutotuneError(cache) naming the bad line.
ReplayTable load_replay_table(const std::filesystem::path& path);
/// The parser behind load_replay_table, over the file's text; `source` names it in errors
/// ("<source>:<line>: ..."). Throws AutotuneError(cache) and nothing else (fuzzed: fuzz/).
ReplayTable parse_replay_table(std::string_view text, std::string_view source = "replay table");

/// The table of a tuning that measured space `space_name` exhaustively (Level::full): each
/// "space_name[config]" candidate's median (or failure) and measuring cost.
ReplayTable replay_table_from(const TuningReport& report, std::string_view space_name);

/// Rebuilds the space a replay table was recorded on: every parameter with the values seen,
/// and exactly the recorded configurations valid. Throws AutotuneError(cache) on a malformed name.
ExpandedSpace space_from_table(const ReplayTable& table, std::string name = "replayed");

/// Evaluates from a recorded table instead of a device.
class ReplayEvaluator : public SearchEvaluator {
 public:
  ReplayEvaluator(const ExpandedSpace& space, const ReplayTable& table)
      : space_(space), table_(table) {}
  std::optional<double> evaluate(std::size_t config) override;
  double spent_seconds() const override { return spent_; }

 private:
  const ExpandedSpace& space_;
  const ReplayTable& table_;
  double spent_ = 0;
};

}  // namespace tunekit
