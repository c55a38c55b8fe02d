// A tuning's report and the tuner's log: the table, where the time went, how devices and
// failures are named (outcome.hpp format_report).
#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <memory>
#include <sstream>
#include <thread>
#include <tunekit/tunekit.hpp>
#include <tuple>
#include <vector>

#include "../report/test_report_samples.hpp"
#include "../support.hpp"
#include "tuner_cases.hpp"

using namespace tunekit;
using namespace tunekit::test::tuner_cases;
using test::SizeKey;
using test::VirtualClient;

TEST_CASE("the report table marks the winner and shows ratios and failures", "[tuner][report]") {
  LocalTuner<SizeKey> tuner("table", test::test_settings());
  VirtualClient client;
  const auto& set = tuner.init([] {
    return TunableSet{key_of_size, bench_inputs}
        .with(Tunable{"winner", costs(1e-3, 0)})
        .with(Tunable{"runner-up", costs(1.25e-3, 1)})
        .with(Tunable{"broken",
                      [](VirtualClient&, int&) -> int { throw std::runtime_error("bad"); }});
  });
  run(tuner, client, set, 2);
  const auto text = format_report(*tuner.tuner(client.id()).report(SizeKey{2}));
  CHECK_THAT(text, Catch::Contains("table [n=2] on virtual device"));
  CHECK_THAT(text, Catch::Contains("* winner") && Catch::Contains("1.000 ms") &&
                       Catch::Contains("(1.25x)"));
  CHECK_THAT(text, Catch::Contains("FAILED (runtime error: threw: bad)"));
}

TEST_CASE("a tuning's report says where its wall time went", "[tuner][report]") {
  LocalTuner<SizeKey> tuner("timed", test::test_settings());
  VirtualClient client;
  const auto& set = tuner.init([] {
    return TunableSet{key_of_size, bench_inputs}
        .with(Tunable{"fast", costs(1e-3, 0)})
        .with(Tunable{"slow", costs(2e-3, 1)});
  });
  run(tuner, client, set, 4);
  const auto report = tuner.tuner(client.id()).report(SizeKey{4});
  REQUIRE(report);
  const TuningTime& t = report->time_spent;
  CHECK(t.measuring > 0);     // two candidates were measured
  CHECK(t.first_calls == 0);  // no validator: first calls are the warm-ups, inside measuring
  CHECK(t.validating == 0);
  CHECK(t.waiting_for_builds == 0);  // nothing to prepare ahead
  CHECK(t.programs_prepared == 0);
  CHECK(t.waiting_for_builds + t.first_calls + t.validating + t.measuring + t.confirming <=
        report->tuning_seconds);
  CHECK_THAT(format_report(*report), Catch::Contains("    time: 0.00 s waiting for builds"));

  TuningReport fixed{"op", "n=1", "virtual device", 10.0, {}};
  fixed.time_spent = {1.0, 2.0, 3.0, 0.5, 0.25, 4};
  CHECK(format_time_spent(fixed) ==
        "time: 1.00 s waiting for builds (4 prepared ahead), 2.00 s first calls, 3.00 s "
        "validating, 0.50 s measuring, 0.25 s confirming, 3.25 s other");
  fixed.tuning_seconds = 0;  // read back from a cache: no tuning took place here
  CHECK_THAT(format_report(fixed), !Catch::Contains("time:"));
}

TEST_CASE(
    "a validation step's whole time is reported, as validating less the candidate's first call, "
    "the clear of shared outputs included",
    "[tuner][report]") {
  using Output = std::shared_ptr<std::vector<int>>;
  using Inputs = std::tuple<Output>;
  constexpr auto clear_pause = std::chrono::milliseconds(20);
  LocalTuner<SizeKey> tuner("timed validation", test::test_settings());
  VirtualClient client;
  const auto& set = tuner.init([&] {
    const auto writes = [](double seconds) {
      return [=](VirtualClient& c, Output& y) {
        c.spend(seconds);
        std::fill(y->begin(), y->end(), 7);
      };
    };
    return TunableSet{[](const Output& y) { return SizeKey{y->size()}; },
                      [](const SizeKey& key, const Output&) {
                        return Inputs{std::make_shared<std::vector<int>>(key.n.value(), 0)};
                      }}
        .with(Tunable{"fast", writes(1e-3)})
        .with(Tunable{"slow", writes(2e-3)})
        .validate_with(
            HostReference{[](const Output& y) {
                            return Inputs{std::make_shared<std::vector<int>>(y->size(), 7)};
                          },
                          [](const Inputs& expected, const Inputs& got) {
                            return *std::get<0>(expected) == *std::get<0>(got);
                          },
                          [clear_pause](Output& y) {  // slow, as on a device whose API calls wait
                            std::this_thread::sleep_for(clear_pause);
                            std::fill(y->begin(), y->end(), -1);
                          }})
        .share_inputs();
  });
  auto y = std::make_shared<std::vector<int>>(8, 0);
  tuner.execute(client.id(), client, set, y);
  CHECK(*y == std::vector<int>(8, 7));
  const auto report = tuner.tuner(client.id()).report(SizeKey{8});
  REQUIRE(report);
  const TuningTime& t = report->time_spent;
  // Both candidates were validated, each after a clear: at least two pauses, as validating.
  CHECK(t.validating >= 2 * std::chrono::duration<double>(clear_pause).count());
  CHECK(t.waiting_for_builds + t.first_calls + t.validating + t.measuring + t.confirming <=
        report->tuning_seconds);
}

