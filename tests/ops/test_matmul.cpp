// The matmul op on the default OpenCL device (PoCL here): its tuning, keys, validation bound and
// argument checks, against a host reference in double precision on random non-zero inputs. The
// candidates' kernels one by one: test_matmul_kernels.cpp.
#include <array>
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <thread>
#include <tunekit/cl.hpp>
#include <tunekit/local_tuner.hpp>
#include <tunekit/ops/matmul.hpp>
#include <tunekit/ops/reduce.hpp>
#include <tunekit/ops/transpose.hpp>

#include "matmul_support.hpp"
#include "ops_support.hpp"

using namespace tunekit;
using namespace tunekit::ops;
using tunekit::test::Problem;
using tunekit::test::run_and_check;
using tunekit::test::worse_error;

namespace {
// Whether a tuning got to `outcome`'s candidate: measured it, or found it past the device's
// limits (a smaller device rules out a start point or a family: it was tried all the same).
bool reached(const tunekit::AutotuneOutcome& outcome) {
  return outcome.status != tunekit::OutcomeStatus::skipped ||
         (outcome.error && outcome.error->beyond_device_limits());
}
}  // namespace

TEST_CASE(
    "matmul's GFLOP/s is the rate of the shape the tuning timed, the call's, also where the key "
    "names a class of shapes",
    "[ops][matmul][opencl]") {
  tunekit::cl::Client& client = test::default_client();
  // 65 x 130 x 70 is timed as itself; its key's smallest shape is 65 x 129 x 65.
  for (const Problem p : {Problem{64, 128, 32}, Problem{65, 130, 70}}) {
    INFO("m=" << p.m << " n=" << p.n << " k=" << p.k);
    CHECK(run_and_check(client, "", p, DType::f32, 1.0f, 0.0f) < 1e-5);
    const auto report =
        matmul_tuner().tuner(client.id()).report(matmul_key(p.m, p.n, p.k, DType::f32));
    REQUIRE(report);
    REQUIRE(report->metric_names == std::vector<std::string>{"GFLOP/s"});
    std::size_t working = 0;
    for (const auto& outcome : report->outcomes) {
      if (!outcome.ok()) continue;
      ++working;
      REQUIRE(outcome.metrics.size() == 1);
      CHECK(outcome.metrics[0] ==
            Approx(2.0 * double(p.m) * double(p.n) * double(p.k) / outcome.median * 1e-9));
    }
    CHECK(working > 0);
  }
}

TEST_CASE(
    "a caller that allows TF32 has its own matmul key, and the tuned product it gets is within "
    "TF32's bound",
    "[ops][matmul][opencl]") {
  const auto ieee = matmul_key(256, 256, 256, DType::f32);
  const auto tf32 = matmul_key(256, 256, 256, DType::f32, MatmulMath::tf32);
  CHECK_FALSE(KeyEqual{}(ieee, tf32));
  CHECK(key_to_string(tf32) ==
        "m=256 n=256 k=256 m_fit=pow2 n_fit=pow2 k_fit=pow2 dtype=f32 "
        "math=tf32");
  // 16-bit storage has no TF32 choice: one key either way.
  CHECK(KeyEqual{}(matmul_key(256, 256, 256, DType::f16, MatmulMath::tf32),
                   matmul_key(256, 256, 256, DType::f16)));
  // A tuning under the TF32 key, N and K multiples of 4 in every size of their classes (80:
  // m16_low, 64: pow2), so the tf32 family is in it. On a device without tensor cores the IEEE
  // families serve it.
  tunekit::cl::Client& client = test::default_client();
  const auto& device = client.device();
  const bool capable = device.nvidia && device.compute_capability_at_least(8, 0);
  CHECK(run_and_check(client, "", {96, 80, 64}, DType::f32, 1.0f, 0.0f, MatmulMath::tf32) <
        0x1p-10);
  const auto report = matmul_tuner()
                          .tuner(client.id())
                          .report(matmul_key(96, 80, 64, DType::f32, MatmulMath::tf32));
  REQUIRE(report);
  REQUIRE(report->winner());
  // The tf32 family was measured where the device has tensor cores, else refused for the
  // device: for want of them, or, on a device of smaller work-groups, for its limits (checked
  // first); never by a build tried where the family cannot run.
  std::size_t tf32_ok = 0, tf32_refused = 0, tf32_no_tensor_cores = 0, tf32_other = 0;
  for (const auto& outcome : report->outcomes) {
    if (outcome.name.rfind("tf32[", 0) != 0) continue;
    const bool refused = outcome.error && outcome.error->beyond_device_limits();
    tf32_ok += outcome.ok();
    tf32_refused += refused;
    tf32_no_tensor_cores +=
        refused && std::string(outcome.error->what()).find("compute capability 8.0 or higher") !=
                       std::string::npos;
    tf32_other += outcome.status == OutcomeStatus::failed && !refused;
  }
  if (capable) {
    CHECK(tf32_ok > 0);
  } else {
    CHECK(tf32_ok == 0);
    CHECK(tf32_other == 0);
    CHECK(tf32_refused > 0);
    if (tf32_no_tensor_cores == 0) WARN("every tf32 candidate was past this device's limits");
  }
}

