// matmul's candidates on the default OpenCL device (PoCL here), each named and run on its own:
// sampled configurations of every family, the kernels' edges, K slices and local memory, and the
// families' spaces against the rules their kernels build by (gemm_rules.hpp); every product
// against a host reference in double precision on random non-zero inputs. The tuned op:
// test_matmul.cpp.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <limits>
#include <map>
#include <set>
#include <tunekit/candidate_name.hpp>
#include <tunekit/cl.hpp>
#include <tunekit/ops/matmul.hpp>
#include <tuple>

#include "../../bench/shape_lists.hpp"
#include "../../src/ops/gemm_rules.hpp"
#include "../../src/ops/matmul_prepare.hpp"
#include "../../src/ops/operand_passes.hpp"
#include "../../src/ops/scratch.hpp"
#include "../../src/ops/tf32_operands.hpp"
#include "../../src/ops/transposed_operand.hpp"
#include "matmul_support.hpp"
#include "ops_support.hpp"

using namespace tunekit;
using namespace tunekit::ops;
using tunekit::test::Problem;
using tunekit::test::ProblemOperands;
using tunekit::test::ruled_out_here;
using tunekit::test::run_and_check;
using tunekit::test::upload_problem;
using tunekit::test::worst_relative_error;
using tunekit::test::worst_relative_error_on_rows;

namespace {

// Every family's first and last configuration and a spread of the others.
std::vector<std::string> sampled_candidates() {
  const auto all = matmul_candidates();
  std::vector<std::string> picked;
  std::string family;
  for (std::size_t i = 0; i < all.size(); ++i) {
    const auto f = all[i].substr(0, all[i].find('['));
    const bool first = f != family, last = i + 1 == all.size() || all[i + 1].rfind(f + "[", 0) != 0;
    if (first || last || i % 311 == 0) picked.push_back(all[i]);
    family = f;
  }
  return picked;
}

bool has_cp_async(const tunekit::cl::DeviceInfo& device) {
  return device.nvidia && device.compute_capability_at_least(tunekit::ops::gemm::staged_min_major,
                                                             tunekit::ops::gemm::staged_min_minor);
}

// Each candidate on each problem (f32, alpha = 1.5, beta = 0) within 1e-5 of the reference;
// a candidate over this device's or kernel's limits (registers cap NVIDIA's work-groups at 256)
// must say so, as out of resources, before anything runs. The tensor-core families refuse an
// IEEE f32 call itself (16-bit storage, or TF32 not allowed): a launch error, on every device;
// the staged family refuses a device without cp.async as out of resources.
void check_candidates(tunekit::cl::Client& client, const std::vector<std::string>& candidates,
                      std::initializer_list<Problem> problems) {
  for (const auto& candidate : candidates) {
    for (Problem p : problems) {
      INFO(candidate << " m=" << p.m << " n=" << p.n << " k=" << p.k);
      double error = 0;
      try {
        error = run_and_check(client, candidate, p, DType::f32, 1.5f, 0.0f);
      } catch (const AutotuneError& e) {
        INFO(e.what());
        const bool tensor_core =
            candidate.rfind("tensor[", 0) == 0 || candidate.rfind("wgmma[", 0) == 0 ||
            candidate.rfind("tf32[", 0) == 0 || candidate.rfind("wgmma_tf32[", 0) == 0;
        const bool staged =
            candidate.rfind("staged[", 0) == 0 || candidate.rfind("staged_split[", 0) == 0;
        if (tensor_core) {
          CHECK(e.kind() == ErrorKind::launch);
          CHECK_THAT(e.what(),
                     Catch::Contains("bf16 storage") || Catch::Contains("MatmulMath::tf32"));
        } else if (staged && !has_cp_async(client.device())) {
          CHECK(e.kind() == ErrorKind::out_of_resources);
          CHECK(e.beyond_device_limits());
          CHECK_THAT(e.what(), Catch::Contains("no cp.async"));
        } else {  // over this device's or kernel's limits
          CHECK(e.kind() == ErrorKind::out_of_resources);
        }
        break;
      }
      CHECK(error < 1e-5);
    }
  }
}

// The kernel launches one call of `candidate` on `p` makes (the passes, the product, the sum,
// the edges), counted by the client's measurement.
std::size_t launches_of(tunekit::cl::Client& client, const std::string& candidate, Problem p) {
  ProblemOperands operands = upload_problem(client, p);
  (void)client.measure([&] { matmul_with(candidate, client, operands.a, operands.b, operands.c); },
                       1);
  return client.last_measure_events();
}

// Every `stride`-th candidate of `family`, in set order.
std::vector<std::string> every_nth(const std::string& family, std::size_t stride) {
  std::vector<std::string> picked;
  std::size_t seen = 0;
  for (const auto& name : matmul_candidates()) {
    if (name.rfind(family + "[", 0) == 0 && seen++ % stride == 0) picked.push_back(name);
  }
  return picked;
}

// matmul_staged.cl's macros for `p`, its copies done at once (CP_ASYNC=0: builds on any device).
std::string staged_test_options(const tunekit::ops::gemm::StagedParams& p) {
  return "-DCP_ASYNC=0 -DMWG=" + std::to_string(p.mwg) + " -DNWG=" + std::to_string(p.nwg) +
         " -DKWG=" + std::to_string(p.kwg) + " -DMDIMC=" + std::to_string(p.mdimc) +
         " -DNDIMC=" + std::to_string(p.ndimc) + " -DVWM=" + std::to_string(p.vwm) +
         " -DVWN=" + std::to_string(p.vwn) + " -DSTAGES=" + std::to_string(p.stages) +
         " -DKSLICE=" + std::to_string(p.kslice) + " -DA_DIRECT=" + std::to_string(p.a_direct) +
         " -DSPREAD_COPIES=" + std::to_string(p.spread_copies);
}

}  // namespace

TEST_CASE("matmul has all thirteen families and a blocked space of at least 500 configurations",
          "[ops][matmul]") {
  const auto all = matmul_candidates();
  std::map<std::string, std::size_t> per_family;
  for (const auto& name : all) ++per_family[name.substr(0, name.find('['))];
  CHECK(per_family.size() == 13);
  CHECK(per_family["staged"] >= 100);
  CHECK(per_family["staged_narrow"] >= 100);
  CHECK(per_family["staged_split"] >= 100);
  CHECK(per_family["tensor"] >= 20);
  CHECK(per_family["wgmma"] >= 20);
  CHECK(per_family["tf32"] >= 20);
  CHECK(per_family["wgmma_tf32"] >= 20);
  CHECK(per_family["split"] == 126);
  CHECK(per_family["skinny"] == 5 * 3 * 2 * 3 * 3);
  CHECK(per_family["naive"] >= 1);
  CHECK(per_family["tiled"] >= 3);
  CHECK(per_family["direct"] >= 50);
  CHECK(per_family["blocked"] >= 500);
  CHECK(all.front().rfind("naive[", 0) == 0);  // the safe default is index 0
}

TEST_CASE(
    "the blocked family is exactly the configurations matmul_reg.cl builds (gemm_rules.hpp) "
    "with 4 to 64 outputs per work-item",
    "[ops][matmul]") {
  using tunekit::ops::gemm::BlockedParams;
  // The kernel's #error rules, with the op's padding.
  CHECK(tunekit::ops::gemm::blocked_builds(BlockedParams{64, 64, 16, 8, 16, 2, 2, 4}));
  CHECK_FALSE(tunekit::ops::gemm::blocked_builds(
      BlockedParams{64, 64, 16, 8, 16, 4, 4, 4, 2}));  // PADA % VWM
  CHECK_FALSE(tunekit::ops::gemm::blocked_builds(
      BlockedParams{64, 64, 16, 32, 16, 4, 2, 4}));  // MWG % (MDIMC*VWM)
  CHECK_FALSE(tunekit::ops::gemm::blocked_builds(
      BlockedParams{32, 32, 8, 16, 16, 2, 2, 4}));  // tiles load unevenly
  // (DB+1) * KWG * ((MWG+PADA) + (NWG+PADB)) floats
  CHECK(tunekit::ops::gemm::blocked_local_memory(
            BlockedParams{128, 64, 16, 16, 8, 4, 4, 4, 4, 0, 1}) == 2 * 16 * (132 + 64) * 4);
  std::size_t blocked = 0;
  for (const auto& name : matmul_candidates()) blocked += name.rfind("blocked[", 0) == 0;
  CHECK(blocked == 970);  // counted from the rules before they moved to gemm_rules.hpp
}

TEST_CASE(
    "the tensor family is the configurations matmul_tc.cl builds (gemm_rules.hpp), its local "
    "memory counted as NVIDIA's OpenCL counts it",
    "[ops][matmul]") {
  using tunekit::ops::gemm::TensorParams;
  CHECK(gemm::tensor_builds(TensorParams{128, 128, 32, 64, 64, 2}));
  CHECK(gemm::tensor_builds(TensorParams{128, 256, 16, 64, 64, 3}));
  CHECK_FALSE(gemm::tensor_builds(TensorParams{128, 128, 32, 64, 64, 1}));  // one stage
  CHECK(gemm::tensor_builds(TensorParams{64, 64, 32, 32, 32, 2}));          // 4 warps
  CHECK(gemm::tensor_work_group_size(TensorParams{64, 64, 32, 32, 32, 2}) == 128);
  CHECK_FALSE(gemm::tensor_builds(TensorParams{64, 64, 32, 64, 64, 2}));     // one warp
  CHECK_FALSE(gemm::tensor_builds(TensorParams{256, 256, 32, 64, 64, 2}));   // 16 warps
  CHECK_FALSE(gemm::tensor_builds(TensorParams{128, 128, 32, 128, 64, 2}));  // 256 accumulators
  // Measured on the H200: CL_KERNEL_LOCAL_MEM_SIZE 32784 for 2 x (128x32 + 32x128) halves; so
  // 3 such stages (48 KB of tiles) are over NVIDIA's 49152 bytes.
  CHECK(gemm::tensor_local_memory(TensorParams{128, 128, 32, 64, 64, 2}) == 32784);
  CHECK(gemm::tensor_local_memory(TensorParams{128, 128, 32, 64, 64, 3}) > 49152);
  std::size_t tensor = 0;
  for (const auto& name : matmul_candidates()) {
    if (name.rfind("tensor[", 0) != 0) continue;
    ++tensor;
    INFO(name);
    CHECK(name.find("STAGES=") != std::string::npos);
  }
  CHECK(tensor >= 20);
}

