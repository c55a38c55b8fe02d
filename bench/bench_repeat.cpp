// Does a tuning pick a winner that is not noise? Tunes matmul for one shape R times, each in a
// fresh process (nothing of an earlier run is built or remembered: no persistent cache, no
// program cache; set POCL_KERNEL_CACHE=0 / CUDA_CACHE_DISABLE=1 for the driver's own), then
// re-measures every distinct winner together with an independent reference, in long interleaved
// rounds (measure_interleaved), and counts the runs whose winner is within 5% (and 10%) of the
// best of all of them. The reference is the best few of one more tuning at --reference LEVEL
// (default extensive) with the start points off: a winner cannot look good only because every
// run started from the same hint; each run's best --run-top join as well, so that each run can
// be told to have measured a configuration near the best (the search reached it) or not. Prints
// each line as it is measured. docs/benchmarks.md,
// "A winner that is not noise".
//
// The judge is --judges fresh processes (7), each measuring the whole list interleaved: on a CPU
// device a configuration's time depends on the process it runs in (buffers, threads: up to 12%
// between processes, 1.3x in the process that had waited for the tunings), so a configuration is
// ranked by the median over the processes of its ratio to each process's best. Seven, not three:
// a process can see one configuration 5-9% slower than most do (the H100 at 256), and two such
// processes of three made a median that called a pick 1.082x that seven processes put at 1.000x.
// With 3 judges or more it also prints their ceiling: each judge's own best as the other judges
// rank it, what a perfect measurement in one process would pick (a tuning runs in one process
// too).
//
// Usage: bench_repeat [--size N | --shape MxNxK] [--runs R] [--rounds K] [--level LEVEL]
//                     [--device SELECTOR] [--start-points on|off] [--reference LEVEL|none]
//                     [--top T] [--run-top K]
//                     [--min-sample SECONDS]  (the tunings' shortest sample; the level's: 1 ms)
//                     [--sample SECONDS]  (the re-measurement's shortest sample, 10 ms)
//                     [--names FILE]  (no tunings: re-measure these configurations, one a line,
//                                      with the reference's best only if --reference is given)
//                     [--judges P]  (fresh processes that re-measure, 7)
//                     [--judge-time span|busy]  (a judge's sample: span, the default, from its
//                                      first command's start to its last one's end; busy, the
//                                      tuner's: the gaps between commands left out)
// Experiments, with --measure-once --names FILE: [--buffer-sets S] (each configuration on S sets
// of matrices, interleaved), [--passes P] (the whole measurement P times in one process),
// [--tune-first] (the shape tuned in the same process first, at --level and --start-points: does
// a process that has tuned rank the configurations as a fresh one does?).
// The tunings follow TUNEKIT_* of the environment too (e.g. TUNEKIT_BUILD_THREADS).
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <tunekit/cl.hpp>
#include <tunekit/local_tuner.hpp>
#include <tunekit/ops/matmul.hpp>
#include <vector>

#include "arguments.hpp"
#include "child_process.hpp"

namespace ops = tunekit::ops;

