// The best each matmul family can do on each shape: every configuration of the named families
// (within the device's limits) is built once, then measured on every shape, the call's own sizes.
// Against a tuned winner (bench_ops), it tells what the key, its benchmark problem and the search
// leave on the table, and where only new kernels would help (docs/benchmarks.md, issue 16).
// Usage: matmul_shape_oracle [--device S] [--families blocked,split,skinny]
//                            [--shapes real|real-small|MxNxK,...] [--top T] [--out TABLE.tsv]
//                            [--candidates FILE]  only these candidate names, one a line (a
//                                                 device's compiler takes 0.5 s per program)
// Each configuration is measured at the minimal level's sampling, racing the shape's leader; the
// best T per shape are measured again at the balanced level and checked against the naive kernel.
// skinny is measured for M <= 64 only (its tiles are rows of one work-group). TABLE.tsv: shape,
// candidate, median seconds (empty when it failed or was dropped by racing).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>
#include <tunekit/benchmark.hpp>
#include <tunekit/candidate_name.hpp>
#include <tunekit/cl.hpp>
#include <tunekit/ops/matmul.hpp>
#include <tunekit/settings.hpp>
#include <vector>

#include "arguments.hpp"
#include "shape_lists.hpp"
#include "worse_error.hpp"

namespace ops = tunekit::ops;

using tunekit::bench::worse_error;

namespace {

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

struct Measured {
  std::string name;
  double seconds;
};

}  // namespace

