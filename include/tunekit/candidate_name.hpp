// The name of a space's candidate, "space[K=V,...]": written by candidate_name, read by
// split_candidate_name, and nowhere else. Cached results are matched to their set by these
// names, so the set, the search's replay tables, the report and the ops all go through here.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tunekit {

/// "blocked[TM=8,TN=4]": configuration `config` (as Config::to_string writes it) of the space
/// named `space`.
std::string candidate_name(std::string_view space, std::string_view config);

/// The two parts of a name that candidate_name wrote.
struct CandidateNameParts {
  std::string_view space;   ///< before the first '[' (never empty)
  std::string_view config;  ///< between it and the final ']'; parse with parse_config
};

/// The parts of `name`, or nothing when it is not a space's candidate name (a single tunable's
/// name, or anything without a space name before the first '[' and a final ']'). Only the
/// brackets are checked: parse_config (space.hpp) reads the configuration, and
/// parse_candidate_name (report.hpp) does both.
std::optional<CandidateNameParts> split_candidate_name(std::string_view name);

/// The first of `names` that an earlier one repeats, or nothing. Hashed, not sorted: matmul's
/// 14,000 names, sorted, cost a process 15 ms at its first call (TunableSet::repeated_name).
std::optional<std::string> first_repeated_name(const std::vector<std::string>& names);

}  // namespace tunekit
