// The HTML report: one self-contained page of charts (inline SVG drawn here, a small inline
// script for filtering, highlighting and a rendering self-check), and the text summary.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <string>

#include "tunekit/report.hpp"

namespace tunekit {

std::vector<TuningReport> reports_from_cache(const std::vector<CacheEntry>& entries) {
  std::vector<TuningReport> reports;
  reports.reserve(entries.size());
  for (const auto& entry : entries) {
    TuningReport report{entry.id.op, entry.id.key, entry.id.device, 0, entry.result.outcomes};
    rank(report.outcomes);
    for (const auto& outcome : report.outcomes) report.tuning_seconds += outcome.cost_seconds;
    reports.push_back(std::move(report));
  }
  return reports;
}

std::optional<CandidateParameters> parse_candidate_name(std::string_view name) {
  const auto open = name.find('[');
  if (open == std::string_view::npos || open == 0 || name.size() < open + 3 || name.back() != ']') {
    return std::nullopt;
  }
  CandidateParameters parsed{std::string(name.substr(0, open)), {}};
  std::string_view fields = name.substr(open + 1, name.size() - open - 2);
  while (!fields.empty()) {
    const auto comma = fields.find(',');
    const std::string_view field = fields.substr(0, comma);
    const auto eq = field.find('=');
    if (eq == std::string_view::npos || eq == 0) return std::nullopt;
    std::int64_t value = 0;
    const char* first = field.data() + eq + 1;
    const char* last = field.data() + field.size();
    const auto [end, error] = std::from_chars(first, last, value);
    if (error != std::errc{} || end != last || first == last) return std::nullopt;
    parsed.values.emplace_back(std::string(field.substr(0, eq)), value);
    if (comma == std::string_view::npos) break;
    fields.remove_prefix(comma + 1);
    if (fields.empty()) return std::nullopt;  // a trailing comma
  }
  return parsed;
}

namespace {

std::string escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// A pixel coordinate for SVG.
std::string px(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", value);
  return text;
}

std::string percent(double part, double whole) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f%%", whole > 0 ? 100 * part / whole : 0.0);
  return text;
}

std::string ratio_text(double ratio) {
  char text[32];
  std::snprintf(text, sizeof text, ratio >= 10 ? "%.0f×" : "%.2f×", ratio);
  return text;
}

// A short axis label: "0", "2 ms", "250 µs", "1.5 s".
std::string tick_label(double seconds) {
  if (seconds == 0) return "0";
  const double magnitude = std::fabs(seconds);
  const char* unit = "s";
  double value = seconds;
  if (magnitude < 1e-6) {
    unit = "ns", value = seconds * 1e9;
  } else if (magnitude < 1e-3) {
    unit = "µs", value = seconds * 1e6;
  } else if (magnitude < 1) {
    unit = "ms", value = seconds * 1e3;
  }
  char text[32];
  std::snprintf(text, sizeof text, "%.3g %s", value, unit);
  return text;
}

std::string outcome_tooltip(const AutotuneOutcome& o) {
  std::string text = o.name + "\nmedian " + format_seconds(o.median) + " ± " +
                     format_seconds(o.spread) + " (MAD)\nmin " + format_seconds(o.min) + ", max " +
                     format_seconds(o.max) + "\n" + std::to_string(o.samples) + " samples";
  if (o.batch > 1) text += " of " + std::to_string(o.batch) + " calls";
  if (o.status == OutcomeStatus::dropped) text += "\ndropped early: clearly slower than the leader";
  return escape(text);
}

std::string reason_of(const AutotuneOutcome& o) {
  if (!o.error) return std::string(to_string(o.status));
  return o.error->message();
}

// Maps seconds to pixels over [lo, hi] -> [a, b], linearly or on a log scale.
struct Scale {
  double lo, hi, a, b;
  bool log;

  double operator()(double seconds) const {
    if (log) {
      const double v = std::max(seconds, lo);
      return a + (b - a) * (std::log10(v) - std::log10(lo)) / (std::log10(hi) - std::log10(lo));
    }
    return a + (b - a) * (seconds - lo) / (hi - lo);
  }
};

// 1, 2 or 5 times a power of ten, at least `raw`.
double nice_step(double raw) {
  const double power = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (m * power >= raw * (1 - 1e-9)) return m * power;
  }
  return 10 * power;
}

