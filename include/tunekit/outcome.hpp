// AutotuneOutcome: one candidate's measurement (or failure) in one tuning, and the table of them.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tunekit/error.hpp"

namespace tunekit {

/// How a candidate ended its tuning.
enum class OutcomeStatus {
  measured,  ///< measured fully; ranked by its median
  dropped,   ///< racing stopped it early: clearly slower than the leader (its median still counts)
  failed,    ///< it failed; see error
  skipped,   ///< not measured (negative priority, or another priority level already worked)
};

std::string_view to_string(OutcomeStatus status);

/// One candidate's result. Times are device seconds per call.
struct AutotuneOutcome {
  std::string name;
  std::size_t index = 0;  ///< position in the tunable set
  OutcomeStatus status = OutcomeStatus::skipped;
  double median = 0;  ///< the statistic used to rank: median of the samples
  /// The median's 95% confidence interval (median_interval): two candidates whose intervals
  /// overlap are not told apart by this tuning.
  double low = 0;
  double high = 0;
  double spread = 0;  ///< median absolute deviation of the samples (same unit as median)
  double min = 0;
  double max = 0;
  std::size_t samples = 0;
  std::size_t batch = 1;    ///< calls per sample (short kernels are timed in batches)
  double cost_seconds = 0;  ///< wall time spent measuring it (builds and warm-up included)
  /// Its samples were paired with the leader's (measure_candidate's rival): drift-corrected.
  bool paired = false;
  /// Tied with the winner: re-measured beside it until the cap, their intervals still overlap;
  /// the winner was then the one with the lower median (race_interleaved, benchmark.hpp).
  bool tied = false;
  std::optional<AutotuneError> error;
  /// The values of the report's metrics (TuningReport::metric_names, same order) for this
  /// candidate's median; empty for a candidate that did not work. NaN: not computable.
  std::vector<double> metrics = {};

  bool ok() const noexcept {
    return status == OutcomeStatus::measured || status == OutcomeStatus::dropped;
  }
  /// Whether its median's interval is known: a result read from a cache written before caches
  /// kept intervals has none (low = high = 0).
  bool has_interval() const noexcept { return high > 0; }
};

/// Where a tuning's wall time went (TuningReport::time_spent), in seconds on the tuning thread:
/// what a person needs to tell slow builds from slow kernels. Not kept in caches.
struct TuningTime {
  double waiting_for_builds = 0;      ///< blocked on a candidate's preparation (program build)
  double first_calls = 0;             ///< candidates' first calls (lazy compilation lands here)
  double validating = 0;              ///< validation less first calls: reference, clear, compare
  double measuring = 0;               ///< warm-up and samples (measure_candidate)
  double confirming = 0;              ///< the interleaved re-measurement of the best
  std::size_t programs_prepared = 0;  ///< candidates built ahead on the build pool
};

/// The outcomes of one tuning, ranked: working candidates fastest first, then the others.
struct TuningReport {
  std::string op;
  std::string key;
  std::string device;
  double tuning_seconds = 0;  ///< wall time the whole tuning took
  std::vector<AutotuneOutcome> outcomes;
  /// Candidates measured first because they won other keys of the op on this device.
  std::vector<std::string> neighbour_starts = {};
  /// Candidates whose outcomes an interrupted tuning of this key had measured: not measured
  /// again (the tuning resumed from its in-progress record).
  std::vector<std::string> resumed = {};
  /// Why the tuning stopped before its plan ended (a candidate was good enough); empty if not.
  std::string stopped_early = {};
  /// The best candidates re-measured together before the winner was declared (interleaved
  /// rounds: BenchmarkSettings::confirm_contenders), and how many rounds; 0 when none were.
  std::size_t confirmed = 0;
  std::size_t confirm_rounds = 0;
  /// Where tuning_seconds went (all zero for a report read back from a cache).
  TuningTime time_spent = {};
  /// The names of the set's derived metrics (metric.hpp: "GFLOP/s", ...), whose values each
  /// working outcome holds; empty when the set declares none.
  std::vector<std::string> metric_names = {};
  /// Where the result came from (StoredResult::source, result_store.hpp): "computed", "local cache
  /// ...", "shared store redis://...", "bundle ..."; empty when unknown.
  std::string source = {};

