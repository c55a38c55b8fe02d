// matmul: C = alpha * A * B + beta * C (row-major SGEMM, and f16 or bf16 storage where asked),
// tuned over eleven algorithms and their parameter spaces: naive, local-memory tiled, direct
// register-blocked without local memory, 2D register-blocked with double buffering, skinny (few
// rows, K split across a work-group) for M <= 64, split K, and on NVIDIA devices of compute
// capability 8.0 and up the 2D register blocks over tiles staged by cp.async from A transposed
// (f32), and the tensor cores through inline PTX: for 16-bit storage
// mma.sync (and wgmma on 9.0), for f32 where the caller allows TF32 mma.sync's TF32 form (and
// wgmma's on 9.0).
#pragma once

#include <array>
#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tunekit/anchor.hpp"
#include "tunekit/detail/local_tuner_fwd.hpp"
#include "tunekit/device_limits.hpp"
#include "tunekit/dtype.hpp"
#include "tunekit/key.hpp"
#include "tunekit/ops/matrix.hpp"
#include "tunekit/throughput.hpp"

namespace tunekit::ops {

/// How a size sits against its anchor (the next power of two): the kernels' edge handling and how
/// many tiles fill the device depend on it. `pow2`: the size is its anchor; `m16`: a multiple of
/// 16 below it (vector loads of any width up to 16, whole 16-wide tiles); `other`: anything else
/// (element loads, partial tiles). The non-power-of-two classes are split at 3/4 of the anchor:
/// `_high` above it, `_low` at or below (1025 and 2047 anchor to 2048 but leave a device with
/// very different counts of tiles). docs/benchmarks.md says why these five.
enum class DimFit : std::uint8_t { pow2, m16_high, m16_low, other_high, other_low };
/// "pow2", "m16_high", "m16_low", "other_high", "other_low"
std::ostream& operator<<(std::ostream& os, DimFit fit);
/// The class of `size` (>= 1).
DimFit dim_fit(std::uint64_t size);
/// The smallest size of the class (`anchor`, `fit`): the anchor for pow2, else one past half the
/// anchor (`_low`) or one past 3/4 of it (`_high`). Every size of the class is at least this.
std::uint64_t smallest_size(std::uint64_t anchor, DimFit fit);
/// Whether every size of the class (`anchor`, `fit`) is a multiple of `step` (a power of two up
/// to 16): a power of two of at least `step`, or a multiple of 16. What a family that needs
/// aligned rows can rely on for every call of a key.
bool every_size_multiple_of(std::uint64_t anchor, DimFit fit, std::uint64_t step);

/// What a caller allows an f32 product's arithmetic to be. `ieee`: every product of f32 inputs,
/// summed in f32. `tf32`: the products may round their inputs to TF32 (8-bit exponent, 10-bit
/// mantissa, as NVIDIA's tensor cores take f32) first, which is several times faster where the
/// device has them and changes each product by up to 2^-10 of it; the validator accepts
/// the product of the inputs or of the rounded inputs (tf32_rounded). Opt in per call; f16 and
/// bf16 storage ignore it (their inputs are already narrower).
enum class MatmulMath : std::uint8_t { ieee, tf32 };
/// "ieee", "tf32"
std::ostream& operator<<(std::ostream& os, MatmulMath math);

/// The tuning key of matmul: sizes anchored to powers of two, how each size fits its anchor, the
/// element type, and the arithmetic allowed (a caller that allows TF32 never shares a winner with
/// one that does not). Build it with matmul_key(). A tuning benchmarks the shape of the call that
/// met the key first (as CubeCL's matmul does); later calls of the key run its winner.
struct MatmulKey {
  BOOST_HANA_DEFINE_STRUCT(MatmulKey, (Anchored<std::uint64_t>, m), (Anchored<std::uint64_t>, n),
                           (Anchored<std::uint64_t>, k), (DimFit, m_fit), (DimFit, n_fit),
                           (DimFit, k_fit), (DType, dtype), (MatmulMath, math));
  /// The smallest sizes (m, n, k) of the calls this key covers: smallest_size of each.
  std::array<std::uint64_t, 3> smallest() const;
  /// The work of the smallest call of this key (2mnk FLOPs; A and B read, C written once): no
  /// call of the key does less, so a roofline drawn from it never stops a tuning too early.
  Work work() const;
};

/// The work of the problem a matmul tuning timed: its benchmark inputs' own shape, the call's
/// (throughput.hpp's benchmark_work: GFLOP/s exact for every key, not only the powers of two).
Work benchmark_work(const MatmulKey& key, const DeviceMatrix& a, const DeviceMatrix& b,
                    const DeviceMatrix& c, const float& alpha, const float& beta,
                    const MatmulMath& math);

/// The key of a call on A (m x k) and B (k x n) of `dtype` that allows `math` (kept only for f32:
/// 16-bit storage's keys are `ieee`). Throws AutotuneError(invalid_key) for a `math` that is
/// neither value (a cast integer), whatever the storage.
MatmulKey matmul_key(std::uint64_t m, std::uint64_t n, std::uint64_t k, DType dtype,
                     MatmulMath math = MatmulMath::ieee);

/// C = alpha * A * B + beta * C with the fastest kernel for this device and these sizes.
/// A is m x k, B is k x n, C is m x n, all row-major and of one dtype (f32, or f16 storage with
/// f32 arithmetic). Throws std::invalid_argument when the shapes or types do not fit together,
/// when a buffer belongs to another OpenCL context than the client's, or when C is A or B (no
/// kernel computes in place). A NaN or infinite alpha gives its product (the tuning runs with
/// alpha = 1: the winner does not depend on it); alpha = 0 gives beta * C (0 for beta = 0) and
/// reads neither A nor B, as BLAS does: an infinity or a NaN in them does not reach C. `math` tf32
/// lets f32 products use TF32 (MatmulMath).
void matmul(cl::Client& client, const DeviceMatrix& a, const DeviceMatrix& b, DeviceMatrix& c,
            float alpha = 1.0f, float beta = 0.0f, MatmulMath math = MatmulMath::ieee);

/// The largest difference from a correct product that a kernel's float sums may show, per element
/// of C, for inputs in [-1, 1] and inner size `k` (|c| <= k; float sums of k terms err by about
/// k * 2^-24 each way; every kernel accumulates in f32, whatever the storage). A 16-bit C also
/// rounds each element once more: matmul_storage_rounding. Together, what the tuning's validator
/// accepts.
double matmul_tolerance(std::uint64_t k, DType dtype);

/// `x` as the tensor cores take it under MatmulMath::tf32 (cvt.rna.tf32.f32): the mantissa rounded
/// to its upper 10 bits, to nearest, ties away from zero. Where a caller allows TF32 the validator
/// accepts a sampled element within matmul_tolerance of the host's double sum of the inputs'
/// products (an IEEE kernel) or of these rounded products (a TF32 kernel): exact whatever the
/// inputs (no assumption that rounding errors cancel), and a kernel that drops a step of K
/// matches neither. Its device twin: tf32_rounded() in kernels/tf32.cl (bit for bit the same).
float tf32_rounded(float x);

/// How far, relative to |c|, storing an f32 result as `dtype` may move it: twice the unit
/// roundoff (2^-10 for f16, 2^-7 for bf16; 0 for f32, whose rounding matmul_tolerance holds).
double matmul_storage_rounding(DType dtype);

/// The LocalTuner behind matmul(): for reports, tools and tests.
LocalTuner<MatmulKey>& matmul_tuner();

/// Every candidate's name, in set order: "naive[...]", "tiled[TS=16]", "direct[...]",
/// "blocked[MWG=64,...]", "skinny[...]".
std::vector<std::string> matmul_candidates();
/// The candidates that fit `limits` (work-group size, local memory): what a tuning on that
/// device can measure.
std::vector<std::string> matmul_candidates(const DeviceLimits& limits);

/// Every candidate's name and kernel (source, build options) for `dtype`, in set order: for
/// benchmarks of program builds (bench/bench_builds.cpp). Launch-only parameters (LX, LY) give
/// several candidates the same program. The staged family's candidates are listed with their
/// program for rows in 16-byte chunks (not the second one, for rows copied float by float).
std::vector<std::pair<std::string, cl::KernelSpec>> matmul_kernels(DType dtype);

/// Runs one named candidate, bypassing the tuner (for tests, and to force a kernel).
/// Throws std::invalid_argument for an unknown name.
void matmul_with(std::string_view candidate, cl::Client& client, const DeviceMatrix& a,
                 const DeviceMatrix& b, DeviceMatrix& c, float alpha = 1.0f, float beta = 0.0f,
                 MatmulMath math = MatmulMath::ieee);

}  // namespace tunekit::ops
