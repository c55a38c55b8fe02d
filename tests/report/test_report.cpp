// The HTML report and the text summary: what they show, what they escape, and that they are
// reproducible. Rendering in a real browser is tested by tests/cli/browser_test.sh.
#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <regex>
#include <string>
#include <tunekit/report.hpp>

#include "../support.hpp"
#include "test_report_samples.hpp"

using namespace tunekit;

using test::occurrences;

TEST_CASE("a space candidate's name gives back its parameters", "[report]") {
  const auto parsed = parse_candidate_name("blocked[MWG=64,NWG=32,VW=-4]");
  REQUIRE(parsed);
  CHECK(parsed->space == "blocked");
  REQUIRE(parsed->values.size() == 3);
  CHECK(parsed->values[0] == std::pair<std::string, std::int64_t>("MWG", 64));
  CHECK(parsed->values[2] == std::pair<std::string, std::int64_t>("VW", -4));
  for (const char* plain : {"naive", "std::sort", "a[b]", "x[A=1,]", "x[=1]", "[A=1]", "x[A=1.5]",
                            "x[A=1", "x[]", "x[A=1,A=2]"}) {
    INFO(plain);
    CHECK_FALSE(parse_candidate_name(plain));
  }
}

TEST_CASE("the HTML report draws one bar per working candidate and highlights the winner",
          "[report]") {
  const auto report = test::sample_reduce_report();
  const std::string html = html_report({report});
  CHECK(html.rfind("<!DOCTYPE html>", 0) == 0);
  CHECK(occurrences(html, "<svg class=\"chart bars\"") == 1);
  CHECK(occurrences(html, "class=\"bar ") == 3);  // tree, vector4, serial (dropped)
  CHECK(occurrences(html, "class=\"bar win\"") == 1);
  CHECK(occurrences(html, "class=\"bar dropped\"") == 1);
  CHECK(occurrences(html, "class=\"whisker\"") == 3);
  CHECK_THAT(html, Catch::Contains("★ vector4"));
  CHECK_THAT(html, Catch::Contains("2.21×</b> faster than the default <code>tree</code>"));
  CHECK_THAT(html, Catch::Contains("1 skipped by priority"));
  CHECK_FALSE(occurrences(html, "class=\"chart scatter\""));  // no space: no scatter
}

TEST_CASE("the HTML report shows each candidate's 95% interval and a tie", "[report][pick]") {
  auto report = test::sample_reduce_report();
  report.outcomes[0].low = 0.98 * report.outcomes[0].median;
  report.outcomes[0].high = 1.005 * report.outcomes[0].median;
  report.outcomes[0].tied = true;
  const std::string html = html_report({report});
  CHECK_THAT(html, Catch::Contains("<th>95% interval</th>"));
  CHECK_THAT(html, Catch::Contains("-2.0% +0.5%"));
  CHECK_THAT(html, Catch::Contains(", tied</td>"));
  CHECK(interval_text(report.outcomes[0]) == "-2.0% +0.5%");
  report.outcomes[0].samples = 1;  // one sample: no interval, not "-0.0% +0.0%"
  report.outcomes[0].low = report.outcomes[0].high = report.outcomes[0].median;
  CHECK(interval_text(report.outcomes[0]) == "one sample");
  CHECK_THAT(html_report({report}), Catch::Contains("one sample"));
}

TEST_CASE("the HTML report lists failed candidates with their reasons", "[report]") {
  const std::string html = html_report({test::sample_matmul_report()});
  // Two blocked configurations share one error (65536 bytes): one row.
  CHECK_THAT(html, Catch::Contains("4 failed candidates, 3 distinct errors</h4>"));
  CHECK_THAT(html,
             Catch::Contains("<code>tiled[TS=32]</code></td><td class=\"kind\">build failed</td>"));
  // A multi-line build log is folded, whole, under its first line.
  CHECK_THAT(html, Catch::Contains("matmul_tiled.cl: build failed …<details>"));
  CHECK_THAT(html, Catch::Contains("use of undeclared identifier &#39;TSK&#39;"));
  CHECK_THAT(html, Catch::Contains("bytes local memory, device has 65536"));
  CHECK_THAT(html, Catch::Contains("not reached by the search"));
}