TEST_CASE(
    "the wgmma family is the configurations matmul_wgmma.cl builds (gemm_rules.hpp), its local "
    "memory counted with the alignment pad and NVIDIA's overhead, up to what compute capability "
    "9.0 lets declared arrays take and two work-groups on a multiprocessor",
    "[ops][matmul]") {
  using tunekit::ops::gemm::WgmmaParams;
  CHECK(gemm::wgmma_builds(WgmmaParams{128, 128, 16, 4}));
  CHECK(gemm::wgmma_builds(WgmmaParams{64, 64, 64, 2}));              // A in the 128-byte swizzle
  CHECK(gemm::wgmma_builds(WgmmaParams{256, 128, 16, 3}));            // 4 warpgroups
  CHECK_FALSE(gemm::wgmma_builds(WgmmaParams{128, 128, 16, 1}));      // one stage
  CHECK_FALSE(gemm::wgmma_builds(WgmmaParams{96, 128, 16, 2}));       // not whole warpgroups
  CHECK_FALSE(gemm::wgmma_builds(WgmmaParams{128, 96, 16, 2}));       // no such wgmma shape here
  CHECK_FALSE(gemm::wgmma_builds(WgmmaParams{128, 128, 8, 2}));       // less than one k16 step
  CHECK(gemm::wgmma_builds(WgmmaParams{128, 128, 64, 2}));            // 64 KB: past the 48 KB
  CHECK(gemm::wgmma_builds(WgmmaParams{256, 128, 64, 3}));            // 144 KB: one per SM
  CHECK(gemm::wgmma_builds(WgmmaParams{256, 128, 64, 4}));            // 193 KB with the pad
  CHECK_FALSE(gemm::wgmma_builds(WgmmaParams{256, 128, 64, 5}));      // 241 KB: past 227 KB
  CHECK_FALSE(gemm::wgmma_builds(WgmmaParams{256, 256, 64, 4}));      // 256 KB of tiles
  CHECK(gemm::wgmma_builds(WgmmaParams{128, 128, 16, 5, 128}));       // one warpgroup, 2 row blocks
  CHECK(gemm::wgmma_builds(WgmmaParams{256, 64, 32, 2, 128}));        // two of them
  CHECK_FALSE(gemm::wgmma_builds(WgmmaParams{64, 128, 16, 2, 128}));  // less than WM rows
  CHECK_FALSE(gemm::wgmma_builds(WgmmaParams{192, 128, 16, 2, 128}));  // not whole warpgroups
  CHECK_FALSE(gemm::wgmma_builds(WgmmaParams{128, 256, 16, 2, 128}));  // 256 accumulators
  CHECK_FALSE(gemm::wgmma_builds(WgmmaParams{128, 128, 16, 2, 32}));   // no such row block
  CHECK(gemm::wgmma_work_group_size(WgmmaParams{256, 128, 16, 3}) == 512);
  CHECK(gemm::wgmma_work_group_size(WgmmaParams{256, 128, 16, 3, 128}) == 256);
  // Measured on the H200: CL_KERNEL_LOCAL_MEM_SIZE 33792 for 4 x (128x16 + 16x128) halves and
  // the 1008-byte pad (docs/data/h200-wgmma-swizzle-1.log).
  CHECK(gemm::wgmma_local_memory(WgmmaParams{128, 128, 16, 4}) == 33792);
  // f32 elements (wgmma_tf32): BK 8, 16, 32 make the rows of 32, 64, 128 bytes; the driver
  // reported 37888 bytes for 64 x 128 x 16 in 3 stages (docs/data/h200-wgmma-tf32-probe.log).
  CHECK(gemm::wgmma_builds(WgmmaParams{64, 128, 16, 3, 64, 4}));
  CHECK(gemm::wgmma_builds(WgmmaParams{64, 128, 8, 6, 64, 4}));
  CHECK(gemm::wgmma_builds(WgmmaParams{64, 64, 32, 2, 64, 4}));
  CHECK_FALSE(gemm::wgmma_builds(WgmmaParams{64, 64, 64, 2, 64, 4}));    // rows of 256 bytes
  CHECK_FALSE(gemm::wgmma_builds(WgmmaParams{64, 128, 4, 4, 64, 4}));    // rows of 16 bytes
  CHECK(gemm::wgmma_builds(WgmmaParams{128, 128, 32, 2, 64, 4}));        // 64 KB of tiles
  CHECK_FALSE(gemm::wgmma_builds(WgmmaParams{128, 256, 32, 5, 64, 4}));  // 240 KB of tiles
  CHECK_FALSE(gemm::wgmma_builds(WgmmaParams{64, 128, 16, 3, 64, 8}));   // no 8-byte elements
  CHECK(gemm::wgmma_local_memory(WgmmaParams{64, 128, 16, 3, 64, 4}) == 37888);
  // Two per multiprocessor (228 KB, 1 KB reserved for each): 65 KB and 101 KB do, 129 KB not.
  CHECK(gemm::wgmma_two_per_multiprocessor(WgmmaParams{128, 128, 32, 4, 128}));
  CHECK(gemm::wgmma_local_memory(WgmmaParams{128, 128, 32, 4, 128}) == 66560);
  CHECK(gemm::wgmma_two_per_multiprocessor(WgmmaParams{64, 256, 16, 5, 64, 4}));        // 101 KB
  CHECK_FALSE(gemm::wgmma_two_per_multiprocessor(WgmmaParams{128, 128, 64, 4}));        // 129 KB
  CHECK_FALSE(gemm::wgmma_two_per_multiprocessor(WgmmaParams{64, 256, 16, 6, 64, 4}));  // 121 KB
  std::size_t wgmma = 0, past_48k = 0, over_two = 0;
  for (const auto& name : matmul_candidates()) {
    const auto parts = tunekit::split_candidate_name(name);
    if (!parts || parts->space != "wgmma") continue;
    ++wgmma;
    std::map<std::string, std::int64_t> field;
    for (const auto& f : tunekit::parse_config(parts->config)) field[f.name] = f.value;
    const WgmmaParams p{field["BM"], field["BN"], field["BK"], field["STAGES"], field["WM"]};
    past_48k += gemm::wgmma_local_memory(p) > tunekit::cl::detail::nvidia_reported_local_memory;
    over_two += !gemm::wgmma_two_per_multiprocessor(p);
  }
  CHECK(wgmma >= 20);
  CHECK(past_48k > 0);   // the declared limit, not the reported 48 KB, bounds the space
  CHECK(over_two == 0);  // and the space keeps to two per multiprocessor
}

namespace {
// One run of each candidate of a tensor-core family: storage, math, and the error (relative to
// the terms' magnitude sum, worst_relative_error) a right product stays below; where `above` is
// set and K >= 36, also above it (the family's own rounding is there: it ran on the tensor cores).
struct TensorRun {
  DType dtype;
  MatmulMath math;
  double below;
  double above = 0;
  double rounded_below = 0;  // > 0: the error against the TF32-rounded inputs' product too
};
// A call refused before a launch, on every device, with a message that contains `reason`.
struct TensorRefusal {
  Problem problem;
  DType dtype;
  MatmulMath math;
  std::string reason;
};
// What check_tensor_family checks of a family, besides its candidates.
struct TensorFamilyCheck {
  bool capable;             // the device can run the family
  std::string requirement;  // what a device that cannot lacks, as the refusal says it
  std::vector<Problem> problems;
  std::vector<TensorRun> runs;
  std::vector<TensorRefusal> refusals;  // made with the first candidate
};

// A tensor-core family's candidates: where the device can run them, each matches a
// double-precision product on each problem in each run; elsewhere each fails before any build,
// naming the requirement. On every device the refusals are refused.
void check_tensor_family(const std::vector<std::string>& candidates,
                         const TensorFamilyCheck& check) {
  tunekit::cl::Client& client = test::default_client();
  const auto all = matmul_candidates();
  for (const auto& candidate : candidates) {
    INFO(candidate);
    REQUIRE(std::find(all.begin(), all.end(), candidate) != all.end());
    for (Problem p : check.problems) {
      INFO("m=" << p.m << " n=" << p.n << " k=" << p.k);
      if (!check.capable) {
        const TensorRun& run = check.runs.front();
        try {
          (void)run_and_check(client, candidate, p, run.dtype, 1.5f, 0.5f, run.math);
          FAIL("the family ran on a device without " << check.requirement);
        } catch (const AutotuneError& e) {
          CHECK(e.kind() == ErrorKind::out_of_resources);
          CHECK(e.beyond_device_limits());
          CHECK_THAT(e.what(), Catch::Contains(check.requirement));
        }
        continue;
      }
      for (const TensorRun& run : check.runs) {
        INFO(to_string(run.dtype) << " " << run.math);
        double of_rounded = 0;
        const double error =
            run_and_check(client, candidate, p, run.dtype, 1.5f, 0.5f, run.math, &of_rounded);
        CHECK(error < run.below);
        if (run.rounded_below > 0) CHECK(of_rounded < run.rounded_below);
        if (run.above > 0 && p.k >= 36) CHECK(error > run.above);
      }
    }
  }
  for (const TensorRefusal& refusal : check.refusals) {
    INFO(refusal.reason);
    CHECK_THROWS_WITH(run_and_check(client, candidates.front(), refusal.problem, refusal.dtype,
                                    1.0f, 0.0f, refusal.math),
                      Catch::Contains(refusal.reason));
  }
}

// The 16-bit families (tensor, wgmma): edges inside tiles on every side, K not a multiple of BK
// (N and K multiples of 8); alpha and beta not 1 and 0. Inputs rounded to f16 as stored;
// products exact in f32, summed in f32 (K * 2^-24), the result rounded to f16 (2^-11 of |C| <=
// the magnitude sum), to bf16 2^-9. f32 storage and N or K off a multiple of 8 are refused.
TensorFamilyCheck sixteen_bit_check(bool capable, std::string requirement) {
  return {.capable = capable,
          .requirement = std::move(requirement),
          .problems = {{200, 136, 264}, {1, 8, 8}, {130, 72, 40}},
          .runs = {{DType::f16, MatmulMath::ieee, 1e-3}, {DType::bf16, MatmulMath::ieee, 8e-3}},
          .refusals = {{{64, 64, 64}, DType::f32, MatmulMath::ieee, "f16"},
                       {{64, 60, 64}, DType::f16, MatmulMath::ieee, "multiples of 8"}}};
}
}  // namespace

TEST_CASE(
    "the wgmma family matches a double-precision product on a compute capability 9.0 device, "
    "and elsewhere fails before any build, saying why",
    "[ops][matmul][opencl]") {
  const auto& device = test::default_client().device();
  const bool hopper =
      device.nvidia && device.compute_capability_major == 9 && device.compute_capability_minor == 0;
  // A in the 32, 64 and 128-byte swizzle (BK 16, 32, 64); 1 and 2 warpgroups (4, BM=256, are
  // over the kernel's maximum work-group on the H200: the tuner skips them); every wgmma width;
  // tiles in groups of rows; warpgroups of two row blocks (WM 128), one and two of them.
  check_tensor_family({"wgmma[BM=128,BN=128,BK=16,STAGES=4,GROUP_M=8,WM=64]",
                       "wgmma[BM=128,BN=128,BK=32,STAGES=2,GROUP_M=8,WM=128]",
                       "wgmma[BM=256,BN=64,BK=16,STAGES=3,GROUP_M=0,WM=128]",
                       "wgmma[BM=128,BN=128,BK=32,STAGES=2,GROUP_M=0,WM=64]",
                       "wgmma[BM=64,BN=64,BK=64,STAGES=2,GROUP_M=16,WM=64]",
                       "wgmma[BM=128,BN=64,BK=32,STAGES=3,GROUP_M=0,WM=64]",
                       "wgmma[BM=128,BN=256,BK=16,STAGES=3,GROUP_M=8,WM=64]",
                       "wgmma[BM=64,BN=256,BK=32,STAGES=2,GROUP_M=0,WM=64]"},
                      sixteen_bit_check(hopper, "compute capability 9.0"));
}

