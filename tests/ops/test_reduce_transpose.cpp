// reduce, reduce_rows and transpose on the default OpenCL device (PoCL here), against host
// references in double precision on random non-zero inputs.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <tunekit/cl/kernel_spec.hpp>
#include <tunekit/ops/reduce.hpp>
#include <tunekit/ops/transpose.hpp>
#include <tuple>

#include "../../src/ops/bench_fit.hpp"
#include "../../src/ops/host_references.hpp"
#include "../../src/ops/row_rules.hpp"
#include "../../src/ops/sizes.hpp"
#include "ops_support.hpp"

using namespace tunekit::ops;
using tunekit::test::default_client;

namespace {
double host_reduce(const std::vector<float>& v, std::size_t first, std::size_t count, ReduceOp op,
                   double* magnitude) {
  double result = op == ReduceOp::sum ? 0 : -INFINITY;
  *magnitude = 0;
  for (std::size_t i = first; i < first + count; ++i) {
    result = op == ReduceOp::sum ? result + v[i] : std::max(result, double(v[i]));
    *magnitude += std::fabs(v[i]);
  }
  return result;
}
}  // namespace

TEST_CASE("reduce sums and maxes arrays of awkward lengths", "[ops][reduce][opencl]") {
  tunekit::test::quick_tuning();
  auto& client = default_client();
  for (std::size_t n : {std::size_t{1}, std::size_t{7}, std::size_t{1000}, std::size_t{65537},
                        std::size_t{1} << 20}) {
    const auto values = tunekit::ops::random_values(n, n);
    const auto input = upload_vector(client, values);
    for (ReduceOp op : {ReduceOp::sum, ReduceOp::max}) {
      INFO("n=" << n << " op=" << op);
      double magnitude = 0;
      const double expected = host_reduce(values, 0, n, op, &magnitude);
      const float got = reduce(client, input, op);
      if (op == ReduceOp::max)
        CHECK(got == static_cast<float>(expected));
      else
        CHECK(std::fabs(got - expected) / magnitude < 1e-5);
    }
  }
}

