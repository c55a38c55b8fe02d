// What the space and search test cases share: a GEMM-like space and a rugged synthetic landscape
// of times over it.
#pragma once

#include <cmath>
#include <optional>
#include <tunekit/tunekit.hpp>

namespace tunekit::test::space_cases {

inline Space gemm_like_space() {
  return space("gemm")
      .parameter("TM", {1, 2, 4, 8, 16})
      .parameter("TN", {1, 2, 4, 8, 16})
      .parameter("WG", {8, 16, 32, 64, 128, 256})
      .parameter("VW", {1, 2, 4, 8})
      .parameter("KW", {1, 2, 4, 8, 16})
      .product_at_most({"TM", "TN"}, 64)
      .multiple_of("TN", "VW");
}

// A rugged GEMM-like landscape: a smooth optimum near TM=TN=8, WG=64, VW=4, KW=4 with
// interactions, plus a deterministic +-10% perturbation per configuration, and failures.
inline std::optional<double> synthetic_time(const Config& c) {
  const auto l = [](double x, double best) { return std::pow(std::log2(x) - std::log2(best), 2); };
  if (c["WG"] * c["TM"] * c["TN"] > 8192) return std::nullopt;  // "too many registers"
  double t = 1 + 0.08 * l(c["TM"], 8) + 0.08 * l(c["TN"], 8) + 0.05 * l(c["WG"], 64) +
             0.04 * l(c["VW"], 4) + 0.03 * l(c["KW"], 4) +
             0.02 * std::abs(std::log2(c["TM"]) - std::log2(c["TN"])) * l(c["KW"], 4);
  const auto h = stable_hash(c.to_string());
  return t * (0.9 + 0.2 * static_cast<double>(h % 1000) / 1000.0) * 1e-3;
}

inline ReplayTable synthetic_table(const ExpandedSpace& space) {
  ReplayTable table;
  for (const auto& c : space.configs()) {
    const auto t = synthetic_time(c);
    table[c.to_string()] = {t, 0.05 + (t ? 20 * *t : 0.0)};  // build cost + samples
  }
  return table;
}

inline double total_cost(const ReplayTable& table) {
  double total = 0;
  for (const auto& [config, e] : table) total += e.cost_seconds;
  return total;
}

}  // namespace tunekit::test::space_cases
