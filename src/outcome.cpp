// Ranking and the printed table of a tuning.
#include "tunekit/outcome.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>

#include "tunekit/device_id.hpp"
#include "tunekit/metric.hpp"

namespace tunekit {

std::string_view to_string(OutcomeStatus status) {
  switch (status) {
    case OutcomeStatus::measured:
      return "measured";
    case OutcomeStatus::dropped:
      return "dropped";
    case OutcomeStatus::failed:
      return "failed";
    case OutcomeStatus::skipped:
      return "skipped";
  }
  return "?";
}

const AutotuneOutcome* TuningReport::winner() const {
  const AutotuneOutcome* best = nullptr;
  for (const auto& outcome : outcomes) {
    if (outcome.ok() && (best == nullptr || outcome.median < best->median)) best = &outcome;
  }
  return best;
}

const AutotuneOutcome* TuningReport::outcome(std::string_view name) const {
  for (const auto& candidate : outcomes) {
    if (candidate.name == name) return &candidate;
  }
  return nullptr;
}

void rank(std::vector<AutotuneOutcome>& outcomes) {
  const auto order = [](const AutotuneOutcome& o) {
    return o.ok() ? 0 : o.status == OutcomeStatus::failed ? 1 : 2;
  };
  std::stable_sort(outcomes.begin(), outcomes.end(),
                   [&](const AutotuneOutcome& a, const AutotuneOutcome& b) {
                     if (order(a) != order(b)) return order(a) < order(b);
                     if (order(a) == 0 && a.median != b.median) return a.median < b.median;
                     return a.index < b.index;
                   });
}

void scale_times(AutotuneOutcome& outcome, double factor) {
  for (double* t : {&outcome.median, &outcome.low, &outcome.high, &outcome.min, &outcome.max,
                    &outcome.spread}) {
    *t *= factor;
  }
}

std::string format_seconds(double seconds) {
  char text[32];
  const double magnitude = std::fabs(seconds);
  if (magnitude >= 1) {
    std::snprintf(text, sizeof text, "%.3f s", seconds);
  } else if (magnitude >= 1e-3) {
    std::snprintf(text, sizeof text, "%.3f ms", seconds * 1e3);
  } else if (magnitude >= 1e-6) {
    std::snprintf(text, sizeof text, "%.3f us", seconds * 1e6);
  } else {
    std::snprintf(text, sizeof text, "%.1f ns", seconds * 1e9);
  }
  return text;
}

std::string format_metric(double value) {
  if (!std::isfinite(value)) return "-";
  char text[32];
  const double magnitude = std::fabs(value);
  std::snprintf(text, sizeof text,
                magnitude >= 1000 ? "%.0f"
                : magnitude >= 10 ? "%.1f"
                                  : "%.3g",
                value);
  return text;
}

std::string printable(std::string_view text, std::size_t max_bytes, bool lines) {
  std::string out;
  out.reserve(std::min(text.size(), max_bytes) + 8);
  static constexpr char digits[] = "0123456789abcdef";
  const auto escape = [&](unsigned char c) {
    out += "\\x";
    out += digits[c >> 4];
    out += digits[c & 15];
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (out.size() >= max_bytes) {
      // Back off to a character boundary (not inside a UTF-8 sequence), then mark the cut.
      while (!out.empty() && (static_cast<unsigned char>(out.back()) & 0xc0) == 0x80)
        out.pop_back();
      if (!out.empty() && static_cast<unsigned char>(out.back()) >= 0xc0) out.pop_back();
      out += "...";
      break;
    }
    const auto c = static_cast<unsigned char>(text[i]);
    if ((c < 0x20 && !(lines && c == '\n')) || c == 0x7f) {
      escape(c);
    } else if (c == 0xc2 && i + 1 < text.size() &&
               static_cast<unsigned char>(text[i + 1]) >= 0x80 &&
               static_cast<unsigned char>(text[i + 1]) <= 0x9f) {
      escape(c);  // a C1 control (CSI is U+009B): both bytes escaped
      escape(static_cast<unsigned char>(text[++i]));
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

std::vector<std::vector<const AutotuneOutcome*>> failure_groups(
    const std::vector<AutotuneOutcome>& outcomes) {
  std::vector<const AutotuneError*> errors;
  for (const auto& outcome : outcomes) {
    const bool failed = outcome.status == OutcomeStatus::failed && outcome.error;
    errors.push_back(failed ? &*outcome.error : nullptr);
  }
  std::vector<std::vector<const AutotuneOutcome*>> groups;
  for (const auto& group : group_failures(errors)) {
    auto& members = groups.emplace_back();
    for (const std::size_t i : group) members.push_back(&outcomes[i]);
  }
  return groups;
}

namespace {

// `text`'s lines, each indented by `indent` (the whole messages below a table).
std::string indented(const std::string& text, std::string_view indent) {
  std::string out;
  for (std::size_t start = 0; start <= text.size();) {
    auto end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    out.append(indent).append(text, start, end - start).append("\n");
    start = end + 1;
  }
  return out;
}

}  // namespace

std::string format_time_spent(const TuningReport& report) {
  const TuningTime& t = report.time_spent;
  const double other = report.tuning_seconds - t.waiting_for_builds - t.first_calls - t.validating -
                       t.measuring - t.confirming;
  char text[400];
  std::snprintf(text, sizeof text,
                "time: %.2f s waiting for builds (%zu prepared ahead), %.2f s first calls, %.2f s "
                "validating, %.2f s measuring, %.2f s confirming, %.2f s other",
                t.waiting_for_builds, t.programs_prepared, t.first_calls, t.validating, t.measuring,
                t.confirming, std::max(other, 0.0));
  return text;
}

bool ruled_out_by_device(const AutotuneOutcome& outcome) {
  return outcome.status == OutcomeStatus::failed && outcome.error &&
         outcome.error->kind() == ErrorKind::out_of_resources;
}

namespace {

// What a reason folds by: its summary, and for a device's limit its words, numbers masked.
std::string folded_words(const AutotuneError* error) {
  if (error == nullptr) return "not measured";
  std::string words = error->summary();
  if (error->kind() == ErrorKind::out_of_resources) {
    // Each number as one '#': "41984 bytes" and "132096 bytes" fold together.
    std::string masked;
    for (const char c : words) {
      const bool digit = c >= '0' && c <= '9';
      if (!digit) {
        masked += c;
      } else if (masked.empty() || masked.back() != '#') {
        masked += '#';
      }
    }
    words = std::move(masked);
  }
  return words;
}

}  // namespace

std::vector<ReasonFold> fold_reasons(const std::vector<const AutotuneOutcome*>& outcomes,
                                     std::string (*reason)(const AutotuneOutcome&)) {
  std::map<std::string, ReasonFold> by_words;
  for (const AutotuneOutcome* o : outcomes) {
    ReasonFold& f = by_words[folded_words(o->error ? &*o->error : nullptr)];
    std::string said = reason(*o);
    if (f.outcomes.empty()) {
      f.example = std::move(said);
    } else {
      f.alike = f.alike || said != f.example;
    }
    f.outcomes.push_back(o);
  }
  std::vector<ReasonFold> folds;
  folds.reserve(by_words.size());
  for (auto& [words, f] : by_words) folds.push_back(std::move(f));
  return folds;
}

std::string interval_text(const AutotuneOutcome& outcome) {
  char text[48];
  // One sample bounds nothing: its "interval" would read -0.0% +0.0%, as if exact.
  if (outcome.samples == 1) return "one sample";
  if (outcome.has_interval() && outcome.median > 0) {  // the median's interval, around it
    std::snprintf(text, sizeof text, "-%.1f%% +%.1f%%", 100 * (1 - outcome.low / outcome.median),
                  100 * (outcome.high / outcome.median - 1));
  } else {  // a result read from a cache written before intervals: the spread
    std::snprintf(text, sizeof text, "±%.1f%%",
                  outcome.median > 0 ? 100 * outcome.spread / outcome.median : 0.0);
  }
  return text;
}

std::string format_report(const TuningReport& report, ReportDetail detail) {
  // Names are cut to a column of at most 64: one long name must not pad every row (a 10 MB
  // name over 2,000 rows took minutes).
  constexpr std::size_t max_name = 64;
  std::size_t width = 9;
  for (const auto& outcome : report.outcomes) {
    width = std::max(width, std::min(outcome.name.size(), max_name));
  }
  const bool full = detail == ReportDetail::full;
  const AutotuneOutcome* winner = report.winner();
  std::string text = "tunekit: " + printable(report.op, 200) + " [" + printable(report.key, 400) +
                     "] on " + printable(device_name(report.device), 200);
  if (report.tuning_seconds > 0) text += ", tuned in " + format_seconds(report.tuning_seconds);
  text += "\n";
  if (full) text += "    device: " + printable(report.device, 1000) + "\n";
  if (!report.neighbour_starts.empty()) {
    text += "    started from the winners of other keys:";
    for (const auto& name : report.neighbour_starts) text += " " + name;
    text += "\n";
  }
  if (report.tuning_seconds > 0) text += "    " + format_time_spent(report) + "\n";
  if (!report.stopped_early.empty()) {
    text += "    stopped early: " + printable(report.stopped_early, 400) + "\n";
  }
  if (report.confirmed > 1 && winner != nullptr) {
    // The winner's lead over the runner-up, beside the spread: a lead inside the spread is a tie.
    const AutotuneOutcome* runner_up = nullptr;
    for (const auto& outcome : report.outcomes) {
      if (&outcome != winner && outcome.ok()) {
        runner_up = &outcome;
        break;
      }
    }
    text += "    confirmed: the best " + std::to_string(report.confirmed) + " re-measured in " +
            std::to_string(report.confirm_rounds) + " interleaved rounds";
    if (runner_up != nullptr && winner->median > 0) {
      char lead[200];
      std::snprintf(
          lead, sizeof lead, "; the winner leads the runner-up by %.1f%% (spread %.1f%%)%s",
          100 * (runner_up->median / winner->median - 1), 100 * winner->spread / winner->median,
          winner->tied ? ": tied within the intervals, the lower median wins" : "");
      text += lead;
    }
    text += "\n";
  }
  // The table cuts names to its column, but the winner's whole name is what a caller pins (a
  // named candidate: matmul_with and the like): where it is cut, it gets a line of its own.
  constexpr std::size_t max_winner_name = 160;
  if (winner != nullptr && winner->name.size() > max_name) {
    text += "    winner: " + printable(winner->name, max_winner_name) + "\n";
  }
  // In a summary, candidates the device rules out (out of resources: a feature it lacks, a
  // limit a configuration passes) are folded into one line per reason below the table, as the
  // candidates never measured are: they say what the device is, not that something broke.
  const auto ruled_out = [&](const AutotuneOutcome& o) {
    return !full && &o != winner && ruled_out_by_device(o);
  };
  // Failures shared by several candidates are numbered and written once, below the table.
  auto groups = failure_groups(report.outcomes);
  for (auto& group : groups) std::erase_if(group, [&](const auto* o) { return ruled_out(*o); });
  std::erase_if(groups, [](const auto& group) { return group.empty(); });
  std::map<const AutotuneOutcome*, std::size_t> shared;  // outcome -> its failure's number
  std::size_t numbered = 0;
  for (const auto& group : groups) {
    if (group.size() < 2) continue;
    ++numbered;
    for (const AutotuneOutcome* member : group) shared.emplace(member, numbered);
  }
  char line[512];
  // The set's derived metrics (metric.hpp), a column each after the median.
  const auto metric_cells = [&](const AutotuneOutcome* outcome) {
    std::string cells;
    for (std::size_t m = 0; m < report.metric_names.size() && m < max_metrics; ++m) {
      const bool has = outcome != nullptr && m < outcome->metrics.size();
      const std::string cell = outcome == nullptr ? printable(report.metric_names[m], 12)
                               : has              ? format_metric(outcome->metrics[m])
                                                  : std::string("-");
      char column[32];
      std::snprintf(column, sizeof column, " %10s", cell.c_str());
      cells += column;
    }
    return cells;
  };
  std::snprintf(line, sizeof line, "    %-*s %12s%s %15s %8s  %s\n", static_cast<int>(width),
                "candidate", "median", metric_cells(nullptr).c_str(), "95% interval", "samples",
                "status");
  text += line;
  // Candidates never measured, folded into one line per reason below the table. In a summary,
  // the working candidates past the best `shown_working`, and the failed ones past
  // `shown_failed`, are folded too: a searched space measures dozens (the whole table is the
  // full detail's, TUNEKIT_LOG=debug).
  constexpr std::size_t shown_working = 20, shown_failed = 10;
  std::vector<const AutotuneOutcome*> not_measured, not_for_this_device;  // folded below
  std::size_t working = 0, failed = 0, folded_working = 0, folded_failed = 0;
  double slowest_folded = 0;
  for (const auto& outcome : report.outcomes) {
    const char mark = &outcome == winner ? '*' : ' ';
    if (outcome.status == OutcomeStatus::skipped && &outcome != winner) {
      not_measured.push_back(&outcome);
      continue;
    }
    if (ruled_out(outcome)) {
      not_for_this_device.push_back(&outcome);
      continue;
    }
    if (!full && &outcome != winner &&
        (outcome.ok() ? ++working > shown_working : ++failed > shown_failed)) {
      if (outcome.ok()) {
        ++folded_working;
        slowest_folded = std::max(slowest_folded, outcome.median);
      } else {
        ++folded_failed;
      }
      continue;
    }
    if (outcome.ok()) {
      const std::string spread = interval_text(outcome);
      std::string status = &outcome == winner ? "winner" : std::string(to_string(outcome.status));
      if (outcome.tied) status += ", tied";
      if (winner != nullptr && &outcome != winner && winner->median > 0) {
        char ratio[32];
        std::snprintf(ratio, sizeof ratio, " (%.2fx)", outcome.median / winner->median);
        status += ratio;
      }
      std::snprintf(line, sizeof line, "  %c %-*s %12s%s %15s %8zu  %s\n", mark,
                    static_cast<int>(width), printable(outcome.name, max_name).c_str(),
                    format_seconds(outcome.median).c_str(), metric_cells(&outcome).c_str(),
                    spread.c_str(), outcome.samples, status.c_str());
    } else {
      const auto number = shared.find(&outcome);
      const std::string reason = number != shared.end() ? "error #" + std::to_string(number->second)
                                 : outcome.error ? std::string(to_string(outcome.error->kind())) +
                                                       ": " + outcome.error->summary()
                                                 : std::string(to_string(outcome.status));
      const char* label = outcome.status == OutcomeStatus::failed ? "FAILED" : "skipped";
      std::snprintf(line, sizeof line, "  %c %-*s %12s%s %15s %8s  %s (%s)\n", mark,
                    static_cast<int>(width), printable(outcome.name, max_name).c_str(), "-",
                    metric_cells(&outcome).c_str(), "", "", label, printable(reason, 300).c_str());
    }
    text += line;
  }
  if (folded_working > 0) {
    char more[160];
    std::snprintf(more, sizeof more, "    %zu more measured, up to %.2fx the winner's time\n",
                  folded_working,
                  winner != nullptr && winner->median > 0 ? slowest_folded / winner->median : 0.0);
    text += more;
  }
  if (folded_failed > 0) {
    text += "    " + std::to_string(folded_failed) + " more failed (their errors below)\n";
  }
  // The example names each fold: the reason's summary (numbers kept).
  const auto summary = [](const AutotuneOutcome& o) {
    return o.error ? o.error->summary() : std::string("not measured");
  };
  const auto folded_lines = [&](const std::vector<const AutotuneOutcome*>& outcomes,
                                const char* what) {
    for (const ReasonFold& f : fold_reasons(outcomes, summary)) {
      const std::size_t count = f.outcomes.size();
      text += "    " + std::to_string(count) + (count == 1 ? " candidate" : " candidates") + what +
              printable(f.example, 300) + std::string(f.suffix()) + "\n";
    }
  };
  folded_lines(not_measured, " not measured: ");
  folded_lines(not_for_this_device, " not for this device (out of resources): ");
  constexpr std::size_t names = 3;  // of the candidates that share a failure
  numbered = 0;
  for (const auto& group : groups) {
    const AutotuneError& error = *group.front()->error;
    const bool whole = full && error.message() != error.summary();
    if (group.size() < 2 && !whole) continue;
    text += "    ";
    if (group.size() >= 2) {
      text += "error #" + std::to_string(++numbered) + ", " + std::to_string(group.size()) +
              " candidates (";
      for (std::size_t i = 0; i < group.size() && i < names; ++i) {
        text += (i ? ", " : "") + printable(group[i]->name, 40);
      }
      if (group.size() > names) text += " and " + std::to_string(group.size() - names) + " more";
      text += "): ";
    } else {
      text += printable(group.front()->name, max_name) + ": ";
    }
    text += std::string(to_string(error.kind())) + "\n";
    text +=
        indented(printable(whole ? error.message() : error.summary(), 1 << 20, true), "        ");
  }
  return text;
}

}  // namespace tunekit
