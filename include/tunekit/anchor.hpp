// anchor(): rounds a size up to a power so that nearby problem sizes share one tuning.
#pragma once

#include <concepts>
#include <cstdint>
#include <limits>
#include <optional>
#include <ostream>
#include <stdexcept>

namespace tunekit {

/// Rounds `x` up to the next power of `base`, caps it at `max`, then floors it at `min`.
/// Exact integer arithmetic: anchor(2^29 + 1) is 2^30, never a float rounding away from it.
/// Past the largest power of `base` that fits in 64 bits, the result saturates at that power.
constexpr std::uint64_t anchor(std::uint64_t x, std::optional<std::uint64_t> max = {},
                               std::optional<std::uint64_t> min = {}, std::uint64_t base = 2) {
  if (base < 2) throw std::invalid_argument("tunekit::anchor: base must be at least 2");
  std::uint64_t rounded = x;
  if (x > 1) {
    std::uint64_t power = 1;
    while (power < x && power <= std::numeric_limits<std::uint64_t>::max() / base) power *= base;
    rounded = power;
  }
  if (max && rounded > *max) rounded = *max;
  if (min && rounded < *min) rounded = *min;
  return rounded;
}

/// A key field that anchors itself on construction: declare it once in the key struct,
/// and every key built from real sizes is rounded the same way. `Max`/`Min` of 0 mean "none".
template <std::unsigned_integral T = std::uint64_t, std::uint64_t Max = 0, std::uint64_t Min = 0,
          std::uint64_t Base = 2>
class Anchored {
 public:
  using value_type = T;
  constexpr Anchored() = default;
  // Implicit on purpose: `MatmulKey{m, n, k}` anchors the sizes without extra code at call sites.
  constexpr Anchored(T value)  // NOLINT(google-explicit-constructor)
      : value_(static_cast<T>(anchor(value, Max ? std::optional<std::uint64_t>(Max) : std::nullopt,
                                     Min ? std::optional<std::uint64_t>(Min) : std::nullopt,
                                     Base))) {}
  // Compares and computes as the plain number it holds.
  constexpr operator T() const { return value_; }  // NOLINT(google-explicit-constructor)
  constexpr T value() const { return value_; }
  friend std::ostream& operator<<(std::ostream& os, Anchored a) { return os << a.value_; }

  // cereal: stored as a plain number.
  template <class Archive>
  T save_minimal(const Archive&) const { return value_; }
  template <class Archive>
  void load_minimal(const Archive&, const T& value) { value_ = value; }

 private:
  T value_ = 0;
};

}  // namespace tunekit