int main(int argc, char** argv) {
  std::string device, families_text = "blocked,split,skinny", shapes_text = "real", out, only;
  std::size_t top = 5;
  constexpr char usage[] =
      "usage: matmul_shape_oracle [--device S] [--families F,...] [--shapes real|MxNxK,...] "
      "[--top T] [--out TABLE.tsv] [--candidates FILE]\n";
  if (tunekit::bench::asks_for_help(argc, argv)) return std::fputs(usage, stdout) < 0;
  for (int i = 1; i < argc; i += 2) {
    if (i + 1 == argc) tunekit::bench::refuse_missing_value("matmul_shape_oracle", argv[i]);
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--device")
      device = value;
    else if (flag == "--families")
      families_text = value;
    else if (flag == "--shapes")
      shapes_text = value;
    else if (flag == "--top")
      top = tunekit::bench::unsigned_argument("matmul_shape_oracle", flag, value, 1, 1000);
    else if (flag == "--out")
      out = value;
    else if (flag == "--candidates")
      only = value;
    else {
      std::fputs(usage, stderr);
      return 2;
    }
  }
  if (argc % 2 == 0) {
    std::fprintf(stderr, "%s: every flag takes a value\n", argv[0]);
    return 2;
  }
  const auto parsed = tunekit::bench::parse_shapes(shapes_text);
  if (!parsed) {
    std::fprintf(stderr, "%s: --shapes takes MxNxK,... (sizes from 1), real or real-small\n",
                 argv[0]);
    return 2;
  }
  const std::vector<tunekit::bench::Shape>& shapes = *parsed;
  const auto families = split_list(families_text);
  try {
    tunekit::Settings settings;
    settings.persistent_cache = false;
    tunekit::set_global_settings(settings);
    tunekit::cl::Client client(device);
    std::printf("device: %s\n", client.device().describe().c_str());
    std::vector<std::string> wanted;
    if (!only.empty()) {
      std::ifstream in(only);
      if (!in) throw std::runtime_error("--candidates: cannot read " + only);
      for (std::string line; std::getline(in, line);) wanted.push_back(line);
    }
    std::vector<std::string> names;
    for (const auto& name : ops::matmul_candidates(client.limits())) {
      const auto parts = tunekit::split_candidate_name(name);
      if (!parts || std::find(families.begin(), families.end(), parts->space) == families.end())
        continue;
      if (only.empty() || std::find(wanted.begin(), wanted.end(), name) != wanted.end())
        names.push_back(name);
    }
    std::printf("%zu configurations of %s within the device's limits\n", names.size(),
                families_text.c_str());
    std::fflush(stdout);
    {  // build every program once: the driver's compiler is the slow part
      auto one = ops::upload_matrix(client, ops::random_values(1, 1), 1, 1);
      auto result = ops::upload_matrix(client, ops::random_values(1, 2), 1, 1);
      std::size_t built = 0;
      for (const auto& name : names) {
        try {
          ops::matmul_with(name, client, one, one, result);
        } catch (const std::exception&) {
          // over a limit or failing to build: measured (and dropped) per shape below
        }
        if (++built % 100 == 0) {
          std::printf("  built %zu\n", built);
          std::fflush(stdout);
        }
      }
      client.finish();
    }
    std::ofstream table;
    if (!out.empty()) table.open(out);
    const auto quick = tunekit::BenchmarkSettings::for_level(tunekit::Level::minimal);
    const auto careful = tunekit::BenchmarkSettings::for_level(tunekit::Level::balanced);
    const auto started = std::chrono::steady_clock::now();
    for (const auto& shape : shapes) {
      const std::size_t m = shape[0], n = shape[1], k = shape[2];
      auto a = ops::upload_matrix(client, ops::random_values(m * k, 11), m, k);
      auto b = ops::upload_matrix(client, ops::random_values(k * n, 12), k, n);
      auto c = ops::upload_matrix(client, std::vector<float>(m * n, 0.0f), m, n);
      ops::matmul_with("naive[LX=16,LY=16]", client, a, b, c);
      const auto reference = ops::download_matrix(client, c);
      std::vector<Measured> measured;
      double leader = std::numeric_limits<double>::infinity();
      std::size_t index = 0;
      for (const auto& name : names) {
        if (m > 64 && name.rfind("skinny[", 0) == 0) continue;
        auto run = [&] { ops::matmul_with(name, client, a, b, c); };
        const auto outcome = tunekit::measure_candidate(client, tunekit::FunctionRef<void()>(run),
                                                        quick, leader, name, index++);
        if (table.is_open()) {
          table << m << 'x' << n << 'x' << k << '\t' << name << '\t';
          if (outcome.ok()) table << outcome.median;
          table << '\n';
        }
        if (!outcome.ok()) continue;
        leader = std::min(leader, outcome.median);
        measured.push_back({name, outcome.median});
      }
      std::sort(measured.begin(), measured.end(),
                [](const Measured& x, const Measured& y) { return x.seconds < y.seconds; });
      if (measured.size() > top) measured.resize(top);
      const double flops = 2.0 * double(m) * double(n) * double(k);
      for (auto& entry : measured) {  // again, carefully, and checked
        auto run = [&] { ops::matmul_with(entry.name, client, a, b, c); };
        const auto outcome =
            tunekit::measure_candidate(client, tunekit::FunctionRef<void()>(run), careful,
                                       std::numeric_limits<double>::infinity(), entry.name, 0);
        entry.seconds = outcome.ok() ? outcome.median : std::numeric_limits<double>::infinity();
        const auto got = ops::download_matrix(client, c);
        const double bound = ops::matmul_tolerance(k, tunekit::DType::f32);
        double worst = 0;
        for (std::size_t i = 0; i < got.size(); i += 61) {
          worst = worse_error(worst, std::fabs(double(got[i]) - double(reference[i])));
        }
        if (!(worst <= bound)) entry.seconds = std::numeric_limits<double>::infinity();
      }
      std::sort(measured.begin(), measured.end(),
                [](const Measured& x, const Measured& y) { return x.seconds < y.seconds; });
      std::printf(
          "%zux%zux%zu (%zu measured, %.0f s):", m, n, k, index,
          std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
      for (const auto& entry : measured) {
        std::printf(" %.2f %s;", flops / entry.seconds / 1e12, entry.name.c_str());
      }
      std::printf("\n");
      std::fflush(stdout);
      if (table.is_open()) table.flush();
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "matmul_shape_oracle: %s\n", e.what());
    return 1;
  }
}