TEST_CASE(
    "reduce.cl's array kernel is right at every vector width on lengths of every remainder (whole "
    "vectors, then the last elements), and its row kernel on rows that start off a vector",
    "[ops][reduce][opencl]") {
  auto& client = default_client();
  // Lengths 1 to 33 (below, at and past a vector, every remainder modulo 16), and longer ones
  // past several grid strides; one group and several.
  std::vector<std::size_t> lengths;
  for (std::size_t n = 1; n <= 33; ++n) lengths.push_back(n);
  for (std::size_t n : {1021, 4099, 65543}) lengths.push_back(n);
  for (int vw : {1, 2, 4, 8, 16}) {
    for (int unroll : {1, 4}) {
      const std::string options =
          "-DOP=0 -DWGS=64 -DVW=" + std::to_string(vw) + " -DUNROLL=" + std::to_string(unroll);
      ::cl::Kernel kernel =
          client.kernel(tunekit::cl::KernelSpec::embedded("reduce.cl", options, "reduce_multi"));
      for (std::size_t n : lengths) {
        for (std::size_t groups : {std::size_t{1}, std::size_t{5}}) {
          INFO("VW=" << vw << " UNROLL=" << unroll << " n=" << n << " groups=" << groups);
          const auto values = tunekit::ops::random_values(n, n + groups);
          const auto input = upload_vector(client, values);
          auto partials = upload_vector(client, std::vector<float>(groups, 0.0f));
          client.launch_with(kernel, ::cl::NDRange(groups * 64), ::cl::NDRange(64),
                             static_cast<int>(n), input.buffer, partials.buffer);
          double got = 0;
          for (float p : client.download<float>(partials.buffer, groups)) got += p;
          double magnitude = 0;
          const double expected = host_reduce(values, 0, n, ReduceOp::sum, &magnitude);
          CHECK(std::fabs(got - expected) / magnitude < 1e-5);
        }
      }
    }
  }
  // Rows of whole vectors, and rows that start off a vector's boundary: 17 rows of 67 (67 is odd
  // modulo 16, so their starts take every remainder), rows shorter than a vector, work-groups of
  // fewer work-items than a row's head. A sum misses any element lost or read twice. Also the
  // work-item-per-row kernels (direct and through local memory; they read no vectors, so one
  // width), and the sub-group-per-row one where there are sub-groups (on NVIDIA through inline
  // PTX shuffles, 32-wide warps). No kernel writes past the last row's result.
  using tunekit::ops::detail::RowStrategy;
  std::vector<RowStrategy> row_strategies{RowStrategy::group, RowStrategy::item, RowStrategy::tile};
  if (client.device().nvidia || client.device().sub_groups)
    row_strategies.push_back(RowStrategy::subgroup);
  for (const RowStrategy strategy : row_strategies) {
    const std::string name = tunekit::ops::detail::row_kernel(strategy);
    const bool warps = strategy == RowStrategy::subgroup;
    const bool nv_shuffles = warps && client.device().nvidia;
    for (int op : {0, 1}) {
      for (int vw : {1, 2, 4, 8, 16}) {
        if (vw != 1 && (strategy == RowStrategy::item || strategy == RowStrategy::tile)) continue;
        // The sub-group kernel's groups also own fewer rows than their sub-groups (one idle, as
        // with 16-lane sub-groups) and more (each takes two in turn, as with 64 lanes); the tile
        // kernel's passes are as wide as its group, or narrower (TC, default min(32, WGS)).
        for (auto [wgs, sg_rows, tc] : {std::tuple<int, int, int>{2, 0, 0},
                                        {64, 0, 0},
                                        {64, 1, 0},
                                        {64, 4, 0},
                                        {64, 0, 16},
                                        {8, 0, 4}}) {
          if (warps ? wgs < 32 : sg_rows != 0) continue;
          if (tc != 0 && strategy != RowStrategy::tile) continue;
          ::cl::Kernel kernel = client.kernel(tunekit::cl::KernelSpec::embedded(
              "reduce.cl",
              "-DOP=" + std::to_string(op) + " -DWGS=" + std::to_string(wgs) +
                  " -DVW=" + std::to_string(vw) + (nv_shuffles ? " -DUSE_NV_SHFL=1" : "") +
                  (sg_rows != 0 ? " -DSG_ROWS=" + std::to_string(sg_rows) : "") +
                  (tc != 0 ? " -DTC=" + std::to_string(tc) : ""),
              name));
          const std::size_t rows_per_group =
              sg_rows != 0
                  ? static_cast<std::size_t>(sg_rows)
                  : tunekit::ops::detail::rows_per_group(strategy, static_cast<std::size_t>(wgs));
          for (auto [rows, cols] : {std::pair<std::size_t, std::size_t>{3, 64},
                                    {17, 67},
                                    {17, 1},
                                    {17, 5},
                                    {9, 1027},
                                    {2, 1}}) {
            INFO(name << " OP=" << op << " VW=" << vw << " WGS=" << wgs << " SG_ROWS=" << sg_rows
                      << " TC=" << tc << " " << rows << "x" << cols);
            const auto values = tunekit::ops::random_values(rows * cols, rows * 3 + cols);
            const auto matrix = upload_matrix(client, values, rows, cols);
            // A group's worth of NaN past the last row: a write there shows.
            std::vector<float> canary(rows + static_cast<std::size_t>(wgs), 0.0f);
            std::fill(canary.begin() + static_cast<std::ptrdiff_t>(rows), canary.end(), NAN);
            auto out = upload_vector(client, canary);
            const std::size_t groups = (rows + rows_per_group - 1) / rows_per_group;
            client.launch_with(kernel, ::cl::NDRange(groups * wgs), ::cl::NDRange(wgs),
                               static_cast<int>(rows), static_cast<int>(cols), matrix.buffer,
                               out.buffer);
            const auto got = client.download<float>(out.buffer, canary.size());
            CHECK(std::all_of(got.begin() + static_cast<std::ptrdiff_t>(rows), got.end(),
                              [](float v) { return std::isnan(v); }));
            for (std::size_t r = 0; r < rows; ++r) {
              INFO("row " << r);
              double magnitude = 0;
              const double expected = host_reduce(
                  values, r * cols, cols, op == 0 ? ReduceOp::sum : ReduceOp::max, &magnitude);
              if (op == 1)
                CHECK(got[r] == static_cast<float>(expected));
              else
                CHECK(std::fabs(got[r] - expected) / magnitude < 1e-5);
            }
          }
        }
      }
    }
  }
}

TEST_CASE("reduce_rows' work-item and sub-group kernels are launched only within 32-bit indices",
          "[ops][reduce]") {
  using tunekit::ops::detail::fits_32_bit_indices;
  using tunekit::ops::detail::RowStrategy;
  constexpr std::size_t limit = 2147483647;
  for (RowStrategy strategy : {RowStrategy::item, RowStrategy::tile, RowStrategy::subgroup}) {
    INFO(tunekit::ops::detail::row_kernel(strategy));
    CHECK(fits_32_bit_indices(strategy, 65536, 67, 256));
    CHECK(fits_32_bit_indices(strategy, limit - 512, limit - 256, 256));
    CHECK_FALSE(fits_32_bit_indices(strategy, limit - 511, 67, 256));  // the last group's ids wrap
    CHECK_FALSE(fits_32_bit_indices(strategy, 67, limit - 255, 256));  // the last pass wraps
  }
  CHECK(fits_32_bit_indices(RowStrategy::group, limit, limit, 256));
  CHECK_FALSE(fits_32_bit_indices(RowStrategy::group, limit + 1, 1, 256));
}

TEST_CASE("reduce_rows' key keeps the width of vector a row starts on, and so does its benchmark",
          "[ops][reduce]") {
  const auto text = [](std::uint64_t rows, std::uint64_t cols) {
    return tunekit::key_to_string(reduce_rows_key(rows, cols, ReduceOp::sum));
  };
  CHECK(text(8192, 8192) == "rows=8192 cols=8192 vector_width=4 op=sum");
  CHECK(text(8192, 8191) == "rows=8192 cols=8192 vector_width=1 op=sum");
  CHECK(text(8000, 8190) == "rows=8192 cols=8192 vector_width=2 op=sum");
  CHECK(text(65536, 67) == "rows=65536 cols=128 vector_width=1 op=sum");
  // The benchmark problem's rows have the call's width: 8191 is timed as 8191, not 8192.
  for (auto [cols, timed] : {std::pair<std::uint64_t, std::uint64_t>{8192, 8192},
                             {8191, 8191},
                             {8190, 8190},
                             {8188, 8192},
                             {67, 127},
                             {6, 6},
                             {3, 3},
                             {2, 2},
                             {1, 1}}) {
    INFO(cols << " columns");
    const auto key = reduce_rows_key(64, cols, ReduceOp::max);
    CHECK(key.benchmark_cols() == timed);
    CHECK(tunekit::ops::widest_vector(key.benchmark_cols()) == key.vector_width);
  }
}

