// Deterministic sample tunings for the report tests: a matmul-like op with single tunables and a
// parameter space (some configurations failed, most not reached by the search), a small reduce
// with a candidate dropped by racing, and an op whose names need HTML escaping.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <tunekit/cache.hpp>
#include <tunekit/outcome.hpp>
#include <vector>

namespace tunekit::test {

inline AutotuneOutcome measured_outcome(std::string name, std::size_t index, double median,
                                        double spread,
                                        OutcomeStatus status = OutcomeStatus::measured) {
  AutotuneOutcome o;
  o.name = std::move(name);
  o.index = index;
  o.status = status;
  o.median = median;
  o.spread = spread;
  o.min = median - 1.5 * spread;
  o.max = median + 4 * spread;
  o.samples = status == OutcomeStatus::dropped ? 3 : 10;
  o.cost_seconds = 20 * median + 0.05;
  return o;
}

inline AutotuneOutcome failed_outcome(std::string name, std::size_t index, ErrorKind kind,
                                      std::string reason,
                                      OutcomeStatus status = OutcomeStatus::failed) {
  AutotuneOutcome o;
  o.name = std::move(name);
  o.index = index;
  o.status = status;
  o.error = AutotuneError(kind, std::move(reason), o.name);
  return o;
}

/// The device identity the samples use.
inline const std::string sample_device =
    "OpenCL | Sample Platform | OpenCL 3.0 | sample-gpu | driver 1.0 | 8 CUs | 65536 B local";

/// A matmul-like tuning: "naive" (the default), "tiled[TS=..]" (one fails to build), and a
/// space "blocked[MWG=..,NWG=..,VW=..]" of 48 configurations of which 20 were measured, 4 failed
/// and the rest were not reached by the search.
inline TuningReport sample_matmul_report() {
  TuningReport r{"matmul", "m=256 n=256 k=256 dtype=f32", sample_device, 4.2, {}};
  std::size_t index = 0;
  r.outcomes.push_back(measured_outcome("naive[LX=16,LY=16]", index++, 16.5e-3, 3e-4));
  r.outcomes.push_back(measured_outcome("tiled[TS=8]", index++, 3.2e-3, 6e-5));
  r.outcomes.push_back(measured_outcome("tiled[TS=16]", index++, 2.4e-3, 4e-5));
  r.outcomes.push_back(failed_outcome(
      "tiled[TS=32]", index++, ErrorKind::build,
      "matmul_tiled.cl: build failed\n<kernel>:12:3: error: use of undeclared identifier 'TSK'\n"
      "  TSK * TS\n  ^\n1 error generated."));
  std::size_t config = 0;
  for (int mwg : {16, 32, 64, 128}) {
    for (int nwg : {16, 32, 64, 128}) {
      for (int vw : {1, 2, 4}) {
        const std::string name = "blocked[MWG=" + std::to_string(mwg) +
                                 ",NWG=" + std::to_string(nwg) + ",VW=" + std::to_string(vw) + "]";
        const auto h = (config * 2654435761u) % 97;
        if (mwg * nwg >= 128 * 64 && vw == 4) {
          r.outcomes.push_back(failed_outcome(
              name, index++, ErrorKind::out_of_resources,
              std::to_string(mwg * nwg * 8) + " bytes local memory, device has 65536"));
        } else if (h % 5 < 2 || (mwg == 64 && nwg == 64)) {
          const double t =
              0.55e-3 *
              (1 + 0.35 * std::pow(std::log2(mwg / 64.0), 2) +
               0.25 * std::pow(std::log2(nwg / 64.0), 2) + 0.12 * std::abs(vw - 4) / 3.0) *
              (0.96 + 0.08 * static_cast<double>(h) / 97.0);
          r.outcomes.push_back(
              measured_outcome(name, index++, t, t * 0.015,
                               t > 1.2e-3 ? OutcomeStatus::dropped : OutcomeStatus::measured));
        } else {
          r.outcomes.push_back(failed_outcome(name, index++, ErrorKind::skipped,
                                              "not reached by the search", OutcomeStatus::skipped));
        }
        ++config;
      }
    }
  }
  rank(r.outcomes);
  return r;
}

/// A small tuning with a candidate dropped early, and one skipped by priority.
inline TuningReport sample_reduce_report() {
  TuningReport r{"reduce", "n=1048576 op=sum", sample_device, 0.8, {}};
  r.outcomes.push_back(measured_outcome("tree", 0, 210e-6, 3e-6));
  r.outcomes.push_back(measured_outcome("vector4", 1, 95e-6, 1.5e-6));
  r.outcomes.push_back(measured_outcome("serial", 2, 2.9e-3, 1e-5, OutcomeStatus::dropped));
  r.outcomes.push_back(failed_outcome("subgroup", 3, ErrorKind::skipped, "skipped by priority",
                                      OutcomeStatus::skipped));
  rank(r.outcomes);
  return r;
}

/// Names and messages that must be escaped in HTML.
inline TuningReport sample_hostile_report() {
  TuningReport r{"op<script>", "key=\"1\" & 'x'", "<device>", 0.1, {}};
  r.outcomes.push_back(measured_outcome("a<b>&c", 0, 1e-3, 1e-5));
  r.outcomes.push_back(measured_outcome("</svg><script>alert(1)</script>", 1, 2e-3, 2e-5));
  r.outcomes.push_back(failed_outcome("broken", 2, ErrorKind::runtime, "threw: </table><b>"));
  rank(r.outcomes);
  return r;
}

inline std::vector<TuningReport> sample_reports() {
  return {sample_matmul_report(), sample_reduce_report(), sample_hostile_report()};
}

/// The samples as persistent-cache entries (for the cache and CLI tests).
inline std::vector<CacheEntry> sample_entries() {
  std::vector<CacheEntry> entries;
  std::uint64_t checksum = 0x1234;
  for (const auto& report : sample_reports()) {
    const AutotuneOutcome* winner = report.winner();
    entries.push_back(
        {EntryId{report.device, report.op, report.key, checksum++},
         StoredResult{winner->name, static_cast<std::uint32_t>(winner->index), report.outcomes}});
  }
  return entries;
}

/// What the layout test draws (browser_layout_test.sh): matmul's real key, a winner with a long
/// name, GFLOP/s, and a space with two parameters of 10 values each (labels of 1 to 4 digits).
inline TuningReport layout_sample_report() {
  TuningReport r{"matmul",
                 "m=256 n=256 k=256 m_fit=pow2 n_fit=pow2 k_fit=pow2 dtype=f32",
                 sample_device,
                 12.5,
                 {}};
  r.metric_names = {"GFLOP/s"};
  constexpr double flops = 2.0 * 256 * 256 * 256;
  std::size_t index = 0;
  r.outcomes.push_back(measured_outcome("naive[LX=16,LY=16]", index++, 16.5e-3, 3e-4));
  const std::vector<int> mwg{8, 16, 24, 32, 48, 64, 96, 128, 256, 512};
  const std::vector<int> kwg{1, 2, 4, 8, 16, 32, 64, 128, 1024, 2048};
  for (std::size_t a = 0; a < mwg.size(); ++a) {
    for (std::size_t b = 0; b < kwg.size(); ++b) {
      if ((a * 7 + b * 3) % 4 != 0) continue;
      const std::string name = "blocked[MWG=" + std::to_string(mwg[a]) +
                               ",NWG=64,KWG=" + std::to_string(kwg[b]) +
                               ",MDIMC=16,NDIMC=16,MDIMA=16,NDIMB=16,VWM=4,VWN=4,STRM=0,STRN=0]";
      const double t = 0.4e-3 * (1 + 0.2 * std::abs(static_cast<double>(a) - 5) +
                                 0.1 * std::abs(static_cast<double>(b) - 4));
      r.outcomes.push_back(measured_outcome(name, index++, t, t * 0.02));
    }
  }
  for (auto& o : r.outcomes) o.metrics = {flops / o.median * 1e-9};
  rank(r.outcomes);
  return r;
}

/// layout_sample_report as a cache entry.
inline std::vector<CacheEntry> layout_entries() {
  const TuningReport report = layout_sample_report();
  const AutotuneOutcome* winner = report.winner();
  StoredResult result{winner->name, static_cast<std::uint32_t>(winner->index), report.outcomes};
  result.metric_names = report.metric_names;
  return {{EntryId{report.device, report.op, report.key, 0x5678}, std::move(result)}};
}

}  // namespace tunekit::test
