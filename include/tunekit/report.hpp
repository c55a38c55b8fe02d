// Reports for people: tuning results as a self-contained HTML page with charts, and as a short
// text summary. They read TuningReports, which a Tuner holds and the persistent cache stores.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tunekit/cache.hpp"
#include "tunekit/outcome.hpp"

namespace tunekit {

/// The persistent cache's entries as tuning reports (outcomes ranked), in the entries' order.
/// The cache does not keep a tuning's wall time: tuning_seconds is the sum of the candidates'
/// measuring costs instead.
std::vector<TuningReport> reports_from_cache(const std::vector<CacheEntry>& entries);

/// What an HTML report says about itself.
struct HtmlReportOptions {
  std::string title = "tunekit report";
  std::string subtitle;  ///< one line under the title, e.g. where the results came from
  /// What each op computes, by op name, shown under its name (the tool passes the shipped ops'
  /// summaries, ops::shipped_ops()); ops not in it show their name alone.
  std::map<std::string, std::string> op_summaries = {};
  /// A command that makes results, suggested when there are none ("tunekit tune matmul").
  std::string how_to_tune = {};
};

/// One self-contained HTML page (inline CSS, SVG and script; it fetches nothing): a summary
/// table, then per tuning a horizontal bar chart of every working candidate's median time with
/// its spread (MAD) as whiskers and the winner highlighted, the failed candidates with their
/// reasons, and for each parameter space a scatter of time against each of its parameters.
/// The page's script marks `#status` with data-state="ok" once it has checked that the charts
/// rendered (data-state="error" and the reason otherwise), so a headless browser can test it.
/// Deterministic: the same reports give the same bytes.
std::string html_report(const std::vector<TuningReport>& reports,
                        const HtmlReportOptions& options = {});

/// Writes a page of html_report to `file`, whole or not at all (a temporary file renamed over
/// it, 0644 less the umask, so that no other user may write it); throws AutotuneError (cache)
/// when it cannot, or when `file` names a directory, a device or a FIFO.
void write_html_report(const std::filesystem::path& file, std::string_view html);

/// Whether `a` comes before `b` with runs of digits compared as numbers ("rows=64" before
/// "rows=128"): the order of keys in html_report and text_summary (then op, then device).
bool natural_less(std::string_view a, std::string_view b);

/// One line per report: op, key, winner, its time, its speed-up over candidate 0 (the set's safe
/// default), and how many candidates were measured and failed.
std::string text_summary(const std::vector<TuningReport>& reports);

/// The parameters of a parameter-space candidate, read back from its name.
struct CandidateParameters {
  std::string space;                                         ///< "blocked"
  std::vector<std::pair<std::string, std::int64_t>> values;  ///< {"MWG", 64}, {"NWG", 32}, ...
};

/// "blocked[MWG=64,NWG=32]" -> {"blocked", {{"MWG", 64}, {"NWG", 32}}}; nothing for a name that
/// is not of that form (a single tunable's).
std::optional<CandidateParameters> parse_candidate_name(std::string_view name);

}  // namespace tunekit
