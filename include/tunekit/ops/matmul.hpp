// matmul: C = alpha * A * B + beta * C (row-major SGEMM, and HGEMM-storage where asked), tuned
// over four algorithms and their parameter spaces: naive, local-memory tiled, direct
// register-blocked without local memory, and 2D register-blocked with double buffering.
#pragma once

#include <boost/hana.hpp>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tunekit/anchor.hpp"
#include "tunekit/dtype.hpp"
#include "tunekit/local_tuner.hpp"
#include "tunekit/ops/matrix.hpp"
#include "tunekit/space.hpp"
#include "tunekit/throughput.hpp"

namespace tunekit::ops {

/// The tuning key of matmul: sizes anchored to powers of two, and the element type.
struct MatmulKey {
  BOOST_HANA_DEFINE_STRUCT(MatmulKey, (Anchored<std::uint64_t>, m), (Anchored<std::uint64_t>, n),
                           (Anchored<std::uint64_t>, k), (DType, dtype));
  /// The benchmark problem's work (the key's sizes): 2mnk FLOPs; A and B read, C written once.
  Work work() const {
    const double m_ = static_cast<double>(m.value()), n_ = static_cast<double>(n.value()),
                 k_ = static_cast<double>(k.value());
    return {2 * m_ * n_ * k_, (m_ * k_ + k_ * n_ + m_ * n_) * static_cast<double>(size_of(dtype))};
  }
};

/// C = alpha * A * B + beta * C with the fastest kernel for this device and these sizes.
/// A is m x k, B is k x n, C is m x n, all row-major and of one dtype (f32, or f16 storage with
/// f32 arithmetic). Throws std::invalid_argument when the shapes or types do not fit together.
void matmul(cl::Client& client, const DeviceMatrix& a, const DeviceMatrix& b, DeviceMatrix& c,
            float alpha = 1.0f, float beta = 0.0f);

/// The LocalTuner behind matmul(): for reports, tools and tests.
LocalTuner<MatmulKey>& matmul_tuner();

/// Every candidate's name, in set order: "naive[...]", "tiled[TS=16]", "direct[...]",
/// "blocked[MWG=64,...]".
std::vector<std::string> matmul_candidates();
/// The candidates that fit `limits` (work-group size, local memory): what a tuning on that
/// device can measure.
std::vector<std::string> matmul_candidates(const DeviceLimits& limits);

/// Every candidate's name and kernel (source, build options) for `dtype`, in set order: for
/// benchmarks of program builds (bench/bench_builds.cpp). Launch-only parameters (LX, LY) give
/// several candidates the same program.
std::vector<std::pair<std::string, cl::KernelSpec>> matmul_kernels(DType dtype);

/// Runs one named candidate, bypassing the tuner (for tests, and to force a kernel).
/// Throws std::invalid_argument for an unknown name.
void matmul_with(std::string_view candidate, cl::Client& client, const DeviceMatrix& a,
                 const DeviceMatrix& b, DeviceMatrix& c, float alpha = 1.0f, float beta = 0.0f);

}  // namespace tunekit::ops
