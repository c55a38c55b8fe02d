// transpose: out = in^T for an f32 row-major matrix, tuned over a naive kernel, a tiled one
// that goes through local memory (padded against bank conflicts: GPUs), and one that moves
// register blocks with vector loads and stores (CPUs).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tunekit/anchor.hpp"
#include "tunekit/detail/local_tuner_fwd.hpp"
#include "tunekit/key.hpp"
#include "tunekit/ops/matrix.hpp"
#include "tunekit/throughput.hpp"

namespace tunekit::ops {

/// The work of transposing a rows x cols f32 matrix: read once and written once; no arithmetic.
inline Work transpose_work(std::uint64_t rows, std::uint64_t cols) {
  const double matrix = 4 * static_cast<double>(rows) * static_cast<double>(cols);
  return {0, 2 * matrix, matrix};
}

/// The widest vector, in floats (4, 2 or 1), that divides both sizes of a rows x cols matrix.
/// The tiled kernel moves whole tiles of such a matrix as vectors of that width, and element by
/// element where a size is not a multiple of its width: on the H200 a 8191 x 4097 transpose is
/// fastest on other tiles than 8192 x 4096 (docs/benchmarks.md).
std::uint64_t transpose_vector_width(std::uint64_t rows, std::uint64_t cols);

/// The tuning key of transpose: both sizes anchored to powers of two, and the widest vector that
/// divides both (transpose_vector_width), so that odd shapes are not served by an aligned
/// neighbour's pick.
struct TransposeKey {
  BOOST_HANA_DEFINE_STRUCT(TransposeKey, (Anchored<std::uint64_t>, rows),
                           (Anchored<std::uint64_t>, cols), (std::uint64_t, vector_width));
  /// The benchmark problem's work, at the anchored sizes.
  Work work() const { return transpose_work(rows.value(), cols.value()); }
};

/// The work of the problem a tuning timed (throughput.hpp): the benchmark input's own sizes (the
/// caller's where the anchored matrices do not fit the device).
inline Work benchmark_work(const TransposeKey&, const DeviceMatrix& in, const DeviceMatrix&) {
  return transpose_work(in.rows, in.cols);
}

/// out = in^T: `in` is rows x cols, `out` cols x rows, both f32. Throws std::invalid_argument
/// when the shapes do not fit, when a buffer belongs to another OpenCL context than the
/// client's, or when `out` is `in` (not in place).
void transpose(cl::Client& client, const DeviceMatrix& in, DeviceMatrix& out);

/// The key of a rows x cols transpose (what the op tunes and caches it under).
TransposeKey transpose_key(std::uint64_t rows, std::uint64_t cols);

LocalTuner<TransposeKey>& transpose_tuner();

/// Every candidate's name, in set order: "naive[...]", "tiled[...]", "blocked[...]".
std::vector<std::string> transpose_candidates();

/// Runs one named candidate, bypassing the tuner (for tests, and to force a kernel).
/// Throws std::invalid_argument for an unknown name.
void transpose_with(std::string_view candidate, cl::Client& client, const DeviceMatrix& in,
                    DeviceMatrix& out);

}  // namespace tunekit::ops