TEST_CASE(
    "with TF32 the validator also accepts the sum of tf32_rounded products: an emulated TF32 "
    "product passes on random and on same-sign inputs, a dropped k8 step matches neither sum",
    "[ops][matmul]") {
  // cvt.rna.tf32.f32: nearest, ties away from zero, 10 mantissa bits.
  CHECK(tf32_rounded(1.0f) == 1.0f);
  CHECK(tf32_rounded(1.0f + 0x1p-11f) == 1.0f + 0x1p-10f);    // a tie: away from zero
  CHECK(tf32_rounded(-1.0f - 0x1p-11f) == -1.0f - 0x1p-10f);  // the same below zero
  CHECK(tf32_rounded(1.0f + 0x1p-12f) == 1.0f);               // below the tie: down
  CHECK(std::isnan(tf32_rounded(std::numeric_limits<float>::quiet_NaN())));
  CHECK(std::isinf(tf32_rounded(std::numeric_limits<float>::infinity())));
  // What a TF32 kernel computes for one element: rounded inputs, exact products, f32 sums.
  const auto tf32_kernel = [](const float* a, const float* b, std::size_t k) {
    float sum = 0;
    for (std::size_t p = 0; p < k; ++p) sum += tf32_rounded(a[p]) * tf32_rounded(b[p]);
    return sum;
  };
  const auto reference = [](const float* a, const float* b, std::size_t k) {
    double sum = 0;
    for (std::size_t p = 0; p < k; ++p)
      sum += static_cast<double>(tf32_rounded(a[p])) * tf32_rounded(b[p]);
    return sum;
  };
  constexpr std::size_t k = 4096;
  const auto a = random_values(64 * k, 11), b = random_values(64 * k, 12);
  const double bound = matmul_tolerance(k, DType::f32);
  std::size_t caught = 0, large_drops = 0;
  for (std::size_t e = 0; e < 64; ++e) {
    const float* ae = a.data() + e * k;
    const float* be = b.data() + e * k;
    CHECK(std::fabs(tf32_kernel(ae, be, k) - reference(ae, be, k)) <= bound);
    // A kernel that drops the last 8 terms misses their sum: about sqrt(8) / 3 here.
    // The validator accepts either reference (an IEEE kernel serves TF32 keys too): such a
    // kernel must be far from both.
    double exact = 0;
    for (std::size_t p = 0; p < k; ++p) exact += static_cast<double>(ae[p]) * be[p];
    const double short_sum = tf32_kernel(ae, be, k - 8);
    const double dropped =
        std::min(std::fabs(short_sum - reference(ae, be, k)), std::fabs(short_sum - exact));
    if (std::fabs(reference(ae + k - 8, be + k - 8, 8)) > 0.01) {
      ++large_drops;
      if (dropped > bound) ++caught;
    }
  }
  CHECK(large_drops > 50);
  CHECK(caught == large_drops);
  // Same-sign inputs, where TF32's rounding errors all lean one way (0.1 rounds down): the old
  // statistical bound (8 sigma of independent errors) rejected this right product.
  const std::vector<float> tenths(16384, 0.1f);
  const double exact = 16384 * 0.1 * 0.1;
  const double with_tf32 = reference(tenths.data(), tenths.data(), tenths.size());
  CHECK(std::fabs(with_tf32 - exact) > 0.05);  // TF32 really moves it
  CHECK(std::fabs(tf32_kernel(tenths.data(), tenths.data(), tenths.size()) - with_tf32) <=
        matmul_tolerance(16384, DType::f32) * std::max(1.0, with_tf32 / 16384));
}

