// The report's text helpers: escaping, numbers and labels.
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
#include "tunekit/device_id.hpp"

namespace tunekit::report_html {

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

std::string clip(const std::string& text, std::size_t chars) {
  if (text.size() <= chars) return text;
  return text.substr(0, chars - 1) + "…";
}

std::string short_device(const std::string& identity) { return clip(device_name(identity), 48); }

}  // namespace tunekit::report_html
