// AutotuneError's text: the kind, the tunable and the reason, and for a failed tuning every
// distinct reason of its candidates once, naming the candidates that hit it; the error an
// exception stands for.
#include "tunekit/error.hpp"

#include <map>
#include <new>
#include <utility>

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

std::optional<ErrorKind> error_kind_named(std::string_view text) {
  for (int k = 0; k <= static_cast<int>(ErrorKind::invalid_key); ++k) {
    if (to_string(static_cast<ErrorKind>(k)) == text) return static_cast<ErrorKind>(k);
  }
  return std::nullopt;
}

std::vector<std::vector<std::size_t>> group_failures(
    const std::vector<const AutotuneError*>& errors) {
  std::vector<std::vector<std::size_t>> groups;
  std::map<std::pair<ErrorKind, std::string>, std::size_t> group_of;
  for (std::size_t i = 0; i < errors.size(); ++i) {
    if (errors[i] == nullptr) continue;
    const auto [at, fresh] =
        group_of.try_emplace({errors[i]->kind(), errors[i]->summary()}, groups.size());
    if (fresh) groups.emplace_back();
    groups[at->second].push_back(i);
  }
  return groups;
}

namespace {

// A failed tuning's text: each distinct failure once, whole, after the candidates that hit it
// ("'a', 'b' and 6 more (8 candidates): build failed: ..."), in the order they first failed.
std::string describe(ErrorKind kind, const std::string& message, const std::string& tunable,
                     const std::vector<AutotuneError>& causes) {
  std::string text;
  if (!tunable.empty()) text += "'" + tunable + "': ";
  text += std::string(to_string(kind)) + ": " + message;
  std::vector<const AutotuneError*> errors;
  for (const auto& cause : causes) errors.push_back(&cause);
  constexpr std::size_t named = 8;
  for (const auto& group : group_failures(errors)) {
    const AutotuneError& first = causes[group.front()];
    text += "\n  - ";
    if (group.size() == 1) {
      text += first.what();
      continue;
    }
    for (std::size_t i = 0; i < group.size() && i < named; ++i) {
      text += (i ? ", '" : "'") + causes[group[i]].tunable() + "'";
    }
    if (group.size() > named) text += " and " + std::to_string(group.size() - named) + " more";
    text += " (" + std::to_string(group.size()) +
            " candidates): " + std::string(to_string(first.kind())) + ": " + first.message();
  }
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

std::string AutotuneError::summary() const {
  constexpr std::size_t most = 240;
  std::string line = message_.substr(0, message_.find('\n'));
  if (line.size() <= most) return line;
  auto end = line.rfind(' ', most);
  if (end == std::string::npos || end == 0) {  // one long word: cut between UTF-8 characters
    end = most;
    while (end > 0 && (static_cast<unsigned char>(line[end]) & 0xc0) == 0x80) --end;
  }
  line.resize(end);
  return line + " ...";
}

AutotuneError AutotuneError::named(std::string tunable) const {
  if (!tunable_.empty()) return *this;
  AutotuneError same(kind_, message_, std::move(tunable), causes_);
  same.refused_inputs_ = refused_inputs_;
  same.changed_outputs_ = changed_outputs_;
  same.beyond_device_limits_ = beyond_device_limits_;
  return same;
}

AutotuneError device_limit(std::string message, std::string tunable) {
  AutotuneError limit(ErrorKind::out_of_resources, std::move(message), std::move(tunable));
  limit.beyond_device_limits_ = true;
  return limit;
}

AutotuneError outputs_changed(AutotuneError failure) {
  failure.changed_outputs_ = true;
  return failure;
}

AutotuneError unsupported_inputs(std::string message, std::string tunable) {
  AutotuneError refusal(ErrorKind::launch, std::move(message), std::move(tunable));
  refusal.refused_inputs_ = true;
  return refusal;
}

AutotuneError error_from_exception(std::exception_ptr failure, const std::string& tunable) {
  try {
    std::rethrow_exception(failure);
  } catch (const AutotuneError& e) {
    return e.named(tunable);
  } catch (const std::bad_alloc&) {
    return AutotuneError(ErrorKind::allocation, "out of memory (std::bad_alloc)", tunable);
  } catch (const std::exception& e) {
    return AutotuneError(ErrorKind::runtime, std::string("threw: ") + e.what(), tunable);
  } catch (...) {
    return AutotuneError(ErrorKind::runtime, "threw an exception of unknown type", tunable);
  }
}

AutotuneError error_from_current_exception(const std::string& tunable) {
  return error_from_exception(std::current_exception(), tunable);
}

}  // namespace tunekit