TEST_CASE(
    "the tensor family matches a double-precision product where the device has tensor cores, "
    "and elsewhere fails before any build, saying why",
    "[ops][matmul][opencl]") {
  const auto& device = test::default_client().device();
  check_tensor_family({"tensor[BM=128,BN=128,BK=32,WM=64,WN=64,STAGES=2,GROUP_M=0]",
                       "tensor[BM=128,BN=128,BK=32,WM=64,WN=64,STAGES=2,GROUP_M=8]",
                       "tensor[BM=128,BN=128,BK=32,WM=32,WN=64,STAGES=2,GROUP_M=0]",
                       "tensor[BM=128,BN=128,BK=16,WM=64,WN=64,STAGES=4,GROUP_M=0]",
                       "tensor[BM=128,BN=256,BK=16,WM=64,WN=64,STAGES=3,GROUP_M=8]",
                       "tensor[BM=64,BN=128,BK=32,WM=32,WN=64,STAGES=3,GROUP_M=0]"},
                      sixteen_bit_check(device.nvidia && device.compute_capability_at_least(8, 0),
                                        "compute capability 8.0 or higher"));
}

TEST_CASE(
    "the wgmma_tf32 family matches a double-precision product within TF32's rounding on a compute "
    "capability 9.0 device, only for callers that allow TF32, and elsewhere fails before any build",
    "[ops][matmul][opencl]") {
  const auto& device = test::default_client().device();
  // A and B^T in the 32, 64 and 128-byte swizzle (BK 8, 16, 32); one and two warpgroups; one
  // and two row blocks per warpgroup; every wgmma width; tiles in groups of rows.
  check_tensor_family(
      {"wgmma_tf32[BM=64,BN=128,BK=16,STAGES=3,GROUP_M=16,WM=64]",
       "wgmma_tf32[BM=128,BN=64,BK=16,STAGES=3,GROUP_M=8,WM=64]",
       "wgmma_tf32[BM=128,BN=128,BK=16,STAGES=2,GROUP_M=0,WM=128]",
       "wgmma_tf32[BM=64,BN=256,BK=8,STAGES=4,GROUP_M=8,WM=64]",
       "wgmma_tf32[BM=64,BN=64,BK=32,STAGES=2,GROUP_M=0,WM=64]",
       "wgmma_tf32[BM=128,BN=128,BK=8,STAGES=4,GROUP_M=16,WM=64]"},
      {.capable = device.nvidia && device.compute_capability_major == 9 &&
                  device.compute_capability_minor == 0,
       .requirement = "compute capability 9.0",
       // Edges inside tiles on every side, K not a multiple of BK (N and K multiples of 4).
       .problems = {{200, 136, 264}, {1, 4, 4}, {130, 68, 36}},
       // As the tf32 family: inputs rounded to TF32 (by the pre-pass: wgmma's .tf32 truncates),
       // products summed in f32, within 1e-5 of the rounded inputs' product.
       .runs = {{DType::f32, MatmulMath::tf32, 0x1p-10, 1e-6, 1e-5}},
       .refusals = {{{64, 64, 64}, DType::f32, MatmulMath::ieee, "MatmulMath::tf32"},
                    {{64, 64, 64}, DType::bf16, MatmulMath::tf32, "f32 storage"},
                    {{64, 62, 64}, DType::f32, MatmulMath::tf32, "multiples of 4"},
                    {{64, 64, 62}, DType::f32, MatmulMath::tf32, "multiples of 4"}}});
}

TEST_CASE(
    "the tf32 family is the configurations matmul_tf32.cl builds (gemm_rules.hpp), f32 tiles in "
    "local memory counted with NVIDIA's overhead",
    "[ops][matmul]") {
  using tunekit::ops::gemm::Tf32Params;
  CHECK(gemm::tf32_builds(Tf32Params{128, 128, 16, 64, 32, 2}));        // 8 warps, 32 KB
  CHECK(gemm::tf32_builds(Tf32Params{64, 64, 32, 32, 32, 2}));          // A rows of 128 bytes
  CHECK_FALSE(gemm::tf32_builds(Tf32Params{128, 128, 16, 64, 32, 3}));  // 48 KB + NVIDIA's 16
  CHECK_FALSE(gemm::tf32_builds(Tf32Params{128, 128, 8, 64, 32, 2}));   // BK 8: no swizzle here
  CHECK_FALSE(gemm::tf32_builds(Tf32Params{128, 128, 16, 24, 32, 2}));  // not whole m16 tiles
  CHECK_FALSE(gemm::tf32_builds(Tf32Params{64, 64, 16, 64, 64, 2}));    // one warp
  CHECK_FALSE(gemm::tf32_builds(Tf32Params{64, 64, 16, 32, 32, 1}));    // one stage
  CHECK_FALSE(gemm::tf32_builds(Tf32Params{64, 48, 32, 16, 48, 2}));    // B's swizzle: 32 columns
  CHECK(gemm::tf32_local_memory(Tf32Params{128, 128, 16, 64, 32, 2}) == 32768 + 16);
  CHECK(gemm::tf32_work_group_size(Tf32Params{128, 128, 16, 64, 32, 2}) == 256);
}

TEST_CASE(
    "the tf32 family matches a double-precision product within TF32's rounding where the device "
    "has tensor cores, only for callers that allow TF32, and elsewhere fails before any build",
    "[ops][matmul][opencl]") {
  const auto& device = test::default_client().device();
  // 8 and 4 warps, BK 16 and 32 (A's two swizzles), 2 to 4 stages, tiles in groups of rows.
  check_tensor_family(
      {"tf32[BM=128,BN=128,BK=16,WM=64,WN=64,STAGES=2,GROUP_M=8]",
       "tf32[BM=128,BN=128,BK=16,WM=64,WN=32,STAGES=2,GROUP_M=8]",
       "tf32[BM=128,BN=64,BK=16,WM=64,WN=32,STAGES=3,GROUP_M=8]",
       "tf32[BM=64,BN=64,BK=32,WM=32,WN=32,STAGES=2,GROUP_M=0]",
       "tf32[BM=64,BN=128,BK=16,WM=32,WN=64,STAGES=3,GROUP_M=0]",
       "tf32[BM=64,BN=64,BK=16,WM=32,WN=32,STAGES=4,GROUP_M=0]"},
      {.capable = device.nvidia && device.compute_capability_at_least(8, 0),
       .requirement = "compute capability 8.0 or higher",
       // Edges inside tiles on every side, K not a multiple of BK (N and K multiples of 4).
       .problems = {{200, 136, 264}, {1, 4, 4}, {130, 68, 36}},
       // Each input rounded to TF32 (2^-11 of it), products summed in f32: within 2^-10 of the
       // terms' magnitude sum, and far from 0 (the IEEE families meet 1e-5); against the rounded
       // inputs' product, within the IEEE families' 1e-5 (truncated inputs miss it by ~2^-11).
       .runs = {{DType::f32, MatmulMath::tf32, 0x1p-10, 1e-6, 1e-5}},
       // An IEEE caller, 16-bit storage and N or K off a multiple of 4.
       .refusals = {{{64, 64, 64}, DType::f32, MatmulMath::ieee, "MatmulMath::tf32"},
                    {{64, 64, 64}, DType::f16, MatmulMath::tf32, "f32 storage"},
                    {{64, 62, 64}, DType::f32, MatmulMath::tf32, "multiples of 4"}}});
}

TEST_CASE(
    "the wgmma_tf32 family's operands (tf32_operands: A rounded, B transposed and rounded) are the "
    "host's tf32_rounded bit for bit, ties, overflow, subnormals, infinities and NaN included",
    "[ops][matmul][opencl]") {
  tunekit::cl::Client& client = test::default_client();
  const auto bits = [](std::uint32_t u) {
    float x;
    std::memcpy(&x, &u, sizeof x);
    return x;
  };
  const std::vector<float> special = {1.0f,
                                      1.0f + 0x1p-11f,
                                      -1.0f - 0x1p-11f,
                                      1.0f + 0x1p-12f,
                                      1.0f + 0x1p-11f + 0x1p-23f,
                                      std::numeric_limits<float>::max(),
                                      bits(0x00001fffu),
                                      bits(0x00000fffu),
                                      -0.0f,
                                      std::numeric_limits<float>::infinity(),
                                      -std::numeric_limits<float>::infinity(),
                                      std::numeric_limits<float>::quiet_NaN()};
  // B is 72 x 68: one whole 64 x 64 tile (the transpose's vector path) and edges on both sides
  // (its element path); K and N multiples of 4, as the family requires.
  const std::size_t m = 67, n = 68, k = 72;
  auto a = random_values(m * k, 5), b = random_values(k * n, 6);
  std::copy(special.begin(), special.end(), a.begin());
  std::copy(special.begin(), special.end(), b.begin() + 3 * n + 60);    // inside the whole tile
  std::copy(special.begin(), special.end(), b.end() - special.size());  // in the edge tiles
  const auto same = [](float device, float host) {
    std::uint32_t d, h;
    std::memcpy(&d, &device, 4), std::memcpy(&h, &host, 4);
    return std::isnan(host) ? std::isnan(device) : d == h;
  };
  tunekit::ops::detail::Tf32Operands operands;
  // Its passes take work-groups of 256 (the family runs on Hopper only); a smaller device
  // refuses them, and says so.
  if (ruled_out_here("tf32_operands", [&] {
        operands = tunekit::ops::detail::tf32_operands(client, client.upload(a), client.upload(b),
                                                       m, n, k);
      })) {
    return;
  }
  const auto rounded_a = client.download<float>(operands.a, m * k);
  for (std::size_t i = 0; i < m * k; ++i) {
    INFO("A[" << i / k << "][" << i % k << "] = " << a[i]);
    CHECK(same(rounded_a[i], tf32_rounded(a[i])));
  }
  const auto rounded_bt = client.download<float>(operands.bt, n * k);
  for (std::size_t q = 0; q < k; ++q)
    for (std::size_t j = 0; j < n; ++j) {
      INFO("B[" << q << "][" << j << "] = " << b[q * n + j]);
      CHECK(same(rounded_bt[j * k + q], tf32_rounded(b[q * n + j])));
    }
}

TEST_CASE("matmul_reg.cl takes its padding from the host: without -DPADA it does not build",
          "[ops][matmul][opencl]") {
  tunekit::cl::Client& client = test::default_client();
  const std::string options =
      "-DPRECISION=32 -DMWG=64 -DNWG=64 -DKWG=16 -DMDIMC=8 -DNDIMC=16 -DVWM=2 -DVWN=2 -DVW=4";
  const auto without = tunekit::cl::KernelSpec::embedded("matmul_reg.cl", options, "matmul_reg");
  CHECK_THROWS_WITH(client.program(without),
                    Catch::Contains("PADA and PADB are the host's (src/ops/gemm_rules.hpp"));
  const auto with = tunekit::cl::KernelSpec::embedded(
      "matmul_reg.cl",
      options + " -DPADA=" + std::to_string(tunekit::ops::gemm::pad_a) +
          " -DPADB=" + std::to_string(tunekit::ops::gemm::pad_b),
      "matmul_reg");
  CHECK_NOTHROW(client.program(with));
}