// The scale and ticks of the bar chart: linear from zero, or log (decades) when the times span
// more than 20x, which would otherwise squash the fast candidates into slivers.
struct TimeAxis {
  Scale scale;
  std::vector<double> ticks;
};

TimeAxis bar_axis(double lo, double hi, double a, double b) {
  // The cache's reader admits only times of 0 or 1e-12 to 1e6 s; a direct call may pass
  // anything. Clamped to that range, the loops below stay short whatever the data: at most
  // 18 decades, 11 linear ticks (no step of 0 from a subnormal time, no endless loop from an
  // infinite one).
  const auto clamp_time = [](double t) { return std::isfinite(t) ? std::clamp(t, 0.0, 1e6) : 1e6; };
  lo = std::isnan(lo) ? 0 : clamp_time(lo), hi = clamp_time(hi);
  if (lo > 0 && lo < 1e-12) lo = 1e-12;
  TimeAxis axis{{0, hi, a, b, false}, {}};
  if (lo > 0 && hi / lo > 20) {
    axis.scale = {lo / 1.5, hi * 1.1, a, b, true};
    // 1, 2 and 5 times each power of ten in range; only the powers when that is too many.
    const int first = static_cast<int>(std::floor(std::log10(axis.scale.lo)));
    const int last = static_cast<int>(std::floor(std::log10(axis.scale.hi)));
    const bool dense = axis.scale.hi / axis.scale.lo <= 2000;
    for (int exponent = first; exponent <= last; ++exponent) {
      const double power = std::pow(10.0, exponent);
      for (double m : {1.0, 2.0, 5.0}) {
        const double tick = m * power;
        if ((m == 1.0 || dense) && tick >= axis.scale.lo && tick <= axis.scale.hi) {
          axis.ticks.push_back(tick);
        }
      }
    }
    return axis;
  }
  const double step = nice_step(std::max(hi, 1e-12) / 5);
  axis.scale.hi = std::max(std::ceil(hi / step * (1 - 1e-9)) * step, step);
  for (int i = 0; i <= 10 && i * step <= axis.scale.hi * 1.0001; ++i) axis.ticks.push_back(i * step);
  return axis;
}

constexpr double char_width = 7.3;  // of the 12px monospace font the labels use
constexpr std::size_t max_label_chars = 44;
constexpr std::size_t max_bars = 40;

std::string clip(const std::string& text, std::size_t chars) {
  if (text.size() <= chars) return text;
  return text.substr(0, chars - 1) + "…";
}