TEST_CASE("reduce_rows reduces every row of a matrix", "[ops][reduce][opencl]") {
  tunekit::test::quick_tuning();
  auto& client = default_client();
  for (auto [rows, cols] :
       {std::pair<std::size_t, std::size_t>{1, 1}, {33, 1000}, {1000, 3}, {257, 4096}}) {
    const auto values = tunekit::ops::random_values(rows * cols, rows + cols);
    const auto matrix = upload_matrix(client, values, rows, cols);
    auto out = upload_vector(client, std::vector<float>(rows, 0.0f));
    for (ReduceOp op : {ReduceOp::sum, ReduceOp::max}) {
      INFO(rows << "x" << cols << " op=" << op);
      reduce_rows(client, matrix, op, out);
      const auto got = client.download<float>(out.buffer, rows);
      for (std::size_t r = 0; r < rows; ++r) {
        double magnitude = 0;
        const double expected = host_reduce(values, r * cols, cols, op, &magnitude);
        if (op == ReduceOp::max)
          REQUIRE(got[r] == static_cast<float>(expected));
        else
          REQUIRE(std::fabs(got[r] - expected) / magnitude < 1e-5);
      }
    }
  }
}

TEST_CASE("reduce's validator judges a result by the exact one and its terms", "[ops][reduce]") {
  using tunekit::ops::detail::differs_from_exact;
  using tunekit::ops::detail::ExactReduction;
  using tunekit::ops::detail::sum_tolerance;
  const auto reduction = [](ReduceOp op, const std::vector<float>& terms) {
    ExactReduction exact(op, 1, terms.size());
    exact.take(0, terms.data(), terms.size());
    return exact;
  };
  // A max is exact: the next float down is wrong, however close.
  const auto max = reduction(ReduceOp::max, {0.25, 0.75, -1});
  CHECK_FALSE(differs_from_exact(max, 0, 0.75f));
  const auto below = differs_from_exact(max, 0, std::nextafter(0.75f, 0.0f));
  REQUIRE(below);
  CHECK_THAT(*below, Catch::Contains("the exact max 0.75"));
  // Except below the normal range, where a device that flushes subnormals gives 0 or another
  // subnormal of the input; a normal result there, or 0 for a normal max, is still wrong.
  const float tiny = 2e-40f, tinier = 1e-40f;
  const auto subnormal = reduction(ReduceOp::max, {tinier, tiny, -1});
  CHECK_FALSE(differs_from_exact(subnormal, 0, tiny));
  CHECK_FALSE(differs_from_exact(subnormal, 0, 0.0f));
  CHECK_FALSE(differs_from_exact(subnormal, 0, tinier));
  CHECK(differs_from_exact(subnormal, 0, 1e-30f));
  CHECK(differs_from_exact(max, 0, 0.0f));

  // +-1 terms (the benchmark inputs of a sum): every order is exact, so one term dropped or
  // repeated is wrong, at any length up to 2^24 terms.
  std::vector<float> signs(std::size_t{1} << 20);
  for (std::size_t i = 0; i < signs.size(); ++i) signs[i] = (i * 2654435761u >> 7) % 3 ? 1 : -1;
  const auto whole = reduction(ReduceOp::sum, signs);
  CHECK(sum_tolerance(whole, 0) == 0);
  const auto sum = static_cast<float>(whole.value[0]);
  CHECK_FALSE(differs_from_exact(whole, 0, sum));
  CHECK_THAT(differs_from_exact(whole, 0, sum - 1).value_or(""),
             Catch::Contains("every order is exact"));
  CHECK(differs_from_exact(whole, 0, sum + 1));

  // Other terms (a caller's): a lane's run of additions, terms/32 of them, plus the tree.
  const auto tenths = reduction(ReduceOp::sum, std::vector<float>(std::size_t{1} << 16, 0.1f));
  const double allowed = sum_tolerance(tenths, 0);
  CHECK(allowed == Approx((2048 + 64) * 0x1p-24 * tenths.magnitude[0]));
  CHECK_FALSE(differs_from_exact(tenths, 0, static_cast<float>(tenths.value[0] + 0.9 * allowed)));
  CHECK_THAT(differs_from_exact(tenths, 0, static_cast<float>(tenths.value[0] + 1.5 * allowed))
                 .value_or(""),
             Catch::Contains("the exact sum") && Catch::Contains("allowed: within"));

  // A NaN or infinite exact result must be met as it is...
  const auto infinite = reduction(ReduceOp::sum, {INFINITY, 1});
  CHECK_FALSE(differs_from_exact(infinite, 0, INFINITY));
  CHECK(differs_from_exact(infinite, 0, 1.0f));
  CHECK(differs_from_exact(infinite, 0, NAN));
  const auto not_a_number = reduction(ReduceOp::sum, {NAN, 1});
  CHECK_FALSE(differs_from_exact(not_a_number, 0, NAN));
  CHECK(differs_from_exact(not_a_number, 0, 0.0f));
  // ...unless the finite terms pass float's range: a float partial sum may overflow, to an
  // infinity or, beside an infinite term, to NaN (inf + -inf), whatever the order.
  const auto huge = reduction(ReduceOp::sum, {3e38f, 3e38f, -3e38f, -2e38f});
  CHECK_FALSE(differs_from_exact(huge, 0, INFINITY));
  CHECK_FALSE(differs_from_exact(huge, 0, NAN));
  CHECK_FALSE(differs_from_exact(huge, 0, 1e38f));
  const auto infinite_and_huge = reduction(ReduceOp::sum, {INFINITY, 0, -3e38f, -3e38f});
  CHECK_FALSE(differs_from_exact(infinite_and_huge, 0, NAN));
  CHECK(differs_from_exact(reduction(ReduceOp::sum, {1e30f, 2e30f}), 0, INFINITY));
}