TEST_CASE(
    "matmul_key refuses a math that is neither ieee nor tf32 (a cast integer) as an invalid key, "
    "also for 16-bit storage, whose keys drop the math",
    "[ops][matmul]") {
  for (const DType dtype : {DType::f32, DType::f16, DType::bf16}) {
    INFO(to_string(dtype));
    try {
      (void)matmul_key(256, 256, 256, dtype, static_cast<MatmulMath>(2));
      FAIL("matmul_key made a key of an unknown math");
    } catch (const AutotuneError& e) {
      CHECK(e.kind() == ErrorKind::invalid_key);
      CHECK_THAT(e.what(), Catch::Contains("math 2 is neither ieee nor tf32"));
    }
  }
  CHECK_NOTHROW(matmul_key(256, 256, 256, DType::f16, MatmulMath::tf32));
}

TEST_CASE(
    "matmul's key holds each size's fit to its anchor, its work is its smallest call's, and "
    "every_size_multiple_of names the classes whose sizes are all multiples of a step",
    "[ops][matmul]") {
  CHECK(key_to_string(matmul_key(513, 1025, 2049, DType::f32)) ==
        "m=1024 n=2048 k=4096 m_fit=other_low n_fit=other_low k_fit=other_low dtype=f32 "
        "math=ieee");
  CHECK(key_to_string(matmul_key(2048, 768, 3072, DType::f32)) ==
        "m=2048 n=1024 k=4096 m_fit=pow2 n_fit=m16_low k_fit=m16_low dtype=f32 math=ieee");
  CHECK(key_to_string(matmul_key(1023, 11008, 14336, DType::f32)) ==
        "m=1024 n=16384 k=16384 m_fit=other_high n_fit=m16_low k_fit=m16_high dtype=f32 "
        "math=ieee");
  // 1023 and 997 share a key (one tuning); 1024, a power of two, has its own.
  const auto key = matmul_key(1023, 997, 1, DType::f32);
  CHECK_FALSE(KeyEqual{}(key, matmul_key(1024, 997, 1, DType::f32)));
  CHECK(KeyEqual{}(key, matmul_key(769, 1000, 1, DType::f32)));
  CHECK(key.smallest() == std::array<std::uint64_t, 3>{769, 769, 1});
  // One past a power of two and one below the next share an anchor, not a key.
  CHECK_FALSE(KeyEqual{}(matmul_key(1025, 1025, 1025, DType::f32),
                         matmul_key(2047, 2047, 2047, DType::f32)));
  CHECK(matmul_key(1025, 1025, 1025, DType::f32).smallest() ==
        std::array<std::uint64_t, 3>{1025, 1025, 1025});
  CHECK(matmul_key(2047, 640, 14000, DType::f32).smallest() ==
        std::array<std::uint64_t, 3>{1537, 513, 12289});
  CHECK(matmul_key(2048, 2048, 2048, DType::f32).smallest() ==
        std::array<std::uint64_t, 3>{2048, 2048, 2048});  // powers of two: exact
  CHECK(matmul_key(2048, 768, 3072, DType::f32).work().flops == 2.0 * 2048 * 513 * 2049);
  // The edges of the halves: 3/4 of the anchor is low, one past it high.
  CHECK(dim_fit(1536) == DimFit::m16_low);
  CHECK(dim_fit(1537) == DimFit::other_high);
  CHECK(dim_fit(1552) == DimFit::m16_high);
  CHECK(dim_fit(1025) == DimFit::other_low);
  CHECK(dim_fit(3) == DimFit::other_low);
  CHECK(dim_fit(7) == DimFit::other_high);
  // No size of a class is below its smallest_size, and the smallest of each class is reached:
  // a roofline from work() never exceeds what a call of the key does.
  std::size_t below = 0;
  std::map<std::pair<std::uint64_t, DimFit>, std::uint64_t> least;
  for (std::uint64_t size = 1; size <= 70000; ++size) {
    const DimFit fit = dim_fit(size);
    below += size < smallest_size(anchor(size), fit);
    least.try_emplace({anchor(size), fit}, size);
  }
  CHECK(below == 0);
  for (const auto& [class_, size] : least) {
    INFO("anchor " << class_.first << " " << class_.second);
    CHECK(size - smallest_size(class_.first, class_.second) < 16);  // m16: the next multiple
  }
  // every_size_multiple_of is true exactly for the classes all of whose sizes are multiples of
  // the step (what the staged family's program and the tf32 group rely on for every call).
  for (const std::uint64_t step : {4u, 8u, 16u}) {
    std::map<std::pair<std::uint64_t, DimFit>, bool> all_multiples;
    for (std::uint64_t size = 1; size <= 70000; ++size) {
      auto [entry, fresh] = all_multiples.try_emplace({anchor(size), dim_fit(size)}, true);
      entry->second = entry->second && size % step == 0;
    }
    std::size_t wrong = 0;
    for (const auto& [class_, all] : all_multiples) {
      wrong += every_size_multiple_of(class_.first, class_.second, step) != all;
    }
    INFO("step " << step);
    CHECK(wrong == 0);
  }
}