TEST_CASE(
    "the staged family is exactly the configurations matmul_staged.cl builds (gemm_rules.hpp) "
    "with 4 to 64 outputs per work-item (128 with SPREAD_COPIES) and at most 256 work-items, and "
    "the kernel's #error lines agree",
    "[ops][matmul][opencl]") {
  using tunekit::ops::gemm::staged_builds;
  using tunekit::ops::gemm::StagedParams;
  CHECK(staged_builds(StagedParams{64, 64, 16, 8, 8, 4, 4, 2}));
  CHECK(staged_builds(StagedParams{64, 64, 16, 8, 8, 4, 4, 2, 4}));         // 256 chunks, 256 items
  CHECK_FALSE(staged_builds(StagedParams{64, 64, 16, 8, 16, 4, 4, 2, 4}));  // 256 chunks, 512
  CHECK_FALSE(staged_builds(StagedParams{64, 64, 16, 8, 8, 4, 4, 2, 3}));   // KWG % KSLICE
  CHECK_FALSE(staged_builds(StagedParams{64, 64, 8, 16, 16, 4, 4, 2}));     // 128 chunks, 256 items
  CHECK_FALSE(staged_builds(StagedParams{64, 64, 16, 32, 8, 4, 4, 2}));     // MWG % (MDIMC*VWM)
  CHECK_FALSE(staged_builds(StagedParams{64, 64, 16, 8, 8, 4, 4, 1}));      // one stage
  CHECK_FALSE(staged_builds(StagedParams{64, 64, 16, 8, 8, 4, 3, 2}));      // no float3 reads
  // A_DIRECT 1: KWG a multiple of 8, the work-items of 4 * KWG and of NWG, VWM at most 4.
  CHECK(staged_builds(StagedParams{64, 64, 32, 8, 16, 4, 2, 2, 1, 1}));        // 128 items
  CHECK(staged_builds(StagedParams{64, 64, 32, 8, 16, 8, 2, 2, 1, 0}));        // VWM 8 ...
  CHECK_FALSE(staged_builds(StagedParams{64, 64, 32, 8, 16, 8, 2, 2, 1, 1}));  // ... not here
  CHECK_FALSE(staged_builds(StagedParams{64, 64, 32, 8, 8, 4, 4, 2, 1, 1}));   // 64 % 128
  CHECK_FALSE(staged_builds(StagedParams{64, 128, 16, 8, 8, 4, 4, 2, 1, 1}));  // 64 % NWG
  CHECK_FALSE(staged_builds(StagedParams{64, 64, 16, 8, 8, 4, 4, 2, 4, 3}));   // A_DIRECT 3
  CHECK(staged_builds(StagedParams{64, 64, 16, 8, 8, 4, 4, 2, 4, 0}));
  // A_DIRECT 2: each group's share of KWG a multiple of 4, the work-items of KWG and of NWG, MWG
  // of the work-items / KWG, no SPREAD_COPIES.
  CHECK(staged_builds(StagedParams{64, 64, 16, 8, 8, 4, 4, 2, 4, 2}));  // 4 rows a group
  CHECK(staged_builds(StagedParams{128, 128, 8, 8, 8, 4, 4, 2, 2, 2}));
  CHECK_FALSE(staged_builds(StagedParams{128, 128, 8, 8, 8, 4, 4, 2, 4, 2}));    // 2 rows a group
  CHECK_FALSE(staged_builds(StagedParams{64, 64, 32, 4, 4, 4, 4, 2, 1, 2}));     // 16 % KWG
  CHECK_FALSE(staged_builds(StagedParams{64, 128, 16, 8, 8, 4, 4, 2, 1, 2}));    // 64 % NWG
  CHECK_FALSE(staged_builds(StagedParams{64, 64, 16, 8, 8, 4, 4, 2, 2, 2, 1}));  // spread
  CHECK(staged_builds(StagedParams{64, 64, 32, 8, 16, 8, 2, 2, 1, 2}));          // VWM 8
  // SPREAD_COPIES: 0 or 1, with A_DIRECT or not.
  CHECK(staged_builds(StagedParams{64, 64, 32, 8, 16, 4, 2, 2, 1, 1, 1}));
  CHECK(staged_builds(StagedParams{64, 64, 32, 8, 16, 4, 2, 2, 1, 0, 1}));
  CHECK_FALSE(staged_builds(StagedParams{64, 64, 32, 8, 16, 4, 2, 2, 1, 1, 2}));
  // STAGES * KWG * (MWG + NWG) floats, and NVIDIA's 16 bytes.
  CHECK(tunekit::ops::gemm::staged_local_memory(StagedParams{128, 64, 16, 16, 8, 2, 4, 3}) ==
        3 * 16 * (128 + 64) * 4 + tunekit::ops::gemm::tensor_local_overhead);
  // ... or the other KSLICE - 1 slices' MWG x NWG sums where they take more.
  CHECK(tunekit::ops::gemm::staged_local_memory(StagedParams{64, 64, 16, 8, 8, 4, 4, 2, 4}) ==
        3 * 64 * 64 * 4 + tunekit::ops::gemm::tensor_local_overhead);
  // A_DIRECT's A rows are 4 floats longer: MWG + 4 under 1, A's own rows of KWG + 4 under 2.
  CHECK(tunekit::ops::gemm::staged_local_memory(StagedParams{128, 64, 16, 16, 8, 2, 4, 3, 1, 1}) ==
        3 * 16 * (128 + 4 + 64) * 4 + tunekit::ops::gemm::tensor_local_overhead);
  CHECK(tunekit::ops::gemm::staged_local_memory(StagedParams{128, 64, 16, 16, 8, 2, 4, 3, 1, 2}) ==
        3 * (128 * (16 + 4) + 16 * 64) * 4 + tunekit::ops::gemm::tensor_local_overhead);
  // The space: every combination of its values that the rules allow, and nothing else.
  std::size_t expected = 0;
  for (std::int64_t mwg : {64, 128, 256})
    for (std::int64_t nwg : {64, 128})
      for (std::int64_t kwg : {8, 16, 32})
        for (std::int64_t md : {8, 16, 32})
          for (std::int64_t nd : {8, 16, 32})
            for (std::int64_t vwm : {2, 4})
              for (std::int64_t vwn : {2, 4})
                for (std::int64_t stages : {2, 3, 4})
                  for (std::int64_t kslice : {1, 2})
                    for (std::int64_t direct : {0, 1})
                      for (std::int64_t spread : {0, 1}) {
                        const auto outputs = (mwg / md) * (nwg / nd);
                        const StagedParams p{mwg, nwg,    kwg,    md,     nd,    vwm,
                                             vwn, stages, kslice, direct, spread};
                        expected += outputs >= 4 && outputs <= (spread == 1 ? 128 : 64) &&
                                    md * nd * kslice <= tunekit::ops::gemm::staged_max_work_group &&
                                    staged_builds(p);
                      }
  std::size_t staged = 0;
  for (const auto& name : matmul_candidates()) staged += name.rfind("staged[", 0) == 0;
  CHECK(staged == expected);
  CHECK(expected >= 100);
  // The kernel refuses what the rules refuse (copies at once: builds on any device).
  tunekit::cl::Client& client = test::default_client();
  const auto spec = [](const std::string& macros) {
    return tunekit::cl::KernelSpec::embedded("matmul_staged.cl", "-DCP_ASYNC=0 " + macros,
                                             "matmul_staged");
  };
  CHECK_NOTHROW(client.program(
      spec("-DMWG=64 -DNWG=64 -DKWG=16 -DMDIMC=8 -DNDIMC=8 -DVWM=4 -DVWN=4 -DSTAGES=2")));
  // Each refused configuration, as staged_builds refuses it above, and the #error that says so.
  const std::pair<const char*, const char*> refused[] = {
      {"-DMWG=64 -DNWG=64 -DKWG=8 -DMDIMC=16 -DNDIMC=16 -DVWM=4 -DVWN=4 -DSTAGES=2",
       "each tile whole 16-byte chunks for every work-item"},
      {"-DMWG=64 -DNWG=64 -DKWG=16 -DMDIMC=8 -DNDIMC=8 -DVWM=4 -DVWN=4 -DSTAGES=1", "STAGES >= 2"},
      {"-DMWG=64 -DNWG=64 -DKWG=16 -DMDIMC=32 -DNDIMC=8 -DVWM=4 -DVWN=4 -DSTAGES=2",
       "MWG a multiple of MDIMC*VWM"},
      {"-DMWG=64 -DNWG=64 -DKWG=16 -DMDIMC=8 -DNDIMC=8 -DVWM=4 -DVWN=3 -DSTAGES=2",
       "VWM and VWN 1, 2, 4 or 8"},
      {"-DMWG=64 -DNWG=64 -DKWG=16 -DMDIMC=8 -DNDIMC=8 -DVWM=4 -DVWN=4 -DSTAGES=2 -DKSLICE=3",
       "KSLICE >= 1 divides KWG"},
      {"-DMWG=64 -DNWG=64 -DKWG=16 -DMDIMC=8 -DNDIMC=16 -DVWM=4 -DVWN=4 -DSTAGES=2 -DKSLICE=4",
       "each tile whole 16-byte chunks for every work-item"},
      {"-DMWG=64 -DNWG=64 -DKWG=32 -DMDIMC=8 -DNDIMC=8 -DVWM=4 -DVWN=4 -DSTAGES=2 -DA_DIRECT=1",
       "A_DIRECT 1: KWG a multiple of 8, the work-items a multiple of 4 * KWG, VWM <= 4"},
      {"-DMWG=64 -DNWG=64 -DKWG=32 -DMDIMC=8 -DNDIMC=16 -DVWM=8 -DVWN=2 -DSTAGES=2 -DA_DIRECT=1",
       "A_DIRECT 1: KWG a multiple of 8, the work-items a multiple of 4 * KWG, VWM <= 4"},
      {"-DMWG=64 -DNWG=128 -DKWG=16 -DMDIMC=8 -DNDIMC=8 -DVWM=4 -DVWN=4 -DSTAGES=2 -DA_DIRECT=1",
       "A_DIRECT 1 or 2: the work-items a multiple of NWG"},
      {"-DMWG=64 -DNWG=128 -DKWG=16 -DMDIMC=8 -DNDIMC=8 -DVWM=4 -DVWN=4 -DSTAGES=2 -DA_DIRECT=2",
       "A_DIRECT 1 or 2: the work-items a multiple of NWG"},
      {"-DMWG=64 -DNWG=64 -DKWG=16 -DMDIMC=8 -DNDIMC=8 -DVWM=4 -DVWN=4 -DSTAGES=2 -DA_DIRECT=3",
       "A_DIRECT 0, 1 or 2"},
      {"-DMWG=128 -DNWG=128 -DKWG=8 -DMDIMC=8 -DNDIMC=8 -DVWM=4 -DVWN=4 -DSTAGES=2 -DKSLICE=4 "
       "-DA_DIRECT=2",
       "A_DIRECT 2: KWG / KSLICE a multiple of 4"},
      {"-DMWG=64 -DNWG=64 -DKWG=16 -DMDIMC=8 -DNDIMC=8 -DVWM=4 -DVWN=4 -DSTAGES=2 -DKSLICE=2 "
       "-DA_DIRECT=2 -DSPREAD_COPIES=1",
       "A_DIRECT 2: KWG / KSLICE a multiple of 4"},
      {"-DMWG=64 -DNWG=64 -DKWG=32 -DMDIMC=8 -DNDIMC=16 -DVWM=4 -DVWN=2 -DSTAGES=2 -DA_DIRECT=1 "
       "-DSPREAD_COPIES=2",
       "SPREAD_COPIES 0 or 1"}};
  for (const auto& [macros, why] : refused) {
    INFO(macros);
    CHECK_THROWS_WITH(client.program(spec(macros)), Catch::Contains(why));
  }
}