// The horizontal bar chart of one tuning: every working candidate's median, fastest on top,
// whiskers at median ± MAD, the winner highlighted.
std::string bar_chart(const TuningReport& report, const AutotuneOutcome& winner) {
  std::vector<const AutotuneOutcome*> working;
  for (const auto& o : report.outcomes) {
    if (o.ok() && !std::isnan(o.median)) working.push_back(&o);  // NaN: no order to sort by
  }
  if (working.empty()) return {};
  std::stable_sort(
      working.begin(), working.end(),
      [](const AutotuneOutcome* x, const AutotuneOutcome* y) { return x->median < y->median; });
  std::size_t shown = std::min(working.size(), max_bars);
  // The default (candidate 0) is what the speed-up is measured against: always draw it.
  bool default_added = false;
  if (shown < working.size()) {
    const auto is_default = [](const AutotuneOutcome* o) { return o->index == 0; };
    const auto fallback = std::find_if(working.begin() + static_cast<std::ptrdiff_t>(shown),
                                       working.end(), is_default);
    if (fallback != working.end()) {
      std::iter_swap(working.begin() + static_cast<std::ptrdiff_t>(shown) - 1, fallback);
      default_added = true;
    }
  }
  std::size_t label_chars = 12;
  double lo = working.front()->median, hi = 0;
  for (std::size_t i = 0; i < shown; ++i) {
    label_chars = std::max(label_chars, std::min(working[i]->name.size() + 2, max_label_chars));
    lo = std::min(lo, std::max(working[i]->median - working[i]->spread, working[i]->median / 2));
    hi = std::max(hi, working[i]->median + working[i]->spread);
  }
  const double width = 920, row = 22, top = 10, bottom = 34, right = 128;
  const double left = 14 + char_width * static_cast<double>(label_chars);
  const double height = top + row * static_cast<double>(shown) + bottom;
  const TimeAxis axis = bar_axis(lo, hi, left, width - right);
  const double plot_bottom = top + row * static_cast<double>(shown);

  std::string svg = "<svg class=\"chart bars\" role=\"img\" viewBox=\"0 0 " + px(width) + " " +
                    px(height) + "\" width=\"" + px(width) + "\" height=\"" + px(height) +
                    "\"><title>" + escape(report.op + " [" + report.key + "]") +
                    ": median time per candidate</title>";
  for (double tick : axis.ticks) {
    const std::string x = px(axis.scale(tick));
    svg += "<line class=\"grid\" x1=\"" + x + "\" x2=\"" + x + "\" y1=\"" + px(top - 4) +
           "\" y2=\"" + px(plot_bottom) + "\"/><text class=\"tick\" x=\"" + x + "\" y=\"" +
           px(plot_bottom + 15) + "\" text-anchor=\"middle\">" + escape(tick_label(tick)) +
           "</text>";
  }
  svg += "<text class=\"axis\" x=\"" + px((left + width - right) / 2) + "\" y=\"" +
         px(plot_bottom + 30) + "\" text-anchor=\"middle\">median device time per call" +
         (axis.scale.log ? " (log scale)" : "") + "; whiskers: ± median absolute deviation</text>";
  const double winner_x = axis.scale(winner.median);
  svg += "<line class=\"winline\" x1=\"" + px(winner_x) + "\" x2=\"" + px(winner_x) + "\" y1=\"" +
         px(top - 4) + "\" y2=\"" + px(plot_bottom) + "\"/>";
  for (std::size_t i = 0; i < shown; ++i) {
    const AutotuneOutcome& o = *working[i];
    const bool is_winner = &o == &winner;
    const double y = top + row * static_cast<double>(i);
    const double mid = y + row / 2 - 1;
    const double x0 = axis.scale.log ? left : axis.scale(0);
    const double x1 = std::max(axis.scale(o.median), x0 + 2);
    const char* kind = is_winner ? "win" : o.status == OutcomeStatus::dropped ? "dropped" : "ok";
    svg += "<g class=\"row\" data-c=\"" + std::to_string(o.index) + "\"><title>" +
           outcome_tooltip(o) + "</title>";
    svg += "<text class=\"label" + std::string(is_winner ? " winlabel" : "") + "\" x=\"" +
           px(left - 8) + "\" y=\"" + px(mid + 4) + "\" text-anchor=\"end\">" +
           escape(clip((is_winner ? "★ " : "") + o.name, max_label_chars)) + "</text>";
    svg += "<rect class=\"bar " + std::string(kind) + "\" x=\"" + px(x0) + "\" y=\"" + px(y + 4) +
           "\" width=\"" + px(x1 - x0) + "\" height=\"" + px(row - 8) + "\" rx=\"2\"/>";
    double end = x1;
    if (o.spread > 0) {
      const double w0 = std::max(axis.scale(o.median - o.spread), x0);
      const double w1 = axis.scale(o.median + o.spread);
      end = std::max(end, w1);
      svg += "<path class=\"whisker\" d=\"M" + px(w0) + " " + px(mid) + "H" + px(w1) + "M" +
             px(w0) + " " + px(mid - 4) + "V" + px(mid + 4) + "M" + px(w1) + " " + px(mid - 4) +
             "V" + px(mid + 4) + "\"/>";
    }
    svg += "<text class=\"value\" x=\"" + px(end + 6) + "\" y=\"" + px(mid + 4) + "\">" +
           escape(format_seconds(o.median)) +
           (is_winner || winner.median <= 0
                ? ""
                : " <tspan class=\"ratio\">" + ratio_text(o.median / winner.median) + "</tspan>") +
           "</text></g>";
  }
  svg += "</svg>";
  if (shown < working.size()) {
    svg += "<p class=\"note\">The " + std::to_string(shown - default_added) + " fastest of " +
           std::to_string(working.size()) + " working candidates" +
           (default_added ? " and the default" : "") +
           " are drawn; every one is in the table below.</p>";
  }
  return svg;
}

// One point of a space's scatter.
struct SpacePoint {
  const AutotuneOutcome* outcome;
  std::map<std::string, std::int64_t> values;
};

