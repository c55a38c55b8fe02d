// AutotuneError's text: the kind, the tunable and the reason, and for a failed tuning every
// candidate's own reason on its own line.
#include "tunekit/error.hpp"

namespace tunekit {

std::string_view to_string(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::build:
      return "build failed";
    case ErrorKind::launch:
      return "launch failed";
    case ErrorKind::out_of_resources:
      return "out of resources";
    case ErrorKind::allocation:
      return "allocation failed";
    case ErrorKind::runtime:
      return "runtime error";
    case ErrorKind::wrong_output:
      return "wrong output";
    case ErrorKind::invalid_measurement:
      return "invalid measurement";
    case ErrorKind::skipped:
      return "skipped";
    case ErrorKind::no_valid_candidate:
      return "no valid candidate";
    case ErrorKind::settings:
      return "bad setting";
    case ErrorKind::cache:
      return "cache error";
    case ErrorKind::device:
      return "no usable device";
    case ErrorKind::invalid_key:
      return "invalid key";
  }
  return "error";
}

namespace {
std::string describe(ErrorKind kind, const std::string& message, const std::string& tunable,
                     const std::vector<AutotuneError>& causes) {
  std::string text;
  if (!tunable.empty()) text += "'" + tunable + "': ";
  text += std::string(to_string(kind)) + ": " + message;
  for (const auto& cause : causes) text += "\n  - " + std::string(cause.what());
  return text;
}
}  // namespace

AutotuneError::AutotuneError(ErrorKind kind, std::string message, std::string tunable,
                             std::vector<AutotuneError> causes)
    : std::runtime_error(describe(kind, message, tunable, causes)),
      kind_(kind),
      message_(std::move(message)),
      tunable_(std::move(tunable)),
      causes_(std::move(causes)) {}

AutotuneError AutotuneError::named(std::string tunable) const {
  if (!tunable_.empty()) return *this;
  return AutotuneError(kind_, message_, std::move(tunable), causes_);
}

}  // namespace tunekit
