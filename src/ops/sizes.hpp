// Whole groups of a size: how many groups hold a count, and a count rounded up to whole groups (a
// launch's global size of whole work-groups). One owner for the ops and tools/kernel_lab.
#pragma once

#include <cstddef>

namespace tunekit::ops {

/// How many groups of `by` (> 0) hold `x`: x / by, rounded up.
constexpr std::size_t ceil_div(std::size_t x, std::size_t by) { return (x + by - 1) / by; }

/// `x` rounded up to a multiple of `to` (> 0).
constexpr std::size_t round_up(std::size_t x, std::size_t to) { return ceil_div(x, to) * to; }

}  // namespace tunekit::ops