TEST_CASE("the HTML report shows a failure that several candidates share once, naming them",
          "[report]") {
  TuningReport report{"softmax",
                      "rows=64",
                      "OpenCL | Portable Computing Language | OpenCL 3.0 PoCL | cpu-haswell-X | "
                      "driver 6.0 | 2 CUs | 65536 B local",
                      0,
                      {}};
  report.outcomes.push_back(test::measured_outcome("plain", 0, 1e-3, 0));
  for (std::size_t i = 1; i <= 3; ++i) {
    report.outcomes.push_back(test::failed_outcome(
        "tiled[TM=" + std::to_string(i) + "]", i, ErrorKind::build,
        "error: softmax.cl:12:5: undeclared 'x'\nwith -DTM=" + std::to_string(i)));
  }
  const std::string html = html_report({report});
  CHECK_THAT(html, Catch::Contains("3 failed candidates, 1 distinct error</h4>"));
  CHECK_THAT(html, Catch::Contains("<code>tiled[TM=1]</code>, <code>tiled[TM=2]</code>, "
                                   "<code>tiled[TM=3]</code> (3 candidates)</td>"));
  CHECK(occurrences(html, "undeclared &#39;x&#39;") == 2);  // the row's first line, the whole one
  CHECK_THAT(html, Catch::Contains("\">on cpu-haswell-X</p>"));  // the name; the identity on hover
}

TEST_CASE("the HTML report says what each op computes, and how to tune when it has no results",
          "[report]") {
  HtmlReportOptions options;
  options.op_summaries = {{"matmul", "C = A * B <of matrices>"}};
  options.how_to_tune = "tunekit tune matmul";
  const std::string html = html_report({test::sample_matmul_report()}, options);
  CHECK(occurrences(html, "<p class=\"what\">C = A * B &lt;of matrices&gt;</p>") == 1);
  CHECK_FALSE(occurrences(html_report({test::sample_matmul_report()}), "class=\"what\""));
  CHECK_THAT(html_report({}, options), Catch::Contains("e.g. <code>tunekit tune matmul</code>"));
  CHECK_THAT(html_report({}), Catch::Contains("Tune something first, then run"));
}

TEST_CASE("a parameter space gets one scatter of time per varying parameter", "[report]") {
  const auto report = test::sample_matmul_report();
  const std::string html = html_report({report});
  CHECK(occurrences(html, "<svg class=\"chart scatter\"") == 3);  // MWG, NWG, VW
  CHECK_THAT(html, Catch::Contains("Parameter space <code>blocked</code>"));
  CHECK_THAT(html, Catch::Contains("<title>blocked: time against MWG</title>"));
  CHECK(occurrences(html, "class=\"pt winpt\"") == 3);  // the winner in each panel
  std::size_t measured = 0, failed = 0;
  for (const auto& o : report.outcomes) {
    if (o.name.rfind("blocked[", 0) != 0) continue;
    measured += o.ok();
    failed += o.status == OutcomeStatus::failed;
  }
  CHECK(occurrences(html, "<circle class=\"pt") == 3 * measured);
  CHECK(occurrences(html, "class=\"pt failpt\"") == 3 * failed);
  // tiled[TS=..] has only two working configurations: no scatter for it.
  CHECK_THAT(html, !Catch::Contains("Parameter space <code>tiled</code>"));
}

TEST_CASE("times spanning more than 20x are drawn on a log scale", "[report]") {
  CHECK_THAT(html_report({test::sample_matmul_report()}), Catch::Contains("(log scale)"));
  auto narrow = test::sample_reduce_report();
  std::erase_if(narrow.outcomes, [](const AutotuneOutcome& o) { return o.name == "serial"; });
  CHECK_THAT(html_report({narrow}), !Catch::Contains("(log scale)"));
}

TEST_CASE("everything a report shows from the data is HTML-escaped", "[report]") {
  const std::string html = html_report({test::sample_hostile_report()});
  CHECK(occurrences(html, "<script>") == 1);  // the report's own
  CHECK(occurrences(html, "</script>") == 1);
  CHECK_THAT(html, Catch::Contains("op&lt;script&gt;"));
  CHECK_THAT(html, Catch::Contains("key=&quot;1&quot; &amp; &#39;x&#39;"));
  CHECK_THAT(html, Catch::Contains("a&lt;b&gt;&amp;c"));
  CHECK_THAT(html, Catch::Contains("threw: &lt;/table&gt;&lt;b&gt;"));
  CHECK_THAT(html, !Catch::Contains("</svg><script>"));
}