TEST_CASE(
    "the tuned matmul measures the skinny family for M <= 64, split K (blocked and staged) for "
    "long K only, staged for every f32 key and no 16-bit one, narrow staged tiles for few columns",
    "[ops][matmul][opencl]") {
  tunekit::cl::Client& client = test::default_client();
  test::quick_tuning();
  // Split K is measured for K above M and N with C small (20 x 30 x 700), for 32-64 rows
  // with K at least 16 times the rows (40 x 1000 x 700: the key's m = 64, k = 1024), and for K
  // as long as a one-past-a-power-of-two M or N (65 x 130 x 130: anchors 128, 256, 256), and for
  // K as long as a thin C of few tiles (60 x 250 x 250: anchors 64, 256, 256); not for
  // 65 x 130 x 70 or 3 x 130 x 70 (K below N, and too few rows or K too short), nor for
  // 64 x 128 x 70 or 48 x 96 x 70 (anchors 64, 128, 128: K as long as C's long side, but under
  // four times its short one).
  // The staged family is measured for every f32 key, M and N multiples of 4 or not, and its
  // split form where split is (on a device without cp.async their candidates fail unbuilt).
  // Its narrow tiles are measured where M's anchor is at least 8 times N's, N's at most 256:
  // 600 x 20 x 70 (anchors 1024 and 32) and 1100 x 130 x 70 (2048 and 256), not 1000 x 130 x 70
  // (1024 against 256) nor 3000 x 300 x 70 (N's anchor 512).
  struct Case {
    Problem problem;
    bool split;
    bool narrow;
  };
  for (const auto& [p, split, narrow] :
       {Case{{3, 130, 70}, false, false}, Case{{65, 130, 70}, false, false},
        Case{{20, 30, 700}, true, false}, Case{{40, 1000, 700}, true, false},
        Case{{65, 130, 130}, true, false}, Case{{60, 250, 250}, true, false},
        Case{{64, 128, 70}, false, false}, Case{{48, 96, 70}, false, false},
        Case{{600, 20, 70}, false, true}, Case{{1100, 130, 70}, false, true},
        Case{{1000, 130, 70}, false, false}, Case{{3000, 300, 70}, false, false}}) {
    INFO("m=" << p.m << " n=" << p.n << " k=" << p.k);
    CHECK(run_and_check(client, "", p, DType::f32, 1.0f, 0.0f) < 1e-5);
    const auto report =
        matmul_tuner().tuner(client.id()).report(matmul_key(p.m, p.n, p.k, DType::f32));
    REQUIRE(report);
    std::map<std::string, std::size_t> candidates, measured;
    for (const auto& outcome : report->outcomes) {
      const auto family = outcome.name.substr(0, outcome.name.find('['));
      ++candidates[family];
      measured[family] += reached(outcome);
    }
    CHECK(candidates["skinny"] == 270);
    CHECK((measured["skinny"] > 0) == (p.m <= 64));
    CHECK((measured["split"] > 0) == split);
    CHECK((measured["staged_split"] > 0) == split);
    CHECK(measured["staged"] > 0);
    CHECK((measured["staged_narrow"] > 0) == narrow);
  }
  // 16-bit storage: the staged families (f32 only) are skipped, not run.
  CHECK(run_and_check(client, "", {64, 128, 70}, DType::f16, 1.0f, 0.0f) < 2e-3);
  const auto half = matmul_tuner().tuner(client.id()).report(matmul_key(64, 128, 70, DType::f16));
  REQUIRE(half);
  std::size_t staged_run = 0;
  for (const auto& outcome : half->outcomes) {
    staged_run +=
        outcome.name.rfind("staged", 0) == 0 && outcome.status != tunekit::OutcomeStatus::skipped;
  }
  CHECK(staged_run == 0);
}

