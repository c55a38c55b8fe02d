// reduce: the sum or the maximum of an f32 array, and of every row of an f32 matrix, tuned over
// a local-memory tree, multi-element vector loads, and sub-group (warp) reductions.
#pragma once

#include <cstdint>
#include <ostream>
#include <string_view>

#include "tunekit/anchor.hpp"
#include "tunekit/detail/local_tuner_fwd.hpp"
#include "tunekit/key.hpp"
#include "tunekit/ops/matrix.hpp"
#include "tunekit/throughput.hpp"

namespace tunekit::ops {

enum class ReduceOp : std::uint8_t { sum, max };

constexpr std::string_view to_string(ReduceOp op) { return op == ReduceOp::sum ? "sum" : "max"; }
inline std::ostream& operator<<(std::ostream& os, ReduceOp op) { return os << to_string(op); }

/// The work of reducing n f32 values: each read once, one operation each (the result written is
/// left out: 4 bytes).
inline Work reduce_work(std::uint64_t n) {
  const double n_ = static_cast<double>(n);
  return {n_, 4 * n_, 0};
}
/// The work of reducing every row of a rows x cols f32 matrix: read once, one value per row
/// written.
inline Work row_reduce_work(std::uint64_t rows, std::uint64_t cols) {
  const double rows_ = static_cast<double>(rows), cols_ = static_cast<double>(cols);
  return {rows_ * cols_, 4 * (rows_ * cols_ + rows_), 4 * rows_};
}

/// The tuning key of reduce: the length anchored to a power of two, and the operation.
struct ReduceKey {
  BOOST_HANA_DEFINE_STRUCT(ReduceKey, (Anchored<std::uint64_t>, n), (ReduceOp, op));
  /// The benchmark problem's work, at the anchored length.
  Work work() const { return reduce_work(n.value()); }
};

/// The tuning key of reduce_rows: both sizes anchored to powers of two, the widest vector (4, 2
/// or 1 floats) that divides the row's length, and the operation. Rows of a length that is not
/// a multiple of 4 start off a vector's boundary, and another kernel wins there: on the H200
/// 8192 x 8191 ran at 3120 GB/s with a pick that 8192 x 8192 ranks 1.05x from the best, and at
/// 3843 with the best pick for 8191 (docs/benchmarks.md). Build it with reduce_rows_key().
struct RowReduceKey {
  BOOST_HANA_DEFINE_STRUCT(RowReduceKey, (Anchored<std::uint64_t>, rows),
                           (Anchored<std::uint64_t>, cols), (std::uint64_t, vector_width),
                           (ReduceOp, op));
  /// The row length of the benchmark problem: the anchored one, brought down by the key's vector
  /// width where the anchor is a multiple of a wider vector (8191 is timed as 8191, not 8192).
  std::uint64_t benchmark_cols() const;
  /// The benchmark problem's work: the anchored rows of benchmark_cols().
  Work work() const { return row_reduce_work(rows.value(), benchmark_cols()); }
};

/// The key of a reduce_rows call on a rows x cols matrix.
RowReduceKey reduce_rows_key(std::uint64_t rows, std::uint64_t cols, ReduceOp op);

/// The work of the problem a tuning timed (throughput.hpp): the benchmark input's own size (the
/// caller's where the anchored input does not fit the device).
inline Work benchmark_work(const ReduceKey&, const DeviceVector& input, const ReduceOp&,
                           const DeviceVector&) {
  return reduce_work(input.size);
}
inline Work benchmark_work(const RowReduceKey&, const DeviceMatrix& matrix, const ReduceOp&,
                           const DeviceVector&) {
  return row_reduce_work(matrix.rows, matrix.cols);
}

/// The sum or the maximum of `input`'s values. Throws std::invalid_argument if it is empty, or
/// if its buffer belongs to another OpenCL context than the client's (so do reduce_into and
/// reduce_rows, and when the output is the input's buffer).
/// Waits for the result; reduce_into() leaves it on the device instead.
float reduce(cl::Client& client, const DeviceVector& input, ReduceOp op);

/// Writes the sum or the maximum of `input`'s values to out.buffer[0], without waiting.
void reduce_into(cl::Client& client, const DeviceVector& input, ReduceOp op, DeviceVector& out);

/// out[r] = sum or maximum of row r of `matrix` (f32); `out` holds at least matrix.rows values.
void reduce_rows(cl::Client& client, const DeviceMatrix& matrix, ReduceOp op, DeviceVector& out);

LocalTuner<ReduceKey>& reduce_tuner();
LocalTuner<RowReduceKey>& reduce_rows_tuner();

}  // namespace tunekit::ops