namespace {

struct Options {
  std::array<std::size_t, 3> shape{256, 256, 256};  // M, N, K: --size N or --shape MxNxK
  std::size_t runs = 10, rounds = 31, top = 5, run_top = 3, judges = 7;
  std::size_t buffer_sets = 1;  // --measure-once: sets of matrices, measured interleaved
  std::size_t passes = 1;       // --measure-once: the whole measurement, again and again
  double min_sample = 0;  // the tunings' BenchmarkSettings::min_sample_seconds (0: the level's)
  // The re-measurement's shortest sample: long enough that what a configuration pays after
  // another one ran (its code and data cold) is a small part of it.
  double sample = 0.01;
  std::string names_file;  // re-measure only these configurations (one a line), no tunings
  std::string level = "balanced", device, start_points = "on", reference = "extensive";
  bool judge_by_span = true;  // --judge-time span (true) or busy
  bool tune_first = false;    // --measure-once: tune the shape in this process before measuring
};

// A judge's clock: the client's measure(), but its span (the gaps between commands included)
// unless --judge-time busy. The judges keep the span that the earlier logs used, which the
// tuner's busy time (Client::measure) does not define: a pick that only it favours shows as a miss.
// It keeps each sample's span over its busy time: how much of a span is gaps between commands.
struct JudgeClock {
  tunekit::cl::Client* client;
  bool by_span;
  std::vector<double> span_over_busy;
  double measure(tunekit::FunctionRef<void()> work, std::size_t batch) {
    const double busy = client->measure(work, batch);
    const double span = client->last_measure_span();
    if (busy > 0) span_over_busy.push_back(span / busy);
    return by_span ? span : busy;
  }
  double timer_resolution() const { return client->timer_resolution(); }
  const tunekit::DeviceId& id() const { return client->id(); }
};

struct Matrices {
  ops::DeviceMatrix a, b, c;
};

Matrices make_matrices(tunekit::cl::Client& client, const std::array<std::size_t, 3>& shape) {
  const auto [m, n, k] = shape;
  return {ops::random_matrix(client.context(), m, k, tunekit::DType::f32, 1),
          ops::random_matrix(client.context(), k, n, tunekit::DType::f32, 2),
          ops::random_matrix(client.context(), m, n, tunekit::DType::f32, 3)};
}

// The shape as a child's argument: MxNxK.
std::string shape_text(const std::array<std::size_t, 3>& shape) {
  return std::to_string(shape[0]) + "x" + std::to_string(shape[1]) + "x" + std::to_string(shape[2]);
}

// The tuner's report of `shape`'s key on `client`'s device (null before it is tuned).
auto shape_report(tunekit::cl::Client& client, const std::array<std::size_t, 3>& shape) {
  return ops::matmul_tuner()
      .tuner(client.id())
      .report(ops::matmul_key(shape[0], shape[1], shape[2], tunekit::DType::f32));
}

// The child: one tuning, then "winner<TAB>seconds" and the top `top` working candidates, one a
// line ("top<TAB>name").
int tune_once(const Options& o) {
  tunekit::Settings settings = tunekit::Settings::from_environment();
  settings.persistent_cache = false;
  settings.level = tunekit::parse_level(o.level);
  if (!o.device.empty()) settings.device = o.device;
  settings.start_points = tunekit::parse_start_points(o.start_points, "--start-points");
  if (o.min_sample > 0) {
    auto bench = settings.benchmark_settings();
    bench.min_sample_seconds = o.min_sample;
    settings.benchmark = bench;
  }
  tunekit::set_global_settings(settings);
  tunekit::cl::Client client;
  auto m = make_matrices(client, o.shape);
  const auto started = std::chrono::steady_clock::now();
  ops::matmul(client, m.a, m.b, m.c);
  client.finish();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  const auto report = shape_report(client, o.shape);
  if (!report || !report->winner()) throw std::runtime_error("no winner");
  std::size_t measured = 0;
  for (const auto& outcome : report->outcomes) measured += outcome.ok();
  std::printf("winner\t%s\t%.3f\t%zu\n", report->winner()->name.c_str(), seconds, measured);
  std::size_t listed = 0;
  for (const auto& outcome : report->outcomes) {
    if (!outcome.ok()) continue;
    if (listed++ < o.top) std::printf("top\t%s\n", outcome.name.c_str());
    std::printf("seen\t%s\t%.9g\n", outcome.name.c_str(), outcome.median);
  }
  return 0;
}

std::vector<std::string> read_names(const std::string& file) {
  std::vector<std::string> names;
  FILE* list = std::fopen(file.c_str(), "r");
  if (list == nullptr) throw std::runtime_error("cannot read " + file);
  char line[4096];
  while (std::fgets(line, sizeof line, list) != nullptr) {
    std::string text(line);
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
    if (!text.empty()) names.push_back(text);
  }
  std::fclose(list);
  return names;
}

// The judge's child: the configurations of --names, measured interleaved in --rounds rounds of
// samples of at least --sample seconds; "time<TAB>name<TAB>median seconds", one a line.
int measure_once(const Options& o) {
  tunekit::Settings settings = tunekit::Settings::from_environment();
  settings.persistent_cache = false;
  if (!o.device.empty()) settings.device = o.device;
  tunekit::set_global_settings(settings);
  tunekit::cl::Client client;
  if (o.tune_first) {  // an experiment: does a process that has tuned rank as a fresh one does?
    settings.level = tunekit::parse_level(o.level);
    settings.start_points = tunekit::parse_start_points(o.start_points, "--start-points");
    tunekit::set_global_settings(settings);
    auto tuned = make_matrices(client, o.shape);
    ops::matmul(client, tuned.a, tuned.b, tuned.c);
    client.finish();
    const auto report = shape_report(client, o.shape);
    std::printf("tuned\t%s\n", report && report->winner() ? report->winner()->name.c_str() : "-");
  }
  JudgeClock clock{&client, o.judge_by_span, {}};
  const auto names = read_names(o.names_file);
  // With --buffer-sets S > 1 (an experiment: does a configuration's time depend on where its
  // matrices lie?), S sets are allocated at once and every configuration is measured on each, all
  // interleaved in the same rounds, with set 0 twice (the control: what the same placement gives
  // twice). Each set's times print as "time<s>", the control's as "time0b".
  std::vector<Matrices> sets;
  for (std::size_t s = 0; s < o.buffer_sets; ++s) sets.push_back(make_matrices(client, o.shape));
  std::vector<std::size_t> set_of;  // per contender group: which set (set 0 again last)
  for (std::size_t s = 0; s < sets.size(); ++s) set_of.push_back(s);
  if (sets.size() > 1) set_of.push_back(0);
  std::vector<std::function<void()>> calls;
  calls.reserve(names.size() * set_of.size());
  std::vector<tunekit::Contender> contenders;
  std::vector<std::string> labels;
  for (std::size_t g = 0; g < set_of.size(); ++g) {
    auto& m = sets[set_of[g]];
    for (const auto& name : names) {
      calls.emplace_back([&, name] { ops::matmul_with(name, client, m.a, m.b, m.c); });
      const double once_time = clock.measure(tunekit::FunctionRef<void()>(calls.back()), 1);
      const auto batch =
          static_cast<std::size_t>(std::clamp(o.sample / std::max(once_time, 1e-9), 1.0, 1e4));
      contenders.push_back({tunekit::FunctionRef<void()>(calls.back()), batch});
      labels.push_back(name);
    }
  }
  // With --passes P > 1 (an experiment: is a judge's ranking its process's, or its moment's?),
  // the whole measurement is done P times one after the other; pass p's times print as "...@p".
  for (std::size_t pass = 0; pass < o.passes; ++pass) {
    const auto times = tunekit::measure_interleaved(clock, contenders, labels, o.rounds, 7);
    for (std::size_t k = 0; k < contenders.size(); ++k) {
      if (times[k].error) throw *times[k].error;
      const std::size_t g = k / names.size();
      std::string tag = g == 0 ? "" : g < sets.size() ? std::to_string(g) : std::string("0b");
      if (pass > 0) tag += "@" + std::to_string(pass);
      std::printf("time%s\t%s\t%.9g\n", tag.c_str(), labels[k].c_str(),
                  tunekit::summarize(times[k].samples).median);
    }
    std::fflush(stdout);
  }
  if (!clock.span_over_busy.empty()) {
    const auto gaps = tunekit::summarize(clock.span_over_busy);
    std::printf("gaps\tspan over busy time, samples' median %.4f, max %.4f\n", gaps.median,
                gaps.max);
  }
  return 0;
}

// Runs this program again with `args` (argv[1..]; bench/child_process.hpp) and calls `record(kind,
// rest)` for each line of its output that holds a tab (the children's records: "kind<TAB>rest");
// true when it exited with 0.
template <class Record>
bool read_records(const std::vector<std::string>& args, Record record) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error("cannot make a pipe for a child");
  pid_t pid = -1;
  try {
    pid = tunekit::bench::start_self(args, fds[1]);  // dup2 clears close-on-exec on the copy
  } catch (...) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw;
  }
  ::close(fds[1]);
  // Every line first, then the child reaped, then the records read: a record that throws
  // leaves no pipe open and no child unreaped.
  std::vector<std::string> lines;
  if (FILE* pipe = ::fdopen(fds[0], "r")) {
    char line[4096];
    while (std::fgets(line, sizeof line, pipe) != nullptr) lines.emplace_back(line);
    std::fclose(pipe);
  } else {
    ::close(fds[0]);
  }
  const bool exited = tunekit::bench::exited_cleanly(pid);
  for (std::string& text : lines) {
    if (!text.empty() && text.back() == '\n') text.pop_back();
    const auto tab = text.find('\t');
    if (tab != std::string::npos) record(text.substr(0, tab), text.substr(tab + 1));
  }
  return exited;
}

