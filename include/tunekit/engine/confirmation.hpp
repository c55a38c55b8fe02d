// The confirmation race's bookkeeping on a tuning's outcomes, which depends on no set, key or
// client and is compiled once (src/confirmation.cpp): who races, and what the race's times then
// say of every candidate. TuningRun::confirm_winner runs the race itself (it calls the set's
// candidates).
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include "tunekit/benchmark.hpp"
#include "tunekit/outcome.hpp"

namespace tunekit::detail {

/// The working candidate with the lowest median, if one works: the winner where no race decides.
std::optional<std::size_t> fastest_working(const std::vector<AutotuneOutcome>& outcomes);

/// The candidates of a confirmation race, fastest first: at most `most` of the working ones,
/// each within `within` times the fastest's median. Fewer than two: nothing to race.
std::vector<std::size_t> race_contenders(const std::vector<AutotuneOutcome>& outcomes,
                                         std::size_t most, double within);

/// Records race `race` among `raced` (indices into `outcomes`, in the race's order): each
/// contender's times become the race's (one that failed in it fails, one left out early is put
/// on the best's scale), the best two are marked tied where the race could not tell them apart,
/// and every other working candidate is scaled by the winner's ratio of race to search time, so
/// that one ranking holds one kind of time. Returns that ratio (1 where the winner has no time):
/// what a searched time is multiplied by to become the race's kind.
double record_race(std::vector<AutotuneOutcome>& outcomes, const std::vector<std::size_t>& raced,
                   const RaceResult& race);

}  // namespace tunekit::detail
