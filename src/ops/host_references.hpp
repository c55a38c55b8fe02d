// What the host references of reduce and transpose judge a candidate's output by (matmul's is
// in matmul.cpp): the exact result of a reduction computed in double precision and what a
// kernel's float result may differ from it by, and the exact transposition. reduce.cpp and
// transpose.cpp read the data; tests/ops check the rules.
#pragma once

#include <cfloat>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "tunekit/ops/reduce.hpp"

namespace tunekit::ops::detail {

/// Per result: the sum (or the max) of its inputs, and the sum of their magnitudes (sum only).
struct ExactReduction {
  ReduceOp op = ReduceOp::sum;
  std::vector<double> value;
  std::vector<double> magnitude;
};

/// How far a float sum may be from the exact one: 32 units of float rounding of the sum of the
/// magnitudes, whatever the order of the additions (the kernels' orders differ). For the random
/// benchmark inputs (mean magnitude 0.55) that is what the former bound of 1e-6 per term gave;
/// unlike it, it follows the magnitude of a caller's inputs.
inline double sum_tolerance(double magnitude) { return 32 * 0x1p-24 * magnitude; }

/// Why result `i` of a kernel, `got`, is not the exact one, or nothing: a max must be exact (a
/// max is the same in any order), a sum within sum_tolerance() (or past float's range where
/// the magnitudes are: a partial sum may overflow); a NaN or infinite exact result must be met
/// as it is.
inline std::optional<std::string> differs_from_exact(const ExactReduction& exact, std::size_t i,
                                                     float got) {
  const double expected = exact.value[i];
  const double result = got;
  const bool max = exact.op == ReduceOp::max;
  if (!std::isfinite(expected) || (!max && !std::isfinite(exact.magnitude[i]))) {
    if (result == expected || (std::isnan(result) && std::isnan(expected))) return std::nullopt;
  } else if (max) {
    if (result == expected) return std::nullopt;
  } else if (exact.magnitude[i] > FLT_MAX && !std::isfinite(result)) {
    return std::nullopt;  // a float partial sum of such terms may overflow, whatever the order
  } else if (std::fabs(result - expected) <= sum_tolerance(exact.magnitude[i])) {
    return std::nullopt;
  }
  return "result " + std::to_string(got) + ", the exact " + (max ? "max " : "sum ") +
         std::to_string(expected) +
         (max ? std::string()
              : " (allowed: within " + std::to_string(sum_tolerance(exact.magnitude[i])) + ")");
}

/// Why `out` is not the transpose of the rows x cols matrix `in` (both row-major), or nothing:
/// every element must be moved exactly (compared as bits: a NaN moved is a NaN in place).
inline std::optional<std::string> transposition_problem(const std::vector<float>& in,
                                                        std::size_t cols,
                                                        const std::vector<float>& out) {
  const std::size_t rows = cols == 0 ? 0 : in.size() / cols;
  if (out.size() != in.size()) {
    return "an output of " + std::to_string(out.size()) + " elements for " +
           std::to_string(in.size());
  }
  std::size_t wrong = 0;
  std::string first;
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t c = 0; c < cols; ++c) {
      const float expected = in[r * cols + c], got = out[c * rows + r];
      if (std::memcmp(&expected, &got, sizeof(float)) == 0) continue;
      if (wrong++ == 0) {
        first = "out(" + std::to_string(c) + ", " + std::to_string(r) + ") is " +
                std::to_string(got) + " where in(" + std::to_string(r) + ", " + std::to_string(c) +
                ") is " + std::to_string(expected);
      }
    }
  }
  if (wrong == 0) return std::nullopt;
  return first + (wrong > 1 ? " (" + std::to_string(wrong) + " elements wrong)" : std::string());
}

}  // namespace tunekit::ops::detail