// A child's record field as a number, or the child is not to be believed.
double record_number(const std::string& text, const std::string& record) {
  if (auto value = tunekit::bench::parse_number(text, 0, 1e300)) return *value;
  throw std::runtime_error("a child's record '" + record + "' holds '" + text.substr(0, 80) +
                           "', not a number");
}

// A number as a child reads it back exactly (std::to_string keeps 6 decimals: 5e-7 would be 0).
std::string exact_text(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.17g", value);
  return text;
}

// How a child was started, for messages.
std::string describe(const std::vector<std::string>& args) {
  std::string text = "bench_repeat";
  for (const auto& arg : args) text += " " + arg;
  return text;
}

// Each judge's ratios: per configuration, its time over that judge's best.
using JudgeRatios = std::map<std::string, double>;

// Each configuration's median over the judges (all but `left_out`) of its ratio, and the best of
// those medians: how the judges rank the list.
struct JudgedRanking {
  std::map<std::string, double> median;
  double best = 1e300;
};
JudgedRanking rank_by_judges(const std::vector<JudgeRatios>& by_judge,
                             std::optional<std::size_t> left_out = std::nullopt) {
  JudgedRanking ranking;
  for (const auto& [name, _] : by_judge.front()) {
    std::vector<double> r;
    for (std::size_t k = 0; k < by_judge.size(); ++k) {
      if (k != left_out) r.push_back(by_judge[k].at(name));
    }
    ranking.median[name] = tunekit::summarize(r).median;
    ranking.best = std::min(ranking.best, ranking.median[name]);
  }
  return ranking;
}

