// The plan of a tuning: priority levels, each split into single tunables and spaces.
#include "tunekit/engine/tuning_plan.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <utility>

namespace tunekit {

namespace {

struct Ranked {
  std::size_t index;
  CandidatePriority priority;
};

// Whether `a` goes in a level before `b`'s.
bool before(const Ranked& a, const Ranked& b) { return a.priority.before(b.priority); }

}  // namespace

TuningPlan::TuningPlan(std::vector<PlanEntry> entries,
                       const std::vector<std::optional<CandidatePriority>>& priorities,
                       SearchSettings search)
    : entries_(std::move(entries)), search_(std::move(search)) {
  const std::size_t size = entries_.empty() ? 0 : entries_.back().first + entries_.back().size;
  if (priorities.size() != size) {
    throw std::invalid_argument("tunekit: a tuning plan needs one priority per candidate");
  }
  std::vector<Ranked> eligible, skipped;
  for (std::size_t i = 0; i < priorities.size(); ++i) {
    if (!priorities[i]) continue;
    (priorities[i]->skipped() ? skipped : eligible).push_back({i, *priorities[i]});
  }
  std::stable_sort(eligible.begin(), eligible.end(), before);
  std::vector<std::vector<std::size_t>> grouped;
  for (std::size_t i = 0; i < eligible.size(); ++i) {
    if (i == 0 || before(eligible[i - 1], eligible[i])) grouped.emplace_back();
    grouped.back().push_back(eligible[i].index);
  }
  if (!skipped.empty()) {
    grouped.emplace_back();
    for (const auto& s : skipped) grouped.back().push_back(s.index);
  }

  // The one place a level is split into single tunables and spaces.
  for (const auto& candidates : grouped) {
    PlannedLevel level;
    std::map<std::size_t, std::vector<std::size_t>> space_members;  // entry -> candidates
    for (std::size_t i : candidates) {
      const std::size_t entry = entry_of(i);
      if (entries_[entry].space != nullptr) {
        space_members[entry].push_back(i);
      } else {
        level.singles.push_back(i);
      }
    }
    level.planned_measurements = level.singles.size();
    for (auto& [entry, members] : space_members) {
      const std::size_t space_size = entries_[entry].space->size();
      const bool whole = members.size() == space_size;
      level.planned_measurements +=
          whole ? search_.budget_for(space_size).max_evaluations : members.size();
      level.spaces.push_back({entry, std::move(members), whole});
    }
    levels_.push_back(std::move(level));
  }
}

std::size_t TuningPlan::entry_of(std::size_t index) const {
  const auto after =
      std::upper_bound(entries_.begin(), entries_.end(), index,
                       [](std::size_t i, const PlanEntry& entry) { return i < entry.first; });
  if (after == entries_.begin() || index >= (after - 1)->first + (after - 1)->size) {
    throw std::out_of_range("tunekit: candidate index out of range");
  }
  return static_cast<std::size_t>(after - entries_.begin()) - 1;
}

bool TuningPlan::in_space(std::size_t index) const {
  if (entries_.empty() || index >= entries_.back().first + entries_.back().size) return false;
  return entries_[entry_of(index)].space != nullptr;
}

bool TuningPlan::searched_whole(std::size_t index) const {
  if (!in_space(index)) return false;
  const std::size_t entry = entry_of(index);
  for (const PlannedLevel& level : levels_) {
    for (const PlannedSpace& space : level.spaces) {
      if (space.entry == entry && space.whole) return true;
    }
  }
  return false;
}

std::vector<std::size_t> TuningPlan::starts(std::size_t entry,
                                            const std::vector<std::size_t>& known) const {
  const PlanEntry& e = entries_.at(entry);
  std::vector<std::size_t> starts;
  if (e.space != nullptr && search_.start_points) {
    for (std::size_t config : e.space->starts()) starts.push_back(e.first + config);
  }
  for (std::size_t config : known_configs(entry, known)) starts.push_back(e.first + config);
  return starts;
}

std::vector<std::size_t> TuningPlan::opening(const PlannedSpace& space,
                                             const std::vector<std::size_t>& known) const {
  return space.whole ? starts(space.entry, known) : space.members;
}

std::vector<std::size_t> TuningPlan::measured_first() const {
  std::vector<std::size_t> first;
  for (const PlannedLevel& level : levels_) {
    first.insert(first.end(), level.singles.begin(), level.singles.end());
    for (const PlannedSpace& space : level.spaces) {
      const auto opened = opening(space, {});
      first.insert(first.end(), opened.begin(), opened.end());
    }
  }
  return first;
}

std::vector<std::size_t> TuningPlan::known_configs(std::size_t entry,
                                                   const std::vector<std::size_t>& known) const {
  const PlanEntry& e = entries_.at(entry);
  std::vector<std::size_t> configs;
  for (std::size_t i : known) {
    if (i >= e.first && i < e.first + e.size) configs.push_back(i - e.first);
  }
  return configs;
}

}  // namespace tunekit
