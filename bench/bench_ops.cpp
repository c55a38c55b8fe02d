// tunekit's shipped ops against the peer (CLBlast) on every OpenCL device, in one run: matmul
// vs Gemm, reduce vs Sum, transpose vs Omatcopy, reduce_rows (sums) vs Gemv with a vector of
// ones (CLBlast has no row reduction; Gemv reads the same matrix once), and a buffer copy for the
// bandwidth ceiling.
// Prints a table with ratios and writes it as JSON.
// Usage: `bench_ops --help` (main's `usage`). --only: an op of tunekit::ops::shipped_ops() that
// has a benchmark here; --print-shapes: the named list, one MxNxK a line. --shapes: only these
// shapes (and --sizes if given; without either, default squares); real, real-small, held-out and
// held-out-small are the named lists of bench/shape_lists.hpp. The matmul rows are followed by the
// number of distinct keys tuned and the tuning time of them all. Times are wall-clock around
// batches of back-to-back calls and clFinish, per call, for both sides (CLBlast enqueues several
// kernels per call and returns the last one's event only), medians over R batches (wall_median).
// reduce_rows runs only with --reduce-rows or --only reduce_rows (default 8192 x 8191 on a GPU,
// 2048 x 2047 elsewhere: rows that are not whole vectors).
#include <clblast.h>  // after CLHPP, which sets the OpenCL target version

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <random>
#include <string>
#include <string_view>
#include <tunekit/cl.hpp>
#include <tunekit/local_tuner.hpp>
#include <tunekit/ops/matmul.hpp>
#include <tunekit/ops/reduce.hpp>
#include <tunekit/ops/registry.hpp>
#include <tunekit/ops/transpose.hpp>
#include <vector>

#include "arguments.hpp"
#include "shape_lists.hpp"
#include "worse_error.hpp"

namespace ops = tunekit::ops;
using Client = tunekit::cl::Client;

using tunekit::bench::worse_error;

