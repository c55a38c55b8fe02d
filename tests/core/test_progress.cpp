// The progress line (progress.hpp): its width, TUNEKIT_PROGRESS, and any program's tunings
// drawing it without code of their own.
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <tunekit/tunekit.hpp>

#include "../support.hpp"
#include "tuner_cases.hpp"

namespace tunekit::test {

namespace {

struct ScopedEnv {
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) {
      ::setenv(name, value, 1);
    } else {
      ::unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      ::setenv(name_, old_->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }
  const char* name_;
  std::optional<std::string> old_;
};

// What the library writes to stderr during the scope (std::cerr and std::clog).
struct CapturedStderr {
  std::ostringstream text;
  std::streambuf* cerr_was = std::cerr.rdbuf(text.rdbuf());
  std::streambuf* clog_was = std::clog.rdbuf(text.rdbuf());
  ~CapturedStderr() {
    std::cerr.rdbuf(cerr_was);
    std::clog.rdbuf(clog_was);
  }
};

// A tuning that lasts about a second of wall time: four candidates that sleep.
std::string tune_slowly(const std::string& op, ProgressMode mode) {
  Settings settings = test_settings();
  settings.benchmark->confirm_contenders = 0;
  settings.progress = mode;
  LocalTuner<SizeKey> tuner(op, settings);
  HostClient host;
  auto sleeper = [](int ms) {
    return [ms](int& n) {
      std::this_thread::sleep_for(std::chrono::milliseconds(ms));
      return n;
    };
  };
  const auto& set = tuner.init([&] {
    auto key_of = [](const int& n) { return SizeKey{static_cast<std::uint64_t>(n)}; };
    auto inputs = [](const SizeKey& key, const int&) {
      return std::tuple<int>(static_cast<int>(key.n.value()));
    };
    return TunableSet{key_of, inputs}
        .with(Tunable{"a", sleeper(40)})
        .with(Tunable{"b", sleeper(41)})
        .with(Tunable{"c", sleeper(42)})
        .with(Tunable{"d", sleeper(43)});
  });
  CapturedStderr captured;
  (void)tuner.execute(host.id(), host, set, 4);
  return captured.text.str();
}

// A transpose's tuning, `done` of 60 candidates after `elapsed` seconds, its best at 1.045 us.
TuningProgress transpose_progress(std::size_t done, double elapsed) {
  TuningProgress p;
  p.op = "transpose";
  p.key = "rows=512 cols=512 vector_width=4";
  p.done = done;
  p.total = 60;
  p.elapsed_seconds = elapsed;
  p.best = "blocked[BLK=8,LX=16,LY=1]";
  p.best_seconds = 1.045e-6;
  return p;
}

}  // namespace

TEST_CASE("the progress line fits the width it is given", "[progress]") {
  const std::string key(184, 'k');
  const std::string best = "blocked[MWG=64,NWG=64,KWG=32,MDIMC=16,NDIMC=16,VWM=4,VWN=4,SA=1]";
  TuningProgress p;
  p.op = "matmul";
  p.key = key;
  p.done = 3;
  p.total = 120;
  p.elapsed_seconds = 12.25;
  p.best = best;
  p.best_seconds = 0.00123;
  for (std::size_t width : {20u, 40u, 80u, 132u, 400u}) {
    const std::string line = format_progress_line(p, width);
    INFO(line);
    CHECK(line.size() <= width - 1);
    CHECK_THAT(line, Catch::StartsWith("tuning"));
  }
  CHECK_THAT(format_progress_line(p, 80), Catch::Contains("matmul [kkk") &&
                                              Catch::Contains("]: 3/120, 12.2 s, best blocked[") &&
                                              Catch::Contains("~"));
  CHECK_THAT(format_progress_line(p, 132), Catch::Contains("]: 3/120 candidates, 12.2 s"));
  CHECK(format_progress_line(p, 400) ==
        "tuning matmul [" + key + "]: 3/120 candidates, 12.2 s, best " + best + " 1.230 ms");
  p.key = "n=1024";
  p.best = {};
  CHECK(format_progress_line(p, 80) ==
        "tuning matmul [n=1024]: 3/120 candidates, 12.2 s, best none yet");
  p.finished = true;  // ended without a working candidate: no winner, not "none yet"
  CHECK_THAT(format_progress_line(p, 80), Catch::EndsWith("winner none"));
  p.finished = false;
  p.key = "a\x1b[2Jb";  // a key's text never drives the terminal
  CHECK(format_progress_line(p, 80).find('\x1b') == std::string::npos);
}

// At a terminal's 80 columns a long op, key and name are shortened before the counts and the
// times: the end of a transpose's tuning on PoCL read "winner blocked[B~" with its time cut off.
TEST_CASE("a shortened progress line keeps its counts and times", "[progress]") {
  TuningProgress p = transpose_progress(34, 1.6);
  p.finished = true;
  CHECK_THAT(
      format_progress_line(p, 100),
      Catch::Contains("34 candidates in 1.6 s, winner blocked[") && Catch::EndsWith(" 1.045 us"));
  // Narrower, the counts lose their words, and the key and the op go before the winner's name
  // (which had been cut to one character while "transpose" and the counts' words stayed).
  for (std::size_t width : {50u, 60u, 70u, 80u}) {
    const std::string line = format_progress_line(p, width);
    INFO(line);
    CHECK(line.size() <= width - 1);
    CHECK_THAT(line,
               Catch::Contains(": 34 in 1.6 s, winner blocked[") && Catch::EndsWith(" 1.045 us"));
  }
  CHECK(format_progress_line(p, 40) == "tuned: 34 in 1.6 s, winner bl~ 1.045 us");
  CHECK(format_progress_line(p, 200) ==
        "tuned transpose [rows=512 cols=512 vector_width=4]: done, "
        "34 candidates in 1.6 s, winner blocked[BLK=8,LX=16,LY=1] "
        "1.045 us");
}

// A line in a log file wraps nowhere: the whole key and name, whatever COLUMNS says.
TEST_CASE("the progress line off a terminal is whole", "[progress]") {
  ScopedEnv columns("COLUMNS", "40");
  TuningProgress p = transpose_progress(3, 0.75);
  std::string text;
  {
    CapturedStderr captured;
    ProgressLine line(/*terminal=*/false);
    line(p);
    p.finished = true;
    line(p);
    line.finish();
    text = captured.text.str();
  }
  INFO(text);
  CHECK_THAT(text,
             Catch::Contains("tuning transpose [rows=512 cols=512 vector_width=4]: 3/60 "
                             "candidates, 0.8 s, best blocked[BLK=8,LX=16,LY=1] 1.045 us\n") &&
                 Catch::Contains("tuned transpose [rows=512 cols=512 vector_width=4]: done, 3 "
                                 "candidates in 0.8 s, winner blocked[BLK=8,LX=16,LY=1] "
                                 "1.045 us\n"));
}

TEST_CASE("the progress line ends in the tuning's finished state, with its winner", "[progress]") {
  ScopedEnv columns("COLUMNS", "100");
  const std::string text = tune_slowly("progress_end", ProgressMode::on);
  INFO(text);
  // Not the last state drawn during the tuning ("3/4 candidates"): the end, on a line of its own.
  const auto last = text.find_last_not_of('\n');
  REQUIRE(last != std::string::npos);
  const std::string last_line = text.substr(text.rfind('\n', last) + 1, last + 1);
  CHECK_THAT(last_line, Catch::StartsWith("tuned progress_end [n=4]: done, 4 candidates in ") &&
                            Catch::Contains(", winner "));
  TuningProgress p;
  p.op = "matmul";
  p.key = "n=64";
  p.done = 12;
  p.total = 12;
  p.elapsed_seconds = 3.25;
  p.best = "tiled[TS=16]";
  p.best_seconds = 2e-3;
  p.finished = true;
  CHECK(format_progress_line(p, 80) ==
        "tuned matmul [n=64]: done, 12 candidates in 3.2 s, winner tiled[TS=16] 2.000 ms");
}

TEST_CASE("the terminal's width comes from COLUMNS, else the terminal, else 80", "[progress]") {
  std::size_t without = 0;
  {
    ScopedEnv columns("COLUMNS", nullptr);
    without = terminal_columns();
    if (!stderr_is_terminal()) CHECK(without == 80);
  }
  {
    ScopedEnv columns("COLUMNS", "57");
    CHECK(terminal_columns() == 57);
  }
  for (const char* bad : {"", "wide", "5", "99999", "80x", "-80"}) {
    ScopedEnv columns("COLUMNS", bad);
    CHECK(terminal_columns() == without);
  }
}

TEST_CASE("TUNEKIT_PROGRESS says whether programs draw the progress line", "[progress][settings]") {
  CHECK(Settings{}.progress == ProgressMode::automatic);
  {
    ScopedEnv progress("TUNEKIT_PROGRESS", "on");
    CHECK(Settings::from_environment().progress == ProgressMode::on);
  }
  {
    ScopedEnv progress("TUNEKIT_PROGRESS", "off");
    CHECK(Settings::from_environment().progress == ProgressMode::off);
  }
  {
    ScopedEnv progress("TUNEKIT_PROGRESS", "auto");
    Settings base;
    base.progress = ProgressMode::off;
    CHECK(Settings::from_environment(base).progress == ProgressMode::automatic);
  }
  ScopedEnv progress("TUNEKIT_PROGRESS", "sometimes");
  CHECK_THROWS_WITH(Settings::from_environment(),
                    Catch::Contains("TUNEKIT_PROGRESS='sometimes' is not valid") &&
                        Catch::Contains("auto, on, off (also 1/0, true/false)"));
}

TEST_CASE("a program's tuning draws the tool's progress line when progress is on", "[progress]") {
  ScopedEnv columns("COLUMNS", "60");
  const std::string on = tune_slowly("progress_on", ProgressMode::on);
  INFO(on);
  CHECK_THAT(on, Catch::Contains("tuning progress_on [n=4]: ") &&
                     Catch::Contains("/4 candidates, ") && Catch::Contains(", best "));
  for (std::size_t at = 0, end; at < on.size(); at = end + 1) {
    end = on.find('\n', at);
    if (end == std::string::npos) end = on.size();
    const std::string line = on.substr(at, end - at);
    const auto drawn = line.rfind("tuning ");
    // On a terminal the line fits COLUMNS; elsewhere (a ctest log) it is whole.
    if (drawn != std::string::npos && stderr_is_terminal()) CHECK(line.size() - drawn <= 59);
    if (drawn != std::string::npos && !stderr_is_terminal()) CHECK(line.find('~') == line.npos);
  }
  CHECK(tune_slowly("progress_off", ProgressMode::off).empty());
  if (!stderr_is_terminal()) {
    CHECK(tune_slowly("progress_auto", ProgressMode::automatic).empty());
  }
}

using namespace tuner_cases;

TEST_CASE("the progress hook sees every measured candidate with rising counts and the best so far",
          "[tuner][progress]") {
  Settings settings = test::test_settings();
  std::vector<TuningProgress> seen;
  std::vector<std::string> best_names;
  settings.on_progress = [&](const TuningProgress& p) {
    seen.push_back(p);
    best_names.emplace_back(p.best);  // the views are valid during the call only
  };
  LocalTuner<SizeKey> tuner("progress", settings);
  VirtualClient client;
  const auto& set = tuner.init([] {
    return TunableSet{key_of_size, bench_inputs}
        .with(Tunable{"slow", costs(3e-3, 0)})
        .with(Tunable{"fast", costs(1e-3, 1)})
        .with(Tunable{"broken", [](VirtualClient&, int&) -> int { throw std::runtime_error("x"); }})
        .with(Tunable{"middle", costs(2e-3, 2)});
  });
  run(tuner, client, set, 64);
  // One call per measured candidate, then one at the end (finished), with the winner.
  REQUIRE(seen.size() == 5);
  CHECK(seen.back().finished);
  CHECK(seen.back().done == 4);
  CHECK(best_names.back() == "fast");
  seen.pop_back();
  best_names.pop_back();
  for (std::size_t i = 0; i < seen.size(); ++i) {
    CHECK_FALSE(seen[i].finished);
    CHECK(seen[i].done == i + 1);
    CHECK(seen[i].total == 4);
    CHECK(seen[i].op == std::string_view("progress"));
    if (i > 0) CHECK(seen[i].elapsed_seconds >= seen[i - 1].elapsed_seconds);
  }
  CHECK(best_names.front() == "slow");
  CHECK(seen.front().best_seconds == Approx(3e-3));
  CHECK(best_names.back() == "fast");
  CHECK(seen.back().best_seconds == Approx(1e-3));

  run(tuner, client, set, 64);  // dispatch to the known winner: no tuning, no progress
  CHECK(seen.size() == 4);
}

TEST_CASE("the progress total of a searched space is its search budget", "[tuner][progress]") {
  Settings settings = test::test_settings();
  settings.search = SearchSettings{SearchStrategy::random, 0.0, 5, 1e9};
  std::vector<std::pair<std::size_t, std::size_t>> counts;  // done, total
  settings.on_progress = [&](const TuningProgress& p) {
    if (!p.finished) counts.emplace_back(p.done, p.total);
  };
  LocalTuner<SizeKey> tuner("progress space", settings);
  VirtualClient client;
  const auto& set = tuner.init([] {
    return TunableSet{key_of_size, bench_inputs}
        .with(Tunable{"baseline", costs(5e-3, -1)})
        .with(space("s").parameter("A", {1, 2, 3, 4}).parameter("B", {1, 2, 3, 4}),
              [](const Config& c) {
                return
                    [t = 1e-3 * static_cast<double>(c["A"] + c["B"])](VirtualClient& client, int&) {
                      client.spend(t);
                      return 0;
                    };
              });
  });
  run(tuner, client, set, 8);
  REQUIRE(counts.size() == 1 + 5);
  for (std::size_t i = 0; i < counts.size(); ++i) {
    CHECK(counts[i].first == i + 1);
    CHECK(counts[i].second == 6);
  }
}

}  // namespace tunekit::test
