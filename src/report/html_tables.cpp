// The report's tables: the summary, failed and skipped candidates, every outcome.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "html_parts.hpp"

namespace tunekit::report_html {

std::string metrics_text(const TuningReport& report, const AutotuneOutcome& outcome) {
  std::string text;
  for (std::size_t m = 0; m < report.metric_names.size() && m < outcome.metrics.size(); ++m) {
    if (!std::isfinite(outcome.metrics[m])) continue;
    text += (text.empty() ? "" : ", ") + format_metric(outcome.metrics[m]) + " " +
            clip(report.metric_names[m], max_metric_name);
  }
  return text;
}

const AutotuneOutcome* default_of(const TuningReport& report) {
  for (const auto& o : report.outcomes) {
    if (o.index == 0) return &o;
  }
  return nullptr;
}

Counts count(const TuningReport& report) {
  Counts c;
  for (const auto& o : report.outcomes) {
    switch (o.status) {
      case OutcomeStatus::measured:
        ++c.measured;
        break;
      case OutcomeStatus::dropped:
        ++c.dropped;
        break;
      case OutcomeStatus::failed:
        ++(ruled_out_by_device(o) ? c.not_for_device : c.failed);
        break;
      case OutcomeStatus::skipped:
        ++c.skipped;
        break;
    }
  }
  return c;
}

std::string reason_cell(const AutotuneOutcome& o) {
  const std::string reason = reason_of(o);
  if (reason.size() <= 160 && reason.find('\n') == std::string::npos) return escape(reason);
  const std::string first_line = reason.substr(0, std::min(reason.find('\n'), std::size_t{120}));
  return escape(first_line) + " …<details><summary>whole message (" +
         std::to_string(reason.size()) + " characters)</summary><pre>" + escape(reason) +
         "</pre></details>";
}

// One row per failure (failure_groups()): a compiler error that 8 configurations hit is one row
// naming the 8, with the whole message once.
std::string failures(const TuningReport& report) {
  const auto groups = failure_groups(report.outcomes);
  std::size_t failed = 0;
  for (const auto& group : groups) failed += group.size();
  if (failed == 0) return {};
  constexpr std::size_t shown = 12;  // rows, and names in a row
  const auto rows = [&](std::size_t from, std::size_t to) {
    std::string html;
    for (std::size_t i = from; i < to; ++i) {
      const auto& group = groups[i];
      const AutotuneOutcome& o = *group.front();
      html += "<tr data-c=\"" + std::to_string(o.index) + "\"><td>";
      for (std::size_t n = 0; n < group.size() && n < shown; ++n) {
        html += std::string(n ? ", " : "") + "<code>" + escape(group[n]->name) + "</code>";
      }
      if (group.size() > shown) html += " and " + std::to_string(group.size() - shown) + " more";
      if (group.size() > 1) html += " (" + std::to_string(group.size()) + " candidates)";
      html += "</td><td class=\"kind\">" + escape(to_string(o.error->kind())) + "</td><td>" +
              reason_cell(o) + "</td></tr>";
    }
    return html;
  };
  std::string html =
      "<h4 class=\"failed-title\">" + std::to_string(failed) + " failed " +
      (failed == 1 ? "candidate" : "candidates") +
      (groups.size() < failed ? ", " + std::to_string(groups.size()) +
                                    (groups.size() == 1 ? " distinct error" : " distinct errors")
                              : std::string()) +
      "</h4><table class=\"failed\"><thead><tr><th>candidates</th><th>kind</th>"
      "<th>reason</th></tr></thead><tbody>" +
      rows(0, std::min(shown, groups.size())) + "</tbody></table>";
  if (groups.size() > shown) {
    html += "<details><summary>" + std::to_string(groups.size() - shown) +
            " more distinct errors</summary><table class=\"failed\"><tbody>" +
            rows(shown, groups.size()) + "</tbody></table></details>";
  }
  return html;
}

std::string skipped(const TuningReport& report) {
  // Folded (fold_reasons: a limit's reasons at every size in one), by their label.
  std::vector<const AutotuneOutcome*> never_measured;
  for (const auto& o : report.outcomes) {
    if (o.status == OutcomeStatus::skipped) never_measured.push_back(&o);
  }
  std::map<std::string, std::vector<const AutotuneOutcome*>> by_reason;
  for (ReasonFold& f : fold_reasons(never_measured, reason_of)) {
    by_reason[f.example + std::string(f.suffix())] = std::move(f.outcomes);
  }
  if (by_reason.empty()) return {};
  std::string html = "<details class=\"skipped\"><summary>Not measured:";
  bool first = true;
  for (const auto& [reason, list] : by_reason) {
    html += std::string(first ? " " : "; ") + std::to_string(list.size()) + " " + escape(reason);
    first = false;
  }
  html += "</summary>";
  for (const auto& [reason, list] : by_reason) {
    html += "<p><b>" + escape(reason) + "</b>: ";
    constexpr std::size_t names = 200;
    for (std::size_t i = 0; i < list.size() && i < names; ++i) {
      html += std::string(i ? ", " : "") + "<code>" + escape(list[i]->name) + "</code>";
    }
    if (list.size() > names) html += " and " + std::to_string(list.size() - names) + " more";
    html += "</p>";
  }
  return html + "</details>";
}

std::string outcome_table(const TuningReport& report) {
  std::string html = "<details class=\"all\"><summary>Every candidate (" +
                     std::to_string(report.outcomes.size()) +
                     ")</summary><table class=\"outcomes\"><thead><tr><th>#</th><th>candidate</th>"
                     "<th>status</th><th>median</th><th>95% interval</th>";
  for (const auto& name : report.metric_names) html += "<th>" + escape(name) + "</th>";
  html +=
      "<th>MAD</th><th>min</th><th>max</th><th>samples</th><th>batch</th><th>cost</th></tr>"
      "</thead><tbody>";
  const AutotuneOutcome* winner = report.winner();
  for (const auto& o : report.outcomes) {
    const bool timed = o.ok();
    const auto time = [&](double s) { return timed ? escape(format_seconds(s)) : std::string(); };
    html += "<tr data-c=\"" + std::to_string(o.index) + "\"" +
            (&o == winner ? " class=\"winrow\"" : "") + "><td>" + std::to_string(o.index) +
            "</td><td><code>" + escape(o.name) + "</code></td><td>" +
            (&o == winner ? std::string("winner") : escape(to_string(o.status))) +
            (o.tied ? ", tied" : "") + "</td><td>" + time(o.median) + "</td><td>" +
            (timed ? escape(interval_text(o)) : std::string()) + "</td>";
    for (std::size_t m = 0; m < report.metric_names.size(); ++m) {
      html += "<td class=\"num\">" +
              (m < o.metrics.size() ? escape(format_metric(o.metrics[m])) : std::string()) +
              "</td>";
    }
    html += "<td>" + (timed ? percent(o.spread, o.median) : "") + "</td><td>" + time(o.min) +
            "</td><td>" + time(o.max) + "</td><td>" + (timed ? std::to_string(o.samples) : "") +
            "</td><td>" + (timed ? std::to_string(o.batch) : "") + "</td><td>" +
            (o.cost_seconds > 0 ? escape(format_seconds(o.cost_seconds)) : "") + "</td></tr>";
  }
  return html + "</tbody></table></details>";
}

std::string summary_table(const std::vector<TuningReport>& reports) {
  std::string html =
      "<table class=\"summary\"><thead><tr><th>op</th><th>key</th><th>device</th>"
      "<th>winner</th><th>time</th><th>throughput</th><th>vs default</th><th>candidates</th>"
      "</tr>"
      "</thead><tbody>";
  for (std::size_t i = 0; i < reports.size(); ++i) {
    const TuningReport& r = reports[i];
    const AutotuneOutcome* winner = r.winner();
    const AutotuneOutcome* fallback = default_of(r);
    const Counts c = count(r);
    html += "<tr><td>" + escape(r.op) + "</td><td><a href=\"#t" + std::to_string(i) + "\"><code>" +
            escape(r.key) + "</code></a></td><td title=\"" + escape(r.device) + "\">" +
            escape(short_device(r.device)) + "</td>";
    if (winner != nullptr) {
      html += "<td><code>" + escape(clip(winner->name, 60)) + "</code></td><td class=\"num\">" +
              escape(format_seconds(winner->median)) + "</td><td class=\"num\">" +
              escape(metrics_text(r, *winner)) + "</td><td class=\"num\">" +
              (fallback != nullptr && fallback->ok() && winner->median > 0
                   ? ratio_text(fallback->median / winner->median)
                   : std::string("–")) +
              "</td>";
    } else {
      html += "<td class=\"bad\">none worked</td><td></td><td></td><td></td>";
    }
    html += "<td>" + std::to_string(c.measured + c.dropped) + " measured" +
            (c.failed > 0 ? ", <span class=\"bad\">" + std::to_string(c.failed) + " failed</span>"
                          : std::string()) +
            (c.not_for_device > 0 ? ", " + std::to_string(c.not_for_device) + " not for this device"
                                  : std::string()) +
            "</td></tr>";
  }
  return html + "</tbody></table>";
}

}  // namespace tunekit::report_html
