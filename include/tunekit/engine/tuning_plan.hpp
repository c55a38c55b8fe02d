// TuningPlan: which candidates a tuning measures, in which order, under which search settings (a
// space's budget counts the part of it the device can run: the tuning run's). Pure: it sees the
// set's shape and the candidates' priorities, never a device, a client or a timing, so
// it is unit-tested on its own (tests/core/test_tuning_plan.cpp). The tuning run (tuning_run.hpp)
// follows it and adds what only measuring can tell.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include "tunekit/settings.hpp"
#include "tunekit/space.hpp"
#include "tunekit/tunable.hpp"

namespace tunekit {

/// One `.with(...)` entry of a set as a plan sees it: its candidates [first, first + size), and
/// the expanded space they come from (null for a single tunable).
struct PlanEntry {
  std::size_t first = 0;
  std::size_t size = 1;
  const ExpandedSpace* space = nullptr;
};

/// The candidates of one space entry that one priority level holds.
struct PlannedSpace {
  std::size_t entry = 0;
  std::vector<std::size_t> members;  ///< set indices, ascending
  /// Every configuration of the space is in the level: it is searched by the strategy (start
  /// points first). Otherwise its members are too few to search and are measured one by one.
  bool whole = false;
};

/// One priority level: measured only when every candidate of the levels before it failed.
struct PlannedLevel {
  /// Single tunables, measured first (their times make racing inside the spaces effective),
  /// in priority order.
  std::vector<std::size_t> singles;
  /// The spaces of the level, by entry (the tuning run orders them by the best of their start
  /// points, or of their scouts where they have none: TuningRun::scout).
  std::vector<PlannedSpace> spaces;
  /// How many measurements the level expects: a whole space counts its search budget (for
  /// progress reports only).
  std::size_t planned_measurements = 0;
};

/// The plan of one tuning.
class TuningPlan {
 public:
  /// `entries`: the set's shape (plan_entries(set)), in set order and covering every candidate.
  /// `priorities`: one per candidate; nothing for a candidate whose priority could not be
  /// computed (it is left out of every level: the run records it as failed).
  /// Levels: the eligible candidates grouped by (group priority, own priority), highest first,
  /// set order inside a level; the negatively prioritised ones form a last level of their own,
  /// tried only when nothing else works.
  TuningPlan(std::vector<PlanEntry> entries,
             const std::vector<std::optional<CandidatePriority>>& priorities,
             SearchSettings search);

  const std::vector<PlannedLevel>& levels() const noexcept { return levels_; }
  const std::vector<PlanEntry>& entries() const noexcept { return entries_; }

  /// The entry candidate `index` belongs to.
  std::size_t entry_of(std::size_t index) const;
  /// Whether candidate `index` is a configuration of a space (false past the set's end).
  bool in_space(std::size_t index) const;
  /// Whether candidate `index` is a configuration of a space searched whole (every configuration
  /// of it in one level): its adjacent configurations are then candidates of that level too.
  bool searched_whole(std::size_t index) const;

  /// The set indices a search of space entry `entry` measures first: the space's own start
  /// points (Space::start_at), then those of `known` (winners of other keys) inside it.
  std::vector<std::size_t> starts(std::size_t entry, const std::vector<std::size_t>& known) const;
  /// What a tuning measures of `space` before any search: a whole space's start points (starts(),
  /// with `known`'s), all the members of one too small to search (one by one).
  std::vector<std::size_t> opening(const PlannedSpace& space,
                                   const std::vector<std::size_t>& known) const;
  /// What a tuning measures first, level by level: each level's singles, then each of its spaces'
  /// opening (without other keys' winners, nor the scouts of a space without start points, which
  /// are random). What serves a key while it is tuned in the background
  /// (engine/background_tuning.hpp).
  std::vector<std::size_t> measured_first() const;
  /// The members of `known` inside space entry `entry`, as configuration indices of its space.
  std::vector<std::size_t> known_configs(std::size_t entry,
                                         const std::vector<std::size_t>& known) const;

  const SearchSettings& search_settings() const noexcept { return search_; }

 private:
  std::vector<PlanEntry> entries_;
  SearchSettings search_;
  std::vector<PlannedLevel> levels_;
};

/// The shape of `set` (a TunableSet) as a TuningPlan takes it.
template <class Set>
std::vector<PlanEntry> plan_entries(const Set& set) {
  std::vector<PlanEntry> entries;
  entries.reserve(Set::entry_count);
  for (std::size_t e = 0; e < Set::entry_count; ++e) {
    const auto [first, last] = set.entry_range(e);
    entries.push_back({first, last - first, set.space_of_entry(e)});
  }
  return entries;
}

}  // namespace tunekit