TEST_CASE("a validation's clear sets exactly its bytes to 0xFF", "[ops][opencl]") {
  auto& client = default_client();
  const std::size_t size = 100;
  const std::vector<unsigned char> before(size, 0x11);
  const auto check = [&](const ::cl::Buffer& buffer, std::size_t cleared) {
    const auto after = client.download<unsigned char>(buffer, size);
    for (std::size_t i = 0; i < size; ++i) {
      INFO("cleared " << cleared << ", byte " << i);
      REQUIRE(after[i] == (i < cleared ? 0xFF : 0x11));
    }
  };
  // None, a few, across 16-byte boundaries, and all but one.
  for (std::size_t cleared : {0, 1, 15, 16, 17, 33, 67, 99}) {
    const ::cl::Buffer buffer = client.upload(before);
    detail::clear_output(client, buffer, cleared);
    check(buffer, cleared);
  }
}

TEST_CASE("transpose's validator wants every element moved exactly", "[ops][transpose]") {
  using tunekit::ops::detail::transposed;
  using tunekit::ops::detail::transposition_problem;
  const std::vector<float> in{1, 2, 3, 4, 5, 6};  // 2 x 3
  const auto expected = transposed(in, 2, 3);
  CHECK(expected == std::vector<float>{1, 4, 2, 5, 3, 6});
  std::vector<float> out = expected;  // 3 x 2
  CHECK_FALSE(transposition_problem(expected, 2, out));
  out[3] = std::nextafter(5.0f, 6.0f);  // out(1, 1), one unit off
  const auto one = transposition_problem(expected, 2, out);
  REQUIRE(one);
  CHECK_THAT(*one, Catch::StartsWith("out(1, 1) is 5.0") && Catch::Contains("in(1, 1) is 5.0") &&
                       !Catch::Contains("elements wrong"));
  CHECK_THAT(transposition_problem(expected, 2, in).value_or(""),
             Catch::Contains("(4 elements wrong)"));     // not transposed: 4 of 6 misplaced
  CHECK(transposition_problem(expected, 2, {1, 4, 2}));  // short
  const std::vector<float> nan_in{NAN, 1};
  CHECK_FALSE(transposition_problem(transposed(nan_in, 1, 2), 1, nan_in));  // 1 x 2, 2 x 1
  // Larger than a 64 x 64 block, odd both ways.
  std::vector<float> big(131 * 67);
  for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<float>(i);
  const auto big_t = transposed(big, 131, 67);
  bool right = true;
  for (std::size_t r = 0; r < 131; ++r) {
    for (std::size_t c = 0; c < 67; ++c) right = right && big_t[c * 131 + r] == big[r * 67 + c];
  }
  CHECK(right);
}

TEST_CASE("a random sign matrix holds the signs of random_values, +-1", "[ops][reduce][opencl]") {
  auto& client = default_client();
  const auto values = tunekit::ops::random_values(3 * 77, 5);
  const auto signs =
      read_matrix(random_sign_matrix(client.context(), 3, 77, tunekit::DType::f32, 5));
  REQUIRE(signs.size() == values.size());
  bool same = true;
  for (std::size_t i = 0; i < values.size(); ++i) {
    same = same && signs[i] == (values[i] < 0 ? -1.0f : 1.0f);
  }
  CHECK(same);
}

TEST_CASE("reduce rejects empty input and a short output with clear messages",
          "[ops][reduce][opencl]") {
  auto& client = default_client();
  DeviceVector empty{client.allocate(4), 0};
  CHECK_THROWS_WITH(reduce(client, empty, ReduceOp::sum), Catch::Contains("empty"));
  const auto matrix = upload_matrix(client, tunekit::ops::random_values(6, 1), 3, 2);
  auto out = upload_vector(client, std::vector<float>(2, 0.0f));
  CHECK_THROWS_WITH(reduce_rows(client, matrix, ReduceOp::sum, out),
                    Catch::Contains("out holds 2 values for 3 rows"));
}

