// The one owner of the candidate-name format (candidate_name.hpp), and its reading for the
// report (report.hpp: parse_candidate_name).
#include "tunekit/candidate_name.hpp"

#include <stdexcept>
#include <unordered_set>

#include "tunekit/report.hpp"
#include "tunekit/space.hpp"

namespace tunekit {

std::string candidate_name(std::string_view space, std::string_view config) {
  std::string name;
  name.reserve(space.size() + config.size() + 2);
  name.append(space).append(1, '[').append(config).append(1, ']');
  return name;
}

std::optional<std::string> first_repeated_name(const std::vector<std::string>& names) {
  std::unordered_set<std::string_view> seen;
  seen.reserve(names.size());
  for (const std::string& name : names) {
    if (!seen.insert(name).second) return name;
  }
  return std::nullopt;
}

std::optional<CandidateNameParts> split_candidate_name(std::string_view name) {
  const auto open = name.find('[');
  if (open == std::string_view::npos || open == 0 || name.size() < open + 2 || name.back() != ']') {
    return std::nullopt;
  }
  return CandidateNameParts{name.substr(0, open), name.substr(open + 1, name.size() - open - 2)};
}

std::optional<CandidateParameters> parse_candidate_name(std::string_view name) {
  const auto parts = split_candidate_name(name);
  if (!parts) return std::nullopt;
  CandidateParameters parsed{std::string(parts->space), {}};
  try {
    for (auto& [parameter, value] : parse_config(parts->config)) {
      parsed.values.emplace_back(std::move(parameter), value);
    }
  } catch (const std::invalid_argument&) {
    return std::nullopt;  // not a configuration: a single tunable's name such as "a[b]"
  }
  return parsed;
}

}  // namespace tunekit