TEST_CASE("a device is named by its name, its whole identity only at debug detail",
          "[tuner][report]") {
  const std::string gpu =
      "OpenCL | NVIDIA CUDA | OpenCL 3.0 CUDA 13.0.98 | NVIDIA H100 80GB HBM3 | driver 580.159.04 "
      "| 132 CUs | 49152 B local";
  CHECK(device_name(gpu) == "NVIDIA H100 80GB HBM3");
  CHECK(device_name("host | AMD EPYC 7B13 | 2 threads") == "AMD EPYC 7B13");
  CHECK(device_name("virtual device") == "virtual device");  // another layout: whole
  CHECK(device_name("OpenCL |  |  |  |  |  | ") == "OpenCL |  |  |  |  |  | ");  // no name
  CHECK(device_name("") == "");
  TuningReport report{"softmax", "rows=64", gpu, 0, {}};
  report.outcomes.push_back(test::measured_outcome("only", 0, 1e-3, 0));
  const std::string summary = format_report(report);
  CHECK_THAT(summary, Catch::StartsWith("tunekit: softmax [rows=64] on NVIDIA H100 80GB HBM3\n"));
  CHECK_THAT(summary, !Catch::Contains("driver 580"));
  CHECK_THAT(format_report(report, ReportDetail::full), Catch::Contains("    device: " + gpu));
}

TEST_CASE("the tuner logs the device's name at info, its identity and whole errors at debug",
          "[tuner][report]") {
  const std::string identity =
      "OpenCL | Plat | OpenCL 3.0 | gpu-name | driver 1 | 8 CUs | 65536 B local";
  const auto table_at = [&](LogLevel level) {
    Settings settings = test::test_settings();
    settings.log = level;
    LocalTuner<SizeKey> tuner("logged", settings);
    VirtualClient client(identity);
    const auto& set = tuner.init([] {
      return TunableSet{key_of_size, bench_inputs}
          .with(Tunable{"works", costs(1e-3, 0)})
          .with(Tunable{"broken", [](VirtualClient&, int&) -> int {
                          throw std::runtime_error("first line\nsecond line");
                        }});
    });
    std::ostringstream captured;
    struct Restore {  // std::clog back to its own buffer, even if run() throws
      std::streambuf* old;
      ~Restore() { std::clog.rdbuf(old); }
    } restore{std::clog.rdbuf(captured.rdbuf())};
    run(tuner, client, set, 1);
    return captured.str();
  };
  const std::string info = table_at(LogLevel::info);
  INFO(info);
  CHECK_THAT(info, Catch::Contains("logged [n=1] on gpu-name"));
  CHECK_THAT(info, !Catch::Contains(identity) && !Catch::Contains("second line"));
  const std::string debug = table_at(LogLevel::debug);
  INFO(debug);
  CHECK_THAT(debug, Catch::Contains("    device: " + identity));
  CHECK_THAT(debug, Catch::Contains("        threw: first line\n        second line\n"));
}

TEST_CASE("a failure that several candidates share is written once, naming them",
          "[tuner][report]") {
  TuningReport report{"softmax", "rows=64", "virtual device", 0, {}};
  report.outcomes.push_back(test::measured_outcome("plain", 0, 1e-3, 0));
  for (std::size_t i = 1; i <= 8; ++i) {
    // The same compiler error, with each configuration's own options in the rest of the message.
    report.outcomes.push_back(test::failed_outcome(
        "tiled[TM=" + std::to_string(i) + "]", i, ErrorKind::build,
        "error: /home/u/softmax.cl:12:5: use of undeclared identifier 'x'\nbuilding softmax.cl "
        "with options '-DTM=" +
            std::to_string(i) + "' failed; build log:\nerror: /home/u/softmax.cl:12:5: ..."));
  }
  report.outcomes.push_back(test::failed_outcome("odd", 9, ErrorKind::runtime, "threw: boom"));
  const std::string text = format_report(report);
  INFO(text);
  // The compiler error once, with the count and the first names; each row points at it.
  CHECK(test::occurrences(text, "use of undeclared identifier") == 1);
  CHECK_THAT(text, Catch::Contains("error #1, 8 candidates (tiled[TM=1], tiled[TM=2], tiled[TM=3] "
                                   "and 5 more): build failed\n"
                                   "        error: /home/u/softmax.cl:12:5: use of undeclared "
                                   "identifier 'x'\n"));
  CHECK(test::occurrences(text, "FAILED (error #1)") == 8);
  CHECK_THAT(text, Catch::Contains("FAILED (runtime error: threw: boom)"));  // alone: inline
  CHECK_THAT(text, !Catch::Contains("-DTM="));  // only the first line at summary detail
  // At full detail, each distinct failure's whole message (the build log), still once.
  const std::string full = format_report(report, ReportDetail::full);
  CHECK(test::occurrences(full, "-DTM=") == 1);
  CHECK_THAT(full, Catch::Contains("        building softmax.cl with options '-DTM=1' failed"));

  const AutotuneError all(
      ErrorKind::no_valid_candidate, "no candidate works", {},
      {*report.outcomes[1].error, *report.outcomes[9].error, *report.outcomes[2].error});
  const std::string what = all.what();
  INFO(what);
  CHECK(test::occurrences(what, "use of undeclared identifier 'x'\nbuilding") == 1);
  CHECK_THAT(what, Catch::Contains("\n  - 'tiled[TM=1]', 'tiled[TM=2]' (2 candidates): build "
                                   "failed: error: /home/u/softmax.cl:12:5:"));
  CHECK_THAT(what, Catch::Contains("\n  - 'odd': runtime error: threw: boom"));
  CHECK(all.causes().size() == 3);  // every candidate's own error, whole
}