TEST_CASE(
    "matmul_staged.cl declares the local memory staged_local_memory counts: tiles, A_DIRECT's "
    "padded A rows (transposed and in A's layout) and the KSLICE sums",
    "[ops][matmul][opencl]") {
  using tunekit::ops::gemm::StagedParams;
  tunekit::cl::Client& client = test::default_client();
  // Tiles larger than the sums, A_DIRECT's rows, and sums larger than the tiles.
  for (const StagedParams& p : {StagedParams{128, 64, 16, 16, 8, 2, 4, 3, 1, 0},
                                StagedParams{128, 64, 16, 16, 8, 2, 4, 3, 1, 1},
                                StagedParams{64, 64, 32, 8, 16, 4, 2, 2, 2, 1},
                                StagedParams{64, 64, 16, 8, 8, 4, 4, 2, 4, 0},
                                StagedParams{32, 64, 32, 8, 8, 2, 4, 2, 4, 1},
                                StagedParams{128, 64, 16, 16, 8, 2, 4, 3, 1, 2},
                                StagedParams{64, 64, 16, 8, 8, 4, 4, 2, 4, 2}}) {
    REQUIRE(tunekit::ops::gemm::staged_builds(p));
    const auto macros = staged_test_options(p);
    INFO(macros);
    ::cl::Kernel kernel = client.kernel(
        tunekit::cl::KernelSpec::embedded("matmul_staged.cl", macros, "matmul_staged"));
    cl_ulong declared = 0;
    REQUIRE(kernel.getWorkGroupInfo(client.device().device, CL_KERNEL_LOCAL_MEM_SIZE, &declared) ==
            CL_SUCCESS);
    // The rule adds NVIDIA's overhead on top of the declared array; a driver may report either.
    const std::size_t counted = tunekit::ops::gemm::staged_local_memory(p);
    CHECK(declared <= counted);
    CHECK(declared + tunekit::ops::gemm::tensor_local_overhead >= counted);
  }
}

TEST_CASE(
    "matmul_staged.cl's tiles, stages, edges, K slices and K tiles shared by 2 or 4 groups of "
    "work-items are right on every device (its copies done at once, CP_ASYNC=0), with partial "
    "tiles, K not a multiple of the tile, rows padded to whole chunks with anything past M and N, "
    "alpha and beta, and so is A_DIRECT on A and B as they are and in rows longer than K and N, "
    "its copies spread between the rows (SPREAD_COPIES) or not",
    "[ops][matmul][opencl]") {
  tunekit::cl::Client& client = test::default_client();
  using Staged = tunekit::ops::gemm::StagedParams;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  // One group of work-items per K tile, and 2 and 4 (their sums added in local memory).
  for (const Staged& g :
       {Staged{64, 64, 16, 8, 8, 4, 4, 2, 1}, Staged{64, 64, 8, 8, 8, 4, 4, 3, 1},
        Staged{128, 64, 16, 16, 8, 2, 4, 4, 1}, Staged{32, 64, 32, 8, 8, 2, 4, 3, 1},
        Staged{64, 64, 16, 8, 8, 4, 4, 2, 2}, Staged{32, 64, 32, 8, 8, 2, 4, 2, 4},
        Staged{128, 64, 16, 16, 8, 2, 4, 4, 2},
        // A_DIRECT: one and several rows of B per work-item's step (NWG = and < the work-items).
        Staged{64, 64, 16, 8, 8, 4, 4, 2, 1, 1}, Staged{64, 64, 8, 8, 8, 4, 4, 3, 1, 1},
        Staged{128, 64, 16, 16, 8, 2, 4, 4, 2, 1}, Staged{32, 64, 32, 8, 8, 2, 4, 2, 4, 1},
        // SPREAD_COPIES: with At (every work-group), and under A_DIRECT (its shares of B by
        // chunks and by floats); 1, 2 and 4 groups; the 256 x 128 start point.
        Staged{64, 64, 16, 8, 8, 4, 4, 2, 1, 0, 1}, Staged{128, 64, 16, 16, 8, 2, 4, 4, 2, 0, 1},
        Staged{64, 64, 16, 8, 8, 4, 4, 2, 1, 1, 1}, Staged{128, 64, 16, 16, 8, 2, 4, 4, 2, 1, 1},
        Staged{32, 64, 32, 8, 8, 2, 4, 2, 4, 1, 1}, Staged{256, 128, 8, 16, 16, 4, 4, 3, 1, 0, 1},
        // Tiles of 32 and 16 columns (staged_narrow's start points and their A_DIRECT twins, 2
        // groups, VWN 2).
        Staged{128, 32, 16, 16, 8, 4, 4, 3, 1}, Staged{64, 16, 32, 16, 4, 4, 4, 2, 1},
        Staged{128, 32, 16, 16, 8, 4, 4, 3, 1, 1}, Staged{64, 16, 32, 16, 4, 4, 4, 2, 2},
        Staged{64, 16, 16, 8, 8, 4, 2, 2, 1}, Staged{64, 16, 32, 16, 4, 4, 4, 2, 2, 1},
        // A_DIRECT 2 (A's tile in its rows; copied in chunks where K is a multiple of 4, else
        // float by float): staged_narrow's twins, 1, 2 and 4 groups, several rows of A and of B
        // per work-item's step.
        Staged{128, 32, 16, 16, 8, 4, 4, 3, 1, 2}, Staged{128, 16, 32, 16, 4, 4, 4, 2, 2, 2},
        Staged{64, 64, 16, 8, 8, 4, 4, 2, 4, 2}, Staged{32, 64, 32, 8, 8, 2, 4, 2, 4, 2},
        Staged{64, 64, 8, 8, 8, 4, 4, 3, 1, 2}}) {
    const auto spec = tunekit::cl::KernelSpec::embedded("matmul_staged.cl", staged_test_options(g),
                                                        "matmul_staged");
    // A tile whose work-group or local memory is past this device's limits is skipped, and said.
    const ::cl::NDRange group(g.ndimc, g.mdimc, g.kslice);
    if (ruled_out_here("matmul_staged MWG=" + std::to_string(g.mwg) +
                           " NWG=" + std::to_string(g.nwg) + " KWG=" + std::to_string(g.kwg) +
                           " KSLICE=" + std::to_string(g.kslice),
                       [&] { client.check_launch(client.kernel(spec), group, group); })) {
      continue;
    }
    // One K tile, K cut inside its last tile (37, 36 for 8- and 32-deep tiles), and up to 38
    // tiles; tiles cut at every edge; M and N multiples of 4 and not (rows padded: M odd, N odd,
    // both, and one row and column).
    const Problem problems[] = {{4, 4, 1},      {132, 68, 37},  {64, 128, 300}, {200, 260, 36},
                                {133, 68, 37},  {132, 67, 40},  {65, 131, 300}, {1, 1, 5},
                                {260, 132, 64}, {257, 131, 100}};
    for (std::size_t index = 0; index < std::size(problems); ++index) {
      const Problem p = problems[index];
      const auto a = random_values(p.m * p.k, 1), b = random_values(p.k * p.n, 2),
                 c0 = random_values(p.m * p.n, 3);
      // At and B in rows of whole chunks, NaN past M and N: those columns reach no stored output.
      // A_DIRECT: A and B themselves, and every other problem in rows longer than K and N, of
      // whole chunks, NaN past them (K odd and even): a read of A past K would reach the sums.
      const bool padded = g.a_direct != 0 && index % 2 == 1;
      const auto chunks_past = [](std::size_t floats) { return (floats + 3) / 4 * 4 + 4; };
      const std::size_t lda = !g.a_direct ? tunekit::ops::gemm::staged_row_floats(p.m)
                              : padded    ? chunks_past(p.k)
                                          : p.k,
                        ldb = !g.a_direct ? tunekit::ops::gemm::staged_row_floats(p.n)
                              : padded    ? chunks_past(p.n)
                                          : p.n;
      std::vector<float> at(g.a_direct ? p.m * lda : p.k * lda, nan), bp(p.k * ldb, nan);
      if (g.a_direct) {
        for (std::size_t i = 0; i < p.m; ++i)
          std::copy_n(a.begin() + i * p.k, p.k, at.begin() + i * lda);
        for (std::size_t q = 0; q < p.k; ++q)
          std::copy_n(b.begin() + q * p.n, p.n, bp.begin() + q * ldb);
      } else {
        for (std::size_t q = 0; q < p.k; ++q) {
          for (std::size_t i = 0; i < p.m; ++i) at[q * lda + i] = a[i * p.k + q];
          for (std::size_t j = 0; j < p.n; ++j) bp[q * ldb + j] = b[q * p.n + j];
        }
      }
      // One slice, and slices of one tile and of three (the last one short or empty).
      for (const std::size_t ks : {p.k, std::size_t(g.kwg), std::size_t(3 * g.kwg)}) {
        const std::size_t slices = (p.k + ks - 1) / ks;
        INFO("MWG=" << g.mwg << " NWG=" << g.nwg << " KWG=" << g.kwg << " STAGES=" << g.stages
                    << " KSLICE=" << g.kslice << " A_DIRECT=" << g.a_direct << " SPREAD_COPIES="
                    << g.spread_copies << " m=" << p.m << " n=" << p.n << " k=" << p.k
                    << " LDA=" << lda << " LDB=" << ldb << " KS=" << ks << " slices=" << slices);
        const float alpha = 1.5f, beta = -0.5f;
        auto c = client.upload(slices == 1 ? c0 : std::vector<float>(slices * p.m * p.n, nan));
        ::cl::Kernel kernel = client.kernel(spec);
        client.launch_with(kernel,
                           ::cl::NDRange((p.n + g.nwg - 1) / g.nwg * g.ndimc,
                                         (p.m + g.mwg - 1) / g.mwg * g.mdimc, slices * g.kslice),
                           ::cl::NDRange(g.ndimc, g.mdimc, g.kslice), static_cast<cl_int>(p.m),
                           static_cast<cl_int>(p.n), static_cast<cl_int>(p.k),
                           static_cast<cl_int>(lda), static_cast<cl_int>(ldb),
                           static_cast<cl_int>(ks), slices == 1 ? alpha : 1.0f,
                           slices == 1 ? beta : 0.0f, client.upload(at), client.upload(bp), c);
        auto out = client.download<float>(c, slices * p.m * p.n);
        if (slices > 1) {  // the slices' sum, as matmul_sum.cl adds it
          for (std::size_t i = 0; i < p.m * p.n; ++i) {
            float sum = 0.0f;
            for (std::size_t z = 0; z < slices; ++z) sum += out[z * p.m * p.n + i];
            out[i] = alpha * sum + beta * c0[i];
          }
          out.resize(p.m * p.n);
        }
        // Relative to the magnitude of the terms, as every matmul check here: the sum's rounding
        // grows with it (an absolute 1e-5 failed at K = 300 on the H200 by fused multiply-adds).
        CHECK(worst_relative_error(a, b, c0, out, p, alpha, beta) < 1e-5);
      }
    }
  }
}