TEST_CASE("the tuned matmul picks a working kernel and computes the right product",
          "[ops][matmul][opencl]") {
  tunekit::cl::Client& client = test::default_client();
  test::quick_tuning();
  CHECK(run_and_check(client, "", {100, 75, 50}, DType::f32, 1.0f, 0.0f) < 1e-5);
  const auto report = matmul_tuner().tuner(client.id()).report(matmul_key(100, 75, 50, DType::f32));
  REQUIRE(report);
  REQUIRE(report->winner());
  std::size_t starts_measured = 0;
  for (const auto& outcome : report->outcomes) {
    INFO(outcome.name << ": " << (outcome.error ? outcome.error->what() : ""));
    if (outcome.error) CHECK(outcome.error->kind() != ErrorKind::wrong_output);
    // The blocked family's start points (the H100's best) are measured even by a quick tuning.
    if ((outcome.name == "blocked[MWG=128,NWG=128,KWG=16,MDIMC=8,NDIMC=32,VWM=4,VWN=4,VW=4,DB=1]" ||
         outcome.name == "blocked[MWG=128,NWG=64,KWG=16,MDIMC=16,NDIMC=8,VWM=4,VWN=4,VW=4,DB=1]") &&
        reached(outcome)) {
      ++starts_measured;
    }
  }
  CHECK(starts_measured == 2);
}

TEST_CASE("matmul rejects shapes that do not fit with a clear message", "[ops][matmul][opencl]") {
  tunekit::cl::Client& client = test::default_client();
  auto a = upload_matrix(client, random_values(6, 1), 2, 3);
  auto b = upload_matrix(client, random_values(8, 1), 4, 2);
  auto c = upload_matrix(client, random_values(4, 1), 2, 2);
  CHECK_THROWS_WITH(matmul(client, a, b, c), Catch::Contains("A is 2x3, B is 4x2"));
  CHECK_THROWS_WITH(matmul_with("nonsense", client, a, a, c), Catch::Contains("shapes"));
  auto square = upload_matrix(client, random_values(4, 1), 2, 2);
  CHECK_THROWS_WITH(matmul_with("blocked[MWG=3]", client, square, square, c),
                    Catch::Contains("matmul: no candidate named 'blocked[MWG=3]'"));
}

// Run by ctest with POCL_MEMORY_LIMIT=1 (1 GiB of device memory, 256 MiB per allocation): A is
// 2049 x 16385 (134 MB), its anchored twin 4096 x 32768 (537 MB) exceeds the maximum allocation.
// When matmul benchmarked the anchored twin, the tuning failed every candidate ("allocating a
// random 4096 x 32768 matrix: CL_INVALID_BUFFER_SIZE") although the naive kernel serves the call;
// it benchmarks the call's own shape now, and must tune here. (The fallback to the caller's own
// inputs: transpose's case in test_reduce_transpose.cpp.)
TEST_CASE("matmul tunes a call whose anchored twin would not fit the device", "[.][small-memory]") {
  tunekit::test::fewest_measurements();  // each run is 34 million multiply-adds on the CPU
  auto& client = tunekit::test::default_client();
  const Problem p{2049, 1, 16385};
  const std::uint64_t anchored_a = std::uint64_t{4096} * 32768 * sizeof(float);
  REQUIRE(client.device().max_allocation < anchored_a);  // the limit is in effect
  REQUIRE(client.device().max_allocation >= p.m * p.k * sizeof(float));
  {
    tunekit::test::CapturedWarnings warnings;
    CHECK(run_and_check(client, "", p, DType::f32, 1.0f, 0.0f) < 1e-5);
    // Random inputs of the call's own shape fit: no fallback to the caller's inputs was needed.
    CHECK_THAT(warnings.text(), !Catch::Contains("do not fit"));
  }
  CHECK(run_and_check(client, "", p, DType::f32, 0.5f, 2.0f) < 1e-5);  // the same key, tuned
}

