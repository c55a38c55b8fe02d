// The report's charts: inline SVG drawn here (bars of one tuning, scatters of a space).
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

namespace {

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
  for (int i = 0; i <= 10 && i * step <= axis.scale.hi * 1.0001; ++i)
    axis.ticks.push_back(i * step);
  return axis;
}

constexpr double char_width = 7.3;       // of the 12px monospace font the labels use
constexpr double tick_char_width = 7.0;  // of a digit of the 11px sans-serif ticks, at most
constexpr std::size_t max_label_chars = 44;
constexpr std::size_t max_bars = 40;

}  // namespace

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
  const double panel_width = 250, height = 196, left = 62, right = 12, top = 24, bottom = 40;
  const Scale y_scale{y_lo, y_hi, height - bottom, top, true};
  for (const auto& parameter : ranked) {
    // Plain names, not a structured binding: the lambdas below capture them (clang < 16).
    const double influence = parameter.first;
    const std::string& name = parameter.second;
    const std::vector<std::int64_t> axis(values[name].begin(), values[name].end());
    // Wide enough that no two value labels meet: a panel of many or long values is wider.
    std::size_t longest = 1;
    for (std::int64_t v : axis) longest = std::max(longest, std::to_string(v).size());
    const double least_band = tick_char_width * static_cast<double>(longest) + 8;
    const double width =
        std::max(panel_width, left + right + least_band * static_cast<double>(axis.size()));
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

}  // namespace tunekit::report_html