// Scatter plots of time against each parameter of one space (small multiples), most influential
// parameter first; the line joins the best time at each value; failed configurations are
// crosses above the plot.
std::string space_charts(const std::string& space, const std::vector<SpacePoint>& points,
                         const AutotuneOutcome& winner) {
  std::vector<std::string> names;  // parameters in name order of the first point
  std::map<std::string, std::set<std::int64_t>> values;
  double lo = 0, hi = 0;
  std::size_t working = 0;
  for (const auto& p : points) {
    for (const auto& [name, value] : p.values) {
      if (!values.count(name)) names.push_back(name);
      values[name].insert(value);
    }
    if (p.outcome->ok()) {
      lo = working ? std::min(lo, p.outcome->median) : p.outcome->median;
      hi = working ? std::max(hi, p.outcome->median) : p.outcome->median;
      ++working;
    }
  }
  if (working < 3) return {};
  // Influence: how much the best time changes across a parameter's values.
  std::vector<std::pair<double, std::string>> ranked;
  for (const auto& name : names) {
    if (values[name].size() < 2) continue;
    std::map<std::int64_t, double> best;
    for (const auto& p : points) {
      if (!p.outcome->ok() || !p.values.count(name)) continue;
      const auto v = p.values.at(name);
      best[v] = best.count(v) ? std::min(best[v], p.outcome->median) : p.outcome->median;
    }
    double b_lo = 0, b_hi = 0;
    for (const auto& [v, t] : best) {
      b_lo = b_lo == 0 ? t : std::min(b_lo, t);
      b_hi = std::max(b_hi, t);
    }
    ranked.emplace_back(b_lo > 0 ? b_hi / b_lo : 1, name);
  }
  if (ranked.empty()) return {};
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const auto& x, const auto& y) { return x.first > y.first; });

  const double pad = std::max(hi / lo, 1.05);
  const double y_lo = lo / std::pow(pad, 0.08), y_hi = hi * std::pow(pad, 0.08);
  std::string html = "<div class=\"space\"><h4>Parameter space <code>" + escape(space) +
                     "</code>: " + std::to_string(working) + " configurations measured";
  std::size_t failed = points.size() - working;
  if (failed > 0) html += ", " + std::to_string(failed) + " failed (×)";
  html += "; parameters ordered by influence</h4><div class=\"panels\">";
  const double width = 250, height = 196, left = 62, right = 12, top = 24, bottom = 40;
  const Scale y_scale{y_lo, y_hi, height - bottom, top, true};
  for (const auto& parameter : ranked) {
    // Plain names, not a structured binding: the lambdas below capture them (clang < 16).
    const double influence = parameter.first;
    const std::string& name = parameter.second;
    const std::vector<std::int64_t> axis(values[name].begin(), values[name].end());
    const double band = (width - left - right) / static_cast<double>(axis.size());
    const auto x_of = [&](std::int64_t v) {
      const auto at = std::lower_bound(axis.begin(), axis.end(), v) - axis.begin();
      return left + band * (static_cast<double>(at) + 0.5);
    };
    std::string svg = "<svg class=\"chart scatter\" role=\"img\" viewBox=\"0 0 " + px(width) + " " +
                      px(height) + "\" width=\"" + px(width) + "\" height=\"" + px(height) +
                      "\"><title>" + escape(space + ": time against " + name) + "</title>";
    for (int i = 0; i <= 3; ++i) {
      const double t = y_lo * std::pow(y_hi / y_lo, (0.5 + i) / 4.0);
      const std::string y = px(y_scale(t));
      svg += "<line class=\"grid\" x1=\"" + px(left) + "\" x2=\"" + px(width - right) + "\" y1=\"" +
             y + "\" y2=\"" + y + "\"/><text class=\"tick\" x=\"" + px(left - 5) + "\" y=\"" +
             px(y_scale(t) + 4) + "\" text-anchor=\"end\">" + escape(tick_label(t)) + "</text>";
    }
    for (std::int64_t v : axis) {
      svg += "<text class=\"tick\" x=\"" + px(x_of(v)) + "\" y=\"" + px(height - bottom + 15) +
             "\" text-anchor=\"middle\">" + std::to_string(v) + "</text>";
    }
    svg +=
        "<text class=\"axis\" x=\"" + px((left + width - right) / 2) + "\" y=\"" + px(height - 6) +
        "\" text-anchor=\"middle\"><tspan class=\"pname\">" + escape(name) + "</tspan>" +
        (influence > 1.005 ? "  best varies " + ratio_text(influence) : std::string()) + "</text>";
    // A deterministic jitter, so that configurations with equal values do not hide each other.
    const auto x_of_point = [&](const SpacePoint& p) {
      const auto hash = static_cast<double>((p.outcome->index * 2654435761u) % 1000);
      return x_of(p.values.at(name)) + (hash / 1000.0 - 0.5) * band * 0.5;
    };
    // The lower envelope: through the best point at each value.
    std::map<std::int64_t, const SpacePoint*> best;
    for (const auto& p : points) {
      if (!p.outcome->ok() || !p.values.count(name)) continue;
      const SpacePoint*& at = best[p.values.at(name)];
      if (at == nullptr || p.outcome->median < at->outcome->median) at = &p;
    }
    if (best.size() >= 2) {
      svg += "<polyline class=\"envelope\" points=\"";
      for (const auto& [v, p] : best) {
        svg += px(x_of_point(*p)) + "," + px(y_scale(p->outcome->median)) + " ";
      }
      svg += "\"/>";
    }
    std::string winner_point;  // drawn last, on top
    for (const auto& p : points) {
      if (!p.values.count(name)) continue;
      const AutotuneOutcome& o = *p.outcome;
      const double x = x_of_point(p);
      const std::string c = std::to_string(o.index);
      if (!o.ok()) {
        const double y = top - 12;
        svg += "<path class=\"pt failpt\" data-c=\"" + c + "\" d=\"M" + px(x - 3) + " " +
               px(y - 3) + "l6 6m0 -6l-6 6\"><title>" +
               escape(o.name + "\nFAILED: " + reason_of(o)) + "</title></path>";
      } else if (&o == &winner) {
        winner_point = "<circle class=\"pt winpt\" data-c=\"" + c + "\" cx=\"" + px(x) +
                       "\" cy=\"" + px(y_scale(o.median)) + "\" r=\"5.5\"><title>★ winner\n" +
                       outcome_tooltip(o) + "</title></circle>";
      } else {
        svg += "<circle class=\"pt\" data-c=\"" + c + "\" cx=\"" + px(x) + "\" cy=\"" +
               px(y_scale(o.median)) + "\" r=\"3.5\"><title>" + outcome_tooltip(o) +
               "</title></circle>";
      }
    }
    svg += winner_point;
    svg += "</svg>";
    html += svg;
  }
  html += "</div></div>";
  return html;
}