// What a pick made in one process can reach at best: each judge's own best configuration (a
// perfect measurement of that process), ranked by the other judges. Where the judges' processes
// disagree, no tuning in one process does better.
void print_judges_ceiling(const std::vector<JudgeRatios>& by_judge) {
  if (by_judge.size() < 3) return;
  std::size_t within5 = 0, within10 = 0;
  double worst = 1;
  for (std::size_t j = 0; j < by_judge.size(); ++j) {
    const std::string& own_best =
        std::min_element(by_judge[j].begin(), by_judge[j].end(), [](const auto& a, const auto& b) {
          return a.second < b.second;
        })->first;
    const JudgedRanking others = rank_by_judges(by_judge, j);
    const double ratio = others.median.at(own_best) / others.best;
    std::printf("judge %zu's own best %s: %.3fx the best by the other %zu\n", j + 1,
                own_best.c_str(), ratio, by_judge.size() - 1);
    within5 += ratio <= 1.05;
    within10 += ratio <= 1.10;
    worst = std::max(worst, ratio);
  }
  std::printf(
      "the judges' ceiling (a perfect pick in one process, ranked by the others): %zu of %zu "
      "within 5%%, %zu of %zu within 10%%; worst %.3fx\n",
      within5, by_judge.size(), within10, by_judge.size(), worst);
}

// One judge: a fresh process measuring `names_file`'s configurations; their medians by name.
std::map<std::string, double> run_judge(const Options& o) {
  std::vector<std::string> args{"--measure-once",
                                "--shape",
                                shape_text(o.shape),
                                "--rounds",
                                std::to_string(o.rounds),
                                "--sample",
                                exact_text(o.sample),
                                "--names",
                                o.names_file,
                                "--judge-time",
                                o.judge_by_span ? "span" : "busy"};
  if (!o.device.empty()) args.insert(args.end(), {"--device", o.device});
  std::map<std::string, double> median;
  const bool exited = read_records(args, [&](const std::string& kind, const std::string& rest) {
    if (kind != "time") return;
    const auto tab = rest.rfind('\t');
    median[rest.substr(0, tab)] = record_number(rest.substr(tab + 1), "time");
  });
  if (!exited || median.empty()) throw std::runtime_error("a judge failed: " + describe(args));
  return median;
}

