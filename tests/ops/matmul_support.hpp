// Shared by the matmul tests: a problem's shape, and one product on the device checked against
// a host reference in double precision on random non-zero inputs.
#pragma once

#include <algorithm>
#include <cmath>
#include <string>
#include <tunekit/cl.hpp>
#include <tunekit/ops/matmul.hpp>
#include <vector>

#include "../support.hpp"  // worse_error
#include "ops_support.hpp"

namespace tunekit::test {

struct Problem {
  std::size_t m, n, k;
};

// |C_ij - C_ref_ij| / (sum_k |alpha A_ik B_kj| + |beta C0_ij|), in double.
inline double relative_error_at(const std::vector<float>& a, const std::vector<float>& b,
                                const std::vector<float>& c0, const std::vector<float>& c,
                                Problem p, float alpha, float beta, std::size_t i, std::size_t j) {
  double sum = 0, magnitude = 0;
  for (std::size_t q = 0; q < p.k; ++q) {
    const double term = static_cast<double>(a[i * p.k + q]) * b[q * p.n + j];
    sum += term;
    magnitude += std::fabs(term);
  }
  const double expected = alpha * sum + beta * static_cast<double>(c0[i * p.n + j]);
  magnitude = std::fabs(alpha) * magnitude + std::fabs(beta * c0[i * p.n + j]);
  return std::fabs(expected - c[i * p.n + j]) / magnitude;
}

// The worst relative_error_at over every column of `rows` (NaN counts as infinitely wrong).
inline double worst_relative_error_on_rows(const std::vector<float>& a, const std::vector<float>& b,
                                           const std::vector<float>& c0,
                                           const std::vector<float>& c, Problem p, float alpha,
                                           float beta, const std::vector<std::size_t>& rows) {
  double worst = 0;
  for (const std::size_t i : rows)
    for (std::size_t j = 0; j < p.n; ++j)
      worst = worse_error(worst, relative_error_at(a, b, c0, c, p, alpha, beta, i, j));
  return worst;
}

// The worst relative_error_at over all of C.
inline double worst_relative_error(const std::vector<float>& a, const std::vector<float>& b,
                                   const std::vector<float>& c0, const std::vector<float>& c,
                                   Problem p, float alpha, float beta) {
  std::vector<std::size_t> rows(p.m);
  for (std::size_t i = 0; i < p.m; ++i) rows[i] = i;
  return worst_relative_error_on_rows(a, b, c0, c, p, alpha, beta, rows);
}

// True where the device's limits rule out what `call` runs (a work-group or local memory past
// them: AutotuneError::beyond_device_limits), said with WARN and nothing checked of it: the suite
// meets devices smaller than the ones its candidates were written for. Any other failure is
// thrown.
template <class Call>
bool ruled_out_here(const std::string& candidate, Call&& call) {
  try {
    call();
    return false;
  } catch (const tunekit::AutotuneError& e) {
    if (!e.beyond_device_limits()) throw;
    WARN(candidate << " is ruled out by this device's limits: " << e.message());
    return true;
  }
}

// Random A, B and C of problem `p` on the device (seeds 1, 2, 3), named: clang before 16 cannot
// capture a structured binding in a lambda.
struct ProblemOperands {
  ops::DeviceMatrix a, b, c;
};
inline ProblemOperands upload_problem(tunekit::cl::Client& client, Problem p,
                                      DType dtype = DType::f32) {
  return {ops::upload_matrix(client, ops::random_values(p.m * p.k, 1), p.m, p.k, dtype),
          ops::upload_matrix(client, ops::random_values(p.k * p.n, 2), p.k, p.n, dtype),
          ops::upload_matrix(client, ops::random_values(p.m * p.n, 3), p.m, p.n, dtype)};
}

// `of_rounded`, where given, gets the error against the product of the inputs rounded to TF32
// (ops::tf32_rounded): what a TF32 kernel that rounds as it should computes up to f32 sums.
inline double run_and_check(tunekit::cl::Client& client, const std::string& candidate, Problem p,
                            DType dtype, float alpha, float beta,
                            ops::MatmulMath math = ops::MatmulMath::ieee,
                            double* of_rounded = nullptr) {
  auto [a, b, c] = upload_problem(client, p, dtype);
  // The reference uses the values as stored (rounded to half for f16).
  const auto ha = ops::download_matrix(client, a), hb = ops::download_matrix(client, b),
             hc = ops::download_matrix(client, c);
  if (candidate.empty())
    ops::matmul(client, a, b, c, alpha, beta, math);
  else
    ops::matmul_with(candidate, client, a, b, c, alpha, beta, math);
  const auto got = ops::download_matrix(client, c);
  if (of_rounded != nullptr) {
    auto ra = ha, rb = hb;
    for (auto& x : ra) x = ops::tf32_rounded(x);
    for (auto& x : rb) x = ops::tf32_rounded(x);
    *of_rounded = worst_relative_error(ra, rb, hc, got, p, alpha, beta);
  }
  return worst_relative_error(ha, hb, hc, got, p, alpha, beta);
}

}  // namespace tunekit::test