TEST_CASE("a size within a tile of 2^31 is refused to the tiled kernels, naming the limit",
          "[ops][transpose][matmul]") {
  // transpose's tiled and blocked kernels and matmul's tiled ones test r0 + TILE_M <= M and the
  // like in int: a size within a tile of 2^31 would wrap there and index past the buffers.
  using tunekit::ops::detail::require_tile_headroom;
  using tunekit::ops::detail::tile_headroom;
  constexpr std::uint64_t limit = 2147483647;
  CHECK_NOTHROW(require_tile_headroom(limit - tile_headroom, "the larger of rows and columns"));
  CHECK_THROWS_WITH(require_tile_headroom(limit - 4, "the larger of rows and columns"),
                    Catch::Contains("the larger of rows and columns plus a tile is 2147484667"));
  // A refusal of the call's inputs: a winner refusing them gets no strike (tuner.hpp, recover).
  try {
    require_tile_headroom(limit - 4, "the larger of rows and columns");
    FAIL("no refusal");
  } catch (const tunekit::AutotuneError& e) {
    CHECK(e.refused_inputs());
  }
}

TEST_CASE("every transpose candidate is exact on odd and edge-block sizes",
          "[ops][transpose][opencl]") {
  auto& client = default_client();
  const auto names = tunekit::ops::transpose_candidates();
  CHECK(names.size() == 12 + 192 + 18);  // naive, tiled (8 tile shapes), blocked
  // Edges of every block width (4, 8) and of the tiles: partial blocks on both sides; 68 x 136
  // (multiples of every vector width) has whole tiles, which take the vector paths, beside
  // partial ones.
  std::size_t exact = 0;
  for (auto [rows, cols] :
       {std::pair<std::size_t, std::size_t>{1, 1}, {37, 70}, {8, 13}, {64, 9}, {68, 136}}) {
    const auto values = tunekit::ops::random_values(rows * cols, rows * 7 + cols);
    const auto in = upload_matrix(client, values, rows, cols);
    for (std::size_t i = 0; i < names.size(); ++i) {
      // Every blocked candidate, a sample of the others (their kernels are shared by all sizes).
      if (names[i].rfind("blocked[", 0) != 0 && i % 5 != 0) continue;
      INFO(names[i] << " on " << rows << "x" << cols);
      auto out = upload_matrix(client, std::vector<float>(rows * cols, -1.0f), cols, rows);
      try {
        tunekit::ops::transpose_with(names[i], client, in, out);
      } catch (const tunekit::AutotuneError& e) {
        // A candidate this device's limits rule out (the kernel's own work-group maximum can be
        // below the device's: 256 for some kernels on NVIDIA) fails before launch, as the op's
        // tuning would record it; it cannot be checked for exactness here.
        INFO(e.what());
        REQUIRE(e.kind() == tunekit::ErrorKind::out_of_resources);
        CHECK(e.beyond_device_limits());  // a work-group or local memory past the limits
        continue;
      }
      const auto got = download_matrix(client, out);
      std::size_t wrong = 0;
      for (std::size_t r = 0; r < rows; ++r)
        for (std::size_t c = 0; c < cols; ++c) wrong += got[c * rows + r] != values[r * cols + c];
      CHECK(wrong == 0);
      ++exact;
    }
  }
  // Work-groups of one item (blocked[BLK=4|8,LX=1,LY=1]) fit every device: never an empty check.
  CHECK(exact >= 2 * 4);
  const auto in = upload_matrix(client, tunekit::ops::random_values(6, 1), 2, 3);
  auto out = upload_matrix(client, tunekit::ops::random_values(6, 1), 3, 2);
  CHECK_THROWS_WITH(tunekit::ops::transpose_with("blocked[BLK=3]", client, in, out),
                    Catch::Contains("no candidate named 'blocked[BLK=3]'"));
}

TEST_CASE("transpose is exact for square, tall, wide and odd matrices",
          "[ops][transpose][opencl]") {
  tunekit::test::quick_tuning();
  auto& client = default_client();
  for (auto [rows, cols] :
       {std::pair<std::size_t, std::size_t>{1, 1}, {64, 64}, {1000, 3}, {3, 1000}, {129, 257}}) {
    INFO(rows << "x" << cols);
    const auto values = tunekit::ops::random_values(rows * cols, rows * 31 + cols);
    const auto in = upload_matrix(client, values, rows, cols);
    auto out = upload_matrix(client, std::vector<float>(rows * cols, 0.0f), cols, rows);
    transpose(client, in, out);
    const auto got = download_matrix(client, out);
    bool exact = true;
    for (std::size_t r = 0; r < rows && exact; ++r)
      for (std::size_t c = 0; c < cols; ++c)
        exact = exact && got[c * rows + r] == values[r * cols + c];
    CHECK(exact);
  }
  const auto in = upload_matrix(client, tunekit::ops::random_values(6, 1), 2, 3);
  auto wrong = upload_matrix(client, tunekit::ops::random_values(6, 1), 2, 3);
  CHECK_THROWS_WITH(transpose(client, in, wrong), Catch::Contains("out is 2x3"));
}

