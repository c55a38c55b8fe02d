// The HTML report: one self-contained page (charts: html_charts.cpp, tables: html_tables.cpp,
// style and script: html_assets.hpp, text helpers: html_text.cpp), and the text summary.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <string>

#include "../cache/private_files.hpp"
#include "html_assets.hpp"
#include "html_parts.hpp"
#include "tunekit/device_id.hpp"
#include "tunekit/report.hpp"

namespace tunekit {

std::vector<TuningReport> reports_from_cache(const std::vector<CacheEntry>& entries) {
  std::vector<TuningReport> reports;
  reports.reserve(entries.size());
  for (const auto& entry : entries) {
    TuningReport report{entry.id.op, entry.id.key, entry.id.device, 0, entry.result.outcomes};
    rank(report.outcomes);
    report.metric_names = entry.result.metric_names;
    for (const auto& outcome : report.outcomes) report.tuning_seconds += outcome.cost_seconds;
    reports.push_back(std::move(report));
  }
  return reports;
}

using namespace report_html;

namespace {

std::string section(const TuningReport& report, std::size_t number,
                    const HtmlReportOptions& options) {
  const AutotuneOutcome* winner = report.winner();
  const AutotuneOutcome* fallback = default_of(report);
  const Counts c = count(report);
  std::string search = report.op + " " + report.key + " " + report.device;
  std::transform(search.begin(), search.end(), search.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  std::string html = "<section class=\"tuning\" id=\"t" + std::to_string(number) +
                     "\" data-search=\"" + escape(search) + "\"><h2><span class=\"op\">" +
                     escape(report.op) + "</span> <code class=\"key\">" + escape(report.key) +
                     "</code></h2>";
  if (const auto what = options.op_summaries.find(report.op); what != options.op_summaries.end()) {
    html += "<p class=\"what\">" + escape(what->second) + "</p>";
  }
  html += "<p class=\"device\" title=\"" + escape(report.device) + "\">on " +
          escape(device_name(report.device)) + "</p><p class=\"facts\">";
  if (winner != nullptr) {
    html += "winner <b class=\"winname\">" + escape(winner->name) +
            "</b>: " + escape(format_seconds(winner->median)) + " ± " +
            percent(winner->spread, winner->median);
    const std::string metrics = metrics_text(report, *winner);
    if (!metrics.empty()) html += " · <b class=\"metrics\">" + escape(metrics) + "</b>";
    if (fallback != nullptr && fallback != winner && fallback->ok() && winner->median > 0) {
      html += " · <b>" + ratio_text(fallback->median / winner->median) +
              "</b> faster than the default <code>" + escape(fallback->name) + "</code>";
    }
  } else {
    html += "<b class=\"bad\">no candidate worked</b>";
  }
  html += " · " + std::to_string(c.measured + c.dropped) + " measured";
  if (c.dropped > 0) html += " (" + std::to_string(c.dropped) + " dropped early)";
  html +=
      ", " + std::to_string(c.failed) + " failed, " + std::to_string(c.skipped) + " not measured";
  if (c.not_for_device > 0)
    html += ", " + std::to_string(c.not_for_device) + " not for this device";
  if (report.tuning_seconds > 0)
    html += " · tuning took " + escape(format_seconds(report.tuning_seconds));
  html += "</p>";
  if (winner != nullptr) {
    html +=
        "<p class=\"legend\"><span class=\"swatch win\"></span>winner"
        "<span class=\"swatch ok\"></span>measured"
        "<span class=\"swatch dropped\"></span>dropped early by racing (fewer samples)"
        "<span class=\"swatch whisker\"></span>± MAD</p>" +
        bar_chart(report, *winner);
    std::map<std::string, std::vector<SpacePoint>> spaces;
    for (const auto& o : report.outcomes) {
      if (o.status == OutcomeStatus::skipped) continue;
      if (auto parsed = parse_candidate_name(o.name)) {
        spaces[parsed->space].push_back({&o, std::map<std::string, std::int64_t>(
                                                 parsed->values.begin(), parsed->values.end())});
      }
    }
    for (const auto& [space, points] : spaces) html += space_charts(space, points, *winner);
  }
  html += failures(report) + skipped(report) + outcome_table(report);
  return html + "</section>";
}

// The reports by op, then key in natural order (rows=64 before rows=128), then device.
std::vector<TuningReport> in_key_order(std::vector<TuningReport> reports) {
  std::stable_sort(reports.begin(), reports.end(),
                   [](const TuningReport& a, const TuningReport& b) {
                     if (a.op != b.op) return a.op < b.op;
                     if (a.key != b.key) return natural_less(a.key, b.key);
                     return a.device < b.device;
                   });
  return reports;
}

}  // namespace

bool natural_less(std::string_view a, std::string_view b) {
  const auto is_digit = [](char c) { return c >= '0' && c <= '9'; };
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (is_digit(a[i]) && is_digit(b[j])) {
      // Compare the two numbers without converting them (any length): leading zeros off, then
      // the longer is larger, then digit by digit.
      std::size_t ai = i, bj = j;
      while (ai < a.size() && a[ai] == '0') ++ai;
      while (bj < b.size() && b[bj] == '0') ++bj;
      std::size_t ae = ai, be = bj;
      while (ae < a.size() && is_digit(a[ae])) ++ae;
      while (be < b.size() && is_digit(b[be])) ++be;
      if (ae - ai != be - bj) return ae - ai < be - bj;
      const int order = a.substr(ai, ae - ai).compare(b.substr(bj, be - bj));
      if (order != 0) return order < 0;
      i = ae, j = be;
    } else {
      if (a[i] != b[j]) return static_cast<unsigned char>(a[i]) < static_cast<unsigned char>(b[j]);
      ++i, ++j;
    }
  }
  return a.size() - i < b.size() - j;
}

std::string html_report(const std::vector<TuningReport>& given, const HtmlReportOptions& options) {
  const std::vector<TuningReport> reports = in_key_order(given);
  std::string html =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
      "<meta name=\"generator\" content=\"tunekit\"><title>" +
      escape(options.title) + "</title><style>" + style +
      "</style></head><body><main><header><h1>" + escape(options.title) + "</h1>";
  std::set<std::string> ops, devices;
  for (const auto& r : reports) ops.insert(r.op), devices.insert(r.device);
  html += "<p class=\"sub\">" + (options.subtitle.empty() ? "" : escape(options.subtitle) + " · ") +
          std::to_string(reports.size()) + (reports.size() == 1 ? " tuning" : " tunings") + " of " +
          std::to_string(ops.size()) + (ops.size() == 1 ? " op" : " ops") + " on " +
          std::to_string(devices.size()) + (devices.size() == 1 ? " device" : " devices") +
          "</p></header>";
  if (reports.empty()) {
    html +=
        "<div class=\"card\"><p>No tuning results yet. Tune something first" +
        (options.how_to_tune.empty() ? std::string()
                                     : ", e.g. <code>" + escape(options.how_to_tune) + "</code>") +
        ", then run <code>tunekit report --html report.html</code> again.</p></div>";
  } else {
    html += "<div class=\"card\">" + summary_table(reports) +
            "<input id=\"filter\" type=\"search\" placeholder=\"Filter by op, key or device\" "
            "aria-label=\"filter\"></div>";
    for (std::size_t i = 0; i < reports.size(); ++i) html += section(reports[i], i, options);
  }
  html +=
      "<footer><p>Times are device time per call (OpenCL profiling events, or the host "
      "clock for host code), the median of each candidate's samples; the spread is the "
      "median absolute deviation (MAD). Hover a bar or a point for its numbers.</p>"
      "<p id=\"status\" data-state=\"pending\">The report's script has not run (charts "
      "are still readable).</p></footer></main><script>" +
      std::string(script) + "</script></body></html>\n";
  return html;
}

std::string text_summary(const std::vector<TuningReport>& given) {
  if (given.empty()) return "no tuning results\n";
  const std::vector<TuningReport> reports = in_key_order(given);
  // Columns are capped and their text escaped (printable): a forged 10 MB name or an escape
  // sequence in a key must neither pad every row nor reach the terminal.
  constexpr std::size_t max_op = 40, max_key = 80, max_winner = 48;
  std::size_t op_width = 2, key_width = 3, winner_width = 6;
  for (const auto& r : reports) {
    op_width = std::max(op_width, std::min(r.op.size(), max_op));
    key_width = std::max(key_width, std::min(r.key.size(), max_key));
    if (const auto* w = r.winner())
      winner_width = std::max(winner_width, std::min(w->name.size(), max_winner));
  }
  std::string text;
  char line[512];
  std::snprintf(line, sizeof line, "%-*s  %-*s  %-*s %12s %11s  %s\n", static_cast<int>(op_width),
                "op", static_cast<int>(key_width), "key", static_cast<int>(winner_width), "winner",
                "time", "vs default", "candidates");
  text += line;
  for (const auto& r : reports) {
    const AutotuneOutcome* winner = r.winner();
    const AutotuneOutcome* fallback = default_of(r);
    const Counts c = count(r);
    std::string counts = std::to_string(c.measured + c.dropped) + " measured";
    if (c.failed > 0) counts += ", " + std::to_string(c.failed) + " failed";
    if (c.not_for_device > 0)
      counts += ", " + std::to_string(c.not_for_device) + " not for this device";
    // The rest of the set: a search leaves most of a large space, and a reader of "20 measured"
    // should not take it for the whole set (`cache show` gives their reasons).
    if (c.skipped > 0) counts += ", " + std::to_string(c.skipped) + " not measured";
    std::string speedup = "-";
    if (winner != nullptr && fallback != nullptr && fallback->ok() && winner->median > 0) {
      char ratio[32];
      std::snprintf(ratio, sizeof ratio, "%.2fx", fallback->median / winner->median);
      speedup = ratio;
    }
    std::snprintf(line, sizeof line, "%-*s  %-*s  %-*s %12s %11s  %s\n", static_cast<int>(op_width),
                  printable(r.op, max_op).c_str(), static_cast<int>(key_width),
                  printable(r.key, max_key).c_str(), static_cast<int>(winner_width),
                  winner ? printable(winner->name, max_winner).c_str() : "(none worked)",
                  winner ? format_seconds(winner->median).c_str() : "-", speedup.c_str(),
                  counts.c_str());
    text += line;
  }
  return text;
}

void write_html_report(const std::filesystem::path& file, std::string_view html) {
  detail::write_user_file(file, html);
}

}  // namespace tunekit
