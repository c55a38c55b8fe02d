// Result<T>: a candidate's value or its AutotuneError, for tunables that report failure
// without throwing.
#pragma once

#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>

#include "tunekit/error.hpp"

namespace tunekit {

/// The failing side of a Result, convertible to any Result<T>.
struct Failure {
  AutotuneError error;
};

/// Makes a Failure: `return tunekit::fail(ErrorKind::launch, "work-group too large");`
inline Failure fail(ErrorKind kind, std::string message) {
  return Failure{AutotuneError(kind, std::move(message))};
}

/// A value, or the AutotuneError that prevented it.
template <class T>
class Result {
 public:
  using value_type = T;
  Result(T value) : state_(std::in_place_index<0>, std::move(value)) {}                  // NOLINT
  Result(Failure failure) : state_(std::in_place_index<1>, std::move(failure.error)) {}  // NOLINT

  bool has_value() const noexcept { return state_.index() == 0; }
  explicit operator bool() const noexcept { return has_value(); }
  /// The value; throws the error when there is none.
  T& value() & { return check(), std::get<0>(state_); }
  const T& value() const& { return check(), std::get<0>(state_); }
  T&& value() && { return check(), std::get<0>(std::move(state_)); }
  /// The error; only valid when !has_value().
  const AutotuneError& error() const { return std::get<1>(state_); }

 private:
  void check() const {
    if (!has_value()) throw std::get<1>(state_);
  }
  std::variant<T, AutotuneError> state_;
};

/// Success or the AutotuneError of an operation with no value.
template <>
class Result<void> {
 public:
  using value_type = void;
  Result() = default;
  Result(Failure failure) : error_(std::move(failure.error)) {}  // NOLINT

  bool has_value() const noexcept { return !error_.has_value(); }
  explicit operator bool() const noexcept { return has_value(); }
  void value() const {
    if (error_) throw *error_;
  }
  const AutotuneError& error() const { return *error_; }

 private:
  std::optional<AutotuneError> error_;
};

template <class T>
inline constexpr bool is_result_v = false;
template <class T>
inline constexpr bool is_result_v<Result<T>> = true;

/// The type a call returns once a Result is unwrapped: Result<T> -> T, anything else unchanged.
template <class R>
struct unwrapped_result {
  using type = R;
};
template <class T>
struct unwrapped_result<Result<T>> {
  using type = T;
};
template <class R>
using unwrapped_result_t = typename unwrapped_result<R>::type;

}  // namespace tunekit