TEST_CASE("a transpose whose sizes are not whole vectors is tuned apart, on a shape of its kind",
          "[ops][transpose][opencl]") {
  tunekit::test::quick_tuning();
  auto& client = default_client();
  CHECK(transpose_vector_width(64, 128) == 4);
  CHECK(transpose_vector_width(62, 100) == 2);
  CHECK(transpose_vector_width(64, 65) == 1);
  CHECK(transpose_vector_width(1, 1) == 1);
  // 64 x 128, 62 x 100 and 63 x 65 share their anchors (64 x 128) but not their kernels' paths:
  // three keys. Each is timed on the anchors with its rows brought down to its vector width
  // (the timed bytes are the metric's GB/s times the median), never on the aligned 64 x 128.
  struct Case {
    std::size_t rows, cols, timed_rows;
  };
  for (const Case& c : {Case{64, 128, 64}, Case{62, 100, 62}, Case{63, 65, 63}}) {
    INFO(c.rows << "x" << c.cols);
    const auto key = transpose_key(c.rows, c.cols);
    CHECK(key.rows.value() == 64);
    CHECK(key.cols.value() == 128);
    const auto values = tunekit::ops::random_values(c.rows * c.cols, c.rows + c.cols);
    const auto in = upload_matrix(client, values, c.rows, c.cols);
    auto out = upload_matrix(client, std::vector<float>(c.rows * c.cols, 0.0f), c.cols, c.rows);
    transpose(client, in, out);
    const auto got = download_matrix(client, out);
    std::size_t wrong = 0;
    for (std::size_t r = 0; r < c.rows; ++r)
      for (std::size_t col = 0; col < c.cols; ++col)
        wrong += got[col * c.rows + r] != values[r * c.cols + col];
    CHECK(wrong == 0);
    const auto report = transpose_tuner().tuner(client.id()).report(key);
    REQUIRE(report);
    const auto* winner = report->winner();
    REQUIRE(winner != nullptr);
    REQUIRE(winner->metrics.size() == 1);
    CHECK(winner->metrics[0] * 1e9 * winner->median ==
          Approx(8.0 * double(c.timed_rows) * 128).epsilon(1e-9));
  }
  const auto text = [](std::size_t rows, std::size_t cols) {
    return tunekit::key_to_string(transpose_key(rows, cols));
  };
  CHECK(text(64, 128) == "rows=64 cols=128 vector_width=4");
  CHECK(text(62, 100) == "rows=64 cols=128 vector_width=2");
  CHECK(text(63, 65) == "rows=64 cols=128 vector_width=1");
}

TEST_CASE("absurd sizes are refused before any allocation or launch, naming the limit",
          "[ops][transpose][opencl]") {
  auto& client = default_client();
  // 3 x 6148914691236517206 elements wrap around to 2 in 64 bits: a tiny buffer, then a kernel
  // that indexed far past it.
  const std::size_t huge = 6148914691236517206u;
  CHECK_THROWS_WITH(random_matrix(client.context(), 3, huge, tunekit::DType::f32, 1),
                    Catch::Contains("32-bit") && Catch::Contains("2147483647"));
  CHECK_THROWS_WITH(checked_matrix_bytes(2147483648u, 1, tunekit::DType::f32, "A"),
                    Catch::Contains("32-bit") && Catch::Contains("2147483647"));
  // More than 2^31 elements is not refused here: kernels with 64-bit offsets serve it.
  CHECK(checked_matrix_bytes(65536, 65536, tunekit::DType::f32, "A") == 65536ull * 65536 * 4);
  CHECK(checked_matrix_bytes(46340, 46340, tunekit::DType::f16, "A") == 46340ull * 46340 * 2);
  // A matrix that claims more than its buffer holds.
  DeviceMatrix in{client.allocate(4 * 6), 3, huge, tunekit::DType::f32};
  DeviceMatrix out{client.allocate(4 * 6), huge, 3, tunekit::DType::f32};
  CHECK_THROWS_WITH(transpose(client, in, out), Catch::Contains("32-bit"));
  in.cols = out.rows = 1000;
  CHECK_THROWS_WITH(transpose(client, in, out), Catch::Contains("but its buffer holds 24 bytes"));
  // Larger than the device's largest buffer: a clear error, not std::bad_alloc.
  const auto device = client.context().getInfo<CL_CONTEXT_DEVICES>().at(0);
  const std::size_t largest = device.getInfo<CL_DEVICE_MAX_MEM_ALLOC_SIZE>();
  CHECK_THROWS_WITH(check_allocation(device, largest + 1, "the input"),
                    Catch::Contains("CL_DEVICE_MAX_MEM_ALLOC_SIZE"));
}

// Run by ctest with POCL_MEMORY_LIMIT=1 (1 GiB of device memory, 256 MiB per allocation): the
// input is 2049 x 16385 (134 MB), its benchmark twin 4095 x 32768 (537 MB) exceeds the maximum
// allocation, so the tuning runs on the caller's own input with a fresh output, and the call is
// served (on the anchored twin every candidate failed with CL_INVALID_BUFFER_SIZE).
TEST_CASE("transpose tunes on the caller's input when its anchored twin does not fit the device",
          "[.][small-memory]") {
  tunekit::test::fewest_measurements();
  auto& client = default_client();
  const std::size_t rows = 2049, cols = 16385;
  REQUIRE(client.device().max_allocation < std::uint64_t{4095} * 32768 * sizeof(float));
  const auto values = tunekit::ops::random_values(rows * cols, 7);
  const auto in = upload_matrix(client, values, rows, cols);
  auto out = upload_matrix(client, std::vector<float>(rows * cols, 0.0f), cols, rows);
  {
    tunekit::test::CapturedWarnings warnings;
    transpose(client, in, out);
    CHECK_THAT(warnings.text(), Catch::Contains("the random benchmark inputs do not fit") &&
                                    Catch::Contains("tuning on the caller's own inputs instead"));
  }
  const auto got = download_matrix(client, out);
  std::size_t wrong = 0;
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t c = 0; c < cols; ++c) wrong += got[c * rows + r] != values[r * cols + c];
  CHECK(wrong == 0);
}