namespace {

struct Options {
  std::string device;
  std::vector<std::size_t> sizes;
  std::vector<std::array<std::size_t, 3>> shapes;
  std::size_t reduce_n = 0, transpose_rows = 0, transpose_cols = 0;  // transpose: rows x cols
  std::size_t row_reduce_rows = 0, row_reduce_cols = 0;
  int reps = 10;
  std::string json;
  std::string only;  // one op, or all when empty
};

struct Row {
  Row(std::string device_, std::string op_, std::string shape_, std::string unit_)
      : device(std::move(device_)),
        op(std::move(op_)),
        shape(std::move(shape_)),
        unit(std::move(unit_)) {}
  std::string device, op, shape, unit, winner, key;
  double tunekit = 0, peer = 0, ceiling = 0, tuning_seconds = 0;
  // The tuning's median for the winner (device busy time per call of the key's benchmark
  // problem, launch gaps left out) and this run's wall time per call: where a call launches
  // several kernels, the gaps between them are in the second only.
  double tuned_median_us = 0, wall_per_call_us = 0;
  std::string note;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Median seconds per call of `call`: wall time of a batch of back-to-back calls, then clFinish,
// divided by the calls, after two warm-up calls. The batch holds about 20 ms of work and at least
// 3 calls (at most 1000), so that a product's time is the device's, not the host's launch latency
// and clFinish round trip (tens of microseconds on NVIDIA: a 2 ms batch left one whole round trip
// in each 4096^3 call, 1-2% of it); cublas_shapes.py batches cuBLAS the same way.
double wall_median(Client& client, int reps, const std::function<void()>& call) {
  const auto timed = [&](int calls) {
    client.finish();
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < calls; ++i) call();
    client.finish();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / calls;
  };
  timed(1);
  const int calls = std::clamp(static_cast<int>(20e-3 / std::max(timed(1), 1e-6)), 3, 1000);
  std::vector<double> times;
  for (int r = 0; r < reps; ++r) times.push_back(timed(calls));
  return median(times);
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Largest error of 64 sampled elements of C = A*B (and its four corners, where the edge tiles
// are) against a double-precision host product, relative to the sum of |terms| (the inputs are
// random and non-zero: random_values).
double sampled_gemm_error(const std::vector<float>& a, const std::vector<float>& b,
                          const std::vector<float>& c, std::size_t m, std::size_t n,
                          std::size_t k) {
  std::mt19937 rng(7);
  double worst = 0;
  for (int s = 0; s < 68; ++s) {
    const std::size_t i = s < 4 ? (s & 1 ? m - 1 : 0) : rng() % m;
    const std::size_t j = s < 4 ? (s & 2 ? n - 1 : 0) : rng() % n;
    double ref = 0, norm = 0;
    for (std::size_t q = 0; q < k; ++q) {
      ref += double(a[i * k + q]) * b[q * n + j];
      norm += std::fabs(double(a[i * k + q]) * b[q * n + j]);
    }
    worst = worse_error(worst, std::fabs(ref - c[i * n + j]) / norm);
  }
  return worst;
}

std::string winner_of(const std::optional<tunekit::TuningReport>& report) {
  return report && report->winner() ? report->winner()->name : "?";
}

// What served the timed calls, asked right after them (this thread's last call): the winner, or
// where they fell back (the winner failed on these inputs), the candidate that served them.
std::string served_timed_calls(const std::optional<tunekit::TuningReport>& report) {
  const tunekit::CallReport& call = tunekit::last_call();
  if (call.path != tunekit::CallPath::fell_back || !report) return winner_of(report);
  for (const auto& outcome : report->outcomes) {
    if (outcome.index == call.candidate) {
      return outcome.name + " (the winner " + winner_of(report) + " failed on these inputs)";
    }
  }
  return winner_of(report) + " (failed on these inputs; another candidate served)";
}

double winner_median_us(const std::optional<tunekit::TuningReport>& report) {
  return report && report->winner() ? report->winner()->median * 1e6 : 0.0;
}

void bench_matmul(Client& client, const Options& o, std::size_t m, std::size_t n, std::size_t k,
                  std::vector<Row>& rows) {
  const auto ha = ops::random_values(m * k, 1), hb = ops::random_values(k * n, 2);
  auto a = ops::upload_matrix(client, ha, m, k), b = ops::upload_matrix(client, hb, k, n);
  auto c = ops::upload_matrix(client, std::vector<float>(m * n, 0.0f), m, n);
  Row row(client.device().device_name, "matmul",
          std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k),
          client.device().is_gpu() ? "TFLOP/s" : "GFLOP/s");
  const double unit = client.device().is_gpu() ? 1e12 : 1e9;
  const auto tuning_start = std::chrono::steady_clock::now();
  ops::matmul(client, a, b, c);
  client.finish();
  row.tuning_seconds = seconds_since(tuning_start);
  const auto key = ops::matmul_key(m, n, k, tunekit::DType::f32);
  row.key = tunekit::key_to_string(key);
  const auto report = ops::matmul_tuner().tuner(client.id()).report(key);
  row.tuned_median_us = winner_median_us(report);
  const double flops = 2.0 * double(m) * double(n) * double(k);
  const double call_seconds = wall_median(client, o.reps, [&] { ops::matmul(client, a, b, c); });
  row.winner = served_timed_calls(report);
  row.wall_per_call_us = call_seconds * 1e6;
  row.tunekit = flops / call_seconds / unit;
  const double tunekit_error = sampled_gemm_error(ha, hb, ops::download_matrix(client, c), m, n, k);

  cl_command_queue queue = client.queue()();
  const auto status = [&] {
    return clblast::Gemm(clblast::Layout::kRowMajor, clblast::Transpose::kNo,
                         clblast::Transpose::kNo, m, n, k, 1.0f, a.buffer(), 0, k, b.buffer(), 0, n,
                         0.0f, c.buffer(), 0, n, &queue, nullptr);
  };
  if (status() != clblast::StatusCode::kSuccess) {
    row.note = "CLBlast failed";
  } else {
    row.peer = flops / wall_median(client, o.reps, [&] { status(); }) / unit;
    const double peer_error = sampled_gemm_error(ha, hb, ops::download_matrix(client, c), m, n, k);
    char note[96];
    std::snprintf(note, sizeof note, "max rel err %.1e (CLBlast %.1e)", tunekit_error, peer_error);
    row.note = note;
  }
  if (tunekit_error > 1e-5) row.note += " WRONG";
  // A line as each shape finishes: a long list on a lent machine may be cut off.
  std::printf(
      "matmul %s: %.3f %s, CLBlast %.3f (%.2fx), first call %.1f s, %s, key %s, %s, wall %.1f us "
      "a call, tuned median %.1f us (busy time of the key's benchmark problem)\n",
      row.shape.c_str(), row.tunekit, row.unit.c_str(), row.peer,
      row.peer > 0 ? row.tunekit / row.peer : 0.0, row.tuning_seconds, row.winner.c_str(),
      row.key.c_str(), row.note.c_str(), row.wall_per_call_us, row.tuned_median_us);
  std::fflush(stdout);
  rows.push_back(row);
}

// Bandwidth of a device-to-device copy of `bytes`, counting bytes read and written (clpeak's way).
double copy_bandwidth(Client& client, std::size_t bytes, int reps) {
  auto from = client.allocate(bytes), to = client.allocate(bytes);
  client.fill<float>(from, 1.0f, bytes / 4);
  return 2.0 * double(bytes) / wall_median(client, reps, [&] { client.copy(from, to, bytes); }) /
         1e9;
}

void bench_reduce(Client& client, const Options& o, std::vector<Row>& rows) {
  const std::size_t n = o.reduce_n;
  const auto values = ops::random_values(n, 5);
  auto input = ops::upload_vector(client, values);
  Row row(client.device().device_name, "reduce (sum)", std::to_string(n), "GB/s");
  const auto tuning_start = std::chrono::steady_clock::now();
  float result = ops::reduce(client, input, ops::ReduceOp::sum);
  row.tuning_seconds = seconds_since(tuning_start);
  const auto report =
      ops::reduce_tuner().tuner(client.id()).report(ops::ReduceKey{n, ops::ReduceOp::sum});
  const double bytes = 4.0 * double(n);
  // Like CLBlast's Sum, reduce_into leaves the result on the device: no read-back is timed.
  ops::DeviceVector result_on_device{client.allocate(4), 1};
  row.tunekit =
      bytes /
      wall_median(client, o.reps,
                  [&] { ops::reduce_into(client, input, ops::ReduceOp::sum, result_on_device); }) /
      1e9;
  row.winner = served_timed_calls(report);
  double expected = 0, magnitude = 0;
  for (float v : values) expected += v, magnitude += std::fabs(v);
  char note[128];
  std::snprintf(note, sizeof note, "rel err %.1e", std::fabs(result - expected) / magnitude);
  row.note = note;
  auto out = client.allocate(4);
  cl_command_queue queue = client.queue()();
  const auto sum = [&] {
    return clblast::Sum<float>(n, out(), 0, input.buffer(), 0, 1, &queue, nullptr);
  };
  if (sum() == clblast::StatusCode::kSuccess) {
    row.peer = bytes / wall_median(client, o.reps, [&] { sum(); }) / 1e9;
  } else {
    row.note += ", CLBlast failed";
  }
  row.ceiling = copy_bandwidth(client, n * 4, o.reps);
  rows.push_back(row);
}

void bench_transpose(Client& client, const Options& o, std::vector<Row>& rows) {
  const std::size_t m = o.transpose_rows, n = o.transpose_cols;
  const auto values = ops::random_values(m * n, 6);
  auto in = ops::upload_matrix(client, values, m, n);
  auto out = ops::upload_matrix(client, std::vector<float>(m * n, 0.0f), n, m);
  Row row(client.device().device_name, "transpose", std::to_string(m) + "x" + std::to_string(n),
          "GB/s");
  const auto tuning_start = std::chrono::steady_clock::now();
  ops::transpose(client, in, out);
  row.tuning_seconds = seconds_since(tuning_start);
  const auto report = ops::transpose_tuner().tuner(client.id()).report(ops::transpose_key(m, n));
  const double bytes = 2.0 * 4.0 * double(m) * double(n);
  row.tunekit = bytes / wall_median(client, o.reps, [&] { ops::transpose(client, in, out); }) / 1e9;
  row.winner = served_timed_calls(report);
  const auto got = ops::download_matrix(client, out);
  std::size_t wrong = 0;
  for (std::size_t r = 0; r < m; r += 7)
    for (std::size_t c = 0; c < n; c += 5) wrong += got[c * m + r] != values[r * n + c];
  row.note = wrong ? "WRONG" : "exact";
  cl_command_queue queue = client.queue()();
  const auto copy = [&] {
    return clblast::Omatcopy<float>(clblast::Layout::kRowMajor, clblast::Transpose::kYes, m, n,
                                    1.0f, in.buffer(), 0, n, out.buffer(), 0, m, &queue, nullptr);
  };
  if (copy() == clblast::StatusCode::kSuccess) {
    row.peer = bytes / wall_median(client, o.reps, [&] { copy(); }) / 1e9;
  } else {
    row.note += ", CLBlast failed";
  }
  row.ceiling = copy_bandwidth(client, m * n * 4, o.reps);
  rows.push_back(row);
}

void bench_reduce_rows(Client& client, const Options& o, std::vector<Row>& rows) {
  const std::size_t m = o.row_reduce_rows, n = o.row_reduce_cols;
  const auto values = ops::random_values(m * n, 8);
  auto matrix = ops::upload_matrix(client, values, m, n);
  auto sums = ops::upload_vector(client, std::vector<float>(m, 0.0f));
  Row row(client.device().device_name, "reduce_rows (sum)",
          std::to_string(m) + "x" + std::to_string(n), "GB/s");
  const auto tuning_start = std::chrono::steady_clock::now();
  ops::reduce_rows(client, matrix, ops::ReduceOp::sum, sums);
  client.finish();
  row.tuning_seconds = seconds_since(tuning_start);
  const auto report = ops::reduce_rows_tuner()
                          .tuner(client.id())
                          .report(ops::reduce_rows_key(m, n, ops::ReduceOp::sum));
  const double bytes = 4.0 * double(m) * double(n);
  row.tunekit = bytes /
                wall_median(client, o.reps,
                            [&] { ops::reduce_rows(client, matrix, ops::ReduceOp::sum, sums); }) /
                1e9;
  row.winner = served_timed_calls(report);
  // Each row's exact sum and the sum of its magnitudes, once; a result's error is its worst row's.
  std::vector<double> exact(m, 0.0), magnitude(m, 0.0);
  for (std::size_t r = 0; r < m; ++r) {
    for (std::size_t c = 0; c < n; ++c) {
      exact[r] += values[r * n + c];
      magnitude[r] += std::fabs(values[r * n + c]);
    }
  }
  const auto error = [&](const std::vector<float>& got) {
    double worst = 0;
    for (std::size_t r = 0; r < m; ++r)
      worst = worse_error(worst, std::fabs(got[r] - exact[r]) / magnitude[r]);
    return worst;
  };
  const double tunekit_error = error(client.download<float>(sums.buffer, m));
  auto ones = ops::upload_vector(client, std::vector<float>(n, 1.0f));
  cl_command_queue queue = client.queue()();
  const auto gemv = [&] {
    return clblast::Gemv<float>(clblast::Layout::kRowMajor, clblast::Transpose::kNo, m, n, 1.0f,
                                matrix.buffer(), 0, n, ones.buffer(), 0, 1, 0.0f, sums.buffer(), 0,
                                1, &queue, nullptr);
  };
  char note[128];
  if (gemv() == clblast::StatusCode::kSuccess) {
    row.peer = bytes / wall_median(client, o.reps, [&] { gemv(); }) / 1e9;
    std::snprintf(note, sizeof note, "max rel err %.1e (CLBlast Gemv %.1e)", tunekit_error,
                  error(client.download<float>(sums.buffer, m)));
  } else {
    std::snprintf(note, sizeof note, "max rel err %.1e, CLBlast failed", tunekit_error);
  }
  row.note = note;
  if (tunekit_error > 1e-5) row.note += " WRONG";
  row.ceiling = copy_bandwidth(client, m * n * 4, o.reps);
  rows.push_back(row);
}

}  // namespace

// The shipped ops (tunekit::ops::shipped_ops()) this benchmark compares with CLBlast.
constexpr std::string_view benchmarked_ops[] = {"matmul", "reduce", "transpose", "reduce_rows"};

int main(int argc, char** argv) {
  using tunekit::bench::parse_comma_list, tunekit::bench::parse_dims, tunekit::bench::parse_size,
      tunekit::bench::read_or_refuse;
  constexpr char usage[] =
      "usage: bench_ops [--only matmul|reduce|transpose|reduce_rows] [--device SUBSTRING] "
      "[--sizes N,...] [--shapes MxNxK,...|real|real-small|held-out|held-out-small] [--reduce N] "
      "[--transpose N|RxC] [--reduce-rows RxC] [--reps R] [--json FILE]\n"
      "       bench_ops --print-shapes real|real-small|held-out|held-out-small\n";
  if (tunekit::bench::asks_for_help(argc, argv)) return std::fputs(usage, stdout) < 0;
  Options o;
  if (argc == 3 && std::string(argv[1]) == "--print-shapes") {  // for scripts: one list, one place
    const auto list = tunekit::bench::named_shapes(argv[2]);
    if (!list) {
      std::fprintf(stderr, "bench_ops: no shape list named %s (%s)\n", argv[2],
                   tunekit::bench::shape_list_names().c_str());
      return 2;
    }
    for (const auto& s : *list) std::printf("%zux%zux%zu\n", s[0], s[1], s[2]);
    return 0;
  }
  for (int i = 1; i < argc; i += 2) {
    if (i + 1 == argc) tunekit::bench::refuse_missing_value("bench_ops", argv[i]);
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--device")
      o.device = value;
    else if (flag == "--sizes") {
      o.sizes = read_or_refuse(parse_comma_list(value, parse_size), "bench_ops", "--sizes", value,
                               "N,N,... (each from 1 to 2^31 - 1)");
    } else if (flag == "--shapes") {
      const auto list = tunekit::bench::parse_shapes(value);
      if (!list) {
        std::fprintf(stderr, "bench_ops: --shapes takes MxNxK,... (sizes from 1) or a list: %s\n",
                     tunekit::bench::shape_list_names().c_str());
        return 2;
      }
      o.shapes.insert(o.shapes.end(), list->begin(), list->end());
    } else if (flag == "--reduce") {
      o.reduce_n = read_or_refuse(parse_size(value), "bench_ops", "--reduce", value,
                                  "N (from 1 to 2^31 - 1)");
    } else if (flag == "--transpose") {
      const auto square = parse_size(value);  // N: a square
      const auto shape = read_or_refuse(
          square ? std::optional(std::array{*square, *square}) : parse_dims<2>(value), "bench_ops",
          "--transpose", value, "N or ROWSxCOLS (each from 1)");
      o.transpose_rows = shape[0];
      o.transpose_cols = shape[1];
    } else if (flag == "--reduce-rows") {
      const auto shape = read_or_refuse(parse_dims<2>(value), "bench_ops", "--reduce-rows", value,
                                        "ROWSxCOLS (each from 1)");
      o.row_reduce_rows = shape[0];
      o.row_reduce_cols = shape[1];
    } else if (flag == "--reps") {
      o.reps = static_cast<int>(
          tunekit::bench::unsigned_argument("bench_ops", "--reps", value, 1, 100000));
    } else if (flag == "--json")
      o.json = value;
    else if (flag == "--only") {
      // The shipped ops are the registry's (ops/registry.hpp); this benchmark covers those with a
      // peer to compare with, and names any other.
      if (tunekit::ops::find_shipped_op(value) == nullptr) {
        std::string names;
        for (const auto& op : tunekit::ops::shipped_ops()) names += " " + op.name;
        std::fprintf(stderr, "bench_ops: --only %s: no such op (shipped:%s)\n", value.c_str(),
                     names.c_str());
        return 2;
      }
      if (std::find(std::begin(benchmarked_ops), std::end(benchmarked_ops), value) ==
          std::end(benchmarked_ops)) {
        std::fprintf(stderr, "bench_ops: --only %s: a shipped op without a peer benchmark here\n",
                     value.c_str());
        return 2;
      }
      o.only = value;
    } else {
      std::fprintf(stderr, "bench_ops: unknown option %.200s\n", flag.c_str());
      std::fputs(usage, stderr);
      return 2;
    }
  }
  for (std::string_view name : benchmarked_ops) {
    if (tunekit::ops::find_shipped_op(name) == nullptr) {  // renamed or removed in the registry
      std::fprintf(stderr, "bench_ops: '%.*s' is not a shipped op\n", static_cast<int>(name.size()),
                   name.data());
      return 2;
    }
  }
  std::vector<Row> rows;
  try {
    for (const auto& device : tunekit::cl::list_devices()) {
      if (!o.device.empty() &&
          (device.platform_name + " " + device.device_name).find(o.device) == std::string::npos)
        continue;
      Client client(device);
      std::printf("device: %s\n  identity: %s\n", device.describe().c_str(),
                  device.identity().c_str());
      std::fflush(stdout);
      const bool gpu = device.is_gpu();
      // The default squares, unless sizes were given or shapes replace them.
      const auto sizes = !o.sizes.empty() || !o.shapes.empty() ? o.sizes
                         : gpu ? std::vector<std::size_t>{1024, 2048, 4096, 8192}
                               : std::vector<std::size_t>{256, 512, 1024};
      const auto runs = [&](const char* op) { return o.only.empty() || o.only == op; };
      if (runs("matmul")) {
        for (std::size_t s : sizes) bench_matmul(client, o, s, s, s, rows);
        for (const auto& s : o.shapes) bench_matmul(client, o, s[0], s[1], s[2], rows);
      }
      Options local = o;
      if (!local.reduce_n) local.reduce_n = gpu ? std::size_t{1} << 28 : std::size_t{1} << 24;
      if (!local.transpose_rows) local.transpose_rows = local.transpose_cols = gpu ? 8192 : 2048;
      if (runs("reduce")) bench_reduce(client, local, rows);
      if (runs("transpose")) bench_transpose(client, local, rows);
      // Only when asked for: the scripts' default runs stay as they were.
      if (runs("reduce_rows") && (o.only == "reduce_rows" || o.row_reduce_rows > 0)) {
        if (!local.row_reduce_rows) {
          local.row_reduce_rows = gpu ? 8192 : 2048;
          local.row_reduce_cols = local.row_reduce_rows - 1;
        }
        bench_reduce_rows(client, local, rows);
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_ops: %s\n", e.what());
    return 1;
  }
  std::printf(
      "\n| device | op | shape | tunekit | CLBlast | tunekit / CLBlast | copy ceiling | tunekit / "
      "ceiling | winner | tuning | note |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (const auto& r : rows) {
    char ceiling[64] = "-", of_ceiling[32] = "-", peer[64] = "-", of_peer[32] = "-";
    if (r.ceiling > 0) {
      std::snprintf(ceiling, sizeof ceiling, "%.1f GB/s", r.ceiling);
      std::snprintf(of_ceiling, sizeof of_ceiling, "%.0f%%", 100 * r.tunekit / r.ceiling);
    }
    if (r.peer > 0) {  // else CLBlast failed (the note says so): no figure
      std::snprintf(peer, sizeof peer, "%.2f %s", r.peer, r.unit.c_str());
      std::snprintf(of_peer, sizeof of_peer, "%.2fx", r.tunekit / r.peer);
    }
    std::printf("| %s | %s | %s | %.2f %s | %s | %s | %s | %s | %s | %.1f s | %s |\n",
                r.device.c_str(), r.op.c_str(), r.shape.c_str(), r.tunekit, r.unit.c_str(), peer,
                of_peer, ceiling, of_ceiling, r.winner.c_str(), r.tuning_seconds, r.note.c_str());
  }
  // The keys behind the matmul rows: one tuning each (a later shape of a tuned key dispatches).
  std::vector<std::pair<std::string, std::string>> keys;  // device, key
  double matmul_tuning = 0;
  for (const auto& r : rows) {
    if (r.op != "matmul") continue;
    matmul_tuning += r.tuning_seconds;
    if (std::find(keys.begin(), keys.end(), std::make_pair(r.device, r.key)) == keys.end())
      keys.emplace_back(r.device, r.key);
  }
  if (!keys.empty()) {
    std::printf("\nmatmul: %zu shapes, %zu distinct keys tuned, %.1f s of first calls (tuning)\n",
                static_cast<std::size_t>(std::count_if(
                    rows.begin(), rows.end(), [](const Row& r) { return r.op == "matmul"; })),
                keys.size(), matmul_tuning);
    std::printf("| shape | key |\n|---|---|\n");
    for (const auto& r : rows)
      if (r.op == "matmul") std::printf("| %s | %s |\n", r.shape.c_str(), r.key.c_str());
  }
  if (!o.json.empty()) {
    std::ofstream json(o.json);
    json << "[\n";
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const auto& r = rows[i];
      json << "  {\"device\": \"" << r.device << "\", \"op\": \"" << r.op << "\", \"shape\": \""
           << r.shape << "\", \"unit\": \"" << r.unit << "\", \"tunekit\": " << r.tunekit
           << ", \"clblast\": " << r.peer << ", \"copy_ceiling_gbs\": " << r.ceiling
           << ", \"winner\": \"" << r.winner << "\", \"key\": \"" << r.key
           << "\", \"tuning_seconds\": " << r.tuning_seconds
           << ", \"wall_per_call_us\": " << r.wall_per_call_us
           << ", \"tuned_median_us\": " << r.tuned_median_us << ", \"note\": \"" << r.note << "\"}"
           << (i + 1 < rows.size() || !keys.empty() ? ",\n" : "\n");
    }
    if (!keys.empty()) {
      json << "  {\"op\": \"matmul (summary)\", \"distinct_keys\": " << keys.size()
           << ", \"tuning_seconds\": " << matmul_tuning << "}\n";
    }
    json << "]\n";
  }
}