TEST_CASE(
    "staged_operands writes At and padded B bit for bit in one launch, zeros past M and N, whole "
    "tiles and edges",
    "[ops][matmul][opencl]") {
  tunekit::cl::Client& client = test::default_client();
  struct Case {
    std::size_t m, k, n, lda, ldb;
  };
  // K a multiple of 4 with whole tiles (A's float4 loads) and not (float by float); At's rows
  // past M inside M's last tile and in a tile of their own (m 60, lda 72); B padded and not
  // (ldb == n: B itself, untouched).
  for (const Case& c :
       {Case{67, 130, 130, 68, 132}, Case{128, 64, 256, 128, 256}, Case{1, 5, 1, 4, 4},
        Case{130, 67, 255, 132, 256}, Case{200, 128, 3, 200, 4}, Case{60, 256, 68, 72, 68}}) {
    INFO("m=" << c.m << " k=" << c.k << " n=" << c.n << " lda=" << c.lda << " ldb=" << c.ldb);
    const auto a = random_values(c.m * c.k, 9), b = random_values(c.k * c.n, 10);
    const ::cl::Buffer b_buffer = client.upload(b);
    tunekit::ops::detail::StagedOperands operands;
    // Its work-groups of 256 and tiles of 16.6 KB of local memory: a smaller device refuses them
    // (and the staged candidates that need the pass with them), and says so.
    if (ruled_out_here("staged_operands", [&] {
          operands = tunekit::ops::detail::staged_operands(client, client.upload(a), b_buffer, c.m,
                                                           c.k, c.n, c.lda, c.ldb);
        })) {
      return;
    }
    const auto at = client.download<float>(operands.at, c.k * c.lda);
    const auto bp = client.download<float>(operands.b_rows, c.k * c.ldb);
    CHECK((c.ldb == c.n) == (operands.b_rows() == b_buffer()));
    std::size_t wrong_a = 0, wrong_b = 0;
    for (std::size_t q = 0; q < c.k; ++q) {
      for (std::size_t i = 0; i < c.lda; ++i)
        wrong_a += at[q * c.lda + i] != (i < c.m ? a[i * c.k + q] : 0.0f);
      for (std::size_t j = 0; j < c.ldb; ++j)
        wrong_b += bp[q * c.ldb + j] != (j < c.n ? b[q * c.n + j] : 0.0f);
    }
    CHECK(wrong_a == 0);
    CHECK(wrong_b == 0);
  }
}

TEST_CASE(
    "matmul_split_sum adds the slices in slice order, alpha and beta, on the first MI rows' first "
    "NI columns, C's other floats kept",
    "[ops][matmul][opencl]") {
  namespace passes = tunekit::ops::operand_passes;
  tunekit::cl::Client& client = test::default_client();
  const auto spec = tunekit::cl::KernelSpec::embedded("matmul_sum.cl", passes::sum_options(32),
                                                      "matmul_split_sum");
  const float nan = std::numeric_limits<float>::quiet_NaN();
  struct SumCase {
    std::size_t m, n, mi, ni;
  };
  // Rows shorter than a work-group and not whole work-groups; all of C, and an interior that
  // leaves out its last rows and columns (a peeled product's: the edge kernel's part).
  for (const SumCase s : {SumCase{1, 1, 1, 1}, SumCase{1, 7, 1, 7}, SumCase{13, 79, 13, 79},
                          SumCase{13, 79, 12, 77}, SumCase{3, 130, 2, 128}}) {
    const std::size_t mn = s.m * s.n;
    for (const int splits : {1, 2, 5}) {
      for (const float beta : {0.0f, -0.5f}) {
        INFO("m=" << s.m << " n=" << s.n << " mi=" << s.mi << " ni=" << s.ni << " splits=" << splits
                  << " beta=" << beta);
        const float alpha = 1.5f;
        const auto w = random_values(splits * mn, 11), c0 = random_values(mn, 12);
        // Inside, beta 0 must not read C (NaN there); outside, C and one float past it must stay
        // as they were.
        std::vector<float> c_in(c0);
        c_in.push_back(42.0f);
        for (std::size_t i = 0; i < mn && beta == 0.0f; ++i) {
          if (i / s.n < s.mi && i % s.n < s.ni) c_in[i] = nan;
        }
        auto c = client.upload(c_in);
        ::cl::Kernel kernel = client.kernel(spec);
        const auto range = passes::sum_range(s.mi, s.ni);
        client.launch_with(kernel, ::cl::NDRange(range.global[0], range.global[1]),
                           ::cl::NDRange(range.local[0], range.local[1]), static_cast<cl_int>(mn),
                           static_cast<cl_int>(s.n), static_cast<cl_int>(s.ni), splits, alpha, beta,
                           client.upload(w), c);
        const auto out = client.download<float>(c, mn + 1);
        std::size_t wrong = 0, touched = 0;
        for (std::size_t i = 0; i < mn; ++i) {
          if (i / s.n >= s.mi || i % s.n >= s.ni) {
            touched += out[i] != c0[i];
            continue;
          }
          float sum = 0.0f;
          for (int z = 0; z < splits; ++z) sum += w[z * mn + i];
          const double want = double(alpha) * sum + (beta != 0.0f ? double(beta) * c0[i] : 0.0);
          // The slices in order, as the host: only the last multiply-add may round differently.
          wrong += !(std::abs(out[i] - want) <= 1e-6 * (std::abs(want) + 1.0));
        }
        CHECK(wrong == 0);
        CHECK(touched == 0);
        CHECK(out[mn] == 42.0f);
      }
    }
  }
}

TEST_CASE(
    "matmul_edges.cl computes the outputs past MI rows and NI columns, alpha and beta, in f32, f16 "
    "and bf16 storage, and leaves the others as they were",
    "[ops][matmul][opencl]") {
  namespace passes = tunekit::ops::operand_passes;
  tunekit::cl::Client& client = test::default_client();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  struct EdgeCase {
    std::size_t m, n, k, mi, ni;
  };
  // Rows and columns, rows only, columns only, every output (MI = 0), K below the lanes.
  const std::vector<EdgeCase> cases{{67, 45, 33, 64, 40},  {67, 45, 100, 64, 45},
                                    {67, 45, 33, 67, 44},  {3, 5, 70, 0, 5},
                                    {130, 70, 9, 128, 64}, {1, 1, 1, 0, 1}};
  for (const auto& [dtype, precision, bound] :
       {std::tuple{DType::f32, 32, 1e-5}, std::tuple{DType::f16, 16, 2e-3},
        std::tuple{DType::bf16, 116, 8e-3}}) {
    const auto spec = tunekit::cl::KernelSpec::embedded(
        "matmul_edges.cl", passes::edges_options(precision), "matmul_edges");
    for (const EdgeCase& edge_case : cases) {
      // References, not a structured binding: clang before 16 cannot capture one.
      const std::size_t &m = edge_case.m, &n = edge_case.n, &k = edge_case.k;
      const std::size_t &mi = edge_case.mi, &ni = edge_case.ni;
      for (const float beta : {0.0f, -0.5f}) {
        INFO(to_string(dtype) << " " << m << "x" << n << "x" << k << " MI=" << mi << " NI=" << ni
                              << " beta=" << beta);
        const float alpha = 1.5f;
        const auto edge = [&](std::size_t i, std::size_t j) { return i >= mi || j >= ni; };
        // beta 0 must not read C: NaN on the edges; the outputs inside stay as they were.
        auto c_in = random_values(m * n, 3);
        for (std::size_t i = 0; i < m; ++i) {
          for (std::size_t j = 0; j < n; ++j) {
            if (beta == 0.0f && edge(i, j)) c_in[i * n + j] = nan;
          }
        }
        auto a = upload_matrix(client, random_values(m * k, 1), m, k, dtype);
        auto b = upload_matrix(client, random_values(k * n, 2), k, n, dtype);
        auto c = upload_matrix(client, c_in, m, n, dtype);
        const auto ha = download_matrix(client, a), hb = download_matrix(client, b),
                   hc = download_matrix(client, c);
        const auto range = passes::edges_range(passes::edge_outputs_of(m, n, mi, ni));
        ::cl::Kernel kernel = client.kernel(spec);
        client.launch_with(kernel, ::cl::NDRange(range.global[0], range.global[1]),
                           ::cl::NDRange(range.local[0], range.local[1]), static_cast<cl_int>(m),
                           static_cast<cl_int>(n), static_cast<cl_int>(k), static_cast<cl_int>(mi),
                           static_cast<cl_int>(ni), alpha, beta, a.buffer, b.buffer, c.buffer);
        const auto out = download_matrix(client, c);
        std::size_t wrong = 0, changed = 0;
        for (std::size_t i = 0; i < m; ++i) {
          for (std::size_t j = 0; j < n; ++j) {
            const float got = out[i * n + j];
            if (!edge(i, j)) {
              changed += std::memcmp(&got, &hc[i * n + j], sizeof got) != 0;
              continue;
            }
            double sum = 0, magnitude = 0;
            for (std::size_t q = 0; q < k; ++q) {
              const double term = static_cast<double>(ha[i * k + q]) * hb[q * n + j];
              sum += term;
              magnitude += std::fabs(term);
            }
            const double c0 = beta == 0.0f ? 0.0 : hc[i * n + j];
            const double want = alpha * sum + beta * c0;
            magnitude = std::fabs(alpha) * magnitude + std::fabs(beta * c0);
            wrong += !(std::fabs(got - want) <= bound * magnitude);
          }
        }
        CHECK(wrong == 0);
        CHECK(changed == 0);
      }
    }
  }
}

TEST_CASE(
    "a blocked or split product whose last row or column of tiles would hold a few rows leaves "
    "them to matmul_edges.cl, a second launch, and is right on every output",
    "[ops][matmul][opencl]") {
  CHECK(gemm::peeled(1025, 64) == 1);
  CHECK(gemm::peeled(1028, 64) == 4);
  CHECK(gemm::peeled(1029, 64) == 0);  // past a sixteenth of the tile
  CHECK(gemm::peeled(1032, 128) == 8);
  CHECK(gemm::peeled(1024, 64) == 0);  // whole tiles
  CHECK(gemm::peeled(65, 64) == 1);
  CHECK(gemm::peeled(3, 64) == 0);  // no whole tile
  tunekit::cl::Client& client = test::default_client();
  const std::string square = "blocked[MWG=64,NWG=64,KWG=16,MDIMC=8,NDIMC=16,VWM=2,VWN=2,VW=4,DB=1]";
  // Rows on tiles of 32, columns on 64: 97 x 132 peels 1 row and 4 columns, and nothing were the
  // two tiles swapped.
  const std::string wide = "blocked[MWG=32,NWG=64,KWG=16,MDIMC=8,NDIMC=16,VWM=2,VWN=2,VW=4,DB=1]";
  // K split 4 ways on the whole tiles, the slices added by the launch's last work-groups.
  const std::string split =
      "split[MWG=64,NWG=64,KWG=16,MDIMC=8,NDIMC=16,VWM=4,VWN=4,VW=4,DB=1,KSPLIT=4]";
  struct LaunchCase {
    std::string candidate;
    Problem problem;
    std::size_t launches;
  };
  // Rows and columns past the tiles, rows only, columns only, none (too many, or whole tiles).
  for (const LaunchCase& launch :
       {LaunchCase{square, {129, 130, 70}, 2}, LaunchCase{square, {65, 100, 33}, 2},
        LaunchCase{square, {200, 1028, 20}, 2}, LaunchCase{square, {100, 100, 50}, 1},
        LaunchCase{square, {128, 64, 64}, 1}, LaunchCase{wide, {97, 132, 40}, 2},
        LaunchCase{wide, {99, 130, 40}, 2}, LaunchCase{wide, {99, 99, 40}, 1},
        LaunchCase{split, {129, 130, 70}, 2}, LaunchCase{split, {257, 64, 300}, 2},
        LaunchCase{split, {100, 100, 50}, 1}}) {
    // References, not a structured binding: clang before 16 cannot capture one.
    const std::string& candidate = launch.candidate;
    const Problem& p = launch.problem;
    const std::size_t launches = launch.launches;
    INFO(candidate << " m=" << p.m << " n=" << p.n << " k=" << p.k);
    double error = 0;
    if (ruled_out_here(candidate, [&] {
          error = run_and_check(client, candidate, p, DType::f32, 1.5f, -0.5f);
        })) {
      continue;
    }
    CHECK(error < 1e-5);
    CHECK(run_and_check(client, candidate, p, DType::f16, 1.5f, 0.0f) < 2e-3);
    CHECK(launches_of(client, candidate, p) == launches);
  }
}