// The device's name alone, from an OpenCL identity ("OpenCL | platform | version | device | ..").
std::string short_device(const std::string& identity) {
  std::vector<std::string> fields;
  for (std::size_t start = 0;;) {
    const auto bar = identity.find(" | ", start);
    fields.push_back(identity.substr(start, bar - start));
    if (bar == std::string::npos) break;
    start = bar + 3;
  }
  return clip(fields.size() >= 4 && fields[0] == "OpenCL" ? fields[3] : identity, 48);
}

const AutotuneOutcome* default_of(const TuningReport& report) {
  for (const auto& o : report.outcomes) {
    if (o.index == 0) return &o;
  }
  return nullptr;
}

struct Counts {
  std::size_t measured = 0, dropped = 0, failed = 0, skipped = 0;
};

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
        ++c.failed;
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

std::string failures(const TuningReport& report) {
  std::vector<const AutotuneOutcome*> failed;
  for (const auto& o : report.outcomes) {
    if (o.status == OutcomeStatus::failed) failed.push_back(&o);
  }
  if (failed.empty()) return {};
  constexpr std::size_t shown = 12;
  const auto rows = [&](std::size_t from, std::size_t to) {
    std::string html;
    for (std::size_t i = from; i < to; ++i) {
      const AutotuneOutcome& o = *failed[i];
      html += "<tr data-c=\"" + std::to_string(o.index) + "\"><td><code>" + escape(o.name) +
              "</code></td><td class=\"kind\">" +
              escape(o.error ? to_string(o.error->kind()) : std::string_view("failed")) +
              "</td><td>" + reason_cell(o) + "</td></tr>";
    }
    return html;
  };
  std::string html = "<h4 class=\"failed-title\">" + std::to_string(failed.size()) + " failed " +
                     (failed.size() == 1 ? "candidate" : "candidates") +
                     "</h4><table class=\"failed\"><thead><tr><th>candidate</th><th>kind</th>"
                     "<th>reason</th></tr></thead><tbody>" +
                     rows(0, std::min(shown, failed.size())) + "</tbody></table>";
  if (failed.size() > shown) {
    html += "<details><summary>" + std::to_string(failed.size() - shown) +
            " more failed candidates</summary><table class=\"failed\"><tbody>" +
            rows(shown, failed.size()) + "</tbody></table></details>";
  }
  return html;
}

