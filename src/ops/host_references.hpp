// What the host references of reduce and transpose judge a candidate's output by (matmul's is
// in matmul.cpp): the exact result of a reduction computed in double precision and what a
// kernel's float result may differ from it by, and the exact transposition; and the clear step
// of every shipped op's host reference. reduce.cpp and transpose.cpp read the data; tests/ops
// check the rules.
#pragma once

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "tunekit/cl/client.hpp"
#include "tunekit/ops/reduce.hpp"

namespace tunekit::ops::detail {

/// The clear step of a shipped op's HostReference: every byte of an output 0xFF before a
/// candidate is validated on the shared inputs, a NaN in f32, f16 and bf16 that no candidate
/// computes from the random inputs, so that an output a candidate leaves unwritten holds no
/// earlier candidate's right answer (CandidateValidation::validation_inputs).
inline void clear_output(cl::Client& client, const ::cl::Buffer& buffer, std::size_t bytes) {
  const unsigned char pattern = 0xFF;
  client.fill_bytes(buffer, &pattern, 1, 0, bytes);
}

/// Per result of a reduction: the sum (or the max) of its terms in double precision, and what
/// the bound on a float sum depends on. Every result has `terms` terms.
struct ExactReduction {
  ReduceOp op = ReduceOp::sum;
  std::size_t terms = 0;
  std::vector<double> value;      ///< NaN or infinite where a term is
  std::vector<double> magnitude;  ///< the sum of the finite terms' |x| (sum only)
  std::vector<char> integers;     ///< every finite term a whole number (sum only)

  ExactReduction(ReduceOp reduction, std::size_t results, std::size_t terms_each)
      : op(reduction),
        terms(terms_each),
        value(results, reduction == ReduceOp::max ? -INFINITY : 0.0),
        magnitude(results, 0.0),
        integers(results, 1) {}

