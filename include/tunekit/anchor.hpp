// anchor(): rounds a size up to a power so that nearby problem sizes share one tuning.
#pragma once

#include <concepts>
#include <cstdint>
#include <limits>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "tunekit/error.hpp"

namespace tunekit {

namespace detail {

// anchor() within [0, ceiling]: the next power of `base` at or above x, or `ceiling` itself when
// that power is above it, so the result is never below x (before the caller's own max cap).
constexpr std::uint64_t anchor_within(std::uint64_t x, std::optional<std::uint64_t> max,
                                      std::optional<std::uint64_t> min, std::uint64_t base,
                                      std::uint64_t ceiling) {
  if (base < 2) throw std::invalid_argument("tunekit::anchor: base must be at least 2");
  std::uint64_t rounded = x;
  if (x > 1) {
    std::uint64_t power = 1;
    while (power < x && power <= ceiling / base) power *= base;
    rounded = power < x ? ceiling : power;
  }
  if (max && rounded > *max) rounded = *max;
  if (min && rounded < *min) rounded = *min;
  return rounded;
}

}  // namespace detail

/// Rounds `x` up to the next power of `base`, caps it at `max`, then floors it at `min`.
/// Exact integer arithmetic: anchor(2^29 + 1) is 2^30, never a float rounding away from it.
/// Past the largest power of `base` that fits in 64 bits, the result saturates upward at
/// 2^64 - 1: never below `x` (only an explicit `max` can bring it below).
constexpr std::uint64_t anchor(std::uint64_t x, std::optional<std::uint64_t> max = {},
                               std::optional<std::uint64_t> min = {}, std::uint64_t base = 2) {
  return detail::anchor_within(x, max, min, base, std::numeric_limits<std::uint64_t>::max());
}

/// A key field that anchors itself on construction: declare it once in the key struct,
/// and every key built from real sizes is rounded the same way. `Max`/`Min` of 0 mean "none".
///
/// Exact for every unsigned integer type from uint8_t to uint64_t: past T's largest power of
/// `Base` the value saturates upward at T's maximum, never wrapping to 0 nor going below the
/// input. Other types are refused at compile time: signed integers (a size is never negative)
/// and bool; floating fields are not anchored at all (a key may hold a plain float or double,
/// compared and cached exactly, NaN refused: see key.hpp). Bounds that do not fit in T are
/// refused at compile time. A value that T cannot hold (negative, or above T's maximum) is an
/// AutotuneError(invalid_key) naming it, never a silent wrap.
template <class T = std::uint64_t, std::uint64_t Max = 0, std::uint64_t Min = 0,
          std::uint64_t Base = 2>
class Anchored {
  static_assert(std::unsigned_integral<T> && !std::is_same_v<T, bool>,
                "tunekit::Anchored holds an unsigned integer size (uint8_t to uint64_t); "
                "signed, bool and floating types are refused");
  static_assert(Max <= std::numeric_limits<T>::max(), "tunekit::Anchored: Max does not fit in T");
  static_assert(Min <= std::numeric_limits<T>::max(), "tunekit::Anchored: Min does not fit in T");
  static_assert(Max == 0 || Min <= Max, "tunekit::Anchored: Min is above Max");
  static_assert(Base >= 2, "tunekit::Anchored: Base must be at least 2");

 public:
  using value_type = T;
  constexpr Anchored() = default;
  // Implicit on purpose: `MatmulKey{m, n, k}` anchors the sizes without extra code at call sites.
  // Any integer type is accepted, and checked against T's range rather than converted.
  template <std::integral U>
  requires(!std::is_same_v<U, bool>) constexpr Anchored(
      U value)  // NOLINT(google-explicit-constructor)
      : value_(static_cast<T>(detail::anchor_within(
            checked(value), Max ? std::optional<std::uint64_t>(Max) : std::nullopt,
            Min ? std::optional<std::uint64_t>(Min) : std::nullopt, Base,
            std::numeric_limits<T>::max()))) {}
  // Compares and computes as the plain number it holds.
  constexpr operator T() const { return value_; }  // NOLINT(google-explicit-constructor)
  constexpr T value() const { return value_; }
  friend std::ostream& operator<<(std::ostream& os, Anchored a) { return os << +a.value_; }

  // cereal: stored as a plain number.
  template <class Archive>
  T save_minimal(const Archive&) const {
    return value_;
  }
  template <class Archive>
  void load_minimal(const Archive&, const T& value) {
    value_ = value;
  }

 private:
  template <class U>
  static constexpr std::uint64_t checked(U value) {
    if constexpr (std::is_signed_v<U>) {
      if (value < 0) {
        throw AutotuneError(ErrorKind::invalid_key,
                            "an anchored size cannot be negative: " + std::to_string(value));
      }
    }
    const auto wide = static_cast<std::uint64_t>(value);
    if (wide > std::numeric_limits<T>::max()) {
      throw AutotuneError(ErrorKind::invalid_key,
                          "the size " + std::to_string(wide) +
                              " does not fit in its anchored "
                              "field (at most " +
                              std::to_string(std::uint64_t{std::numeric_limits<T>::max()}) + ")");
    }
    return wide;
  }

  T value_ = 0;
};

}  // namespace tunekit
