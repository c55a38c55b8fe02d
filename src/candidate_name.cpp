// The one owner of the candidate-name format (candidate_name.hpp).
#include "tunekit/candidate_name.hpp"

namespace tunekit {

std::string candidate_name(std::string_view space, std::string_view config) {
  std::string name;
  name.reserve(space.size() + config.size() + 2);
  name.append(space).append(1, '[').append(config).append(1, ']');
  return name;
}

std::optional<CandidateNameParts> split_candidate_name(std::string_view name) {
  const auto open = name.find('[');
  if (open == std::string_view::npos || open == 0 || name.size() < open + 3 || name.back() != ']') {
    return std::nullopt;
  }
  return CandidateNameParts{name.substr(0, open), name.substr(open + 1, name.size() - open - 2)};
}

}  // namespace tunekit