  /// Takes `count` terms from `x` into result `i` (a tight loop: it runs over whole inputs).
  void take(std::size_t i, const float* x, std::size_t count) {
    if (op == ReduceOp::max) {
      double best = value[i];
      for (std::size_t k = 0; k < count; ++k) {
        best = std::fmax(best, x[k]);  // as the kernels' fmax: a NaN term is passed over
      }
      value[i] = best;
      return;
    }
    double sum = value[i], size = magnitude[i];
    bool whole = integers[i] != 0;
    for (std::size_t k = 0; k < count; ++k) {
      const double term = x[k], a = std::fabs(term);
      sum += term;
      if (a <= DBL_MAX) size += a;  // finite terms only (a NaN compares false)
      // Below 2^24 the conversion truncates; a float of 2^24 or more is a whole number (a NaN
      // takes neither branch's test: never converted).
      whole = whole && (a < 0x1p24 ? term == static_cast<double>(static_cast<std::int32_t>(term))
                                   : a <= DBL_MAX);
    }
    value[i] = sum;
    magnitude[i] = size;
    integers[i] = whole;
  }
};

/// How far a float sum may be from result `i`'s exact one, whatever the order of its additions
/// (the kernels' orders differ):
///  - none where the terms are whole numbers whose magnitudes add up to at most 2^24: every
///    partial sum is then a float, so every order gives the exact sum, and a kernel that drops
///    or repeats a term is caught. The benchmark inputs of a sum are such terms (+-1);
///  - 32 float roundings of the sum of the magnitudes for larger sums of whole numbers (the
///    +-1 of a large key, whose partial sums stay far below 2^24);
///  - for other terms (a caller's, which a tuning uses when its own do not fit the device), one
///    rounding per term a lane adds in a row: a lane adds at most terms/32 of them (every
///    reduce space's work-groups have 32 lanes or more, each on its own share of a result's
///    terms) before the tree's 64 levels at most.
inline double sum_tolerance(const ExactReduction& exact, std::size_t i) {
  const double magnitude = exact.magnitude[i];
  if (exact.integers[i] && magnitude <= 0x1p24) return 0;
  if (exact.integers[i]) return 32 * 0x1p-24 * magnitude;
  const double additions = std::ceil(static_cast<double>(exact.terms) / 32) + 64;
  return additions * 0x1p-24 * magnitude;
}

/// Why result `i` of a kernel, `got`, is not the exact one, or nothing: a max must be exact (a
/// max is the same in any order), a sum within sum_tolerance(); past float's range (finite
/// terms whose magnitudes add up to more than FLT_MAX) a float partial sum may overflow in any
/// order, so an infinite or NaN sum is accepted there; a NaN or infinite exact result must
/// otherwise be met as it is.
inline std::optional<std::string> differs_from_exact(const ExactReduction& exact, std::size_t i,
                                                     float got) {
  const double expected = exact.value[i];
  const double result = got;
  const bool max = exact.op == ReduceOp::max;
  if (!max && exact.magnitude[i] > FLT_MAX && !std::isfinite(result)) return std::nullopt;
  if (!std::isfinite(expected)) {
    if (result == expected || (std::isnan(result) && std::isnan(expected))) return std::nullopt;
  } else if (max) {
    if (result == expected) return std::nullopt;
    // A max below float's normal range: a device that flushes subnormals (compares them as 0)
    // may return 0 or another subnormal of the input for it; a caller's input is not wrong.
    if (std::fabs(expected) < FLT_MIN && std::fabs(result) < FLT_MIN) return std::nullopt;
  } else if (std::fabs(result - expected) <= sum_tolerance(exact, i)) {
    return std::nullopt;
  }
  std::string text = "result " + std::to_string(got) + ", the exact " + (max ? "max " : "sum ") +
                     std::to_string(expected);
  if (!max && std::isfinite(expected)) {
    const double allowed = sum_tolerance(exact, i);
    text += allowed == 0 ? " (whole terms: every order is exact)"
                         : " (allowed: within " + std::to_string(allowed) + ")";
  }
  return text;
}

/// The transpose of the rows x cols matrix `in` (row-major): what a transpose's output must be.
inline std::vector<float> transposed(const std::vector<float>& in, std::size_t rows,
                                     std::size_t cols) {
  std::vector<float> out(in.size());
  constexpr std::size_t block = 64;  // a tile at a time: both sides stay in cache
  for (std::size_t r0 = 0; r0 < rows; r0 += block) {
    for (std::size_t c0 = 0; c0 < cols; c0 += block) {
      for (std::size_t r = r0; r < std::min(rows, r0 + block); ++r) {
        for (std::size_t c = c0; c < std::min(cols, c0 + block); ++c) {
          out[c * rows + r] = in[r * cols + c];
        }
      }
    }
  }
  return out;
}

/// Why `out`, a transpose's output of cols x rows (row-major), is not `expected` (transposed()
/// of its input), or nothing: every element moved exactly (compared as bits: a NaN moved is a
/// NaN in place), the first wrong one named.
inline std::optional<std::string> transposition_problem(const std::vector<float>& expected,
                                                        std::size_t rows,
                                                        const std::vector<float>& out) {
  if (out.size() != expected.size()) {
    return "an output of " + std::to_string(out.size()) + " elements for " +
           std::to_string(expected.size());
  }
  if (out.empty() || std::memcmp(out.data(), expected.data(), out.size() * sizeof(float)) == 0) {
    return std::nullopt;
  }
  std::size_t wrong = 0, first = 0;
  for (std::size_t e = out.size(); e-- > 0;) {
    if (std::memcmp(&out[e], &expected[e], sizeof(float)) != 0) {
      ++wrong;
      first = e;
    }
  }
  const std::size_t c = first / rows, r = first % rows;
  return "out(" + std::to_string(c) + ", " + std::to_string(r) + ") is " +
         std::to_string(out[first]) + " where in(" + std::to_string(r) + ", " + std::to_string(c) +
         ") is " + std::to_string(expected[first]) +
         (wrong > 1 ? " (" + std::to_string(wrong) + " elements wrong)" : std::string());
}

}  // namespace tunekit::ops::detail