TEST_CASE("a NaN or infinite alpha gives its product and leaves the key's tuning working",
          "[ops][matmul][opencl]") {
  // The tuning benchmarks with alpha = 1: a caller's NaN once failed every candidate (the
  // reference too), and that failure was remembered for the key, in memory and on disk.
  tunekit::cl::Client& client = test::default_client();
  test::quick_tuning();
  const std::size_t m = 13, n = 17, k = 19;
  const auto a_values = random_values(m * k, 1), b_values = random_values(k * n, 2);
  const auto a = upload_matrix(client, a_values, m, k);
  const auto b = upload_matrix(client, b_values, k, n);
  auto c = upload_matrix(client, random_values(m * n, 3), m, n);
  matmul(client, a, b, c, std::nanf(""));
  for (const float v : download_matrix(client, c)) CHECK(std::isnan(v));
  const auto report = matmul_tuner().tuner(client.id()).report(matmul_key(m, n, k, DType::f32));
  REQUIRE(report);
  CHECK(report->winner());
  matmul(client, a, b, c, 1.0f);
  const auto got = download_matrix(client, c);
  double worst = 0;
  for (std::size_t i = 0; i < m; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      double want = 0;
      for (std::size_t p = 0; p < k; ++p) want += double(a_values[i * k + p]) * b_values[p * n + j];
      worst = worse_error(worst, std::fabs(got[i * n + j] - want) / std::max(1.0, std::fabs(want)));
    }
  }
  CHECK(worst < 1e-5);
  matmul(client, a, b, c, std::numeric_limits<float>::infinity());  // no throw: inf or NaN
}

TEST_CASE("alpha = 0 gives beta * C and reads neither A nor B, as BLAS does",
          "[ops][matmul][opencl]") {
  // A holds an infinity and B a NaN: a product would put NaN in C wherever alpha * (A B) was
  // computed. The tuned op and a named candidate alike; beta = 0 leaves no NaN of C either.
  tunekit::cl::Client& client = test::default_client();
  test::quick_tuning();
  const std::size_t m = 9, n = 11, k = 7;
  auto a_values = random_values(m * k, 4), b_values = random_values(k * n, 5);
  a_values[0] = std::numeric_limits<float>::infinity();
  b_values[3] = std::nanf("");
  const auto a = upload_matrix(client, a_values, m, k);
  const auto b = upload_matrix(client, b_values, k, n);
  const auto c_values = random_values(m * n, 6);
  const std::string named = matmul_candidates().front();
  for (const bool tuned : {true, false}) {
    INFO((tuned ? "matmul" : "matmul_with " + named));
    const auto call = [&](DeviceMatrix& c, float beta) {
      tuned ? matmul(client, a, b, c, 0.0f, beta) : matmul_with(named, client, a, b, c, 0.0f, beta);
    };
    auto c = upload_matrix(client, c_values, m, n);
    call(c, 0.5f);
    const auto halved = download_matrix(client, c);
    for (std::size_t i = 0; i < m * n; ++i) CHECK(halved[i] == 0.5f * c_values[i]);
    auto with_nan = upload_matrix(client, std::vector<float>(m * n, std::nanf("")), m, n);
    call(with_nan, 0.0f);
    for (const float v : download_matrix(client, with_nan)) CHECK(v == 0.0f);
  }
}

namespace {
void CL_CALLBACK mark_released(cl_context, void* flag) {
  static_cast<std::atomic<bool>*>(flag)->store(true);
}
}  // namespace

TEST_CASE("a client's end releases its context, with the buffers the ops kept for it",
          "[ops][opencl]") {
  // reduce keeps a result buffer per context, a split product its partial products: each buffer
  // holds its context. A program that makes a client per job kept every job's context before.
  test::quick_tuning();
  std::atomic<bool> released{false};
  {
    tunekit::cl::Client client;
    const auto input = upload_vector(client, random_values(4096, 9));
    CHECK(std::isfinite(reduce(client, input, ReduceOp::sum)));
    const auto a = upload_matrix(client, random_values(64 * 64, 1), 64, 64);
    auto c = upload_matrix(client, random_values(64 * 64, 2), 64, 64);
    // 64 work-items and 12,800 bytes of local memory: within the smallest devices the suite
    // meets; one past those only has its partial products left out of the check.
    const std::string split =
        "split[MWG=32,NWG=64,KWG=16,MDIMC=8,NDIMC=8,VWM=4,VWN=4,VW=4,DB=1,KSPLIT=2]";
    test::ruled_out_here(split, [&] { matmul_with(split, client, a, a, c); });
    REQUIRE(clSetContextDestructorCallback(client.context()(), mark_released, &released) ==
            CL_SUCCESS);
  }  // the caller's buffers go first, then the client
  // The driver may let go of its last commands a moment later, on its own threads (under load,
  // PoCL's release came after the client's end: the check then failed without this wait).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!released && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  CHECK(released);
}

