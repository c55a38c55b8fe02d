// Whole groups of a size: how many groups hold a count, and a count rounded up to whole groups (a
// launch's global size of whole work-groups); the widest float vector that divides a row's length.
// One owner for the ops and tools/kernel_lab.
#pragma once

#include <cstddef>

namespace tunekit::ops {

/// How many groups of `by` (> 0) hold `x`: x / by, rounded up.
constexpr std::size_t ceil_div(std::size_t x, std::size_t by) { return (x + by - 1) / by; }

/// `x` rounded up to a multiple of `to` (> 0).
constexpr std::size_t round_up(std::size_t x, std::size_t to) { return ceil_div(x, to) * to; }

/// The widest vector, in floats (4, 2 or 1), that divides `size`: rows of that length start on
/// such a boundary, and the kernels load them as vectors of it (or element by element before it).
constexpr std::size_t widest_vector(std::size_t size) {
  return size % 4 == 0 ? 4 : size % 2 == 0 ? 2 : 1;
}

}  // namespace tunekit::ops
