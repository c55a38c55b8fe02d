// The decisions' transitions that do not depend on the set (engine/decision.hpp).
#include "tunekit/engine/decision.hpp"

#include <algorithm>
#include <utility>

namespace tunekit::detail {

Decision failed_with(AutotuneError failure) {
  Decision failed;
  failed.state = DecisionState::failed;
  failed.failure = std::make_shared<const AutotuneError>(std::move(failure));
  return failed;
}

std::optional<Decision> demoted(const Decision& current, std::uint32_t failed,
                                AutotuneError failure) {
  Decision moved = current;
  moved.strikes = 0;
  moved.failures.push_back(std::move(failure));
  std::erase(moved.ranking, failed);
  if (moved.ranking.empty()) return std::nullopt;
  moved.index = moved.ranking.front();
  return moved;
}

}  // namespace tunekit::detail