TEST_CASE("ops refuse a buffer of another context and an output that is an input",
          "[ops][matmul][opencl]") {
  tunekit::cl::Client& client = test::default_client();
  tunekit::cl::Client other;  // a context of its own
  auto a = upload_matrix(client, random_values(16, 1), 4, 4);
  auto b = upload_matrix(client, random_values(16, 2), 4, 4);
  auto c = upload_matrix(client, random_values(16, 3), 4, 4);
  const auto foreign = upload_matrix(other, random_values(16, 4), 4, 4);
  CHECK_THROWS_WITH(matmul(client, foreign, b, c),
                    Catch::Contains("A was made in another OpenCL context"));
  CHECK_THROWS_WITH(matmul(client, a, b, a), Catch::Contains("C is also A"));
  CHECK_THROWS_WITH(matmul_with("naive[LX=16,LY=16]", client, a, b, b),
                    Catch::Contains("C is also B"));
  CHECK_THROWS_AS(transpose(client, a, a), std::invalid_argument);
  auto as_vector = DeviceVector{a.buffer, 16};
  CHECK_THROWS_AS(reduce_rows(client, a, ReduceOp::sum, as_vector), std::invalid_argument);
  CHECK_THROWS_AS(reduce_into(client, as_vector, ReduceOp::sum, as_vector), std::invalid_argument);
  CHECK_THROWS_WITH(reduce(client, DeviceVector{foreign.buffer, 16}, ReduceOp::sum),
                    Catch::Contains("another OpenCL context"));
}

TEST_CASE("float_to_half rounds to nearest, ties to even, as the device's vstore_half",
          "[ops][matrix]") {
  CHECK(half_to_float(float_to_half(2049.0f)) == 2048.0f);  // a tie: down to the even 2048
  CHECK(half_to_float(float_to_half(2051.0f)) == 2052.0f);  // a tie: up to the even 2052
  CHECK(half_to_float(float_to_half(2050.5f)) == 2050.0f);  // nearest
  CHECK(half_to_float(float_to_half(1.0f + 0x1p-11f)) == 1.0f);
  CHECK(half_to_float(float_to_half(1.0f + 3 * 0x1p-11f)) == 1.0f + 0x1p-9f);
  CHECK(half_to_float(float_to_half(0x1p-25f)) == 0.0f);          // half the smallest subnormal
  CHECK(half_to_float(float_to_half(3 * 0x1p-25f)) == 0x1p-23f);  // 1.5 steps: up to 2 (even)
  CHECK(half_to_float(float_to_half(65504.0f)) == 65504.0f);
  CHECK(std::isinf(half_to_float(float_to_half(65520.0f))));  // the tie past the largest
}

TEST_CASE("matmul's validation bound follows each element's size, not the worst case of K",
          "[ops][matmul]") {
  // A kernel that drops the last 8 terms of K = 4096 (a K-remainder bug) on an element whose
  // terms were +-1 until then: c = 8, the kernel's 0. The bound of a right f16 or bf16 kernel
  // there is its float sums' and one rounding of 8; the old bound, 2e-3 * K for every element,
  // was 8.2 and let it pass.
  for (const DType dtype : {DType::f32, DType::f16, DType::bf16}) {
    INFO(to_string(dtype));
    const double bound = matmul_tolerance(4096, dtype) + matmul_storage_rounding(dtype) * 8.0;
    CHECK(bound < 0.1);
    CHECK(bound > 4096 * 0x1p-24);  // above what float sums of 4096 terms can err by
  }
  CHECK(matmul_storage_rounding(DType::f16) >= 2 * 0x1p-11);  // f16's unit roundoff, doubled
  CHECK(matmul_storage_rounding(DType::bf16) >= 2 * 0x1p-8);
}