TEST_CASE("the size check counts the caller's buffers beside the benchmark inputs",
          "[ops][opencl]") {
  using tunekit::ops::detail::DeviceMemory;
  using tunekit::ops::detail::Footprint;
  using tunekit::ops::detail::misfit;
  const DeviceMemory device{400, 1000};  // half of it: 500 bytes
  const auto inputs = [](std::vector<std::optional<std::uint64_t>> sizes, std::uint64_t sets = 1) {
    return Footprint{std::move(sizes), sets, 0, 0};
  };
  CHECK_FALSE(misfit(device, inputs({300, 100}), 0));
  CHECK_FALSE(misfit(device, inputs({300, 100}), 100));
  // The inputs alone fit; with the caller's 200 bytes already on the device they do not.
  const auto why = misfit(device, inputs({300, 100}), 200);
  REQUIRE(why);
  CHECK_THAT(*why, Catch::Contains("benchmark inputs' 400 bytes") &&
                       Catch::Contains("the caller's 200 bytes") &&
                       Catch::Contains("(1000 bytes)"));
  CHECK_THAT(
      misfit(device, inputs({401}), 0).value_or(""),
      Catch::Contains("a buffer of 401 bytes exceeds the device's maximum allocation of 400"));
  CHECK_THAT(misfit(device, inputs({std::nullopt}), 0).value_or(""), Catch::Contains("64 bits"));
  CHECK(misfit(device, inputs({400, 400}), 0));    // together past half, each within the allocation
  CHECK(misfit(device, inputs({1}), UINT64_MAX));  // no overflow
  // Every set a tuning holds at once counts: one set of 200 fits, two sets with 150 of the
  // caller's do not.
  CHECK_FALSE(misfit(device, inputs({200}, 2), 100));
  CHECK_THAT(misfit(device, inputs({200}, 2), 150).value_or(""),
             Catch::Contains("benchmark inputs' 400 bytes (2 sets)"));
  CHECK(misfit(device, inputs({400}, UINT64_MAX), 0));  // no overflow
  // A buffer the caller passes twice (matmul(a, a, c)) is on the device once.
  auto& client = default_client();
  const auto a = upload_vector(client, std::vector<float>(64, 1.0f));
  const auto b = upload_vector(client, std::vector<float>(16, 1.0f));
  CHECK(tunekit::ops::detail::device_bytes({&a.buffer, &b.buffer, &a.buffer}) ==
        80 * sizeof(float));
}

TEST_CASE(
    "the size check counts the host copies: inputs made, outputs read back, and inputs "
    "that live in host memory",
    "[ops][opencl]") {
  using tunekit::ops::detail::Footprint;
  using tunekit::ops::detail::host_misfit;
  // Two sets of 300 bytes; 100 bytes held while an input is made, 250 while validating.
  const Footprint footprint{{200, 100}, 2, 100, 250};
  // A GPU: only the larger of making and validating is on the host at once.
  CHECK_FALSE(host_misfit(footprint, false, 250));
  CHECK_THAT(host_misfit(footprint, false, 249).value_or(""),
             Catch::Contains("needs 250 bytes of host memory") &&
                 Catch::Contains("making an input 100, validating 250") &&
                 Catch::Contains("more than the 249 available"));
  // A CPU device: both sets of inputs live in host memory too.
  CHECK_FALSE(host_misfit(footprint, true, 850));
  CHECK_THAT(host_misfit(footprint, true, 849).value_or(""),
             Catch::Contains("needs 850 bytes") && Catch::Contains("inputs live there"));
  CHECK(host_misfit(Footprint{{UINT64_MAX / 2}, 4, 0, 0}, true, UINT64_MAX));  // no overflow
  CHECK(host_misfit(Footprint{{1}, 1, std::nullopt, 0}, false, UINT64_MAX));
  // On this device: a tuning whose inputs fit it but whose host copy cannot be made.
  auto& client = default_client();
  const Footprint host_heavy{{64}, 2, std::uint64_t{1} << 62, 0};
  CHECK_THAT(tunekit::ops::detail::misfit(client.context(), host_heavy, {}).value_or(""),
             Catch::Contains("bytes of host memory"));
  CHECK_FALSE(tunekit::ops::detail::misfit(client.context(), Footprint{{64}, 2, 64, 64}, {}));
  // The ops' estimates: making a random 16-bit input holds its floats and its halves.
  CHECK(tunekit::ops::detail::host_bytes_to_make(10, tunekit::DType::f16) == 60);
  CHECK(tunekit::ops::detail::host_bytes_to_make(10, tunekit::DType::f32) == 40);
  CHECK(tunekit::ops::detail::bytes_to_make(2, 5, tunekit::DType::f16) == 60);
  CHECK_FALSE(tunekit::ops::detail::bytes_to_make(UINT64_MAX, 2, tunekit::DType::f32));
}