struct Child {
  std::string winner;
  double seconds = 0;
  std::size_t measured = 0;
  std::vector<std::string> top;        // its best few, in its ranking
  std::map<std::string, double> seen;  // every configuration it measured that worked: its median
};

Child run_child(const Options& o, const std::string& level, const std::string& start_points) {
  std::vector<std::string> args{"--tune-once", "--shape", shape_text(o.shape),
                                "--level",     level,     "--start-points",
                                start_points,  "--top",   std::to_string(o.top)};
  if (!o.device.empty()) args.insert(args.end(), {"--device", o.device});
  if (o.min_sample > 0) args.insert(args.end(), {"--min-sample", exact_text(o.min_sample)});
  Child child;
  const bool exited = read_records(args, [&](const std::string& kind, const std::string& rest) {
    if (kind == "winner") {
      const auto t1 = rest.find('\t'), t2 = rest.find('\t', t1 + 1);
      if (t2 == std::string::npos) throw std::runtime_error("a child's winner record is short");
      child.winner = rest.substr(0, t1);
      child.seconds = record_number(rest.substr(t1 + 1, t2 - t1 - 1), "winner");
      const auto measured = tunekit::bench::parse_unsigned(rest.substr(t2 + 1), 0, SIZE_MAX);
      if (!measured) throw std::runtime_error("a child's winner record has no count");
      child.measured = *measured;
    } else if (kind == "top") {
      child.top.push_back(rest);
    } else if (kind == "seen") {
      const auto t = rest.find('\t');
      child.seen[rest.substr(0, t)] = record_number(rest.substr(t + 1), "seen");
    }
  });
  if (!exited || child.winner.empty()) {
    throw std::runtime_error("a tuning failed: " + describe(args));
  }
  return child;
}

}  // namespace