TEST_CASE("the HTML report is self-contained and reproducible", "[report]") {
  const auto reports = test::sample_reports();
  HtmlReportOptions options;
  options.title = "nightly <tuning>";
  const std::string html = html_report(reports, options);
  CHECK(html == html_report(reports, options));
  CHECK_THAT(html, Catch::Contains("<title>nightly &lt;tuning&gt;</title>"));
  const std::regex external(R"((src|href)\s*=\s*"(https?:)?//)", std::regex::icase);
  CHECK_FALSE(std::regex_search(html, external));
  CHECK_THAT(html, !Catch::Contains("@import") && !Catch::Contains("url("));
  CHECK(occurrences(html, "<section class=\"tuning\"") == reports.size());
  CHECK_THAT(html, Catch::Contains("id=\"status\" data-state=\"pending\""));
  CHECK_THAT(html, Catch::Contains("3 tunings of 3 ops on 2 devices"));
}

TEST_CASE("an empty report says how to get results", "[report]") {
  const std::string html = html_report({});
  CHECK_THAT(html, Catch::Contains("No tuning results yet"));
  CHECK_THAT(html, Catch::Contains("tunekit report --html"));  // the command: given by the tool
  CHECK(text_summary({}) == "no tuning results\n");
}

TEST_CASE("a tuning in which nothing worked is reported without a chart", "[report]") {
  TuningReport r{"op", "n=1", "dev", 0, {}};
  r.outcomes.push_back(test::failed_outcome("only", 0, ErrorKind::runtime, "threw: nope"));
  const std::string html = html_report({r});
  CHECK_THAT(html, Catch::Contains("no candidate worked"));
  CHECK(occurrences(html, "<svg") == 0);
  CHECK_THAT(text_summary({r}), Catch::Contains("(none worked)"));
}

TEST_CASE("more than 40 working candidates: the fastest 40 are drawn, all are tabled", "[report]") {
  TuningReport r{"wide", "n=1", "dev", 0, {}};
  for (std::size_t i = 0; i < 55; ++i) {
    r.outcomes.push_back(test::measured_outcome("c" + std::to_string(i), i,
                                                1e-3 * (1 + static_cast<double>(i) / 10), 1e-6));
  }
  const std::string html = html_report({r});
  CHECK(occurrences(html, "class=\"bar ") == 40);
  CHECK_THAT(html, Catch::Contains("The 40 fastest of 55 working candidates are drawn"));
  CHECK_THAT(html, Catch::Contains("<code>c54</code>"));

  // The default (candidate 0), which speed-ups refer to, is drawn even when it is slow.
  r.outcomes.front().median = 1;
  rank(r.outcomes);
  const std::string slow_default = html_report({r});
  CHECK(occurrences(slow_default, "class=\"bar ") == 40);
  CHECK_THAT(slow_default,
             Catch::Contains("The 39 fastest of 55 working candidates and the default are drawn"));
  CHECK_THAT(slow_default, Catch::Contains(">c0</text>"));
}

TEST_CASE("the text summary gives winner, time and speed-up per tuning", "[report]") {
  const std::string text = text_summary(test::sample_reports());
  CHECK_THAT(text, Catch::StartsWith("op"));
  CHECK_THAT(text, Catch::Contains("reduce") && Catch::Contains("vector4") &&
                       Catch::Contains("95.000 us") && Catch::Contains("2.21x"));
  CHECK(occurrences(text, "\n") == 4);
}

TEST_CASE("the text summary counts the candidates a tuning left unmeasured", "[report]") {
  auto report = test::sample_reduce_report();
  const auto skipped =
      std::count_if(report.outcomes.begin(), report.outcomes.end(),
                    [](const auto& o) { return o.status == OutcomeStatus::skipped; });
  CHECK_THAT(text_summary({report}),
             Catch::Contains(", " + std::to_string(skipped) + " not measured"));
  for (int i = 0; i < 3; ++i) {
    report.outcomes.push_back(test::failed_outcome(
        "s[B=" + std::to_string(i) + "]", report.outcomes.size(), ErrorKind::skipped,
        "not reached by the search", OutcomeStatus::skipped));
  }
  CHECK_THAT(text_summary({report}),
             Catch::Contains(", " + std::to_string(skipped + 3) + " not measured"));
}

// Candidates a device rules out (out of resources) are counted apart from the ones that broke.
TEST_CASE("the summaries count what the device rules out apart from failures", "[report]") {
  const auto matmul = test::sample_matmul_report();
  std::size_t broke = 0, ruled_out = 0;
  for (const auto& o : matmul.outcomes) {
    if (o.status != OutcomeStatus::failed) continue;
    ++(ruled_out_by_device(o) ? ruled_out : broke);
  }
  REQUIRE(ruled_out > 0);
  REQUIRE(broke > 0);
  const std::string counts = ", " + std::to_string(broke) + " failed, " +
                             std::to_string(ruled_out) + " not for this device";
  CHECK_THAT(text_summary({matmul}), Catch::Contains(counts));
  CHECK_THAT(html_report({matmul}),
             Catch::Contains(std::to_string(ruled_out) + " not for this device"));
}

TEST_CASE("cache entries become ranked reports", "[report]") {
  auto entries = test::sample_entries();
  std::reverse(entries[1].result.outcomes.begin(), entries[1].result.outcomes.end());
  const auto reports = reports_from_cache(entries);
  REQUIRE(reports.size() == entries.size());
  CHECK(reports[1].op == "reduce");
  CHECK(reports[1].outcomes.front().name == "vector4");
  CHECK(reports[1].tuning_seconds > 0);  // the candidates' measuring costs
}

TEST_CASE("keys are listed in numeric order, not as text", "[report]") {
  CHECK(natural_less("rows=64", "rows=128"));
  CHECK(!natural_less("rows=128", "rows=64"));
  CHECK(natural_less("rows=64 cols=8", "rows=64 cols=16"));
  CHECK(natural_less("n=007", "n=8"));
  CHECK(natural_less("a", "ab"));
  CHECK(natural_less("n=99999999999999999999999", "n=100000000000000000000000"));
  std::vector<TuningReport> reports;
  for (const char* key : {"rows=256", "rows=64", "rows=128"}) {
    TuningReport r{"softmax", key, "device", 0, {}};
    AutotuneOutcome o;
    o.name = "a";
    o.status = OutcomeStatus::measured;
    o.median = 1e-3;
    o.samples = 3;
    r.outcomes.push_back(o);
    reports.push_back(r);
  }
  const std::string text = text_summary(reports);
  CHECK(text.find("rows=64") < text.find("rows=128"));
  CHECK(text.find("rows=128") < text.find("rows=256"));
  const std::string html = html_report(reports, {});
  CHECK(html.find("rows=64") < html.find("rows=128"));
  CHECK(html.find("rows=128") < html.find("rows=256"));
}

TEST_CASE("a device's limit is said once for every size it rules out", "[report]") {
  auto report = test::sample_reduce_report();
  for (const char* bytes : {"53248", "65536", "81920"}) {
    report.outcomes.push_back(test::failed_outcome(
        std::string("s[B=") + bytes + "]", report.outcomes.size(), ErrorKind::out_of_resources,
        std::string(bytes) + " bytes local memory, device has 49152", OutcomeStatus::skipped));
  }
  const std::string html = html_report({report});
  CHECK_THAT(html, Catch::Contains("3 53248 bytes local memory, device has 49152 (and the like)"));
  CHECK_FALSE(occurrences(html, "65536 bytes local memory"));
  CHECK_THAT(format_report(report),
             Catch::Contains("3 candidates not measured: 53248 bytes local memory, device has "
                             "49152 (and the like)"));
}

TEST_CASE("a winner whose name the table cuts is named whole on a line of its own", "[report]") {
  auto report = test::sample_reduce_report();
  const AutotuneOutcome* winner = report.winner();
  REQUIRE(winner != nullptr);
  const std::size_t at = static_cast<std::size_t>(winner - report.outcomes.data());
  CHECK_FALSE(Catch::Contains("    winner: ").match(format_report(report)));  // a short name
  const std::string name =
      "staged[MWG=256,NWG=128,KWG=8,MDIMC=16,NDIMC=16,VWM=4,VWN=2,STAGES=3,KSLICE=1,A_DIRECT=1,"
      "SPREAD_COPIES=1]";
  report.outcomes[at].name = name;
  const std::string text = format_report(report);
  CHECK_THAT(text, Catch::Contains("    winner: " + name + "\n"));
  CHECK_FALSE(Catch::Contains(name + " ").match(text));  // the table's row is cut
  // A hostile name is still cut, on that line too.
  report.outcomes[at].name = std::string(1 << 16, 'n');
  CHECK_THAT(format_report(report),
             Catch::Contains("    winner: " + std::string(160, 'n') + "...\n"));
}