TEST_CASE(
    "a candidate whose edge launch the device refuses fails before its product changes C, so "
    "that the next candidate would serve the call from the caller's C",
    "[ops][matmul][opencl]") {
  // A device narrower along dimension 0 than matmul_edges' 32 lanes (a client given smaller
  // limits: tunekit's launch checks hold it to them): the blocked product's work-groups fit, the
  // edge kernel's do not. Before, the product updated C under beta != 0, the edges failed, and
  // the call's next candidate computed from the updated C: a wrong result.
  tunekit::cl::DeviceInfo narrow = test::default_client().device();
  REQUIRE(narrow.max_work_item_sizes.size() == 3);
  narrow.max_work_item_sizes[0] = 16;
  tunekit::cl::Client client(narrow);
  // 64 work-items of 8 along dimension 0, 12,800 bytes of local memory.
  const std::string wide = "blocked[MWG=32,NWG=64,KWG=16,MDIMC=8,NDIMC=8,VWM=2,VWN=2,VW=4,DB=1]";
  const Problem p{97, 132, 40};  // peels 1 row and 4 columns
  auto [a, b, c] = upload_problem(client, p);
  const auto before = ops::download_matrix(client, c);
  try {
    ops::matmul_with(wide, client, a, b, c, 1.5f, -0.5f);
    FAIL("the edge kernel's launch was not refused");
  } catch (const AutotuneError& e) {
    CHECK_THAT(e.message(),
               Catch::Contains("dimension 0 exceeds") && Catch::Contains("matmul_edges"));
    CHECK(e.beyond_device_limits());
    CHECK_FALSE(e.changed_outputs());
  }
  CHECK(ops::download_matrix(client, c) == before);  // untouched
  // Its whole tiles alone need no edge kernel: it runs there (where the device takes 64).
  double whole_tiles_error = 0;
  if (!ruled_out_here(wide, [&] {
        whole_tiles_error = run_and_check(client, wide, {96, 128, 40}, DType::f32, 1.5f, -0.5f);
      })) {
    CHECK(whole_tiles_error < 1e-5);
  }
}

TEST_CASE(
    "preparing a candidate of a family that peels builds its edge program on a shape that does "
    "not peel, so that a later call of the key that peels builds nothing more",
    "[ops][matmul][opencl]") {
  tunekit::cl::Client& client = test::default_client();
  struct PrepareCase {
    std::string candidate;
    std::size_t programs;  // what prepare builds: the product's, then its companions
  };
  std::vector<PrepareCase> cases{
      {"blocked[MWG=64,NWG=64,KWG=16,MDIMC=8,NDIMC=16,VWM=2,VWN=2,VW=4,DB=1]", 2},
      {"split[MWG=64,NWG=64,KWG=16,MDIMC=8,NDIMC=16,VWM=4,VWN=4,VW=4,DB=1,KSPLIT=4]", 2},
      {"direct[WPTM=4,VWN=4,NVEC=1,LX=16,LY=8]", 1}};  // no tiles: nothing peels, no companion
  if (has_cp_async(client.device())) {
    // The pass on A and B, and the staged split's sum, besides the product and the edges.
    cases.push_back(
        {"staged[MWG=64,NWG=64,KWG=32,MDIMC=8,NDIMC=16,VWM=4,VWN=2,STAGES=2,KSLICE=2,"
         "A_DIRECT=0,SPREAD_COPIES=0]",
         3});
    cases.push_back(
        {"staged_split[MWG=64,NWG=64,KWG=16,MDIMC=8,NDIMC=16,VWM=4,VWN=2,STAGES=3,"
         "KSLICE=1,KSPLIT=4,A_DIRECT=0,SPREAD_COPIES=0]",
         4});
  }
  const Problem whole{128, 128, 64}, peeling{129, 130, 64};  // 64 x 64 tiles: whole, and not
  REQUIRE(gemm::peeled(whole.m, 64) == 0);
  REQUIRE(gemm::peeled(peeling.m, 64) == 1);
  ProblemOperands whole_operands = upload_problem(client, whole);
  ProblemOperands peeling_operands = upload_problem(client, peeling);
  for (const PrepareCase& prepare_case : cases) {
    const std::string& candidate = prepare_case.candidate;
    const std::size_t programs = prepare_case.programs;
    INFO(candidate);
    client.programs().clear();
    // Preparing builds; a launch past this device's limits is refused at the call.
    ruled_out_here(candidate, [&] {
      tunekit::ops::detail::prepare_matmul_with(candidate, client, whole_operands.a,
                                                whole_operands.b, whole_operands.c);
      CHECK(client.programs().size() == programs);
      tunekit::ops::matmul_with(candidate, client, peeling_operands.a, peeling_operands.b,
                                peeling_operands.c);
      client.finish();
      CHECK(client.programs().size() == programs);  // the edge program was there already
    });
  }
}

TEST_CASE(
    "staged matmul candidates are correct on every shape (M and N multiples of 4 and not), on "
    "devices with cp.async, and elsewhere say so before a build",
    "[ops][matmul][opencl]") {
  tunekit::cl::Client& client = test::default_client();
  auto staged = every_nth("staged", 77);  // each value of each parameter
  staged.push_back(
      "staged[MWG=128,NWG=128,KWG=16,MDIMC=16,NDIMC=16,VWM=4,VWN=2,STAGES=2,KSLICE=1,A_DIRECT=0,"
      "SPREAD_COPIES=0]");
  staged.push_back(
      "staged[MWG=128,NWG=64,KWG=16,MDIMC=16,NDIMC=8,VWM=4,VWN=4,STAGES=3,KSLICE=2,A_DIRECT=0,"
      "SPREAD_COPIES=1]");
  // K tiles shared by 2 groups of work-items (their sums added in local memory), with the passes
  // and without (A_DIRECT).
  staged.push_back(
      "staged[MWG=64,NWG=64,KWG=32,MDIMC=8,NDIMC=16,VWM=4,VWN=2,STAGES=2,KSLICE=2,A_DIRECT=0,"
      "SPREAD_COPIES=0]");
  staged.push_back(
      "staged[MWG=64,NWG=64,KWG=32,MDIMC=8,NDIMC=16,VWM=4,VWN=2,STAGES=2,KSLICE=2,A_DIRECT=1,"
      "SPREAD_COPIES=0]");
  staged.push_back(
      "staged[MWG=64,NWG=64,KWG=16,MDIMC=8,NDIMC=8,VWM=4,VWN=4,STAGES=3,KSLICE=2,A_DIRECT=0,"
      "SPREAD_COPIES=0]");
  staged.push_back(
      "staged[MWG=128,NWG=128,KWG=16,MDIMC=16,NDIMC=16,VWM=4,VWN=2,STAGES=2,KSLICE=1,A_DIRECT=1,"
      "SPREAD_COPIES=0]");
  // The copies spread between the rows: cuBLAS's 256 x 128 x 8 tile (with the passes, and
  // without them with VWN=2: both start points), and 2 groups of work-items.
  staged.push_back(
      "staged[MWG=256,NWG=128,KWG=8,MDIMC=16,NDIMC=16,VWM=4,VWN=4,STAGES=3,KSLICE=1,A_DIRECT=0,"
      "SPREAD_COPIES=1]");
  staged.push_back(
      "staged[MWG=256,NWG=128,KWG=8,MDIMC=16,NDIMC=16,VWM=4,VWN=2,STAGES=3,KSLICE=1,A_DIRECT=1,"
      "SPREAD_COPIES=1]");
  staged.push_back(
      "staged[MWG=64,NWG=64,KWG=32,MDIMC=8,NDIMC=16,VWM=4,VWN=2,STAGES=2,KSLICE=2,A_DIRECT=1,"
      "SPREAD_COPIES=1]");
  REQUIRE(staged.size() >= 8);
  // Its split form: each number of slices, more slices than K tiles (empty ones) included.
  for (const auto& name : every_nth("staged_split", 291)) staged.push_back(name);
  for (const int slices : {2, 3, 4, 8, 16, 32, 64}) {
    staged.push_back(
        "staged_split[MWG=64,NWG=64,KWG=16,MDIMC=8,NDIMC=16,VWM=4,VWN=2,STAGES=3,KSLICE=" +
        std::to_string(slices == 4 ? 2 : 1) + ",KSPLIT=" + std::to_string(slices) +
        ",A_DIRECT=" + (slices == 3 || slices == 4 ? "1" : "0") + ",SPREAD_COPIES=0]");
  }
  // Its narrow tiles: a spread of the family and its start points.
  for (const auto& name : every_nth("staged_narrow", 97)) staged.push_back(name);
  staged.push_back(
      "staged_narrow[MWG=128,NWG=32,KWG=16,MDIMC=16,NDIMC=8,VWM=4,VWN=4,STAGES=3,KSLICE=1,"
      "A_DIRECT=0,SPREAD_COPIES=0]");
  staged.push_back(
      "staged_narrow[MWG=64,NWG=16,KWG=32,MDIMC=16,NDIMC=4,VWM=4,VWN=4,STAGES=2,KSLICE=1,"
      "A_DIRECT=0,SPREAD_COPIES=0]");
  staged.push_back(
      "staged_narrow[MWG=128,NWG=32,KWG=16,MDIMC=16,NDIMC=8,VWM=4,VWN=4,STAGES=3,KSLICE=1,"
      "A_DIRECT=2,SPREAD_COPIES=0]");
  staged.push_back(
      "staged_narrow[MWG=128,NWG=16,KWG=32,MDIMC=16,NDIMC=4,VWM=4,VWN=4,STAGES=2,KSLICE=2,"
      "A_DIRECT=2,SPREAD_COPIES=0]");
  REQUIRE(staged.size() >= 30);
  check_candidates(client, staged,
                   {Problem{4, 4, 1}, Problem{132, 68, 37}, Problem{64, 128, 300},
                    Problem{133, 67, 37}, Problem{133, 68, 37}, Problem{132, 67, 40},
                    Problem{1, 5, 3}, Problem{257, 130, 100}, Problem{300, 35, 70}});
  // 16-bit storage: refused for the call, on every device, before anything is built.
  for (const DType dtype : {DType::f16, DType::bf16}) {
    INFO(to_string(dtype));
    try {
      (void)run_and_check(client, staged.back(), Problem{64, 64, 64}, dtype, 1.0f, 0.0f);
      FAIL("the staged family ran a 16-bit call");
    } catch (const AutotuneError& e) {
      CHECK(e.kind() == ErrorKind::launch);
      CHECK_THAT(e.what(), Catch::Contains("the staged family takes f32 storage, not " +
                                           std::string(to_string(dtype))));
    }
  }
  // The split form peeled (257 x 130: a row and two columns past 64 x 64 tiles), with beta != 0:
  // the sum adds the whole tiles' rows and columns, the edge kernel the rest, beta once each.
  // Launches: the pass on A and B (none under A_DIRECT), the product, the sum, the edges.
  if (!has_cp_async(client.device())) return;
  const Problem peeling{257, 130, 100};
  for (const auto& [a_direct, launches] : {std::pair{'0', std::size_t{4}}, {'1', 3}}) {
    const std::string candidate =
        std::string("staged_split[MWG=64,NWG=64,KWG=16,MDIMC=8,NDIMC=16,VWM=4,VWN=2,STAGES=3,") +
        "KSLICE=1,KSPLIT=4,A_DIRECT=" + a_direct + ",SPREAD_COPIES=0]";
    INFO(candidate);
    CHECK(run_and_check(client, candidate, peeling, DType::f32, 1.5f, -0.5f) < 1e-5);
    CHECK(launches_of(client, candidate, peeling) == launches);
  }
}