  /// The fastest working candidate, if any.
  const AutotuneOutcome* winner() const;
  /// The outcome of the candidate named `name` (AutotuneOutcome::name), if the tuning has one.
  const AutotuneOutcome* outcome(std::string_view name) const;
};

/// Sorts working outcomes by median (fastest first) ahead of failed and skipped ones.
void rank(std::vector<AutotuneOutcome>& outcomes);

/// Multiplies every time of `outcome` (median, interval, min, max, spread) by `factor`: its
/// times brought into another measurement's units (a resumed record, the final race).
void scale_times(AutotuneOutcome& outcome, double factor);

/// Whether the device rules the candidate out: it failed as out of resources (a feature the
/// device lacks, a limit its configuration passes) rather than breaking. Tables and reports
/// count such candidates apart from failures ("not for this device").
bool ruled_out_by_device(const AutotuneOutcome& outcome);

/// Candidates never measured (or ruled out by the device) whose reasons fold into one line: the
/// same reason, or for a device's limit (out of resources) the same words with other numbers
/// ("# bytes local memory, device has #"): a space leaves configurations over a limit at dozens
/// of sizes. What the text summary and the HTML report's "Not measured" both list.
struct ReasonFold {
  std::string example;  ///< the reason of the first met, as the caller words it
  bool alike = false;   ///< another with another reason folded in
  std::vector<const AutotuneOutcome*> outcomes;
  /// What follows the example: " (and the like)" where others folded in, else nothing.
  std::string_view suffix() const noexcept { return alike ? " (and the like)" : ""; }
};

/// `outcomes` folded (ReasonFold), in the order of their folded words; each fold's example is
/// `reason` of its first outcome, and it is alike where another's `reason` differs.
std::vector<ReasonFold> fold_reasons(const std::vector<const AutotuneOutcome*>& outcomes,
                                     std::string (*reason)(const AutotuneOutcome&));

/// A working outcome's 95% interval around its median, as the tables show it ("-2.4% +0.5%"),
/// or its spread ("±1.2%") for a result read from a cache written before intervals, or "one
/// sample" where a single sample bounds nothing.
std::string interval_text(const AutotuneOutcome& outcome);

/// How much format_report() shows.
enum class ReportDetail {
  summary,  ///< the device's name; each failure's one-line summary (LogLevel::info)
  full,     ///< also the whole device identity and every failure's whole message, build logs
            ///< included (LogLevel::debug)
};

/// A table a person reads: the device by its name (device_name()), every candidate's time and
/// spread, the winner marked with '*', and FAILED lines with their reason. A failure that
/// several candidates share (group_failures(): e.g. one compiler error in 8 configurations of a
/// space) is written once below the table, with how many and which candidates hit it; their
/// rows refer to it ("FAILED (error #1)").
std::string format_report(const TuningReport& report, ReportDetail detail = ReportDetail::summary);

/// The failed outcomes of `outcomes` grouped by failure (group_failures() in error.hpp), each
/// group in the order of its first member. Outcomes without an error are in no group.
std::vector<std::vector<const AutotuneOutcome*>> failure_groups(
    const std::vector<AutotuneOutcome>& outcomes);

/// "time: 1.20 s waiting for builds (12 prepared ahead), ...": where a tuning's time went
/// (TuningReport::time_spent); format_report() writes it for a report with a tuning time.
std::string format_time_spent(const TuningReport& report);

/// "1.234 ms", "15.2 us", ...
std::string format_seconds(double seconds);

/// `text` made safe and short enough to print on a terminal: control characters (ESC, BEL, CR,
/// newline, ..., DEL, and the C1 controls U+0080-U+009F) shown as \xNN, and, past `max_bytes`,
/// cut at a character boundary with "...". The one function through which tunekit prints every
/// name, key, device and error that came from outside (a cache file, a bundle, a kernel's build
/// log): an imported name cannot clear the screen or retitle the terminal. With `lines`, '\n'
/// is kept (multi-line messages).
std::string printable(std::string_view text, std::size_t max_bytes = 4096, bool lines = false);

}  // namespace tunekit
