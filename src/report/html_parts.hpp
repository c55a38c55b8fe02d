// The parts of the HTML report (private), one file each: text helpers (html_text.cpp), charts
// (html_charts.cpp), tables (html_tables.cpp), the page's style and script (html_assets.hpp);
// html_report.cpp puts a page together from them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "tunekit/metric.hpp"
#include "tunekit/outcome.hpp"

namespace tunekit::report_html {

// html_text.cpp
/// `text` with &, <, >, " and ' escaped for HTML text and attributes.
std::string escape(std::string_view text);
/// A pixel coordinate for SVG.
std::string px(double value);
std::string percent(double part, double whole);
std::string ratio_text(double ratio);
/// A short axis label: "0", "2 ms", "250 µs", "1.5 s".
std::string tick_label(double seconds);
std::string outcome_tooltip(const AutotuneOutcome& o);
std::string reason_of(const AutotuneOutcome& o);
/// `text` cut to `chars` characters with "…".
std::string clip(const std::string& text, std::size_t chars);
/// The device's name alone (device_name()), cut to a table column.
std::string short_device(const std::string& identity);

// html_charts.cpp
/// The horizontal bar chart of one tuning: every working candidate's median, fastest on top,
/// whiskers at median ± MAD, the winner highlighted.
std::string bar_chart(const TuningReport& report, const AutotuneOutcome& winner);
/// One point of a space's scatter.
struct SpacePoint {
  const AutotuneOutcome* outcome;
  std::map<std::string, std::int64_t> values;
};
/// Scatter plots of time against each parameter of one space (small multiples).
std::string space_charts(const std::string& space, const std::vector<SpacePoint>& points,
                         const AutotuneOutcome& winner);

// html_tables.cpp
/// Candidate 0 (the set's safe default) of a tuning, if it has an outcome.
const AutotuneOutcome* default_of(const TuningReport& report);
/// "812 GFLOP/s, 9.7 GB/s": an outcome's derived metrics (metric.hpp) with their names.
std::string metrics_text(const TuningReport& report, const AutotuneOutcome& outcome);
struct Counts {
  std::size_t measured = 0, dropped = 0, failed = 0, skipped = 0;
  /// Failed as out of resources (ruled_out_by_device): counted here, not in `failed`.
  std::size_t not_for_device = 0;
};
Counts count(const TuningReport& report);
std::string reason_cell(const AutotuneOutcome& o);
std::string failures(const TuningReport& report);
std::string skipped(const TuningReport& report);
std::string outcome_table(const TuningReport& report);
std::string summary_table(const std::vector<TuningReport>& reports);

}  // namespace tunekit::report_html