std::string skipped(const TuningReport& report) {
  std::map<std::string, std::vector<const AutotuneOutcome*>> by_reason;
  for (const auto& o : report.outcomes) {
    if (o.status == OutcomeStatus::skipped) by_reason[reason_of(o)].push_back(&o);
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
                     "<th>status</th><th>median</th><th>MAD</th><th>min</th><th>max</th>"
                     "<th>samples</th><th>batch</th><th>cost</th></tr></thead><tbody>";
  const AutotuneOutcome* winner = report.winner();
  for (const auto& o : report.outcomes) {
    const bool timed = o.ok();
    const auto time = [&](double s) { return timed ? escape(format_seconds(s)) : std::string(); };
    html += "<tr data-c=\"" + std::to_string(o.index) + "\"" +
            (&o == winner ? " class=\"winrow\"" : "") + "><td>" + std::to_string(o.index) +
            "</td><td><code>" + escape(o.name) + "</code></td><td>" +
            (&o == winner ? std::string("winner") : escape(to_string(o.status))) + "</td><td>" +
            time(o.median) + "</td><td>" + (timed ? percent(o.spread, o.median) : "") +
            "</td><td>" + time(o.min) + "</td><td>" + time(o.max) + "</td><td>" +
            (timed ? std::to_string(o.samples) : "") + "</td><td>" +
            (timed ? std::to_string(o.batch) : "") + "</td><td>" +
            (o.cost_seconds > 0 ? escape(format_seconds(o.cost_seconds)) : "") + "</td></tr>";
  }
  return html + "</tbody></table></details>";
}

std::string section(const TuningReport& report, std::size_t number) {
  const AutotuneOutcome* winner = report.winner();
  const AutotuneOutcome* fallback = default_of(report);
  const Counts c = count(report);
  std::string search = report.op + " " + report.key + " " + report.device;
  std::transform(search.begin(), search.end(), search.begin(),
                 [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  std::string html = "<section class=\"tuning\" id=\"t" + std::to_string(number) +
                     "\" data-search=\"" + escape(search) + "\"><h2><span class=\"op\">" +
                     escape(report.op) + "</span> <code class=\"key\">" + escape(report.key) +
                     "</code></h2><p class=\"device\" title=\"" + escape(report.device) + "\">on " +
                     escape(report.device) + "</p><p class=\"facts\">";
  if (winner != nullptr) {
    html += "winner <b class=\"winname\">" + escape(winner->name) +
            "</b>: " + escape(format_seconds(winner->median)) + " ± " +
            percent(winner->spread, winner->median);
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

std::string summary_table(const std::vector<TuningReport>& reports) {
  std::string html =
      "<table class=\"summary\"><thead><tr><th>op</th><th>key</th><th>device</th>"
      "<th>winner</th><th>time</th><th>vs default</th><th>candidates</th></tr>"
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
              (fallback != nullptr && fallback->ok() && winner->median > 0
                   ? ratio_text(fallback->median / winner->median)
                   : std::string("–")) +
              "</td>";
    } else {
      html += "<td class=\"bad\">none worked</td><td></td><td></td>";
    }
    html += "<td>" + std::to_string(c.measured + c.dropped) + " measured" +
            (c.failed > 0 ? ", <span class=\"bad\">" + std::to_string(c.failed) + " failed</span>"
                          : std::string()) +
            "</td></tr>";
  }
  return html + "</tbody></table>";
}

constexpr const char* style = R"CSS(
:root { --bg:#f6f7f9; --card:#fff; --fg:#1d2430; --muted:#5f6b7a; --line:#e3e7ec;
  --win:#1a7f37; --ok:#4c78a8; --dropped:#a9c4e0; --bad:#c62828; --accent:#0b57d0; }
@media (prefers-color-scheme: dark) { :root { --bg:#14171c; --card:#1c2027; --fg:#e6e9ee;
  --muted:#98a2b0; --line:#2c323b; --win:#3fb950; --ok:#6c9bd2; --dropped:#3d5a7a;
  --bad:#ff6b6b; --accent:#7aa7ff; } }
* { box-sizing: border-box; }
body { margin:0; background:var(--bg); color:var(--fg);
  font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif; }
main { max-width:1000px; margin:0 auto; padding:24px 20px 40px; }
header h1 { margin:0 0 2px; font-size:24px; }
header .sub { color:var(--muted); margin:0 0 14px; }
code, .mono { font-family:ui-monospace,"DejaVu Sans Mono",Menlo,Consolas,monospace; font-size:12.5px; }
a { color:var(--accent); text-decoration:none; } a:hover { text-decoration:underline; }
.card, section.tuning { background:var(--card); border:1px solid var(--line); border-radius:10px;
  padding:16px 18px; margin:14px 0; box-shadow:0 1px 2px rgba(0,0,0,.04); }
section.tuning h2 { margin:0; font-size:18px; }
table.summary td:nth-child(2) code { white-space:nowrap; } section.tuning h2 .key { font-size:14px; color:var(--muted); }
.device { margin:2px 0 6px; color:var(--muted); font-size:12px; white-space:nowrap; overflow:hidden; text-overflow:ellipsis; }
.facts { margin:6px 0 8px; } .winname { color:var(--win); }
.bad { color:var(--bad); }
.legend { color:var(--muted); font-size:12px; margin:4px 0; }
.swatch { display:inline-block; width:12px; height:10px; border-radius:2px; margin:0 5px 0 14px; vertical-align:-1px; }
.swatch:first-child { margin-left:0; }
.swatch.win { background:var(--win); } .swatch.ok { background:var(--ok); }
.swatch.dropped { background:var(--dropped); } .swatch.whisker { height:2px; background:var(--fg); vertical-align:3px; }
svg.chart { display:block; max-width:100%; height:auto; overflow:visible; }
svg text { fill:var(--fg); font:12px ui-monospace,"DejaVu Sans Mono",Menlo,Consolas,monospace; }
svg text.tick, svg text.axis { fill:var(--muted); font:11px system-ui,"DejaVu Sans",sans-serif; }
svg .pname { font-weight:700; fill:var(--fg); font-size:12px; }
svg text.winlabel { font-weight:700; fill:var(--win); }
svg .ratio { fill:var(--muted); }
svg .grid { stroke:var(--line); stroke-width:1; }
svg .winline { stroke:var(--win); stroke-width:1; stroke-dasharray:3 3; opacity:.6; }
svg .bar.win { fill:var(--win); } svg .bar.ok { fill:var(--ok); } svg .bar.dropped { fill:var(--dropped); }
svg .whisker { stroke:var(--fg); stroke-width:1.3; fill:none; opacity:.75; }
svg .row:hover .bar, svg .row.hl .bar { filter:brightness(1.15); stroke:var(--fg); stroke-width:1; }
svg .envelope { fill:none; stroke:var(--win); stroke-width:1.5; opacity:.55; }
svg .pt { fill:var(--ok); opacity:.6; } svg .pt.winpt { fill:var(--win); opacity:1; stroke:var(--card); stroke-width:1.5; }
svg .pt.failpt { fill:none; stroke:var(--bad); stroke-width:1.5; opacity:.8; }
svg .pt.hl { opacity:1; stroke:var(--fg); stroke-width:2; }
.space h4, .failed-title { margin:14px 0 6px; font-size:13px; }
.panels { display:flex; flex-wrap:wrap; gap:6px 14px; }
table { border-collapse:collapse; width:100%; font-size:13px; }
th, td { text-align:left; padding:4px 8px; border-bottom:1px solid var(--line); vertical-align:top; }
th { color:var(--muted); font-weight:600; font-size:12px; }
td.num { text-align:right; white-space:nowrap; } td.kind { white-space:nowrap; color:var(--bad); }
tr.hl td, tr.winrow td { background:rgba(26,127,55,.08); }
table.failed td:first-child { max-width:320px; overflow-wrap:anywhere; }
details { margin:8px 0; } summary { cursor:pointer; color:var(--muted); }
details pre { max-height:320px; overflow:auto; background:var(--bg); padding:8px; border-radius:6px; font-size:12px; }
.note { color:var(--muted); font-size:12px; margin:4px 0; }
#filter { width:100%; padding:7px 10px; border:1px solid var(--line); border-radius:8px;
  background:var(--card); color:var(--fg); font-size:14px; margin:4px 0 0; }
footer { color:var(--muted); font-size:12px; margin-top:18px; }
#status[data-state="error"] { color:var(--bad); font-weight:700; }
)CSS";

// Filtering, cross-highlighting of one candidate across a section's charts and tables, and the
// self-check that the test reads: every chart and bar has a size, and no script error happened.
constexpr const char* script = R"JS(
(function () {
  'use strict';
  var status = document.getElementById('status');
  var errors = [];
  function fail(message) {
    errors.push(String(message));
    status.dataset.state = 'error';
    status.textContent = 'report script error: ' + errors.join('; ');
  }
  window.addEventListener('error', function (e) { fail(e.message); });
  try {
    var sections = Array.prototype.slice.call(document.querySelectorAll('section.tuning'));
    var filter = document.getElementById('filter');
    if (filter) {
      filter.addEventListener('input', function () {
        var q = filter.value.trim().toLowerCase();
        sections.forEach(function (s) { s.hidden = q !== '' && s.dataset.search.indexOf(q) < 0; });
      });
    }
    sections.forEach(function (s) {
      var lit = [];
      function clear() { lit.forEach(function (e) { e.classList.remove('hl'); }); lit = []; }
      s.addEventListener('mouseover', function (e) {
        var target = e.target.closest('[data-c]');
        clear();
        if (!target) return;
        lit = Array.prototype.slice.call(
            s.querySelectorAll('[data-c="' + target.getAttribute('data-c') + '"]'));
        lit.forEach(function (el) { el.classList.add('hl'); });
      });
      s.addEventListener('mouseleave', clear);
    });
    var charts = document.querySelectorAll('svg.chart');
    var bars = 0, points = 0, empty = [];
    Array.prototype.forEach.call(charts, function (svg) {
      var box = svg.getBoundingClientRect();
      if (box.width < 50 || box.height < 50) empty.push(svg.querySelector('title').textContent);
      Array.prototype.forEach.call(svg.querySelectorAll('.bar'), function (bar) {
        var b = bar.getBoundingClientRect();
        if (b.width > 0 && b.height > 0) bars += 1; else empty.push('a bar');
      });
      points += svg.querySelectorAll('.pt').length;
    });
    status.dataset.charts = charts.length;
    status.dataset.bars = bars;
    status.dataset.points = points;
    if (empty.length) fail('not rendered: ' + empty.join(', '));
    if (!errors.length) {
      status.dataset.state = 'ok';
      status.textContent = 'Rendered ' + charts.length + ' charts, ' + bars + ' bars, ' +
          points + ' points.';
    }
  } catch (e) {
    fail(e && e.stack ? e.stack : e);
  }
})();
)JS";

// The reports by op, then key in natural order (rows=64 before rows=128), then device.
std::vector<TuningReport> in_key_order(std::vector<TuningReport> reports) {
  std::stable_sort(reports.begin(), reports.end(), [](const TuningReport& a, const TuningReport& b) {
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
        "<div class=\"card\"><p>No tuning results yet. Tune something first, e.g. "
        "<code>tunekit tune matmul --size 256</code>, then run <code>tunekit report "
        "--html report.html</code> again.</p></div>";
  } else {
    html += "<div class=\"card\">" + summary_table(reports) +
            "<input id=\"filter\" type=\"search\" placeholder=\"Filter by op, key or device\" "
            "aria-label=\"filter\"></div>";
    for (std::size_t i = 0; i < reports.size(); ++i) html += section(reports[i], i);
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
    std::string speedup = "-";
    if (winner != nullptr && fallback != nullptr && fallback->ok() && winner->median > 0) {
      char ratio[32];
      std::snprintf(ratio, sizeof ratio, "%.2fx", fallback->median / winner->median);
      speedup = ratio;
    }
    std::snprintf(
        line, sizeof line, "%-*s  %-*s  %-*s %12s %11s  %s\n", static_cast<int>(op_width),
        printable(r.op, max_op).c_str(), static_cast<int>(key_width),
        printable(r.key, max_key).c_str(), static_cast<int>(winner_width),
        winner ? printable(winner->name, max_winner).c_str() : "(none worked)",
        winner ? format_seconds(winner->median).c_str() : "-", speedup.c_str(), counts.c_str());
    text += line;
  }
  return text;
}

}  // namespace tunekit