int main(int argc, char** argv) {
  using tunekit::bench::number_argument, tunekit::bench::unsigned_argument;
  const char* program = "bench_repeat";
  constexpr char usage[] =
      "usage: bench_repeat [--size N | --shape MxNxK] [--runs R] [--rounds K] [--level LEVEL] "
      "[--device SELECTOR] [--start-points on|off] [--reference LEVEL|none] [--top T] "
      "[--run-top K] [--min-sample SECONDS] [--sample SECONDS] [--names FILE] [--judges P] "
      "[--judge-time span|busy]\n";
  if (tunekit::bench::asks_for_help(argc, argv)) return std::fputs(usage, stdout) < 0;

  Options o;
  bool once = false, judge = false, reference_given = false;
  for (int i = 1; i < argc; ++i) {
    const bool has_value = i + 1 < argc;
    const auto is = [&](const char* flag) { return !std::strcmp(argv[i], flag) && has_value; };
    if (is("--size")) {
      o.shape.fill(unsigned_argument(program, "--size", argv[++i], 1, 65536));
    } else if (is("--shape")) {
      const auto dims = tunekit::bench::parse_dims<3>(argv[++i]);
      if (!dims) {
        std::fprintf(stderr, "bench_repeat: --shape takes MxNxK (sizes from 1), not '%.200s'\n",
                     argv[i]);
        return 2;
      }
      o.shape = *dims;
    } else if (is("--runs")) {
      o.runs = unsigned_argument(program, "--runs", argv[++i], 1, 1000);
    } else if (is("--rounds")) {
      o.rounds = unsigned_argument(program, "--rounds", argv[++i], 1, 100000);
    } else if (is("--level")) {
      o.level = argv[++i];
    } else if (is("--device")) {
      o.device = argv[++i];
    } else if (is("--start-points")) {
      o.start_points = argv[++i];
    } else if (is("--reference")) {
      o.reference = argv[++i];
      reference_given = true;
    } else if (is("--top")) {
      o.top = unsigned_argument(program, "--top", argv[++i], 1, 1000);
    } else if (is("--run-top")) {
      o.run_top = unsigned_argument(program, "--run-top", argv[++i], 0, 1000);
    } else if (is("--min-sample")) {
      o.min_sample = number_argument(program, "--min-sample", argv[++i], 0, 10);
    } else if (is("--sample")) {
      o.sample = number_argument(program, "--sample", argv[++i], 1e-6, 10);
    } else if (is("--names")) {
      o.names_file = argv[++i];
    } else if (is("--buffer-sets")) {
      o.buffer_sets = unsigned_argument(program, "--buffer-sets", argv[++i], 1, 64);
    } else if (is("--passes")) {
      o.passes = unsigned_argument(program, "--passes", argv[++i], 1, 1000);
    } else if (is("--judge-time")) {
      const std::string judge_time = argv[++i];
      if (judge_time != "span" && judge_time != "busy") {
        std::fprintf(stderr, "--judge-time: span or busy, not '%s'\n", judge_time.c_str());
        return 2;
      }
      o.judge_by_span = judge_time == "span";
    } else if (is("--judges")) {
      o.judges = unsigned_argument(program, "--judges", argv[++i], 1, 64);
    } else if (!std::strcmp(argv[i], "--tune-first")) {
      o.tune_first = true;
    } else if (!std::strcmp(argv[i], "--tune-once")) {
      once = true;
    } else if (!std::strcmp(argv[i], "--measure-once")) {
      judge = true;
    } else {
      if (i + 1 == argc && argv[i][0] == '-')  // the last argument: a flag whose value is missing?
        std::fprintf(stderr, "bench_repeat: %.200s: no such option, or its value is missing\n",
                     argv[i]);
      std::fputs(usage, stderr);
      return 2;
    }
  }
  try {
    if (once) return tune_once(o);
    if (judge) return measure_once(o);
    tunekit::Settings settings = tunekit::Settings::from_environment();
    settings.persistent_cache = false;
    if (!o.device.empty()) settings.device = o.device;
    tunekit::set_global_settings(settings);
    tunekit::cl::Client client;
    std::vector<Child> runs;
    std::vector<std::string> names;
    if (!o.names_file.empty()) {
      names = read_names(o.names_file);
      o.runs = 0;
      if (!reference_given) o.reference = "none";
    }
    // What this call does: tunings, or only a re-measurement of --names.
    const std::string plan = o.names_file.empty()
                                 ? "level " + o.level + ", start points " + o.start_points + ", " +
                                       std::to_string(o.runs) + " tunings (a process each)"
                                 : "no tunings: the " + std::to_string(names.size()) +
                                       " configurations of " + o.names_file + " re-measured";
    std::printf("device: %s\nmatmul %s f32, %s, POCL_KERNEL_CACHE=%s CUDA_CACHE_DISABLE=%s\n",
                client.device().describe().c_str(), shape_text(o.shape).c_str(), plan.c_str(),
                std::getenv("POCL_KERNEL_CACHE") ? std::getenv("POCL_KERNEL_CACHE") : "(unset)",
                std::getenv("CUDA_CACHE_DISABLE") ? std::getenv("CUDA_CACHE_DISABLE") : "(unset)");
    std::fflush(stdout);
    for (std::size_t r = 0; r < o.runs; ++r) {
      runs.push_back(run_child(o, o.level, o.start_points));
      std::printf("run %2zu: %-60s measured %3zu, tuned in %.1f s\n", r + 1,
                  runs.back().winner.c_str(), runs.back().measured, runs.back().seconds);
      std::fflush(stdout);
    }
    for (const auto& run : runs) {
      names.push_back(run.winner);
      // Each run's best few join too: whether a run measured a configuration near the best
      // (the search reached it) or never did tells a pick's error from a search's.
      for (std::size_t k = 0; k < std::min(o.run_top, run.top.size()); ++k) {
        names.push_back(run.top[k]);
      }
    }
    if (o.reference != "none") {
      const Child reference = run_child(o, o.reference, "off");
      std::printf("reference: level %s, start points off, tuned in %.1f s; its best %zu join\n",
                  o.reference.c_str(), reference.seconds, reference.top.size());
      names.insert(names.end(), reference.top.begin(), reference.top.end());
    }
    std::sort(names.begin(), names.end());
    names.erase(std::unique(names.begin(), names.end()), names.end());
    // Everything, re-measured together in each of the judges' fresh processes: the reference
    // ranking is the median over the processes of each configuration's ratio to that process's
    // best.
    char list_path[] = "/tmp/bench_repeat_names_XXXXXX";
    const int fd = mkstemp(list_path);
    if (fd < 0) throw std::runtime_error("cannot create a temporary file for the names");
    std::string list;
    for (const auto& name : names) list += name + "\n";
    const bool written = write(fd, list.data(), list.size()) == static_cast<ssize_t>(list.size());
    close(fd);
    if (!written) throw std::runtime_error(std::string("cannot write ") + list_path);
    Options judged = o;
    judged.names_file = list_path;
    std::vector<JudgeRatios> by_judge;
    for (std::size_t j = 0; j < o.judges; ++j) {
      const auto medians = run_judge(judged);
      double process_best = 1e300;
      for (const auto& [_, t] : medians) process_best = std::min(process_best, t);
      JudgeRatios& ratios = by_judge.emplace_back();
      for (const auto& name : names) ratios[name] = medians.at(name) / process_best;
      std::printf("judge %zu of %zu done\n", j + 1, o.judges);
      std::fflush(stdout);
    }
    unlink(list_path);
    const JudgedRanking judged_ranking = rank_by_judges(by_judge);
    const auto& median = judged_ranking.median;
    const double best = judged_ranking.best;
    std::printf(
        "\nwinners, each run's best %zu and the reference, re-measured in %zu fresh processes of "
        "%zu interleaved rounds, samples of at least %.1f ms timed by their %s (median over the "
        "processes of the ratio to each process's best; then the processes' ratios, sorted):\n",
        o.run_top, o.judges, o.rounds, 1e3 * o.sample, o.judge_by_span ? "span" : "busy time");
    for (const auto& name : names) {
      std::printf("  %-60s %.3fx the best  [", name.c_str(), median.at(name) / best);
      std::vector<double> sorted;
      for (const auto& ratios : by_judge) sorted.push_back(ratios.at(name));
      std::sort(sorted.begin(), sorted.end());
      for (std::size_t j = 0; j < sorted.size(); ++j)
        std::printf("%s%.3f", j ? " " : "", sorted[j]);
      std::printf("]\n");
    }
    print_judges_ceiling(by_judge);
    std::size_t within5 = 0, within10 = 0, reached = 0;
    double worst = 1;
    std::vector<double> seconds;
    for (std::size_t r = 0; r < runs.size(); ++r) {
      const auto& run = runs[r];
      const double ratio = median.at(run.winner) / best;
      within5 += ratio <= 1.05;
      within10 += ratio <= 1.10;
      worst = std::max(worst, ratio);
      seconds.push_back(run.seconds);
      // The nearest to the best among what this run measured and was re-measured here.
      double nearest = 1e300;
      std::string nearest_name;
      for (const auto& [name, _] : run.seen) {
        if (const auto it = median.find(name); it != median.end() && it->second / best < nearest) {
          nearest = it->second / best;
          nearest_name = name;
        }
      }
      reached += nearest <= 1.05;
      // What the run itself measured of the two: a pick's error shows as a nearest it measured
      // slower than its winner.
      std::printf(
          "run %2zu: winner %.3fx the best; the nearest it measured %.3fx (%s); in the run: "
          "winner %.3f us, nearest %.3f us\n",
          r + 1, ratio, nearest, nearest_name.c_str(), 1e6 * run.seen.at(run.winner),
          nearest_name.empty() ? 0.0 : 1e6 * run.seen.at(nearest_name));
    }
    if (runs.empty()) return 0;  // --names: the ranking above is the answer
    std::printf("%zu of %zu runs measured a configuration within 5%% of the best\n", reached,
                runs.size());
    std::sort(seconds.begin(), seconds.end());
    std::printf(
        "%zu of %zu runs within 5%% of the best, %zu of %zu within 10%%; worst %.3fx; median "
        "tuning "
        "%.1f s\n",
        within5, o.runs, within10, o.runs, worst,
        seconds.empty() ? 0.0 : seconds[seconds.size() / 2]);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_repeat: %s\n", e.what());
    return 1;
  }
  return 0;
}