TEST_CASE("sampled matmul candidates of every family are correct on odd sizes",
          "[ops][matmul][opencl]") {
  tunekit::cl::Client& client = test::default_client();
  check_candidates(client, sampled_candidates(),
                   {Problem{37, 53, 29}, Problem{1, 1, 1}, Problem{130, 70, 9}});
}

TEST_CASE("skinny matmul candidates are correct on few rows: 1, primes, one past a tile",
          "[ops][matmul][opencl]") {
  tunekit::cl::Client& client = test::default_client();
  auto skinny = every_nth("skinny", 17);  // each value of each parameter several times
  skinny.push_back("skinny[WPTM=1,VWN=2,NDIMC=32,KDIMC=4,KSPLIT=16]");  // the start points
  skinny.push_back("skinny[WPTM=8,VWN=4,NDIMC=32,KDIMC=4,KSPLIT=4]");
  REQUIRE(skinny.size() >= 15);
  // K = 1 and 29: slices past K (KSPLIT = 16); K = 129: uneven slices.
  check_candidates(client, skinny,
                   {Problem{1, 1, 1}, Problem{1, 67, 129}, Problem{17, 129, 33},
                    Problem{64, 64, 64}, Problem{37, 53, 29}});
}

TEST_CASE("split-K matmul candidates are correct, also with more slices than K tiles",
          "[ops][matmul][opencl]") {
  tunekit::cl::Client& client = test::default_client();
  const auto split = every_nth("split", 11);  // every KSPLIT, tiles of every size
  REQUIRE(split.size() == 12);
  std::set<std::string> slices;
  for (const auto& name : split) slices.insert(name.substr(name.find("KSPLIT=")));
  CHECK(slices.size() == 7);  // 2, 3, 4, 8, 16, 32, 64
  // K = 29 and 9: one or two K tiles for 2-64 slices; K = 300: 19 tiles, uneven slices.
  check_candidates(
      client, split,
      {Problem{1, 1, 1}, Problem{37, 53, 29}, Problem{33, 65, 300}, Problem{130, 70, 9}});
}

// The real-small list of bench_ops (the classes of the shapes real programs use, at PoCL's
// sizes) through one candidate of each family made for them, C checked on its first, middle and
// last rows (every column) against the double-precision reference.
TEST_CASE("matmul candidates are correct on every shape of bench_ops' real-small list",
          "[ops][matmul][opencl]") {
  tunekit::cl::Client& client = test::default_client();
  for (const auto& [m, n, k] : tunekit::bench::real_small_shapes()) {
    const auto ha = random_values(m * k, 1), hb = random_values(k * n, 2);
    auto a = upload_matrix(client, ha, m, k), b = upload_matrix(client, hb, k, n);
    const std::vector<float> zero_c(m * n, 0.0f);  // C as uploaded, and the reference's (beta 0)
    auto c = upload_matrix(client, zero_c, m, n);
    std::vector<std::string> candidates{
        "direct[WPTM=4,VWN=16,NVEC=2,LX=1,LY=8]",
        "blocked[MWG=64,NWG=64,KWG=16,MDIMC=8,NDIMC=16,VWM=2,VWN=2,VW=4,DB=1]",
        "split[MWG=64,NWG=64,KWG=16,MDIMC=8,NDIMC=16,VWM=4,VWN=4,VW=4,DB=1,KSPLIT=8]"};
    // 32 x 4 work-items: within every device's limits (the H100's kernels take at most 256).
    if (m <= 64) candidates.push_back("skinny[WPTM=1,VWN=2,NDIMC=32,KDIMC=4,KSPLIT=4]");
    for (const auto& candidate : candidates) {
      INFO(candidate << " " << m << "x" << n << "x" << k);
      if (ruled_out_here(candidate, [&] { matmul_with(candidate, client, a, b, c); })) continue;
      const auto hc = download_matrix(client, c);
      const double worst = worst_relative_error_on_rows(ha, hb, zero_c, hc, {m, n, k}, 1.0f, 0.0f,
                                                        {0, m / 2, m - 1});
      CHECK(worst < 1e-5);
    }
  }
}

TEST_CASE("matmul accumulates into C with beta and works with f16 and bf16 storage",
          "[ops][matmul][opencl]") {
  tunekit::cl::Client& client = test::default_client();
  for (const auto& candidate :
       {std::string("naive[LX=16,LY=16]"), std::string("tiled[TS=16]"),
        std::string("direct[WPTM=4,VWN=16,NVEC=2,LX=1,LY=1]"),
        std::string("blocked[MWG=64,NWG=64,KWG=16,MDIMC=8,NDIMC=16,VWM=2,VWN=2,VW=4,DB=1]"),
        std::string("skinny[WPTM=4,VWN=4,NDIMC=32,KDIMC=4,KSPLIT=1]"),
        std::string("skinny[WPTM=4,VWN=4,NDIMC=32,KDIMC=4,KSPLIT=4]"),
        std::string(
            "split[MWG=64,NWG=64,KWG=16,MDIMC=8,NDIMC=16,VWM=4,VWN=4,VW=4,DB=1,KSPLIT=8]")}) {
    INFO(candidate);
    double error = 0;
    if (ruled_out_here(candidate, [&] {
          error = run_and_check(client, candidate, {45, 33, 70}, DType::f32, -0.5f, 0.75f);
        })) {
      continue;
    }
    CHECK(error < 1e-5);
    CHECK(run_and_check(client, candidate, {45, 33, 70}, DType::f16, 1.0f, 0.5f) < 2e-3);
    // bf16: 8 bits of mantissa, its output rounding 2^-9 of |C|.
    CHECK(run_and_check(client, candidate, {45, 33, 70}, DType::bf16, 1.0f, 0.5f) < 8e-3);
  }
}

TEST_CASE("a K split of 16-bit matrices keeps its slices' partial products in f32",
          "[ops][matmul][opencl]") {
  // Partial products that a 16-bit type cannot hold, though their sum is exact: f16 slices of
  // +-200 x 200 x 32 overflow its 65504 (C was NaN); a bf16 slice of 256 + 1 rounds to 256 (C
  // was 0, not 1). Every split candidate must give what the unsplit kernels give.
  tunekit::cl::Client& client = test::default_client();
  const std::vector<std::string> candidates{
      "naive[LX=16,LY=16]",
      "split[MWG=64,NWG=64,KWG=16,MDIMC=8,NDIMC=16,VWM=4,VWN=4,VW=4,DB=1,KSPLIT=2]",
      "skinny[WPTM=4,VWN=4,NDIMC=32,KDIMC=4,KSPLIT=4]"};
  for (const DType dtype : {DType::f16, DType::bf16}) {
    const std::size_t k = dtype == DType::f16 ? 64 : 32;
    std::vector<float> a(k, 0.0f), b(k, dtype == DType::f16 ? 200.0f : 1.0f);
    if (dtype == DType::f16) {
      for (std::size_t i = 0; i < k; ++i) a[i] = i < k / 2 ? 200.0f : -200.0f;
    } else {
      a[0] = 256, a[1] = 1, a[16] = -256;
    }
    const float exact = dtype == DType::f16 ? 0.0f : 1.0f;
    for (const auto& candidate : candidates) {
      INFO(to_string(dtype) << " " << candidate);
      const auto A = upload_matrix(client, a, 1, k, dtype);
      const auto B = upload_matrix(client, b, k, 1, dtype);
      auto C = upload_matrix(client, {7.0f}, 1, 1, dtype);
      if (ruled_out_here(candidate, [&] { matmul_with(candidate, client, A, B, C); })) continue;
      CHECK(download_matrix(client, C)[0] == exact);
    }
  }
}

// The 32-bit boundary on a big GPU (hidden: `tunekit_ops_tests "[gpu-large]"` on an H100; it
// needs about 9 GB of device memory and 20 GB of host memory). C = A * B of 46341 x 46341 x 1
// holds 2,147,488,281 elements, just over 2^31: on main this killed the queue
// (CL_INVALID_COMMAND_QUEUE) where 46340 x 46340 worked. Each family's first candidate runs
// directly (tuning would benchmark a 65536 x 65536 twin, 17 GB, for every candidate): the
// kernels with 32-bit offsets refuse it before launch, naming 2^31, and the 64-bit ones serve it;
// every element past index 2^31 is checked.
TEST_CASE("a scratch buffer that could not grow keeps the size it has", "[ops][opencl]") {
  // An allocation past the device's largest fails; the slot must not then claim that size, or
  // the next call of a size between gets the old, smaller buffers and writes past them.
  auto& client = tunekit::test::default_client();
  tunekit::ops::detail::Scratch<2> scratch;
  (void)scratch.buffers(client, 16);
  CHECK_THROWS_AS(scratch.buffers(client, client.device().max_allocation + 1),
                  tunekit::AutotuneError);
  for (const auto& buffer : scratch.buffers(client, 4096)) {
    CHECK(buffer.template getInfo<CL_MEM_SIZE>() >= 4096);
  }
}

TEST_CASE("matmul of 46341 x 46341 x 1: C over 2^31 elements is right to its last element",
          "[.][gpu][gpu-large]") {
  auto& client = tunekit::test::default_client();
  const std::size_t n = 46341;
  REQUIRE(client.device().max_allocation >= n * n * sizeof(float));
  const auto va = random_values(n, 1), vb = random_values(n, 2);
  auto a = upload_matrix(client, va, n, 1);
  auto b = upload_matrix(client, vb, 1, n);
  auto c = upload_matrix(client, std::vector<float>(n * n, 0.0f), n, n);
  std::map<std::string, std::string> first_of_family;  // family -> its first candidate
  for (const auto& name : matmul_candidates(client.limits())) {
    first_of_family.try_emplace(name.substr(0, name.find('[')), name);
  }
  std::size_t served = 0;
  for (const auto& [family, name] : first_of_family) {
    INFO("candidate " << name);
    const bool offsets_32_bit = family != "naive" && family != "tiled";
    if (offsets_32_bit) {
      CHECK_THROWS_WITH(matmul_with(name, client, a, b, c), Catch::Contains("2^31"));
      continue;
    }
    matmul_with(name, client, a, b, c);
    ++served;
    const auto hc = download_matrix(client, c);
    REQUIRE(hc.size() == n * n);
    std::size_t wrong = 0, first_wrong = 0;
    const std::size_t boundary = std::size_t{1} << 31;
    for (std::size_t i = 0; i < hc.size(); i += i + 1 < boundary - 1000 ? 997 : 1) {
      if (hc[i] != va[i / n] * vb[i % n] && wrong++ == 0) first_wrong = i;
    }
    INFO("first wrong element: " << first_wrong);
    CHECK(wrong == 0);
    c = upload_matrix(client, std::vector<float>(n * n, 0.0f), n, n);  // the next starts clean
  }
  CHECK(served >= 2);  // naive and tiled
}