TEST_CASE("a key's benchmark inputs come from one source for all its input sets", "[ops][opencl]") {
  using tunekit::ops::detail::input_source;
  using tunekit::ops::detail::InputSource;
  int chosen = 0;
  const auto choose = [&] {
    ++chosen;
    return InputSource::callers;
  };
  CHECK(input_source("an op", "key 1", choose) == InputSource::callers);
  // The reference's set, made later in the same tuning: the same source, not chosen again
  // (memory that changed in between must not give it other data than the shared set).
  CHECK(input_source("an op", "key 1", [] { return InputSource::random; }) == InputSource::callers);
  CHECK(chosen == 1);
  CHECK(input_source("an op", "key 2", [] { return InputSource::random; }) == InputSource::random);
}

// Run by ctest with POCL_MEMORY_LIMIT=1 (1 GiB of device memory, 256 MiB per allocation): a
// reduce of 2^26 values (256 MiB, its own anchor) has random benchmark inputs that fit the
// device alone (256 MiB of the 512 the check allows) but not beside the caller's 256 MiB: the
// tuning runs on the caller's input, and says why, naming both sizes.
TEST_CASE("reduce tunes on the caller's input when its benchmark input fits only without it",
          "[.][small-memory]") {
  tunekit::test::fewest_measurements();
  auto& client = default_client();
  const std::size_t n = std::size_t{1} << 26;
  REQUIRE(client.device().max_allocation >= n * sizeof(float));
  const auto values = tunekit::ops::random_values(n, 11);
  const auto input = upload_vector(client, values);
  float got = 0;
  {
    tunekit::test::CapturedWarnings warnings;
    got = reduce(client, input, ReduceOp::max);
    CHECK_THAT(warnings.text(),
               Catch::Contains("the random benchmark inputs do not fit") &&
                   Catch::Contains("and the caller's 268435460 bytes already on the device") &&
                   Catch::Contains("tuning on the caller's own inputs instead"));
  }
  CHECK(got == *std::max_element(values.begin(), values.end()));
}

// Run by ctest with POCL_MEMORY_LIMIT=1 (1 GiB of device memory; the check allows 512 MiB): a
// reduce of 2^25 + 1 values (128 MiB) anchors to 2^26 (256 MiB). Validated on the host, its
// tuning holds one set of random inputs, which fits beside the caller's 128 MiB: it tunes on
// them and says nothing. (With a second set for a reference candidate, 640 MiB, it did not fit.)
TEST_CASE("a reduce validated on the host holds one set of benchmark inputs", "[.][small-memory]") {
  tunekit::test::fewest_measurements();
  auto& client = default_client();
  const std::size_t n = (std::size_t{1} << 25) + 1;
  REQUIRE(client.device().global_memory <= std::uint64_t{1} << 30);
  const auto values = tunekit::ops::random_values(n, 12);
  const auto input = upload_vector(client, values);
  float got = 0;
  {
    tunekit::test::CapturedWarnings warnings;
    got = reduce(client, input, ReduceOp::sum);
    CHECK_THAT(warnings.text(), !Catch::Contains("do not fit"));
  }
  double exact = 0, magnitude = 0;
  for (const float v : values) {
    exact += v;
    magnitude += std::fabs(v);
  }
  CHECK(std::fabs(got - exact) <= 1e-4 * magnitude);
}

TEST_CASE("an output that overlaps an input through a sub-buffer is refused",
          "[ops][transpose][opencl]") {
  tunekit::test::quick_tuning();
  auto& client = default_client();
  // 64x64 floats (16 KiB) at offsets that are multiples of 4 KiB: aligned on every device.
  constexpr std::size_t n = 64, bytes = n * n * sizeof(float);
  ::cl::Buffer parent(client.context(), CL_MEM_READ_WRITE, 2 * bytes);
  const auto part = [&](std::size_t offset) {
    cl_buffer_region region{offset, bytes};
    return DeviceMatrix{
        parent.createSubBuffer(CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &region), n, n,
        tunekit::DType::f32};
  };
  const auto values = tunekit::ops::random_values(n * n, 7);
  DeviceMatrix in = part(0);
  client.write(in.buffer, values.data(), bytes);
  DeviceMatrix overlapping = part(bytes / 2);
  CHECK_THROWS_WITH(transpose(client, in, overlapping),
                    Catch::Contains("out overlaps in") && Catch::Contains("sub-buffer"));
  // The parent under a sub-buffer of it: overlapping too.
  DeviceMatrix whole{parent, n, n, tunekit::DType::f32};
  CHECK_THROWS_WITH(transpose(client, in, whole), Catch::Contains("out overlaps in"));
  CHECK_THROWS_WITH(transpose(client, whole, in), Catch::Contains("out overlaps in"));
  // Disjoint parts of one buffer are fine, and exact.
  DeviceMatrix after = part(bytes);
  transpose(client, in, after);
  const auto got = download_matrix(client, after);
  bool exact = true;
  for (std::size_t r = 0; r < n; ++r)
    for (std::size_t c = 0; c < n; ++c) exact = exact && got[c * n + r] == values[r * n + c];
  CHECK(exact);
}
